import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';

let context: TestContext;
let admin: { orgId: string; orgTag: string; apiKey: string };

beforeAll(async () => {
  context = await createTestApp();
  admin = await context.createOrg({ name: 'acme' });
});
afterAll(async () => context.close());

const rateLimitHeaders = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

describe('authentication', () => {
  it('accepts the admin key from org creation as a Bearer token and as X-API-Key', async () => {
    const bearer = await context.app.inject({ method: 'GET', url: '/api/v1/org', headers: { authorization: `Bearer ${admin.apiKey}` } });
    expect(bearer.statusCode).toBe(200);
    expect(bearer.json()).toMatchObject({ id: admin.orgId, tag: admin.orgTag, plan: 'starter', effective_plan: 'starter' });
    const header = await context.app.inject({ method: 'GET', url: '/api/v1/org', headers: { 'x-api-key': admin.apiKey } });
    expect(header.statusCode).toBe(200);
  });

  it('issues keys in the documented format: svc_org_<class>_<org8>_<token of 32+ base62>', () => {
    expect(admin.apiKey).toMatch(new RegExp(`^svc_org_live_${admin.orgTag}_[A-Za-z0-9]{32,}$`));
  });

  it('answers 401 AUTH_MISSING without a credential', async () => {
    const response = await context.app.inject({ method: 'GET', url: '/api/v1/org' });
    expect(response.statusCode).toBe(401);
    expect(response.json().error.code).toBe('AUTH_MISSING');
    expect(response.json().error.request_id).toBe(response.headers['x-request-id']);
  });

  it('answers 401 before it looks at the body: an unauthenticated caller learns nothing of what a route expects', async () => {
    // From an address of its own: anonymous requests share a per-IP window with the other tests.
    const remoteAddress = '198.51.100.23';
    const response = await context.app.inject({ method: 'POST', url: '/api/v1/gateway/completions', payload: { nonsense: true }, remoteAddress });
    expect(response.statusCode).toBe(401);
    expect(response.json().error.code).toBe('AUTH_MISSING');
    const malformed = await context.app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers: { 'content-type': 'application/json' }, payload: '{"broken', remoteAddress });
    expect(malformed.statusCode).toBe(401);
  });

  it('answers 401 AUTH_INVALID for a made-up key, even one shaped like a real key', async () => {
    for (const key of [`svc_org_live_${admin.orgTag}_${'A'.repeat(40)}`, 'not-a-key', `${admin.apiKey}x`]) {
      const response = await context.app.inject({ method: 'GET', url: '/api/v1/org', headers: { 'x-api-key': key } });
      expect(response.statusCode).toBe(401);
      expect(response.json().error.code).toBe('AUTH_INVALID');
    }
  });

  it('refuses a flood of made-up keys from one address before they reach the database', async () => {
    const original = context.services.db.query.bind(context.services.db);
    let lookups = 0;
    context.services.db.query = (async (sql: string, params?: readonly unknown[]) => {
      if (sql.includes('FROM api_keys')) lookups++;
      return original(sql, params);
    }) as typeof context.services.db.query;
    try {
      const responses = await Promise.all(
        Array.from({ length: 120 }, (_, i) =>
          context.app.inject({
            method: 'GET',
            url: '/api/v1/org',
            headers: { 'x-api-key': `svc_org_live_${admin.orgTag}_${String(i).padStart(40, 'Z')}` },
            remoteAddress: '203.0.113.50',
          }),
        ),
      );
      const statuses = responses.map((response) => response.statusCode);
      expect(statuses.every((status) => status === 401 || status === 429)).toBe(true);
      // At most 50 lookups per second per address (KEY_LOOKUP_POLICY); the rest are refused up front.
      expect(lookups).toBeLessThanOrEqual(60);
      expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(60);
    } finally {
      context.services.db.query = original;
    }
  });

  it('answers 401 AUTH_REVOKED once a key is revoked', async () => {
    const created = await context.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: { authorization: `Bearer ${admin.apiKey}` },
      payload: { scope: 'read', name: 'temp' },
    });
    expect(created.statusCode).toBe(201);
    const { api_key: apiKey, key_id: keyId } = created.json();
    expect((await context.app.inject({ method: 'GET', url: '/api/v1/org', headers: { 'x-api-key': apiKey } })).statusCode).toBe(200);
    const revoked = await context.app.inject({ method: 'DELETE', url: `/api/v1/keys/${keyId}`, headers: { 'x-api-key': admin.apiKey } });
    expect(revoked.statusCode).toBe(200);
    const after = await context.app.inject({ method: 'GET', url: '/api/v1/org', headers: { 'x-api-key': apiKey } });
    expect(after.statusCode).toBe(401);
    expect(after.json().error.code).toBe('AUTH_REVOKED');
    const trail = await context.services.db.withOrg(admin.orgId, (tx) =>
      tx.query<{ action: string; target: string }>(`SELECT action, target FROM audit_log WHERE target = $1 ORDER BY seq`, [keyId]),
    );
    expect(trail.rows.map((row) => row.action)).toEqual(['api_key.created', 'api_key.revoked']);
  });

  it('answers 403 SCOPE_INSUFFICIENT when a read key calls an admin endpoint', async () => {
    const created = await context.app.inject({ method: 'POST', url: '/api/v1/keys', headers: { 'x-api-key': admin.apiKey }, payload: { scope: 'read' } });
    const readKey = created.json().api_key;
    const response = await context.app.inject({ method: 'POST', url: '/api/v1/keys', headers: { 'x-api-key': readKey }, payload: { scope: 'admin' } });
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('SCOPE_INSUFFICIENT');
  });

  it('refuses a restricted-class key with admin scope', async () => {
    const response = await context.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: { 'x-api-key': admin.apiKey },
      payload: { scope: 'admin', class: 'rstr' },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('KEY_CLASS_FORBIDDEN');
  });

  it('never lists key secrets, only their display form', async () => {
    const response = await context.app.inject({ method: 'GET', url: '/api/v1/keys', headers: { 'x-api-key': admin.apiKey } });
    expect(response.statusCode).toBe(200);
    expect(response.body).not.toContain(admin.apiKey);
    expect(response.body).not.toContain(admin.apiKey.slice(-30));
    expect(response.json().data.length).toBeGreaterThan(0);
  });

  it('keeps one org out of another org’s keys', async () => {
    const other = await context.createOrg();
    const keys = await context.app.inject({ method: 'GET', url: '/api/v1/keys', headers: { 'x-api-key': other.apiKey } });
    expect(keys.json().data).toHaveLength(1);
    const mine = await context.app.inject({ method: 'GET', url: '/api/v1/keys', headers: { 'x-api-key': admin.apiKey } });
    const myKeyId = mine.json().data[0].key_id;
    const revoke = await context.app.inject({ method: 'DELETE', url: `/api/v1/keys/${myKeyId}`, headers: { 'x-api-key': other.apiKey } });
    expect(revoke.statusCode).toBe(404);
    expect(revoke.json().error.code).toBe('NOT_FOUND');
  });
});

