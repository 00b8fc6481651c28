import { MemoryStore, type Cache } from '../../src/platform/cache.ts';

/** The memory cache exactly as embedded mode uses it (Redis absent), for engine-level tests. */
export function memoryCache(): Cache {
  const memory = new MemoryStore();
  return {
    configured: 'memory', prefix: 'test:', memory, mode: () => 'memory', redis: () => null,
    get: async (key) => memory.get(key), set: async (key, value, ttl) => memory.set(key, value, ttl),
    setIfAbsent: async (key, value, ttl) => memory.setIfAbsent(key, value, ttl), del: async (key) => memory.del(key),
    incr: async (key, ttl) => memory.incr(key, ttl), ping: async () => 0, close: async () => memory.close(),
  };
}
