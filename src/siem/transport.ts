/**
 * Sends one batch to a SIEM and says whether the receiver took it.
 *
 * Security posture: the sink's host was SSRF-checked when saved; here it is checked again at
 * every connect — an IP literal before connecting, a name through the guarded lookup, so a name
 * rebound to a private address is refused (ETARGETFORBIDDEN) — exactly as webhook deliveries are.
 * TLS verifies the receiver's certificate (the system's trust store plus the sink's own CA) and
 * its name. Redirects from an HTTP event collector are never followed. The HEC token is sent only
 * in the Authorization header, over plain http only to a host that resolves to loopback or private
 * addresses alone, and never logged.
 *
 * Acknowledgement: plain syslog over TCP has none, and a write into a connection the receiver
 * has already closed succeeds locally and is lost. So each batch goes over its own connection:
 * the frames are written, then our side is closed (TLS close_notify, then FIN), and the batch
 * counts as delivered only when the receiver closes its side cleanly in answer — which a syslog
 * receiver does after it has read the stream to its end. A refused or reset connection, or no
 * clean close within the deadline, fails the whole batch (it is sent again: docs/siem.md).
 * The HTTP event collector acknowledges with a 2xx.
 */
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, rootCertificates } from 'node:tls';
import { Agent, request as httpRequest } from 'undici';
import { guardedConnector, guardedLookup, isForbiddenLiteral, isPrivateHost } from '../platform/ssrf.ts';

export interface SyslogTarget {
  host: string;
  port: number;
  transport: 'tcp' | 'tls';
  caPem: string | null;
  serverName: string | null;
}

export interface SendPolicy {
  allowPrivate: boolean;
  /** Connect, write and the receiver's close, together. */
  timeoutMs: number;
}

/** A failed send: `code` is short and safe to store and show (no secrets, no receiver text). */
export class SendError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

function failure(error: unknown): SendError {
  if (error instanceof SendError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const name = (error as { name?: unknown } | null)?.name;
  const text = typeof code === 'string' ? code : typeof name === 'string' ? name : 'error';
  return new SendError(text.slice(0, 64), error instanceof Error ? error.message.slice(0, 200) : text);
}

/** Writes the frames over a new connection and resolves once the receiver has closed its side cleanly. */
export function sendSyslog(target: SyslogTarget, frames: readonly Buffer[], policy: SendPolicy): Promise<void> {
  if (isForbiddenLiteral(target.host, policy)) return Promise.reject(new SendError('ETARGETFORBIDDEN', `${target.host} is a forbidden address`));
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let socket: Socket;
    const lookup = guardedLookup(policy) as never;
    const host = target.host.replace(/^\[|\]$/g, '');
    const finish = (error: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error === null) resolve();
      else {
        socket.destroy();
        reject(failure(error));
      }
    };
    const timer = setTimeout(() => finish(new SendError('ETIMEDOUT', 'the receiver did not take the batch in time')), policy.timeoutMs);
    const send = () => {
      for (const frame of frames) socket.write(frame);
      socket.end();
    };
    if (target.transport === 'tls') {
      socket = tlsConnect({
        host,
        port: target.port,
        lookup,
        // SNI names a host, never an address (RFC 6066); the certificate is then checked against the address.
        ...(target.serverName !== null ? { servername: target.serverName } : isIP(host) === 0 ? { servername: host } : {}),
        ...(target.caPem === null ? {} : { ca: [...rootCertificates, target.caPem] }),
      });
      socket.once('secureConnect', send);
    } else {
      socket = netConnect({ host, port: target.port, lookup });
      socket.once('connect', send);
    }
    let peerEnded = false;
    socket.on('data', () => undefined); // a receiver's answer, if any, is read and ignored
    socket.once('end', () => {
      peerEnded = true;
    });
    socket.once('error', (error) => finish(error));
    socket.once('close', (hadError) => {
      if (hadError) return finish(new SendError('ECONNRESET', 'the connection failed'));
      if (!peerEnded) return finish(new SendError('ECONNRESET', 'the receiver closed without reading the batch'));
      finish(null);
    });
  });
}

export interface HecTarget {
  url: string;
  token: string;
}

/** An agent for HTTP event collectors, with the connect-time SSRF guard. */
export function hecAgent(policy: SendPolicy): Agent {
  return new Agent({ connect: guardedConnector({ allowPrivate: policy.allowPrivate }), keepAliveTimeout: 10_000, connections: 16 });
}

/** POSTs the events (newline-separated JSON objects); resolves on a 2xx. */
export async function sendHec(target: HecTarget, events: readonly Record<string, unknown>[], agent: Agent, policy: SendPolicy): Promise<void> {
  const url = new URL(target.url);
  if (isForbiddenLiteral(url.hostname, policy)) throw new SendError('ETARGETFORBIDDEN', `${url.hostname} is a forbidden address`);
  // Checked when saved, again here: a name may have moved from the private network to a public
  // address since, and the token must not follow it in clear.
  if (url.protocol === 'http:') {
    const privateOnly = await isPrivateHost(url.hostname).catch(() => null);
    if (privateOnly === null) throw new SendError('ENOTFOUND', `${url.hostname} does not resolve`);
    if (!privateOnly) throw new SendError('EHTTPSREQUIRED', `${url.hostname} is a public host: the token goes over https only`);
  }
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new SendError('ETIMEDOUT', 'the event collector did not answer in time')), policy.timeoutMs);
  try {
    const response = await httpRequest(url, {
      method: 'POST',
      dispatcher: agent,
      signal: controller.signal,
      headers: { authorization: `Splunk ${target.token}`, 'content-type': 'application/json', 'user-agent': 'svc-siem/1' },
      body: events.map((event) => JSON.stringify(event)).join('\n'),
    });
    await response.body.dump({ limit: 65_536 }).catch(() => undefined);
    if (response.statusCode < 200 || response.statusCode >= 300) throw new SendError(`HTTP_${response.statusCode}`, `the event collector answered ${response.statusCode}`);
  } catch (error) {
    throw failure(controller.signal.aborted && controller.signal.reason instanceof SendError ? controller.signal.reason : error);
  } finally {
    clearTimeout(timer);
  }
}