describe('responses', () => {
  it('carry X-Request-ID and the rate-limit headers on success, errors, 404s and operational endpoints', async () => {
    const responses = await Promise.all([
      context.app.inject({ method: 'GET', url: '/api/v1/org', headers: { 'x-api-key': admin.apiKey } }),
      context.app.inject({ method: 'GET', url: '/api/v1/org' }),
      context.app.inject({ method: 'GET', url: '/api/v1/no-such-thing', headers: { 'x-api-key': admin.apiKey } }),
      context.app.inject({ method: 'GET', url: '/health' }),
      context.app.inject({ method: 'GET', url: '/metrics' }),
      context.app.inject({ method: 'POST', url: '/api/v1/keys', headers: { 'x-api-key': admin.apiKey, 'content-type': 'application/json' }, payload: '{bad' }),
    ]);
    for (const response of responses) {
      expect(response.headers['x-request-id']).toBeTruthy();
      for (const header of rateLimitHeaders) expect(Number(response.headers[header])).toBeGreaterThanOrEqual(0);
    }
    expect(responses[2]!.json().error.code).toBe('ROUTE_NOT_FOUND');
    expect(responses[5]!.statusCode).toBe(400);
    expect(responses[5]!.json().error.code).toBe('INVALID_JSON');
  });

  it('echoes a well-formed incoming X-Request-ID and replaces a malformed one', async () => {
    const kept = await context.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'trace-123' } });
    expect(kept.headers['x-request-id']).toBe('trace-123');
    const replaced = await context.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'bad id\u0001' } });
    expect(replaced.headers['x-request-id']).not.toBe('bad id\u0001');
  });

  it('rejects an invalid body with 400 VALIDATION_FAILED naming the field', async () => {
    const response = await context.app.inject({ method: 'POST', url: '/api/v1/keys', headers: { 'x-api-key': admin.apiKey }, payload: { scope: 'owner' } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('VALIDATION_FAILED');
    expect(response.json().error.field).toBe('body.scope');
    const missing = await context.app.inject({ method: 'POST', url: '/api/v1/keys', headers: { 'x-api-key': admin.apiKey }, payload: {} });
    expect(missing.json().error.field).toBe('body.scope');
  });

  it('answers 415 for a body that is not JSON and 413 for one over the limit', async () => {
    const text = await context.app.inject({ method: 'POST', url: '/api/v1/keys', headers: { 'x-api-key': admin.apiKey, 'content-type': 'text/plain' }, payload: 'scope=read' });
    expect(text.statusCode).toBe(415);
    expect(text.json().error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const large = await context.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: { 'x-api-key': admin.apiKey, 'content-type': 'application/json' },
      payload: JSON.stringify({ scope: 'read', name: 'x'.repeat(1_100_000) }),
    });
    expect(large.statusCode).toBe(413);
    expect(large.json().error.code).toBe('BODY_TOO_LARGE');
  });

  it('serves an OpenAPI document generated from the route schemas', async () => {
    const response = await context.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    const document = response.json();
    expect(document.openapi).toMatch(/^3\./);
    expect(document.paths['/api/v1/keys'].post).toBeDefined();
    expect(document.paths['/api/v1/providers/{provider}/key'].put).toBeDefined();
  });
});

