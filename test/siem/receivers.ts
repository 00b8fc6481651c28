/**
 * Real receivers for the SIEM tests: Debian's rsyslogd (imtcp on a free loopback port, its own
 * configuration and output file in a temporary directory, started and stopped by the test), a
 * node:tls syslog receiver speaking RFC 5425 octet-counted framing, and an HTTP event collector
 * in Splunk HEC shape. rsyslog's TLS driver (gtls) lives in the package rsyslog-gnutls; where it is
 * not installed TLS is tested against the node:tls receiver.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { freePort } from '../helpers/net.ts';

export const RSYSLOGD = '/usr/sbin/rsyslogd';

export function rsyslogAvailable(): boolean {
  return existsSync(RSYSLOGD);
}

/** Whether rsyslog's TLS driver (gtls, Debian package rsyslog-gnutls) is installed. */
export function rsyslogTlsAvailable(): boolean {
  if (!rsyslogAvailable()) return false;
  const lib = '/usr/lib';
  const candidates = [join(lib, 'rsyslog'), ...readdirSync(lib).map((entry) => join(lib, entry, 'rsyslog'))];
  return candidates.some((directory) => existsSync(join(directory, 'lmnsd_gtls.so')));
}

/** One received line, as rsyslog parsed the RFC 5424 message: APP-NAME, MSGID, STRUCTURED-DATA, MSG. */
export interface SyslogLine {
  appName: string;
  msgId: string;
  structuredData: string;
  msg: string;
  /** The `id` parameter of svc's SD element. */
  id: string | null;
}

export interface Rsyslog {
  port: number;
  lines(): SyslogLine[];
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

const SEPARATOR = '\u001f';

/** rsyslogd with imtcp; with `tls`, imtcp speaks TLS (gtls, anonymous clients) with this certificate. */
export async function startRsyslog(options: { tls?: { cert: string; key: string } } = {}): Promise<Rsyslog> {
  const work = mkdtempSync(join(tmpdir(), 'svc-rsyslog-'));
  const port = await freePort();
  const output = join(work, 'received.log');
  const config = join(work, 'rsyslog.conf');
  if (options.tls !== undefined) {
    writeFileSync(join(work, 'cert.pem'), options.tls.cert);
    writeFileSync(join(work, 'key.pem'), options.tls.key);
  }
  writeFileSync(
    config,
    [
      options.tls === undefined
        ? `global(workDirectory="${work}")`
        : `global(workDirectory="${work}" DefaultNetstreamDriver="gtls" DefaultNetstreamDriverCAFile="${work}/cert.pem" DefaultNetstreamDriverCertFile="${work}/cert.pem" DefaultNetstreamDriverKeyFile="${work}/key.pem")`,
      options.tls === undefined ? 'module(load="imtcp")' : 'module(load="imtcp" StreamDriver.Name="gtls" StreamDriver.Mode="1" StreamDriver.AuthMode="anon")',
      `input(type="imtcp" port="${port}" address="127.0.0.1")`,
      `template(name="fields" type="string" string="%app-name%${SEPARATOR}%msgid%${SEPARATOR}%structured-data%${SEPARATOR}%msg%\\n")`,
      `*.* action(type="omfile" file="${output}" template="fields")`,
      '',
    ].join('\n'),
  );
  const check = spawnSync(RSYSLOGD, ['-N1', '-f', config], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`rsyslog refused its configuration: ${check.stderr}`);
  let child: ChildProcess | null = null;

  const listening = async () => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const ready = await new Promise<boolean>((resolve) => {
        const probe = connect(port, '127.0.0.1');
        probe.once('connect', () => {
          probe.destroy();
          resolve(true);
        });
        probe.once('error', () => resolve(false));
      });
      if (ready) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('rsyslog did not listen');
  };

  const start = async () => {
    child = spawn(RSYSLOGD, ['-n', '-f', config, '-i', join(work, 'rsyslogd.pid')], { stdio: 'ignore' });
    await listening();
  };
  const stop = async () => {
    const running = child;
    child = null;
    if (running === null || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    await exited;
  };
  await start();
  return {
    port,
    lines() {
      if (!existsSync(output)) return [];
      return readFileSync(output, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => {
          const [appName = '', msgId = '', structuredData = '', ...rest] = line.split(SEPARATOR);
          return { appName, msgId, structuredData, msg: rest.join(SEPARATOR), id: /\bid="([^"]+)"/.exec(structuredData)?.[1] ?? null };
        });
    },
    start,
    stop,
    async destroy() {
      await stop();
      rmSync(work, { recursive: true, force: true });
    },
  };
}

/** A self-signed certificate for 127.0.0.1 and localhost (openssl, as on every Debian machine). */
export function testCertificate(): { cert: string; key: string } {
  const work = mkdtempSync(join(tmpdir(), 'svc-siem-cert-'));
  try {
    const made = spawnSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=svc test receiver',
        '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', join(work, 'key.pem'), '-out', join(work, 'cert.pem')],
      { encoding: 'utf8' },
    );
    if (made.status !== 0) throw new Error(`openssl failed: ${made.stderr}`);
    return { cert: readFileSync(join(work, 'cert.pem'), 'utf8'), key: readFileSync(join(work, 'key.pem'), 'utf8') };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Splits an RFC 5425 / RFC 6587 octet-counted stream into messages; throws on a bad frame. */
export function octetFrames(stream: Buffer): string[] {
  const messages: string[] = [];
  let offset = 0;
  while (offset < stream.length) {
    const space = stream.indexOf(0x20, offset);
    const length = Number(stream.subarray(offset, space).toString('ascii'));
    if (space < 0 || !Number.isInteger(length) || length <= 0) throw new Error(`bad frame at ${offset}`);
    messages.push(stream.subarray(space + 1, space + 1 + length).toString('utf8'));
    offset = space + 1 + length;
  }
  return messages;
}

/** A syslog-over-TLS receiver: each connection's stream is split into octet-counted messages when the sender ends it. */
export async function startTlsReceiver(certificate: { cert: string; key: string }): Promise<{ port: number; messages: string[]; server: TlsServer; close(): Promise<void> }> {
  const messages: string[] = [];
  const server = createTlsServer({ cert: certificate.cert, key: certificate.key }, (socket) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => {
      messages.push(...octetFrames(Buffer.concat(chunks)));
      socket.end();
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, messages, server, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** An HTTP event collector (Splunk HEC shape): checks `Authorization: Splunk <token>`, keeps the events; `failing` answers 503. */
export async function startHecReceiver(token: string): Promise<{ url: string; events: Array<Record<string, unknown>>; state: { failing: boolean; refused: number }; close(): Promise<void> }> {
  const events: Array<Record<string, unknown>> = [];
  const state = { failing: false, refused: 0 };
  const server: HttpServer = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.headers.authorization !== `Splunk ${token}`) {
        response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ text: 'Invalid token', code: 4 }));
        return;
      }
      if (state.failing) {
        state.refused++;
        response.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ text: 'Server is busy', code: 9 }));
        return;
      }
      const text = Buffer.concat(chunks).toString('utf8');
      for (const line of text.split('\n')) if (line.trim() !== '') events.push(JSON.parse(line) as Record<string, unknown>);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ text: 'Success', code: 0 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/services/collector/event`,
    events,
    state,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
