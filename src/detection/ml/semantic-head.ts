/**
 * The semantic head (issue #32): a logistic regression over the USE-lite sentence embedding of
 * one sentence window, trained offline by scripts/train-semantic.ts with source- and
 * class-balanced weights and chosen under whole-source holdout; the weights (a few KB of JSON)
 * live in weights/semantic.json. A text's probability is its highest window's, so an
 * instruction planted in a long tool output is judged on its own sentences, not diluted in one
 * embedding of the whole document. Pure: no model here (the embedding is computed in the worker,
 * semantic-worker.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sentenceWindows } from './windows.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
export const SEMANTIC_WEIGHTS_FILE = path.join(here, 'weights', 'semantic.json');

/** The kinds the head was trained on, in the order of its per-kind bias features. */
export const SEMANTIC_KINDS = ['prompt', 'tool_output', 'llm_output'] as const;
export type SemanticKind = (typeof SEMANTIC_KINDS)[number];

/** Characters of a text the tier reads (its first 16 KiB: the windows are chosen from them). */
export const SEMANTIC_MAX_CHARS = 16_384;
/** Windows embedded per text at most (the first, then the most instruction-like ones). */
export const SEMANTIC_MAX_WINDOWS = 6;

export interface SemanticThresholds {
  /** At or above: the head alone may block. */
  readonly strong: number;
  /** At or above: supporting evidence (alert alone, a block with a rule finding). */
  readonly weak: number;
  /** Below: the text reads as benign; weak rule evidence alone does not block it. */
  readonly benign: number;
}

export interface SemanticHead {
  readonly embedderId: string;
  readonly thresholds: SemanticThresholds;
  /** Probability that one window (its embedding) is an injection, for a kind. */
  probability(embedding: Float32Array, kind: SemanticKind): number;
}

interface StoredHead {
  embedder: string;
  weights: number[];
  bias: number;
  thresholds: SemanticThresholds;
}

export function loadSemanticHead(file: string = SEMANTIC_WEIGHTS_FILE): SemanticHead {
  const stored = JSON.parse(readFileSync(file, 'utf8')) as StoredHead;
  const weights = Float32Array.from(stored.weights);
  const dimensions = weights.length - SEMANTIC_KINDS.length;
  if (dimensions <= 0) throw new Error(`semantic head ${file}: no weights`);
  return {
    embedderId: stored.embedder,
    thresholds: Object.freeze({ ...stored.thresholds }),
    probability(embedding, kind) {
      let sum = stored.bias + (weights[dimensions + SEMANTIC_KINDS.indexOf(kind)] as number);
      const length = Math.min(dimensions, embedding.length);
      for (let index = 0; index < length; index += 1) sum += (weights[index] as number) * (embedding[index] as number);
      return 1 / (1 + Math.exp(-sum));
    },
  };
}

/**
 * Words that carry an instruction addressed to a reader (second person, imperatives of the
 * assistant's trade, the vocabulary of prompts and secrets). Used only to choose which windows of
 * a long text are embedded: never a verdict.
 */
