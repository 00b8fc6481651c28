/**
 * Issue #33 item 8, at the edge of a listening svc, over raw sockets: a CONNECT request gets an
 * answer (it used to get none: Node closes the connection when nobody listens for `connect`), and
 * an upgrade handshake that carries a body has it forwarded before the new protocol's bytes (it
 * used to hang until the gateway's timeout and be called 502 BACKEND_UNREACHABLE); a backend that
 * does not answer a handshake in time is 504 BACKEND_TIMEOUT.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type AppInstance } from '../../src/http/build-app.ts';
import type { Services } from '../../src/services.ts';
import { createTestServices } from '../helpers/app.ts';

let services: Services;
let app: AppInstance;
let backend: Server;
let plainBackend: Server;
let plainGatewayId: string;
let port: number;
let gatewayId: string;
let slowGatewayId: string;
/** Bodies the backend received with handshakes (path → body). */
const received = new Map<string, string>();
/** Upgraded sockets of the backend (closeAllConnections does not know them). */
const upgraded = new Set<Duplex>();

/** Reads exactly `length` bytes from the handshake's head and the socket. */
function readExactly(socket: Duplex, head: Buffer, length: number): Promise<{ body: Buffer; rest: Buffer }> {
  return new Promise((resolve) => {
    const chunks = [head];
    let total = head.length;
    const check = () => {
      if (total < length) return false;
      socket.off('data', onData);
      const all = Buffer.concat(chunks);
      resolve({ body: all.subarray(0, length), rest: all.subarray(length) });
      return true;
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      total += chunk.length;
      check();
    };
    if (!check()) socket.on('data', onData);
  });
}

/** The WebSocket backend: /ws upgrades after reading the body and echoes what follows, /mute never answers. */
async function handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  socket.on('error', () => socket.destroy());
  // Upgrade sockets are half-open: the backend closes when svc does.
  socket.on('end', () => socket.end());
  upgraded.add(socket);
  if (request.url === '/mute') return;
  const { body, rest } = await readExactly(socket, head, Number(request.headers['content-length'] ?? 0));
  received.set(request.url ?? '', body.toString('utf8'));
  const accept = createHash('sha1').update(`${String(request.headers['sec-websocket-key'])}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  // Echo of the new protocol's bytes, each prefixed so the test sees they went through the backend.
  if (rest.length > 0) socket.write(Buffer.concat([Buffer.from('echo:'), rest]));
  socket.on('data', (chunk: Buffer) => socket.write(Buffer.concat([Buffer.from('echo:'), chunk])));
}

/** Sends raw bytes and collects what comes back until the connection closes or `until` matches. */
function exchange(bytes: string, options: { then?: string; until?: RegExp; timeoutMs?: number } = {}): Promise<{ text: string; closed: boolean; ms: number }> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed, ms: performance.now() - started });
    };
    const timer = setTimeout(() => finish(false), options.timeoutMs ?? 10_000);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (options.then !== undefined && text.includes('101 Switching Protocols')) {
        const then = options.then;
        options.then = undefined;
        socket.write(then);
      }
      if (options.until?.test(text) === true) finish(false);
    });
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    socket.write(bytes);
  });
}

const handshake = (path: string, headers: string, body = '') =>
  `GET /gw/${path} HTTP/1.1\r\nHost: shop.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${headers}\r\n${body}`;

const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
const codeOf = (text: string) => (JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { error: { code: string } }).error.code;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
}

beforeAll(async () => {
  // A server that takes no upgrades: Node hands the handshake to its request handler, which
  // reads the body, as any server does, and answers.
  plainBackend = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.set(request.url ?? '', Buffer.concat(chunks).toString('utf8'));
      response.writeHead(426, { 'content-type': 'text/plain' }).end('upgrade refused');
    });
  });
  backend = createServer((_request, response) => response.writeHead(404).end());
  backend.on('upgrade', (request, socket: Duplex, head: Buffer) => void handleUpgrade(request, socket, head));
  const [plainUrl, backendUrl] = await Promise.all([listen(plainBackend), listen(backend)]);
  services = await createTestServices({ services: { apisec: { verifyCrawlers: false } } });
  app = await buildApp(services.config, services);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  port = typeof address === 'object' && address !== null ? address.port : 0;
  const { org } = await services.accounts.createOrg({ name: 'protocol-gaps' });
  plainGatewayId = (await services.apisec.create(org.id, 'test', { name: 'plain', backend_url: plainUrl, mode: 'block', health_check: null })).id;
  gatewayId = (await services.apisec.create(org.id, 'test', { name: 'ws', backend_url: backendUrl, mode: 'block', health_check: null })).id;
  slowGatewayId = (await services.apisec.create(org.id, 'test', { name: 'ws slow', backend_url: backendUrl, mode: 'block', health_check: null, timeout_ms: 500 })).id;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await services?.close();
  for (const socket of upgraded) socket.destroy();
  for (const server of [backend, plainBackend]) {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  }
});

describe('CONNECT', () => {
  it('answers CONNECT with 405 METHOD_NOT_ALLOWED and an Allow header, then closes the connection', async () => {
    const { text, closed } = await exchange('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nX-Request-ID: connect-probe-1\r\n\r\n');
    expect(statusOf(text)).toBe(405);
    expect(codeOf(text)).toBe('METHOD_NOT_ALLOWED');
    expect(text).toMatch(/\r\nAllow: [A-Z, ]*GET/);
    expect(text).toContain('\r\nX-Request-ID: connect-probe-1\r\n');
    expect(closed).toBe(true);
  });
});

describe('an upgrade handshake that carries a body', () => {
  it('forwards the body to the backend, which answers at once', async () => {
    const { text } = await exchange(handshake(`${plainGatewayId}/plain`, 'Content-Type: text/plain\r\nContent-Length: 11\r\n', 'hello world'));
    expect(statusOf(text)).toBe(426);
    expect(text).toContain('upgrade refused');
    expect(received.get('/plain')).toBe('hello world');
  });

  it('forwards the body before the new protocol, whose bytes reach the backend after it', async () => {
    const { text } = await exchange(handshake(`${gatewayId}/ws`, 'Content-Type: text/plain\r\nContent-Length: 5\r\n', 'token'), { then: 'FRAME', until: /echo:FRAME/ });
    expect(statusOf(text)).toBe(101);
    expect(received.get('/ws')).toBe('token');
    expect(text).toContain('echo:FRAME');
  });

  it('refuses a chunked handshake body with MALFORMED_REQUEST and one over 64 KiB with BODY_TOO_LARGE', async () => {
    const chunked = await exchange(handshake(`${gatewayId}/ws`, 'Transfer-Encoding: chunked\r\n', '5\r\nhello\r\n0\r\n\r\n'));
    expect(statusOf(chunked.text)).toBe(400);
    expect(codeOf(chunked.text)).toBe('MALFORMED_REQUEST');
    const large = await exchange(handshake(`${gatewayId}/ws`, 'Content-Length: 70000\r\n'));
    expect(statusOf(large.text)).toBe(413);
    expect(codeOf(large.text)).toBe('BODY_TOO_LARGE');
  });

  it('answers 504 BACKEND_TIMEOUT when the backend does not answer the handshake within the gateway timeout', async () => {
    const { text } = await exchange(handshake(`${slowGatewayId}/mute`, 'Content-Length: 2\r\n', 'hi'));
    expect(statusOf(text)).toBe(504);
    expect(codeOf(text)).toBe('BACKEND_TIMEOUT');
  });
});
