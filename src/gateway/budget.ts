/**
 * Daily token budgets by plan and an optional daily USD cap per org.
 *
 * Posture: reserve before the upstream call, settle after it. `reserve` atomically checks that
 * used + estimate stays within the limit and adds the estimate in one step (a Lua script on
 * Redis, a synchronous check-and-add in memory), so N concurrent requests can never together
 * pass a limit that each alone would fit. `settle` replaces the estimate with the actual usage
 * (or releases it when the call failed). Counters are per UTC day and expire after two days.
 * The estimate of a request is its prompt (characters / 4, rounded up, plus 4 per message) plus
 * its max_tokens (DEFAULT_COMPLETION_RESERVE when absent): the only way to end above the limit
 * is a completion longer than the reserve of a request that set no max_tokens, or a prompt the
 * estimate undercounts. Test-class keys are not counted (the caller skips budgets for them).
 *
 * Durability: with Redis the counters live there. With the in-memory cache (the embedded
 * default, or PostgreSQL without Redis) they would die with the process, so the ledger is given
 * a `BudgetStore` (table budget_usage): every change made in memory is also kept as an unsaved
 * delta per org and day, `persist()` adds the deltas to the table (about once a second and at
 * shutdown), and the first budget operation after a start adds the table's totals for today and
 * yesterday to memory. What a crash can lose is the last second of settlements; an estimate
 * reserved by a request still in flight at the crash stays counted (over, never under).
 */
import type { Database } from '../platform/db/index.ts';
import { utcDay } from '../platform/time.ts';
import { redisIncrBy, type Cache } from '../platform/cache.ts';

export const DAILY_TOKEN_BUDGETS: Readonly<Record<string, number>> = {
  free: 10_000,
  community: 10_000,
  starter: 500_000,
  pro: 5_000_000,
  enterprise: 999_000_000,
};

export const DEFAULT_COMPLETION_RESERVE = 1_024;
export const WARNING_RATIO = 0.8;
const DAY_MS = 86_400_000;
const COUNTER_TTL_MS = 2 * DAY_MS;

export function dailyTokenBudget(plan: string): number {
  return DAILY_TOKEN_BUDGETS[plan] ?? DAILY_TOKEN_BUDGETS.community!;
}

/** Rough token count of a prompt: ceil(characters / 4) + 4 per message (role and framing). */
export function estimatePromptTokens(messages: ReadonlyArray<{ content: string }>): number {
  let characters = 0;
  for (const message of messages) characters += message.content.length;
  return Math.ceil(characters / 4) + 4 * messages.length;
}


export interface Reservation {
  orgId: string;
  day: string;
  tokens: number;
  /** Micro-dollars reserved against the USD cap (0 when no cap). */
  microUsd: number;
}

export type ReserveOutcome =
  | { ok: true; reservation: Reservation; usedTokens: number }
  | { ok: false; budget: 'tokens' | 'usd'; limit: number; used: number; resetAt: string };

// KEYS[1] tokens counter, KEYS[2] micro-USD counter; ARGV: token limit, tokens, usd limit (-1 none), micro-usd, ttl ms.
const RESERVE_SCRIPT = `
local tokensUsed = tonumber(redis.call('GET', KEYS[1]) or '0')
local tokenLimit = tonumber(ARGV[1])
local tokens = tonumber(ARGV[2])
if tokensUsed + tokens > tokenLimit then return {0, 'tokens', tokensUsed} end
local usdLimit = tonumber(ARGV[3])
local microUsd = tonumber(ARGV[4])
if usdLimit >= 0 then
  local usdUsed = tonumber(redis.call('GET', KEYS[2]) or '0')
  if usdUsed + microUsd > usdLimit then return {0, 'usd', usdUsed} end
  redis.call('INCRBY', KEYS[2], microUsd)
  redis.call('PEXPIRE', KEYS[2], ARGV[5])
end
local after = redis.call('INCRBY', KEYS[1], tokens)
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {1, 'ok', after}
`;

