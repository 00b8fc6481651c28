/**
 * Bounded-time check of org-supplied regular expressions, run when a policy is saved, on the
 * guard API's `policy`, and on every `pattern`/`patternProperties` key of a JSON Schema before
 * ajv compiles it. V8's engine backtracks, so a pattern is accepted only when the number of ways
 * it can match a given stretch of text is bounded by a constant (or by the text length for the
 * one unbounded quantifier):
 *
 * - no backreference, no lookaround (they defeat any bound);
 * - no quantified group containing a quantifier or an alternation (`(a+)+`, `(a|aa)*`);
 * - at most ONE unbounded quantifier (`*`, `+`, `{n,}`) in the whole pattern, unless every
 *   unbounded quantifier is character-class separated: two unbounded quantifiers over
 *   overlapping characters (`\s*\s*x`, `'\s*'.repeat(12)`) can split a run of length n in
 *   O(n^k) ways. Several are accepted only when the pattern is one top-level sequence (no
 *   alternation), each unbounded quantifier applies to a single character atom (a character,
 *   escape or class) outside any group, and its atom's characters are disjoint from those of
 *   everything that can come next — the following atoms up to and including the first one that
 *   cannot match empty (`\s*\S+`, `\d+,\d+`, `key:\s*\w+`; not `\s*\s+`, `\w+\s*\w+`). Then
 *   at every position only the longest run can be followed, so each quantifier's backtracking
 *   fails in constant steps and the bound below still holds. Disjointness is decided exactly, with
 *   the pattern's own flags (case folding included), by scanning every code point once;
 * - bounded quantifiers at most {0,100}, and the product of the choices the bounded parts offer
 *   (`?` = 2, `{n,m}` = m−n+1, an alternation = its branch count) at most 256 — or at most 4
 *   when the pattern also has its unbounded quantifier.
 *
 * Per start position the engine then explores at most `choices × (n + 1)` paths, so a pattern
 * without an unbounded quantifier is linear in the input, and one with it is at most quadratic
 * (unanchored search retries every start position): those run on at most
 * UNBOUNDED_REGEX_INPUT_LIMIT characters, the others on REGEX_INPUT_LIMIT (see constraint.ts and
 * the ajv regExp wrapper in structural.ts).
 */
import { LRUCache } from 'lru-cache';
import { entryBound } from '../platform/lru.ts';

export const MAX_PATTERN_CHARS = 512;
export const MAX_BOUNDED_REPEAT = 100;
export const MAX_FIXED_REPEAT = 1_000;
export const MAX_CHOICES = 256;
export const MAX_CHOICES_WITH_UNBOUNDED = 4;
/** Class-against-class comparisons (each a scan of every code point) one pattern may need; more → refused. */
export const MAX_CLASS_COMPARISONS = 8;
/** Characters a linear pattern (no unbounded quantifier) runs on. */
export const REGEX_INPUT_LIMIT = 65_536;
/** Characters a pattern with its one unbounded quantifier runs on (quadratic worst case). */
export const UNBOUNDED_REGEX_INPUT_LIMIT = 4_096;

export type RegexRefusal =
  | 'too_long'
  | 'invalid'
  | 'backreference'
  | 'lookaround'
  | 'nested_quantifier'
  | 'quantified_alternation'
  | 'multiple_unbounded_quantifiers'
  | 'repeat_too_large'
  | 'too_many_choices';

/**
 * Uncached class-against-class scans left (each 10–40 ms, more on a loaded machine). A pattern
 * gets its own MAX_CLASS_COMPARISONS unless the caller shares one budget among several patterns
 * (the patterns of one JSON Schema, schema-limits.ts); `exhausted` is set when a comparison was
 * refused for want of scans, so the caller can tell that refusal from a real overlap.
 */
export interface ScanBudget {
  scans: number;
  /**
   * Atom comparisons of any kind left (a literal's is a RegExp built and run, a cached pair a
   * lookup): their number grows with the square of a pattern's atoms (`丁*七*丅*…`), so they are
   * counted too, cached or not. Unlimited when absent.
   */
  comparisons?: number;
  /**
   * Class-against-class comparisons left, cached or not: what a stored pattern may cost again when
   * the cache is cold, so that what was accepted once stays bounded. Unlimited when absent.
   */
  classComparisons?: number;
  exhausted?: boolean;
}

/**
 * Atom comparisons one pattern may need alone (a pattern of ordinary size needs a handful): as many
 * as a policy's or a schema's patterns together, so a pattern they accepted is never refused when
 * ajv compiles it on its own.
 */
