/**
 * End to end: a real backend on loopback behind protected gateways of a listening svc. Benign
 * CRUD, uploads, streaming and a WebSocket pass byte for byte; attacks of every API class are
 * blocked in block mode and only logged in monitor mode; a challenge is solved and the retry
 * passes; timeouts, unreachable and failing backends, rate limits and hostname routing behave as
 * a production reverse proxy does.
 */
import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, WebSocket } from 'undici';
import { solveChallenge } from '../../src/apisec/index.ts';
import { buildApp, type AppInstance } from '../../src/http/build-app.ts';
import type { SvcEvent } from '../../src/platform/events.ts';
import type { Services } from '../../src/services.ts';
import { createTestServices, memoryLog } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';
import { startBackend, type Backend } from './backend.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are read loosely and asserted field by field
type Loose = Record<string, any>;

let services: Services;
let app: AppInstance;
let base: string;
let backend: Backend;
let apiKey: string;
const events: SvcEvent[] = [];
const log = memoryLog();
let blockGateway: string;
let monitorGateway: string;

/** Requests the backend received from clients (health checks excluded). */
function forwardedCount(): number {
  return backend.received.filter((entry) => entry.headers['user-agent'] !== 'svc-health-check/1').length;
}

async function api(method: string, path: string, body?: unknown) {
  const answer = await request(`${base}${path}`, {
    method: method as 'GET',
    headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await answer.body.text();
  return { status: answer.statusCode, body: text === '' ? null : (JSON.parse(text) as Loose) };
}

/** A gateway that shows the decision to blocked clients (these tests read it); the default hides it. */
async function createGateway(body: Record<string, unknown>): Promise<string> {
  const created = await api('POST', '/api/v1/gateways', { block_details: 'full', ...body });
  expect(created.status).toBe(201);
  return created.body!.id as string;
}

async function send(path: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}) {
  const answer = await request(`${base}${path}`, { method: (options.method ?? 'GET') as 'GET', headers: options.headers ?? {}, ...(options.body === undefined ? {} : { body: options.body }) });
  const bytes = Buffer.from(await answer.body.arrayBuffer());
  return { status: answer.statusCode, headers: answer.headers, bytes, json: () => JSON.parse(bytes.toString('utf8')) as Loose };
}

async function direct(path: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}) {
  const answer = await request(`${backend.url}${path}`, { method: (options.method ?? 'GET') as 'GET', headers: options.headers ?? {}, ...(options.body === undefined ? {} : { body: options.body }) });
  return { status: answer.statusCode, bytes: Buffer.from(await answer.body.arrayBuffer()) };
}

beforeAll(async () => {
  backend = await startBackend();
  services = await createTestServices({ logDestination: log.destination, env: { LOG_LEVEL: 'info' }, services: { apisec: { challengeDifficulty: 8, verifyCrawlers: false } } });
  services.events.subscribe((event) => void events.push(event));
  app = await buildApp(services.config, services);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  apiKey = (await services.accounts.createOrg({ name: 'apisec-e2e' })).apiKey;
  blockGateway = await createGateway({ name: 'shop (block)', backend_url: backend.url, mode: 'block' });
  monitorGateway = await createGateway({ name: 'shop (monitor)', backend_url: backend.url, mode: 'monitor' });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await services?.close();
  await backend?.close();
});

