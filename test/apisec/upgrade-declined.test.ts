/**
 * A backend that declines a WebSocket upgrade (any status but 101, a body of any framing) through
 * a listening svc: the client, Node's own strict HTTP/1.1 parser, must receive a well-formed
 * answer with the backend's status and body, hop-by-hop headers dropped, `Connection: close`, and
 * the connection closed after it. Regression tests for a fuzzing find: a chunked refusal was
 * relayed with the backend's `Transfer-Encoding: chunked` over its de-chunked body.
 */
import { createHash } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type AppInstance } from '../../src/http/build-app.ts';
import type { Services } from '../../src/services.ts';
import { createTestServices } from '../helpers/app.ts';

let services: Services;
let app: AppInstance;
let backend: Server;
let base: string;
let gatewayId: string;

const JSON_REFUSAL = JSON.stringify({ error: 'origin not allowed' });

/** A WebSocket backend written from the wire up: each path answers the handshake its own way. */
function answerHandshake(url: string, key: string, socket: Duplex): void {
  socket.on('error', () => socket.destroy());
  // Upgrade sockets are half-open; a keep-alive backend closes when svc does.
  socket.on('end', () => socket.end());
  if (url === '/chunked') {
    // A keep-alive 200 whose hop-by-hop headers (and the header Connection names) must not reach the client.
    socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive, X-Backend-Hop\r\nKeep-Alive: timeout=5\r\nX-Backend-Hop: secret\r\nX-End-To-End: kept\r\n\r\n');
    const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
    socket.write(chunk('please'));
    setTimeout(() => socket.write(`${chunk(' log in before upgrading\n')}0\r\n\r\n`), 20);
    return;
  }
  if (url === '/length') {
    socket.write(`HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(JSON_REFUSAL)}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n${JSON_REFUSAL}`);
    return;
  }
  if (url === '/close-http10') {
    socket.write('HTTP/1.0 401 Unauthorized\r\nContent-Type: text/plain\r\nWWW-Authenticate: Bearer\r\n\r\nno token,');
    setTimeout(() => socket.end(' no socket\n'), 20);
    return;
  }
  if (url === '/close-http11') {
    socket.write('HTTP/1.1 426 Upgrade Required\r\nContent-Type: text/plain\r\nConnection: close\r\nUpgrade: websocket\r\n\r\nversion 13 only,');
    setTimeout(() => socket.end(' please\n'), 20);
    return;
  }
  if (url === '/truncated') {
    socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhalf-');
    setTimeout(() => socket.destroy(), 20);
    return;
  }
  const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  socket.end();
}

type Outcome =
  | { kind: 'response'; status: number; headers: IncomingHttpHeaders; body: string }
  | { kind: 'upgrade'; status: number; headers: IncomingHttpHeaders }
  | { kind: 'error'; code: string };

