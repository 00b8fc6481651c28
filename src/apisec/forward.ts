/**
 * Forwarding to a gateway's backend, the way a production reverse proxy does it.
 *
 * Posture: the backend URL was SSRF-checked when the gateway was saved, and every connection
 * resolves the host again through the guarded lookup (DNS rebinding cannot turn it private
 * later; an IP-literal backend is checked the same way). Connections are pooled keep-alive (one undici Agent per capability). Hop-by-hop headers
 * (RFC 9110 7.6.1: Connection and every header it names, Keep-Alive, Proxy-*, TE, Trailer,
 * Transfer-Encoding, Upgrade) are dropped both ways; svc's own cookies (the challenge clearance,
 * the dashboard's svc_session and svc_csrf: a gateway at /gw/{id} shares svc's host, so the browser
 * sends them along) and the clearance header never reach the backend, and neither does an svc API key (`Authorization: Bearer svc_…`, `X-API-Key: svc_…`):
 * it is a credential for svc, never for a backend. Host is the backend's (nginx's default `proxy_set_header Host $proxy_host`), the
 * client's Host travels in X-Forwarded-Host and Forwarded. X-Forwarded-For is the client address,
 * appended to the incoming chain only when TRUST_PROXY says svc sits behind a proxy it trusts.
 * Bodies stream both ways; nothing is buffered here.
 */
import { ServerResponse, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex, Readable } from 'node:stream';
import { Agent, errors as undiciErrors, type Dispatcher } from 'undici';
import { guardedConnector } from '../platform/ssrf.ts';
import { CSRF_COOKIE, SESSION_COOKIE } from '../accounts/index.ts';
import { CLEARANCE_COOKIE, CLEARANCE_HEADER } from './challenge.ts';

const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer',
  'transfer-encoding', 'upgrade', 'expect', 'host', 'http2-settings',
]);

export interface ForwardContext {
  /** Address of the peer that connected to svc. */
  readonly remoteAddress: string;
  /** http or https as the client used it (X-Forwarded-Proto when the proxy is trusted). */
  readonly protocol: string;
  /** The client's Host header. */
  readonly host: string;
  /** Whether an incoming X-Forwarded-For chain is kept (TRUST_PROXY). */
  readonly trustProxy: boolean;
}

function connectionTokens(headers: IncomingHttpHeaders): Set<string> {
  const tokens = new Set<string>();
  const value = headers.connection;
  if (typeof value === 'string') for (const token of value.split(',')) tokens.add(token.trim().toLowerCase());
  return tokens;
}

function forwardedNode(address: string): string {
  return address.includes(':') ? `"[${address}]"` : address;
}

const SVC_KEY_PREFIX = 'svc_';

/** Whether a header value carries an svc API key (as Authorization: Bearer or X-API-Key). */
function carriesSvcKey(name: 'authorization' | 'x-api-key', value: string | string[]): boolean {
  const values = Array.isArray(value) ? value : [value];
  return values.some((item) => {
    const text = item.trim();
    return name === 'x-api-key' ? text.startsWith(SVC_KEY_PREFIX) : /^bearer\s+svc_/i.test(text);
  });
}

/** svc's own cookies: credentials for svc, never for a backend. */
const SVC_COOKIES: readonly string[] = [CLEARANCE_COOKIE, SESSION_COOKIE, CSRF_COOKIE];

/** Strips svc's own cookies (clearance, dashboard session and CSRF) from a Cookie header; undefined when nothing is left. */
export function withoutSvcCookies(cookie: string): string | undefined {
  if (!SVC_COOKIES.some((name) => cookie.includes(name))) return cookie;
  const kept = cookie
    .split(';')
    .map((part) => part.trim())
    .filter((part) => part !== '' && !SVC_COOKIES.includes(part.slice(0, part.indexOf('=') === -1 ? part.length : part.indexOf('=')).trim()));
  return kept.length === 0 ? undefined : kept.join('; ');
}

/** The headers sent to the backend for an incoming request. */
export function requestHeaders(incoming: IncomingHttpHeaders, backendHost: string, context: ForwardContext): Record<string, string | string[]> {
  const named = connectionTokens(incoming);
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name) || name === CLEARANCE_HEADER) continue;
    if (name === 'x-forwarded-for' || name === 'x-forwarded-proto' || name === 'x-forwarded-host' || name === 'forwarded') continue;
    if ((name === 'authorization' || name === 'x-api-key') && carriesSvcKey(name, value)) continue;
    if (name === 'cookie') {
      const kept = withoutSvcCookies(Array.isArray(value) ? value.join('; ') : value);
      if (kept !== undefined) headers.cookie = kept;
      continue;
    }
    headers[name] = value;
  }
  const previous = context.trustProxy ? incoming['x-forwarded-for'] : undefined;
  const chain = typeof previous === 'string' && previous.trim() !== '' ? `${previous}, ${context.remoteAddress}` : context.remoteAddress;
  headers['x-forwarded-for'] = chain;
  headers['x-forwarded-proto'] = context.protocol;
  headers['x-forwarded-host'] = context.host;
  const previousForwarded = context.trustProxy ? incoming.forwarded : undefined;
  const element = `for=${forwardedNode(context.remoteAddress)};proto=${context.protocol};host="${context.host.replace(/["\\]/g, '')}"`;
  headers.forwarded = typeof previousForwarded === 'string' && previousForwarded !== '' ? `${previousForwarded}, ${element}` : element;
  headers.host = backendHost;
  return headers;
}

