/**
 * Issue #35 item 5: methods beyond the eight Fastify routes by default reach a protected
 * backend, inspected like any request, whether the request takes Fastify's router (a gateway id
 * written with a percent-escape) or the fast path ahead of it (a cached gateway); a method Node's
 * HTTP parser cannot read is answered 501 METHOD_NOT_IMPLEMENTED and a broken method token 400
 * INVALID_METHOD, not the catch-all MALFORMED_REQUEST. The backend is a real node:http server
 * that speaks WebDAV-ish PROPFIND, a cache's PURGE, QUERY, and refuses LOCK itself.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type AppInstance } from '../../src/http/build-app.ts';
import type { Services } from '../../src/services.ts';
import { createTestServices } from '../helpers/app.ts';

let services: Services;
let app: AppInstance;
let backend: Server;
let port: number;
let gatewayId: string;
/** What the backend received: method, url, body. */
const received: { method: string; url: string; body: string }[] = [];

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
}

/** One request to svc with any method token Node's client accepts. */
function send(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: '127.0.0.1', port, method, path, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** Raw bytes to svc; what comes back until the connection closes. */
function exchange(bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => socket.destroy(), 10_000);
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
    socket.write(bytes);
  });
}

const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
const errorOf = (text: string) => (JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { error: { code: string; method?: string } }).error;

/** The gateway's mount written with its first character percent-escaped: Fastify's router serves it, not the fast path. */
const routed = () => `/gw/%${gatewayId.charCodeAt(0).toString(16)}${gatewayId.slice(1)}`;
const direct = () => `/gw/${gatewayId}`;

beforeAll(async () => {
  backend = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ method: request.method ?? '', url: request.url ?? '', body });
      if (request.method === 'GET' && request.url === '/held') {
        // A download in progress: the headers and a first chunk, the rest never (the connection ends it).
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.write('first chunk\n');
        return;
      }
      switch (request.method) {
        case 'PROPFIND':
          response.writeHead(207, { 'content-type': 'application/xml; charset=utf-8', dav: '1, 2' });
          response.end(`<?xml version="1.0"?><d:multistatus xmlns:d="DAV:"><d:response><d:href>${request.url}</d:href></d:response></d:multistatus>`);
          return;
        case 'PURGE':
          response.writeHead(200, { 'content-type': 'application/json', 'x-cache': 'purged' });
          response.end(JSON.stringify({ purged: request.url }));
          return;
        case 'QUERY':
          response.writeHead(200, { 'content-type': 'text/plain' });
          response.end(`query:${body}`);
          return;
        default:
          // The backend's own refusal, with its own Allow list.
          response.writeHead(405, { allow: 'GET, PROPFIND, PURGE, QUERY', 'content-type': 'text/plain' });
          response.end('backend: method not allowed');
      }
    });
  });
  const backendUrl = await listen(backend);
  services = await createTestServices({ services: { apisec: { verifyCrawlers: false } } });
  app = await buildApp(services.config, services);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  port = typeof address === 'object' && address !== null ? address.port : 0;
  const { org } = await services.accounts.createOrg({ name: 'methods' });
  gatewayId = (await services.apisec.create(org.id, 'test', { name: 'dav', backend_url: backendUrl, mode: 'block', health_check: null })).id;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await services?.close();
  backend?.closeAllConnections();
  await new Promise((resolve) => backend?.close(resolve));
});