/** A WebSocket handshake from node:http's client, whose parser rejects any malformed framing. */
function handshake(path: string, extra: Record<string, string> = {}, mount = `/gw/${gatewayId}`): Promise<Outcome> {
  return new Promise((resolve) => {
    const outgoing = httpRequest(`${base}${mount}${path}`, {
      agent: false,
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...extra },
    });
    const fail = (error: NodeJS.ErrnoException) => resolve({ kind: 'error', code: error.code ?? error.message });
    outgoing.on('error', fail);
    outgoing.on('upgrade', (response, socket) => {
      socket.destroy();
      resolve({ kind: 'upgrade', status: response.statusCode ?? 0, headers: response.headers });
    });
    outgoing.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', fail);
      response.on('end', () => resolve({ kind: 'response', status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    outgoing.end();
  });
}

beforeAll(async () => {
  backend = createServer((_request, response) => response.writeHead(404).end());
  backend.on('upgrade', (request, socket: Duplex) => answerHandshake(request.url ?? '/', String(request.headers['sec-websocket-key'] ?? ''), socket));
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  const backendAddress = backend.address();
  services = await createTestServices({ services: { apisec: { verifyCrawlers: false } } });
  app = await buildApp(services.config, services);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  const { org } = await services.accounts.createOrg({ name: 'upgrade-declined' });
  const gateway = await services.apisec.create(org.id, 'test', {
    name: 'ws',
    backend_url: `http://127.0.0.1:${typeof backendAddress === 'object' && backendAddress !== null ? backendAddress.port : 0}`,
    mode: 'block',
    block_details: 'full',
  });
  gatewayId = gateway.id;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await services?.close();
  backend?.closeAllConnections();
  await new Promise((resolve) => backend?.close(resolve));
});

describe('a backend that declines a WebSocket upgrade', () => {
  it('relays a chunked 200 as a well-formed answer, without the backend hop-by-hop headers', async () => {
    const outcome = await handshake('/chunked');
    expect(outcome).toMatchObject({ kind: 'response', status: 200, body: 'please log in before upgrading\n' });
    const { headers } = outcome as Extract<Outcome, { kind: 'response' }>;
    expect(headers['transfer-encoding']).toBe('chunked');
    expect(headers.connection).toBe('close');
    expect(headers['keep-alive']).toBeUndefined();
    expect(headers['x-backend-hop']).toBeUndefined();
    expect(headers.upgrade).toBeUndefined();
    expect(headers['x-end-to-end']).toBe('kept');
    expect(headers['content-type']).toBe('text/plain');
  });

  it('relays a 403 with its Content-Length and says the connection closes, not keep-alive', async () => {
    const outcome = await handshake('/length');
    expect(outcome).toMatchObject({ kind: 'response', status: 403, body: JSON_REFUSAL });
    const { headers } = outcome as Extract<Outcome, { kind: 'response' }>;
    expect(headers['content-length']).toBe(String(Buffer.byteLength(JSON_REFUSAL)));
    expect(headers.connection).toBe('close');
    expect(headers['keep-alive']).toBeUndefined();
  });

  it('relays a close-delimited HTTP/1.0 401 whole, with its end-to-end headers', async () => {
    const outcome = await handshake('/close-http10');
    expect(outcome).toMatchObject({ kind: 'response', status: 401, body: 'no token, no socket\n' });
    const { headers } = outcome as Extract<Outcome, { kind: 'response' }>;
    expect(headers['www-authenticate']).toBe('Bearer');
    expect(headers.connection).toBe('close');
  });

  it('relays a close-delimited HTTP/1.1 426 whole', async () => {
    const outcome = await handshake('/close-http11');
    expect(outcome).toMatchObject({ kind: 'response', status: 426, body: 'version 13 only, please\n' });
    expect((outcome as Extract<Outcome, { kind: 'response' }>).headers.connection).toBe('close');
  });

  it('never presents a backend answer cut short as complete', async () => {
    const outcome = await handshake('/truncated');
    expect(outcome.kind).toBe('error');
  });

  it('still splices an accepted upgrade after its 101', async () => {
    const outcome = await handshake('/ws');
    expect(outcome).toMatchObject({ kind: 'upgrade', status: 101, headers: { upgrade: 'websocket' } });
  });
});

describe('the request id of a handshake', () => {
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

  it('is on a declined, an accepted and a refused handshake, as on any other answer', async () => {
    const declined = (await handshake('/length')) as Extract<Outcome, { kind: 'response' }>;
    expect(declined.headers['x-request-id']).toMatch(UUID);
    const accepted = (await handshake('/ws')) as Extract<Outcome, { kind: 'upgrade' }>;
    expect(accepted.headers['x-request-id']).toMatch(UUID);
    // An id no gateway has: svc's 404 envelope whose request_id is the header's.
    const unknown = (await handshake('', {}, '/gw/00000000-0000-4000-8000-000000000000')) as Extract<Outcome, { kind: 'response' }>;
    expect(unknown.status).toBe(404);
    const body = JSON.parse(unknown.body) as { error: { code: string; request_id: string } };
    expect(body.error.code).toBe('NOT_FOUND');
    expect(body.error.request_id).toBe(unknown.headers['x-request-id']);
    expect(body.error.request_id).toMatch(UUID);
  });

  it('is the client\'s own X-Request-ID when it sent a valid one', async () => {
    const declined = (await handshake('/length', { 'x-request-id': 'trace-42' })) as Extract<Outcome, { kind: 'response' }>;
    expect(declined.headers['x-request-id']).toBe('trace-42');
    const accepted = (await handshake('/ws', { 'x-request-id': 'trace-43' })) as Extract<Outcome, { kind: 'upgrade' }>;
    expect(accepted.headers['x-request-id']).toBe('trace-43');
  });

  it('refuses an attack in the handshake with the decision a plain request gets', async () => {
    const blocked = (await handshake("/ws?q=' UNION SELECT password FROM users --")) as Extract<Outcome, { kind: 'response' }>;
    expect(blocked.status).toBe(403);
    expect(blocked.headers['x-request-id']).toMatch(UUID);
    const body = JSON.parse(blocked.body) as { error: { code: string; request_id?: string; threat?: { decision: string } } };
    expect(body.error.code).toBe('THREAT_BLOCKED');
    expect(body.error.threat?.decision).toBe('block');
  });
});
