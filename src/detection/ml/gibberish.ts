/**
 * Adversarial-suffix ("gibberish") detector for natural-language prompts. Optimisation attacks
 * such as GCG, DSN or AutoDAN-style token search append a run of tokens chosen for their effect
 * on the model, not for meaning: fragments of code and markup glued to words (`({[HTMLsvg`,
 * `githubrelative{[paper`), mid-word capitals (`introPub`), non-words (`magyarlbsett`) and
 * brackets that never close. Written prose does not look like that, and code that a user pastes
 * has balanced brackets; the combination of token noise and unbalanced brackets in the tail of
 * the prompt is what this module measures.
 *
 * Non-words are judged by a letter-trigram model (`weights/charlm.json`, 27 symbols: a–z and a
 * word boundary) trained by `scripts/train-t3.ts --charlm` on benign English prompts. Pure and
 * linear-time: one pass over the last TAIL_TOKENS whitespace-separated tokens.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const CHAR_MODEL_FILE = path.join(here, 'weights', 'charlm.json');

/** Tokens of the prompt tail that are examined. */
export const TAIL_TOKENS = 20;
/** Fewer tail tokens than this: no judgement. */
export const MIN_TOKENS = 6;
/** Letter runs at least this long are checked against the letter model. */
const MIN_WORD_LENGTH = 7;
/** Mean bits per letter above which a letter run is a non-word. */
export const NON_WORD_BITS = 3.6;

const SYMBOLS = 27;
/** Characters that prose rarely glues to words; markup, code and optimiser noise do. */
const ODD = new Set('\\|`^~<>=_{}[]()@#$%*+'.split(''));

export interface CharModel {
  /** bits[(a * 27 + b) * 27 + c] = −log2 P(c | a b), a..c ∈ 0 (boundary) | 1..26 (a–z). */
  readonly bits: Float32Array;
}

interface StoredCharModel {
  version: 1;
  order: 3;
  /** Uint8 of round(bits × 16), base64. */
  bits: string;
  trainedOn: string;
}

function symbolOf(code: number): number {
  return code >= 97 && code <= 122 ? code - 96 : 0;
}

/** Letter-trigram counts over the lower-case letter runs of `texts`, add-k smoothed. */
export function trainCharModel(texts: Iterable<string>, smoothing = 0.1): CharModel {
  const counts = new Float64Array(SYMBOLS ** 3);
  for (const text of texts) {
    const lower = text.toLowerCase();
    let a = 0;
    let b = 0;
    for (let index = 0; index <= lower.length; index += 1) {
      const c = index < lower.length ? symbolOf(lower.charCodeAt(index)) : 0;
      if (c === 0 && b === 0) {
        a = 0;
        continue;
      }
      counts[(a * SYMBOLS + b) * SYMBOLS + c] = (counts[(a * SYMBOLS + b) * SYMBOLS + c] as number) + 1;
      if (c === 0) {
        a = 0;
        b = 0;
      } else {
        a = b;
        b = c;
      }
    }
  }
  const bits = new Float32Array(SYMBOLS ** 3);
  for (let context = 0; context < SYMBOLS * SYMBOLS; context += 1) {
    let total = 0;
    for (let c = 0; c < SYMBOLS; c += 1) total += counts[context * SYMBOLS + c] as number;
    for (let c = 0; c < SYMBOLS; c += 1) bits[context * SYMBOLS + c] = -Math.log2(((counts[context * SYMBOLS + c] as number) + smoothing) / (total + smoothing * SYMBOLS));
  }
  return { bits };
}

export function encodeCharModel(model: CharModel, trainedOn: string): string {
  const bytes = Uint8Array.from(model.bits, (value) => Math.min(255, Math.round(value * 16)));
  const stored: StoredCharModel = { version: 1, order: 3, bits: Buffer.from(bytes).toString('base64'), trainedOn };
  return JSON.stringify(stored) + '\n';
}

export function decodeCharModel(text: string): CharModel {
  const stored = JSON.parse(text) as StoredCharModel;
  const bytes = Buffer.from(stored.bits, 'base64');
  if (stored.version !== 1 || bytes.length !== SYMBOLS ** 3) throw new Error('charlm.json: unexpected format');
  return { bits: Float32Array.from(bytes, (value) => value / 16) };
}

let loaded: CharModel | null | undefined;

/** The shipped letter model, or null when the file is missing (non-word checks are then skipped). */
export function loadCharModel(): CharModel | null {
  if (loaded !== undefined) return loaded;
  try {
    loaded = decodeCharModel(readFileSync(CHAR_MODEL_FILE, 'utf8'));
  } catch {
    loaded = null;
  }
  return loaded;
}

