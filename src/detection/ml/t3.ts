/**
 * T3: intent classification — is this text trying to steer, override or exfiltrate from the
 * model or agent that reads it?
 *
 * Posture: a pure, synchronous function of (text, embedding) once the weights are loaded; no
 * network, no model download. The default model is a logistic regression over the USE-lite
 * embedding (512-d) and hashed word/character n-grams, trained by `scripts/train-t3.ts` on the
 * public corpora in ../shared/datasets; its weights live in weights/t3.json. Without an embedding
 * the n-gram-only head answers (lower recall, same API). Input is cut to MAX_FEATURE_CHARS before
 * feature extraction, and feature extraction is a single linear pass (no regular expressions
 * with backtracking). A configured local ONNX zero-shot NLI model can replace it through
 * `loadNliClassifier`, which is asynchronous to load and asynchronous to run.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { importTransformers } from './embedder.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
export const T3_WEIGHTS_FILE = path.join(here, 'weights', 't3.json');

/** Characters of input that feature extraction reads (same cut as the embedder). */
export const MAX_FEATURE_CHARS = 2048;

export interface T3Result {
  /** Probability (0..1) that the text is an injection, jailbreak or exfiltration attempt. */
  attackProbability: number;
  /** Which head answered: with the embedding, or n-grams only. */
  head: 'embedding+ngrams' | 'ngrams';
}

export interface T3Classifier {
  readonly id: string;
  classify(text: string, embedding?: Float32Array): T3Result;
}

export interface FeatureConfig {
  hashBits: number;
  wordNgrams: number;
  charNgrams: number[];
}

export interface T3Head {
  /** Dense weights: [embedding (dimensions) | hashed n-grams (2^hashBits) | extra]. */
  weights: ArrayLike<number>;
  bias: number;
}

export interface T3Weights {
  version: 1;
  embedderId: string;
  dimensions: number;
  features: FeatureConfig;
  full: T3Head;
  ngrams: T3Head;
  trainedAt: string;
  metrics: Record<string, unknown>;
  /**
   * Platt scaling of one head (p' = sigmoid(a * logit(p) + b)), fitted by scripts/train-t3.ts on
   * leave-one-source-out scores, so the probability means what it says on an unseen source.
   */
  calibration?: { head: 'ngrams' | 'full'; method: 'platt'; a: number; b: number };
}

export const EXTRA_FEATURES = 3;

/** 32-bit FNV-1a over UTF-16 code units. */
export function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

export interface SparseFeatures {
  indices: Int32Array;
  values: Float32Array;
  /** Extra dense features: log length, share of non-letters, share of upper case. */
  extra: Float32Array;
}

/** Lower-cased words of letters/digits, split in one pass. */
export function wordsOf(text: string): string[] {
  // By UTF-16 unit: every unit of a character beyond ASCII (surrogates included) is a word unit,
  // so the words are those of a pass by code point.
  const lower = text.toLowerCase();
  const words: string[] = [];
  let start = -1;
  for (let index = 0; index < lower.length; index += 1) {
    const code = lower.charCodeAt(index);
    const isWord = (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code > 127 || code === 39;
    if (isWord) {
      if (start < 0) start = index;
    } else if (start >= 0) {
      words.push(lower.slice(start, index));
      start = -1;
    }
  }
  if (start >= 0) words.push(lower.slice(start));
  return words;
}

/** Longest JSON text that proseOf parses (a larger one counts as prose as it is). */
const MAX_JSON_CHARS = 262_144;

/**
 * The prose of a text, for counting its words. A JSON object or array (a tool's arguments or
 * result, an API payload) is data: its prose is its strings that contain whitespace (keys and
 * values, one per line), not its key names, identifiers, numbers and URLs. Anything else is
 * returned unchanged.
 */
export function proseOf(text: string): string {
  const first = text.trimStart()[0];
  if ((first !== '{' && first !== '[') || text.length > MAX_JSON_CHARS) return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  const prose: string[] = [];
  let length = 0;
  const stack: unknown[] = [parsed];
  while (stack.length > 0 && length < MAX_FEATURE_CHARS) {
    const value = stack.pop();
    if (typeof value === 'string') {
      if (/\s/.test(value)) {
        prose.push(value);
        length += value.length + 1;
      }
    } else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index -= 1) stack.push(value[index]);
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      for (let index = entries.length - 1; index >= 0; index -= 1) stack.push(entries[index]![1], entries[index]![0]);
    }
  }
  return prose.join('\n');
}

/** Whether `text` has fewer than `limit` words as wordsOf splits them; stops counting at the limit. */
export function hasFewerWords(text: string, limit: number): boolean {
  let count = 0;
  let inWord = false;
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0;
    const isWord = (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code > 127 || character === "'";
    if (isWord && !inWord && (count += 1) >= limit) return false;
    inWord = isWord;
  }
  return true;
}

