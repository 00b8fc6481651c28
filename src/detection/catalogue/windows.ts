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

import { topLevelAlternatives } from './alternatives.ts';
import { requiredPrefixes } from './literals.ts';

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

interface Atom {
  readonly source: string;
  /** Width of one repetition. */
  readonly min: number;
  readonly max: WidthBound;
  /** For a non-lookaround group: its alternatives' sources. */
  readonly alternatives: readonly string[] | null;
  /** A plain literal character (may join a leader string). */
  readonly literal: string | null;
  readonly quantified: boolean;
}

const UNBOUNDED: WidthBound = { c: Infinity, s: 0, w: 0 };
const ZERO: WidthBound = { c: 0, s: 0, w: 0 };
const one = (c: number): WidthBound => ({ c, s: 0, w: 0 });
const add = (a: WidthBound, b: WidthBound): WidthBound => ({ c: a.c + b.c, s: a.s + b.s, w: a.w + b.w });
const times = (a: WidthBound, n: number): WidthBound => (n === 0 ? ZERO : { c: a.c * n, s: a.s * n, w: a.w * n });
/** A bound at least as large as both (coefficient-wise maximum). */
const either = (a: WidthBound, b: WidthBound): WidthBound => ({ c: Math.max(a.c, b.c), s: Math.max(a.s, b.s), w: Math.max(a.w, b.w) });


/** Width of a single-character escape or class body; null for a zero-width escape. */
function escapeWidth(letter: string): { max: WidthBound; runs: 's' | 'w' | null } | null {
  if (letter === 'b' || letter === 'B') return null;
  if (letter === 's') return { max: one(1), runs: 's' };
  if (letter === 'w' || letter === 'd') return { max: one(1), runs: 'w' };
  return { max: one(1), runs: null };
}

/** Whether every character a class can match is a `\s` character (or every one a `\w` one). */
function classRuns(body: string): 's' | 'w' | null {
  if (/^(?:\\s|\\t|\\n|\\r| )+$/.test(body)) return 's';
  if (/^(?:\\w|\\d|[a-z]-[a-z]|[A-Z]-[A-Z]|[0-9]-[0-9]|_)+$/.test(body)) return 'w';
  return null;
}

/**
 * The top-level atoms of an alternative, or null where the syntax is beyond this reader
 * (backreferences, named groups and the like): the caller then has no window plan.
 */
function atoms(source: string): Atom[] | null {
  const out: Atom[] = [];
  let index = 0;
  while (index < source.length) {
    const begin = index;
    const char = source[index]!;
    let min = 1;
    let unit: WidthBound = one(1);
    let runs: 's' | 'w' | null = null;
    let alternatives: string[] | null = null;
    let literal: string | null = null;
    if (char === '\\') {
      const letter = source[index + 1];
      if (letter === undefined || /[1-9k]/.test(letter)) return null;
      if (letter === 'x') index += 4;
      else if (letter === 'u') {
        if (source[index + 2] === '{') return null;
        index += 6;
      } else if (letter === 'c' || letter === 'p' || letter === 'P') return null;
      else index += 2;
      const width = escapeWidth(letter);
      if (width === null) {
        min = 0;
        unit = ZERO;
      } else {
        unit = width.max;
        runs = width.runs;
        if (/[.\-'"/:]/.test(letter)) literal = letter;
      }
    } else if (char === '[') {
      let end = index + 1;
      if (source[end] === '^') end++;
      if (source[end] === ']') end++;
      while (end < source.length && source[end] !== ']') end += source[end] === '\\' ? 2 : 1;
      if (end >= source.length) return null;
      runs = source[index + 1] === '^' ? null : classRuns(source.slice(index + 1, end));
      index = end + 1;
    } else if (char === '(') {
      let depth = 0;
      let end = index;
      let inClass = false;
      for (; end < source.length; end++) {
        const inner = source[end]!;
        if (inner === '\\') {
          end++;
          continue;
        }
        if (inClass) {
          if (inner === ']') inClass = false;
          continue;
        }
        if (inner === '[') inClass = true;
        else if (inner === '(') depth++;
        else if (inner === ')' && --depth === 0) break;
      }
      if (end >= source.length) return null;
      const head = source.slice(index, index + 4);
      let bodyStart: number;
      if (head.startsWith('(?:')) bodyStart = index + 3;
      else if (head.startsWith('(?=') || head.startsWith('(?!') || head === '(?<=' || head === '(?<!') bodyStart = -1;
      else if (head.startsWith('(?')) return null;
      else bodyStart = index + 1;
      if (bodyStart < 0) {
        min = 0;
        unit = ZERO;
      } else {
        alternatives = topLevelAlternatives(source.slice(bodyStart, end));
        let groupMin = Infinity;
        let groupMax: WidthBound = ZERO;
        for (const alternative of alternatives) {
          const width = sequenceWidth(alternative);
          if (width === null) return null;
          groupMin = Math.min(groupMin, width.min);
          groupMax = either(groupMax, width.max);
        }
        min = groupMin;
        unit = groupMax;
      }
      index = end + 1;
    } else if (char === '^' || char === '$') {
      min = 0;
      unit = ZERO;
      index++;
    } else if (char === ')' || char === '|' || char === '*' || char === '+' || char === '?' || char === '{') {
      return null;
    } else {
      if (char !== '.') literal = char;
      index++;
    }
    // A quantifier on the atom.
    let low = 1;
    let high = 1;
    const next = source[index];
    if (next === '?' || next === '*' || next === '+') {
      low = next === '+' ? 1 : 0;
      high = next === '?' ? 1 : Infinity;
      index++;
    } else if (next === '{') {
      const quantifier = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(index));
      if (quantifier === null) return null;
      low = Number(quantifier[1]);
      high = quantifier[2] === undefined ? low : quantifier[3] === '' ? Infinity : Number(quantifier[3]);
      index += quantifier[0].length;
    }
    if (source[index] === '?' && index > begin + 1 && /[?*+}]/.test(source[index - 1]!)) index++;
    const quantified = low !== 1 || high !== 1;
    let max: WidthBound;
    if (high === Infinity) {
      // A run of \s or \w characters is no longer than the text's longest such run.
      max = unit.c === 0 && unit.s === 0 && unit.w === 0 ? ZERO : runs === 's' ? { c: 0, s: 1, w: 0 } : runs === 'w' ? { c: 0, s: 0, w: 1 } : UNBOUNDED;
    } else max = times(unit, high);
    out.push({ source: source.slice(begin, index), min: min * low, max, alternatives: quantified ? null : alternatives, literal: quantified ? null : literal, quantified });
  }
  return out;
}

