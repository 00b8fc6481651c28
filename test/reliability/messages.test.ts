/**
 * Item 10 of issue #14: answers a user can act on, and docs that agree with behaviour.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';

let context: TestContext;
let admin: string;

beforeAll(async () => {
  context = await createTestApp({ env: { ALLOW_PRIVATE_TARGETS: 'false' } });
  admin = (await context.createOrg()).apiKey;
});
afterAll(async () => {
  await context.close();
});

const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  context.app.inject({ method, url, headers: { authorization: `Bearer ${admin}` }, ...(payload === undefined ? {} : { payload: payload as object }) });

describe('validation messages', () => {
  it('names the field and the allowed values when an enum value is wrong', async () => {
    const response = await call('POST', '/api/v1/keys', { scope: 'superuser' });
    expect(response.statusCode).toBe(400);
    const error = response.json().error;
    expect(error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body.scope', reason: 'enum' });
    expect(error.allowed).toEqual(expect.arrayContaining(['read', 'write', 'admin']));
  });

  it('names an unknown property instead of "must NOT have additional properties"', async () => {
    const response = await call('POST', '/api/v1/keys', { scope: 'read', colour: 'blue' });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body.colour', reason: 'unknown_property' });
  });

  it('states the body limit in BODY_TOO_LARGE', async () => {
    const response = await context.app.inject({
      method: 'POST', url: '/api/v1/inspect', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ kind: 'prompt', content: 'x'.repeat(1_100_000) }),
    });
    expect(response.statusCode).toBe(413);
    expect(response.json().error).toMatchObject({ code: 'BODY_TOO_LARGE', limit_bytes: 1_048_576 });
  });

  it('names ALLOW_PRIVATE_TARGETS when a target is forbidden', async () => {
    const response = await call('POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['threat.blocked'] });
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('TARGET_FORBIDDEN');
    expect(response.json().error.setting).toBe('ALLOW_PRIVATE_TARGETS');
  });

  it('says which order thresholds must keep', async () => {
    const response = await call('POST', '/api/v1/config/thresholds', { log_threshold: 0.9, alert_threshold: 0.8 });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({
      code: 'VALIDATION_FAILED', field: 'alert_threshold', reason: 'order', order: ['log_threshold', 'alert_threshold', 'challenge_threshold', 'block_threshold'],
    });
  });
});

describe('methods and paths (docs/errors.md)', () => {
  it('answers an unknown method on a known path with 405 METHOD_NOT_ALLOWED and an Allow header', async () => {
    const response = await call('PATCH', '/api/v1/keys');
    expect(response.statusCode).toBe(405);
    expect(response.json().error.code).toBe('METHOD_NOT_ALLOWED');
    expect(response.headers.allow).toContain('POST');
    expect(response.headers.allow).toContain('GET');
  });

  it('answers a path that exists under no method with 404 ROUTE_NOT_FOUND', async () => {
    const response = await call('GET', '/api/v1/no-such-thing');
    expect(response.statusCode).toBe(404);
    expect(response.json().error.code).toBe('ROUTE_NOT_FOUND');
  });
});

describe('requests the HTTP parser refuses', () => {
  it('answers oversized headers with 431 HEADERS_TOO_LARGE, the error shape and X-Request-ID', async () => {
    await context.app.listen({ port: 0, host: '127.0.0.1' });
    const address = context.app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const answer = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const request = httpRequest({ host: '127.0.0.1', port, path: '/health', headers: { 'x-big': 'a'.repeat(40_000) } }, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      });
      request.on('error', reject);
      request.end();
    });
    expect(answer.status).toBe(431);
    const body = JSON.parse(answer.body) as { error: { code: string; request_id: string } };
    expect(body.error.code).toBe('HEADERS_TOO_LARGE');
    expect(answer.headers['x-request-id']).toBe(body.error.request_id);
  });
});
