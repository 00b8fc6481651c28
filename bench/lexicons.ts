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

/** One pass over `probes`: nanoseconds per look-up and the words found. */
function pass(lexicon: Lookup, probes: string[]): { ns: number; hits: number } {
  let hits = 0;
  const started = process.hrtime.bigint();
  for (const probe of probes) if (lexicon.has(probe)) hits += 1;
  return { ns: Number(process.hrtime.bigint() - started) / probes.length, hits };
}

/**
 * Nanoseconds per look-up of the packed lexicon and of the Set, passes interleaved (so both see
 * the same moments of a shared machine), the best pass of each over `rounds`.
 */
function timeLookups(packed: Lookup, set: Lookup, probes: string[], rounds: number): { packed: number; set: number; hits: number } {
  let bestPacked = Infinity;
  let bestSet = Infinity;
  let hits = 0;
  for (let round = 0; round < rounds; round += 1) {
    const onPacked = pass(packed, probes);
    const onSet = pass(set, probes);
    if (onPacked.hits !== onSet.hits) throw new Error(`the packed lexicon found ${onPacked.hits} words, the Set ${onSet.hits}`);
    hits = onPacked.hits;
    bestPacked = Math.min(bestPacked, onPacked.ns);
    bestSet = Math.min(bestSet, onSet.ns);
  }
  return { packed: Math.round(bestPacked * 10) / 10, set: Math.round(bestSet * 10) / 10, hits };
}

export async function runLexiconsBench(options: { quick?: boolean } = {}): Promise<object> {
  const rounds = options.quick === true ? 10 : 40;
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
    const timed = timeLookups(packed[name], sets[name], probes, rounds);
    lookups[name] = { ns_per_lookup_packed: timed.packed, ns_per_lookup_set: timed.set, hits: timed.hits, probes: probes.length };
  }
  return {
    words: Object.fromEntries(Object.entries(lists).map(([name, list]) => [name, list.length])),
    heap_retained_mb: { packed_all_lexicons: Math.round(packedMb * 10) / 10, as_sets_five_large_lexicons: Math.round(setsMb * 10) / 10 },
    lookups,
  };
}
