/**
 * The pattern catalogue (data) and its compiled form. Compilation validates the catalogue once
 * at load: unique ids, weights in 0..1, keywords present and lower case; an invalid entry stops
 * startup rather than silently weakening detection.
 */
import type { InspectKind } from '../types.ts';
import { AGENT_PATTERNS } from './agent.ts';
import { API_PATTERNS } from './api.ts';
import type { CatalogueEntry } from './entry.ts';
import { buildAutomaton, type MarkBase } from './keywords.ts';
import { requiredLiterals, requiredPrefixes } from './literals.ts';
import { PROMPT_PATTERNS } from './prompt.ts';
import { topLevelAlternatives } from './alternatives.ts';
import { boundOf, longestRuns, partPlan, windowPlan, type WidthBound } from './windows.ts';

export type { CatalogueEntry, Category } from './entry.ts';

export const CATALOGUE: readonly CatalogueEntry[] = [...PROMPT_PATTERNS, ...AGENT_PATTERNS, ...API_PATTERNS];

/** A bounded gap between two parts of a sequence: at most `max` characters, none in the class `excluded`. */
export interface Gap {
  readonly max: number;
  /** Body of a regular-expression character class, e.g. ".\\n" or "a-z\\n". */
  readonly excluded: string;
}

/** A gap with its excluded class compiled: a table for ASCII, the regular expression beyond. */
export interface CompiledGap extends Gap {
  readonly asciiExcluded: Uint8Array;
  readonly excludedRegex: RegExp;
}

export interface Sequence {
  /** Parts in order, each a linear regular expression (flags gm). */
  readonly parts: readonly RegExp[];
  /** gaps[i] sits between parts[i] and parts[i + 1]. */
  readonly gaps: readonly CompiledGap[];
  /**
   * Per part, the ids (in the catalogue's literal automaton) of the literals one of which every
   * match of the part contains (literals.ts); null where none is known. A sequence whose part
   * has none of its literals in a text cannot match there and is not run.
   */
  readonly required: readonly (readonly number[] | null)[];
  /**
   * Per part, the ids of literals one of which every match starts with (literals.ts), and a
   * sticky copy of the part; null where no such prefix is known. T1 tries the part only where
   * one of them occurs instead of at every offset (the same matches, found in the same order).
   */
  readonly prefixes: readonly (readonly number[] | null)[];
  readonly sticky: readonly (RegExp | null)[];
  /**
   * Per part, its literal windows (windows.ts): for each top-level alternative, a sticky copy,
   * the ids of the strings one of which starts an element every match passes through, and how
   * far before that element a match may start. Null where some alternative has none.
   */
  readonly windows: readonly (readonly CompiledWindow[] | null)[];
}

export interface CompiledWindow {
  readonly sticky: RegExp;
  readonly leaders: readonly number[];
  readonly minBefore: number;
  readonly maxBefore: WidthBound;
}

/** Offsets where one alternative of a part may start a match: [from[i], to[i]] (ascending, may overlap). */
export interface WindowStarts {
  readonly sticky: RegExp;
  readonly from: readonly number[];
  readonly to: readonly number[];
}

/** Where a text holds the catalogue's prefix literals (from the candidates pass). */
export interface LiteralHits {
  /** Offsets (ascending) where a match of the sequence's part may start; null: try every offset. */
  startsOf(sequence: Sequence, part: number): readonly number[] | null;
  /**
   * Per top-level alternative of the part, the windows where its matches may start (every match
   * of the part starts in one of them); null where that is not known (a leader too frequent, or
   * no plan): try every offset.
   */
  windowsOf(sequence: Sequence, part: number): readonly WindowStarts[] | null;
}

export interface CandidateScan {
  readonly patterns: CompiledPattern[];
  readonly hits: LiteralHits;
  /** The scan's automaton pass, for `scan` of another variant of the same text (opaque). */
  readonly base: { readonly kind: InspectKind; readonly marks: MarkBase } | null;
}

function compileGap(gap: Gap): CompiledGap {
  const excludedRegex = new RegExp(`[${gap.excluded}]`);
  const asciiExcluded = new Uint8Array(128);
  for (let code = 0; code < 128; code++) asciiExcluded[code] = excludedRegex.test(String.fromCharCode(code)) ? 1 : 0;
  return { ...gap, asciiExcluded, excludedRegex };
}