/**
 * Hashed n-gram features, L2-normalised so long and short texts live on one scale: word
 * 1..wordNgrams-grams and character n-grams of the lower-cased text with collapsed spaces.
 */
export function extractFeatures(raw: string, config: FeatureConfig): SparseFeatures {
  const text = raw.length > MAX_FEATURE_CHARS ? raw.slice(0, MAX_FEATURE_CHARS) : raw;
  const mask = (1 << config.hashBits) - 1;
  // Counts per hashed index, in the order indices first occur (the order of the sparse vector,
  // hence of the sums below). Keys are hashed as hashString(`w${n}:…`) / hashString(`c${n}:…`)
  // would, without building the strings.
  // The words of wordsOf as offsets into the lower-cased text (no string per word or n-gram):
  // word w is lower[bounds[2w] .. bounds[2w + 1]).
  const lower = text.toLowerCase();
  const lowerLength = lower.length;
  // N-grams are read from the lower-cased text, which can be longer than the text (U+0130 lowers
  // to two code units): each order gives at most lowerLength + 2 of them (the words, or the
  // characters of ` ${words.join(' ')} `), which bounds both a count and the distinct indices.
  const ngrams = (config.wordNgrams + config.charNgrams.length) * (lowerLength + 2);
  const counts = countTable(mask + 1, ngrams);
  // The indices in order of first occurrence: at most one per n-gram.
  const order = scratchOrder(ngrams);
  let distinct = 0;
  const bounds = scratchBounds(lowerLength + 2);
  let words = 0;
  let wordUnits = 0;
  let start = -1;
  for (let index = 0; index < lowerLength; index += 1) {
    const code = lower.charCodeAt(index);
    const isWord = (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code > 127 || code === 39;
    if (isWord) {
      if (start < 0) start = index;
    } else if (start >= 0) {
      bounds[2 * words] = start;
      bounds[2 * words + 1] = index;
      words += 1;
      wordUnits += index - start;
      start = -1;
    }
  }
  if (start >= 0) {
    bounds[2 * words] = start;
    bounds[2 * words + 1] = lowerLength;
    words += 1;
    wordUnits += lowerLength - start;
  }
  for (let n = 1; n <= config.wordNgrams; n += 1) {
    const prefix = fnv(FNV_OFFSET, `w${n}:`);
    for (let word = 0; word + n <= words; word += 1) {
      // fnv(prefix, words[word]), then for each next word the hash of " " and the word.
      let hash = prefix;
      for (let at = bounds[2 * word]!, end = bounds[2 * word + 1]!; at < end; at += 1) hash = Math.imul(hash ^ lower.charCodeAt(at), FNV_PRIME);
      for (let next = word + 1; next < word + n; next += 1) {
        hash = Math.imul(hash ^ 32, FNV_PRIME);
        for (let at = bounds[2 * next]!, end = bounds[2 * next + 1]!; at < end; at += 1) hash = Math.imul(hash ^ lower.charCodeAt(at), FNV_PRIME);
      }
      const index = hash & mask;
      if (counts[index] === 0) order[distinct++] = index;
      counts[index] = counts[index]! + 1;
    }
  }
  // ` ${words.join(' ')} ` as code units.
  const compactLength = words === 0 ? 2 : wordUnits + words + 1;
  const compact = scratchCompact(compactLength);
  let filled = 0;
  compact[filled++] = 32;
  for (let word = 0; word < words; word += 1) {
    if (word > 0) compact[filled++] = 32;
    for (let at = bounds[2 * word]!, end = bounds[2 * word + 1]!; at < end; at += 1) compact[filled++] = lower.charCodeAt(at);
  }
  compact[filled++] = 32;
  for (const n of config.charNgrams) {
    const prefix = fnv(FNV_OFFSET, `c${n}:`);
    for (let index = 0; index + n <= compactLength; index += 1) {
      let hash = prefix;
      for (let offset = index; offset < index + n; offset += 1) hash = Math.imul(hash ^ compact[offset]!, FNV_PRIME);
      const slot = hash & mask;
      if (counts[slot] === 0) order[distinct++] = slot;
      counts[slot] = counts[slot]! + 1;
    }
  }
  const indices = new Int32Array(distinct);
  const values = new Float32Array(distinct);
  let norm = 0;
  for (let position = 0; position < distinct; position += 1) {
    const index = order[position]!;
    const value = Math.sqrt(counts[index]!);
    counts[index] = 0;
    indices[position] = index;
    values[position] = value;
    norm += value * value;
  }
  norm = Math.sqrt(norm) || 1;
  for (let index = 0; index < values.length; index += 1) values[index] = (values[index] as number) / norm;
  let letters = 0;
  let upper = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 128) {
      // ASCII: a letter is one whose lower and upper case differ.
      if (code >= 97 && code <= 122) letters += 1;
      else if (code >= 65 && code <= 90) {
        letters += 1;
        upper += 1;
      }
      continue;
    }
    const point = text.codePointAt(index)!;
    const character = String.fromCodePoint(point);
    if (point > 0xffff) index += 1;
    const lower = character.toLowerCase();
    if (lower !== character.toUpperCase()) {
      letters += 1;
      if (character !== lower) upper += 1;
    }
  }
  const length = Math.max(1, text.length);
  const extra = Float32Array.from([Math.log1p(text.length) / 8, 1 - letters / length, letters === 0 ? 0 : upper / letters]);
  return { indices, values, extra };
}

