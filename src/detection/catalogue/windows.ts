/**
 * Literal windows: where a part's matches can start, found from a rarer literal inside it than
 * its opening. A part whose every match starts with a common word ("i", "the", "in" …) is
 * scanned whole; but each of its top-level alternatives may hold an element that every match
 * of the alternative passes through, and that starts with one of a few fixed strings
 * ("changed", "updated" …), at a bounded distance from the match's start. Then every match
 * starts within [p - maxBefore, p - minBefore] of an occurrence p of one of those strings,
 * and trying the alternative's sticky copy at those offsets finds a match exactly when a scan
 * of the whole text would.
 *
 * The distance may hold `\s+`, `\s*` or `\w+`-like runs: they are bounded by the text's
 * longest run of such characters (an element `\s+` cannot match more whitespace than the
 * text's longest whitespace run), so the bound is c + s·S + w·W, with S and W the text's
 * longest runs of `\s` and `\w` characters. Anything else unbounded (`.+`, a repeated group
 * …) before the element leaves the alternative, and so the part, without a window plan.
 */

import type { AST } from '@eslint-community/regexpp';
import { parseSource, requiredPrefixes } from './literals.ts';

/** An upper bound on a width: constant + s × (longest \s run) + w × (longest \w run); Infinity in c when unbounded. */
export interface WidthBound {
  readonly c: number;
  readonly s: number;
  readonly w: number;
}

export interface WindowAlternative {
  /** The alternative's source (compiled sticky by the caller). */
  readonly source: string;
  /** Fixed strings one of which starts the chosen element in every match. */
  readonly leaders: readonly string[];
  /** Least number of characters between a match's start and the element's start. */
  readonly minBefore: number;
  /** Most such characters, as a bound over the text's runs. */
  readonly maxBefore: WidthBound;
}

/** One element of an alternative (with its quantifier) as the window analysis sees it. */
interface Atom {
  readonly min: number;
  readonly max: WidthBound;
  /** For an unquantified group (not a look-around): the fixed string each of its alternatives starts with ('' for none). */
  readonly openings: readonly string[] | null;
  /** An unquantified plain literal character (may join a leader string). */
  readonly literal: string | null;
}

/** One repetition of an element: its width, and whether it matches only `\s` (or only `\w`) characters. */
interface Unit {
  readonly min: number;
  readonly max: WidthBound;
  readonly runs: 's' | 'w' | null;
  readonly openings: readonly string[] | null;
  readonly literal: string | null;
}

const UNBOUNDED: WidthBound = { c: Infinity, s: 0, w: 0 };
const ZERO: WidthBound = { c: 0, s: 0, w: 0 };
const one = (c: number): WidthBound => ({ c, s: 0, w: 0 });
const add = (a: WidthBound, b: WidthBound): WidthBound => ({ c: a.c + b.c, s: a.s + b.s, w: a.w + b.w });
const times = (a: WidthBound, n: number): WidthBound => (n === 0 ? ZERO : { c: a.c * n, s: a.s * n, w: a.w * n });
/** A bound at least as large as both (coefficient-wise maximum). */
const either = (a: WidthBound, b: WidthBound): WidthBound => ({ c: Math.max(a.c, b.c), s: Math.max(a.s, b.s), w: Math.max(a.w, b.w) });

const ZERO_WIDTH: Unit = { min: 0, max: ZERO, runs: null, openings: null, literal: null };
const character = (runs: 's' | 'w' | null, literal: string | null = null): Unit => ({ min: 1, max: one(1), runs, openings: null, literal });

/** Escaped characters that stand for themselves in a leader. */
const LITERAL_ESCAPES = new Set(['.', '-', "'", '"', '/', ':']);
/** Class members that match only `\s` characters, or only `\w` ones (as written: `[\s\t]`, `[a-z0-9_]`). */
const SPACE_MEMBER = /^(?:\\s|\\t|\\n|\\r| )$/;
const WORD_MEMBER = /^(?:\\w|\\d|[a-z]-[a-z]|[A-Z]-[A-Z]|[0-9]-[0-9]|_)$/;

function classRuns(node: AST.CharacterClass): 's' | 'w' | null {
  if (node.negate || node.elements.length === 0) return null;
  if (node.elements.every((element) => SPACE_MEMBER.test(element.raw))) return 's';
  if (node.elements.every((element) => WORD_MEMBER.test(element.raw))) return 'w';
  return null;
}

/**
 * One repetition of an element, or null where the syntax is beyond this reader: backreferences,
 * named groups, groups with modifiers, and the escapes \c, \p, \P, \k and \1–\9 (without the
 * u flag these may read as other characters), and a "{" that is not a quantifier.
 */