describe('benign traffic through a block-mode gateway', () => {
  it('passes JSON CRUD byte for byte with the backend status codes', async () => {
    const created = await send(`/gw/${blockGateway}/items`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"widget","price":9.99}' });
    expect(created.status).toBe(201);
    const item = created.json();
    const read = await send(`/gw/${blockGateway}/items/${item.id}`);
    expect(read.status).toBe(200);
    expect(read.bytes.equals((await direct(`/items/${item.id}`)).bytes)).toBe(true);
    const updated = await send(`/gw/${blockGateway}/items/${item.id}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"name":"gadget"}' });
    expect(updated.json()).toEqual({ name: 'gadget', id: item.id });
    const removed = await send(`/gw/${blockGateway}/items/${item.id}`, { method: 'DELETE' });
    expect(removed.status).toBe(204);
    expect(removed.bytes.length).toBe(0);
    expect((await send(`/gw/${blockGateway}/items/${item.id}`)).status).toBe(404);
  });

  it('streams a multipart upload of 300 KB to the backend unchanged', async () => {
    const file = randomBytes(300_000);
    const boundary = 'svc-test-boundary';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\nholiday photo\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="photo.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
      file,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const answer = await send(`/gw/${blockGateway}/upload`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
    expect(answer.status).toBe(200);
    expect(answer.json()).toMatchObject({ bytes: body.length, sha256: createHash('sha256').update(body).digest('hex') });
  });

  it('streams a chunked response as the backend writes it', async () => {
    const started = Date.now();
    const answer = await request(`${base}/gw/${blockGateway}/stream`);
    const arrivals: number[] = [];
    const chunks: Buffer[] = [];
    for await (const chunk of answer.body) {
      arrivals.push(Date.now() - started);
      chunks.push(chunk as Buffer);
    }
    expect(Buffer.concat(chunks).toString()).toBe('chunk-0\nchunk-1\nchunk-2\nchunk-3\nchunk-4\n');
    // The first chunk arrives well before the backend finished (5 chunks 30 ms apart).
    expect(arrivals.length).toBeGreaterThan(1);
    expect(arrivals[0]!).toBeLessThan(arrivals[arrivals.length - 1]!);
  });

  it('passes a bodiless 204 without adding a content type', async () => {
    const answer = await send(`/gw/${blockGateway}/no-content`);
    expect(answer.status).toBe(204);
    expect(answer.headers['content-type']).toBeUndefined();
  });

  it('relays WebSocket frames both ways unchanged after inspecting the handshake', async () => {
    const socket = new WebSocket(`${base.replace('http', 'ws')}/gw/${blockGateway}/ws`);
    socket.binaryType = 'arraybuffer';
    const received: (string | Buffer)[] = [];
    const binary = randomBytes(70_000);
    await new Promise<void>((resolve, reject) => {
      socket.onerror = () => reject(new Error('websocket error'));
      socket.onopen = () => {
        socket.send('hello through svc');
        socket.send(binary);
      };
      socket.onmessage = (message) => {
        received.push(typeof message.data === 'string' ? message.data : Buffer.from(message.data as ArrayBuffer));
        if (received.length === 2) resolve();
      };
    });
    socket.close();
    expect(received[0]).toBe('hello through svc');
    expect(Buffer.isBuffer(received[1]) && received[1].equals(binary)).toBe(true);
  });

  it('refuses a WebSocket handshake that carries an attack', async () => {
    const socket = new WebSocket(`${base.replace('http', 'ws')}/gw/${blockGateway}/ws?room=${encodeURIComponent("1' UNION SELECT password FROM users--")}`);
    const outcome = await new Promise<string>((resolve) => {
      socket.onopen = () => resolve('open');
      socket.onerror = () => resolve('refused');
    });
    expect(outcome).toBe('refused');
  });

  it('sets X-Forwarded-For/-Proto/-Host and Forwarded, uses the backend Host and drops hop-by-hop headers', async () => {
    // node:http, because undici's client manages the Connection header itself.
    const answer = await new Promise<{ headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const outgoing = httpRequest(`${base}/gw/${blockGateway}/echo-headers?x=1`, {
        headers: { connection: 'keep-alive, x-secret-hop', 'keep-alive': 'timeout=5', 'x-secret-hop': 'must not pass', 'x-app': 'kept', cookie: 'session=abc; svc_clearance=zzz' },
      });
      outgoing.on('response', (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ headers: response.headers, body }));
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
    const seen = JSON.parse(answer.body) as { url: string; headers: Record<string, string | undefined> };
    const svcHost = new URL(base).host;
    expect(seen.url).toBe('/echo-headers?x=1');
    expect(seen.headers.host).toBe(new URL(backend.url).host);
    expect(seen.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(seen.headers['x-forwarded-proto']).toBe('http');
    expect(seen.headers['x-forwarded-host']).toBe(svcHost);
    expect(seen.headers.forwarded).toBe(`for=127.0.0.1;proto=http;host="${svcHost}"`);
    expect(seen.headers['x-app']).toBe('kept');
    expect(seen.headers['x-secret-hop']).toBeUndefined();
    expect(seen.headers['keep-alive']).toBeUndefined();
    expect(seen.headers.cookie).toBe('session=abc');
    expect(answer.headers['x-request-id']).toBeTruthy();
  });

  it("never hands a signed-in user's dashboard session and CSRF cookies to a gateway's backend", async () => {
    // A gateway at /gw/{id} shares svc's host: the browser of a signed-in user sends the dashboard cookies along.
    const answer = await request(`${base}/gw/${blockGateway}/echo-headers`, {
      headers: { cookie: 'app=1; svc_session=eyJhbGciOiJIUzI1NiJ9.e30.c2ln; svc_csrf=token; other=2' },
    });
    const seen = (await answer.body.json()) as { headers: Record<string, string | undefined> };
    expect(answer.statusCode).toBe(200);
    expect(seen.headers.cookie).toBe('app=1; other=2');
    const only = await request(`${base}/gw/${blockGateway}/echo-headers`, { headers: { cookie: 'svc_session=eyJhbGciOiJIUzI1NiJ9.e30.c2ln; svc_csrf=token' } });
    expect(((await only.body.json()) as { headers: Record<string, string | undefined> }).headers.cookie).toBeUndefined();
  });
});

const ATTACKS: { category: string; path: string; init?: { method: string; headers: Record<string, string>; body?: string } }[] = [
  { category: 'injection', path: `/items?id=${encodeURIComponent("1' UNION SELECT username,password FROM users--")}` },
  { category: 'cross-site scripting', path: `/items?q=${encodeURIComponent('<script>alert(document.cookie)</script>')}` },
  { category: 'path traversal', path: `/files?name=${encodeURIComponent('../../../../etc/passwd')}` },
  { category: 'command injection', path: '/ping?host=127.0.0.1;cat%20/etc/passwd' },
  { category: 'request forgery', path: `/fetch?url=${encodeURIComponent('http://169.254.169.254/latest/meta-data/iam/security-credentials/')}` },
  { category: 'auth bypass', path: '/login', init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"username":"admin\' --","password":"x"}' } },
  { category: 'mass assignment', path: '/items', init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"mallory","is_admin":true,"role":"admin"}' } },
  { category: 'token manipulation', path: '/items', init: { method: 'GET', headers: { authorization: 'Bearer eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJhZG1pbiJ9.' } } },
  { category: 'XML external entity', path: '/items', init: { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<?xml version="1.0"?><!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><foo>&xxe;</foo>' } },
];

describe('attacks', () => {
  it.each(ATTACKS)('blocks $category in block mode with 403 THREAT_BLOCKED before the backend sees it', async ({ path, init }) => {
    const before = forwardedCount();
    const answer = await send(`/gw/${blockGateway}${path}`, init ?? {});
    expect(answer.status).toBe(403);
    const body = answer.json();
    expect(body.error.code).toBe('THREAT_BLOCKED');
    expect(body.error.decision.decision).toBe('block');
    expect(body.error.threat).toEqual(body.error.decision);
    expect(body.error.decision.threat_score).toBeGreaterThanOrEqual(0.7);
    expect(forwardedCount()).toBe(before);
  });

  it.each(ATTACKS)('only logs $category in monitor mode and forwards it', async ({ path, init }) => {
    const before = forwardedCount();
    const answer = await send(`/gw/${monitorGateway}${path}`, init ?? {});
    expect(answer.status).not.toBe(403);
    expect(forwardedCount()).toBe(before + 1);
  });

  it('emits threat.blocked with the gateway id and writes the block to the audit chain', async () => {
    events.length = 0;
    const answer = await send(`/gw/${blockGateway}/items?q=${encodeURIComponent('<script>alert(1)</script>')}`);
    const blocked = events.find((event) => event.event === 'threat.blocked');
    expect(blocked?.gatewayId).toBe(blockGateway);
    expect(blocked?.data).toMatchObject({ decision: 'block', method: 'GET', path: '/items', source_ip: '127.0.0.1' });
    // The audit entry is written after the answer: wait for this block's.
    const requestId = String(answer.headers['x-request-id']);
    const audited = () => api('GET', '/api/v1/audit?action=threat.blocked').then((listed) => JSON.stringify(listed.body!.entries ?? listed.body!.records ?? []));
    expect(await waitFor(async () => ((await audited()).includes(requestId) ? true : undefined))).toBe(true);
  });

  it('writes gateway_id, the decision, the org and the real path without its query into the request log line', async () => {
    const answer = await send(`/gw/${monitorGateway}/items?q=${encodeURIComponent('<script>alert(1)</script>')}`);
    // The line is written when the answer ends and held back briefly: wait for this request's.
    const requestId = String(answer.headers['x-request-id']);
    const last = await waitFor(() =>
      log.lines.flatMap((chunk) => chunk.split('\n')).filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.request_id === requestId),
    );
    expect(last.gateway_id).toBe(monitorGateway);
    expect(last.decision).toBe('block');
    expect(last.org_id).toBeTruthy();
    expect(last.status).toBe(200);
    expect(last.path).toBe(`/gw/${monitorGateway}/items`);
  });
});

describe('what a blocked client is told', () => {
  it('tells an anonymous client of a default gateway nothing but the request id: a page for a browser, the bare code for an API client', async () => {
    const created = await api('POST', '/api/v1/gateways', { name: 'quiet', backend_url: backend.url, mode: 'block' });
    expect(created.body!.block_details).toBe('hidden');
    const id = created.body!.id as string;
    const attack = `/gw/${id}/items?q=${encodeURIComponent("1' UNION SELECT password FROM users--")}`;

    const apiClient = await send(attack, { headers: { accept: 'application/json' } });
    expect(apiClient.status).toBe(403);
    const error = apiClient.json().error as Loose;
    expect(error.code).toBe('THREAT_BLOCKED');
    expect(error.request_id).toBe(apiClient.headers['x-request-id']);
    expect(Object.keys(error).sort()).toEqual(['code', 'message', 'request_id']);
    expect(apiClient.bytes.toString()).not.toMatch(/sql|pattern|score|union/i);

    const browser = await send(attack, { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(browser.status).toBe(403);
    expect(browser.headers['content-type']).toMatch(/^text\/html/);
    const page = browser.bytes.toString();
    expect(page).toContain(String(browser.headers['x-request-id']));
    expect(page).not.toMatch(/sql|pattern|score|union|<script/i);

    // The decision is where the operator looks: the audit trail (written after the answer).
    const audited = () => api('GET', `/api/v1/audit?action=threat.blocked`).then((audit) => JSON.stringify((audit.body!.entries ?? audit.body!.records ?? []) as Loose[]));
    const entries = await waitFor(async () => {
      const text = await audited();
      return text.includes(String(apiClient.headers['x-request-id'])) ? text : undefined;
    });
    expect(entries).toContain(String(apiClient.headers['x-request-id']));
  });

  it('shows the decision to blocked clients of a gateway set to block_details full', async () => {
    const id = await createGateway({ name: 'verbose', backend_url: backend.url, mode: 'block' });
    const answer = await send(`/gw/${id}/items?q=${encodeURIComponent("1' UNION SELECT password FROM users--")}`);
    expect(answer.status).toBe(403);
    expect((answer.json().error as Loose).threat.patterns_matched.length).toBeGreaterThan(0);
  });
});

describe('challenge', () => {
  it('answers an API client with CHALLENGE_REQUIRED, and the solved challenge lets the retry through', async () => {
    // X-Original-URL alone scores in the challenge band (0.6–0.7).
    const headers = { 'x-original-url': '/items' };
    const first = await send(`/gw/${blockGateway}/items`, { headers });
    expect(first.status).toBe(403);
    const error = first.json().error;
    expect(error.code).toBe('CHALLENGE_REQUIRED');
    expect(error.threat.decision).toBe('challenge');
    const challenge = error.challenge;
    expect(challenge).toMatchObject({ algorithm: 'sha256', difficulty: 8, verify_url: `/gw/${blockGateway}/__svc/challenge` });

    const wrong = await send(challenge.verify_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: challenge.token, nonce: 'x' }) });
    expect(wrong.json().error.code).toBe('CHALLENGE_FAILED');
    for (const body of ['null', '42', '[]', '"text"']) {
      const odd = await send(challenge.verify_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect([odd.status, odd.json().error.code]).toEqual([400, 'VALIDATION_FAILED']);
    }

    const nonce = solveChallenge(challenge.token, challenge.difficulty);
    const solved = await send(challenge.verify_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: challenge.token, nonce }) });
    expect(solved.status).toBe(200);
    const clearance = solved.json().clearance as string;
    expect(String(solved.headers['set-cookie'])).toContain('svc_clearance=');

    const retry = await send(`/gw/${blockGateway}/items`, { headers: { ...headers, 'x-svc-clearance': clearance } });
    expect(retry.status).toBe(200);
    const viaCookie = await send(`/gw/${blockGateway}/items`, { headers: { ...headers, cookie: `svc_clearance=${clearance}` } });
    expect(viaCookie.status).toBe(200);

    // The same answer cannot be used twice, and the clearance is bound to its gateway.
    const replay = await send(challenge.verify_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: challenge.token, nonce }) });
    expect(replay.json().error).toMatchObject({ code: 'CHALLENGE_FAILED', reason: 'replayed' });
    const otherGateway = await createGateway({ name: 'other', backend_url: backend.url, mode: 'block' });
    const elsewhere = await send(`/gw/${otherGateway}/items`, { headers: { ...headers, 'x-svc-clearance': clearance } });
    expect(elsewhere.json().error.code).toBe('CHALLENGE_REQUIRED');
  });

  it('never lets a clearance through a request in the block band', async () => {
    const first = await send(`/gw/${blockGateway}/items`, { headers: { 'x-original-url': '/items' } });
    const challenge = first.json().error.challenge;
    const solved = await send(challenge.verify_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: challenge.token, nonce: solveChallenge(challenge.token, challenge.difficulty) }) });
    const clearance = solved.json().clearance as string;
    const attack = await send(`/gw/${blockGateway}/items?q=${encodeURIComponent('<script>alert(1)</script>')}`, { headers: { 'x-svc-clearance': clearance } });
    expect(attack.json().error.code).toBe('THREAT_BLOCKED');
  });

  it('serves browsers a self-contained proof-of-work page', async () => {
    const page = await send(`/gw/${blockGateway}/items`, { headers: { 'x-original-url': '/items', accept: 'text/html,application/xhtml+xml' } });
    expect(page.status).toBe(403);
    expect(page.headers['content-type']).toContain('text/html');
    const html = page.bytes.toString();
    expect(html).toContain('id="svc-challenge"');
    expect(html).not.toMatch(/<script[^>]+src=/);
    expect(html).not.toMatch(/https?:\/\//);
  });
});

describe('backend failures', () => {
  it('answers 504 BACKEND_TIMEOUT when the backend is slower than timeout_ms', async () => {
    const slow = await createGateway({ name: 'slow', backend_url: backend.url, mode: 'block', timeout_ms: 300 });
    const answer = await send(`/gw/${slow}/slow`);
    expect(answer.status).toBe(504);
    expect(answer.json().error.code).toBe('BACKEND_TIMEOUT');
  });

  it('answers 502 BACKEND_UNREACHABLE when nothing listens at the backend', async () => {
    const gone = await startBackend();
    const url = gone.url;
    await gone.close();
    const dead = await createGateway({ name: 'dead', backend_url: url, mode: 'block' });
    const answer = await send(`/gw/${dead}/items`);
    expect(answer.status).toBe(502);
    expect(answer.json().error.code).toBe('BACKEND_UNREACHABLE');
  });

  it('marks a backend down after failed health checks: 503 BACKEND_DOWN, gauge 0, one gateway.down', async () => {
    const id = await createGateway({ name: 'flaky', backend_url: backend.url, mode: 'block', health_check: { path: '/health', unhealthy_after: 2 } });
    const core = services.apisec;
    const gateway = (await core.resolve(id))!;
    backend.setFailing(true);
    events.length = 0;
    await core.health.check(gateway);
    await core.health.check(gateway);
    await core.health.check(gateway);
    const down = events.filter((event) => event.event === 'gateway.down');
    expect(down).toHaveLength(1);
    expect(down[0]!.gatewayId).toBe(id);
    expect(down[0]!.data).toMatchObject({ gateway_name: 'flaky', backend_url: backend.url, check_type: 'http', http_status: 500, consecutive_failures: 2 });
    const refused = await send(`/gw/${id}/items`);
    expect(refused.status).toBe(503);
    expect(refused.json().error.code).toBe('BACKEND_DOWN');
    const metrics = await services.metrics.registry.getSingleMetricAsString('svc_gateway_health');
    expect(metrics).toContain(`svc_gateway_health{gateway_id="${id}",kind="api_gateway"} 0`);
    backend.setFailing(false);
    await core.health.check(gateway);
    expect((await send(`/gw/${id}/items`)).status).toBe(200);
  });
});

describe('routing and limits', () => {
  it('limits requests per client per gateway with 429 and one rate_limit.exceeded event', async () => {
    const id = await createGateway({ name: 'limited', backend_url: backend.url, mode: 'block', rate_limit: { requests_per_minute: 3 } });
    events.length = 0;
    const statuses: number[] = [];
    for (let index = 0; index < 5; index += 1) statuses.push((await send(`/gw/${id}/items`)).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const exceeded = events.filter((event) => event.event === 'rate_limit.exceeded');
    expect(exceeded).toHaveLength(1);
    expect(exceeded[0]!.gatewayId).toBe(id);
    expect(exceeded[0]!.data).toMatchObject({ scope: 'per_ip', identifier: '127.0.0.1', limit: 3, window_seconds: 60 });
    const metrics = await services.metrics.registry.getSingleMetricAsString('svc_rate_limit_hits_total');
    expect(metrics).toContain(`gateway="${id}"`);
  });

  it('receives traffic at the gateway hostname and under its path prefix', async () => {
    const byHost = await createGateway({ name: 'by host', backend_url: backend.url, mode: 'block', hostname: 'shop.example.test' });
    const byPrefix = await createGateway({ name: 'by prefix', backend_url: backend.url, mode: 'block', path_prefix: '/shop' });
    const host = await send('/echo-headers?via=host', { headers: { host: 'shop.example.test' } });
    expect(host.status).toBe(200);
    expect(host.json().url).toBe('/echo-headers?via=host');
    const prefixed = await send('/shop/echo-headers?via=prefix');
    expect(prefixed.json().url).toBe('/echo-headers?via=prefix');
    // svc's own API stays where it is on other hosts.
    expect((await send('/health')).status).toBe(200);
    expect(byHost).not.toBe(byPrefix);
  });

  it('answers 404 NOT_FOUND for an unknown gateway id', async () => {
    const answer = await send('/gw/00000000-0000-4000-8000-000000000000/items');
    expect(answer.status).toBe(404);
    expect(answer.json().error.code).toBe('NOT_FOUND');
  });
});

describe('the fast path ahead of the framework', () => {
  const logLines = (requestId: string) =>
    log.lines.flatMap((chunk) => chunk.split('\n')).filter((line) => line.includes(requestId)).map((line) => JSON.parse(line) as Loose);

  it('answers a cached gateway over the socket exactly as the framework routes do', async () => {
    const path = `/gw/${blockGateway}/items?page=2`;
    const viaFramework = await app.inject({ method: 'GET', url: path, headers: { 'x-request-id': 'framework-1' } });
    const viaSocket = await send(path, { headers: { 'x-request-id': 'socket-1' } });
    expect(viaSocket.status).toBe(viaFramework.statusCode);
    expect(viaSocket.bytes.equals(viaFramework.rawPayload)).toBe(true);
    expect(viaSocket.headers['x-request-id']).toBe('socket-1');
    expect(viaSocket.headers['content-type']).toBe(viaFramework.headers['content-type']);

    const blockedPath = `/gw/${blockGateway}/search?q=${encodeURIComponent("1' UNION SELECT password FROM users--")}`;
    const blockedFramework = await app.inject({ method: 'GET', url: blockedPath, headers: { 'x-request-id': 'framework-2' } });
    const blockedSocket = await send(blockedPath, { headers: { 'x-request-id': 'socket-2' } });
    expect(blockedSocket.status).toBe(403);
    expect(blockedFramework.statusCode).toBe(403);
    expect(blockedSocket.headers['content-type']).toBe(blockedFramework.headers['content-type']);
    const { request_id: socketId, ...socketError } = blockedSocket.json().error as Loose;
    const { request_id: frameworkId, ...frameworkError } = (blockedFramework.json() as Loose).error as Loose;
    expect(socketId).toBe('socket-2');
    expect(frameworkId).toBe('framework-2');
    expect(socketError).toEqual(frameworkError);
    expect(socketError.code).toBe('THREAT_BLOCKED');

    // Each line is written when its answer ends and held back briefly: wait for all four.
    await waitFor(() => (['framework-1', 'socket-1', 'framework-2', 'socket-2'].every((id) => logLines(id).length > 0) ? true : undefined));
    for (const [framework, socket] of [['framework-1', 'socket-1'], ['framework-2', 'socket-2']] as const) {
      const [frameworkLine] = logLines(framework);
      const [socketLine] = logLines(socket);
      expect(socketLine).toBeDefined();
      const { request_id: _a, duration_ms: _b, time: _c, ...socketFields } = socketLine!;
      const { request_id: _d, duration_ms: _e, time: _f, ...frameworkFields } = frameworkLine!;
      expect(socketFields).toEqual(frameworkFields);
      expect(socketFields.gateway_id).toBe(blockGateway);
      expect(socketFields.path).toBe(`/gw/${blockGateway}/${framework.endsWith('1') ? 'items' : 'search'}`);
    }
    const metrics = await services.metrics.registry.getSingleMetricAsString('svc_requests_total');
    expect(metrics).toMatch(new RegExp(`svc_requests_total\\{[^}]*gateway="${blockGateway}"[^}]*status="403"[^}]*\\} [2-9]`));
  });

  it('leaves an unknown gateway id to the framework, which answers 404 NOT_FOUND', async () => {
    const answer = await send('/gw/00000000-0000-4000-8000-000000000000/items', { headers: { 'x-request-id': 'unknown-gw-1' } });
    expect(answer.status).toBe(404);
    expect(answer.json().error).toMatchObject({ code: 'NOT_FOUND', request_id: 'unknown-gw-1' });
  });
});
