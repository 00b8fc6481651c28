/**
 * Sliding-window rate limiting, atomic in Redis (one Lua script) with the same algorithm in
 * memory for the embedded mode and for the fallback while Redis is unreachable.
 *
 * Algorithm: sliding-window counter. Each window of W ms keeps a counter for the current
 * fixed bucket and the previous one; the estimate is prev × (1 − elapsed/W) + current, which
 * tracks a true sliding log within a few percent at O(1) memory. A hit is admitted only if
 * every window admits it, and only then is it counted in all of them, so refused requests do
 * not consume quota. A window may carry a block duration: once it refuses, the identity is
 * refused for that long (the strict login and register tiers). An optional concurrency limit
 * counts requests in flight; `release()` gives the slot back.
 *
 * Across a Redis outage (docs/reliability.md, "Rate limits across a Redis outage"): while Redis
 * answers, every hit's window counts (current and previous bucket, as Redis returned them) and
 * blocks are mirrored in a bounded local map. When Redis becomes unreachable the memory limiter
 * starts from those mirrored counts instead of zero, and remembers what it adds. On the first
 * hit after Redis is back, one script per batch of keys adds the fallback period's increments to
 * Redis (INCRBY, so other replicas' counts are kept) and raises each counter to at least the
 * local count (so a Redis that lost its data gets the pre-outage counts back); blocks are
 * restored with their remaining time. The local copies are then dropped. Concurrency slots are
 * not carried over: in-flight counts are per process during an outage.
 */
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { Cache } from './cache.ts';
import { entryBound } from './lru.ts';

export interface WindowRule {
  /** Short name, reported when this window refuses (minute, day, burst, login…). */
  name: string;
  windowMs: number;
  limit: number;
  /** When set, a refusal blocks the identity for this long. */
  blockMs?: number;
}

export interface RateLimitPolicy {
  windows: readonly WindowRule[];
  /** Max requests in flight, 0 for none. */
  concurrency: number;
  /** Which window the X-RateLimit-* headers describe (by name). */
  headerWindow: string;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** The window the headers describe. */
  limit: number;
  remaining: number;
  /** Unix seconds at which that window's current bucket ends. */
  resetAt: number;
  /** Seconds to wait, when refused. */
  retryAfter: number;
  /** The window that refused ('concurrency' for the concurrency limit), or null. */
  refusedBy: string | null;
  /** Whether a concurrency slot was taken (release it when the request ends). */
  holdsSlot: boolean;
}

// KEYS: [block_1, cur_1, prev_1, block_2, cur_2, prev_2, …, concurrency_key]
// ARGV: [now_ms, n_windows, concurrency_limit, (window_ms, limit, block_ms) × n, header_index]
const SCRIPT = `
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local concurrency = tonumber(ARGV[3])
local header = tonumber(ARGV[4 + n * 3])
local refused = 0
local retry = 0
local estimates = {}
local counts = {}
for i = 1, n do
  counts[i * 2 - 1] = -1
  counts[i * 2] = -1
end
for i = 1, n do
  local w = tonumber(ARGV[1 + i * 3])
  local limit = tonumber(ARGV[2 + i * 3])
  local blocked = redis.call('PTTL', KEYS[i * 3 - 2])
  if blocked > 0 then
    if refused == 0 then refused = i; retry = blocked end
  else
    local elapsed = now % w
    local cur = tonumber(redis.call('GET', KEYS[i * 3 - 1]) or '0')
    local prev = tonumber(redis.call('GET', KEYS[i * 3]) or '0')
    local estimate = prev * (1 - elapsed / w) + cur
    estimates[i] = estimate
    counts[i * 2 - 1] = cur
    counts[i * 2] = prev
    if estimate + 1 > limit and refused == 0 then
      refused = i
      local block = tonumber(ARGV[3 + i * 3])
      if block > 0 then
        redis.call('SET', KEYS[i * 3 - 2], '1', 'PX', block)
        retry = block
      elseif cur + 1 > limit or prev == 0 then
        retry = w - elapsed
      else
        retry = math.ceil((estimate + 1 - limit) * w / prev)
        if retry > w - elapsed then retry = w - elapsed end
      end
    end
  end
end
local slot = 0
if refused == 0 and concurrency > 0 then
  local key = KEYS[n * 3 + 1]
  local inflight = redis.call('INCR', key)
  redis.call('PEXPIRE', key, 300000)
  if inflight > concurrency then
    redis.call('DECR', key)
    refused = -1
    retry = 1000
  else
    slot = 1
  end
end
if refused == 0 then
  for i = 1, n do
    local w = tonumber(ARGV[1 + i * 3])
    counts[i * 2 - 1] = redis.call('INCR', KEYS[i * 3 - 1])
    redis.call('PEXPIRE', KEYS[i * 3 - 1], w * 2)
    estimates[i] = (estimates[i] or 0) + 1
  end
end
local out = {refused, retry, math.floor(estimates[header] or 0), slot}
for i = 1, n * 2 do out[4 + i] = counts[i] end
return out
`;

