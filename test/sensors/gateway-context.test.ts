/**
 * The collector's gateway context (src/sensors/collector/gateway-context.ts) through the real HTTP
 * app: only gateway sensors get it; heartbeats answer its etag alone and the configuration pull
 * the context sealed to the sensor's key, which carries the org's settings, provider credential
 * and API-key hashes (never a key) and opens for that sensor only; the etag moves when the
 * settings do; the usage a gateway sensor reports reaches the budget and the usage history.
 * Real PostgreSQL and Redis when DATABASE_URL / REDIS_URL are set, PGlite and memory otherwise.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayContext } from '../../src/sensors/index.ts';
import { gatewayEventFinding } from '../../src/sensors/gateway-sensor-routes.ts';
import { sensorOpener } from '../../src/sensors/sealing.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { createEnrolmentToken, TestSensor } from './sensor-client.ts';

const heartbeat = { load: 0, queue_depth: 0, last_finding_at: null };
const PROVIDER_KEY = 'sk-context-test-0123456789abcdef';

describe('the gateway context', () => {
  let context: TestContext;
  let org: { orgId: string; apiKey: string };
  let sensor: TestSensor;
  const auth = () => ({ authorization: `Bearer ${org.apiKey}` });

  beforeAll(async () => {
    context = await createTestApp();
    org = await context.createOrg();
    const stored = await context.app.inject({ method: 'PUT', url: '/api/v1/providers/anthropic/key', headers: auth(), payload: { key: PROVIDER_KEY } });
    expect(stored.statusCode).toBe(200);
    sensor = new TestSensor(context.app, 'gateway-ctx', 'gateway');
    expect((await sensor.enrol(await createEnrolmentToken(context.app, org.apiKey))).statusCode).toBe(201);
  }, 120_000);
  afterAll(async () => context.close());

  const pull = async (who: TestSensor = sensor) => {
    const answer = await who.signed('GET', `/sensors/${who.id}/config`);
    expect(answer.statusCode).toBe(200);
    return answer.json() as { gateway?: { etag: string; sealed?: string } };
  };

  it('answers the etag alone on a heartbeat and the sealed context on a pull, which only this sensor can open', async () => {
    const beat = await sensor.signed('POST', '/sensors/heartbeat', heartbeat);
    expect(beat.statusCode).toBe(200);
    const etag = beat.json().gateway.etag as string;
    expect(etag).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(beat.json().gateway.sealed).toBeUndefined();
    expect(beat.body).not.toContain(PROVIDER_KEY);

    const pulled = await pull();
    expect(pulled.gateway?.etag).toBe(etag);
    const raw = JSON.stringify(pulled);
    expect(raw).not.toContain(PROVIDER_KEY);
    expect(raw).not.toContain(createHash('sha256').update(org.apiKey).digest('hex'));

    const opened = JSON.parse((await sensorOpener(sensor.privateKey))(pulled.gateway!.sealed!).toString('utf8')) as GatewayContext;
    expect(opened.org_id).toBe(org.orgId);
    expect(opened.providers.anthropic).toEqual({ key: PROVIDER_KEY, base_url: null });
    expect(opened.api_keys.map((key) => key.hash)).toContain(createHash('sha256').update(org.apiKey).digest('hex'));
    expect(JSON.stringify(opened.api_keys)).not.toContain(org.apiKey);
    expect(opened.settings).toMatchObject({ pii_mode: 'redact', routing: null });

    const stranger = new TestSensor(context.app);
    await expect(sensorOpener(stranger.privateKey).then((open) => open(pulled.gateway!.sealed!))).rejects.toThrow();
  });

  it('gives no gateway context to a sensor of another class', async () => {
    const verifier = new TestSensor(context.app, 'verify-ctx', 'verification');
    expect((await verifier.enrol(await createEnrolmentToken(context.app, org.apiKey))).statusCode).toBe(201);
    expect((await pull(verifier)).gateway).toBeUndefined();
    const beat = await verifier.signed('POST', '/sensors/heartbeat', { ...heartbeat, gateway_usage: { budget: [{ day: new Date().toISOString().slice(0, 10), tokens: 999, micro_usd: 0 }], hours: [] } });
    expect(beat.statusCode).toBe(200);
    const budget = await context.app.inject({ method: 'GET', url: '/api/v1/gateway/budget', headers: auth() });
    expect(budget.json().tokens_used).toBe(0);
  });

  it('moves the etag when the org’s gateway settings change, and keeps it otherwise', async () => {
    const before = (await pull()).gateway!.etag;
    expect((await pull()).gateway!.etag).toBe(before);
    const changed = await context.app.inject({ method: 'PUT', url: '/api/v1/gateway/pii', headers: auth(), payload: { mode: 'block' } });
    expect(changed.statusCode).toBe(200);
    const after = await pull();
    expect(after.gateway!.etag).not.toBe(before);
    const opened = JSON.parse((await sensorOpener(sensor.privateKey))(after.gateway!.sealed!).toString('utf8')) as GatewayContext;
    expect(opened.settings.pii_mode).toBe('block');
  });

  it('drops a revoked API key from the context, so the sensor stops accepting it', async () => {
    const created = await context.app.inject({ method: 'POST', url: '/api/v1/keys', headers: auth(), payload: { name: 'edge client', scope: 'write' } });
    expect(created.statusCode).toBe(201);
    const { key_id: keyId, api_key: secondKey } = created.json() as { key_id: string; api_key: string };
    const hashOf = (key: string) => createHash('sha256').update(key).digest('hex');
    const hashes = async () => (JSON.parse((await sensorOpener(sensor.privateKey))((await pull()).gateway!.sealed!).toString('utf8')) as GatewayContext).api_keys.map((key) => key.hash);
    expect(await hashes()).toContain(hashOf(secondKey));
    const before = (await pull()).gateway!.etag;
    const revoked = await context.app.inject({ method: 'DELETE', url: `/api/v1/keys/${keyId}`, headers: auth() });
    expect(revoked.statusCode).toBe(200);
    expect((await pull()).gateway!.etag).not.toBe(before);
    expect(await hashes()).not.toContain(hashOf(secondKey));
    expect(await hashes()).toContain(hashOf(org.apiKey));
  });

  it('delivers a gateway sensor’s budget warning as the org’s webhook event once, however many times it is sent, and stores no threat event for it', async () => {
    const delivered: Array<{ event: string; data: Record<string, unknown>; gatewayId: string | null }> = [];
    const unsubscribe = context.services.events.subscribe((event) => {
      if (event.orgId === org.orgId) delivered.push({ event: event.event, data: event.data, gatewayId: event.gatewayId });
    });
    try {
      const warning = gatewayEventFinding(sensor.id, org.orgId, 'budget.warning', { budget: 'daily_tokens', limit: 10_000, used: 8_518, ratio: 0.852 })!;
      // Sent twice (a second sensor raising the same warning names the same key): delivered once.
      for (const attempt of [1, 2]) {
        const answer = await sensor.send(sensor.finding({ idempotencyKey: warning.idempotencyKey, data: warning.data }));
        expect(answer.statusCode).toBe(attempt === 1 ? 202 : 200);
      }
      // Emitted before the collector answers the finding.
      expect(delivered).toEqual([{ event: 'budget.warning', data: { budget: 'daily_tokens', limit: 10_000, used: 8_518, ratio: 0.852 }, gatewayId: 'ai_gateway' }]);
      await context.services.detection.flush();
      const { rows } = await context.services.db.withOrg(org.orgId, (tx) => tx.query('SELECT id FROM threat_events WHERE kind = $1', ['gateway_event']));
      expect(rows).toHaveLength(0);
      // An event of a name the collector does not deliver, or with a field missing, is not delivered.
      for (const details of [{ event: 'threat.blocked', data: {} }, { event: 'cost.anomaly', data: { hour_start: '2026-11-29T04:00:00.000Z' } }]) {
        expect((await sensor.send(sensor.finding({ data: { ...warning.data, details } }))).statusCode).toBe(202);
      }
      expect(delivered).toHaveLength(1);
    } finally {
      unsubscribe();
    }
  });

  it('records a cost anomaly a gateway sensor raised in the usage history, as svc serve does, besides delivering it', async () => {
    const delivered: string[] = [];
    const unsubscribe = context.services.events.subscribe((event) => {
      if (event.orgId === org.orgId) delivered.push(event.event);
    });
    try {
      const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString();
      const data = { hour_start: hour, spend_usd: 4.5, baseline_mean_usd: 0.02, baseline_stddev_usd: 0.005, z_score: 12.3 };
      const anomaly = gatewayEventFinding(sensor.id, org.orgId, 'cost.anomaly', data)!;
      expect((await sensor.send(sensor.finding({ idempotencyKey: anomaly.idempotencyKey, data: anomaly.data }))).statusCode).toBe(202);
      expect(delivered).toEqual(['cost.anomaly']);
      const usage = await context.app.inject({ method: 'GET', url: '/api/v1/gateway/usage', headers: auth() });
      expect(usage.json().anomalies).toEqual([data]);
    } finally {
      unsubscribe();
    }
  });

  it('accepts and delivers a cost anomaly whose figures the usage history cannot hold, without recording it, so the sensor does not resend its batch forever', async () => {
    const delivered: string[] = [];
    const unsubscribe = context.services.events.subscribe((event) => {
      if (event.orgId === org.orgId) delivered.push(event.event);
    });
    try {
      const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000).toISOString();
      // 10^13 USD is 10^19 micro-USD: past the bigint column (and past exact integers in JavaScript).
      const data = { hour_start: hour, spend_usd: 1e13, baseline_mean_usd: 0.02, baseline_stddev_usd: 0.005, z_score: 12.3 };
      const anomaly = gatewayEventFinding(sensor.id, org.orgId, 'cost.anomaly', data)!;
      expect((await sensor.send(sensor.finding({ idempotencyKey: anomaly.idempotencyKey, data: anomaly.data }))).statusCode).toBe(202);
      expect(delivered).toEqual(['cost.anomaly']);
      const usage = await context.app.inject({ method: 'GET', url: '/api/v1/gateway/usage', headers: auth() });
      expect((usage.json().anomalies as Array<{ hour_start: string }>).map((row) => row.hour_start)).not.toContain(hour);
    } finally {
      unsubscribe();
    }
  });

  it('adds the usage a gateway sensor reports to the budget and the usage history, and refuses a malformed report', async () => {
    const day = new Date().toISOString().slice(0, 10);
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString();
    const report = { budget: [{ day, tokens: 40, micro_usd: 12 }], hours: [{ hour, provider: 'anthropic', model: 'claude-3-5-haiku-latest', requests: 2, prompt_tokens: 30, completion_tokens: 10, cost_usd: 0.000012 }] };
    const beat = await sensor.signed('POST', '/sensors/heartbeat', { ...heartbeat, gateway_usage: report });
    expect(beat.statusCode).toBe(200);
    const budget = await context.app.inject({ method: 'GET', url: '/api/v1/gateway/budget', headers: auth() });
    expect(budget.json().tokens_used).toBe(40);
    await context.services.gateway.settled();
    const usage = await context.app.inject({ method: 'GET', url: '/api/v1/gateway/usage', headers: auth() });
    expect(usage.json().buckets).toMatchObject([{ provider: 'anthropic', model: 'claude-3-5-haiku-latest', requests: 2, prompt_tokens: 30, completion_tokens: 10 }]);
    // The context the sensor pulls next counts it.
    const opened = JSON.parse((await sensorOpener(sensor.privateKey))((await pull()).gateway!.sealed!).toString('utf8')) as GatewayContext;
    expect(opened.budget).toMatchObject({ day, tokens: 40 });

    const malformed = await sensor.signed('POST', '/sensors/heartbeat', { ...heartbeat, gateway_usage: { budget: [{ day: 'yesterday', tokens: 1, micro_usd: 0 }], hours: [] } });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().error.code).toBe('VALIDATION_FAILED');
    // Dates of the right shape that are no dates (30 February, hour 25) are refused too, not a 500.
    for (const usage of [
      { budget: [{ day: '2026-02-30', tokens: 1, micro_usd: 0 }], hours: [] },
      { budget: [], hours: [{ hour: '2026-01-01T25:00:00Z', provider: 'anthropic', model: 'm', requests: 1, prompt_tokens: 1, completion_tokens: 1, cost_usd: 0 }] },
    ]) {
      const impossible = await sensor.signed('POST', '/sensors/heartbeat', { ...heartbeat, gateway_usage: usage });
      expect(impossible.statusCode).toBe(400);
      expect(impossible.json().error).toMatchObject({ code: 'VALIDATION_FAILED', reason: 'date' });
    }
  });

  it('counts a budget report dated after the collector’s day (a sensor’s clock ahead) in the collector’s day, not in a future one', async () => {
    const tokensUsed = async () => (await context.app.inject({ method: 'GET', url: '/api/v1/gateway/budget', headers: auth() })).json().tokens_used as number;
    const before = await tokensUsed();
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const beat = await sensor.signed('POST', '/sensors/heartbeat', { ...heartbeat, gateway_usage: { budget: [{ day: tomorrow, tokens: 7, micro_usd: 3 }], hours: [] } });
    expect(beat.statusCode).toBe(200);
    expect(await tokensUsed()).toBe(before + 7);
    await context.services.gateway.budget.persist();
    const { rows } = await context.services.db.query('SELECT day FROM budget_usage WHERE org_id = $1 AND day > $2::date', [org.orgId, new Date().toISOString().slice(0, 10)]);
    expect(rows).toEqual([]);
  });
});

describe('the deployment’s environment provider keys in a gateway context', () => {
  const ENV_KEY = 'sk-deployment-env-key-0123456789abcdef';

  const openedContext = async (env: Record<string, string>) => {
    const context = await createTestApp({ env: { OPENAI_API_KEY: ENV_KEY, ...env } });
    try {
      const org = await context.createOrg();
      const sensor = new TestSensor(context.app, 'gateway-env', 'gateway');
      expect((await sensor.enrol(await createEnrolmentToken(context.app, org.apiKey))).statusCode).toBe(201);
      const pulled = await sensor.signed('GET', `/sensors/${sensor.id}/config`);
      expect(pulled.statusCode).toBe(200);
      return JSON.parse((await sensorOpener(sensor.privateKey))(pulled.json().gateway.sealed as string).toString('utf8')) as GatewayContext;
    } finally {
      await context.close();
    }
  };

  it('are not sealed to an org’s sensor by default, so an org that enrols one cannot read the operator’s keys', async () => {
    const opened = await openedContext({});
    expect(opened.providers.openai).toBeUndefined();
    expect(JSON.stringify(opened)).not.toContain(ENV_KEY);
  }, 120_000);

  it('are sealed to it when the operator sets SENSOR_ENVIRONMENT_PROVIDER_KEYS', async () => {
    const opened = await openedContext({ SENSOR_ENVIRONMENT_PROVIDER_KEYS: 'true' });
    expect(opened.providers.openai).toEqual({ key: ENV_KEY, base_url: null });
  }, 120_000);
});