/** Mean bits per letter of a lower-case letter run (boundaries included). */
export function wordBits(model: CharModel, word: string): number {
  let a = 0;
  let b = 0;
  let total = 0;
  for (let index = 0; index <= word.length; index += 1) {
    const c = index < word.length ? symbolOf(word.charCodeAt(index)) : 0;
    total += model.bits[(a * SYMBOLS + b) * SYMBOLS + c] as number;
    a = b;
    b = c;
  }
  return total / (word.length + 1);
}

function isLetter(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90);
}

/** A token that looks like optimiser noise rather than a word of prose. */
export function isNoiseToken(token: string, model: CharModel | null): boolean {
  let letters = 0;
  let odd = 0;
  let run = '';
  let previousLower = false;
  let camel = false;
  let nonWord = false;
  const closeRun = () => {
    if (model !== null && run.length >= MIN_WORD_LENGTH && wordBits(model, run) > NON_WORD_BITS) nonWord = true;
    run = '';
  };
  for (const character of token) {
    const code = character.charCodeAt(0);
    if (isLetter(code)) {
      letters += 1;
      const upper = code <= 90;
      if (upper && previousLower) camel = true;
      previousLower = !upper;
      run += character.toLowerCase();
    } else {
      previousLower = false;
      if (ODD.has(character)) odd += 1;
      closeRun();
    }
  }
  closeRun();
  return (letters > 0 && odd > 0) || odd >= 2 || camel || nonWord;
}

/**
 * Whether the ")" at `index` ends a list label: one or two letters or digits standing alone as a
 * word ("a) Spicy BBQ b) Cold ramen", "B) sang", "12) …"). Multiple-choice options and numbered
 * steps close a bracket nobody opened; that is how lists are written, not token noise (issue #32:
 * everyday tasks with options were refused as adversarial suffixes).
 */
function isListLabel(text: string, index: number): boolean {
  let start = index;
  while (start > 0 && index - start < 3 && /[A-Za-z0-9]/.test(text[start - 1]!)) start -= 1;
  const length = index - start;
  return length >= 1 && length <= 2 && (start === 0 || isWhitespace(text.charCodeAt(start - 1)));
}

/**
 * Brackets in `text` from offset `from` on that are closed without being opened, or never closed.
 * Brackets opened before `from` may be closed after it (the tail of a JSON document is balanced).
 */
export function bracketImbalance(text: string, from = 0): number {
  // The open brackets not yet closed: their characters and offsets.
  const open: number[] = [];
  const at: number[] = [];
  let unmatched = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code === 40 /* ( */ || code === 91 /* [ */ || code === 123 /* { */) {
      open.push(code);
      at.push(index);
    } else if (code === 41 /* ) */ || code === 93 /* ] */ || code === 125 /* } */) {
      const opener = code === 41 ? 40 : code === 93 ? 91 : 123;
      if (open.length > 0 && open[open.length - 1] === opener) {
        open.pop();
        at.pop();
      } else if (index >= from && !(code === 41 && isListLabel(text, index))) unmatched += 1;
    }
  }
  for (const offset of at) if (offset >= from) unmatched += 1;
  return unmatched;
}

export interface SuffixProfile {
  /** Share of the tail's tokens that look like noise. */
  readonly noiseRatio: number;
  /** Unbalanced brackets in the tail. */
  readonly imbalance: number;
  readonly tokens: number;
  /**
   * The tail, on one line, holds a fragment of the compliant opening that optimisation attacks
   * steer the model towards ("Sure, here is"): "Sure" or "Here" capitalised in mid-sentence or
   * glued to other characters ("HereisanMessage", "hereIS", "Here=", "Sure,\\"). The ordinary
   * adverb ("make sure", "click here", "I'm not sure") is not it.
   */
  readonly targetFragment?: boolean;
  /**
   * Non-blank lines the tail spans. An optimiser's suffix is one run of tokens after the request
   * (on the development corpora no attack's tail spans more than three); a tail spread over four
   * or more lines, half of them shaped like code, is source code whose cut-off braces do not balance.
   */
  readonly lines?: number;
  /** Of those lines, the ones shaped like code: indented, or ending with ";", "{", "}" or ":". */
  readonly codeLines?: number;
  /**
   * The tail's last line (not its first, which starts mid-line) is code shaped and left open at
   * its end: it ends with "{", "(", "[", ":" or "," and its brackets balance otherwise. Code cut
   * mid-statement ends so ("for (…) {", "def f(a, b,", "type T = {").
   */
  readonly openEnd?: boolean;
}

