/**
 * GET /api/v1/gateway/usage: cost and tokens by model per hour or day, kept per org (migration
 * 104), read through the public API with a read-scope key, against the fake upstreams.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type AppInstance } from '../../src/http/build-app.ts';
import { BUDGET_RETENTION_DAYS, startGatewayJobs, USAGE_PURGE_JOB, USAGE_RETENTION_DAYS, UsageHistory } from '../../src/gateway/index.ts';
import { createBudgetStore } from '../../src/gateway/budget.ts';
import { hourOf } from '../../src/gateway/usage-history.ts';
import { InProcessQueue } from '../../src/platform/queue.ts';
import type { Services } from '../../src/services.ts';
import { FAKE_CREDENTIALS, startFakeProvider, type FakeProvider } from '../fakes/providers/index.ts';
import { createTestServices } from '../helpers/app.ts';

let services: Services;
let app: AppInstance;
let openai: FakeProvider;
let anthropic: FakeProvider;

beforeAll(async () => {
  services = await createTestServices({ services: { gateway: { timers: false } } });
  app = await buildApp(services.config, services);
  await app.ready();
  [openai, anthropic] = await Promise.all([startFakeProvider('openai'), startFakeProvider('anthropic')]);
});

afterAll(async () => {
  await app?.close();
  await services?.close();
  await Promise.allSettled([openai?.close(), anthropic?.close()]);
});

async function orgWithFakes() {
  const { org, apiKey } = await services.accounts.createOrg({ name: `usage-${Math.random().toString(36).slice(2, 8)}` });
  await services.accounts.providerKeys.set(org.id, 'openai', FAKE_CREDENTIALS.default, openai.baseUrl);
  await services.accounts.providerKeys.set(org.id, 'anthropic', FAKE_CREDENTIALS.default, anthropic.baseUrl);
  return { orgId: org.id as string, headers: { authorization: `Bearer ${apiKey as string}` } };
}

async function complete(headers: Record<string, string>, provider: string, model: string) {
  const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: { provider, model, messages: [{ role: 'user', content: 'hello' }] } });
  expect(response.statusCode).toBe(200);
  return response.json() as { cost_usd: number | null; usage: { total_tokens: number } };
}

interface Bucket { start: string; provider: string; model: string; requests: number; total_tokens: number; cost_usd: number }

describe('AI gateway usage by model over time', () => {
  it('reports each model with its requests, tokens and cost in the current hour, and only the own org', async () => {
    const { orgId, headers } = await orgWithFakes();
    const readKey = (await services.accounts.createKey(orgId, { scope: 'read', keyClass: 'live' })).apiKey as string;
    const first = await complete(headers, 'openai', 'gpt-4o-mini');
    await complete(headers, 'openai', 'gpt-4o-mini');
    await complete(headers, 'anthropic', 'claude-3-5-haiku-latest');
    const other = await orgWithFakes();
    await complete(other.headers, 'openai', 'gpt-4o-mini');
    await services.gateway.settled();

    const response = await app.inject({ method: 'GET', url: '/api/v1/gateway/usage', headers: { authorization: `Bearer ${readKey}` } });
    expect(response.statusCode).toBe(200);
    const body = response.json() as { bucket: string; buckets: Bucket[]; budget: { tokens_used: number }; anomalies: unknown[] };
    expect(body.bucket).toBe('hour');
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString();
    const mini = body.buckets.find((row) => row.model === 'gpt-4o-mini');
    expect(mini).toMatchObject({ start: hour, provider: 'openai', requests: 2, total_tokens: 2 * first.usage.total_tokens });
    expect(mini!.cost_usd).toBeCloseTo(2 * (first.cost_usd ?? 0), 6);
    expect(body.buckets.find((row) => row.provider === 'anthropic')).toMatchObject({ requests: 1 });
    expect(body.buckets).toHaveLength(2);
    expect(body.budget.tokens_used).toBeGreaterThan(0);
    expect(body.anomalies).toEqual([]);

    const daily = (await app.inject({ method: 'GET', url: '/api/v1/gateway/usage?bucket=day', headers })).json() as { buckets: Bucket[] };
    expect(daily.buckets.find((row) => row.model === 'gpt-4o-mini')).toMatchObject({ start: `${hour.slice(0, 10)}T00:00:00.000Z`, requests: 2 });
  });

  it('keeps a cost anomaly raised in the current hour and lists it with its spend and baseline', async () => {
    const { orgId, headers } = await orgWithFakes();
    // A quiet day before ($0.001 an hour), then $0.06 already spent this hour: the next call's
    // settlement runs the spend check, which flags the hour.
    const { cache } = services;
    const hour = Math.floor(Date.now() / 3_600_000);
    // Where the spend tracker keeps its hourly counters: Redis when configured, else memory.
    const spend = async (at: number, microUsd: number) => {
      const key = `${cache.prefix}gw:spend:${orgId}:${at}`;
      const redis = cache.redis();
      if (redis === null) cache.memory.incr(key, 86_400_000, microUsd);
      else await redis.set(key, String(microUsd), 'PX', 86_400_000);
    };
    for (let back = 1; back <= 24; back += 1) await spend(hour - back, 1_000);
    await spend(hour, 60_000);
    await complete(headers, 'openai', 'gpt-4o-mini');
    await services.gateway.settled();
    const body = (await app.inject({ method: 'GET', url: '/api/v1/gateway/usage', headers })).json() as { anomalies: Array<{ hour_start: string; spend_usd: number; baseline_mean_usd: number; z_score: number }> };
    expect(body.anomalies).toHaveLength(1);
    expect(body.anomalies[0]).toMatchObject({ hour_start: new Date(hour * 3_600_000).toISOString(), baseline_mean_usd: 0.001 });
    expect(body.anomalies[0]!.spend_usd).toBeGreaterThan(0.06);
    expect(body.anomalies[0]!.z_score).toBeGreaterThan(3);
  });

  it('leaves out hours outside the requested range', async () => {
    const { headers } = await orgWithFakes();
    await complete(headers, 'openai', 'gpt-4o-mini');
    await services.gateway.settled();
    const to = new Date(Date.now() - 2 * 3_600_000).toISOString();
    const response = await app.inject({ method: 'GET', url: `/api/v1/gateway/usage?to=${encodeURIComponent(to)}`, headers });
    expect(response.statusCode).toBe(200);
    expect(response.json().buckets).toEqual([]);
  });

  it('refuses an empty, reversed or too long range and an unknown bucket with VALIDATION_FAILED', async () => {
    const { headers } = await orgWithFakes();
    const now = Date.now();
    const urls = [
      `/api/v1/gateway/usage?from=${new Date(now).toISOString()}&to=${new Date(now - 1_000).toISOString()}`,
      `/api/v1/gateway/usage?from=${new Date(now - 40 * 86_400_000).toISOString()}&to=${new Date(now).toISOString()}`,
      '/api/v1/gateway/usage?bucket=week',
      '/api/v1/gateway/usage?from=yesterday',
    ];
    for (const url of urls) {
      const response = await app.inject({ method: 'GET', url, headers });
      expect(response.statusCode, url).toBe(400);
      expect(response.json().error.code, url).toBe('VALIDATION_FAILED');
    }
  });
});

describe('usage retention', () => {
  it('deletes usage hours and cost anomalies older than the retention when the daily purge job runs, and keeps the rest', async () => {
    const { orgId } = await orgWithFakes();
    const readKey = (await services.accounts.createKey(orgId, { scope: 'read', keyClass: 'live' })).apiKey as string;
    const now = Date.now();
    const old = hourOf(now - (USAGE_RETENTION_DAYS + 2) * 86_400_000);
    const kept = hourOf(now - (USAGE_RETENTION_DAYS - 2) * 86_400_000);
    const row = { orgId, provider: 'openai', model: 'gpt-4o-mini', requests: 1, promptTokens: 10, completionTokens: 5, costUsd: 0.001 };
    await services.gateway.history.add([{ ...row, hour: old }, { ...row, hour: kept }]);
    const anomaly = { spendMicroUsd: 5_000_000, meanMicroUsd: 10_000, stddevMicroUsd: 1_000, z: 12 };
    await services.gateway.history.addAnomaly(orgId, { ...anomaly, hour: old });
    await services.gateway.history.addAnomaly(orgId, { ...anomaly, hour: kept });

    const queue = new InProcessQueue();
    const stop = startGatewayJobs({ history: new UsageHistory(services.db), queue, logger: services.logger });
    try {
      await queue.enqueue(USAGE_PURGE_JOB, {});
      await queue.idle();
    } finally {
      stop();
      await queue.close();
    }
    const hours = await services.db.query<{ hour: Date }>('SELECT hour FROM gateway_usage_hourly WHERE org_id = $1 ORDER BY hour', [orgId]);
    expect(hours.rows.map((entry) => new Date(entry.hour).toISOString())).toEqual([kept]);
    const anomalies = await services.db.query<{ hour: Date }>('SELECT hour FROM gateway_cost_anomalies WHERE org_id = $1 ORDER BY hour', [orgId]);
    expect(anomalies.rows.map((entry) => new Date(entry.hour).toISOString())).toEqual([kept]);
    // Read back through the API, the kept day is still there.
    const from = new Date(new Date(kept).getTime() - 86_400_000).toISOString();
    const to = new Date(new Date(kept).getTime() + 86_400_000).toISOString();
    const response = await app.inject({ method: 'GET', url: `/api/v1/gateway/usage?bucket=day&from=${from}&to=${to}`, headers: { authorization: `Bearer ${readKey}` } });
    expect((response.json() as { buckets: Bucket[] }).buckets.map((bucket) => bucket.requests)).toEqual([1]);
  });

  it('counts usage dated in the future (a clock running ahead, a bad import) in the current hour, where it ages out like any other', async () => {
    const { orgId } = await orgWithFakes();
    const now = Date.now();
    const current = hourOf(now);
    const ahead = hourOf(now + 3 * 86_400_000);
    const row = { orgId, provider: 'openai', model: 'gpt-4o-mini', requests: 1, promptTokens: 10, completionTokens: 5, costUsd: 0.001 };
    // Written through the history (as settlement and a sensor's report are): clamped on the way in.
    await services.gateway.history.add([{ ...row, hour: ahead }, { ...row, hour: current }], now);
    const stored = () => services.db.query<{ hour: Date; requests: string }>('SELECT hour, requests::text AS requests FROM gateway_usage_hourly WHERE org_id = $1 ORDER BY hour', [orgId]);
    expect((await stored()).rows.map((entry) => [new Date(entry.hour).toISOString(), entry.requests])).toEqual([[current, '2']]);
    // Already stored with a future date (before this was clamped, or by hand): the purge folds it in.
    await services.db.query(`INSERT INTO gateway_usage_hourly (org_id, hour, provider, model, requests, prompt_tokens, completion_tokens, cost_usd) VALUES ($1, $2, 'openai', 'gpt-4o-mini', 3, 30, 15, 0.003)`, [orgId, ahead]);
    await services.gateway.history.addAnomaly(orgId, { hour: ahead, spendMicroUsd: 5_000_000, meanMicroUsd: 10_000, stddevMicroUsd: 1_000, z: 12 });
    await new UsageHistory(services.db).purge(new Date(now));
    expect((await stored()).rows.map((entry) => [new Date(entry.hour).toISOString(), entry.requests])).toEqual([[current, '5']]);
    expect((await services.db.query('SELECT hour FROM gateway_cost_anomalies WHERE org_id = $1', [orgId])).rows).toEqual([]);
  });
  it('deletes daily budget counters older than their retention, folds future-dated ones into today, and keeps the rest', async () => {
    const { orgId } = await orgWithFakes();
    const now = Date.parse('2026-11-29T12:00:00.000Z');
    const dayOf = (offsetDays: number) => new Date(now + offsetDays * 86_400_000).toISOString().slice(0, 10);
    const rows: Array<[string, number]> = [[dayOf(-(BUDGET_RETENTION_DAYS + 1)), 1], [dayOf(-(BUDGET_RETENTION_DAYS - 1)), 2], [dayOf(0), 10], [dayOf(2), 100]];
    for (const [day, tokens] of rows) await services.db.query('INSERT INTO budget_usage (org_id, day, tokens, micro_usd) VALUES ($1, $2, $3, $4)', [orgId, day, tokens, tokens * 5]);
    await new UsageHistory(services.db).purge(new Date(now));
    const stored = await services.db.query<{ day: string; tokens: string; micro_usd: string }>('SELECT day::text AS day, tokens::text AS tokens, micro_usd::text AS micro_usd FROM budget_usage WHERE org_id = $1 ORDER BY day', [orgId]);
    expect(stored.rows.map((row) => [row.day, row.tokens, row.micro_usd])).toEqual([[dayOf(-(BUDGET_RETENTION_DAYS - 1)), '2', '10'], [dayOf(0), '110', '550']]);
  });
});

describe('usage counters written by several workers at once', () => {
  // Each worker adds its batch in one statement. Two batches that share keys in opposite orders
  // each held a row the other wanted: PostgreSQL rolled one back with "deadlock detected" (seen
  // with WORKERS=4), and those requests' usage was never counted. Every count must arrive.
  const KEYS = 120;
  const WRITERS = 8;
  const ROUNDS = 4;

  it('counts every batch of hourly usage when concurrent batches share keys in opposite orders', async () => {
    const { orgId } = await orgWithFakes();
    const hour = hourOf(Date.now());
    const history = new UsageHistory(services.db);
    const rows = Array.from({ length: KEYS }, (_, index) => ({ orgId, hour, provider: 'openai', model: `model-${String(index).padStart(3, '0')}`, requests: 1, promptTokens: 2, completionTokens: 1, costUsd: 0.001 }));
    await history.add(rows);
    for (let round = 0; round < ROUNDS; round++) {
      const outcomes = await Promise.allSettled(Array.from({ length: WRITERS }, (_, writer) => history.add(writer % 2 === 0 ? rows : [...rows].reverse())));
      expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
    }
    const stored = await services.db.query<{ requests: string; count: string }>('SELECT requests::text AS requests, count(*)::text AS count FROM gateway_usage_hourly WHERE org_id = $1 GROUP BY requests', [orgId]);
    expect(stored.rows).toEqual([{ requests: String(1 + WRITERS * ROUNDS), count: String(KEYS) }]);
  });

  it('counts every batch of daily budget usage when concurrent batches share keys in opposite orders', async () => {
    const { orgId } = await orgWithFakes();
    const store = createBudgetStore(services.db);
    const rows = Array.from({ length: KEYS }, (_, index) => ({ orgId, day: new Date(Date.UTC(2026, 0, 1) + index * 86_400_000).toISOString().slice(0, 10), tokens: 10, microUsd: 5 }));
    await store.add(rows);
    for (let round = 0; round < ROUNDS; round++) {
      const outcomes = await Promise.allSettled(Array.from({ length: WRITERS }, (_, writer) => store.add(writer % 2 === 0 ? rows : [...rows].reverse())));
      expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
    }
    const stored = await services.db.query<{ tokens: string; count: string }>('SELECT tokens::text AS tokens, count(*)::text AS count FROM budget_usage WHERE org_id = $1 GROUP BY tokens', [orgId]);
    expect(stored.rows).toEqual([{ tokens: String(10 * (1 + WRITERS * ROUNDS)), count: String(KEYS) }]);
  });
});
