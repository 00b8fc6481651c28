/**
 * T1: the pattern catalogue matched on every normalized variant. Pure and synchronous. A cheap
 * literal prefilter (one Aho–Corasick pass over all pattern keywords) decides which regular
 * expressions run at all, so the common clean input costs one linear scan per variant. Input is
 * bounded by normalization (64 KB); every pattern is linear-time (checked by a test).
 */
import type { CompiledCatalogue, CompiledPattern, Sequence } from '../catalogue/index.ts';
import type { Normalized } from '../normalize/index.ts';
import type { Finding, InspectKind, Verdict } from '../types.ts';
import { combineFindings } from '../score.ts';

export interface T1Result {
  readonly score: number;
  readonly findings: readonly Finding[];
}

/** Start/end offsets of every (non-overlapping, leftmost) match of a global regex. */
function allMatches(regex: RegExp, text: string): { starts: number[]; ends: number[] } {
  const starts: number[] = [];
  const ends: number[] = [];
  regex.lastIndex = 0;
  for (let match = regex.exec(text); match !== null; match = regex.exec(text)) {
    starts.push(match.index);
    ends.push(match.index + match[0].length);
    if (match[0].length === 0) regex.lastIndex++;
  }
  return { starts, ends };
}

/** Prefix counts of excluded characters: blocked[j] - blocked[i] = excluded chars in text[i, j). */
const classCache = new Map<string, { ascii: Uint8Array; regex: RegExp }>();

function blockerPrefix(text: string, excluded: string): Uint32Array {
  let compiled = classCache.get(excluded);
  if (compiled === undefined) {
    const regex = new RegExp(`[${excluded}]`);
    const ascii = new Uint8Array(128);
    for (let code = 0; code < 128; code++) ascii[code] = regex.test(String.fromCharCode(code)) ? 1 : 0;
    compiled = { ascii, regex };
    classCache.set(excluded, compiled);
  }
  const prefix = new Uint32Array(text.length + 1);
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    const hit = code < 128 ? compiled.ascii[code]! : compiled.regex.test(text[index]!) ? 1 : 0;
    prefix[index + 1] = prefix[index]! + hit;
  }
  return prefix;
}

/**
 * Linear-time match of a sequence part0 ⟪gap⟫ part1 ⟪gap⟫ …: each part is scanned once over the
 * whole text; a match of part i+1 is reachable when the nearest reachable end of part i before
 * it is at most gap.max characters away with no excluded character in between.
 */
export function matchPattern(pattern: CompiledPattern, text: string, blockers: Map<string, Uint32Array>): boolean {
  return pattern.sequences.some((sequence) => matchSequence(sequence, text, blockers));
}

function matchSequence(pattern: Sequence, text: string, blockers: Map<string, Uint32Array>): boolean {
  const [first, ...rest] = pattern.parts;
  if (first === undefined) return false;
  if (rest.length === 0) {
    first.lastIndex = 0;
    return first.test(text);
  }
  let reachable = allMatches(first, text).ends;
  for (let index = 0; index < rest.length && reachable.length > 0; index++) {
    const gap = pattern.gaps[index]!;
    let blocked = blockers.get(gap.excluded);
    if (blocked === undefined) {
      blocked = blockerPrefix(text, gap.excluded);
      blockers.set(gap.excluded, blocked);
    }
    const { starts, ends } = allMatches(rest[index]!, text);
    const next: number[] = [];
    let pointer = 0;
    let latest = -1;
    for (let candidate = 0; candidate < starts.length; candidate++) {
      const start = starts[candidate]!;
      while (pointer < reachable.length && reachable[pointer]! <= start) latest = reachable[pointer++]!;
      if (latest >= 0 && start - latest <= gap.max && blocked[start] === blocked[latest]) next.push(ends[candidate]!);
    }
    reachable = next;
  }
  return reachable.length > 0;
}

export function scanVariants(catalogue: CompiledCatalogue, kind: InspectKind, variants: Normalized['variants']): T1Result {
  const findings = new Map<string, Finding>();
  for (const variant of variants) {
    const blockers = new Map<string, Uint32Array>();
    for (const pattern of catalogue.candidates(kind, variant.text)) {
      if (findings.has(pattern.entry.id)) continue;
      if (matchPattern(pattern, variant.text, blockers)) {
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
