/**
 * `svc serve --role collector`: the configuration it needs and implies (PostgreSQL and Redis; the
 * mutual-TLS sensor listener on by default), and the pillars' traffic it refuses while it keeps
 * serving svc's API. The all-in-one default is unchanged: no sensor listener unless SENSOR_LISTEN
 * is set. The app checks run on real PostgreSQL + Redis (DATABASE_URL / REDIS_URL), which the
 * collector role requires.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { createTestApp, usingPostgres, usingRedis, type TestContext } from '../helpers/app.ts';

const shared = { DATABASE_URL: 'postgres://svc:pw@127.0.0.1:5432/svc', REDIS_URL: 'redis://127.0.0.1:6379', ENVIRONMENT: 'development' };

function problems(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe('the serve roles in the configuration', () => {
  it('keeps the all-in-one default without a sensor listener, embedded or not', () => {
    expect(loadConfig({})).toMatchObject({ role: 'all-in-one', sensorListener: null });
    expect(loadConfig(shared)).toMatchObject({ role: 'all-in-one', sensorListener: null });
  });

  it('opens the sensor listener on HOST:8443 by default in the collector role, or where SENSOR_LISTEN says, or not at all', () => {
    expect(loadConfig({ ...shared, ROLE: 'collector', HOST: '0.0.0.0' }).sensorListener).toMatchObject({ host: '0.0.0.0', port: 8443, certificateFile: null });
    expect(loadConfig({ ...shared, ROLE: 'collector', SENSOR_LISTEN: '10.0.0.5:9443', SENSOR_TLS_HOSTNAMES: 'collector.internal' }).sensorListener).toMatchObject({ host: '10.0.0.5', port: 9443, hostnames: ['collector.internal'] });
    expect(loadConfig({ ...shared, ROLE: 'collector', SENSOR_LISTEN: 'off' }).sensorListener).toBeNull();
    expect(loadConfig({ SENSOR_LISTEN: '127.0.0.1:8443' })).toMatchObject({ role: 'all-in-one', sensorListener: { port: 8443 } });
  });

  it('refuses the collector role on embedded storage, an unknown role, a malformed SENSOR_LISTEN and half a server certificate', () => {
    expect(problems({ ROLE: 'collector' }).join('\n')).toMatch(/DATABASE_URL/);
    expect(problems({ ...shared, ROLE: 'sensor' }).join('\n')).toMatch(/ROLE/);
    expect(problems({ SENSOR_LISTEN: '8443' }).join('\n')).toMatch(/SENSOR_LISTEN/);
    expect(problems({ SENSOR_LISTEN: '127.0.0.1:8443', SENSOR_TLS_CERT_FILE: '/etc/svc/cert.pem' }).join('\n')).toMatch(/SENSOR_TLS_KEY_FILE/);
  });
});

describe.runIf(usingPostgres && usingRedis)('a collector (svc serve --role collector)', () => {
  let context: TestContext;
  let apiKey: string;
  beforeAll(async () => {
    context = await createTestApp({ env: { ROLE: 'collector', SENSOR_LISTEN: 'off' } });
    ({ apiKey } = await context.createOrg());
  }, 120_000);
  afterAll(async () => {
    await context?.close();
  });

  it("refuses each pillar's traffic with ROLE_NOT_SERVED, naming the pillar, and keeps serving svc's API and the sensor wire", async () => {
    const auth = { authorization: `Bearer ${apiKey}` };
    const refused = [
      { method: 'POST' as const, url: '/api/v1/gateway/completions', pillar: 'gateway' },
      { method: 'POST' as const, url: '/v1/chat/completions', pillar: 'gateway' },
      // The Challenge band's verify route belongs to the gateway's traffic: its sensor issues the puzzles.
      { method: 'POST' as const, url: '/api/v1/gateway/challenge', pillar: 'gateway' },
      { method: 'POST' as const, url: '/mcp/00000000-0000-4000-8000-000000000000', pillar: 'mcp' },
      { method: 'GET' as const, url: '/gw/00000000-0000-4000-8000-000000000000/anything', pillar: 'api' },
      { method: 'POST' as const, url: '/api/v1/verify', pillar: 'verification' },
    ];
    for (const { method, url, pillar } of refused) {
      const answer = await context.app.inject({ method, url, headers: { ...auth, 'content-type': 'application/json' }, payload: '{}' });
      expect(answer.statusCode, url).toBe(403);
      // The OpenAI-compatible surface answers in OpenAI's error shape (its code in lower case).
      expect(answer.json().error, url).toMatchObject(url.startsWith('/v1/') ? { code: 'role_not_served' } : { code: 'ROLE_NOT_SERVED', pillar });
    }
    // Percent-escapes the router decodes, HEAD and a query change nothing.
    const variants = [
      { method: 'POST' as const, url: '/api/v1/gateway/complet%69ons', pillar: 'gateway' },
      { method: 'POST' as const, url: '/api/v1/gateway/challeng%65', pillar: 'gateway' },
      { method: 'POST' as const, url: '/%76%31/chat/completions?x=1', pillar: 'gateway' },
      { method: 'HEAD' as const, url: '/v1/models', pillar: 'gateway' },
      { method: 'POST' as const, url: '/%6dcp/00000000-0000-4000-8000-000000000000', pillar: 'mcp' },
      { method: 'GET' as const, url: '/%67w/00000000-0000-4000-8000-000000000000/anything', pillar: 'api' },
      { method: 'POST' as const, url: '/api/v1/verif%79', pillar: 'verification' },
    ];
    for (const { method, url, pillar } of variants) {
      const answer = await context.app.inject({ method, url, headers: { ...auth, 'content-type': 'application/json' }, payload: method === 'HEAD' ? undefined : '{}' });
      expect(answer.statusCode, url).toBe(403);
      if (method !== 'HEAD') expect(answer.json().error, url).toMatchObject(url.includes('chat') ? { code: 'role_not_served' } : { code: 'ROLE_NOT_SERVED', pillar });
    }
    expect((await context.app.inject({ method: 'GET', url: '/api/v1/sensors', headers: auth })).statusCode).toBe(200);
    expect((await context.app.inject({ method: 'GET', url: '/api/v1/gateways', headers: auth })).statusCode).toBe(200);
    const token = await context.app.inject({ method: 'POST', url: '/api/v1/sensors/enrolment-tokens', headers: auth, payload: {} });
    expect(token.statusCode).toBe(201);
    // The sensor wire is the collector's own: an unsigned heartbeat is refused by the wire, not the role.
    expect((await context.app.inject({ method: 'POST', url: '/sensors/heartbeat', headers: { 'content-type': 'application/json' }, payload: '{}' })).json().error.code).toBe('sig_invalid');
  });
});
