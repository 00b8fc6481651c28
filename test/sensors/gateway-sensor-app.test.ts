/**
 * The gateway sensor's HTTP server in-process (src/sensors/gateway-sensor-routes.ts): the real
 * gateway core and routes in front of a local fake OpenAI (test/fakes), given a gateway context
 * as the collector would seal it, with a recording stand-in for the sensor agent (what the
 * sensor emits is the assertion). What `svc serve` applies that a sensor must apply too: the
 * per-key and per-IP rate limits, the gateway's webhook events, PII reports of streamed answers.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SENSOR_CONFIG, type FindingData } from '../../src/sensors/index.ts';
import type { GatewayContext } from '../../src/sensors/collector/gateway-context.ts';
import { buildGatewaySensor, createGatewayUsage } from '../../src/sensors/gateway-sensor-routes.ts';
import type { SensorAgent } from '../../src/sensors/sensor/agent.ts';
import { sha256Hex } from '../../src/platform/crypto.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { FAKE_CREDENTIALS, startFakeProvider, type FakeProvider } from '../fakes/providers/index.ts';

const logger = createLogger('error');
const ORG_ID = '00000000-0000-4000-8000-0000000000a1';
const KEY = `svc_org_gwsensor_${'k'.repeat(40)}`;
const OTHER_KEY = `svc_org_gwsensor_${'o'.repeat(40)}`;
const today = () => new Date().toISOString().slice(0, 10);

let openai: FakeProvider;
const built: Array<ReturnType<typeof buildGatewaySensor>> = [];

beforeAll(async () => {
  openai = await startFakeProvider('openai');
});
afterEach(async () => {
  for (const sensor of built.splice(0)) await sensor.app.close();
});
afterAll(async () => openai?.close());

function contextOf(overrides: Partial<GatewayContext> = {}): GatewayContext {
  return {
    org_id: ORG_ID,
    org_tag: 'gwsensor',
    plan: 'community',
    settings: { routing: null, pii_mode: 'redact', pii_restore: false, daily_usd_cap: null },
    providers: { openai: { key: FAKE_CREDENTIALS.default, base_url: openai.baseUrl } },
    api_keys: [
      { hash: sha256Hex(KEY), key_id: '00000000-0000-4000-8000-0000000000b1', scope: 'write', class: 'live' },
      { hash: sha256Hex(OTHER_KEY), key_id: '00000000-0000-4000-8000-0000000000b2', scope: 'write', class: 'live' },
    ],
    budget: { day: today(), tokens: 0, micro_usd: 0 },
    ...overrides,
  };
}

/** A sensor agent that records what is emitted; its "sealed" context is the JSON in base64. */
function recordingAgent(context: GatewayContext) {
  const emitted: Array<{ correlationId: string; data: FindingData; idempotencyKey: string | undefined; unfiltered: boolean }> = [];
  const agent = {
    sensorId: '00000000-0000-4000-8000-0000000000c1',
    config: () => DEFAULT_SENSOR_CONFIG,
    emit: async (correlationId: string, data: FindingData, options: { idempotencyKey?: string; unfiltered?: boolean } = {}) => {
      emitted.push({ correlationId, data, idempotencyKey: options.idempotencyKey, unfiltered: options.unfiltered === true });
      return 'sent' as const;
    },
    pullConfig: async () => ({ gateway: { etag: 'etag-1', sealed: Buffer.from(JSON.stringify(context)).toString('base64') } }),
    open: (sealed: string) => Buffer.from(sealed, 'base64'),
    heartbeat: async () => true,
    close: async () => undefined,
  } satisfies SensorAgent;
  return { agent, emitted };
}

async function sensorWith(context: GatewayContext, options: { now?: () => number } = {}) {
  const { agent, emitted } = recordingAgent(context);
  const sensor = buildGatewaySensor({ agent, logger, usage: createGatewayUsage(), allowPrivateTargets: true, ...options });
  built.push(sensor);
  await sensor.refresh();
  await sensor.app.ready();
  return { sensor, emitted };
}

const completion = (content: string, extra: Record<string, unknown> = {}) => ({ provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content }], max_tokens: 50, ...extra });