export const MAX_ATOM_COMPARISONS = 2_048;

const unboundedRegexes = new WeakSet<RegExp>();

/** Every Unicode scalar value once (surrogates excluded), built on first use (~2.2 M UTF-16 units). */
let everyCodePoint: string | null = null;
function allCodePoints(): string {
  if (everyCodePoint !== null) return everyCodePoint;
  const chunks: string[] = [];
  const buffer: number[] = [];
  for (let codePoint = 0; codePoint <= 0x10ffff; codePoint += 1) {
    if (codePoint === 0xd800) codePoint = 0xe000;
    buffer.push(codePoint);
    if (buffer.length === 8_192) {
      chunks.push(String.fromCodePoint(...buffer));
      buffer.length = 0;
    }
  }
  chunks.push(String.fromCodePoint(...buffer));
  everyCodePoint = chunks.join('');
  return everyCodePoint;
}

const overlapCache = new LRUCache<string, boolean>(entryBound(4_096));

/** The character a single-literal atom stands for (`x`, `\\.`), or null for a class, escape class or `.`. */
const isHighSurrogate = (char: string) => char >= '\ud800' && char <= '\udbff';
const isLowSurrogate = (char: string) => char >= '\udc00' && char <= '\udfff';

function literalOf(atom: string): string | null {
  if (atom.length === 1 && atom !== '.') return atom;
  // One character outside the BMP (its surrogate pair).
  if (atom.length === 2 && isHighSurrogate(atom[0]!) && isLowSurrogate(atom[1]!)) return atom;
  if (atom.length === 2 && atom[0] === '\\' && !/[0-9A-Za-z]/.test(atom[1]!)) return atom[1]!;
  return null;
}

/**
 * Whether two single-character atoms (`\\s`, `[a-z]`, `x`, `.`) can match the same character under
 * `flags` (the engine's own semantics, case folding included). A literal is tested against the
 * other atom directly; two classes by one scan of every code point (10–40 ms; `budget.scans`
 * counts the uncached ones, and the caller refuses a pattern that needs too many).
 */
export function atomsOverlap(first: string, second: string, flags: string, budget: ScanBudget = { scans: Number.POSITIVE_INFINITY }): boolean {
  const spend = (counter: 'comparisons' | 'classComparisons'): boolean => {
    const left = budget[counter];
    if (left === undefined) return true;
    if (left <= 0) {
      budget.exhausted = true;
      return false;
    }
    budget[counter] = left - 1;
    return true;
  };
  if (!spend('comparisons')) return true;
  const clean = flags.replace(/[gy]/g, '');
  const firstLiteral = literalOf(first);
  const secondLiteral = literalOf(second);
  if (firstLiteral !== null || secondLiteral !== null) {
    // A literal against an atom: one small RegExp, a few µs (not cached: the cache is kept for scans).
    try {
      return firstLiteral !== null ? new RegExp(`^(?:${second})$`, clean).test(firstLiteral) : new RegExp(`^(?:${first})$`, clean).test(secondLiteral!);
    } catch {
      return true;
    }
  }
  if (!spend('classComparisons')) return true;
  const key = `${clean}\u0000${first}\u0000${second}`;
  const hit = overlapCache.get(key);
  if (hit !== undefined) return hit;
  if (budget.scans <= 0) {
    budget.exhausted = true;
    return true;
  }
  budget.scans -= 1;
  let overlap = true;
  try {
    // Lookahead in svc's own probe over a fixed string, never over user input.
    overlap = new RegExp(`(?=${first})(?:${second})`, clean).test(allCodePoints());
  } catch {
    overlap = true;
  }
  overlapCache.set(key, overlap);
  return overlap;
}

/** How many characters of input `regex` (from compileSafeRegex) may run on. */
export function regexInputLimit(regex: RegExp): number {
  return unboundedRegexes.has(regex) ? UNBOUNDED_REGEX_INPUT_LIMIT : REGEX_INPUT_LIMIT;
}

/** Parses `(?i)` prefix; returns the RegExp or the reason it is refused. `budget`: see ScanBudget. */
export function compileSafeRegex(source: string, baseFlags = 'u', budget?: ScanBudget): { regex: RegExp } | { refused: RegexRefusal } {
  if (source.length > MAX_PATTERN_CHARS) return { refused: 'too_long' };
  let flags = baseFlags;
  let body = source;
  if (body.startsWith('(?i)')) {
    if (!flags.includes('i')) flags += 'i';
    body = body.slice(4);
  }
  const shape = analyse(body, flags, budget ?? { scans: MAX_CLASS_COMPARISONS, comparisons: MAX_ATOM_COMPARISONS });
  if ('refused' in shape) return shape;
  try {
    const regex = new RegExp(body, flags);
    if (shape.unbounded) unboundedRegexes.add(regex);
    return { regex };
  } catch {
    return { refused: 'invalid' };
  }
}

