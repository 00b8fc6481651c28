/**
 * A SIEM sink PATCH that re-enables a disabled sink and changes its target in one request
 * (rel-41): both changes ask for an attempt at once, and the UPDATE assigned next_attempt_at
 * twice, which the database refuses (42601): a 500 for an ordinary request, and nothing changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';

let context: TestContext;
let apiKey: string;

beforeAll(async () => {
  context = await createTestApp();
  ({ apiKey } = await context.createOrg({ plan: 'enterprise' }));
}, 60_000);

afterAll(async () => {
  await context?.close();
});

const call = (method: 'POST' | 'PATCH' | 'GET', url: string, payload?: unknown) =>
  context.app.inject({ method, url, headers: { authorization: `Bearer ${apiKey}` }, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });

describe('re-enabling a SIEM sink with a new target in one PATCH', () => {
  it('re-enables a disabled syslog sink and moves it to a new port: 200, enabled, the new port stored', async () => {
    const created = await call('POST', '/api/v1/siem/sinks', { name: 'moved', kind: 'syslog', host: '127.0.0.1', port: 9, format: 'json', streams: ['findings'], enabled: false });
    expect(created.statusCode).toBe(201);
    const id = (created.json() as { id: string }).id;
    const patched = await call('PATCH', `/api/v1/siem/sinks/${id}`, { enabled: true, port: 10514 });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ enabled: true, state: 'active', port: 10514 });
    expect((await call('GET', `/api/v1/siem/sinks/${id}`)).json()).toMatchObject({ enabled: true, port: 10514 });
  });

  it('re-enables a disabled HEC sink with a new url and token: 200, enabled, the new url stored', async () => {
    const created = await call('POST', '/api/v1/siem/sinks', { name: 'hec-moved', kind: 'hec', url: 'http://127.0.0.1:9/services/collector', token: 'tok-0123456789abcdefghij', format: 'json', streams: ['findings'], enabled: false });
    expect(created.statusCode).toBe(201);
    const id = (created.json() as { id: string }).id;
    const patched = await call('PATCH', `/api/v1/siem/sinks/${id}`, { enabled: true, url: 'http://127.0.0.1:10/services/collector', token: 'tok-abcdefghij0123456789' });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ enabled: true, url: 'http://127.0.0.1:10/services/collector' });
  });
});
