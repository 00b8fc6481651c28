/** Top-level alternatives of a regular expression's source (catalogue patterns and their parts). */

/**
 * Splits a regular expression's source at each "|" outside every group and character class. A
 * catalogue pattern's gap token (⟪n:…⟫) is skipped whole; a part's source, cut at its gaps, has none.
 */
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
