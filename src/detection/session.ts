/**
 * Session state shared across replicas through the cache: the request counter of an
 * X-Session-ID and its recent fragments (the spec's fragment store: 5-minute sliding window,
 * at most 10 fragments). Redis path: one Lua script per operation (atomic); memory path: the
 * same semantics on the MemoryStore, used in embedded mode and during a Redis outage.
 * Posture: fragments hold user text for at most 5 minutes, bounded to 2 KB each.
 */
import type { Cache } from '../platform/cache.ts';

export const SESSION_TTL_MS = 30 * 60_000;
export const FRAGMENT_WINDOW_MS = 5 * 60_000;
export const MAX_FRAGMENTS = 10;
export const MAX_FRAGMENT_CHARS = 2_048;

// KEYS[1] list; ARGV: now, window, max, entry. Appends, drops old/excess entries, returns the rest.
const FRAGMENT_SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('RPUSH', KEYS[1], ARGV[4])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[3]), -1)
redis.call('PEXPIRE', KEYS[1], window)
local items = redis.call('LRANGE', KEYS[1], 0, -1)
local kept = {}
for _, item in ipairs(items) do
  local sep = string.find(item, '|', 1, true)
  if sep and tonumber(string.sub(item, 1, sep - 1)) >= now - window then table.insert(kept, item) end
end
return kept
`;

interface Fragment {
  readonly at: number;
  readonly text: string;
}

function key(cache: Cache, kind: string, orgId: string, sessionId: string): string {
  return `${cache.prefix}det:${kind}:${orgId}:${sessionId}`;
}

export interface SessionStore {
  /** Counts this request and returns the session's request count (1 for the first). */
  count(orgId: string, sessionId: string): Promise<number>;
  /** Stores this fragment and returns the earlier fragments still in the window, oldest first. */
  fragments(orgId: string, sessionId: string, text: string, now?: number): Promise<string[]>;
}

export function createSessionStore(cache: Cache): SessionStore {
  return {
    count: (orgId, sessionId) => cache.incr(key(cache, 'sess', orgId, sessionId), SESSION_TTL_MS),
    async fragments(orgId, sessionId, text, now = Date.now()) {
      const entry = `${now}|${text.slice(0, MAX_FRAGMENT_CHARS)}`;
      const listKey = key(cache, 'frag', orgId, sessionId);
      const redis = cache.redis();
      if (redis !== null) {
        try {
          const items = (await redis.eval(FRAGMENT_SCRIPT, 1, listKey, String(now), String(FRAGMENT_WINDOW_MS), String(MAX_FRAGMENTS), entry)) as string[];
          return items.slice(0, -1).map((item) => item.slice(item.indexOf('|') + 1));
        } catch {
          // fall through to memory, like the cache itself
        }
      }
      const stored = cache.memory.get(listKey, now);
      const list: Fragment[] = stored === null ? [] : (JSON.parse(stored) as Fragment[]);
      const kept = list.filter((fragment) => fragment.at >= now - FRAGMENT_WINDOW_MS);
      kept.push({ at: now, text: entry.slice(entry.indexOf('|') + 1) });
      const bounded = kept.slice(-MAX_FRAGMENTS);
      cache.memory.set(listKey, JSON.stringify(bounded), FRAGMENT_WINDOW_MS, now);
      return bounded.slice(0, -1).map((fragment) => fragment.text);
    },
  };
}
