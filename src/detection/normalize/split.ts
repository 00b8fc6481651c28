/**
 * Character-split detection: "i g n o r e", "i.g.n.o.r.e", "i-g-n-o-r-e", one letter per line.
 * Runs of at least four single characters separated by 1-3 separator characters are joined back
 * into words. The matcher is linear: each step consumes one letter and one separator run.
 */
import { isWhitespace } from '../ml/gibberish.ts';

// single char, separator (1-3 of space . - _ * | / ~ + , : ; • · newline), repeated >= 3 times, then a final char.
const SPLIT_RUN = /(?<![a-z0-9])(?:[a-z0-9][ .\-_*|/~+,:;•·\n\t]{1,3}){3,}[a-z0-9](?![a-z0-9])/gi;
const SEPARATOR_RUN = /[ .\-_*|/~+,:;•·\n\t]{1,3}/g;
// The separators read before evasion-split12. A run that uses one of the others (":" ";" "•" "·",
// common in times, ratios, key:value lists and bullets) is read joined only when the reading
// parts words (below); otherwise its runs of the earlier separators are read as before.
const EARLIER_SPLIT_RUN = /(?<![a-z0-9])(?:[a-z0-9][ .\-_*|/~+,\n\t]{1,3}){3,}[a-z0-9](?![a-z0-9])/gi;
const LATER_SEPARATOR = /[:;•·]/;
const VOWEL = /[aeiouy]/i;
const SEPARATOR_CHARS = new Set([...' .-_*|/~+,:;•·\n\t']);
// A run with those separators is read in stretches of at most this many characters (cut at a
// separator), each on its own: a spelled-out instruction is a sentence or two, and padding a run
// past the stretch ("x:x:x:…") no longer hides the words in it.
const LATER_RUN_LIMIT = 1024;
// At most this many characters of such runs are read per text: reading a 64 KB run of "a:b;c•"
// would cost what main never spends on it. Beyond it, runs are read as before evasion-split12.
const LATER_READ_BUDGET = 16 * 1024;

/** The expressions above, for the ReDoS verdict test. */
export const SPLIT_EXPRESSIONS: readonly RegExp[] = [SPLIT_RUN, SEPARATOR_RUN, EARLIER_SPLIT_RUN, LATER_SEPARATOR, VOWEL];

/** 'space' when every character of the separator is whitespace, 'mark' when none is, else 'mixed'. */
function separatorKind(separator: string): 'space' | 'mark' | 'mixed' {
  let spaces = 0;
  for (let index = 0; index < separator.length; index++) if (isWhitespace(separator.charCodeAt(index))) spaces++;
  return spaces === separator.length ? 'space' : spaces === 0 ? 'mark' : 'mixed';
}

/** "a" and "i", the one-letter words a spelled-out sentence has between two word breaks. */
function isOneLetterWord(letter: string): boolean {
  const lower = letter.toLowerCase();
  return lower === 'a' || lower === 'i';
}

/**
 * Separators of one length, which length cannot tell apart ("i g n o r e.a l l", "i.g.n.o.r.e-a.l.l",
 * "i g n o r e.a l l-p r e v"): a spelled-out word uses its letter-joining separator several times
 * and a word break once, so when one separator occurs at least twice as often as all the others
 * together and no two of the others follow each other (except around the one-letter words "a" and
 * "i": "…e-a-p…"), the others are the word breaks. Returns the joining separator, or null.
 */
function frequencyJoiner(separators: string[], letters: string[]): string | null {
  const counts = new Map<string, number>();
  for (const separator of separators) counts.set(separator, (counts.get(separator) ?? 0) + 1);
  if (counts.size < 2) return null;
  let joiner = '';
  let joinerCount = 0;
  for (const [separator, count] of counts) {
    if (separator.length !== separators[0]!.length) return null;
    if (count > joinerCount) [joiner, joinerCount] = [separator, count];
  }
  if (joinerCount < 2 * (separators.length - joinerCount)) return null;
  for (let i = 1; i < separators.length; i++) {
    if (separators[i] !== joiner && separators[i - 1] !== joiner && !isOneLetterWord(letters[i]!)) return null;
  }
  return joiner;
}

/** The run's reading: its letters joined, its word breaks as single spaces. */
function readRun(run: string): string {
  const separators = run.match(SEPARATOR_RUN) ?? [];
  const letters = run.split(SEPARATOR_RUN);
  const joiner = frequencyJoiner(separators, letters);
  if (joiner !== null) return run.replace(SEPARATOR_RUN, (separator) => (separator === joiner ? '' : ' '));
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
}

/**
 * At least two words with a vowel, and at least two words in three with one: a reading of words,
 * not of digits or codes ("1234 5678", "abcd 1234 efgh" are not read). A number or a word without
 * a vowel among them ("ignore all 10 rules", "reveal the pwd") no longer stops the reading.
 */
function readsAsWords(reading: string): boolean {
  const words = reading.split(' ');
  let voweled = 0;
  for (const word of words) if (VOWEL.test(word)) voweled++;
  return words.length >= 2 && voweled >= 2 && 3 * voweled >= 2 * words.length;
}

/**
 * A run with the later separators cut into stretches of at most LATER_RUN_LIMIT characters, each
 * ending on a letter; the separator between two stretches is kept with the next one's start.
 * Returns [stretch, separator before it] pairs.
 */
function stretches(run: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let start = 0;
  let before = '';
  while (run.length - start > LATER_RUN_LIMIT) {
    // The last letter at or before the limit that a separator follows: a letter, then 1-3 marks.
    let end = start + LATER_RUN_LIMIT;
    while (end > start && (SEPARATOR_CHARS.has(run[end - 1]!) || !SEPARATOR_CHARS.has(run[end] ?? ''))) end--;
    if (end === start) break;
    out.push([run.slice(start, end), before]);
    let next = end;
    while (next < run.length && SEPARATOR_CHARS.has(run[next]!)) next++;
    before = run.slice(end, next);
    start = next;
  }
  out.push([run.slice(start), before]);
  return out;
}

export function joinSplitCharacters(input: string): { text: string; runs: number } | null {
  let runs = 0;
  const readEarlier = (run: string): string => {
    runs++;
    return readRun(run);
  };
  let budget = LATER_READ_BUDGET;
  const text = input.replace(SPLIT_RUN, (run) => {
    if (!LATER_SEPARATOR.test(run)) return readEarlier(run);
    // Each stretch read as words, while the budget lasts; a run none of whose stretches reads as
    // words is read as before (its parts with the earlier separators).
    const parts = stretches(run);
    const readings = parts.map(([stretch]) => {
      if (budget < stretch.length) return null;
      budget -= stretch.length;
      const reading = readRun(stretch);
      return readsAsWords(reading) ? reading : null;
    });
    if (readings.every((reading) => reading === null)) return run.replace(EARLIER_SPLIT_RUN, readEarlier);
    return parts
      .map(([stretch, before], index) => {
        const reading = readings[index];
        if (reading === null || reading === undefined) return before + stretch.replace(EARLIER_SPLIT_RUN, readEarlier);
        runs++;
        return (index > 0 ? ' ' : '') + reading;
      })
      .join('');
  });
  return runs > 0 ? { text, runs } : null;
}