/** Words after which "sure" or "here" is ordinary prose. */
const PROSE_BEFORE_TARGET = new Set(['make', 'be', 'not', 'am', 'are', 'is', 'was', 'were', 'click', 'for', 'so', 'feel', 'pretty', 'quite', 'very', 'im', "i'm", "you're", "we're", "they're", 'from', 'in', 'out', 'over', 'right', 'near', 'come', 'get', 'got', 'stay']);

function isTargetFragment(token: string, previous: string | undefined): boolean {
  const glued = /(?:[Hh]ere|[Ss]ure)(?:[A-Z=`\\]|is[a-z])|[a-z](?:Here|Sure)/.test(token);
  // Alone, only the capitalised word counts, and not as the last word of a template slot
  // ("[INSERT PROMPT HERE]", "{Your Text Here}"): a slot is ordinary in prompts written by people.
  if (!glued && (!/^[^A-Za-z]*(?:Sure|Here)(?![a-z]{2})/.test(token) || /^[^A-Za-z]*(?:Sure|Here)[\]}>]/.test(token))) return false;
  if (previous === undefined) return false;
  // A capitalised word after the end of a sentence is ordinary.
  if (!glued && /[.!?:]["')\]]*$/.test(previous)) return false;
  return !PROSE_BEFORE_TARGET.has(previous.toLowerCase().replace(/[^a-z']/g, ''));
}

/** Whether a UTF-16 code unit is whitespace as `\s` reads it (WhiteSpace and LineTerminator). */
export function isWhitespace(code: number): boolean {
  if (code <= 32) return code === 32 || (code >= 9 && code <= 13);
  if (code < 0xa0) return false;
  return code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff;
}

const OPENERS = '([{';
const CLOSERS = ')]}';
const QUOTES = `'"\``;
/** The last characters of a code line whose statement, call or block goes on past the line. */
const OPEN_ENDS = '{([:,';

/**
 * Whether a line's brackets balance once closers at its start and openers at its end (with a
 * trailing ";" or ",") are set aside, and quoted strings skipped; one bracket may stay open.
 * Code does this ("} else {", "foo(a, [b]);", "if (x) {"); an optimiser's noise puts brackets
 * mid-line. One pass over the characters (the line is untrusted text).
 */
export function locallyBalanced(line: string): boolean {
  let start = 0;
  let end = line.length;
  while (start < end && (isWhitespace(line.charCodeAt(start)) || CLOSERS.includes(line[start]!))) start += 1;
  while (end > start && (isWhitespace(line.charCodeAt(end - 1)) || line[end - 1] === ';' || line[end - 1] === ',')) end -= 1;
  while (end > start && OPENERS.includes(line[end - 1]!)) end -= 1;
  // The last position of each quote character: a quote at or after it has no closing partner.
  const lastQuote = [...QUOTES].map((quote) => line.lastIndexOf(quote, end - 1));
  const stack: string[] = [];
  for (let index = start; index < end; index += 1) {
    const char = line[index]!;
    const quote = QUOTES.indexOf(char);
    if (quote !== -1 && index < lastQuote[quote]!) {
      index = line.indexOf(char, index + 1);
      continue;
    }
    const open = OPENERS.indexOf(char);
    if (open !== -1) stack.push(char);
    else {
      const close = CLOSERS.indexOf(char);
      if (close !== -1 && stack.pop() !== OPENERS[close]) return false;
    }
  }
  return stack.length <= 1;
}

/** Profile of the last TAIL_TOKENS whitespace-separated tokens of `text` (case preserved). */
export function suffixProfile(text: string, model: CharModel | null = loadCharModel()): SuffixProfile {
  const window = text.length > 4096 ? text.slice(text.length - 4096) : text;
  // The last TAIL_TOKENS runs of non-whitespace (as /\S+/g finds them), read from the end.
  const tokens: Array<{ token: string; at: number }> = [];
  let index = window.length;
  while (tokens.length < TAIL_TOKENS) {
    while (index > 0 && isWhitespace(window.charCodeAt(index - 1))) index -= 1;
    if (index === 0) break;
    const end = index;
    while (index > 0 && !isWhitespace(window.charCodeAt(index - 1))) index -= 1;
    tokens.push({ token: window.slice(index, end), at: index });
  }
  tokens.reverse();
  if (tokens.length < MIN_TOKENS) return { noiseRatio: 0, imbalance: 0, tokens: tokens.length };
  let noise = 0;
  for (const { token } of tokens) if (isNoiseToken(token.length > 200 ? token.slice(0, 200) : token, model)) noise += 1;
  const oneLine = !window.slice(tokens[0]?.at ?? 0).includes('\n');
  const targetFragment = oneLine && tokens.some(({ token }, index) => isTargetFragment(token.length > 200 ? token.slice(0, 200) : token, tokens[index - 1]?.token));
  // Non-blank lines of the tail, and those shaped like code: indented, or ending a statement or
  // block (";", "{", "}", ":").
  let lines = 0;
  let codeLines = 0;
  const tail = window.slice(tokens[0]?.at ?? window.length);
  let lineStart = tail.startsWith('\n') ? 1 : 0;
  // The tail's first line starts mid-line: its indentation is not visible, so it counts by its end only.
  let first = true;
  let openEnd = false;
  while (lineStart <= tail.length) {
    const newline = tail.indexOf('\n', lineStart);
    const lineEnd = newline === -1 ? tail.length : newline;
    const line = tail.slice(lineStart, lineEnd);
    const trimmed = line.trimEnd();
    if (trimmed.trim().length > 0) {
      lines += 1;
      const indented = !first && (line.startsWith(' ') || line.startsWith('\t'));
      const last = trimmed.charCodeAt(trimmed.length - 1);
      const code = (indented || last === 59 /* ; */ || last === 123 /* { */ || last === 125 /* } */ || last === 58 /* : */) && locallyBalanced(trimmed);
      if (code) codeLines += 1;
      openEnd = !first && code && OPEN_ENDS.includes(trimmed[trimmed.length - 1]!);
    }
    first = false;
    lineStart = lineEnd + 1;
  }
  return { noiseRatio: noise / tokens.length, imbalance: bracketImbalance(window, tokens[0]?.at ?? 0), tokens: tokens.length, targetFragment, lines, codeLines, openEnd };
}

/** A tail spread over this many non-blank lines is not an optimiser's one-run suffix. */
export const SPREAD_LINES = 4;

/**
 * Strength of the adversarial-suffix evidence: 'strong' when noise tokens come with brackets
 * that do not balance (one is enough in the full 20-token tail of a long prompt) (measured on the development corpora: no benign prompt, tool description
 * or everyday sentence reaches it), 'weak' on noise alone, else 'none'.
 */
export function adversarialSuffix(profile: SuffixProfile): 'strong' | 'weak' | 'none' {
  // Code cut from a file, not a suffix: at most the weak signal (issue #32, bench/code-fp.ts).
  // Token noise over four or more lines, half of them indented or ending a statement or block (a
  // pasted function cut mid-block ends with braces opened above the cut: 79 of 400 ordinary code
  // chunks pasted for review were refused on this alone); or over three lines, two of them code
  // shaped, the last opening a block or a call that the cut leaves unfinished ("for (…) {",
  // "def __init__(self, a=None,": 5 of the 21 code chunks still refused as pasted prompts).
  const lines = profile.lines ?? 1;
  const codeLines = profile.codeLines ?? 0;
  const codeShaped = (lines >= SPREAD_LINES && codeLines * 2 >= lines) || (lines === SPREAD_LINES - 1 && codeLines >= 2 && profile.openEnd === true);
  if (codeShaped) return profile.noiseRatio >= 0.3 && profile.imbalance >= 1 ? 'weak' : 'none';
  if ((profile.imbalance >= 2 && profile.noiseRatio >= 0.15) || (profile.imbalance >= 4 && profile.noiseRatio >= 0.1)) return 'strong';
  // A full tail of a long prompt (GCG suffixes follow a whole request) with noise and one bracket
  // left open: measured on the development corpora, no benign prompt of 20+ tokens reaches it.
  if (profile.tokens >= TAIL_TOKENS && profile.imbalance >= 1 && profile.noiseRatio >= 0.15) return 'strong';
  // Token noise around a fragment of the compliant opening the optimiser aimed for ("Sure, here
  // is"), on the request's line: no benign prompt, e-mail or tool output of the development
  // corpora reaches it (issue #15, fourth round).
  if (profile.targetFragment === true && profile.tokens >= 12 && profile.noiseRatio >= 0.1) return 'strong';
  if (profile.noiseRatio >= 0.3 && profile.imbalance >= 1) return 'weak';
  return 'none';
}