const CUE = /\b(?:you|your|ignore|instead|instruction|instructions|system|prompt|assistant|must|now|reply|respond|answer|output|print|say|send|forward|email|reveal|password|secret|important|note|do not|don't|never|always|please|rules?|task|pretend|act as|summar\w*|translate|write)\b/gi;

function cueDensity(window: string): number {
  const hits = window.match(CUE)?.length ?? 0;
  return hits / Math.max(8, window.length / 6);
}

/**
 * The windows of a text the tier embeds (those that read as English, see readsAsEnglish): all of them when there are at most `limit`, otherwise
 * the first and the `limit - 1` with the densest instruction vocabulary (ties: later first, as
 * planted text tends to follow the data it hides in), in text order.
 */
export function selectWindows(text: string, limit: number = SEMANTIC_MAX_WINDOWS): string[] {
  const windows = sentenceWindows(text.length > SEMANTIC_MAX_CHARS ? text.slice(0, SEMANTIC_MAX_CHARS) : text).filter(readsAsEnglish);
  if (windows.length <= limit) return windows;
  const ranked = windows
    .map((window, index) => ({ index, density: cueDensity(window) }))
    .slice(1)
    .sort((left, right) => right.density - left.density || right.index - left.index)
    .slice(0, limit - 1)
    .map((item) => item.index);
  return [0, ...ranked.sort((left, right) => left - right)].map((index) => windows[index] as string);
}

/**
 * English function words: the sentence encoder (USE-lite) was trained on English and its
 * embedding of other languages carries little meaning (measured: the head's false positives on
 * machine-translated benign prompts were 15–50 % at thresholds where English sources stayed under
 * 1 %). Texts that do not read as English are left to the rules and the n-gram head.
 */
const ENGLISH_WORDS: ReadonlySet<string> = new Set(
  'the a an and or but of to in on at for with from by is are was were be been this that these those it its you your i me my we our they their he she his her not no do does did have has had will would can could should must please what which who how when where if then than as so all any'.split(' '),
);
const LONGEST_ENGLISH_WORD = Math.max(...[...ENGLISH_WORDS].map((word) => word.length));
/**
 * A word of [a-z'] of at most LONGEST_ENGLISH_WORD characters as a number: its characters as
 * digits 1–27 (a–z, the apostrophe) in base 28, so that two different words never share a key.
 */
const wordKey = (text: string, start: number, end: number): number => {
  let key = 0;
  for (let index = start; index < end; index++) {
    const code = text.charCodeAt(index);
    key = key * 28 + (code === 39 ? 27 : code - 96);
  }
  return key;
};
const ENGLISH_WORD_KEYS: ReadonlySet<number> = new Set([...ENGLISH_WORDS].map((word) => wordKey(word, 0, word.length)));

/**
 * Whether a text reads as English: at least 15 % of its Latin-letter words are English function
 * words (a text of fewer than 4 words: at least one of them is).
 */
export function readsAsEnglish(text: string): boolean {
  // One inspection asks about its text twice (T3's language check, the graded score's input).
  if (text === lastEnglishText) return lastEnglish;
  lastEnglish = readEnglish(text);
  lastEnglishText = text;
  return lastEnglish;
}

let lastEnglishText: string | undefined;
let lastEnglish = false;

function readEnglish(text: string): boolean {
  // The words are the runs of [a-z'] of the lower-cased text (as /[a-z']+/g finds them), read by
  // character code; only a run no longer than the longest function word is looked up, by its key.
  const lower = text.slice(0, 4096).toLowerCase();
  let words = 0;
  let common = 0;
  for (let index = 0; index < lower.length; ) {
    if (!isWordCode(lower.charCodeAt(index))) {
      index += 1;
      continue;
    }
    let end = index + 1;
    while (end < lower.length && isWordCode(lower.charCodeAt(end))) end += 1;
    words += 1;
    if (end - index <= LONGEST_ENGLISH_WORD && ENGLISH_WORD_KEYS.has(wordKey(lower, index, end))) common += 1;
    index = end;
  }
  if (words < 4) return common > 0;
  return common / words >= 0.15;
}

/** a–z or the apostrophe: the characters of /[a-z']/. */
function isWordCode(code: number): boolean {
  return (code >= 97 && code <= 122) || code === 39;
}

/**
 * Function words of the languages most often written in Latin letters besides English (Spanish,
 * French, Italian, Portuguese, German, Dutch, Polish, Indonesian and Malay, Tagalog, Turkish),
 * without accents (the test counts accented words on their own). None is an English word.
 */
const OTHER_LATIN_WORDS: ReadonlySet<string> = new Set(
  ('de el la los las del que y en un una es por con para lo se su sus al mas pero como muy esta este ' +
    'le les des du et est une dans qui sur avec pas pour ce cette sont ou vous nous je tu ne moi mon ma mes au aux ' +
    'il di che della delle non per gli sono uno nel alla anche questo ' +
    'e o os um uma em da das dos do nao com mais ao seu sua voce ' +
    'der die das und ist nicht mit ein eine einen zu den von ich sie wie auf dem auch sich ' +
    'het een niet van op voor zijn ik je dat wat ' +
    'nie jest w z na sie czy jak ' +
    'yang dan di ini itu untuk dengan tidak saya anda ke dari ada bisa akan pada atau juga ' +
    'ang ng mga sa na ay ko mo ako ikaw ito ' +
    've bir bu ile icin ne mi ben sen').split(' '),
);

/**
 * Whether a text is written in another language than English: it does not read as English
 * (readsAsEnglish) and at least 20 % of its words are written with letters outside ASCII (another
 * script, or accented Latin: a sentence of Chinese or Thai is one such word) or are function
 * words of another Latin-script language. Data that merely lacks English function words (JSON,
 * code, lists of names) is not another language.
 */
export function readsAsOtherLanguage(text: string): boolean {
  if (readsAsEnglish(text)) return false;
  const words = text.slice(0, 4096).toLowerCase().match(/[\p{L}\p{M}']+/gu) ?? [];
  if (words.length === 0) return false;
  let foreign = 0;
  for (const word of words) if (NON_ASCII_LETTER.test(word) || OTHER_LATIN_WORDS.has(word)) foreign += 1;
  return foreign / words.length >= 0.2;
}

const NON_ASCII_LETTER = /[^\x00-\x7f]/;