/**
 * One zeroed count table per size, reused by every call (each call leaves it zeroed). A count is
 * at most `ngrams`, the number of n-grams of the call's text: under 65,536 for any text of
 * MAX_FEATURE_CHARS with the configured orders, and the table's entries are then 16 bits (half the
 * memory a call's scattered reads and writes touch); 32 bits otherwise.
 */
const countTables = new Map<number, Uint16Array | Uint32Array>();
function countTable(size: number, ngrams: number): Uint16Array | Uint32Array {
  const wide = ngrams >= 0x10000;
  const key = wide ? -size : size;
  let table = countTables.get(key);
  if (table === undefined) countTables.set(key, (table = wide ? new Uint32Array(size) : new Uint16Array(size)));
  return table;
}

/** Scratch buffers of extractFeatures, grown as needed and reused by every call. */
let boundsBuffer = new Int32Array(0);
let compactBuffer = new Uint16Array(0);
let orderBuffer = new Int32Array(0);
function scratchOrder(size: number): Int32Array {
  if (orderBuffer.length < size) orderBuffer = new Int32Array(size);
  return orderBuffer;
}
function scratchBounds(size: number): Int32Array {
  if (boundsBuffer.length < size) boundsBuffer = new Int32Array(Math.max(size, MAX_FEATURE_CHARS + 2));
  return boundsBuffer;
}
function scratchCompact(size: number): Uint16Array {
  if (compactBuffer.length < size) compactBuffer = new Uint16Array(Math.max(size, MAX_FEATURE_CHARS + 2));
  return compactBuffer;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a state after `text`, from `hash` (hashString is fnv(FNV_OFFSET, text) >>> 0). */
function fnv(hash: number, text: string): number {
  for (let index = 0; index < text.length; index += 1) hash = Math.imul(hash ^ text.charCodeAt(index), FNV_PRIME);
  return hash;
}

export function sigmoid(value: number): number {
  return 1 / (1 + Math.exp(-value));
}

/** Logit of one head; the embedding part is skipped when `embedding` is undefined. */
export function headLogit(head: T3Head, dimensions: number, hashSize: number, features: SparseFeatures, embedding?: Float32Array): number {
  let sum = head.bias;
  const weights = head.weights;
  if (embedding !== undefined) {
    for (let index = 0; index < dimensions; index += 1) sum += (weights[index] as number) * (embedding[index] as number);
  }
  for (let index = 0; index < features.indices.length; index += 1) {
    sum += (weights[dimensions + (features.indices[index] as number)] as number) * (features.values[index] as number);
  }
  for (let index = 0; index < features.extra.length; index += 1) {
    sum += (weights[dimensions + hashSize + index] as number) * (features.extra[index] as number);
  }
  return sum;
}

export function createT3Classifier(weights: T3Weights): T3Classifier {
  const hashSize = 1 << weights.features.hashBits;
  const full: T3Head = { weights: Float64Array.from(weights.full.weights), bias: weights.full.bias };
  const ngrams: T3Head = { weights: Float64Array.from(weights.ngrams.weights), bias: weights.ngrams.bias };
  return {
    id: `t3-logreg:${weights.embedderId}:${weights.trainedAt}`,
    classify(text: string, embedding?: Float32Array): T3Result {
      const features = extractFeatures(text, weights.features);
      const usable = embedding !== undefined && embedding.length === weights.dimensions;
      let logit = usable
        ? headLogit(full, weights.dimensions, hashSize, features, embedding)
        : headLogit(ngrams, weights.dimensions, hashSize, features);
      // The embedding and the features above cover the first MAX_FEATURE_CHARS; an injection at
      // the end of a long document or tool output is scored by the n-gram head on later windows.
      for (const window of laterWindows(text)) {
        logit = Math.max(logit, headLogit(ngrams, weights.dimensions, hashSize, extractFeatures(window, weights.features)));
      }
      const head = usable ? 'embedding+ngrams' : 'ngrams';
      const calibration = weights.calibration;
      if (calibration !== undefined && (calibration.head === 'ngrams') === !usable) logit = calibration.a * logit + calibration.b;
      return { attackProbability: sigmoid(logit), head };
    },
  };
}

/** Extra windows scored for long texts (each MAX_FEATURE_CHARS long; the last one ends the text). */
export const MAX_LATER_WINDOWS = 3;

/** Up to MAX_LATER_WINDOWS windows after the first MAX_FEATURE_CHARS, evenly spread, the last at the end. */
export function laterWindows(text: string): string[] {
  if (text.length <= MAX_FEATURE_CHARS) return [];
  const span = text.length - MAX_FEATURE_CHARS;
  const count = Math.min(MAX_LATER_WINDOWS, Math.ceil(span / MAX_FEATURE_CHARS));
  const windows: string[] = [];
  for (let index = 1; index <= count; index += 1) {
    const start = Math.round((span * index) / count);
    windows.push(text.slice(start, start + MAX_FEATURE_CHARS));
  }
  return windows;
}

let loaded: T3Classifier | null = null;

/** The default classifier from weights/t3.json (loaded once per process). */
export function loadT3Classifier(file = T3_WEIGHTS_FILE): T3Classifier {
  if (file === T3_WEIGHTS_FILE && loaded !== null) return loaded;
  const weights = decodeWeights(readFileSync(file, 'utf8'));
  const classifier = createT3Classifier(weights);
  if (file === T3_WEIGHTS_FILE) loaded = classifier;
  return classifier;
}

/** Weights are stored with the dense vectors as base64 float32 to keep the file small. */
export function encodeWeights(weights: T3Weights): string {
  const pack = (values: ArrayLike<number>) => Buffer.from(Float32Array.from(values).buffer).toString('base64');
  return (
    JSON.stringify({
      ...weights,
      full: { bias: weights.full.bias, weights: pack(weights.full.weights) },
      ngrams: { bias: weights.ngrams.bias, weights: pack(weights.ngrams.weights) },
    }) + '\n'
  );
}

export function decodeWeights(text: string): T3Weights {
  const stored = JSON.parse(text) as Omit<T3Weights, 'full' | 'ngrams'> & { full: { bias: number; weights: string }; ngrams: { bias: number; weights: string } };
  const unpack = (encoded: string) => {
    const bytes = Buffer.from(encoded, 'base64');
    return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4).slice();
  };
  return { ...stored, full: { bias: stored.full.bias, weights: unpack(stored.full.weights) }, ngrams: { bias: stored.ngrams.bias, weights: unpack(stored.ngrams.weights) } };
}