// Recovery after a Redis outage. KEYS: counters and block keys; ARGV per key: kind ('c' counter,
// 'b' block), increment made during the outage, local value (the counter's floor), ttl ms.
const RECOVER_SCRIPT = `
for i = 1, #KEYS do
  local kind = ARGV[i * 4 - 3]
  local ttl = tonumber(ARGV[i * 4])
  if kind == 'b' then
    if redis.call('PTTL', KEYS[i]) < ttl then redis.call('SET', KEYS[i], '1', 'PX', ttl) end
  else
    local value = redis.call('INCRBY', KEYS[i], ARGV[i * 4 - 2])
    local floor = tonumber(ARGV[i * 4 - 1])
    if value < floor then redis.call('SET', KEYS[i], floor, 'PX', ttl) else redis.call('PEXPIRE', KEYS[i], ttl) end
  end
end
return #KEYS
`;

/** Most window counters mirrored from Redis (least recently used dropped first): bounds memory in Redis mode. */
const MIRROR_MAX_KEYS = 100_000;
/** Keys per recovery script call. */
const RECOVER_BATCH = 200;

export interface RateLimiter {
  hit(identity: string, policy: RateLimitPolicy, now?: number): Promise<RateLimitDecision>;
  /**
   * `hit` decided synchronously when it needs no Redis round trip (memory mode, or Redis
   * unreachable): the same decision `hit` would return; null when Redis must be asked (call `hit`).
   */
  hitNow(identity: string, policy: RateLimitPolicy, now?: number): RateLimitDecision | null;
  release(identity: string): Promise<void>;
  /** `release` done synchronously when it needs no Redis round trip; false when it must go to Redis (call `release`). */
  releaseNow(identity: string): boolean;
}

