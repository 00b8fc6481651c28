import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cache } from '../../platform/cache.ts';
import { createCache } from '../../platform/cache.ts';
import type { Anomaly, BehaviourBaseline, BehaviourResult } from './index.ts';
import { createBehaviourBaseline } from './index.ts';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const START = Date.UTC(2026, 0, 5); // a Monday, 00:00 UTC
const countries: Record<string, string> = { '203.0.113.200': 'DE' };
const lookupCountry = (ip: string) => countries[ip] ?? 'US';
const redisUrl = process.env.REDIS_URL;

/** Two days of steady office-hours traffic: 3 requests a minute, 08:00–16:00 UTC, 40 US clients. */
async function steadyBaseline(baseline: BehaviourBaseline, endpoint: string): Promise<void> {
  let client = 0;
  for (let day = 0; day < 2; day += 1) {
    for (let minute = 8 * 60; minute < 16 * 60; minute += 1) {
      for (let request = 0; request < 3; request += 1) {
        client = (client + 1) % 40;
        await baseline.observe({ endpoint, ip: `198.51.100.${client}`, at: START + day * DAY + minute * MINUTE + request * 15_000 });
      }
    }
  }
}

const engines: Array<[string, () => Cache, boolean]> = [
  ['memory', () => createCache({ kind: 'memory' }, `test-t5-${process.pid}:`), false],
  ['redis', () => createCache({ kind: 'redis', url: redisUrl ?? 'redis://127.0.0.1:1' }, `test-t5-${process.pid}-${Date.now()}:`), redisUrl === undefined],
];
// eslint-disable-next-line no-console -- a visible notice that a variant is skipped
if (redisUrl === undefined) console.warn('REDIS_URL not set: the Redis variant of the T5 baseline tests is skipped');

describe.each(engines)('T5 behavioural baseline on %s', (engine, makeCache, skip) => {
  let cache: Cache;
  let baseline: BehaviourBaseline;
  const day3 = START + 2 * DAY;

  beforeAll(async () => {
    if (skip) return;
    cache = makeCache();
    if (engine === 'redis') {
      for (let attempt = 0; attempt < 50 && cache.redis() === null; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(cache.redis()).not.toBeNull();
    }
    baseline = createBehaviourBaseline(cache, { lookupCountry });
    await steadyBaseline(baseline, '/api/orders');
  }, 120_000);

  afterAll(async () => {
    if (skip) return;
    const client = cache.redis();
    if (client !== null) {
      const keys = await client.keys(`${cache.prefix}*`);
      if (keys.length > 0) await client.del(...keys);
    }
    await cache.close();
  });

  it.skipIf(skip)('finds nothing unusual in a request that matches the baseline', async () => {
    const result = await baseline.observe({ endpoint: '/api/orders', ip: '198.51.100.7', at: day3 + 10 * 60 * MINUTE });
    expect(result.anomalies).toEqual([]);
    expect(result.score).toBe(0);
  });

  it.skipIf(skip)('flags a burst of requests as a rate anomaly', async () => {
    let last: BehaviourResult = { score: 0, anomalies: [] as Anomaly[] };
    for (let request = 0; request < 60; request += 1) {
      last = await baseline.observe({ endpoint: '/api/orders', ip: `198.51.100.${request % 40}`, at: day3 + 11 * 60 * MINUTE + request * 500 });
    }
    const rate = last.anomalies.find((anomaly) => anomaly.kind === 'rate');
    expect(rate?.zScore).toBeGreaterThanOrEqual(3);
    expect(last.score).toBeGreaterThan(0.5);
  });

  it.skipIf(skip)('flags a country never seen for the endpoint', async () => {
    const result = await baseline.observe({ endpoint: '/api/orders', ip: '203.0.113.200', at: day3 + 13 * 60 * MINUTE });
    expect(result.anomalies.map((anomaly) => anomaly.kind)).toContain('geo');
    const normal = await baseline.observe({ endpoint: '/api/orders', ip: '198.51.100.3', at: day3 + 13 * 60 * MINUTE + 20_000 });
    expect(normal.anomalies.map((anomaly) => anomaly.kind)).not.toContain('geo');
  });

  it.skipIf(skip)('flags a 3 am spike on an endpoint that is quiet at night', async () => {
    let last: BehaviourResult = { score: 0, anomalies: [] as Anomaly[] };
    for (let request = 0; request < 8; request += 1) {
      last = await baseline.observe({ endpoint: '/api/orders', ip: `198.51.100.${request}`, at: day3 + 24 * 60 * MINUTE + 3 * 60 * MINUTE + request * 5_000 });
    }
    expect(last.anomalies.map((anomaly) => anomaly.kind)).toContain('time_of_day');
  });

  it.skipIf(skip)('flags credential stuffing: many usernames failing from one IP, and one username from many IPs', async () => {
    const login = '/api/login';
    const at = day3 + 9 * 60 * MINUTE;
    for (let user = 0; user < 60; user += 1) {
      await baseline.observe({ endpoint: login, ip: `192.0.2.${user}`, at: at + user * 10_000, username: `user${user}@example.com`, loginFailed: user % 10 === 0 });
    }
    let stuffing: BehaviourResult = { score: 0, anomalies: [] };
    for (let attempt = 0; attempt < 25; attempt += 1) {
      stuffing = await baseline.observe({ endpoint: login, ip: '192.0.2.250', at: at + 11 * MINUTE + attempt * 2_000, username: `victim${attempt}@example.com`, loginFailed: true });
    }
    expect(stuffing.anomalies.find((anomaly) => anomaly.kind === 'credential_stuffing')?.zScore).toBeGreaterThanOrEqual(3);

    let spraying: BehaviourResult = { score: 0, anomalies: [] };
    for (let source = 0; source < 25; source += 1) {
      spraying = await baseline.observe({ endpoint: login, ip: `100.64.0.${source}`, at: at + 12 * MINUTE + source * 2_000, username: 'ceo@example.com', loginFailed: true });
    }
    expect(spraying.anomalies.find((anomaly) => anomaly.kind === 'credential_stuffing')?.detail).toContain('IPs');
  });
});

describe('T5 geography with geoip-lite', () => {
  it('uses geoip-lite by default and flags a country absent from the baseline', async () => {
    const cache = createCache({ kind: 'memory' }, 'test-t5-geo:');
    const baseline = createBehaviourBaseline(cache);
    for (let request = 0; request < 1_000; request += 1) await baseline.observe({ endpoint: '/x', ip: '8.8.8.8', at: START + request * 1_000 });
    const result = await baseline.observe({ endpoint: '/x', ip: '81.2.69.142', at: START + 1_001_000 });
    expect(result.anomalies.find((anomaly) => anomaly.kind === 'geo')?.detail).toContain('GB');
    await cache.close();
  });
});