function unitOf(node: AST.Element): Unit | null {
  switch (node.type) {
    case 'Character': {
      if (node.raw.startsWith('\\')) {
        const letter = node.raw[1];
        // \x and \u with their hex digits, any other escape one letter: "\u{…}", "\xg", "\01" and the like are not read.
        const length = letter === 'x' ? 4 : letter === 'u' ? 6 : 2;
        if (letter === undefined || /[1-9kcpP]/.test(letter) || node.raw.length !== length) return null;
        return character(null, node.raw.length === 2 && LITERAL_ESCAPES.has(letter) ? letter : null);
      }
      return node.raw === '{' ? null : character(null, node.raw);
    }
    case 'CharacterSet':
      if (node.kind === 'any') return character(null);
      if (node.kind === 'space') return character(node.negate ? null : 's');
      if (node.kind === 'digit' || node.kind === 'word') return character(node.negate ? null : 'w');
      return null;
    case 'CharacterClass':
      return character(classRuns(node));
    case 'Assertion':
      // \b, \B, ^, $ and the look-arounds: their content is not read (a match is judged by what it consumes).
      return ZERO_WIDTH;
    case 'Group':
      return node.modifiers === null ? groupUnit(node.alternatives) : null;
    case 'CapturingGroup':
      return node.name === null ? groupUnit(node.alternatives) : null;
    default:
      // Backreferences; a quantifier directly on a quantifier does not parse.
      return null;
  }
}

function groupUnit(alternatives: readonly AST.Alternative[]): Unit | null {
  let min = Infinity;
  let max: WidthBound = ZERO;
  const openings: string[] = [];
  for (const alternative of alternatives) {
    const list = atoms(alternative);
    if (list === null) return null;
    const width = sequenceWidth(list);
    min = Math.min(min, width.min);
    max = either(max, width.max);
    openings.push(leadingString(list));
  }
  return { min, max, runs: null, openings, literal: null };
}

function atomOf(node: AST.Element): Atom | null {
  const quantifier = node.type === 'Quantifier' ? node : null;
  const unit = unitOf(quantifier?.element ?? node);
  if (unit === null) return null;
  const low = quantifier?.min ?? 1;
  const high = quantifier?.max ?? 1;
  if (low === 1 && high === 1) return { min: unit.min, max: unit.max, openings: unit.openings, literal: unit.literal };
  let max: WidthBound;
  if (high === Infinity) {
    // A run of \s or \w characters is no longer than the text's longest such run.
    max = unit.max.c === 0 && unit.max.s === 0 && unit.max.w === 0 ? ZERO : unit.runs === 's' ? { c: 0, s: 1, w: 0 } : unit.runs === 'w' ? { c: 0, s: 0, w: 1 } : UNBOUNDED;
  } else max = times(unit.max, high);
  return { min: unit.min * low, max, openings: null, literal: null };
}

/** The atoms of an alternative, or null where one is beyond this reader (the caller then has no window plan). */
function atoms(alternative: AST.Alternative): readonly Atom[] | null {
  const list: Atom[] = [];
  for (const element of alternative.elements) {
    const atom = atomOf(element);
    if (atom === null) return null;
    list.push(atom);
  }
  return list;
}

function sequenceWidth(list: readonly Atom[]): { min: number; max: WidthBound } {
  let min = 0;
  let max: WidthBound = ZERO;
  for (const atom of list) {
    min += atom.min;
    max = add(max, atom.max);
  }
  return { min, max };
}

/** The fixed string every match of an alternative starts with (its leading literal characters), or ''. */
function leadingString(list: readonly Atom[]): string {
  let out = '';
  for (const atom of list) {
    if (atom.literal === null) break;
    out += atom.literal;
  }
  return out;
}