export interface CompiledPattern {
  readonly entry: CatalogueEntry;
  /** Top-level alternatives; the pattern matches when any one matches. */
  readonly sequences: readonly Sequence[];
}

export { topLevelAlternatives };

const GAP_TOKEN = /⟪(\d+):([^⟫]*)⟫/g;

export function splitPattern(pattern: string): { parts: string[]; gaps: Gap[] } {
  const parts: string[] = [];
  const gaps: Gap[] = [];
  let last = 0;
  for (const match of pattern.matchAll(GAP_TOKEN)) {
    parts.push(pattern.slice(last, match.index));
    gaps.push({ max: Number(match[1]), excluded: match[2] ?? '' });
    last = (match.index ?? 0) + match[0].length;
  }
  parts.push(pattern.slice(last));
  return { parts, gaps };
}

const TEXT_START = '(?<![\\s\\S])';
/**
 * True when every top-level alternative of a part opens with the start-of-text assertion: the
 * part is then compiled sticky, so a scan tries position 0 only instead of failing the
 * assertion at each of the text's positions.
 */
function anchoredAtStart(part: string): boolean {
  return topLevelAlternatives(part).every((alternative) => alternative.startsWith(TEXT_START));
}

/**
 * A part's prefixes, unless one is a lone space, tab or line break: such a character starts a
 * match almost anywhere in prose, so its offsets would only cost their recording in every text's
 * automaton pass before the part is scanned whole anyway (as without prefixes).
 */
function usablePrefixes(prefixes: string[] | null): string[] | null {
  return prefixes === null || prefixes.some((prefix) => prefix.length === 1 && /\s/.test(prefix)) ? null : prefixes;
}

/** The ascending, distinct offsets of the given literals' occurrences; null when more than `limit`. */
function mergeStarts(ids: readonly number[], starts: ReadonlyMap<number, readonly number[]>, limit: number): readonly number[] | null {
  let single: readonly number[] | undefined;
  let total = 0;
  let lists = 0;
  for (const id of ids) {
    const list = starts.get(id);
    if (list === undefined) continue;
    total += list.length;
    lists += 1;
    single = list;
  }
  if (total > limit) return null;
  if (lists <= 1) return single ?? [];
  // Each literal's offsets are ascending (the automaton records them in text order): merged two
  // lists at a time, without sorting the whole.
  let pending: (readonly number[])[] = [];
  for (const id of ids) {
    const list = starts.get(id);
    if (list !== undefined) pending.push(list);
  }
  while (pending.length > 1) {
    const next: (readonly number[])[] = [];
    for (let index = 0; index + 1 < pending.length; index += 2) next.push(mergeTwo(pending[index]!, pending[index + 1]!));
    if (pending.length % 2 === 1) next.push(pending[pending.length - 1]!);
    pending = next;
  }
  return pending[0]!;
}

/** The ascending, distinct union of two ascending lists. */
function mergeTwo(left: readonly number[], right: readonly number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  let last = -1;
  while (i < left.length || j < right.length) {
    const value = j >= right.length || (i < left.length && left[i]! <= right[j]!) ? left[i++]! : right[j++]!;
    if (value !== last) out.push((last = value));
  }
  return out;
}

/** mergeStarts, for the test that holds it to a sort of the offsets. */
export const mergeStartsForTest = mergeStarts;

/** Above one prefix occurrence per this many characters, a part is scanned as a whole instead. */
const DENSE_PREFIX_SPACING = 48;

export interface CompiledCatalogue {
  readonly size: number;
  /** Patterns that apply to a kind, in catalogue order. */
  forKind(kind: InspectKind): readonly CompiledPattern[];
  /**
   * Patterns of a kind whose keywords occur in `text` and of which some sequence has a required
   * literal of every part in it (one Aho–Corasick pass); each with only those sequences.
   */
  candidates(kind: InspectKind, text: string): CompiledPattern[];
  /**
   * The candidates with where their parts may start (for matchPattern). With `like`, the scan of
   * another variant of the text, the automaton pass may be shared (the same result).
   */
  scan(kind: InspectKind, text: string, like?: CandidateScan): CandidateScan;
  byId(id: string): CatalogueEntry | undefined;
}

