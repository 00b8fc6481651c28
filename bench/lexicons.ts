/**
 * `npm run bench -- lexicons` (issue #39 item 6): the PII name lexicons as the server keeps them
 * (packed WordSets, src/gateway/pii/word-set.ts) beside the same words in `Set<string>` (what the
 * server kept before), in the same run: the heap each retains (after a full collection) and the
 * time of one membership test, over words sliced fresh from a text as the name pass does (half of
 * them in the lexicon, half not, in title case and lower case).
 */
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { loadPiiLexicons } from '../src/gateway/index.ts';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

function heapUsedMb(): number {
  collect();
  collect();
  return process.memoryUsage().heapUsed / 1_048_576;
}

type Lookup = { has(word: string): boolean };

/** Nanoseconds per look-up of every word of `probes`, the best of `rounds` passes. */
function timeLookups(lexicon: Lookup, probes: string[], rounds: number): { ns: number; hits: number } {
  let best = Infinity;
  let hits = 0;
  for (let round = 0; round < rounds; round += 1) {
    hits = 0;
    const started = process.hrtime.bigint();
    for (const probe of probes) if (lexicon.has(probe)) hits += 1;
    best = Math.min(best, Number(process.hrtime.bigint() - started) / probes.length);
  }
  return { ns: Math.round(best * 10) / 10, hits };
}

export async function runLexiconsBench(options: { quick?: boolean } = {}): Promise<object> {
  const rounds = options.quick === true ? 3 : 7;
  const before = heapUsedMb();
  const packed = loadPiiLexicons();
  const packedMb = heapUsedMb() - before;
  const words = (lexicon: unknown) => [...(lexicon as Iterable<string>)];
  const lists = { names: words(packed.names), common: words(packed.common), places: words(packed.places), companies: words(packed.companies), wellKnown: words(packed.wellKnown) };
  const beforeSets = heapUsedMb();
  // Each word copied into a string of its own, as the lines of the package files were.
  const sets = Object.fromEntries(Object.entries(lists).map(([name, list]) => [name, new Set(list.map((word) => ` ${word}`.slice(1)))])) as Record<keyof typeof lists, Set<string>>;
  const setsMb = heapUsedMb() - beforeSets;
  // Probes: words of the lexicon and as many that are not, each sliced out of one text (a fresh
  // string with no cached hash, as the name pass hands them over).
  const sample = lists.names.filter((_, index) => index % 7 === 0).slice(0, 20_000);
  const misses = sample.map((word) => `${word}q`);
  const lower = sample.map((word) => word.toLowerCase());
  const text = [...sample, ...misses, ...lower].join(' ');
  const probes = text.split(' ').map((word) => ` ${word}`.slice(1));
  const lookups: Record<string, object> = {};
  for (const name of ['names', 'common', 'wellKnown'] as const) {
    const packedTime = timeLookups(packed[name], probes, rounds);
    const setTime = timeLookups(sets[name], probes, rounds);
    if (packedTime.hits !== setTime.hits) throw new Error(`${name}: the packed lexicon found ${packedTime.hits} words, the Set ${setTime.hits}`);
    lookups[name] = { ns_per_lookup_packed: packedTime.ns, ns_per_lookup_set: setTime.ns, hits: packedTime.hits, probes: probes.length };
  }
  return {
    words: Object.fromEntries(Object.entries(lists).map(([name, list]) => [name, list.length])),
    heap_retained_mb: { packed_all_lexicons: Math.round(packedMb * 10) / 10, as_sets_five_large_lexicons: Math.round(setsMb * 10) / 10 },
    lookups,
  };
}