/** Leaders must be plain text the literal automaton finds exactly (lower-case letters and the like). */
const PLAIN = /^[a-z0-9 '_-]+$/;

/**
 * The window plan of one top-level alternative: the element (a plain literal run, or a group
 * whose every alternative opens with a fixed string) with the longest shortest leader (at least
 * `minLeader` characters), ties to the earliest; null where none qualifies.
 */
export function windowAlternative(source: string, minLeader = 4): WindowAlternative | null {
  const pattern = parseSource(source);
  if (pattern === null || pattern.alternatives.length !== 1) return null;
  return alternativeWindow(pattern.alternatives[0]!, minLeader);
}

function alternativeWindow(alternative: AST.Alternative, minLeader: number): WindowAlternative | null {
  const list = atoms(alternative);
  if (list === null) return null;
  let best: WindowAlternative | null = null;
  let bestScore = minLeader - 1;
  let minBefore = 0;
  let maxBefore: WidthBound = ZERO;
  for (let index = 0; index < list.length; index++) {
    const atom = list[index]!;
    let leaders: string[] | null = null;
    if (atom.literal !== null && /[a-z0-9]/.test(atom.literal)) {
      let run = '';
      for (let next = index; next < list.length && list[next]!.literal !== null; next++) run += list[next]!.literal;
      leaders = [run];
    } else if (atom.openings !== null) {
      leaders = [...atom.openings];
    }
    if (leaders !== null && maxBefore.c !== Infinity && leaders.every((leader) => PLAIN.test(leader))) {
      const score = Math.min(...leaders.map((leader) => leader.length));
      if (score > bestScore) {
        bestScore = score;
        best = { source: alternative.raw, leaders: [...new Set(leaders)].sort(), minBefore, maxBefore };
      }
    }
    minBefore += atom.min;
    maxBefore = add(maxBefore, atom.max);
  }
  return best;
}

/** A plan for every top-level alternative of a part, or null when one has none. */
export function windowPlan(source: string, minLeader = 4): WindowAlternative[] | null {
  const pattern = parseSource(source);
  if (pattern === null) return null;
  const plan: WindowAlternative[] = [];
  for (const alternative of pattern.alternatives) {
    const entry = alternativeWindow(alternative, minLeader);
    if (entry === null) return null;
    plan.push(entry);
  }
  return plan;
}

/** Whether a node holds a backreference (in a group, a look-around or a quantified element). */
function hasBackreference(node: AST.Alternative | AST.Element): boolean {
  switch (node.type) {
    case 'Backreference':
      return true;
    case 'Alternative':
      return node.elements.some(hasBackreference);
    case 'Quantifier':
      return hasBackreference(node.element);
    case 'Group':
    case 'CapturingGroup':
      return node.alternatives.some(hasBackreference);
    case 'Assertion':
      return (node.kind === 'lookahead' || node.kind === 'lookbehind') && node.alternatives.some(hasBackreference);
    default:
      return false;
  }
}

/**
 * A plan for a part whose alternatives do not all have a window: each alternative without one
 * is tried at its own prefixes instead (a window of width zero: every match of the alternative
 * starts where one of them occurs). Only where at least one alternative has a window: a part
 * whose alternatives all fall back has, together, the part's own prefixes, which T1 already
 * tries. Null where an alternative has neither, or holds a backreference (compiled alone, it
 * would not see the group it refers to). `tp.promotion-claims` is the case in point: its
 * `\d{2,4}%` opening makes the part's prefixes the ten digits, dense in prose with numbers,
 * while "#1" (its one alternative without a 4-character literal) is rare.
 */
export function mixedPlan(source: string, minLeader = 4): WindowAlternative[] | null {
  const pattern = parseSource(source);
  if (pattern === null) return null;
  const plan: WindowAlternative[] = [];
  let windows = 0;
  for (const alternative of pattern.alternatives) {
    if (hasBackreference(alternative)) return null;
    const window = alternativeWindow(alternative, minLeader);
    if (window !== null) {
      plan.push(window);
      windows++;
      continue;
    }
    const prefixes = requiredPrefixes(alternative.raw);
    // A single character ("[", "(", a lone space) starts a match almost anywhere: recording its
    // offsets in every text's automaton pass would cost more than the scan it could spare.
    if (prefixes === null || prefixes.some((prefix) => prefix.length < 2)) return null;
    plan.push({ source: alternative.raw, leaders: prefixes, minBefore: 0, maxBefore: ZERO });
  }
  return windows > 0 ? plan : null;
}

/** A part's plan: windows for every alternative, else windows mixed with prefixes, else null. */
export function partPlan(source: string, minLeader = 4): WindowAlternative[] | null {
  return windowPlan(source, minLeader) ?? mixedPlan(source, minLeader);
}

/**
 * Per code unit: 1 for a `\w` character, 2 for a `\s` one (JavaScript's definitions, without the
 * u flag), 0 otherwise.
 */
const RUN_CLASS = (() => {
  const table = new Uint8Array(0x10000);
  for (let code = 0; code < 0x10000; code++) {
    const word = (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 95;
    const space =
      code === 32 || (code >= 9 && code <= 13) || code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) ||
      code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff;
    table[code] = word ? 1 : space ? 2 : 0;
  }
  return table;
})();

/** The longest runs of `\s` and of `\w` characters in a text (JavaScript's definitions, without the u flag). */
export function longestRuns(text: string): { s: number; w: number } {
  let s = 0;
  let w = 0;
  let runS = 0;
  let runW = 0;
  for (let index = 0; index < text.length; index++) {
    const kind = RUN_CLASS[text.charCodeAt(index)]!;
    if (kind === 1) {
      runS = 0;
      if (++runW > w) w = runW;
    } else if (kind === 2) {
      runW = 0;
      if (++runS > s) s = runS;
    } else {
      runW = 0;
      runS = 0;
    }
  }
  return { s, w };
}

export function boundOf(width: WidthBound, runs: { s: number; w: number }): number {
  return width.c + width.s * runs.s + width.w * runs.w;
}
