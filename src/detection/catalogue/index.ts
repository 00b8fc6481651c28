/**
 * The pattern catalogue (data) and its compiled form. Compilation validates the catalogue once
 * at load: unique ids, weights in 0..1, keywords present and lower case; an invalid entry stops
 * startup rather than silently weakening detection.
 */
import type { InspectKind } from '../types.ts';
import { AGENT_PATTERNS } from './agent.ts';
import { API_PATTERNS } from './api.ts';
import type { CatalogueEntry } from './entry.ts';
import { buildAutomaton } from './keywords.ts';
import { PROMPT_PATTERNS } from './prompt.ts';

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

const GAP_TOKEN = /⟪(\d+):([^⟫]*)⟫/g;
/** Splits a source at each "|" outside every group and character class. */
export function topLevelAlternatives(source: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let inClass = false;
  let last = 0;
  for (let index = 0; index < source.length; index++) {
    const char = source[index];
    if (char === '\\') {
      index++;
      continue;
    }
    if (inClass) {
      if (char === ']') inClass = false;
      continue;
    }
    if (char === '⟪') {
      index = source.indexOf('⟫', index);
      if (index < 0) break;
      continue;
    }
    if (char === '[') inClass = true;
    else if (char === '(') depth++;
    else if (char === ')') depth--;
    else if (char === '|' && depth === 0) {
      out.push(source.slice(last, index));
      last = index + 1;
    }
  }
  out.push(source.slice(last));
  return out;
}

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

export interface CompiledCatalogue {
  readonly size: number;
  /** Patterns that apply to a kind, in catalogue order. */
  forKind(kind: InspectKind): readonly CompiledPattern[];
  /** Patterns of a kind whose keywords occur in `text` (one Aho–Corasick pass). */
  candidates(kind: InspectKind, text: string): CompiledPattern[];
  byId(id: string): CatalogueEntry | undefined;
}

export function compileCatalogue(entries: readonly CatalogueEntry[] = CATALOGUE): CompiledCatalogue {
  const seen = new Map<string, CatalogueEntry>();
  const compiled: CompiledPattern[] = [];
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
        sequences.push({
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
  const keywordIds = new Map<string, number>();
  const patternsOfKeyword: number[][] = [];
  compiled.forEach((pattern, index) => {
    for (const keyword of pattern.entry.keywords) {
      let id = keywordIds.get(keyword);
      if (id === undefined) {
        id = keywordIds.size;
        keywordIds.set(keyword, id);
        patternsOfKeyword.push([]);
      }
      patternsOfKeyword[id]!.push(index);
    }
  });
  const automaton = buildAutomaton([...keywordIds.keys()]);
  const kindSets = new Map<InspectKind, Set<CompiledPattern>>();
  for (const [kind, list] of byKind) kindSets.set(kind, new Set(list));
  return {
    size: compiled.length,
    forKind: (kind) => byKind.get(kind) ?? [],
    candidates(kind, text) {
      const allowed = kindSets.get(kind);
      const hit = new Set<number>();
      for (const keyword of automaton.find(text)) for (const index of patternsOfKeyword[keyword]!) hit.add(index);
      return [...hit].sort((left, right) => left - right).map((index) => compiled[index]!).filter((pattern) => allowed?.has(pattern) === true);
    },
    byId: (id) => seen.get(id),
  };
}