interface Group {
  quantified: boolean;
  branches: number;
  /** Product of the choices of the current branch / the finished branches (summed). */
  current: number;
  finished: number;
}

type Quantifier = { length: number; unbounded: boolean; choices: number; tooLarge: boolean; nullable: boolean } | null;

/** One element of the top-level sequence: a single-character atom (its source), a group (`atom: null`, any character) or an assertion. */
interface Item {
  atom: string | null;
  zeroWidth: boolean;
  nullable: boolean;
  unbounded: boolean;
}

const ZERO_WIDTH_ESCAPES = new Set(['b', 'B']);

function analyse(body: string, flags: string, budget: ScanBudget): { unbounded: boolean } | { refused: RegexRefusal } {
  const unicode = flags.includes('u') || flags.includes('v');
  const stack: Group[] = [{ quantified: false, branches: 1, current: 1, finished: 0 }];
  let inClass = false;
  let classStart = 0;
  let unboundedCount = 0;
  /** Unbounded quantifiers inside a group or on a group: several of them are never accepted. */
  let unboundedOutsideSequence = 0;
  const items: Item[] = [];
  // Quantifier right after an atom: applies to the previous atom (a character, class or group) starting at atomStart.
  const applyQuantifier = (index: number, group: Group | null, atomStart: number): { next: number; refused?: RegexRefusal } => {
    const quantifier = quantifierAt(body, index);
    const top = stack[stack.length - 1]!;
    const topLevel = stack.length === 1;
    const atom = group === null ? body.slice(atomStart, index) : null;
    const zeroWidth = group === null && (atom === '^' || atom === '$' || (atom!.length === 2 && atom![0] === '\\' && ZERO_WIDTH_ESCAPES.has(atom![1]!)));
    const groupChoices = group === null ? 1 : group.finished + group.current;
    if (quantifier === null) {
      if (group !== null) top.current = Math.min(top.current * groupChoices, Number.MAX_SAFE_INTEGER);
      if (topLevel) items.push({ atom, zeroWidth, nullable: group !== null || zeroWidth, unbounded: false });
      return { next: index };
    }
    if (group !== null) {
      if (group.quantified) return { next: index, refused: 'nested_quantifier' };
      if (group.branches > 1) return { next: index, refused: 'quantified_alternation' };
    }
    if (quantifier.tooLarge) return { next: index, refused: 'repeat_too_large' };
    if (quantifier.unbounded) {
      unboundedCount += 1;
      if (!topLevel || group !== null) unboundedOutsideSequence += 1;
      if (unboundedCount > 1 && unboundedOutsideSequence > 0) return { next: index, refused: 'multiple_unbounded_quantifiers' };
    }
    if (topLevel) items.push({ atom, zeroWidth, nullable: group !== null || zeroWidth || quantifier.nullable, unbounded: quantifier.unbounded });
    top.quantified = true;
    top.current = Math.min(top.current * quantifier.choices, Number.MAX_SAFE_INTEGER);
    let next = index + quantifier.length;
    if (body[next] === '?') next += 1; // lazy form
    return { next };
  };
  for (let index = 0; index < body.length; index += 1) {
    const char = body[index]!;
    if (inClass) {
      if (char === '\\') index += 1;
      else if (char === ']') {
        inClass = false;
        const outcome = applyQuantifier(index + 1, null, classStart);
        if (outcome.refused !== undefined) return { refused: outcome.refused };
        index = outcome.next - 1;
      }
      continue;
    }
    if (char === '\\') {
      const next = body[index + 1] ?? '';
      if (/[1-9]/.test(next) || next === 'k') return { refused: 'backreference' };
      const atomStart = index;
      index += 1;
      // \p{...}, \u{...}: skip the braces so they are not read as a quantifier; \xHH, \uHHHH, \cX are one atom.
      if ((next === 'p' || next === 'P' || next === 'u') && body[index + 1] === '{') {
        const close = body.indexOf('}', index);
        if (close < 0) return { refused: 'invalid' };
        index = close;
      } else if (next === 'x') index += 2;
      else if (next === 'u') index += 4;
      else if (next === 'c') index += 1;
      if (index >= body.length) return { refused: 'invalid' };
      const outcome = applyQuantifier(index + 1, null, atomStart);
      if (outcome.refused !== undefined) return { refused: outcome.refused };
      index = outcome.next - 1;
      continue;
    }
    if (char === '[') {
      inClass = true;
      classStart = index;
      if (body[index + 1] === ']') index += 1;
      continue;
    }
    if (char === '(') {
      if (body.startsWith('(?=', index) || body.startsWith('(?!', index) || body.startsWith('(?<=', index) || body.startsWith('(?<!', index)) return { refused: 'lookaround' };
      stack.push({ quantified: false, branches: 1, current: 1, finished: 0 });
      if (body.startsWith('(?:', index)) index += 2;
      else if (body.startsWith('(?<', index)) {
        const close = body.indexOf('>', index);
        if (close < 0) return { refused: 'invalid' };
        index = close;
      }
      continue;
    }
    if (char === '|') {
      const top = stack[stack.length - 1]!;
      top.branches += 1;
      top.finished = Math.min(top.finished + top.current, Number.MAX_SAFE_INTEGER);
      top.current = 1;
      continue;
    }
    if (char === ')') {
      const group = stack.pop();
      if (group === undefined || stack.length === 0) return { refused: 'invalid' };
      const parent = stack[stack.length - 1]!;
      const outcome = applyQuantifier(index + 1, group, index);
      if (outcome.refused !== undefined) return { refused: outcome.refused };
      parent.quantified ||= group.quantified;
      index = outcome.next - 1;
      continue;
    }
    if (char === '*' || char === '+' || char === '?' || (char === '{' && quantifierAt(body, index) !== null)) return { refused: 'invalid' }; // quantifier with nothing to repeat
    // With the u flag a character outside the BMP (two UTF-16 units) is one atom: a quantifier
    // after it repeats all of it, not its low surrogate (`😀*😀*x` was read as two different atoms).
    const width = unicode && isHighSurrogate(char) && isLowSurrogate(body[index + 1] ?? '') ? 2 : 1;
    const outcome = applyQuantifier(index + width, null, index);
    if (outcome.refused !== undefined) return { refused: outcome.refused };
    index = outcome.next - 1;
  }
  if (inClass || stack.length !== 1) return { refused: 'invalid' };
  const root = stack[0]!;
  if (unboundedCount > 1 && (root.branches > 1 || !separated(items, flags, budget))) return { refused: 'multiple_unbounded_quantifiers' };
  const choices = root.finished + root.current;
  const unbounded = unboundedCount > 0;
  if (choices > (unbounded ? MAX_CHOICES_WITH_UNBOUNDED : MAX_CHOICES)) return { refused: 'too_many_choices' };
  return { unbounded };
}