/** What settling a reservation at the actual usage adds to the token and micro-USD counters. */
export function settlementDelta(reservation: Reservation, actualTokens: number, actualMicroUsd: number): { tokens: number; microUsd: number } {
  return {
    tokens: actualTokens - reservation.tokens,
    microUsd: reservation.microUsd === 0 && actualMicroUsd === 0 ? 0 : actualMicroUsd - reservation.microUsd,
  };
}

/** One org's usage of one UTC day, or a change to it. */
export interface BudgetUsageRow {
  orgId: string;
  day: string;
  tokens: number;
  microUsd: number;
}

/** Where memory-mode budget counters are kept across restarts. */
export interface BudgetStore {
  /** Totals of the given days (YYYY-MM-DD), every org. */
  load(days: readonly string[]): Promise<BudgetUsageRow[]>;
  /** Adds each row's tokens and micro-dollars to the stored totals (one statement). */
  add(rows: readonly BudgetUsageRow[]): Promise<void>;
}

/** The budget_usage table (migration 040), written and read on the owner connection (system work across orgs). */
export function createBudgetStore(db: Database): BudgetStore {
  return {
    async load(days) {
      const result = await db.query<{ org_id: string; day: string; tokens: number; micro_usd: number }>(
        `SELECT org_id, day::text AS day, tokens, micro_usd FROM budget_usage WHERE day = ANY($1::date[])`,
        [days],
      );
      return result.rows.map((row) => ({ orgId: row.org_id, day: row.day, tokens: Number(row.tokens), microUsd: Number(row.micro_usd) }));
    },
    async add(rows) {
      if (rows.length === 0) return;
      // In key order, as UsageHistory.add: concurrent workers' batches then never deadlock.
      await db.query(
        `INSERT INTO budget_usage (org_id, day, tokens, micro_usd)
         SELECT org_id, day, tokens, micro_usd FROM jsonb_to_recordset($1::jsonb) AS r(org_id uuid, day date, tokens bigint, micro_usd bigint)
          ORDER BY org_id, day
         ON CONFLICT (org_id, day) DO UPDATE
           SET tokens = budget_usage.tokens + excluded.tokens, micro_usd = budget_usage.micro_usd + excluded.micro_usd, updated_at = now()`,
        [JSON.stringify(rows.map((row) => ({ org_id: row.orgId, day: row.day, tokens: row.tokens, micro_usd: row.microUsd })))],
      );
    },
  };
}

export class BudgetLedger {
  /** Memory changes not yet in the store, per `${orgId} ${day}` (memory-only caches with a store). */
  private readonly unsaved = new Map<string, BudgetUsageRow>();
  /** Resolves once the store's totals are in memory; null until the first budget operation (or after a failed load). */
  private loaded: Promise<void> | null = null;
  private persisting: Promise<void> | null = null;

  constructor(
    private readonly cache: Cache,
    private readonly now: () => number = Date.now,
    /** Persistence for memory-only caches; ignored when the cache is configured with Redis. */
    private readonly store: BudgetStore | null = null,
  ) {
    if (cache.configured === 'redis') this.store = null;
  }

  /** Adds the store's totals of today and yesterday to memory, once (again after a failure). */
  private restore(): Promise<void> | null {
    if (this.store === null) return null;
    this.loaded ??= (async () => {
      const now = this.now();
      const days = [utcDay(now), utcDay(now - DAY_MS)];
      try {
        for (const row of await this.store!.load(days)) {
          const [tokenKey, usdKey] = this.keys(row.orgId, row.day);
          if (row.tokens !== 0) this.cache.memory.incr(tokenKey, COUNTER_TTL_MS, row.tokens);
          if (row.microUsd !== 0) this.cache.memory.incr(usdKey, COUNTER_TTL_MS, row.microUsd);
        }
      } catch {
        this.loaded = null; // the database is away: counted from memory until a later load works
      }
    })();
    return this.loaded;
  }

