/**
 * Bounded-time check of org-supplied regular expressions, run when a policy is saved, on the
 * guard API's `policy`, and on every `pattern`/`patternProperties` key of a JSON Schema before
 * ajv compiles it. V8's engine backtracks, so a pattern is accepted only when the number of ways
 * it can match a given stretch of text is bounded by a constant (or by the text length for the
 * one unbounded quantifier):
 *
 * - no backreference, no lookaround (they defeat any bound);
 * - no quantified group containing a quantifier or an alternation (`(a+)+`, `(a|aa)*`);
 * - at most ONE unbounded quantifier (`*`, `+`, `{n,}`) in the whole pattern: two unbounded
 *   quantifiers over overlapping characters (`\s*\s*x`, `'\s*'.repeat(12)`) can split a run of
 *   length n in O(n^k) ways;
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

export const MAX_PATTERN_CHARS = 512;
export const MAX_BOUNDED_REPEAT = 100;
export const MAX_FIXED_REPEAT = 1_000;
export const MAX_CHOICES = 256;
export const MAX_CHOICES_WITH_UNBOUNDED = 4;
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

const unboundedRegexes = new WeakSet<RegExp>();

/** How many characters of input `regex` (from compileSafeRegex) may run on. */
export function regexInputLimit(regex: RegExp): number {
  return unboundedRegexes.has(regex) ? UNBOUNDED_REGEX_INPUT_LIMIT : REGEX_INPUT_LIMIT;
}

/** Parses `(?i)` prefix; returns the RegExp or the reason it is refused. */
export function compileSafeRegex(source: string, baseFlags = 'u'): { regex: RegExp } | { refused: RegexRefusal } {
  if (source.length > MAX_PATTERN_CHARS) return { refused: 'too_long' };
  let flags = baseFlags;
  let body = source;
  if (body.startsWith('(?i)')) {
    if (!flags.includes('i')) flags += 'i';
    body = body.slice(4);
  }
  const shape = analyse(body);
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

type Quantifier = { length: number; unbounded: boolean; choices: number; tooLarge: boolean } | null;

function analyse(body: string): { unbounded: boolean } | { refused: RegexRefusal } {
  const stack: Group[] = [{ quantified: false, branches: 1, current: 1, finished: 0 }];
  let inClass = false;
  let unboundedCount = 0;
  // Quantifier right after an atom: applies to the previous atom (a character, class or group).
  const applyQuantifier = (index: number, group: Group | null): { next: number; refused?: RegexRefusal } => {
    const quantifier = quantifierAt(body, index);
    const top = stack[stack.length - 1]!;
    const groupChoices = group === null ? 1 : group.finished + group.current;
    if (quantifier === null) {
      if (group !== null) top.current = Math.min(top.current * groupChoices, Number.MAX_SAFE_INTEGER);
      return { next: index };
    }
    if (group !== null) {
      if (group.quantified) return { next: index, refused: 'nested_quantifier' };
      if (group.branches > 1) return { next: index, refused: 'quantified_alternation' };
    }
    if (quantifier.tooLarge) return { next: index, refused: 'repeat_too_large' };
    if (quantifier.unbounded) unboundedCount += 1;
    if (unboundedCount > 1) return { next: index, refused: 'multiple_unbounded_quantifiers' };
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
        const outcome = applyQuantifier(index + 1, null);
        if (outcome.refused !== undefined) return { refused: outcome.refused };
        index = outcome.next - 1;
      }
      continue;
    }
    if (char === '\\') {
      const next = body[index + 1] ?? '';
      if (/[1-9]/.test(next) || next === 'k') return { refused: 'backreference' };
      index += 1;
      // \p{...}, \u{...}, \x.. : skip the braces so they are not read as a quantifier.
      if ((next === 'p' || next === 'P' || next === 'u') && body[index + 1] === '{') {
        const close = body.indexOf('}', index);
        if (close < 0) return { refused: 'invalid' };
        index = close;
      }
      const outcome = applyQuantifier(index + 1, null);
      if (outcome.refused !== undefined) return { refused: outcome.refused };
      index = outcome.next - 1;
      continue;
    }
    if (char === '[') {
      inClass = true;
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
      const outcome = applyQuantifier(index + 1, group);
      if (outcome.refused !== undefined) return { refused: outcome.refused };
      parent.quantified ||= group.quantified;
      index = outcome.next - 1;
      continue;
    }
    if (char === '*' || char === '+' || char === '?' || (char === '{' && quantifierAt(body, index) !== null)) return { refused: 'invalid' }; // quantifier with nothing to repeat
    const outcome = applyQuantifier(index + 1, null);
    if (outcome.refused !== undefined) return { refused: outcome.refused };
    index = outcome.next - 1;
  }
  if (inClass || stack.length !== 1) return { refused: 'invalid' };
  const root = stack[0]!;
  const choices = root.finished + root.current;
  const unbounded = unboundedCount > 0;
  if (choices > (unbounded ? MAX_CHOICES_WITH_UNBOUNDED : MAX_CHOICES)) return { refused: 'too_many_choices' };
  return { unbounded };
}

function quantifierAt(body: string, index: number): Quantifier {
  const char = body[index];
  if (char === '*' || char === '+') return { length: 1, unbounded: true, choices: 1, tooLarge: false };
  if (char === '?') return { length: 1, unbounded: false, choices: 2, tooLarge: false };
  if (char !== '{') return null;
  const match = /^\{(\d+)(,(\d*))?\}/.exec(body.slice(index, index + 24));
  if (match === null) return null;
  const low = Number(match[1]);
  // A fixed count or a lower bound adds no choice (linear); only absurd sizes are refused.
  if (match[2] === undefined) return { length: match[0].length, unbounded: false, choices: 1, tooLarge: low > MAX_FIXED_REPEAT };
  if (match[3] === '') return { length: match[0].length, unbounded: true, choices: 1, tooLarge: low > MAX_FIXED_REPEAT };
  const high = Number(match[3]);
  return { length: match[0].length, unbounded: false, choices: Math.max(1, high - low + 1), tooLarge: high > MAX_BOUNDED_REPEAT || low > high };
}