/**
 * Every unbounded quantifier of the top-level sequence is followed only by atoms that cannot
 * match its characters: the next atoms up to and including the first that cannot match empty
 * (assertions are transparent; a group counts as matching anything).
 */
function separated(items: readonly Item[], flags: string, budget: ScanBudget): boolean {
  for (let index = 0; index < items.length; index += 1) {
    const item = items[index]!;
    if (!item.unbounded) continue;
    if (item.atom === null) return false;
    for (let next = index + 1; next < items.length; next += 1) {
      const following = items[next]!;
      if (following.zeroWidth) continue;
      if (following.atom === null || atomsOverlap(item.atom, following.atom, flags, budget)) return false;
      if (!following.nullable) break;
    }
  }
  return true;
}

function quantifierAt(body: string, index: number): Quantifier {
  const char = body[index];
  if (char === '*') return { length: 1, unbounded: true, choices: 1, tooLarge: false, nullable: true };
  if (char === '+') return { length: 1, unbounded: true, choices: 1, tooLarge: false, nullable: false };
  if (char === '?') return { length: 1, unbounded: false, choices: 2, tooLarge: false, nullable: true };
  if (char !== '{') return null;
  const match = /^\{(\d+)(,(\d*))?\}/.exec(body.slice(index, index + 24));
  if (match === null) return null;
  const low = Number(match[1]);
  // A fixed count or a lower bound adds no choice (linear); only absurd sizes are refused.
  const nullable = low === 0;
  if (match[2] === undefined) return { length: match[0].length, unbounded: false, choices: 1, tooLarge: low > MAX_FIXED_REPEAT, nullable };
  if (match[3] === '') return { length: match[0].length, unbounded: true, choices: 1, tooLarge: low > MAX_FIXED_REPEAT, nullable };
  const high = Number(match[3]);
  return { length: match[0].length, unbounded: false, choices: Math.max(1, high - low + 1), tooLarge: high > MAX_BOUNDED_REPEAT || low > high, nullable };
}