/** Whether a Set-Cookie value names one of svc's own cookies (names compared without regard to case). */
function setsSvcCookie(value: string): boolean {
  const equals = value.indexOf('=');
  const name = (equals === -1 ? value : value.slice(0, equals)).trim().toLowerCase();
  return SVC_COOKIES.some((own) => own === name);
}

/**
 * The backend's response headers as sent to the client: hop-by-hop dropped, and so is any
 * Set-Cookie naming svc's own cookies (a backend must not plant or overwrite the dashboard's
 * session, its CSRF token or a clearance; its other cookies pass).
 */
export function responseHeaders(incoming: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const named = new Set<string>();
  const connection = incoming.connection;
  if (typeof connection === 'string') for (const token of connection.split(',')) named.add(token.trim().toLowerCase());
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    if (name === 'set-cookie') {
      const kept = (Array.isArray(value) ? value : [value]).filter((cookie) => !setsSvcCookie(cookie));
      if (kept.length > 0) headers[name] = kept;
      continue;
    }
    headers[name] = value;
  }
  return headers;
}

/**
 * The sandbox every backend answer under `/gw/{id}` carries (GATEWAY_PATH_SANDBOX): `/gw/{id}` is
 * svc's own origin, where the dashboard's cookies live. Without allow-same-origin, a backend's
 * page runs in an opaque origin: it cannot read svc's cookies (document.cookie is empty) or
 * storage, its requests to /api are cross-site (the SameSite=Strict session cookie stays home)
 * and their answers unreadable (no CORS), and a /dashboard it frames is another origin to it.
 * Scripts, forms, pop-ups, dialogs and downloads still work. The backend's own
 * Content-Security-Policy, if any, is kept: the browser enforces both.
 */
export const GATEWAY_SANDBOX_POLICY = 'sandbox allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox allow-modals allow-downloads';

/** Adds the gateway sandbox to a backend answer's headers (in place). */
export function sandboxAnswer(headers: Record<string, string | string[]>): void {
  const existing = headers['content-security-policy'];
  headers['content-security-policy'] = existing === undefined ? GATEWAY_SANDBOX_POLICY : [...(Array.isArray(existing) ? existing : [existing]), GATEWAY_SANDBOX_POLICY];
}

/**
 * Relays a backend's refusal of an upgrade (any final status but 101) on the client's socket.
 *
 * Node's client parser hands over the body de-framed (a chunked body arrives as plain bytes), so
 * the backend's framing headers cannot be copied next to it. The answer is written through a
 * ServerResponse bound to the socket, which frames it as Node frames any answer: the backend's
 * Content-Length when it sent one, else chunked to an HTTP/1.1 client (close-delimited to 1.0),
 * no body for HEAD, 204 and 304. Headers are the end-to-end ones ({@link responseHeaders}), plus
 * svc's X-Request-ID and `Connection: close`: the server's HTTP parser let go of this socket at the upgrade, so no
 * further request can be read on it, and it is closed once the answer is written. A backend answer
 * cut short destroys the client socket, so the client sees an error, never a complete answer.
 */
export function relayDeclinedUpgrade(request: IncomingMessage, socket: Duplex, response: IncomingMessage, requestId: string): void {
  // The server's upgrade socket is a net.Socket (a tls.TLSSocket over HTTPS).
  const connection = socket as Socket;
  const answer = new ServerResponse(request);
  const fail = () => {
    response.destroy();
    connection.destroy();
  };
  // Whatever else the client sends is read and dropped, so closing does not reset the connection.
  connection.resume();
  connection.on('close', () => response.destroy());
  response.on('error', fail);
  response.on('close', () => {
    if (!response.complete) fail();
  });
  answer.on('error', fail);
  answer.on('finish', () => {
    answer.detachSocket(connection);
    connection.destroySoon();
  });
  answer.shouldKeepAlive = false;
  answer.assignSocket(connection);
  try {
    answer.writeHead(response.statusCode ?? 502, { ...responseHeaders(response.headers), 'x-request-id': requestId, connection: 'close' });
  } catch {
    fail();
    return;
  }
  response.pipe(answer);
}

/** Largest request body an upgrade handshake may carry (it is held whole and inspected whole). */
export const UPGRADE_BODY_LIMIT = 65_536;
/** How long the client has to send an upgrade handshake's body. */
export const UPGRADE_BODY_TIMEOUT_MS = 10_000;

