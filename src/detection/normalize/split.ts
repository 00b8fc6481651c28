/**
 * Character-split detection: "i g n o r e", "i.g.n.o.r.e", "i-g-n-o-r-e", one letter per line.
 * Runs of at least four single characters separated by the same kind of separator are joined
 * back into a word. The matcher is linear: each step consumes one letter and one separator run.
 */

// single char, separator (1-3 of space . - _ * | / ~ + , newline), repeated >= 3 times, then a final char.
const SPLIT_RUN = /(?<![a-z0-9])(?:[a-z0-9][ .\-_*|/~+,\n\t]{1,3}){3,}[a-z0-9](?![a-z0-9])/gi;
const SEPARATOR_RUN = /[ .\-_*|/~+,\n\t]{1,3}/g;

function isWhitespace(char: string): boolean {
  return char === ' ' || char === '\n' || char === '\t';
}

/** 'space' when every character of the separator is whitespace, 'mark' when none is, else 'mixed'. */
function separatorKind(separator: string): 'space' | 'mark' | 'mixed' {
  let spaces = 0;
  for (const char of separator) if (isWhitespace(char)) spaces++;
  return spaces === separator.length ? 'space' : spaces === 0 ? 'mark' : 'mixed';
}

export function joinSplitCharacters(input: string): { text: string; runs: number } | null {
  let runs = 0;
  const text = input.replace(SPLIT_RUN, (run) => {
    runs++;
    const separators = run.match(SEPARATOR_RUN) ?? [];
    // Letters joined by marks and words parted by whitespace ("i.g.n.o.r.e a.l.l", "a_d_m_i_n
    // p_a_s_s"): the whitespace is the word break, whatever its length.
    const kinds = new Set(separators.map(separatorKind));
    if (kinds.size === 2 && kinds.has('space') && kinds.has('mark')) {
      return run.replace(SEPARATOR_RUN, (separator) => (isWhitespace(separator[0]!) ? ' ' : ''));
    }
    // One kind of separator: the shortest joins letters; a longer one ("i g n o r e  a l l")
    // marks a word break.
    let shortest = 3;
    for (const separator of separators) shortest = Math.min(shortest, separator.length);
    return run.replace(SEPARATOR_RUN, (separator) => (separator.length > shortest ? ' ' : ''));
  });
  return runs > 0 ? { text, runs } : null;
}
