/**
 * Character-split detection: "i g n o r e", "i.g.n.o.r.e", "i-g-n-o-r-e", one letter per line.
 * Runs of at least four single characters separated by the same kind of separator are joined
 * back into a word. The matcher is linear: each step consumes one letter and one separator run.
 */

// single char, separator (1-3 of space . - _ * | / ~ + , newline), repeated >= 3 times, then a final char.
const SPLIT_RUN = /(?<![a-z0-9])(?:[a-z0-9][ .\-_*|/~+,\n\t]{1,3}){3,}[a-z0-9](?![a-z0-9])/gi;
const SEPARATOR_RUN = /[ .\-_*|/~+,\n\t]{1,3}/g;

export function joinSplitCharacters(input: string): { text: string; runs: number } | null {
  let runs = 0;
  const text = input.replace(SPLIT_RUN, (run) => {
    runs++;
    // The shortest separator joins letters; a longer one ("i g n o r e  a l l") marks a word break.
    let shortest = 3;
    for (const separator of run.match(SEPARATOR_RUN) ?? []) shortest = Math.min(shortest, separator.length);
    return run.replace(SEPARATOR_RUN, (separator) => (separator.length > shortest ? ' ' : ''));
  });
  return runs > 0 ? { text, runs } : null;
}
