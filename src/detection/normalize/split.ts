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
// A run with those separators longer than this is not read as words: a spelled-out instruction is
// a sentence or two, and reading a 64 KB run of "a:b;c•" would cost what main never spends on it.
const LATER_RUN_LIMIT = 1024;

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

/** At least two words, each with a letter and a vowel: a reading of words, not of digits or codes. */
function readsAsWords(reading: string): boolean {
  const words = reading.split(' ');
  return words.length >= 2 && words.every((word) => VOWEL.test(word));
}

export function joinSplitCharacters(input: string): { text: string; runs: number } | null {
  let runs = 0;
  const readEarlier = (run: string): string => {
    runs++;
    return readRun(run);
  };
  const text = input.replace(SPLIT_RUN, (run) => {
    if (!LATER_SEPARATOR.test(run)) return readEarlier(run);
    const reading = run.length <= LATER_RUN_LIMIT ? readRun(run) : '';
    if (readsAsWords(reading)) {
      runs++;
      return reading;
    }
    return run.replace(EARLIER_SPLIT_RUN, readEarlier);
  });
  return runs > 0 ? { text, runs } : null;
}
