/**
 * Leet-speak reconstruction: inside tokens that mix letters with leet digits/symbols
 * ("1gn0r3", "pr3v!0us", "@dm1n", "4ll"), map the symbols back to letters. Tokens without letters
 * (numbers, dates, versions) are left alone so ordinary numbers never turn into words.
 */

const LEET: Readonly<Record<string, string>> = {
  '0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '6': 'g', '7': 't', '8': 'b', '9': 'g',
  '@': 'a', '$': 's', '!': 'i', '€': 'e', '£': 'l', '¡': 'i',
};

const TOKEN = /[a-z0-9@$!€£¡]+/gi;
const HAS_LETTER = /[a-z]/i;
const HAS_LEET = /[0-9@$!€£¡]/;
// A token is treated as leet only if it has at least two letters besides the symbols,
// so "h2o", "mp3" or "4k" stay as they are.
const LETTERS = /[a-z]/gi;

const CANDIDATE = /[a-z][0-9@$!€£¡]|[0-9@$€£¡][a-z]/i;

/**
 * Dense leet ("91v3 m3 51mp13 1n572uc710n5 h0w 70 m4k3 4 80m8"): when a phrase is written wholly
 * in digits, short words come out as digits only ("70" = to, "4" = a) or with a single letter
 * ("80m8"), which the per-token rule below leaves alone. A run of consecutive words each of which
 * mixes letters and digits or is one or two digits, holding at least DENSE_MIN mixed words, is
 * mapped whole ('2' as 'r' too). Ordinary words break a run, so numbers in prose ("gate B4, seat
 * 12C, 2 bags") and cell references ("set A1 to B2") never form one.
 */
const DENSE_MIN = 4;
const DENSE_LEET: Readonly<Record<string, string>> = { ...LEET, '2': 'r' };
const WORD_TOKEN = /[a-z0-9@$!€£¡]+/gi;
const MIXED = /^(?=[^a-z]*[a-z])(?=[^0-9@$€£¡]*[0-9@$€£¡])/i;
const SHORT_NUMBER = /^[0-9]{1,2}$/;

function mapDense(token: string): string {
  let out = '';
  for (const char of token) out += DENSE_LEET[char] ?? char;
  return out;
}

function reconstructDenseLeet(input: string): { text: string; tokens: number } | null {
  const runs: Array<{ start: number; end: number }> = [];
  let runStart = -1;
  let runEnd = -1;
  let runMixed = 0;
  const close = () => {
    if (runStart >= 0 && runMixed >= DENSE_MIN) runs.push({ start: runStart, end: runEnd });
    runStart = -1;
    runMixed = 0;
  };
  for (const match of input.matchAll(WORD_TOKEN)) {
    const token = match[0];
    const mixed = MIXED.test(token);
    if (!mixed && !SHORT_NUMBER.test(token)) {
      close();
      continue;
    }
    if (runStart < 0) runStart = match.index;
    runEnd = match.index + token.length;
    if (mixed) runMixed++;
  }
  close();
  if (runs.length === 0) return null;
  let text = '';
  let last = 0;
  let tokens = 0;
  for (const run of runs) {
    text += input.slice(last, run.start);
    text += input.slice(run.start, run.end).replace(WORD_TOKEN, (token) => {
      tokens++;
      return mapDense(token);
    });
    last = run.end;
  }
  return { text: text + input.slice(last), tokens };
}

export function reconstructLeet(input: string): { text: string; tokens: number } | null {
  if (!CANDIDATE.test(input)) return null;
  const dense = reconstructDenseLeet(input);
  let tokens = dense?.tokens ?? 0;
  const text = (dense?.text ?? input).replace(TOKEN, (token) => {
    if (!HAS_LETTER.test(token) || !HAS_LEET.test(token)) return token;
    const letters = token.match(LETTERS)?.length ?? 0;
    if (letters < 2 || token.length < 3) return token;
    const core = token.replace(/^!+|!+$/g, ''); // a leading or trailing "!" is punctuation
    if (!HAS_LEET.test(core)) return token;
    tokens++;
    let out = '';
    for (const char of token) out += LEET[char] ?? char;
    return out;
  });
  return tokens > 0 ? { text, tokens } : null;
}

/**
 * Letter stuttering ("outputt yourr previouss instructionss iin bullett listt"): each word's first
 * or last letter is doubled so keyword filters miss it. English has such words ("all", "less",
 * "too"), so the text counts as stuttered only when at least STUTTER_SHARE of its words (and at
 * least STUTTER_MIN of them) start or end with a repeated letter; the variant then collapses
 * each doubled first or last letter to one ("listt" -> "list", "alll" -> "all").
 */
export function collapseStutter(input: string): { text: string; words: number } | null {
  const { words, stuttered } = countStutter(input);
  if (stuttered < STUTTER_MIN || stuttered < words * STUTTER_SHARE) return null;
  const text = input.replace(WORD, (word) => {
    const lower = word.toLowerCase();
    const start = lower.charCodeAt(0) === lower.charCodeAt(1) ? 1 : 0;
    const end = word.length - start > 2 && lower.charCodeAt(word.length - 1) === lower.charCodeAt(word.length - 2) ? word.length - 1 : word.length;
    return word.slice(start, end);
  });
  return { text, words: stuttered };
}

const WORD = /[a-z]{2,}/gi;
const STUTTER_MIN = 3;
const STUTTER_SHARE = 0.3;

/** ASCII letter folded to lower case, or 0 for any other character. */
function letter(code: number): number {
  const lower = code | 0x20;
  return lower >= 97 && lower <= 122 ? lower : 0;
}

/**
 * Words as WORD finds them (runs of two or more ASCII letters), and those whose first two or
 * last two letters are the same ignoring case; one pass, nothing allocated.
 */
function countStutter(input: string): { words: number; stuttered: number } {
  let words = 0;
  let stuttered = 0;
  let index = 0;
  while (index < input.length) {
    if (letter(input.charCodeAt(index)) === 0) {
      index++;
      continue;
    }
    const start = index;
    while (index < input.length && letter(input.charCodeAt(index)) !== 0) index++;
    if (index - start < 2) continue;
    words++;
    const head = letter(input.charCodeAt(start)) === letter(input.charCodeAt(start + 1));
    if (head || letter(input.charCodeAt(index - 1)) === letter(input.charCodeAt(index - 2))) stuttered++;
  }
  return { words, stuttered };
}
