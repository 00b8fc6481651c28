/**
 * A task addressed to an AI model (issue #32 item 4, tool_output, third round): the probability
 * that one imperative sentence is the kind of request a user sends to an AI assistant ("Write a
 * poem about …", "Translate the following into French", "List five facts about …") rather than a
 * request between people in the data's own business ("Please send the report by Friday", "Run the
 * installer as root", "Confirm the meeting").
 *
 * A logistic regression over hashed word 1–2-grams of the sentence with a start-of-sentence marker
 * (`extractFeatures` of t3.ts), trained by `scripts/train-ai-task.ts` on development corpora only:
 * positives are the instruction sentences of instruction-tuning sets, negatives the imperative
 * sentences of benign tool outputs, e-mails, agent traces and local manual pages; classes and
 * sources balanced. Weights: weights/ai-task.json (base64 float32). Pure and synchronous; only
 * imperative-shaped sentences of at least four words are scored, so a text pays a few microseconds
 * per such sentence and nothing for the rest.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractFeatures, sigmoid, type FeatureConfig, type SparseFeatures } from './t3.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
export const AI_TASK_WEIGHTS_FILE = path.join(here, 'weights', 'ai-task.json');

export interface AiTaskWeights {
  version: 1;
  features: FeatureConfig;
  bias: number;
  /** Dense: [hashed n-grams (2^hashBits) | the three extra features of extractFeatures]. */
  weights: Float32Array;
  trainedAt: string;
  metrics: Record<string, unknown>;
}

/** Prepended to a sentence so that its opening word is a feature of its own ("xxstart write"). */
const START_MARKER = 'xxstart';
/** Longest sentence scored (a planted task is one sentence; a longer segment is read up to here). */
const MAX_SENTENCE_CHARS = 400;

/** Words that open a sentence that is not an imperative: pronouns, determiners, auxiliaries, question words, prepositions, conjunctions, greetings. */
const NOT_IMPERATIVE: ReadonlySet<string> = new Set(
  "i we you he she it they this that these those there here the a an my our your his her their its what how where when why who whom whose which is are was were am be been do does did can could will would should shall may might must has have had if as and but or so in on at for of to from by with about after before during since until while because although though not no yes hi hello dear thanks thank regards best sincerely let let's i'm we're you're it's there's here's i'll we'll i've we've".split(' '),
);
/** Politeness and sequencing words read past before the opening verb. */
const OPENERS: ReadonlySet<string> = new Set(['please', 'now', 'also', 'then', 'next', 'finally', 'additionally', 'instead', 'kindly', 'and']);

/** Whether a code unit separates words for the opening test: whitespace, `,`, `:`, `;`. */
function separator(code: number): boolean {
  return code <= 32 || code === 44 || code === 58 || code === 59 || code === 0xa0;
}

/**
 * Whether a sentence opens like an imperative: its first word after please, now, also … is a word
 * of at least three ASCII letters that no closed class holds. One pass over the opening, no
 * regular expression.
 */
export function imperativeShaped(sentence: string): boolean {
  const length = Math.min(sentence.length, 80);
  let index = 0;
  for (;;) {
    while (index < length && separator(sentence.charCodeAt(index))) index++;
    const start = index;
    // Most segments of data (numbers, keys, quoted values) fail on their first character.
    const first = sentence.charCodeAt(start) | 0x20;
    if (start >= length || first < 97 || first > 122) return false;
    while (index < length && !separator(sentence.charCodeAt(index))) index++;
    const word = sentence.slice(start, index).toLowerCase();
    if (OPENERS.has(word) && index < length) continue;
    if (word.length < 3 || NOT_IMPERATIVE.has(word)) return false;
    for (let position = 0; position < word.length; position++) {
      const code = word.charCodeAt(position);
      if (code < 97 || code > 122) return false;
    }
    return true;
  }
}

/** At least `count` words separated by whitespace. */
export function hasWords(sentence: string, count: number): boolean {
  let words = 0;
  let inWord = false;
  for (let index = 0; index < sentence.length; index++) {
    const space = sentence.charCodeAt(index) <= 32;
    if (!space && !inWord && ++words >= count) return true;
    inWord = !space;
  }
  return false;
}

/** The sentences the classifier is asked about: imperative-shaped, at least four words. */
export function isTaskCandidate(sentence: string): boolean {
  return imperativeShaped(sentence) && hasWords(sentence, 4);
}

export function aiTaskFeatures(sentence: string, config: FeatureConfig): SparseFeatures {
  return extractFeatures(`${START_MARKER} ${sentence.length > MAX_SENTENCE_CHARS ? sentence.slice(0, MAX_SENTENCE_CHARS) : sentence}`, config);
}

export interface AiTaskClassifier {
  /** Probability (0..1) that the sentence asks an AI model for a task of its own. */
  probability(sentence: string): number;
}

/** The dense features extractFeatures adds after the hashed n-grams (length, non-letters, capitals). */
const EXTRA_FEATURES = 3;

export function createAiTaskClassifier(weights: AiTaskWeights): AiTaskClassifier {
  const size = 1 << weights.features.hashBits;
  // A weights file of another shape would read past its end: NaN, which every threshold passes.
  if (weights.weights.length !== size + EXTRA_FEATURES || !Number.isFinite(weights.bias)) {
    throw new Error(`ai-task weights hold ${weights.weights.length} values where hashBits ${weights.features.hashBits} needs ${size + EXTRA_FEATURES}`);
  }
  return {
    probability(sentence: string): number {
      const features = aiTaskFeatures(sentence, weights.features);
      let sum = weights.bias;
      for (let index = 0; index < features.indices.length; index++) sum += weights.weights[features.indices[index]!]! * features.values[index]!;
      for (let index = 0; index < features.extra.length; index++) sum += weights.weights[size + index]! * features.extra[index]!;
      return sigmoid(sum);
    },
  };
}

export function encodeAiTaskWeights(weights: AiTaskWeights): string {
  return `${JSON.stringify({ ...weights, weights: Buffer.from(Float32Array.from(weights.weights).buffer).toString('base64') })}\n`;
}

export function decodeAiTaskWeights(text: string): AiTaskWeights {
  const stored = JSON.parse(text) as Omit<AiTaskWeights, 'weights'> & { weights: string };
  const bytes = Buffer.from(stored.weights, 'base64');
  return { ...stored, weights: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4).slice() };
}

let loaded: AiTaskClassifier | null = null;

/** The shipped classifier, read once on first use. */
export function aiTaskClassifier(): AiTaskClassifier {
  return (loaded ??= createAiTaskClassifier(decodeAiTaskWeights(readFileSync(AI_TASK_WEIGHTS_FILE, 'utf8'))));
}
