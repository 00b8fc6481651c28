/**
 * Item 5 of issue #14: input that used to answer 500 now answers a 4xx with the error shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';

let context: TestContext;
let admin: string;

beforeAll(async () => {
  context = await createTestApp();
  admin = (await context.createOrg()).apiKey;
});
afterAll(async () => {
  await context.close();
});

const send = (method: 'POST' | 'PUT', url: string, payload: unknown, key: string | null = admin) =>
  context.app.inject({ method, url, headers: key === null ? {} : { authorization: `Bearer ${key}` }, payload: payload as object });

function expectClientError(response: { statusCode: number; json(): { error?: { code?: unknown; request_id?: unknown; message?: unknown } } }) {
  expect(response.statusCode).toBeGreaterThanOrEqual(200);
  expect(response.statusCode).toBeLessThan(500);
  if (response.statusCode >= 400) {
    const error = response.json().error;
    expect(typeof error?.code).toBe('string');
    expect(typeof error?.request_id).toBe('string');
  }
}

/** JSON text of {"a":{"a":…"x"…}} nested `depth` levels (built as text: JSON.stringify itself overflows). */
function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}"x"${'}'.repeat(depth)}`;
}

describe('hostile input never answers 5xx', () => {
  it('answers a login whose email holds U+0000 with LOGIN_FAILED, not INTERNAL', async () => {
    const response = await send('POST', '/api/v1/auth/login', { email: 'a\u0000@example.com', password: 'whatever-password' }, null);
    expect(response.statusCode).toBe(401);
    expect(response.json().error.code).toBe('LOGIN_FAILED');
  });

  it('answers a registration whose org_name holds U+0000 without a server error', async () => {
    const response = await send('POST', '/api/v1/auth/register', { email: `nul-${Date.now()}@example.com`, password: 'a long enough password 123', org_name: 'Acme\u0000Corp' }, null);
    expectClientError(response);
  });

  it('answers a key whose name holds U+0000 without a server error', async () => {
    const response = await send('POST', '/api/v1/keys', { scope: 'read', class: 'live', name: 'ci\u0000key' });
    expectClientError(response);
  });

  it('answers a provider key that holds U+0000 without a server error', async () => {
    const response = await send('PUT', '/api/v1/providers/openai/key', { key: 'sk-proj-abcdefghijklmnop\u0000qrstuvwxyz0123456789' });
    expectClientError(response);
  });

  it('refuses a JSON body nested 5,000 and 50,000 levels deep, and scans the same nesting sent as a string', async () => {
    for (const depth of [5_000, 50_000]) {
      const response = await context.app.inject({
        method: 'POST',
        url: '/api/v1/inspect',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        payload: `{"kind":"http","request":{"method":"POST","path":"/x","headers":{},"body":${nested(depth)}}}`,
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body', reason: 'too_deep', limit: 128 });
      const asText = await send('POST', '/api/v1/inspect', { kind: 'http', request: { method: 'POST', path: '/x', headers: {}, body: nested(depth) } });
      expect(asText.statusCode).toBe(200);
    }
  });

  it.each([
    ['POST', '/api/v1/gateways', (deep: string) => `{"name":"d","backend_url":"https://api.example.com","openapi":{"openapi":"3.0.0","paths":${deep}}}`],
    ['POST', '/api/v1/verify', (deep: string) => `{"response":"x","schema":${deep}}`],
    ['PUT', '/api/v1/config/verification', (deep: string) => `{"structural":{"json_schema":${deep}}}`],
    ['POST', '/api/v1/gateway/completions', (deep: string) => `{"provider":"mock","model":"m","messages":[{"role":"user","content":"hi"}],"tools":[${deep}]}`],
  ])('answers %s %s with a body nested 10,000 deep with 400 too_deep, not a stack overflow', async (method, url, body) => {
    const response = await context.app.inject({ method: method as 'POST' | 'PUT', url, headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, payload: body(nested(10_000)) });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'VALIDATION_FAILED', reason: 'too_deep' });
  });

  it('still takes a body nested 100 deep (JSON Schemas and OpenAPI documents nest a few dozen levels)', async () => {
    const response = await context.app.inject({ method: 'POST', url: '/api/v1/inspect', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, payload: `{"kind":"http","request":{"method":"POST","path":"/x","headers":{},"body":${nested(100)}}}` });
    expect(response.statusCode).toBe(200);
    expect(response.json().decision).toBeDefined();
  });

  it.each(['/api/v1/webhooks/%ff%fe', '/api/v1/%', '/gw/%c0%af/x'])('answers a path that is not valid percent-encoding (%s) with MALFORMED_REQUEST and a request id', async (url) => {
    const response = await context.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${admin}` } });
    expect(response.statusCode).toBe(400);
    const error = response.json().error;
    expect(error).toMatchObject({ code: 'MALFORMED_REQUEST', field: 'path' });
    expect(response.headers['x-request-id']).toBe(error.request_id);
  });

  it('answers an OPTIONS request without preflight headers like a preflight (204), not with a plain-text 400', async () => {
    const bare = await context.app.inject({ method: 'OPTIONS', url: '/api/v1/whoami' });
    expect(bare.statusCode).toBe(204);
    const preflight = await context.app.inject({ method: 'OPTIONS', url: '/api/v1/whoami', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' } });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
  });

  it('refuses block_threshold 1e-300 with VALIDATION_FAILED naming the field', async () => {
    const response = await send('POST', '/api/v1/config/thresholds', { block_threshold: 1e-300 });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'block_threshold' });
  });
});
