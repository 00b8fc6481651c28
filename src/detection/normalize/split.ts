/**
 * Character-split detection: "i g n o r e", "i.g.n.o.r.e", "i-g-n-o-r-e", one letter per line.
 * Runs of at least four single characters separated by 1-3 separator characters are joined back
 * into words. The matcher is linear: each step consumes one letter and one separator run.
 */
import { isWhitespace } from '../ml/gibberish.ts';

// single char, separator (1-3 of space . - _ * | / ~ + , newline), repeated >= 3 times, then a final char.
const SPLIT_RUN = /(?<![a-z0-9])(?:[a-z0-9][ .\-_*|/~+,\n\t]{1,3}){3,}[a-z0-9](?![a-z0-9])/gi;
const SEPARATOR_RUN = /[ .\-_*|/~+,\n\t]{1,3}/g;

/** 'space' when every character of the separator is whitespace, 'mark' when none is, else 'mixed'. */
function separatorKind(separator: string): 'space' | 'mark' | 'mixed' {
  let spaces = 0;
  for (let index = 0; index < separator.length; index++) if (isWhitespace(separator.charCodeAt(index))) spaces++;
  return spaces === separator.length ? 'space' : spaces === 0 ? 'mark' : 'mixed';
}

/**
 * Two separators of the same length, neither of which length can tell apart ("i g n o r e.a l l",
 * "i.g.n.o.r.e-a.l.l"): a spelled-out word uses its letter-joining separator several times and the
 * word break once, so when one separator occurs at least twice as often as the other and the rarer
 * one never follows itself, the rarer one is the word break. Null in every other case.
 */
function frequencyWordBreak(separators: string[]): string | null {
  const counts = new Map<string, number>();
  for (const separator of separators) counts.set(separator, (counts.get(separator) ?? 0) + 1);
  if (counts.size !== 2) return null;
  const [[first, firstCount], [second, secondCount]] = [...counts] as [[string, number], [string, number]];
  if (first.length !== second.length) return null;
  const [rare, rareCount, frequentCount] = firstCount < secondCount ? [first, firstCount, secondCount] : [second, secondCount, firstCount];
  if (frequentCount < 2 * rareCount) return null;
  for (let i = 1; i < separators.length; i++) if (separators[i] === rare && separators[i - 1] === rare) return null;
  return rare;
}

export function joinSplitCharacters(input: string): { text: string; runs: number } | null {
  let runs = 0;
  const text = input.replace(SPLIT_RUN, (run) => {
    runs++;
    const separators = run.match(SEPARATOR_RUN) ?? [];
    const wordBreak = frequencyWordBreak(separators);
    if (wordBreak !== null) return run.replace(SEPARATOR_RUN, (separator) => (separator === wordBreak ? ' ' : ''));
    // Letters joined by marks and words parted by whitespace ("i.g.n.o.r.e a.l.l", "a_d_m_i_n
    // p_a_s_s"): the whitespace is the word break, whatever its length.
    const kinds = new Set(separators.map(separatorKind));
    if (kinds.size === 2 && kinds.has('space') && kinds.has('mark')) {
      return run.replace(SEPARATOR_RUN, (separator) => (isWhitespace(separator.charCodeAt(0)) ? ' ' : ''));
    }
    // One kind of separator: the shortest joins letters; a longer one ("i g n o r e  a l l")
    // marks a word break.
    let shortest = 3;
    for (const separator of separators) shortest = Math.min(shortest, separator.length);
    return run.replace(SEPARATOR_RUN, (separator) => (separator.length > shortest ? ' ' : ''));
  });
  return runs > 0 ? { text, runs } : null;
}
