/**
 * T1: the pattern catalogue matched on every normalized variant. Pure and synchronous. A cheap
 * literal prefilter (one Aho–Corasick pass over all pattern keywords) decides which regular
 * expressions run at all, so the common clean input costs one linear scan per variant. Input is
 * bounded by normalization (64 KB); every pattern is linear-time (checked by a test).
 */
import type { CandidateScan, CompiledCatalogue, CompiledGap, CompiledPattern, LiteralHits, Sequence, WindowStarts } from '../catalogue/index.ts';
import type { Normalized } from '../normalize/index.ts';
import type { Finding, InspectKind, Verdict } from '../types.ts';
import { combineFindings } from '../score.ts';

export interface T1Result {
  readonly score: number;
  readonly findings: readonly Finding[];
}

/**
 * End offsets of every (non-overlapping, leftmost) match of a global regex: `test` advances
 * lastIndex to each match's end without allocating a match object.
 */
function matchEnds(regex: RegExp, text: string): number[] {
  const ends: number[] = [];
  regex.lastIndex = 0;
  while (regex.test(text)) {
    const end = regex.lastIndex;
    // An empty match leaves lastIndex where it was: step past it.
    if (ends.length > 0 && ends[ends.length - 1] === end) regex.lastIndex++;
    else ends.push(end);
    if (regex.lastIndex > text.length) break;
  }
  return ends;
}

/**
 * The same ends as matchEnds, found by trying the part's sticky copy only at the offsets where
 * a match can start (a prefix literal occurs there): the leftmost match at or after the end of
 * the previous one is the first offset where the sticky attempt succeeds. Prefixes are never
 * empty, so neither is a match.
 */
function stickyEnds(sticky: RegExp, text: string, starts: readonly number[]): number[] {
  const ends: number[] = [];
  let from = 0;
  for (const start of starts) {
    if (start < from) continue;
    sticky.lastIndex = start;
    if (sticky.test(text)) ends.push((from = sticky.lastIndex));
  }
  return ends;
}

/**
 * Whether the part matches anywhere: trying only the listed offsets when there are any, else
 * each top-level alternative only inside its literal windows when they are known (the part
 * matches at an offset exactly when one of its alternatives does), else scanning the text.
 */
function anyMatch(regex: RegExp, sticky: RegExp | null, text: string, starts: readonly number[] | null, windows: readonly WindowStarts[] | null = null): boolean {
  if ((starts === null || sticky === null) && windows !== null) {
    for (const window of windows) {
      // Windows come in ascending order of their ends; offsets before `tried` were tried.
      let tried = 0;
      for (let index = 0; index < window.from.length; index++) {
        const to = window.to[index]!;
        for (let start = Math.max(tried, window.from[index]!); start <= to; start++) {
          window.sticky.lastIndex = start;
          if (window.sticky.test(text)) return true;
        }
        if (to + 1 > tried) tried = to + 1;
      }
    }
    return false;
  }
  if (starts === null || sticky === null) {
    regex.lastIndex = 0;
    return regex.test(text);
  }
  for (const start of starts) {
    sticky.lastIndex = start;
    if (sticky.test(text)) return true;
  }
  return false;
}

function isExcluded(text: string, index: number, gap: CompiledGap): boolean {
  const code = text.charCodeAt(index);
  return code < 128 ? gap.asciiExcluded[code] === 1 : gap.excludedRegex.test(text[index]!);
}

/**
 * Linear-time match of a sequence part0 ⟪gap⟫ part1 ⟪gap⟫ …: each part is scanned at most once
 * (the first over the whole text, later ones only where they can connect); a match of part i+1
 * is reachable when the nearest reachable end of part i before it is at most gap.max characters
 * away with no excluded character in between. The gap itself is read only where a candidate pair
 * needs it, at most gap.max characters per reachable end.
 */
export function matchPattern(pattern: CompiledPattern, text: string, hits?: LiteralHits): boolean {
  return pattern.sequences.some((sequence) => matchSequence(sequence, text, hits));
}

/** Whether every part between the first and the last is tried only at its listed offsets. */
function middlesSparse(pattern: Sequence, hits: LiteralHits): boolean {
  for (let index = 1; index < pattern.parts.length - 1; index++) {
    if (pattern.sticky[index] === null || pattern.sticky[index] === undefined || hits.startsOf(pattern, index) === null) return false;
  }
  return true;
}

