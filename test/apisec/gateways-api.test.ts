/**
 * The management API of protected gateways and geo-blocking rules: CRUD, scopes, validation
 * codes, SSRF checks of backend URLs, audit entries, and the discovered-endpoints read API fed
 * by traffic (shadow and zombie endpoints against the gateway's OpenAPI inventory).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { failAppends } from '../reliability/audited-writes.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { startBackend, type Backend } from './backend.ts';

let context: TestContext;
let strict: TestContext;
let backend: Backend;
let admin: string;
let reader: string;
let otherAdmin: string;

function call(target: TestContext, key: string, method: string, url: string, payload?: unknown) {
  return target.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${key}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
}

const INVENTORY = {
  openapi: '3.0.3',
  info: { title: 'shop', version: '1' },
  paths: {
    '/items': { get: {}, post: {} },
    '/items/{id}': { get: {}, put: {}, delete: {} },
    '/upload': { post: { deprecated: true } },
  },
};

beforeAll(async () => {
  backend = await startBackend();
  [context, strict] = await Promise.all([createTestApp(), createTestApp({ env: { ALLOW_PRIVATE_TARGETS: 'false', FEATURE_GEO_BLOCKING: 'false' } })]);
  const org = await context.createOrg();
  admin = org.apiKey;
  reader = (await context.services.accounts.createKey(org.orgId, { scope: 'read', keyClass: 'live' })).apiKey;
  otherAdmin = (await context.createOrg()).apiKey;
}, 60_000);

afterAll(async () => {
  await context?.close();
  await strict?.close();
  await backend?.close();
});

describe('gateways API', () => {
  it('creates, lists, reads, updates and deletes a gateway, writing an audit entry for each change', async () => {
    const created = await call(context, admin, 'POST', '/api/v1/gateways', { name: 'shop', backend_url: `${backend.url}/`, mode: 'monitor', rate_limit: { requests_per_minute: 600 } });
    expect(created.statusCode).toBe(201);
    const gateway = created.json();
    expect(gateway).toMatchObject({ name: 'shop', backend_url: backend.url, mode: 'monitor', hostname: null, path_prefix: null, endpoint: `/gw/${gateway.id}`, rate_limit: { requests_per_minute: 600, burst: null } });
    expect(gateway.bot_policy.scanner).toBe('block');

    const listed = await call(context, reader, 'GET', '/api/v1/gateways');
    expect(listed.statusCode).toBe(200);
    expect(listed.json().gateways.map((item: { id: string }) => item.id)).toContain(gateway.id);
    expect((await call(context, reader, 'GET', `/api/v1/gateways/${gateway.id}`)).json().name).toBe('shop');

    const patched = await call(context, admin, 'PATCH', `/api/v1/gateways/${gateway.id}`, { mode: 'block', bot_policy: { automation: 'challenge' } });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ mode: 'block', bot_policy: { automation: 'challenge', scanner: 'block' }, rate_limit: { requests_per_minute: 600 } });

    expect((await call(context, admin, 'DELETE', `/api/v1/gateways/${gateway.id}`)).statusCode).toBe(204);
    expect((await call(context, reader, 'GET', `/api/v1/gateways/${gateway.id}`)).json().error.code).toBe('NOT_FOUND');

    const audit = (await call(context, admin, 'GET', '/api/v1/audit?limit=50')).json();
    const actions = (audit.entries ?? audit.records ?? []).map((entry: { action: string }) => entry.action);
    expect(actions).toEqual(expect.arrayContaining(['gateway.create', 'gateway.update', 'gateway.delete']));
  });

  it('needs admin scope to change gateways and read scope to list them', async () => {
    const refused = await call(context, reader, 'POST', '/api/v1/gateways', { name: 'x', backend_url: backend.url, mode: 'block' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('SCOPE_INSUFFICIENT');
    const anonymous = await context.app.inject({ method: 'GET', url: '/api/v1/gateways' });
    expect(anonymous.json().error.code).toBe('AUTH_MISSING');
  });

  it('keeps gateways inside their organization', async () => {
    const created = (await call(context, admin, 'POST', '/api/v1/gateways', { name: 'mine', backend_url: backend.url, mode: 'block' })).json();
    const foreign = await call(context, otherAdmin, 'GET', `/api/v1/gateways/${created.id}`);
    expect(foreign.statusCode).toBe(404);
    expect((await call(context, otherAdmin, 'DELETE', `/api/v1/gateways/${created.id}`)).statusCode).toBe(404);
  });

  it.each([
    [{ name: 'x', backend_url: 'ftp://example.com', mode: 'block' }, 'backend_url'],
    [{ name: 'x', backend_url: 'not a url at all', mode: 'block' }, 'backend_url'],
    [{ name: 'x', backend_url: 'http://127.0.0.1:9/?q=1', mode: 'block' }, 'backend_url'],
    [{ name: 'x', backend_url: 'http://127.0.0.1:9', mode: 'inline' }, 'body.mode'],
    [{ name: 'x', backend_url: 'http://127.0.0.1:9', hostname: 'bad host!' }, 'hostname'],
    [{ name: 'x', backend_url: 'http://127.0.0.1:9', path_prefix: '/api/shop' }, 'path_prefix'],
    [{ name: 'x', backend_url: 'http://127.0.0.1:9', openapi: { info: {} } }, 'openapi'],
    [{ name: 'x', backend_url: 'http://127.0.0.1:9', rate_limit: { requests_per_minute: 0 } }, 'body.rate_limit'],
    [{ name: 'x', backend_url: 'http://127.0.0.1:9', bot_policy: { robots: 'block' } }, 'body.bot_policy'],
  ])('refuses %j with VALIDATION_FAILED naming %s', async (payload, field) => {
    const answer = await call(context, admin, 'POST', '/api/v1/gateways', payload);
    expect(answer.statusCode).toBe(400);
    expect(answer.json().error.code).toBe('VALIDATION_FAILED');
    expect(String(answer.json().error.field)).toContain(field);
  });

  it('refuses a private backend with TARGET_FORBIDDEN unless private targets are allowed', async () => {
    const org = await strict.createOrg();
    for (const url of ['http://127.0.0.1:8080', 'http://169.254.169.254/latest', 'http://10.0.0.5']) {
      const answer = await call(strict, org.apiKey, 'POST', '/api/v1/gateways', { name: 'internal', backend_url: url, mode: 'block' });
      expect(answer.statusCode).toBe(403);
      expect(answer.json().error.code).toBe('TARGET_FORBIDDEN');
    }
  });

  it('refuses a second gateway on the same hostname with CONFLICT', async () => {
    const first = await call(context, admin, 'POST', '/api/v1/gateways', { name: 'a', backend_url: backend.url, hostname: 'Api.Conflict.Test' });
    expect(first.json().hostname).toBe('api.conflict.test');
    const second = await call(context, otherAdmin, 'POST', '/api/v1/gateways', { name: 'b', backend_url: backend.url, hostname: 'api.conflict.test' });
    expect(second.statusCode).toBe(409);
    expect(second.json().error.code).toBe('CONFLICT');
  });
});

describe('a unique violation that is not the hostname', () => {
  it("is not answered as a hostname CONFLICT when the gateway's audit entry raises it", async () => {
    const org = await context.createOrg();
    // The entry's insert in the gateway's transaction violates a unique index of the audit chain.
    failAppends(context.services.audit, 'gateway.create', 1, () => Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505', constraint: 'audit_log_pkey' }));
    let answer;
    try {
      answer = await call(context, org.apiKey, 'POST', '/api/v1/gateways', { name: 'audited', backend_url: backend.url, hostname: 'audit-unique.test' });
    } finally {
      vi.restoreAllMocks();
    }
    // Before: 409 CONFLICT on the hostname, which no other gateway holds.
    expect(answer.json().error.code).not.toBe('CONFLICT');
    expect(answer.statusCode).not.toBe(409);
    const listed = await call(context, org.apiKey, 'GET', '/api/v1/gateways');
    expect(JSON.stringify(listed.json())).not.toContain('audit-unique.test');
    // The hostname's own violation is still a CONFLICT (see above); and the hostname is free.
    const again = await call(context, org.apiKey, 'POST', '/api/v1/gateways', { name: 'audited', backend_url: backend.url, hostname: 'audit-unique.test' });
    expect(again.statusCode).toBe(201);
  });
});

describe('geo-blocking rules API', () => {
  it('stores rules and says they are not enforced while FEATURE_GEO_BLOCKING is off', async () => {
    const org = await strict.createOrg();
    const created = await call(strict, org.apiKey, 'POST', '/api/v1/geo-rules', { rule_name: 'embargo', action: 'block', countries: ['kp', 'IR'], response_code: 451 });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ rule_name: 'embargo', action: 'block', countries: ['KP', 'IR'], response_code: 451, log: true, gateway_id: null, enforced: false });
    const listed = (await call(strict, org.apiKey, 'GET', '/api/v1/geo-rules')).json();
    expect(listed.enforced).toBe(false);
    expect(listed.rules).toHaveLength(1);
    expect((await call(strict, org.apiKey, 'DELETE', `/api/v1/geo-rules/${created.json().id}`)).statusCode).toBe(204);
    expect((await call(strict, org.apiKey, 'GET', '/api/v1/geo-rules')).json().rules).toHaveLength(0);
  });

  it('refuses an action other than block and a malformed country code', async () => {
    const org = await strict.createOrg();
    for (const payload of [{ rule_name: 'x', action: 'allow', countries: ['US'] }, { rule_name: 'x', action: 'block', countries: ['USA'] }]) {
      const answer = await call(strict, org.apiKey, 'POST', '/api/v1/geo-rules', payload);
      expect(answer.json().error.code).toBe('VALIDATION_FAILED');
    }
  });
});

describe('discovered endpoints', () => {
  it('lists endpoints seen in traffic with shadow and zombie status against the OpenAPI inventory', async () => {
    const gateway = (await call(context, admin, 'POST', '/api/v1/gateways', { name: 'inventoried', backend_url: backend.url, mode: 'monitor', openapi: INVENTORY })).json();
    expect(gateway.openapi).toEqual({ operations: 6 });
    const hit = (method: string, url: string, payload?: string) =>
      context.app.inject({ method: method as 'GET', url: `/gw/${gateway.id}${url}`, ...(payload === undefined ? {} : { payload, headers: { 'content-type': 'application/json' } }) });
    await hit('POST', '/items', '{"name":"a"}');
    await hit('GET', '/items/1');
    await hit('GET', '/items/2');
    await hit('GET', '/echo-headers'); // undocumented, answered: shadow
    await hit('POST', '/upload', 'x'); // documented as deprecated, answered: zombie
    await hit('GET', '/wp-admin/setup.php'); // scanner noise, never an endpoint
    await hit('GET', '/does/not/exist/42'); // 404: never an endpoint
    const listed = await call(context, reader, 'GET', `/api/v1/gateways/${gateway.id}/endpoints`);
    expect(listed.statusCode).toBe(200);
    const endpoints = listed.json().endpoints as { method: string; path: string; status: string; risk_score: number; risk_factors: Record<string, unknown> }[];
    const byKey = new Map(endpoints.map((endpoint) => [`${endpoint.method} ${endpoint.path}`, endpoint]));
    expect(byKey.get('GET /items/{id}')?.status).toBe('documented');
    expect(byKey.get('POST /items')?.status).toBe('documented');
    expect(byKey.get('GET /echo-headers')?.status).toBe('shadow');
    expect(byKey.get('POST /upload')?.status).toBe('zombie');
    expect([...byKey.keys()].some((key) => key.includes('wp-admin') || key.includes('does'))).toBe(false);
    expect(byKey.get('GET /echo-headers')?.risk_factors).toMatchObject({ unauthenticated: true, insecure_transport: true, no_rate_limit: true });
  });

  it('blocks a risky shadow endpoint in block mode once it is known', async () => {
    const gateway = (await call(context, admin, 'POST', '/api/v1/gateways', { name: 'shadow-block', backend_url: backend.url, mode: 'block', openapi: INVENTORY, block_details: 'full' })).json();
    const first = await context.app.inject({ method: 'GET', url: `/gw/${gateway.id}/echo-headers` });
    expect(first.statusCode).toBe(200);
    const second = await context.app.inject({ method: 'GET', url: `/gw/${gateway.id}/echo-headers` });
    expect(second.statusCode).toBe(403);
    expect(second.json().error.code).toBe('THREAT_BLOCKED');
    expect(second.json().error.decision.patterns_matched[0].id).toBe('apisec.shadow-endpoint');
    // Documented endpoints are not blocked for their risk.
    expect((await context.app.inject({ method: 'GET', url: `/gw/${gateway.id}/items` })).statusCode).toBe(200);
    expect((await context.app.inject({ method: 'GET', url: `/gw/${gateway.id}/items` })).statusCode).toBe(200);
  });
});
