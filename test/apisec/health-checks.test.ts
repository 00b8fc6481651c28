/**
 * Active health checks of protected gateways (issue #33, item 3): a gateway saved with
 * `health_check: null` is never probed, whatever its backend answers; the checks of many gateways
 * on one backend share a few pooled keep-alive connections instead of opening one per probe.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../src/apisec/index.ts';
import { DEFAULT_BOT_POLICY } from '../../src/apisec/types.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';

let context: TestContext;
let apiKey: string;
let backend: Server;
let backendUrl: string;
const probes: string[] = [];
let connections = 0;

beforeAll(async () => {
  // A backend that fails every health check (500 everywhere but /api/*) and counts the connections it accepts.
  backend = createServer((incoming, outgoing) => {
    incoming.resume();
    if (incoming.headers['user-agent'] === 'svc-health-check/1') probes.push(incoming.url ?? '');
    outgoing.writeHead(incoming.url?.startsWith('/api/') === true ? 200 : 500, { 'content-type': 'text/plain' }).end('backend');
  });
  backend.keepAliveTimeout = 60_000;
  backend.on('connection', () => connections++);
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  backendUrl = `http://127.0.0.1:${(backend.address() as { port: number }).port}`;
  context = await createTestApp();
  ({ apiKey } = await context.createOrg({ plan: 'enterprise' }));
}, 60_000);

afterAll(async () => {
  await context?.close();
  backend?.closeAllConnections();
  await new Promise((resolve) => backend?.close(resolve));
});

const call = (method: 'POST' | 'PATCH', url: string, payload: Record<string, unknown>) =>
  context.app.inject({ method, url, headers: { authorization: `Bearer ${apiKey}` }, payload });

describe('gateway health checks', () => {
  it('never probes a gateway saved with health_check null, so a backend answering 500 at / does not take it down', async () => {
    const created = await call('POST', '/api/v1/gateways', { name: 'unchecked', backend_url: backendUrl, mode: 'block', health_check: null });
    expect(created.statusCode).toBe(201);
    const id = (created.json() as { id: string }).id;
    const gateway = (await context.services.apisec.resolve(id))!;
    const before = probes.length;
    for (let round = 0; round < 4; round++) {
      await context.services.apisec.health.check(gateway);
      await context.services.apisec.health.checkAll([gateway]);
    }
    expect(probes.length).toBe(before);
    expect(context.services.apisec.health.isHealthy(id)).toBe(true);
    const answer = await context.app.inject({ method: 'GET', url: `/gw/${id}/api/items` });
    expect(answer.statusCode).toBe(200);
  });

  it('stops probing and forgets the outage when a gateway\'s health check is set to null', async () => {
    const created = await call('POST', '/api/v1/gateways', { name: 'checked', backend_url: backendUrl, mode: 'block', health_check: { path: '/health', unhealthy_after: 1 } });
    const id = (created.json() as { id: string }).id;
    await context.services.apisec.health.checkAll([(await context.services.apisec.resolve(id))!]);
    expect(context.services.apisec.health.isHealthy(id)).toBe(false);
    expect((await context.app.inject({ method: 'GET', url: `/gw/${id}/api/items` })).json()).toMatchObject({ error: { code: 'BACKEND_DOWN' } });
    const updated = await call('PATCH', `/api/v1/gateways/${id}`, { health_check: null });
    expect(updated.json()).toMatchObject({ health_check: null });
    const before = probes.length;
    await context.services.apisec.health.checkAll([(await context.services.apisec.resolve(id))!]);
    expect(probes.length).toBe(before);
    expect(context.services.apisec.health.isHealthy(id)).toBe(true);
    expect((await context.app.inject({ method: 'GET', url: `/gw/${id}/api/items` })).statusCode).toBe(200);
  });

  it('checks 30 gateways on one backend opening at most two connections, round after round', async () => {
    const now = new Date();
    const gateways: Gateway[] = Array.from({ length: 30 }, (_, index) => ({
      id: `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
      orgId: '00000000-0000-4000-8000-000000000000',
      name: `g${index}`,
      backendUrl,
      mode: 'monitor',
      hostname: null,
      pathPrefix: null,
      openapi: null,
      settings: { rateLimit: null, botPolicy: DEFAULT_BOT_POLICY, healthCheck: { path: `/health/${index}`, intervalSeconds: 10, timeoutMs: 2_000, unhealthyAfter: 3 }, timeoutMs: 5_000, blockDetails: 'hidden' },
      createdAt: now,
      updatedAt: now,
    }));
    const before = { probes: probes.length, connections };
    for (let round = 0; round < 3; round++) await context.services.apisec.health.checkAll(gateways);
    expect(probes.length - before.probes).toBe(90);
    // Connections the pool already held (from the tests above) may carry probes too; new ones are the rounds'.
    expect(connections - before.connections).toBeLessThanOrEqual(2);
  });

  it('probes a backend once per round for gateways that ask for the same check', async () => {
    const now = new Date();
    const same = (index: number): Gateway => ({
      id: `00000000-0000-4000-9000-${String(index).padStart(12, '0')}`,
      orgId: '00000000-0000-4000-8000-000000000000',
      name: `s${index}`,
      backendUrl,
      mode: 'monitor',
      hostname: null,
      pathPrefix: null,
      openapi: null,
      settings: { rateLimit: null, botPolicy: DEFAULT_BOT_POLICY, healthCheck: { path: '/shared', intervalSeconds: 10, timeoutMs: 2_000, unhealthyAfter: 1 }, timeoutMs: 5_000, blockDetails: 'hidden' },
      createdAt: now,
      updatedAt: now,
    });
    const gateways = Array.from({ length: 10 }, (_, index) => same(index));
    const before = probes.length;
    await context.services.apisec.health.checkAll(gateways);
    expect(probes.length - before).toBe(1);
    for (const gateway of gateways) expect(context.services.apisec.health.isHealthy(gateway.id)).toBe(false);
  });
});
