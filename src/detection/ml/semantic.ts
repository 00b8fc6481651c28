/**
 * The semantic tier's client on the request path (issue #32): a worker thread computes the
 * sentence embedding and the head's probability (semantic-worker.ts); this side keeps
 *
 * - a bounded queue: at most `maxQueue` texts waiting or running; a text that finds it full is
 *   not scored and the verdict says `saturated` (the engine fails open and reports it as a
 *   finding), so a burst of long tool outputs never builds an unbounded backlog;
 * - a content-hash cache (SHA-256 of kind and text, LRU): repeated content is scored once;
 * - a deadline per text (`timeoutMs`): a late answer is reported as `timeout`, never waited on;
 * - a lazy start: the worker (and the ~240 MB model) loads on the first text, not at boot; texts
 *   that arrive while it loads wait for it (up to the deadline plus the load budget).
 */
import { Worker } from 'node:worker_threads';
import { sha256Hex } from '../../platform/crypto.ts';
import { LruCache } from './embedder.ts';
import { loadSemanticHead, SEMANTIC_MAX_CHARS, type SemanticKind, type SemanticThresholds } from './semantic-head.ts';

export type SemanticVerdict =
  | { readonly status: 'scored'; readonly probability: number; readonly windows: number; readonly window: string }
  | { readonly status: 'skipped' | 'saturated' | 'timeout' | 'error'; readonly detail: string };

export interface SemanticTier {
  /** The head's calibrated probability thresholds (weights/semantic.json). */
  readonly thresholds: SemanticThresholds;
  score(text: string, kind: SemanticKind): Promise<SemanticVerdict>;
  /** Texts waiting or running in the worker now. */
  readonly pending: number;
  close(): Promise<void>;
}

export interface SemanticTierOptions {
  /** Texts waiting or running at most (default 32). */
  readonly maxQueue?: number;
  /** Cached verdicts (default 4096). */
  readonly cacheEntries?: number;
  /** Longest wait for one text once the model is loaded (default 2,000 ms). */
  readonly timeoutMs?: number;
  /** Longest wait for the model to load on first use (default 30,000 ms). */
  readonly loadTimeoutMs?: number;
}

interface Waiting { resolve: (verdict: SemanticVerdict) => void; timer: NodeJS.Timeout; key: string }

/**
 * The worker beside this module: `semantic-worker.js` once built; from the TypeScript sources
 * (tsx, vitest) a small bootstrap registers tsx's loader in the worker first, since a worker does
 * not inherit the loader its parent was started with.
 */
function startWorker(): Worker {
  const options = { resourceLimits: { maxOldGenerationSizeMb: 512 } };
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./semantic-worker.js', import.meta.url), options);
  const entry = new URL('./semantic-worker.ts', import.meta.url).href;
  return new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`, { ...options, eval: true });
}

export function createSemanticTier(options: SemanticTierOptions = {}): SemanticTier {
  const maxQueue = options.maxQueue ?? 32;
  const timeoutMs = options.timeoutMs ?? 2_000;
  const loadTimeoutMs = options.loadTimeoutMs ?? 30_000;
  const cache = new LruCache<SemanticVerdict>(options.cacheEntries ?? 4096);
  // Read here too (a few KB): the thresholds are needed before the worker has loaded.
  const thresholds = loadSemanticHead().thresholds;
  const waiting = new Map<number, Waiting>();
  let worker: Worker | null = null;
  let loaded = false;
  let failed: string | null = null;
  let nextId = 1;

  const settle = (id: number, verdict: SemanticVerdict) => {
    const entry = waiting.get(id);
    if (entry === undefined) return;
    waiting.delete(id);
    clearTimeout(entry.timer);
    if (verdict.status === 'scored') cache.set(entry.key, verdict);
    entry.resolve(verdict);
  };

  const start = (): Worker => {
    const created = startWorker();
    created.unref();
    created.on('message', (message: { ready?: boolean; error?: string; id?: number; probability?: number; windows?: number; window?: string }) => {
      if (message.ready !== undefined) {
        loaded = message.ready;
        if (!message.ready) failed = message.error ?? 'the semantic model did not load';
        return;
      }
      if (message.id === undefined) return;
      if (message.error !== undefined) settle(message.id, { status: 'error', detail: message.error });
      else if (message.windows === 0) settle(message.id, { status: 'skipped', detail: 'no English sentence: the sentence encoder reads English only' });
      else settle(message.id, { status: 'scored', probability: message.probability ?? 0, windows: message.windows ?? 0, window: message.window ?? '' });
    });
    // A crashed worker fails its texts; the next text starts a new one.
    const fail = (detail: string) => {
      if (worker === created) worker = null;
      for (const id of [...waiting.keys()]) settle(id, { status: 'error', detail });
    };
    created.on('error', (error) => fail(error.message));
    created.on('exit', (code) => {
      fail(`semantic worker exited (${code})`);
    });
    return created;
  };

  return {
    thresholds,
    get pending() {
      return waiting.size;
    },
    score(raw, kind) {
      const text = raw.length > SEMANTIC_MAX_CHARS ? raw.slice(0, SEMANTIC_MAX_CHARS) : raw;
      const key = sha256Hex(`${kind}\u0000${text}`);
      const hit = cache.get(key);
      if (hit !== undefined) return Promise.resolve(hit);
      if (failed !== null) return Promise.resolve({ status: 'error', detail: failed });
      if (waiting.size >= maxQueue) return Promise.resolve({ status: 'saturated', detail: `${waiting.size} texts already queued` });
      worker ??= start();
      const id = nextId++;
      const target = worker;
      return new Promise<SemanticVerdict>((resolve) => {
        const limit = loaded ? timeoutMs : timeoutMs + loadTimeoutMs;
        const timer = setTimeout(() => settle(id, { status: 'timeout', detail: `no answer within ${limit} ms` }), limit);
        timer.unref();
        waiting.set(id, { resolve, timer, key });
        target.postMessage({ id, text, kind });
      });
    },
    async close() {
      const current = worker;
      worker = null;
      for (const id of [...waiting.keys()]) settle(id, { status: 'error', detail: 'closed' });
      if (current !== null) await current.terminate();
    },
  };
}

let shared: SemanticTier | null = null;

/**
 * The process's semantic tier: one worker and one model (~240 MB) however many engines are
 * built (tests and benches build many; the service builds one). The first caller's options apply.
 */
export function sharedSemanticTier(options: SemanticTierOptions = {}): SemanticTier {
  shared ??= createSemanticTier(options);
  return shared;
}
