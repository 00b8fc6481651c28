import { afterAll, describe, expect, it } from 'vitest';
import { createSessionStore, FRAGMENT_WINDOW_MS, MAX_FRAGMENTS } from '../../src/detection/session.ts';
import { createCache, type Cache } from '../../src/platform/cache.ts';
import { usingRedis } from '../helpers/app.ts';

// The same behaviour on the memory path (embedded mode) and, when REDIS_URL is set (CI), on Redis.
const targets: [string, () => Cache][] = [['memory', () => createCache({ kind: 'memory' }, `det-test:${Math.random()}:`)]];
if (usingRedis) targets.push(['redis', () => createCache({ kind: 'redis', url: process.env.REDIS_URL! }, `det-test:${Math.random()}:`)]);
else console.warn('[detection] REDIS_URL not set: session-store tests run on the memory path only');

describe.each(targets)('session store on %s', (_name, make) => {
  const cache = make();
  const store = createSessionStore(cache);
  afterAll(() => cache.close());

  const ready = async () => {
    for (let attempt = 0; attempt < 50 && cache.configured === 'redis' && cache.redis() === null; attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
  };

  it('counts the requests of a session', async () => {
    await ready();
    const session = `s-${Math.random()}`;
    expect(await store.count('org', session)).toBe(1);
    expect(await store.count('org', session)).toBe(2);
    expect(await store.count('other-org', session)).toBe(1);
  });

  it('returns the earlier fragments, oldest first, at most ten, within five minutes', async () => {
    await ready();
    const session = `s-${Math.random()}`;
    const now = Date.now();
    expect(await store.fragments('org', session, 'first', now)).toEqual([]);
    expect(await store.fragments('org', session, 'second', now + 1)).toEqual(['first']);
    for (let index = 0; index < 12; index++) await store.fragments('org', session, `f${index}`, now + 2 + index);
    const kept = await store.fragments('org', session, 'last', now + 20);
    expect(kept).toHaveLength(MAX_FRAGMENTS - 1);
    expect(kept.at(-1)).toBe('f11');
    const later = await store.fragments('org', session, 'much later', now + 20 + FRAGMENT_WINDOW_MS + 1);
    expect(later).toEqual([]);
  });
});
