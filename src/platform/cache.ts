/**
 * The key-value cache: Redis (ioredis) when REDIS_URL is redis://, memory otherwise.
 *
 * Fallback posture: when Redis is configured but unreachable, every operation is served from
 * process memory instead of failing the request (the spec's in-memory fallback), `mode()`
 * reports 'fallback' so /health/redis can say so, and Redis is used again as soon as ioredis
 * has reconnected. State written during the outage stays local to the replica: limits and
 * sessions are per replica until Redis returns, which is the documented trade-off.
 */
import { Redis } from 'ioredis';
import type { CacheTarget } from './config.ts';

export type CacheMode = 'redis' | 'memory' | 'fallback';

const INCRBY_SCRIPT = `
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if ARGV[3] == '1' or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return value`;

/**
 * INCRBY with an expiry as ONE command (a Lua script). Not MULTI: when the connection drops,
 * ioredis rejects each queued MULTI command's own promise, which nobody awaits — unhandled
 * rejections. `refresh` renews the TTL on every call; otherwise it is set when the key is created.
 */
export async function redisIncrBy(client: Redis, key: string, amount: number, ttlMs: number, refresh = false): Promise<number> {
  return Number(await client.eval(INCRBY_SCRIPT, 1, key, amount, ttlMs, refresh ? '1' : '0'));
}

export interface Cache {
  readonly configured: 'redis' | 'memory';
  readonly prefix: string;
  mode(): CacheMode;
  /** The Redis client while it is connected, else null (callers then use the memory path). */
  redis(): Redis | null;
  /** The memory store (always present: it is the fallback). */
  readonly memory: MemoryStore;
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Sets only when absent; true when it was set (de-duplication, locks). */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  del(key: string): Promise<void>;
  /** Increments and returns the new value; the TTL is set when the key is created. */
  incr(key: string, ttlMs: number): Promise<number>;
  /** Round trip to the engine in seconds, or null when Redis is configured but unreachable. */
  ping(): Promise<number | null>;
  close(): Promise<void>;
}