export function createRateLimiter(cache: Cache): RateLimiter {
  const prefix = `${cache.prefix}rl:`;
  const memory = cache.memory;
  // Outage carry-over (see the module comment); only when Redis is configured.
  const carryOver = cache.configured === 'redis';
  /** Last counts and blocks Redis reported, per key: value and expiry (ms since epoch). */
  const mirror = new LRUCache<string, { value: number; expiresAt: number }>(entryBound(MIRROR_MAX_KEYS));
  /** Keys the memory limiter seeded or wrote while Redis was unreachable, with what it added to each counter. */
  const outage = new Map<string, { kind: 'c' | 'b'; added: number }>();
  let recovering: Promise<void> | null = null;

  const remember = (key: string, value: number, ttlMs: number, now: number) => {
    const entry = mirror.get(key);
    if (entry !== undefined) {
      entry.value = value;
      entry.expiresAt = now + ttlMs;
      return;
    }
    mirror.set(key, { value, expiresAt: now + ttlMs });
  };

  /** Copies a mirrored value into memory the first time the outage limiter reads the key. */
  const seed = (key: string, kind: 'c' | 'b', now: number) => {
    if (outage.has(key)) return;
    outage.set(key, { kind, added: 0 });
    const entry = mirror.get(key);
    if (entry === undefined || entry.expiresAt <= now || memory.get(key, now) !== null) return;
    memory.set(key, kind === 'b' ? '1' : String(entry.value), entry.expiresAt - now, now);
  };

  /** Hands the outage's counts to Redis again (once; hits wait for it), then forgets the local copies. */
  const recover = (redis: Redis): Promise<void> => {
    recovering ??= (async () => {
      const now = Date.now();
      const entries = [...outage.entries()];
      for (let start = 0; start < entries.length; start += RECOVER_BATCH) {
        const keys: string[] = [];
        const args: (string | number)[] = [];
        for (const [key, { kind, added }] of entries.slice(start, start + RECOVER_BATCH)) {
          const ttl = memory.ttl(key, now);
          if (ttl <= 0) continue;
          keys.push(key);
          args.push(kind, added, Number(memory.get(key, now) ?? 0), Math.min(ttl, 2 ** 31 - 1));
        }
        if (keys.length > 0) await redis.eval(RECOVER_SCRIPT, keys.length, ...keys, ...args);
      }
      for (const [key] of entries) {
        memory.del(key);
        outage.delete(key);
      }
    })().finally(() => {
      recovering = null;
    });
    return recovering;
  };

  const keysFor = (identity: string, policy: RateLimitPolicy, now: number): string[] => {
    const keys: string[] = [];
    for (const window of policy.windows) {
      const bucket = Math.floor(now / window.windowMs);
      const base = `${prefix}${identity}:${window.name}`;
      keys.push(`${base}:block`, `${base}:${bucket}`, `${base}:${bucket - 1}`);
    }
    keys.push(`${prefix}${identity}:inflight`);
    return keys;
  };

  /** Policies are long-lived constants: the header window's index is found once per policy. */
  const headerIndexes = new WeakMap<RateLimitPolicy, number>();
  const headerIndex = (policy: RateLimitPolicy): number => {
    let index = headerIndexes.get(policy);
    if (index === undefined) {
      index = Math.max(0, policy.windows.findIndex((window) => window.name === policy.headerWindow));
      headerIndexes.set(policy, index);
    }
    return index;
  };

  const decide = (policy: RateLimitPolicy, now: number, refused: number, retryMs: number, estimate: number, slot: boolean): RateLimitDecision => {
    const refusing = refused > 0 ? policy.windows[refused - 1] : undefined;
    const refusedBy = refused === 0 ? null : refused === -1 ? 'concurrency' : (refusing?.name ?? 'unknown');
    const retryAfter = refused === 0 ? 0 : Math.max(1, Math.ceil(retryMs / 1000));
    if (refusing !== undefined) {
      // The headers describe the window that refused (a burst or daily limit, or a block), so
      // that Remaining is 0 and Reset agrees with Retry-After.
      return { allowed: false, limit: refusing.limit, remaining: 0, resetAt: Math.ceil(now / 1000) + retryAfter, retryAfter, refusedBy, holdsSlot: slot };
    }
    const window = policy.windows[headerIndex(policy)];
    const limit = window?.limit ?? 0;
    const windowMs = window?.windowMs ?? 60_000;
    return {
      allowed: refused === 0,
      limit,
      remaining: Math.max(0, Math.floor(limit - estimate)),
      resetAt: Math.ceil((Math.floor(now / windowMs) + 1) * windowMs / 1000),
      retryAfter,
      refusedBy,
      holdsSlot: slot,
    };
  };

  const hitMemory = (identity: string, policy: RateLimitPolicy, now: number): RateLimitDecision => {
    const keys = keysFor(identity, policy, now);
    let refused = 0;
    let retry = 0;
    const estimates: number[] = [];
    const windows = policy.windows;
    for (let index = 0; index < windows.length; index++) {
      const window = windows[index]!;
      const blockKey = keys[index * 3]!;
      const curKey = keys[index * 3 + 1]!;
      const prevKey = keys[index * 3 + 2]!;
      if (carryOver) {
        seed(blockKey, 'b', now);
        seed(curKey, 'c', now);
        seed(prevKey, 'c', now);
      }
      const blocked = memory.ttl(blockKey, now);
      if (blocked > 0) {
        if (refused === 0) {
          refused = index + 1;
          retry = blocked;
        }
        continue;
      }
      const elapsed = now % window.windowMs;
      const cur = memory.count(curKey, now);
      const prev = memory.count(prevKey, now);
      const estimate = prev * (1 - elapsed / window.windowMs) + cur;
      estimates[index] = estimate;
      if (estimate + 1 > window.limit && refused === 0) {
        refused = index + 1;
        if (window.blockMs) {
          memory.set(blockKey, '1', window.blockMs, now);
          retry = window.blockMs;
        } else if (cur + 1 > window.limit || prev === 0) {
          retry = window.windowMs - elapsed;
        } else {
          retry = Math.min(Math.ceil(((estimate + 1 - window.limit) * window.windowMs) / prev), window.windowMs - elapsed);
        }
      }
    }
    let slot = false;
    if (refused === 0 && policy.concurrency > 0) {
      const key = keys[keys.length - 1]!;
      const inflight = memory.incr(key, 300_000, 1, now);
      if (inflight > policy.concurrency) {
        memory.incr(key, 300_000, -1, now);
        refused = -1;
        retry = 1000;
      } else {
        slot = true;
      }
    }
    if (refused === 0) {
      for (let index = 0; index < windows.length; index++) {
        memory.incr(keys[index * 3 + 1]!, windows[index]!.windowMs * 2, 1, now);
        if (carryOver) outage.get(keys[index * 3 + 1]!)!.added += 1;
        estimates[index] = (estimates[index] ?? 0) + 1;
      }
    }
    return decide(policy, now, refused, retry, estimates[headerIndex(policy)] ?? 0, slot);
  };

  /** Gives an in-memory concurrency slot back (the memory path, and Redis's fallback). */
  const releaseMemory = (identity: string): void => {
    const key = `${prefix}${identity}:inflight`;
    if (memory.get(key) !== null) memory.incr(key, 300_000, -1);
  };

  return {
    async hit(identity, policy, now = Date.now()) {
      const redis = cache.redis();
      if (redis !== null) {
        try {
          if (outage.size > 0) await recover(redis);
          const args: (string | number)[] = [now, policy.windows.length, policy.concurrency];
          for (const window of policy.windows) args.push(window.windowMs, window.limit, window.blockMs ?? 0);
          args.push(headerIndex(policy) + 1);
          const keys = keysFor(identity, policy, now);
          const reply = (await redis.eval(SCRIPT, keys.length, ...keys, ...args)) as number[];
          const [refused = 0, retry = 0, estimate = 0, slot] = reply;
          policy.windows.forEach((window, index) => {
            const cur = reply[4 + index * 2] ?? -1;
            const prev = reply[5 + index * 2] ?? -1;
            if (cur >= 0) remember(keys[index * 3 + 1]!, cur, window.windowMs * 2, now);
            if (prev >= 0) remember(keys[index * 3 + 2]!, prev, window.windowMs, now);
          });
          const refusing = refused > 0 ? policy.windows[refused - 1] : undefined;
          if (refusing?.blockMs) remember(keys[(refused - 1) * 3]!, 1, retry, now);
          return decide(policy, now, refused, retry, estimate, slot === 1);
        } catch {
          // fall through to memory: the spec's in-memory fallback
        }
      }
      return hitMemory(identity, policy, now);
    },

    hitNow(identity, policy, now = Date.now()) {
      return cache.redis() === null ? hitMemory(identity, policy, now) : null;
    },

    releaseNow(identity) {
      if (cache.redis() !== null) return false;
      releaseMemory(identity);
      return true;
    },

    async release(identity) {
      const redis = cache.redis();
      if (redis !== null) {
        try {
          await redis.decr(`${prefix}${identity}:inflight`);
          return;
        } catch {
          // fall back to memory below
        }
      }
      releaseMemory(identity);
    },
  };
}
