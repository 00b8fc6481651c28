import fc from 'fast-check';
import { LRUCache } from 'lru-cache';
import { describe, expect, it } from 'vitest';
import { entryBound } from './lru.ts';

describe('entry-bounded LRU caches', () => {
  it('keep and evict exactly the entries a cache bounded by max keeps and evicts', () => {
    const operation = fc.oneof(
      fc.record({ op: fc.constant('set' as const), key: fc.integer({ min: 0, max: 40 }), value: fc.integer() }),
      fc.record({ op: fc.constant('get' as const), key: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ op: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 40 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 16 }), fc.array(operation, { maxLength: 300 }), (bound, operations) => {
        const byMax = new LRUCache<number, number>({ max: bound });
        const byEntries = new LRUCache<number, number>(entryBound(bound));
        for (const step of operations) {
          if (step.op === 'set') {
            byMax.set(step.key, step.value);
            byEntries.set(step.key, step.value);
          } else if (step.op === 'get') {
            expect(byEntries.get(step.key)).toBe(byMax.get(step.key));
          } else {
            expect(byEntries.delete(step.key)).toBe(byMax.delete(step.key));
          }
          expect(byEntries.size).toBeLessThanOrEqual(bound);
        }
        // Same entries, same recency order (most recent first).
        expect([...byEntries.entries()]).toEqual([...byMax.entries()]);
      }),
    );
  });

  it('cost almost nothing before their first entry (a max-bounded cache of 100,000 preallocates megabytes)', () => {
    const allocated = (build: () => unknown): number => {
      const before = process.memoryUsage();
      const caches = Array.from({ length: 20 }, build);
      const after = process.memoryUsage();
      expect(caches).toHaveLength(20);
      return after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers);
    };
    const preallocated = allocated(() => new LRUCache<string, number>({ max: 100_000, ttl: 60_000 }));
    const lazy = allocated(() => new LRUCache<string, number>({ ...entryBound(100_000), ttl: 60_000 }));
    // 20 × 100,000 slots: keys, values, TTLs and starts are 8 bytes a slot, links 4: ~70 MB.
    expect(preallocated).toBeGreaterThan(40 * 1_048_576);
    expect(lazy).toBeLessThan(4 * 1_048_576);
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => entryBound(0)).toThrow(RangeError);
    expect(() => entryBound(1.5)).toThrow(RangeError);
  });
});
