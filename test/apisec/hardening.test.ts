/**
 * Hardening of the protected-gateway pillar: svc's own paths never reach a gateway (not even on a
 * gateway's hostname), hostnames that mean svc or this machine are refused, svc API keys never
 * travel to a backend, health checks resolve through the guarded lookup, unknown gateway ids are
 * rate limited per IP and remembered, and an idle WebSocket outlives the gateway's timeout_ms.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { request, WebSocket } from 'undici';
import type { Gateway } from '../../src/apisec/index.ts';
import { buildApp, type AppInstance } from '../../src/http/build-app.ts';
import type { Services } from '../../src/services.ts';
import { createTestServices } from '../helpers/app.ts';
import { DEFAULT_BOT_POLICY } from '../../src/apisec/types.ts';
import { startBackend, type Backend } from './backend.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are read loosely and asserted field by field
type Loose = Record<string, any>;

let services: Services;
let strict: Services;
let app: AppInstance;
let limitedApp: AppInstance;
let limited: Services;
let base: string;
let backend: Backend;
let apiKey: string;
let otherKey: string;

async function send(path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  const answer = await request(`${base}${path}`, { method: (options.method ?? 'GET') as 'GET', headers: options.headers ?? {}, ...(options.body === undefined ? {} : { body: options.body }) });
  const text = await answer.body.text();
  return { status: answer.statusCode, json: () => JSON.parse(text) as Loose };
}

function createGateway(body: Record<string, unknown>) {
  return send('/api/v1/gateways', { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

function gatewayAt(backendUrl: string): Gateway {
  const now = new Date();
  return {
    id: randomUUID(), orgId: randomUUID(), name: 'probe', backendUrl, mode: 'block', hostname: null, pathPrefix: null, openapi: null,
    settings: { rateLimit: null, botPolicy: DEFAULT_BOT_POLICY, healthCheck: { path: '/health', intervalSeconds: 10, timeoutMs: 1_000, unhealthyAfter: 3 }, timeoutMs: 1_000, blockDetails: 'full' },
    createdAt: now, updatedAt: now,
  };
}

beforeAll(async () => {
  backend = await startBackend();
  [services, strict, limited] = await Promise.all([
    createTestServices({ env: { HOST: 'svc.example.test' }, services: { apisec: { verifyCrawlers: false } } }),
    createTestServices({ env: { ALLOW_PRIVATE_TARGETS: 'false' } }),
    createTestServices({ services: { apisec: { gatewayCacheSize: 3, lookupPolicy: { windows: [{ name: 'minute', windowMs: 60_000, limit: 3 }], concurrency: 0, headerWindow: 'minute' } } } }),
  ]);
  app = await buildApp(services.config, services);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  limitedApp = await buildApp(limited.config, limited);
  await limitedApp.ready();
  apiKey = (await services.accounts.createOrg({ name: 'hardening' })).apiKey;
  otherKey = (await services.accounts.createOrg({ name: 'bystander' })).apiKey;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await limitedApp?.close();
  await Promise.all([services?.close(), strict?.close(), limited?.close()]);
  await backend?.close();
});

describe("svc's own paths and hosts", () => {
  it("answers /api, /health and /openapi.json itself on a gateway's hostname and sends the backend nothing of them", async () => {
    const created = await createGateway({ name: 'whole host', backend_url: backend.url, mode: 'monitor', hostname: 'claimed.example.test' });
    expect(created.status).toBe(201);
    await services.apisec.start();
    const before = backend.received.length;
    const listed = await send('/api/v1/gateways', { headers: { host: 'claimed.example.test', authorization: `Bearer ${otherKey}` } });
    expect(listed.status).toBe(200);
    expect(Array.isArray(listed.json().gateways)).toBe(true);
    expect((await send('/health', { headers: { host: 'claimed.example.test' } })).status).toBe(200);
    expect((await send('/openapi.json?x=1', { headers: { host: 'claimed.example.test' } })).status).toBe(200);
    const reached = backend.received.slice(before).filter((entry) => entry.headers['user-agent'] !== 'svc-health-check/1');
    expect(reached).toEqual([]);
    // Everything else on that host is the gateway's.
    const other = await send('/echo-headers', { headers: { host: 'claimed.example.test' } });
    expect(other.status).toBe(200);
    expect(other.json().url).toBe('/echo-headers');
  });

  it.each(['127.0.0.1', '2130706433', '0x7f.1', '10.0.0.1', 'localhost', 'api.localhost', 'svc.example.test', 'SVC.example.test.'])(
    'refuses the gateway hostname %s with VALIDATION_FAILED on hostname',
    async (hostname) => {
      const refused = await createGateway({ name: 'takeover', backend_url: backend.url, mode: 'monitor', hostname });
      expect(refused.status).toBe(400);
      expect(refused.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'hostname' });
    },
  );

  it("refuses a path prefix under svc's own paths even together with a hostname", async () => {
    const refused = await createGateway({ name: 'api prefix', backend_url: backend.url, mode: 'monitor', hostname: 'prefix.example.test', path_prefix: '/api' });
    expect(refused.status).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'path_prefix' });
  });
});

describe('credentials', () => {
  it("never forwards an svc API key to the backend, but forwards the backend's own credentials", async () => {
    const created = await createGateway({ name: 'credentials', backend_url: backend.url, mode: 'monitor' });
    const id = created.json().id as string;
    const svcKeys = await send(`/gw/${id}/echo-headers`, { headers: { authorization: `Bearer ${apiKey}`, 'x-api-key': apiKey } });
    expect(svcKeys.status).toBe(200);
    expect(svcKeys.json().headers.authorization).toBeUndefined();
    expect(svcKeys.json().headers['x-api-key']).toBeUndefined();
    const own = await send(`/gw/${id}/echo-headers`, { headers: { authorization: 'Bearer backend-token', 'x-api-key': 'backend-key' } });
    expect(own.json().headers.authorization).toBe('Bearer backend-token');
    expect(own.json().headers['x-api-key']).toBe('backend-key');
  });
});

describe('health checks', () => {
  it('never probes a backend whose host now resolves to a private address when private targets are not allowed', async () => {
    const port = new URL(backend.url).port;
    const before = backend.received.length;
    const state = await strict.apisec.health.check(gatewayAt(`http://localhost:${port}`));
    expect(state.lastStatus).toBeNull();
    expect(state.consecutiveFailures).toBe(1);
    expect(backend.received.slice(before).filter((entry) => entry.url === '/health')).toEqual([]);
    // The same probe where private targets are allowed reaches the backend.
    expect((await services.apisec.health.check(gatewayAt(`http://localhost:${port}`))).lastStatus).toBe(200);
  });
});

describe('unknown gateway ids', () => {
  it('charges lookups of unknown gateway ids to the client IP and refuses past the limit with 429 RATE_LIMITED before querying', async () => {
    const findById = vi.spyOn(limited.apisec.store, 'findById');
    findById.mockClear();
    const codes: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      const answer = await limitedApp.inject({ method: 'GET', url: `/gw/${randomUUID()}/items`, remoteAddress: '10.1.0.1' });
      codes.push(answer.json().error.code as string);
    }
    expect(codes).toEqual(['NOT_FOUND', 'NOT_FOUND', 'NOT_FOUND', 'RATE_LIMITED', 'RATE_LIMITED']);
    expect(findById).toHaveBeenCalledTimes(3);
    // Another client is not affected.
    const other = await limitedApp.inject({ method: 'GET', url: `/gw/${randomUUID()}/items`, remoteAddress: '10.1.0.2' });
    expect(other.json().error.code).toBe('NOT_FOUND');
  });

  it('remembers an unknown gateway id, so repeating it costs no lookup and no share of the limit', async () => {
    const findById = vi.spyOn(limited.apisec.store, 'findById');
    findById.mockClear();
    const id = randomUUID();
    const statuses: number[] = [];
    for (let index = 0; index < 6; index += 1) statuses.push((await limitedApp.inject({ method: 'GET', url: `/gw/${id}/items`, remoteAddress: '10.1.0.3' })).statusCode);
    expect(statuses).toEqual([404, 404, 404, 404, 404, 404]);
    expect(findById).toHaveBeenCalledTimes(1);
  });

  it('keeps real gateways cached while a flood of unknown ids comes from many clients', async () => {
    const key = (await limited.accounts.createOrg({ name: 'cached' })).apiKey;
    const created = await limitedApp.inject({ method: 'POST', url: '/api/v1/gateways', headers: { authorization: `Bearer ${key}` }, payload: { name: 'real', backend_url: backend.url, mode: 'monitor' } });
    expect(created.statusCode).toBe(201);
    const id = created.json().id as string;
    const findById = vi.spyOn(limited.apisec.store, 'findById');
    for (let index = 0; index < 10; index += 1) {
      await limitedApp.inject({ method: 'GET', url: `/gw/${randomUUID()}/items`, remoteAddress: `10.2.0.${index + 1}` });
    }
    findById.mockClear();
    const real = await limitedApp.inject({ method: 'GET', url: `/gw/${id}/items`, remoteAddress: '10.2.1.1' });
    expect(real.statusCode).toBe(200);
    expect(findById).not.toHaveBeenCalled();
  });
});

describe('WebSocket', () => {
  it("keeps an idle WebSocket open past the gateway's timeout_ms", async () => {
    const created = await createGateway({ name: 'idle socket', backend_url: backend.url, mode: 'monitor', timeout_ms: 200 });
    const id = created.json().id as string;
    const socket = new WebSocket(`${base.replace('http', 'ws')}/gw/${id}/ws`);
    let closed = false;
    socket.onclose = () => {
      closed = true;
    };
    await new Promise<void>((resolve, reject) => {
      socket.onerror = () => reject(new Error('websocket error'));
      socket.onopen = () => resolve();
    });
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(closed).toBe(false);
    const echoed = await new Promise<string>((resolve, reject) => {
      socket.onerror = () => reject(new Error('websocket error'));
      socket.onmessage = (message) => resolve(String(message.data));
      socket.send('still here');
    });
    socket.close();
    expect(echoed).toBe('still here');
  });
});