describe('provider keys', () => {
  it('stores an upstream key encrypted and only ever shows it masked', async () => {
    const secret = 'sk-test-abcdefghijklmnopqrstuvwxyz123456';
    const put = await context.app.inject({
      method: 'PUT',
      url: '/api/v1/providers/openai/key',
      headers: { 'x-api-key': admin.apiKey },
      payload: { key: secret, base_url: 'http://127.0.0.1:9999/v1' },
    });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({ provider: 'openai', key: '••••3456', base_url: 'http://127.0.0.1:9999/v1' });
    const list = await context.app.inject({ method: 'GET', url: '/api/v1/providers', headers: { 'x-api-key': admin.apiKey } });
    expect(list.body).not.toContain(secret);
    const raw = await context.services.db.query<{ ciphertext: string }>('SELECT ciphertext FROM provider_keys WHERE org_id = $1', [admin.orgId]);
    expect(raw.rows[0]!.ciphertext).not.toContain(secret);
    expect(raw.rows[0]!.ciphertext).not.toContain(Buffer.from(secret).toString('base64').slice(0, 20));
    expect(await context.services.accounts.providerKeys.get(admin.orgId, 'openai')).toEqual({ key: secret, baseUrl: 'http://127.0.0.1:9999/v1' });
  });

  it('refuses an unknown provider with VALIDATION_FAILED', async () => {
    const response = await context.app.inject({ method: 'PUT', url: '/api/v1/providers/nosuch/key', headers: { 'x-api-key': admin.apiKey }, payload: { key: 'k' } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('VALIDATION_FAILED');
  });

  it('refuses a private base_url when the deployment does not allow private targets', async () => {
    const strict = await createTestApp({ env: { ALLOW_PRIVATE_TARGETS: 'false' } });
    try {
      const org = await strict.createOrg();
      for (const url of ['http://127.0.0.1:8080/v1', 'http://169.254.169.254/latest', 'http://2130706433/', 'http://[::ffff:10.0.0.1]/']) {
        const response = await strict.app.inject({ method: 'PUT', url: '/api/v1/providers/openai/key', headers: { 'x-api-key': org.apiKey }, payload: { key: 'k', base_url: url } });
        expect(response.statusCode, url).toBe(403);
        expect(response.json().error.code).toBe('TARGET_FORBIDDEN');
      }
    } finally {
      await strict.close();
    }
  });
});

describe('trial', () => {
  it('starts a new org on a 30-day Starter trial and extends it up to 90 days, no further', async () => {
    const org = await context.createOrg();
    const before = (await context.app.inject({ method: 'GET', url: '/api/v1/org', headers: { 'x-api-key': org.apiKey } })).json();
    const days = (Date.parse(before.trial_ends_at) - Date.parse(before.trial_started_at)) / 86_400_000;
    expect(days).toBeCloseTo(30, 5);
    const extend = (d: number) =>
      context.app.inject({ method: 'POST', url: '/api/v1/org/trial/extend', headers: { 'x-api-key': org.apiKey }, payload: { days: d } });
    expect((await extend(60)).statusCode).toBe(200);
    const refused = await extend(1);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.code).toBe('TRIAL_LIMIT');
  });
});

describe('sign-up and sign-in', () => {
  it('registers a user on a Starter trial, signs in, and the session token authenticates', async () => {
    const email = `user-${Date.now()}@example.com`;
    const register = await context.app.inject({
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email, password: 'correct horse battery', org_name: 'Acme Web' },
    });
    expect(register.statusCode).toBe(201);
    expect(register.json().plan).toBe('starter');
    const login = await context.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: 'correct horse battery' } });
    expect(login.statusCode).toBe(200);
    const org = await context.app.inject({ method: 'GET', url: '/api/v1/org', headers: { authorization: `Bearer ${login.json().token}` } });
    expect(org.statusCode).toBe(200);
    expect(org.json().id).toBe(register.json().org_id);
    const wrong = await context.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: 'wrong password!!' } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error.code).toBe('LOGIN_FAILED');
    const duplicate = await context.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email, password: 'another password', org_name: 'x' } });
    expect(duplicate.json().error.code).toBe('EMAIL_TAKEN');
  });
});