describe('the gateway sensor’s rate limits', () => {
  it('refuses a key past its plan’s burst with 429 RATE_LIMITED and Retry-After, as svc serve does, and counts each key apart', async () => {
    const fixed = Date.parse('2026-11-29T08:00:00.250Z');
    const { sensor } = await sensorWith(contextOf({ plan: 'community' }), { now: () => fixed });
    const send = (key: string) => sensor.app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers: { authorization: `Bearer ${key}` }, payload: {} });
    // The community row allows 10 requests in one second; an invalid body still counts, as under svc serve.
    const statuses: number[] = [];
    for (let index = 0; index < 10; index++) statuses.push((await send(KEY)).statusCode);
    expect(statuses).toEqual(Array.from({ length: 10 }, () => 400));
    const refused = await send(KEY);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe('RATE_LIMITED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.json().error.retry_after).toBe(Number(refused.headers['retry-after']));
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    // Another key of the org has its own count.
    const other = await send(OTHER_KEY);
    expect(other.statusCode).toBe(400);
    expect(other.headers['x-ratelimit-limit']).toBeDefined();
  });

  it('limits requests without a valid key per IP before answering AUTH_MISSING or AUTH_INVALID', async () => {
    const fixed = Date.parse('2026-11-29T08:00:00.250Z');
    const { sensor } = await sensorWith(contextOf({ plan: 'enterprise' }), { now: () => fixed });
    const codes: string[] = [];
    for (let index = 0; index < 11; index++) {
      const headers: Record<string, string> = index % 2 === 0 ? {} : { authorization: 'Bearer svc_org_gwsensor_not-a-key' };
      codes.push((await sensor.app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: completion('Say hello.') })).json().error.code as string);
    }
    expect(codes.slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, index) => (index % 2 === 0 ? 'AUTH_MISSING' : 'AUTH_INVALID')));
    expect(codes[10]).toBe('RATE_LIMITED');
  });
});

describe('the gateway sensor’s webhook events', () => {
  it('sends a budget warning to the collector as an event finding whose key every sensor of the org shares for the day', async () => {
    const keys: string[] = [];
    for (const _sensor of ['first', 'second']) {
      // 8 500 of the community plan's 10 000 daily tokens spent: the next completion crosses 80 %.
      const { sensor, emitted } = await sensorWith(contextOf({ plan: 'community', budget: { day: today(), tokens: 8_500, micro_usd: 0 } }));
      const answer = await sensor.app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers: { authorization: `Bearer ${KEY}` }, payload: completion('Say hello.') });
      expect(answer.statusCode).toBe(200);
      await sensor.gateway.settled();
      const events = emitted.filter((item) => item.data.kind === 'gateway_event');
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toMatchObject({ pillar: 'gateway', decision: 'log', patterns: [], details: { event: 'budget.warning', data: { budget: 'daily_tokens', limit: 10_000 } } });
      expect((events[0]!.data.details as { data: { used: number } }).data.used).toBeGreaterThanOrEqual(8_500);
      // Not a detection: the pushed severity threshold does not hold it back.
      expect(events[0]!.unfiltered).toBe(true);
      keys.push(events[0]!.idempotencyKey!);
    }
    expect(keys[0]).toBe(`gw-event:budget.warning:${ORG_ID}:${today()}`);
    expect(keys[1]).toBe(keys[0]);
  });
});

describe('the gateway sensor’s PII reports', () => {
  it('reports the redactions of a streamed completion as it reports a JSON one: kind pii, low, log, by type and count', async () => {
    const { sensor, emitted } = await sensorWith(contextOf({ plan: 'pro' }));
    for (const stream of [false, true]) {
      emitted.splice(0);
      openai.reset();
      const answer = await sensor.app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers: { authorization: `Bearer ${KEY}`, 'x-session-id': `session-${stream}` }, payload: completion('Write to bob@example.org about the invoice.', { stream }) });
      expect(answer.statusCode).toBe(200);
      if (stream) expect(answer.body).toContain('data: ');
      // Redacted before it left, in both forms.
      expect(openai.requests).toHaveLength(1);
      expect(JSON.stringify(openai.requests[0]!.body)).not.toContain('bob@example.org');
      const reports = emitted.filter((item) => item.data.kind === 'pii');
      expect(reports, stream ? 'streamed' : 'JSON').toHaveLength(1);
      expect(reports[0]!.correlationId).toBe(`session-${stream}`);
      expect(reports[0]!.data).toMatchObject({ pillar: 'gateway', severity: 'low', decision: 'log', patterns: [{ id: 'pii.email' }], details: { mode: 'redact', counts: { email: 1 } } });
      expect(JSON.stringify(reports[0]!.data)).not.toContain('bob@example.org');
    }
  });
});
