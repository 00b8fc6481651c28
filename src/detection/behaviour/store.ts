/**
 * The state storage every T5 baseline uses: small JSON records, one per key, advanced in place
 * by a pure step function. The endpoint/IP baselines of protected gateways (`baseline.ts`) and
 * the subject profiles of AI-gateway completions and MCP calls (`profiles.ts`) share it.
 *
 * Posture: same semantics on Redis and in memory. In memory every update is a synchronous
 * read-modify-write (atomic on the event loop). On Redis, replicas share the records and an
 * update is a compare-and-set in Lua (the write happens only if the stored record is still the
 * one that was read), retried a few times; after that the observation is scored but not stored,
 * which under-counts rather than corrupts. Without Redis (or while it is down) the records live
 * in this process as objects in bounded LRUs, one per kind of record, with the same expiry as
 * their Redis keys (so a flood of one kind cannot evict another).
 */
import { LRUCache } from 'lru-cache';
import type { Redis } from 'ioredis';
import type { Cache } from '../../platform/cache.ts';
import { entryBound } from '../../platform/lru.ts';

const CAS_ATTEMPTS = 5;

const CAS_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if (current == false and ARGV[1] == '') or current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0`;

/** One kind of record: how long it lives and how many stay in memory without Redis. */
export interface StateKind {
  readonly ttlMs: number;
  readonly memoryEntries: number;
}

export interface StateStore<K extends string> {
  /**
   * Read-modify-write of one record. `step` mutates the parsed state (or a fresh one) and
   * returns what the caller needs from it; it must be pure apart from the state it is given.
   * Synchronous (a plain value) on the in-process path, a promise on Redis: await only what is a
   * promise, so the in-process path costs no extra event-loop turn.
   */
  update<S extends object, R>(kind: K, id: string, fresh: () => S, step: (state: S) => R): R | Promise<R>;
}

export function createStateStore<K extends string>(cache: Cache, namespace: string, kinds: Readonly<Record<K, StateKind>>): StateStore<K> {
  const memory = {} as Record<K, LRUCache<string, object>>;
  for (const kind of Object.keys(kinds) as K[]) {
    const { ttlMs, memoryEntries } = kinds[kind];
    memory[kind] = new LRUCache<string, object>({ ...entryBound(Math.max(1, memoryEntries)), ttl: ttlMs, ttlAutopurge: false });
  }
  return {
    update<S extends object, R>(kind: K, id: string, fresh: () => S, step: (state: S) => R): R | Promise<R> {
      const states = memory[kind] as unknown as LRUCache<string, S>;
      const client: Redis | null = cache.redis();
      if (client === null) return updateMemory(states, id, fresh, step);
      const cacheKey = `${cache.prefix}${namespace}:${kind}:${id}`;
      const ttl = String(kinds[kind].ttlMs);
      return (async () => {
        try {
          let result: R | undefined;
          for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt += 1) {
            const stored = await client.get(cacheKey);
            const state = stored === null ? fresh() : (JSON.parse(stored) as S);
            result = step(state);
            const written = (await client.eval(CAS_SCRIPT, 1, cacheKey, stored ?? '', JSON.stringify(state), ttl)) as number;
            if (written === 1) return result;
          }
          return result as R;
        } catch {
          // Fall through to memory, as the cache itself does when Redis fails.
          return updateMemory(states, id, fresh, step);
        }
      })();
    },
  };
}

function updateMemory<S extends object, R>(states: LRUCache<string, S>, id: string, fresh: () => S, step: (state: S) => R): R {
  let state = states.get(id);
  if (state === undefined) {
    state = fresh();
    states.set(id, state);
  }
  // The state is advanced in place; its expiry is renewed as a Redis SET with PX would renew it.
  const result = step(state);
  states.set(id, state);
  return result;
}
