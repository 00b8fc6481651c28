import { describe, expect, it } from 'vitest';
import { spendZScore, SpendTracker } from '../../src/gateway/anomaly.ts';
import { BreakerRegistry, CircuitBreaker, type BreakerPolicy } from '../../src/gateway/breaker.ts';
import { BudgetLedger, estimatePromptTokens, dailyTokenBudget } from '../../src/gateway/budget.ts';
import { ClientCancel } from '../../src/gateway/cancel.ts';
import { backoffDelay, countsAgainstProvider, decideRetry, DEFAULT_RETRY_POLICY, sleep } from '../../src/gateway/retry.ts';
import { equivalentModel, LatencyWindows, modelClassOf, planRoute, type RouteInput } from '../../src/gateway/routing.ts';
import { createCache } from '../../src/platform/cache.ts';

const policy: BreakerPolicy = { windowMs: 10_000, minRequests: 4, failureRateThreshold: 0.5, openMs: 1_000, halfOpenMaxProbes: 2, halfOpenSuccesses: 2 };

describe('circuit breaker', () => {
  it('stays closed until the minimum number of requests is reached', () => {
    const breaker = new CircuitBreaker(policy);
    for (let index = 0; index < 3; index += 1) breaker.record(false, 100);
    expect(breaker.state(100)).toBe('closed');
    breaker.record(false, 100);
    expect(breaker.state(100)).toBe('open');
  });

  it('opens on the failure rate, not on isolated failures', () => {
    const breaker = new CircuitBreaker(policy);
    for (let index = 0; index < 10; index += 1) breaker.record(true, 0);
    for (let index = 0; index < 4; index += 1) breaker.record(false, 0);
    expect(breaker.state(0)).toBe('closed'); // 4/14 < 0.5
    for (let index = 0; index < 6; index += 1) breaker.record(false, 0);
    expect(breaker.state(0)).toBe('open'); // 10/20 >= 0.5
  });

  it('forgets failures that slid out of the window', () => {
    const breaker = new CircuitBreaker(policy);
    for (let index = 0; index < 3; index += 1) breaker.record(false, 0);
    breaker.record(false, 20_000);
    expect(breaker.state(20_000)).toBe('closed');
  });

  it('rejects while open, admits a bounded number of probes when half-open, and closes after enough successes', () => {
    const transitions: string[] = [];
    const breaker = new CircuitBreaker(policy, (from, to) => transitions.push(`${from}->${to}`));
    for (let index = 0; index < 4; index += 1) breaker.record(false, 0);
    expect(breaker.admit(500)).toBe('rejected');
    expect(breaker.admit(1_000)).toBe('probe');
    expect(breaker.admit(1_000)).toBe('probe');
    expect(breaker.admit(1_000)).toBe('rejected'); // both probe slots taken
    breaker.record(true, 1_010, true);
    expect(breaker.state(1_010)).toBe('half_open');
    breaker.record(true, 1_020, true);
    expect(breaker.state(1_020)).toBe('closed');
    expect(transitions).toEqual(['closed->open', 'open->half_open', 'half_open->closed']);
  });

  it('re-opens when a probe fails', () => {
    const breaker = new CircuitBreaker(policy);
    for (let index = 0; index < 4; index += 1) breaker.record(false, 0);
    expect(breaker.admit(1_000)).toBe('probe');
    breaker.record(false, 1_001, true);
    expect(breaker.state(1_001)).toBe('open');
    expect(breaker.admit(1_500)).toBe('rejected');
  });

  function sharedStore() {
    const strings = new Map<string, string>();
    const hashes = new Map<string, Map<string, string>>();
    const hash = (key: string) => hashes.get(key) ?? hashes.set(key, new Map()).get(key)!;
    const commands = {
      set: (key: string, value: string) => void strings.set(key, value),
      del: (key: string) => void strings.delete(key),
      hset: (key: string, field: string, value: string) => void hash(key).set(field, value),
      hdel: (key: string, field: string) => void hash(key).delete(field),
    };
    const fakeRedis = {
      multi() {
        const queued: Array<() => void> = [];
        const chain = {
          set: (key: string, value: string) => (queued.push(() => commands.set(key, value)), chain),
          del: (key: string) => (queued.push(() => commands.del(key)), chain),
          hset: (key: string, field: string, value: string) => (queued.push(() => commands.hset(key, field, value)), chain),
          hdel: (key: string, field: string) => (queued.push(() => commands.hdel(key, field)), chain),
          async exec() {
            for (const run of queued) run();
            return [];
          },
        };
        return chain;
      },
      async hgetall(key: string) {
        return Object.fromEntries(hash(key));
      },
    };
    return { strings, hashes, fakeRedis };
  }

  it('adopts an opening written by another replica', async () => {
    const { strings, fakeRedis } = sharedStore();
    let now = 0;
    const options = { policy, now: () => now, redis: () => fakeRedis as never, keyPrefix: 'p:' };
    const replicaA = new BreakerRegistry(options);
    const replicaB = new BreakerRegistry(options);
    replicaB.get('openai'); // B knows the provider
    for (let index = 0; index < 4; index += 1) replicaA.get('openai').record(false, now);
    await new Promise((resolve) => setImmediate(resolve));
    expect(strings.get('p:gw:breaker:openai')).toBe('1000');
    now = 10;
    await replicaB.sync();
    expect(replicaB.get('openai').state(now)).toBe('open');
  });

  it('adopts an opening for a provider this replica has never called, and forgets it once closed', async () => {
    const { hashes, fakeRedis } = sharedStore();
    let now = 0;
    const options = { policy, now: () => now, redis: () => fakeRedis as never, keyPrefix: 'p:' };
    const replicaA = new BreakerRegistry(options);
    const replicaB = new BreakerRegistry(options);
    for (let index = 0; index < 4; index += 1) replicaA.get('anthropic').record(false, now);
    await new Promise((resolve) => setImmediate(resolve));
    now = 10;
    await replicaB.sync();
    expect(replicaB.keys()).toContain('anthropic');
    expect(replicaB.get('anthropic').admit(now)).toBe('rejected');
    // A's probes succeed after the open time: A closes and the shared opening is withdrawn.
    now = 1_000;
    for (let index = 0; index < 4 && replicaA.get('anthropic').state(now) !== 'closed'; index += 1) {
      replicaA.get('anthropic').admit(now);
      replicaA.get('anthropic').record(true, now, true);
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(replicaA.get('anthropic').state(now)).toBe('closed');
    expect(hashes.get('p:gw:breakers-open')?.has('anthropic')).toBe(false);
  });
});

describe('client cancellation', () => {
  it('runs each abort listener once, skips removed ones and keeps none added after the abort', () => {
    const cancel = new ClientCancel();
    const calls: string[] = [];
    const removed = () => calls.push('removed');
    cancel.addEventListener('abort', () => calls.push('function'));
    cancel.addEventListener('abort', { handleEvent: () => calls.push('object') });
    cancel.addEventListener('abort', removed);
    cancel.removeEventListener('abort', removed);
    const reason = new Error('client disconnected');
    cancel.abort(reason);
    cancel.abort(new Error('again'));
    cancel.addEventListener('abort', () => calls.push('late'));
    expect(calls).toEqual(['function', 'object']);
    expect(cancel.aborted).toBe(true);
    expect(cancel.reason).toBe(reason);
  });

  it('wakes a retry back-off early with the reason', async () => {
    const cancel = new ClientCancel();
    const reason = new Error('client disconnected');
    const started = Date.now();
    const waiting = sleep(10_000, cancel);
    setTimeout(() => cancel.abort(reason), 20);
    await expect(waiting).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('retry decisions', () => {
  const policy = { ...DEFAULT_RETRY_POLICY, attemptsPerProvider: 3, baseDelayMs: 100, maxDelayMs: 1_000, totalBudgetMs: 5_000 };

  it('backs off exponentially with full jitter, capped', () => {
    expect(backoffDelay(1, policy, () => 1)).toBe(100);
    expect(backoffDelay(3, policy, () => 1)).toBe(400);
    expect(backoffDelay(10, policy, () => 1)).toBe(1_000);
    expect(backoffDelay(3, policy, () => 0.5)).toBe(200);
  });

  it('retries retryable failures, honours a short Retry-After, and fails over on long ones', () => {
    expect(decideRetry({ retryable: true, retryAfterMs: null }, 1, 0, policy, () => 1)).toEqual({ action: 'retry', delayMs: 100 });
    expect(decideRetry({ retryable: true, retryAfterMs: 700 }, 1, 0, policy)).toEqual({ action: 'retry', delayMs: 700 });
    expect(decideRetry({ retryable: true, retryAfterMs: 30_000 }, 1, 0, policy)).toEqual({ action: 'failover' });
  });

  it("does not let one org's rate limit or bad key count against the shared provider breaker", () => {
    expect(countsAgainstProvider({ code: 'rate_limited' })).toBe(false);
    expect(countsAgainstProvider({ code: 'auth' })).toBe(false);
    expect(countsAgainstProvider({ code: 'bad_request' })).toBe(false);
    expect(countsAgainstProvider({ code: 'overloaded' })).toBe(true);
    expect(countsAgainstProvider({ code: 'timeout' })).toBe(true);
  });

  it('fails over on non-retryable failures, after the last attempt and when the time budget is spent', () => {
    expect(decideRetry({ retryable: false, retryAfterMs: null }, 1, 0, policy)).toEqual({ action: 'failover' });
    expect(decideRetry({ retryable: true, retryAfterMs: null }, 3, 0, policy)).toEqual({ action: 'failover' });
    expect(decideRetry({ retryable: true, retryAfterMs: null }, 1, 4_950, policy, () => 1)).toEqual({ action: 'failover' });
  });
});

describe('routing', () => {
  const base: RouteInput = {
    provider: 'auto',
    model: 'fast',
    routing: { strategy: 'failover', providers: ['openai', 'anthropic', 'groq'], health_check_interval_s: 30 },
    isAvailable: () => true,
    latencyOf: () => null,
    priceOf: () => null,
    turn: 0,
  };
  const order = (input: Partial<RouteInput>) => planRoute({ ...base, ...input }).map((candidate) => `${candidate.provider}:${candidate.model}`);

  it('maps models through equivalence classes', () => {
    expect(modelClassOf('gpt-4o-mini')).toBe('fast');
    expect(modelClassOf('deepseek-reasoner')).toBe('reasoning');
    expect(equivalentModel('gpt-4o', 'openai', 'anthropic')).toBe('claude-sonnet-4-5');
    expect(equivalentModel('my-finetune', 'openai', 'anthropic')).toBeNull();
    expect(equivalentModel('my-finetune', 'openai', 'openai')).toBe('my-finetune');
  });

  it('keeps the failover order and puts unhealthy providers last', () => {
    expect(order({})).toEqual(['openai:gpt-4o-mini', 'anthropic:claude-3-5-haiku-latest', 'groq:llama-3.1-8b-instant']);
    expect(order({ isAvailable: (provider) => provider !== 'openai' })).toEqual(['anthropic:claude-3-5-haiku-latest', 'groq:llama-3.1-8b-instant', 'openai:gpt-4o-mini']);
  });

  it('rotates round_robin over healthy providers', () => {
    const firsts = [0, 1, 2, 3].map((turn) => order({ routing: { ...base.routing!, strategy: 'round_robin' }, turn })[0]);
    expect(firsts).toEqual(['openai:gpt-4o-mini', 'anthropic:claude-3-5-haiku-latest', 'groq:llama-3.1-8b-instant', 'openai:gpt-4o-mini']);
  });

  it('orders least-latency by the moving window and cost-optimized by price', () => {
    const latency: Record<string, number> = { openai: 300, anthropic: 100, groq: 200 };
    expect(order({ routing: { ...base.routing!, strategy: 'least-latency' }, latencyOf: (provider) => latency[provider] ?? null })[0]).toBe('anthropic:claude-3-5-haiku-latest');
    const price: Record<string, number> = { openai: 0.3, anthropic: 0.8, groq: 0.05 };
    expect(order({ routing: { ...base.routing!, strategy: 'cost-optimized' }, priceOf: (provider) => price[provider] ?? null })[0]).toBe('groq:llama-3.1-8b-instant');
  });

  it('tries an explicit provider first and fails over only to providers with an equivalent model', () => {
    expect(order({ provider: 'groq', model: 'llama-3.1-8b-instant' })).toEqual(['groq:llama-3.1-8b-instant', 'openai:gpt-4o-mini', 'anthropic:claude-3-5-haiku-latest']);
    expect(order({ provider: 'openai', model: 'ft:custom' })).toEqual(['openai:ft:custom']);
  });

  it('computes a moving mean over the last observations', () => {
    const windows = new LatencyWindows(3);
    for (const value of [100, 100, 100, 400, 400]) windows.observe('x', value);
    expect(windows.mean('x')).toBe(300);
    expect(windows.mean('y')).toBeNull();
  });
});

describe('budget ledger (memory path)', () => {
  it('reserves atomically, refuses beyond the limit and settles to the actual usage', async () => {
    const cache = createCache({ kind: 'memory' }, 'unit:');
    const ledger = new BudgetLedger(cache);
    const results = await Promise.all(Array.from({ length: 20 }, () => ledger.reserve('org', 1_000, 100, null, 0)));
    expect(results.filter((result) => result.ok)).toHaveLength(10);
    const first = results.find((result) => result.ok)!;
    if (!first.ok) throw new Error('unreachable');
    expect(await ledger.settle(first.reservation, 40, 0)).toBe(940);
    expect((await ledger.usage('org')).tokens).toBe(940);
    expect(await ledger.shouldWarn('org', 940, 1_000)).toBe(true);
    expect(await ledger.shouldWarn('org', 950, 1_000)).toBe(false); // once per day
    await cache.close();
  });

  it('refuses on the USD cap independently of tokens', async () => {
    const cache = createCache({ kind: 'memory' }, 'unit:');
    const ledger = new BudgetLedger(cache);
    expect((await ledger.reserve('org', 1_000_000, 10, 5_000, 4_000)).ok).toBe(true);
    const second = await ledger.reserve('org', 1_000_000, 10, 5_000, 4_000);
    expect(second.ok === false && second.budget).toBe('usd');
    expect((await ledger.usage('org')).tokens).toBe(10);
    await cache.close();
  });

  it('estimates prompts and maps plans to the spec budgets', () => {
    expect(estimatePromptTokens([{ content: 'x'.repeat(40) }])).toBe(14);
    expect([dailyTokenBudget('community'), dailyTokenBudget('starter'), dailyTokenBudget('pro'), dailyTokenBudget('enterprise')]).toEqual([10_000, 500_000, 5_000_000, 999_000_000]);
  });
});

describe('cost anomaly', () => {
  it('flags an hour far above a stable baseline and ignores noise and thin history', () => {
    const baseline = [100_000, 120_000, 90_000, 110_000, 100_000, 95_000, 105_000, 0, 0, 0];
    expect(spendZScore(1_000_000, baseline).anomalous).toBe(true);
    expect(spendZScore(130_000, baseline).anomalous).toBe(false);
    expect(spendZScore(1_000_000, [0, 0, 0, 200_000]).anomalous).toBe(false); // one active hour is no baseline
  });

  it('emits at most once per hour from the tracker', async () => {
    const cache = createCache({ kind: 'memory' }, 'unit:');
    let now = Date.UTC(2026, 0, 1, 12, 0, 0);
    const tracker = new SpendTracker(cache, () => now);
    for (let hour = 1; hour <= 24; hour += 1) cache.memory.incr(`unit:gw:spend:org:${Math.floor(now / 3_600_000) - hour}`, 60_000_000, 100_000 + (hour % 3) * 5_000);
    expect(await tracker.add('org', 2_000_000)).not.toBeNull();
    now += 61_000;
    expect(await tracker.add('org', 2_000_000)).toBeNull();
    await cache.close();
  });
});
