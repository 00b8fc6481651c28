/**
 * The entry bound of an lru-cache that costs memory only as entries arrive.
 *
 * lru-cache sizes its bookkeeping for `max` when the cache is built: key and value arrays of
 * `max` slots (8 bytes each), the links and the free list as typed arrays, and, once a TTL or a
 * size is used, two more arrays of `max` numbers. A cache of 100,000 entries with a TTL holds
 * about 4 MB before its first entry, and svc builds a few dozen such caches (rate-limit mirrors,
 * sessions, key caches, behaviour states): about 40 MB of the embedded server's heap at start
 * was these empty slots, and V8 sizes the heap's next collection limit as a multiple of what is
 * live, so the peak under load paid for them again (docs/benchmarks.md, "Memory breakdown").
 *
 * Bounding the count through `maxSize` with every entry weighing 1 keeps the same bound and the
 * same least-recently-used eviction (the least recently used entry leaves when a new one would
 * make `entries + 1`), but lru-cache then grows ordinary arrays with the entries instead of
 * preallocating. Use it in place of `max` wherever the bound is a count:
 * `new LRUCache<K, V>({ ...entryBound(100_000), ttl })`. A cache that already bounds by a size
 * of its own (characters, bytes) keeps its `max`.
 */
export function entryBound(entries: number): { readonly maxSize: number; readonly sizeCalculation: () => number } {
  if (!Number.isInteger(entries) || entries < 1) throw new RangeError(`an LRU bound must be a positive integer, got ${entries}`);
  return { maxSize: entries, sizeCalculation: () => 1 };
}