/** A small in-memory store with expiry, the same semantics as the Redis commands used. */
export class MemoryStore {
  /** Counters written by `incr` are kept as numbers (no string round trip per increment); `get` gives them as strings. */
  private readonly values = new Map<string, { value: string | number; expiresAt: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(sweepEveryMs = 30_000) {
    this.sweeper = setInterval(() => this.sweep(), sweepEveryMs);
    this.sweeper.unref();
  }

  get(key: string, now = Date.now()): string | null {
    const entry = this.values.get(key);
    if (entry === undefined) return null;
    if (entry.expiresAt <= now) {
      this.values.delete(key);
      return null;
    }
    const value = entry.value;
    return typeof value === 'string' ? value : String(value);
  }

  /** The number under `key` (what `Number(get(key) ?? 0)` gives), without the string round trip: 0 when absent. */
  count(key: string, now = Date.now()): number {
    const entry = this.values.get(key);
    if (entry === undefined) return 0;
    if (entry.expiresAt <= now) {
      this.values.delete(key);
      return 0;
    }
    const value = entry.value;
    return typeof value === 'number' ? value : Number(value);
  }

  set(key: string, value: string, ttlMs?: number, now = Date.now()): void {
    this.values.set(key, { value, expiresAt: ttlMs === undefined ? Number.POSITIVE_INFINITY : now + ttlMs });
  }

  setIfAbsent(key: string, value: string, ttlMs: number, now = Date.now()): boolean {
    if (this.get(key, now) !== null) return false;
    this.set(key, value, ttlMs, now);
    return true;
  }

  del(key: string): void {
    this.values.delete(key);
  }

  incr(key: string, ttlMs: number, by = 1, now = Date.now()): number {
    const entry = this.values.get(key);
    if (entry === undefined || entry.expiresAt <= now) {
      this.values.set(key, { value: by, expiresAt: now + ttlMs });
      return by;
    }
    const next = (typeof entry.value === 'number' ? entry.value : Number(entry.value)) + by;
    entry.value = next;
    return next;
  }

  /** Milliseconds to expiry, -1 when absent. */
  ttl(key: string, now = Date.now()): number {
    const entry = this.values.get(key);
    if (entry === undefined || entry.expiresAt <= now) return -1;
    return entry.expiresAt === Number.POSITIVE_INFINITY ? Number.MAX_SAFE_INTEGER : entry.expiresAt - now;
  }

  get size(): number {
    return this.values.size;
  }

  sweep(now = Date.now()): void {
    for (const [key, entry] of this.values) if (entry.expiresAt <= now) this.values.delete(key);
  }

  close(): void {
    clearInterval(this.sweeper);
    this.values.clear();
  }
}

export function createCache(target: CacheTarget, prefix: string): Cache {
  const memory = new MemoryStore();
  if (target.kind === 'memory') return new MemoryCache(memory, prefix);
  const client = new Redis(target.url, {
    // Fail fast while disconnected so the caller falls back instead of queueing behind an outage.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: 1_000,
    retryStrategy: (attempt) => Math.min(100 * attempt, 2_000),
    lazyConnect: false,
  });
  client.on('error', () => undefined); // reconnection is automatic; mode() reports the state
  return new RedisCache(client, memory, prefix);
}

class MemoryCache implements Cache {
  readonly configured = 'memory' as const;
  constructor(
    readonly memory: MemoryStore,
    readonly prefix: string,
  ) {}
  mode(): CacheMode {
    return 'memory';
  }
  redis(): null {
    return null;
  }
  async get(key: string) {
    return this.memory.get(key);
  }
  async set(key: string, value: string, ttlMs?: number) {
    this.memory.set(key, value, ttlMs);
  }
  async setIfAbsent(key: string, value: string, ttlMs: number) {
    return this.memory.setIfAbsent(key, value, ttlMs);
  }
  async del(key: string) {
    this.memory.del(key);
  }
  async incr(key: string, ttlMs: number) {
    return this.memory.incr(key, ttlMs);
  }
  async ping() {
    return 0;
  }
  async close() {
    this.memory.close();
  }
}

class RedisCache implements Cache {
  readonly configured = 'redis' as const;
  constructor(
    private readonly client: Redis,
    readonly memory: MemoryStore,
    readonly prefix: string,
  ) {}

  mode(): CacheMode {
    return this.client.status === 'ready' ? 'redis' : 'fallback';
  }

  redis(): Redis | null {
    return this.client.status === 'ready' ? this.client : null;
  }

  /** Runs on Redis when connected, else (or when the command fails) on memory. */
  private async either<T>(onRedis: (client: Redis) => Promise<T>, onMemory: () => T): Promise<T> {
    const client = this.redis();
    if (client === null) return onMemory();
    try {
      return await onRedis(client);
    } catch {
      return onMemory();
    }
  }

  get(key: string) {
    return this.either((client) => client.get(key), () => this.memory.get(key));
  }

  set(key: string, value: string, ttlMs?: number) {
    return this.either(
      async (client) => {
        if (ttlMs === undefined) await client.set(key, value);
        else await client.set(key, value, 'PX', ttlMs);
      },
      () => this.memory.set(key, value, ttlMs),
    );
  }

  setIfAbsent(key: string, value: string, ttlMs: number) {
    return this.either(
      async (client) => (await client.set(key, value, 'PX', ttlMs, 'NX')) === 'OK',
      () => this.memory.setIfAbsent(key, value, ttlMs),
    );
  }

  del(key: string) {
    return this.either(
      async (client) => {
        await client.del(key);
      },
      () => this.memory.del(key),
    );
  }

  incr(key: string, ttlMs: number) {
    return this.either(
      (client) => redisIncrBy(client, key, 1, ttlMs),
      () => this.memory.incr(key, ttlMs),
    );
  }

  async ping(): Promise<number | null> {
    const client = this.redis();
    if (client === null) return null;
    const started = process.hrtime.bigint();
    try {
      await client.ping();
      return Number(process.hrtime.bigint() - started) / 1e9;
    } catch {
      return null;
    }
  }

  async close(): Promise<void> {
    this.memory.close();
    this.client.disconnect();
  }
}