describe('methods beyond the standard eight at a protected gateway', () => {
  it('forwards PROPFIND with its body and headers and relays the backend’s 207, through the router and the fast path alike', async () => {
    const body = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>';
    for (const mount of [routed(), direct()]) {
      received.length = 0;
      const answer = await send('PROPFIND', `${mount}/dav/notes/`, { 'content-type': 'application/xml', depth: '1' }, body);
      expect(answer.status, mount).toBe(207);
      expect(answer.headers.dav).toBe('1, 2');
      expect(answer.text).toContain('<d:href>/dav/notes/</d:href>');
      expect(received).toEqual([{ method: 'PROPFIND', url: '/dav/notes/', body }]);
    }
  });

  it('relays the backend’s answers to PURGE and to a QUERY without a Content-Type, and the backend’s own 405 to LOCK', async () => {
    for (const mount of [routed(), direct()]) {
      const purge = await send('PURGE', `${mount}/assets/app.js`);
      expect(purge.status, mount).toBe(200);
      expect(purge.headers['x-cache']).toBe('purged');
      expect(JSON.parse(purge.text)).toEqual({ purged: '/assets/app.js' });
      const query = await send('QUERY', `${mount}/search`, {}, 'color=blue');
      expect(query.status, mount).toBe(200);
      expect(query.text).toBe('query:color=blue');
      const lock = await send('LOCK', `${mount}/dav/notes/a.txt`);
      expect(lock.status, mount).toBe(405);
      expect(lock.headers.allow).toBe('GET, PROPFIND, PURGE, QUERY');
      expect(lock.text).toBe('backend: method not allowed');
    }
  });

  it('inspects them as any request: an external entity in a PROPFIND body and a traversal in a PURGE query are blocked before the backend', async () => {
    for (const mount of [routed(), direct()]) {
      received.length = 0;
      const entity = await send('PROPFIND', `${mount}/dav/`, { 'content-type': 'application/xml' }, '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><d:propfind xmlns:d="DAV:">&xxe;</d:propfind>');
      expect(entity.status, mount).toBe(403);
      expect(JSON.parse(entity.text).error.code).toBe('THREAT_BLOCKED');
      const traversal = await send('PURGE', `${mount}/files?name=${encodeURIComponent('../../../../etc/passwd')}`);
      expect(traversal.status, mount).toBe(403);
      expect(received).toEqual([]);
    }
  });

  it('answers svc’s own API routes asked with such a method with 405 and the methods they take', async () => {
    const answer = await send('PROPFIND', '/api/v1/gateways');
    expect(answer.status).toBe(405);
    expect(JSON.parse(answer.text).error.code).toBe('METHOD_NOT_ALLOWED');
    expect(String(answer.headers.allow)).toContain('GET');
  });
});

describe('methods Node’s HTTP parser cannot read', () => {
  it('answers a valid method token it cannot parse with 501 METHOD_NOT_IMPLEMENTED naming the method, and closes the connection', async () => {
    for (const method of ['BREW', 'BAN', 'get']) {
      const text = await exchange(`${method} ${direct()}/pot HTTP/1.1\r\nHost: svc.test\r\n\r\n`);
      expect(statusOf(text), method).toBe(501);
      expect(errorOf(text)).toMatchObject({ code: 'METHOD_NOT_IMPLEMENTED', method });
      expect(text).toMatch(/\r\nX-Request-ID: [0-9a-f-]{36}\r\n/);
    }
  });

  it('names the refused method of a request pipelined after one that was served', async () => {
    const text = await exchange(`GET ${direct()}/ping HTTP/1.1\r\nHost: svc.test\r\n\r\nBAN ${direct()}/pot HTTP/1.1\r\nHost: svc.test\r\n\r\n`);
    const second = text.slice(text.lastIndexOf('HTTP/1.1 '));
    expect(statusOf(second)).toBe(501);
    expect(errorOf(second)).toMatchObject({ code: 'METHOD_NOT_IMPLEMENTED', method: 'BAN' });
  });

  it('closes the connection without writing an answer into a response whose headers are already sent', async () => {
    // A request pipelined behind a download in progress that the parser refuses: an error answer
    // written now would land inside the download's body, so the connection is closed instead (as
    // Node's own handler does).
    let timedOut = false;
    const text = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let received = '';
      let sent = false;
      const timer = setTimeout(() => {
        timedOut = true;
        socket.destroy();
      }, 10_000);
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('utf8');
        if (!sent && received.includes('first chunk')) {
          sent = true;
          socket.write(`BAN ${direct()}/pot HTTP/1.1\r\nHost: svc.test\r\n\r\n`);
        }
      });
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(received);
      });
      socket.write(`GET ${direct()}/held HTTP/1.1\r\nHost: svc.test\r\n\r\n`);
    });
    expect(timedOut).toBe(false);
    expect(statusOf(text)).toBe(200);
    expect(text).toContain('first chunk');
    expect(text.match(/HTTP\/1\.1 \d{3}/g)).toHaveLength(1);
    expect(text).not.toContain('METHOD_NOT_IMPLEMENTED');
  });

  it('refuses a method that is not a valid token with 400 INVALID_METHOD, without echoing it', async () => {
    for (const method of ['G(T', 'PO"ST', 'GE{T}']) {
      const text = await exchange(`${method} ${direct()}/ HTTP/1.1\r\nHost: svc.test\r\n\r\n`);
      expect(statusOf(text), method).toBe(400);
      const error = errorOf(text);
      expect(error.code).toBe('INVALID_METHOD');
      expect(error.method).toBeUndefined();
    }
  });
});
