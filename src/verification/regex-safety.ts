/**
 * Linear-time check of org-supplied regular expressions, run when a policy is saved (and on
 * schemas' `pattern` keywords). V8's backtracking engine is exponential on nested quantifiers
 * and quantified alternations, and backreferences/lookarounds defeat any linear bound, so a
 * pattern is accepted only when it has star height ≤ 1: no backreference, no lookaround, no
 * quantified group that itself contains a quantifier or an alternation, at most 512 characters.
 * What remains can still be polynomial (`\s*\s*x` is quadratic when unanchored), so rules are
 * run on at most REGEX_INPUT_LIMIT characters of output (see constraint.ts).
 */

export const MAX_PATTERN_CHARS = 512;

export type RegexRefusal = 'too_long' | 'invalid' | 'backreference' | 'lookaround' | 'nested_quantifier' | 'quantified_alternation';

/** Parses `(?i)` prefix; returns the RegExp or the reason it is refused. */
export function compileSafeRegex(source: string): { regex: RegExp } | { refused: RegexRefusal } {
  if (source.length > MAX_PATTERN_CHARS) return { refused: 'too_long' };
  let flags = 'u';
  let body = source;
  if (body.startsWith('(?i)')) {
    flags += 'i';
    body = body.slice(4);
  }
  const refusal = structuralRefusal(body);
  if (refusal !== null) return { refused: refusal };
  try {
    return { regex: new RegExp(body, flags) };
  } catch {
    return { refused: 'invalid' };
  }
}

interface Group {
  quantified: boolean;
  alternation: boolean;
}

function structuralRefusal(body: string): RegexRefusal | null {
  // Per open group: does it contain a quantifier / an alternation (at any depth)?
  const stack: Group[] = [{ quantified: false, alternation: false }];
  let inClass = false;
  for (let index = 0; index < body.length; index += 1) {
    const char = body[index]!;
    if (char === '\\') {
      const next = body[index + 1] ?? '';
      if (!inClass && (/[1-9]/.test(next) || next === 'k')) return 'backreference';
      index += 1;
      continue;
    }
    if (inClass) {
      if (char === ']') inClass = false;
      continue;
    }
    if (char === '[') {
      inClass = true;
      continue;
    }
    if (char === '(') {
      if (body.startsWith('(?=', index) || body.startsWith('(?!', index) || body.startsWith('(?<=', index) || body.startsWith('(?<!', index)) return 'lookaround';
      stack.push({ quantified: false, alternation: false });
      continue;
    }
    if (char === '|') {
      stack[stack.length - 1]!.alternation = true;
      continue;
    }
    if (char === ')') {
      const group = stack.pop();
      if (group === undefined || stack.length === 0) return 'invalid';
      const quantifier = quantifierAt(body, index + 1);
      if (quantifier) {
        if (group.quantified) return 'nested_quantifier';
        if (group.alternation) return 'quantified_alternation';
      }
      const parent = stack[stack.length - 1]!;
      parent.quantified ||= group.quantified || quantifier;
      parent.alternation ||= group.alternation;
      continue;
    }
    if (char === '*' || char === '+' || char === '?' || char === '{') {
      if (char === '{' && !/^\{\d+(,\d*)?\}/.test(body.slice(index, index + 16))) continue;
      stack[stack.length - 1]!.quantified = true;
    }
  }
  return null;
}

function quantifierAt(body: string, index: number): boolean {
  const char = body[index];
  if (char === '*' || char === '+' || char === '?') return true;
  // {n} with n fixed is a repetition too ((ab){3} is fine, but ((a+)){3} nests).
  return char === '{' && /^\{\d+(,\d*)?\}/.test(body.slice(index, index + 16));
}