  /** Notes a change made to the memory counters, to be added to the store by persist(). */
  private remember(orgId: string, day: string, tokens: number, microUsd: number): void {
    if (this.store === null || (tokens === 0 && microUsd === 0)) return;
    const key = `${orgId} ${day}`;
    const row = this.unsaved.get(key);
    if (row === undefined) this.unsaved.set(key, { orgId, day, tokens, microUsd });
    else {
      row.tokens += tokens;
      row.microUsd += microUsd;
    }
  }

  /** Writes the unsaved changes to the store (kept for the next try when it fails). */
  async persist(): Promise<void> {
    if (this.store === null) return;
    while (this.persisting !== null) await this.persisting;
    if (this.unsaved.size === 0) return;
    const rows = [...this.unsaved.values()];
    this.unsaved.clear();
    const store = this.store;
    this.persisting = store.add(rows).catch(async (error: unknown) => {
      // One row the database refuses (an org deleted meanwhile, a value out of range) must not
      // hold back every other org's usage: the rows are tried one by one, and only those that
      // fail alone are kept for the next try.
      if (rows.length === 1) {
        this.remember(rows[0]!.orgId, rows[0]!.day, rows[0]!.tokens, rows[0]!.microUsd);
        throw error;
      }
      let failed: unknown = null;
      for (const row of rows) {
        await store.add([row]).catch((rowError: unknown) => {
          failed = rowError;
          this.remember(row.orgId, row.day, row.tokens, row.microUsd);
        });
      }
      if (failed !== null) throw failed;
    });
    try {
      await this.persisting;
    } finally {
      this.persisting = null;
    }
  }

  private keys(orgId: string, day: string): [string, string] {
    const base = `${this.cache.prefix}gw:budget:${orgId}:${day}`;
    return [`${base}:tokens`, `${base}:usd`];
  }

  /**
   * Reserves `tokens` (and `microUsd` when `microUsdLimit` is not null) for today.
   * Fails without reserving anything when either limit would be passed.
   */
  async reserve(orgId: string, tokenLimit: number, tokens: number, microUsdLimit: number | null, microUsd: number): Promise<ReserveOutcome> {
    const now = this.now();
    const day = utcDay(now);
    const [tokenKey, usdKey] = this.keys(orgId, day);
    // Only a refusal names it: not formatted on every reservation.
    const resetAt = () => new Date(Math.floor(now / DAY_MS) * DAY_MS + DAY_MS).toISOString();
    const redis = this.cache.redis();
    if (redis !== null) {
      try {
        const [ok, which, used] = (await redis.eval(RESERVE_SCRIPT, 2, tokenKey, usdKey, tokenLimit, tokens, microUsdLimit ?? -1, microUsd, COUNTER_TTL_MS)) as [number, string, number];
        if (ok === 1) return { ok: true, reservation: { orgId, day, tokens, microUsd: microUsdLimit === null ? 0 : microUsd }, usedTokens: Number(used) };
        return which === 'usd'
          ? { ok: false, budget: 'usd', limit: microUsdLimit ?? 0, used: Number(used), resetAt: resetAt() }
          : { ok: false, budget: 'tokens', limit: tokenLimit, used: Number(used), resetAt: resetAt() };
      } catch {
        // Redis went away between the check and the call: fall through to memory.
      }
    }
    const loading = this.restore();
    if (loading !== null) await loading;
    const memory = this.cache.memory;
    const tokensUsed = Number(memory.get(tokenKey) ?? '0');
    if (tokensUsed + tokens > tokenLimit) return { ok: false, budget: 'tokens', limit: tokenLimit, used: tokensUsed, resetAt: resetAt() };
    if (microUsdLimit !== null) {
      const usdUsed = Number(memory.get(usdKey) ?? '0');
      if (usdUsed + microUsd > microUsdLimit) return { ok: false, budget: 'usd', limit: microUsdLimit, used: usdUsed, resetAt: resetAt() };
      memory.incr(usdKey, COUNTER_TTL_MS, microUsd);
    }
    const after = memory.incr(tokenKey, COUNTER_TTL_MS, tokens);
    this.remember(orgId, day, tokens, microUsdLimit === null ? 0 : microUsd);
    return { ok: true, reservation: { orgId, day, tokens, microUsd: microUsdLimit === null ? 0 : microUsd }, usedTokens: after };
  }