let compiledDefault: CompiledCatalogue | undefined;

/**
 * The compiled catalogue. The default one is compiled once per process (its analysis and
 * automaton take a few hundred milliseconds) and shared: matching is synchronous, so the
 * regular expressions' lastIndex state never interleaves.
 */
export function compileCatalogue(entries: readonly CatalogueEntry[] = CATALOGUE): CompiledCatalogue {
  if (entries !== CATALOGUE) return compileEntries(entries);
  return (compiledDefault ??= compileEntries(entries));
}

function compileEntries(entries: readonly CatalogueEntry[]): CompiledCatalogue {
  const seen = new Map<string, CatalogueEntry>();
  const compiled: CompiledPattern[] = [];
  // One automaton finds the pattern keywords and the parts' required literals (ids shared).
  const stringIds = new Map<string, number>();
  const idOf = (value: string): number => {
    let id = stringIds.get(value);
    if (id === undefined) {
      id = stringIds.size;
      stringIds.set(value, id);
    }
    return id;
  };
  const literalIds = (literals: readonly string[] | null): number[] | null => (literals === null ? null : literals.map(idOf));
  for (const entry of entries) {
    if (seen.has(entry.id)) throw new Error(`detection catalogue: duplicate pattern id ${entry.id}`);
    if (!(entry.weight > 0 && entry.weight <= 1)) throw new Error(`detection catalogue: weight of ${entry.id} must be in (0, 1]`);
    if (entry.keywords.length === 0 || entry.keywords.some((keyword) => keyword.length === 0 || keyword !== keyword.toLowerCase())) {
      throw new Error(`detection catalogue: ${entry.id} needs lower-case keywords`);
    }
    seen.set(entry.id, entry);
    // A pattern without gaps stays one regular expression; with gaps, each top-level
    // alternative becomes its own sequence.
    const alternatives = splitPattern(entry.pattern).gaps.length === 0 ? [entry.pattern] : topLevelAlternatives(entry.pattern);
    const sequences: Sequence[] = [];
    try {
      for (const alternative of alternatives) {
        const { parts, gaps } = splitPattern(alternative);
        const prefixes = parts.map((part) => (anchoredAtStart(part) ? null : literalIds(usablePrefixes(requiredPrefixes(part)))));
        sequences.push({
          required: parts.map((part) => literalIds(requiredLiterals(part))),
          prefixes,
          sticky: parts.map((part, index) => (prefixes[index] === null ? null : new RegExp(part, 'my'))),
          windows: parts.map((part) => {
            // Windows mixed with prefixes only for the text kinds' patterns: an HTTP value is
            // short, and its patterns' many short leaders ("for", "if", "name") would be recorded
            // in every HTTP automaton pass for scans that cost little there.
            const plan = anchoredAtStart(part) ? null : entry.kinds.includes('http') ? windowPlan(part) : partPlan(part);
            return plan === null
              ? null
              : plan.map((alternative) => ({
                  sticky: new RegExp(alternative.source, 'my'),
                  leaders: alternative.leaders.map(idOf),
                  minBefore: alternative.minBefore,
                  maxBefore: alternative.maxBefore,
                }));
          }),
          gaps: gaps.map(compileGap),
          parts: parts.map((part) => {
            if (part.length === 0) throw new Error('empty part');
            return new RegExp(part, anchoredAtStart(part) ? 'gmy' : 'gm');
          }),
        });
      }
    } catch (error) {
      throw new Error(`detection catalogue: ${entry.id} does not compile (${error instanceof Error ? error.message : String(error)})`);
    }
    compiled.push({ entry, sequences });
  }
  const byKind = new Map<InspectKind, CompiledPattern[]>();
  for (const kind of ['prompt', 'tool_output', 'http'] as const) byKind.set(kind, compiled.filter((pattern) => pattern.entry.kinds.includes(kind)));
  // Tool definitions and model output are text that should hold data, like tool output: the
  // same patterns apply (their own detectors add the kind-specific checks).
  byKind.set('tool_definition', byKind.get('tool_output')!);
  byKind.set('llm_output', byKind.get('tool_output')!);
  const keywordsOf = compiled.map((pattern) => pattern.entry.keywords.map(idOf));
  const automaton = buildAutomaton([...stringIds.keys()]);
  const byKindIndex = new Map<InspectKind, { pattern: CompiledPattern; keywords: number[] }[]>();
  for (const [kind, list] of byKind) {
    const members = new Set(list);
    byKindIndex.set(kind, compiled.flatMap((pattern, index) => (members.has(pattern) ? [{ pattern, keywords: keywordsOf[index]! }] : [])));
  }
  // Per kind, the prefix literals of its own patterns: only their offsets are recorded (an HTTP
  // pattern's prefixes, such as a space or a quote, are not looked for in a prompt).
  const trackByKind = new Map<InspectKind, Uint8Array>();
  for (const [kind, list] of byKind) {
    const track = new Uint8Array(stringIds.size);
    for (const pattern of list) {
      for (const sequence of pattern.sequences) {
        for (const ids of sequence.prefixes) for (const id of ids ?? []) track[id] = 1;
        for (const windows of sequence.windows) for (const window of windows ?? []) for (const id of window.leaders) track[id] = 1;
      }
    }
    trackByKind.set(kind, track);
  }
  const present = (found: Uint8Array, ids: readonly number[] | null): boolean => {
    if (ids === null) return true;
    for (const id of ids) if (found[id] === 1) return true;
    return false;
  };
  const possible = (found: Uint8Array, sequence: Sequence): boolean => {
    for (const ids of sequence.required) if (!present(found, ids)) return false;
    return true;
  };
  const scan = (kind: InspectKind, text: string, like?: CandidateScan): CandidateScan => {
    // Trying a part at each listed offset beats one scan of the text while offsets are sparse.
    const sparse = Math.max(16, text.length / DENSE_PREFIX_SPACING);
    // A literal seen more often than that makes every list it is in dense: its offsets are not
    // needed. A variant that differs from another in a few characters (leet) reuses its pass.
    const shared = like?.base?.kind === kind ? automaton.markLike(like.base.marks, text) : null;
    const base = shared === null ? automaton.markBase(text, trackByKind.get(kind), sparse) : null;
    const { found, starts } = shared ?? base!;
    const patterns: CompiledPattern[] = [];
    for (const { pattern, keywords } of byKindIndex.get(kind) ?? []) {
      if (!present(found, keywords)) continue;
      const sequences = pattern.sequences;
      if (sequences.length === 1) {
        if (possible(found, sequences[0]!)) patterns.push(pattern);
        continue;
      }
      const kept = sequences.filter((sequence) => possible(found, sequence));
      if (kept.length > 0) patterns.push(kept.length === sequences.length ? pattern : { entry: pattern.entry, sequences: kept });
    }
    const merged = new Map<readonly number[], readonly number[] | null>();
    const mergedOf = (ids: readonly number[]): readonly number[] | null => {
      let list = merged.get(ids);
      if (list === undefined) {
        list = mergeStarts(ids, starts, sparse);
        merged.set(ids, list);
      }
      return list;
    };
    let runs: { s: number; w: number } | undefined;
    return {
      patterns,
      base: base === null ? null : { kind, marks: base },
      hits: {
        startsOf(sequence, part) {
          const ids = sequence.prefixes[part];
          if (ids === null || ids === undefined || sequence.sticky[part] === null) return null;
          return mergedOf(ids);
        },
        windowsOf(sequence, part) {
          const windows = sequence.windows[part];
          if (windows === null || windows === undefined) return null;
          const out: WindowStarts[] = [];
          for (const window of windows) {
            const at = mergedOf(window.leaders);
            if (at === null) return null;
            runs ??= longestRuns(text);
            const before = boundOf(window.maxBefore, runs);
            out.push({
              sticky: window.sticky,
              from: at.map((offset) => Math.max(0, offset - before)),
              to: at.map((offset) => offset - window.minBefore),
            });
          }
          return out;
        },
      },
    };
  };
  return {
    size: compiled.length,
    forKind: (kind) => byKind.get(kind) ?? [],
    candidates: (kind, text) => scan(kind, text).patterns,
    scan,
    byId: (id) => seen.get(id),
  };
}