export type UpgradeBody =
  | { readonly ok: true; readonly body: Buffer; readonly rest: Buffer }
  | { readonly ok: false; readonly code: 'MALFORMED_REQUEST' | 'BODY_TOO_LARGE' | 'REQUEST_TIMEOUT' | 'CLOSED' };

/**
 * The body of an upgrade request (RFC 9110 7.8: the new protocol starts after the request's
 * body). Node's server parser lets go of the socket at the headers, so the body is in `head` and
 * what the client sends next: exactly Content-Length bytes are taken, and what follows them is
 * the new protocol's (`rest`). A chunked body is refused (MALFORMED_REQUEST; no WebSocket client
 * sends one), as is one over UPGRADE_BODY_LIMIT (BODY_TOO_LARGE) or one not complete within
 * `timeoutMs` (REQUEST_TIMEOUT). The socket is left paused.
 */
export function readUpgradeBody(headers: IncomingHttpHeaders, socket: Duplex, head: Buffer, timeoutMs = UPGRADE_BODY_TIMEOUT_MS): Promise<UpgradeBody> {
  if (headers['transfer-encoding'] !== undefined) return Promise.resolve({ ok: false, code: 'MALFORMED_REQUEST' });
  const declared = headers['content-length'];
  const length = declared === undefined ? 0 : Number(declared);
  if (!Number.isSafeInteger(length) || length < 0) return Promise.resolve({ ok: false, code: 'MALFORMED_REQUEST' });
  if (length > UPGRADE_BODY_LIMIT) return Promise.resolve({ ok: false, code: 'BODY_TOO_LARGE' });
  if (head.length >= length) return Promise.resolve({ ok: true, body: head.subarray(0, length), rest: head.subarray(length) });
  return new Promise((resolve) => {
    const chunks = [head];
    let total = head.length;
    const settle = (result: UpgradeBody) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.pause();
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      total += chunk.length;
      if (total < length) return;
      const all = Buffer.concat(chunks);
      settle({ ok: true, body: all.subarray(0, length), rest: all.subarray(length) });
    };
    const onClose = () => settle({ ok: false, code: 'CLOSED' });
    const timer = setTimeout(() => settle({ ok: false, code: 'REQUEST_TIMEOUT' }), timeoutMs);
    socket.on('data', onData);
    socket.on('close', onClose);
    socket.resume();
  });
}

export interface BackendResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[]>;
  readonly body: Readable;
}

/** Why forwarding failed: the backend did not answer in time, or could not be reached. */
export class BackendError extends Error {
  constructor(
    readonly reason: 'timeout' | 'unreachable' | 'forbidden',
    readonly causeCode: string,
  ) {
    super(`backend ${reason} (${causeCode})`);
    this.name = 'BackendError';
  }
}

export interface Forwarder {
  send(options: {
    backend: URL;
    method: string;
    /** Path and query to append to the backend's base path. */
    pathAndQuery: string;
    headers: Record<string, string | string[]>;
    body: Readable | Buffer | null;
    timeoutMs: number;
    signal?: AbortSignal;
  }): Promise<BackendResponse>;
  /** The pooled agent with the guarded DNS lookup (health checks use it too). */
  readonly dispatcher: Dispatcher;
  close(): Promise<void>;
}

export function joinPath(basePath: string, pathAndQuery: string): string {
  const base = basePath.endsWith('/') ? basePath.slice(0, -1) : basePath;
  const rest = pathAndQuery.startsWith('/') ? pathAndQuery : `/${pathAndQuery}`;
  return `${base}${rest}`;
}

export function createForwarder(options: { allowPrivate: boolean; connectionsPerOrigin?: number }): Forwarder {
  const agent = new Agent({
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    connections: options.connectionsPerOrigin ?? 256,
    pipelining: 1,
    connect: guardedConnector({ allowPrivate: options.allowPrivate }),
  });
  return {
    async send(request) {
      try {
        const answer = await agent.request({
          origin: request.backend.origin,
          path: joinPath(request.backend.pathname, request.pathAndQuery),
          method: request.method as 'GET',
          headers: request.headers,
          body: request.body ?? null,
          headersTimeout: request.timeoutMs,
          bodyTimeout: Math.max(request.timeoutMs, 300_000),
          ...(request.signal === undefined ? {} : { signal: request.signal }),
        });
        return { status: answer.statusCode, headers: responseHeaders(answer.headers), body: answer.body };
      } catch (error) {
        throw toBackendError(error);
      }
    },
    dispatcher: agent,
    close: () => agent.close(),
  };
}

function toBackendError(error: unknown): BackendError {
  if (error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.ConnectTimeoutError) return new BackendError('timeout', (error as { code: string }).code);
  const code = (error as { code?: string; cause?: { code?: string } }).code ?? (error as { cause?: { code?: string } }).cause?.code ?? 'UNKNOWN';
  if (code === 'ETARGETFORBIDDEN') return new BackendError('forbidden', code);
  return new BackendError('unreachable', code);
}
