/**
 * T2: embedding similarity against known injection phrasings.
 *
 * Posture: T2 catches paraphrases that slip past the T1 patterns; it is a scoring signal, not a
 * verdict on its own. It fails open (an embedding error is reported to the caller as an error,
 * never as a clean score of 0) and its cost is bounded: at most 1 + MAX_WINDOWS embeddings per
 * input, each cut to MAX_EMBED_CHARS. Long inputs are scored on the whole text and on a few
 * windows, because an injection buried in a long benign document is diluted in the whole-text
 * average. Similarity to the nearest benign hard negative is reported too, so callers (and
 * `score`) can use the margin rather than the raw cosine, which is high for any imperative text.
 */
import type { Embedder } from './embedder.ts';
import { dot } from './embedder.ts';
import type { ReferenceVector, VectorSet } from './vectors.ts';
import { buildVectorSet, loadStoredVectorSet } from './vectors.ts';

export const WINDOW_CHARS = 300;
export const MAX_WINDOWS = 4;

export interface T2Result {
  /** Highest cosine similarity to a known injection phrasing, over the text and its windows. */
  similarity: number;
  nearestId: string;
  nearestCategory: string;
  /** Highest cosine similarity to a benign hard negative for the same window. */
  benignSimilarity: number;
  /** 0..1 calibrated score (see docs/detection-ml.md): grows with similarity and margin. */
  score: number;
  /** Embedding of the whole text (first MAX_EMBED_CHARS); pass it to T3 to avoid re-embedding. */
  embedding: Float32Array;
  /** Number of embeddings computed (1 + windows). */
  windows: number;
}

export interface T2 {
  score(text: string): Promise<T2Result>;
  /** Loads or builds the reference set now (otherwise on the first call). */
  ready(): Promise<void>;
  readonly source: 'stored' | 'embedded' | 'given' | 'pending';
}

/**
 * Calibration of `score` (see docs/detection-ml.md): score = clamp((similarity + marginWeight ×
 * (similarity − benignSimilarity) − offset) / span). On the development corpora (whole texts)
 * score ≥ 0.5 flags ~44% of attacks at ~8% of benign records, score ≥ 0.75 ~25% at ~4%: T2 is a
 * supporting signal for paraphrases, not a detector to block on alone.
 */
export const T2_CALIBRATION = { offset: 0.6, span: 0.4, marginWeight: 2 } as const;

export function t2Score(similarity: number, benignSimilarity: number): number {
  const margin = similarity - benignSimilarity;
  const value = (similarity + T2_CALIBRATION.marginWeight * margin - T2_CALIBRATION.offset) / T2_CALIBRATION.span;
  return Math.min(1, Math.max(0, value));
}

/** Words that make a sentence worth its own embedding when a long text is windowed. */
const CUE_WORDS = new Set(
  (
    'ignore disregard forget override instead instructions instruction previous prior above earlier system prompt ' +
    'reveal print repeat password secret confidential hidden pretend roleplay act persona unrestricted jailbreak dan ' +
    'developer mode rules policy bypass send forward upload exfiltrate email url http https webhook curl token key ' +
    'credentials assistant ai model agent tool must never always important note obey comply execute run command'
  ).split(' '),
);

/**
 * Picks at most MAX_WINDOWS sentence windows of a long text: the sentences with the most cue
 * words (ties: later first, since injections tend to close a document), each cut to WINDOW_CHARS.
 * Linear in the text length; no regular expression with backtracking.
 */
export function windowsOf(text: string): string[] {
  if (text.length <= WINDOW_CHARS) return [];
  const sentences: Array<{ text: string; cues: number; position: number }> = [];
  let start = 0;
  const push = (end: number) => {
    const sentence = text.slice(start, end).trim();
    start = end;
    if (sentence.length < 12) return;
    let cues = 0;
    for (const word of sentence.toLowerCase().split(/[^a-z]+/)) if (CUE_WORDS.has(word)) cues += 1;
    sentences.push({ text: sentence.slice(0, WINDOW_CHARS), cues, position: sentences.length });
  };
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index];
    if (character === '.' || character === '!' || character === '?' || character === '\n' || index - start >= WINDOW_CHARS) push(index + 1);
  }
  push(text.length);
  if (sentences.length <= 1) return sentences.length === 1 && sentences[0]?.text !== text ? [sentences[0]?.text ?? ''] : [];
  sentences.sort((left, right) => right.cues - left.cues || right.position - left.position);
  return sentences.slice(0, MAX_WINDOWS).map((sentence) => sentence.text);
}

export function nearest(vector: Float32Array, entries: ReferenceVector[]): { attack: { similarity: number; entry: ReferenceVector | null }; benign: number } {
  let best = -1;
  let bestEntry: ReferenceVector | null = null;
  let benign = -1;
  for (const entry of entries) {
    const similarity = dot(vector, entry.vector);
    if (entry.category === 'benign') {
      if (similarity > benign) benign = similarity;
    } else if (similarity > best) {
      best = similarity;
      bestEntry = entry;
    }
  }
  return { attack: { similarity: best, entry: bestEntry }, benign };
}

export function createT2(embedder: Embedder, vectors?: VectorSet): T2 {
  let set: VectorSet | null = vectors ?? null;
  let source: T2['source'] = vectors === undefined ? 'pending' : 'given';
  let loading: Promise<VectorSet> | null = null;

  const load = (): Promise<VectorSet> => {
    if (set !== null) return Promise.resolve(set);
    loading ??= (async () => {
      const stored = loadStoredVectorSet(embedder.id);
      const loaded = stored ?? (await buildVectorSet(embedder));
      source = stored === null ? 'embedded' : 'stored';
      set = loaded;
      return loaded;
    })();
    return loading;
  };

  return {
    get source() {
      return source;
    },
    async ready() {
      await load();
    },
    async score(text: string): Promise<T2Result> {
      const reference = await load();
      const parts = [text, ...windowsOf(text)];
      const embeddings = await embedder.embed(parts);
      let best = { similarity: -1, id: '', category: '', benign: -1, score: -1 };
      for (const embedding of embeddings) {
        const found = nearest(embedding, reference.entries);
        const score = t2Score(found.attack.similarity, found.benign);
        const better = score > best.score || (score === best.score && found.attack.similarity > best.similarity);
        if (better) best = { similarity: found.attack.similarity, id: found.attack.entry?.id ?? '', category: found.attack.entry?.category ?? '', benign: found.benign, score };
      }
      return {
        similarity: best.similarity,
        nearestId: best.id,
        nearestCategory: best.category,
        benignSimilarity: best.benign,
        score: best.score,
        embedding: embeddings[0] as Float32Array,
        windows: embeddings.length,
      };
    },
  };
}