function sequenceWidth(source: string): { min: number; max: WidthBound } | null {
  const list = atoms(source);
  if (list === null) return null;
  let min = 0;
  let max: WidthBound = ZERO;
  for (const atom of list) {
    min += atom.min;
    max = add(max, atom.max);
  }
  return { min, max };
}

/** The fixed string every match of an alternative starts with (its leading literal characters), or ''. */
function leadingString(source: string): string {
  const list = atoms(source);
  if (list === null) return '';
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
  const list = atoms(source);
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
    } else if (atom.alternatives !== null) {
      leaders = atom.alternatives.map(leadingString);
    }
    if (leaders !== null && maxBefore.c !== Infinity && leaders.every((leader) => PLAIN.test(leader))) {
      const score = Math.min(...leaders.map((leader) => leader.length));
      if (score > bestScore) {
        bestScore = score;
        best = { source, leaders: [...new Set(leaders)].sort(), minBefore, maxBefore };
      }
    }
    minBefore += atom.min;
    maxBefore = add(maxBefore, atom.max);
  }
  return best;
}

/** A plan for every top-level alternative of a part, or null when one has none. */
export function windowPlan(source: string, minLeader = 4): WindowAlternative[] | null {
  const plan: WindowAlternative[] = [];
  for (const alternative of topLevelAlternatives(source)) {
    const entry = windowAlternative(alternative, minLeader);
    if (entry === null) return null;
    plan.push(entry);
  }
  return plan;
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
  const plan: WindowAlternative[] = [];
  let windows = 0;
  for (const alternative of topLevelAlternatives(source)) {
    if (/\\(?:[1-9]|k<)/.test(alternative)) return null;
    const window = windowAlternative(alternative, minLeader);
    if (window !== null) {
      plan.push(window);
      windows++;
      continue;
    }
    const prefixes = requiredPrefixes(alternative);
    // A single character ("[", "(", a lone space) starts a match almost anywhere: recording its
    // offsets in every text's automaton pass would cost more than the scan it could spare.
    if (prefixes === null || prefixes.some((prefix) => prefix.length < 2)) return null;
    plan.push({ source: alternative, leaders: prefixes, minBefore: 0, maxBefore: ZERO });
  }
  return windows > 0 ? plan : null;
}

/** A part's plan: windows for every alternative, else windows mixed with prefixes, else null. */
export function partPlan(source: string, minLeader = 4): WindowAlternative[] | null {
  return windowPlan(source, minLeader) ?? mixedPlan(source, minLeader);
}

/** The longest runs of `\s` and of `\w` characters in a text (JavaScript's definitions, without the u flag). */
export function longestRuns(text: string): { s: number; w: number } {
  let s = 0;
  let w = 0;
  let runS = 0;
  let runW = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    const word = (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 95;
    const space =
      !word &&
      (code === 32 ||
        (code >= 9 && code <= 13) ||
        code === 0xa0 ||
        code === 0x1680 ||
        (code >= 0x2000 && code <= 0x200a) ||
        code === 0x2028 ||
        code === 0x2029 ||
        code === 0x202f ||
        code === 0x205f ||
        code === 0x3000 ||
        code === 0xfeff);
    runW = word ? runW + 1 : 0;
    runS = space ? runS + 1 : 0;
    if (runW > w) w = runW;
    if (runS > s) s = runS;
  }
  return { s, w };
}

export function boundOf(width: WidthBound, runs: { s: number; w: number }): number {
  return width.c + width.s * runs.s + width.w * runs.w;
}