function matchSequence(pattern: Sequence, text: string, hits: LiteralHits | undefined): boolean {
  const parts = pattern.parts;
  const first = parts[0];
  if (first === undefined) return false;
  const startsOf = (index: number) => (hits === undefined ? null : hits.startsOf(pattern, index));
  // Literal windows are only read where a part has no sparse prefixes (it would be scanned whole).
  const windowsOf = (index: number, starts: readonly number[] | null) => (hits === undefined || starts !== null ? null : hits.windowsOf(pattern, index));
  if (parts.length === 1) {
    const starts = startsOf(0);
    return anyMatch(first, pattern.sticky[0] ?? null, text, starts, windowsOf(0, starts));
  }
  // Every part must occur somewhere: the last one, usually the most specific, is looked for
  // first, so a sequence that cannot complete costs one scan that stops at its first match.
  // Where that would be a scan of the whole text (no sparse prefixes, no windows) and the first
  // part is tried at sparse offsets, the first part's matches are found first: a sequence whose
  // first part occurs nowhere cannot match (the loop below would not run), and its last part is
  // then not scanned at all.
  const lastIndex = parts.length - 1;
  const lastStarts = startsOf(lastIndex);
  const lastSticky = pattern.sticky[lastIndex] ?? null;
  const lastWindows = windowsOf(lastIndex, lastStarts);
  const firstStarts = startsOf(0);
  const firstSticky = pattern.sticky[0] ?? null;
  const firstSparse = firstStarts !== null && firstSticky !== null;
  let reachable: number[] | null = null;
  if (firstSparse && (lastStarts === null || lastSticky === null) && lastWindows === null) {
    reachable = stickyEnds(firstSticky!, text, firstStarts!);
    if (reachable.length === 0) return false;
  }
  // Where the first part's ends are known and every middle part is tried at sparse offsets (up
  // to the reach of the ends before it), the loop below is itself the last part's one scan, from
  // the first end it can continue on: the check is a condition the loop's answer already holds
  // (it returns true only on a match of the last part), and scanning the whole text for it would
  // read the text once more.
  if ((reachable === null || !middlesSparse(pattern, hits!)) && !anyMatch(parts[lastIndex]!, lastSticky, text, lastStarts, lastWindows)) return false;
  reachable ??= firstSparse ? stickyEnds(firstSticky!, text, firstStarts!) : matchEnds(first, text);
  for (let index = 1; index < parts.length && reachable.length > 0; index++) {
    const gap = pattern.gaps[index - 1]!;
    const regex = parts[index]!;
    const last = index === parts.length - 1;
    // A match can only continue the sequence if it starts after the first reachable end and at
    // most gap.max past the last one: the scan starts and stops there.
    const limit = reachable[reachable.length - 1]! + gap.max;
    const next: number[] = [];
    let pointer = 0;
    let latest = -1;
    // Offsets [latest, scanned) have been read; blockedAt is the first excluded one, or -1.
    let scanned = 0;
    let blockedAt = -1;
    const starts = startsOf(index);
    const sticky = pattern.sticky[index] ?? null;
    // The part's successive leftmost matches from the first reachable end on: by a scan, or by
    // sticky attempts at the offsets where a match can start (the same matches, in order).
    let cursor = 0;
    let from = reachable[0]!;
    const nextMatch = (): { start: number; end: number } | null => {
      if (starts === null || sticky === null) {
        const match = regex.exec(text);
        if (match === null) return null;
        const end = match.index + match[0].length;
        if (end === match.index) regex.lastIndex++;
        return { start: match.index, end };
      }
      while (cursor < starts.length) {
        const start = starts[cursor++]!;
        if (start < from) continue;
        if (start > limit) return null;
        sticky.lastIndex = start;
        if (sticky.test(text)) {
          from = sticky.lastIndex;
          return { start, end: from };
        }
      }
      return null;
    };
    regex.lastIndex = from;
    for (let match = nextMatch(); match !== null && match.start <= limit; match = nextMatch()) {
      const { start, end } = match;
      while (pointer < reachable.length && reachable[pointer]! <= start) latest = reachable[pointer++]!;
      if (latest < 0 || start - latest > gap.max) continue;
      // `latest` only grows: what was read stays valid unless it begins after `latest` or its
      // first excluded offset now lies before `latest`.
      if (scanned <= latest || (blockedAt >= 0 && blockedAt < latest)) {
        scanned = latest;
        blockedAt = -1;
      }
      while (blockedAt < 0 && scanned < start) {
        if (isExcluded(text, scanned, gap)) blockedAt = scanned;
        scanned++;
      }
      if (blockedAt >= 0 && blockedAt < start) continue;
      if (last) return true;
      next.push(end);
    }
    reachable = next;
  }
  return false;
}

export function scanVariants(catalogue: CompiledCatalogue, kind: InspectKind, variants: Normalized['variants']): T1Result {
  const findings = new Map<string, Finding>();
  // Variants of one length (canonical and leet, char-split and char-split+leet) share the
  // automaton pass of the first of them.
  const scans: CandidateScan[] = [];
  for (const variant of variants) {
    const like = scans.find((scan) => scan.base !== null && scan.base.marks.text.length === variant.text.length);
    const scan = catalogue.scan(kind, variant.text, like);
    if (scan.base !== null) scans.push(scan);
    const { patterns, hits } = scan;
    for (const pattern of patterns) {
      if (findings.has(pattern.entry.id)) continue;
      if (matchPattern(pattern, variant.text, hits)) {
        findings.set(pattern.entry.id, {
          id: pattern.entry.id,
          name: pattern.entry.name,
          category: pattern.entry.category,
          confidence: pattern.entry.weight,
          tier: 't1',
          variant: variant.name,
        });
      }
    }
  }
  const list = [...findings.values()];
  return { score: combineFindings(list), findings: list };
}

/** The T1 tier: fails closed (an erroring pattern engine must not wave traffic through). */
export function runT1(catalogue: CompiledCatalogue, kind: InspectKind, normalized: Normalized): Verdict {
  const result = scanVariants(catalogue, kind, normalized.variants);
  return {
    outcome: result.findings.length > 0 ? 'match' : 'clean',
    score: result.score,
    findings: result.findings,
    failMode: 'closed',
  };
}