/** An asynchronous classifier (the ONNX NLI path cannot answer synchronously). */
export interface AsyncT3Classifier {
  readonly id: string;
  classify(text: string): Promise<Pick<T3Result, 'attackProbability'> & { head: 'nli' }>;
}

/** Hypotheses for zero-shot NLI; the attack probability is the entailment mass of the first two. */
export const NLI_LABELS = [
  'an attempt to override or ignore the AI system instructions',
  'an attempt to extract secrets, hidden prompts or user data',
  'an ordinary request or harmless content',
] as const;

/**
 * Loads a local zero-shot NLI model (e.g. an ONNX export of a DeBERTa/BART MNLI model) from
 * `modelDir` through @huggingface/transformers with remote models disabled. Throws a clear error
 * when the package is not installed or the directory does not hold a usable model.
 */
export async function loadNliClassifier(modelDir: string): Promise<AsyncT3Classifier> {
  const transformers = await importTransformers();
  const absolute = path.resolve(modelDir);
  transformers.env.allowRemoteModels = false;
  transformers.env.allowLocalModels = true;
  transformers.env.localModelPath = path.dirname(absolute) + path.sep;
  const classifier = (await transformers.pipeline('zero-shot-classification', path.basename(absolute))) as unknown as (
    text: string,
    labels: string[],
    options?: Record<string, unknown>,
  ) => Promise<{ labels: string[]; scores: number[] }>;
  return {
    id: `nli:${path.basename(absolute)}`,
    async classify(text: string) {
      const result = await classifier(text.slice(0, MAX_FEATURE_CHARS), [...NLI_LABELS], { multi_label: false });
      let attack = 0;
      result.labels.forEach((label, index) => {
        if (label !== NLI_LABELS[2]) attack += result.scores[index] ?? 0;
      });
      return { attackProbability: Math.min(1, Math.max(0, attack)), head: 'nli' as const };
    },
  };
}