  /** Replaces a reservation by the actual usage (0 and 0 when the call failed); returns tokens used today after settling. */
  async settle(reservation: Reservation, actualTokens: number, actualMicroUsd: number): Promise<number> {
    const delta = settlementDelta(reservation, actualTokens, actualMicroUsd);
    return this.adjust(reservation.orgId, reservation.day, delta.tokens, delta.microUsd);
  }

  /** Adds (signed) deltas to one org's counters of `day` (a later day than today: today's); returns tokens used that day after it. */
  async adjust(orgId: string, requestedDay: string, tokenDelta: number, usdDelta: number): Promise<number> {
    // A day after the current one (a sensor's clock running ahead) is counted in the current day:
    // a future day's counter would be read by no budget until that day, and then start it spent.
    const today = utcDay(this.now());
    const day = requestedDay > today ? today : requestedDay;
    const [tokenKey, usdKey] = this.keys(orgId, day);
    const redis = this.cache.redis();
    if (redis !== null) {
      try {
        const tokens = await redisIncrBy(redis, tokenKey, tokenDelta, COUNTER_TTL_MS, true);
        // Tokens are settled; a failed USD settle must not send the tokens through memory again.
        if (usdDelta !== 0) await redisIncrBy(redis, usdKey, usdDelta, COUNTER_TTL_MS, true).catch(() => undefined);
        return tokens;
      } catch {
        // fall through to memory
      }
    }
    const loading = this.restore();
    if (loading !== null) await loading;
    const memory = this.cache.memory;
    if (usdDelta !== 0) memory.incr(usdKey, COUNTER_TTL_MS, usdDelta);
    this.remember(orgId, day, tokenDelta, usdDelta);
    return memory.incr(tokenKey, COUNTER_TTL_MS, tokenDelta);
  }

  /**
   * Sets one org's memory counters of `day` to totals learnt elsewhere (a gateway sensor: the
   * collector's count, plus what the sensor has not reported yet). Memory only; nothing is
   * remembered for the store.
   */
  rebase(orgId: string, day: string, tokens: number, microUsd: number): void {
    const [tokenKey, usdKey] = this.keys(orgId, day);
    const memory = this.cache.memory;
    memory.incr(tokenKey, COUNTER_TTL_MS, tokens - memory.count(tokenKey));
    memory.incr(usdKey, COUNTER_TTL_MS, microUsd - memory.count(usdKey));
  }

  /** Today's usage: tokens and micro-dollars. */
  async usage(orgId: string): Promise<{ day: string; tokens: number; microUsd: number }> {
    const day = utcDay(this.now());
    const [tokenKey, usdKey] = this.keys(orgId, day);
    const loading = this.restore();
    if (loading !== null) await loading;
    const [tokens, microUsd] = await Promise.all([this.read(tokenKey), this.read(usdKey)]);
    return { day, tokens, microUsd };
  }

  private async read(key: string): Promise<number> {
    const redis = this.cache.redis();
    if (redis !== null) {
      try {
        return Number((await redis.get(key)) ?? '0');
      } catch {
        // fall through
      }
    }
    return Number(this.cache.memory.get(key) ?? '0');
  }

  /** True once per org and day: the first caller after usage crossed WARNING_RATIO of the limit. */
  async shouldWarn(orgId: string, usedTokens: number, tokenLimit: number): Promise<boolean> {
    if (usedTokens < tokenLimit * WARNING_RATIO) return false;
    return this.cache.setIfAbsent(`${this.cache.prefix}gw:budget-warned:${orgId}:${utcDay(this.now())}`, '1', COUNTER_TTL_MS);
  }
}
