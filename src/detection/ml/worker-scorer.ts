/**
 * The client side of a scoring worker thread, shared by the semantic tier (semantic.ts) and the
 * local model tier (model-tier.ts): a worker module beside this file loads a model once and
 * answers `{ id, text, kind }`; this side keeps
 *
 * - a bounded queue: at most `maxQueue` texts waiting or running; a text that finds it full is
 *   not scored and the verdict says `saturated` (the engine fails open and reports it as a
 *   finding), so a burst of long tool outputs never builds an unbounded backlog;
 * - a content-hash cache (SHA-256 of kind and text, LRU): repeated content is scored once;
 * - a deadline per text (`timeoutMs`): a late answer is reported as `timeout`, never waited on;
 * - a lazy start: the worker (and its model) loads on the first text, not at boot; texts that
 *   arrive while it loads wait for it (up to the deadline plus the load budget);
 * - a load failure that sticks: once the worker says its model did not load, every text answers
 *   `error` with that reason at once (the engine fails open and says so).
 *
 * Worker protocol: `{ ready: true }` or `{ ready: false, error }` once, then per job
 * `{ id, result }` (scored), `{ id, skipped }` (a reason the text was not scored) or `{ id, error }`.
 */
import { Worker } from 'node:worker_threads';
import { sha256Hex } from '../../platform/crypto.ts';
import { LruCache } from './embedder.ts';

export type WorkerVerdict<Result extends object> =
  | ({ readonly status: 'scored' } & Readonly<Result>)
  | { readonly status: 'skipped' | 'saturated' | 'timeout' | 'error'; readonly detail: string };

export interface WorkerScorer<Result extends object> {
  score(text: string, kind: string): Promise<WorkerVerdict<Result>>;
  /**
   * Starts the worker now (otherwise on the first text) and waits until its model has loaded or
   * failed to: `reason` is what the worker gave with its failure (e.g. a DetectionModelError's).
   */
  ready(): Promise<{ readonly ok: true } | { readonly ok: false; readonly detail: string; readonly reason?: string }>;
  /** Texts waiting or running in the worker now. */
  readonly pending: number;
  close(): Promise<void>;
}

export interface WorkerScorerOptions {
  /** Texts waiting or running at most (default 32). */
  readonly maxQueue?: number;
  /** Cached verdicts (default 4096). */
  readonly cacheEntries?: number;
  /** Longest wait for one text once the model is loaded (default 2,000 ms). */
  readonly timeoutMs?: number;
  /** Longest wait for the model to load on first use (default 30,000 ms). */
  readonly loadTimeoutMs?: number;
}

export interface WorkerModule {
  /** The worker's module name beside this file, without extension (e.g. 'semantic-worker'). */
  readonly name: string;
  /** Passed to the worker as `workerData` (structured-cloneable). */
  readonly data?: unknown;
  /** Heap of the worker's JavaScript (the native runtimes allocate outside it); default 512 MB. */
  readonly heapMb?: number;
  /** Characters of a text sent to the worker (the rest is cut here, before hashing). */
  readonly maxChars: number;
  /** What the verdict says when the worker's model did not load and gave no reason. */
  readonly loadFailure: string;
}

interface Waiting { resolve: (verdict: WorkerVerdict<object>) => void; timer: NodeJS.Timeout; key: string }

interface WorkerMessage { ready?: boolean; error?: string; reason?: string; id?: number; result?: object; skipped?: string }

/**
 * The young generation of a scoring worker's heap, MB. V8 gives every isolate up to 16 MB per
 * semi-space (32 MB of new space, resident once used) for a thread that allocates at a request
 * path's rate; a scoring worker's short-lived objects per text (token lists, a batch's arrays)
 * are small and its scavenges run off the event loop, so 12 MB (4 MB semi-spaces): the semantic
 * worker's heap was 55 MB under load with the default, 32 MB with this (docs/benchmarks.md,
 * "Memory breakdown").
 */
export const WORKER_YOUNG_GENERATION_MB = 12;

/**
 * The worker module beside this one: `NAME.js` once built; from the TypeScript sources (tsx,
 * vitest) a small bootstrap registers tsx's loader in the worker first, since a worker does not
 * inherit the loader its parent was started with.
 */
function startWorker(module: WorkerModule): Worker {
  const options = { resourceLimits: { maxOldGenerationSizeMb: module.heapMb ?? 512, maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB }, workerData: module.data };
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL(`./${module.name}.js`, import.meta.url), options);
  const entry = new URL(`./${module.name}.ts`, import.meta.url).href;
  return new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`, { ...options, eval: true });
}

export function createWorkerScorer<Result extends object>(module: WorkerModule, options: WorkerScorerOptions = {}): WorkerScorer<Result> {
  const maxQueue = options.maxQueue ?? 32;
  const timeoutMs = options.timeoutMs ?? 2_000;
  const loadTimeoutMs = options.loadTimeoutMs ?? 30_000;
  const cache = new LruCache<WorkerVerdict<Result>>(options.cacheEntries ?? 4096);
  const waiting = new Map<number, Waiting>();
  let worker: Worker | null = null;
  let loaded = false;
  let failed: string | null = null;
  let failedReason: string | undefined;
  let nextId = 1;
  // Waiters of ready(), answered when the worker says whether its model loaded.
  let readyWaiters: Array<() => void> = [];

  const settle = (id: number, verdict: WorkerVerdict<Result>) => {
    const entry = waiting.get(id);
    if (entry === undefined) return;
    waiting.delete(id);
    clearTimeout(entry.timer);
    if (verdict.status === 'scored') cache.set(entry.key, verdict);
    entry.resolve(verdict);
  };

  const start = (): Worker => {
    const created = startWorker(module);
    created.unref();
    created.on('message', (message: WorkerMessage) => {
      if (message.ready !== undefined) {
        loaded = message.ready;
        if (!message.ready) {
          failed = message.error ?? module.loadFailure;
          failedReason = message.reason;
          for (const id of [...waiting.keys()]) settle(id, { status: 'error', detail: failed });
        }
        const waiters = readyWaiters;
        readyWaiters = [];
        for (const wake of waiters) wake();
        return;
      }
      if (message.id === undefined) return;
      if (message.error !== undefined) settle(message.id, { status: 'error', detail: message.error });
      else if (message.skipped !== undefined) settle(message.id, { status: 'skipped', detail: message.skipped });
      else settle(message.id, { status: 'scored', ...(message.result as Result) });
    });
    // A crashed worker fails its texts; the next text starts a new one.
    const fail = (detail: string) => {
      if (worker === created) worker = null;
      for (const id of [...waiting.keys()]) settle(id, { status: 'error', detail });
      if (!loaded && failed === null && readyWaiters.length > 0) {
        failed = detail;
        const waiters = readyWaiters;
        readyWaiters = [];
        for (const wake of waiters) wake();
      }
    };
    created.on('error', (error) => fail(error.message));
    created.on('exit', (code) => {
      fail(`${module.name} exited (${code})`);
    });
    return created;
  };

  return {
    get pending() {
      return waiting.size;
    },
    async ready() {
      if (!loaded && failed === null) {
        worker ??= start();
        await new Promise<void>((wake) => readyWaiters.push(wake));
      }
      if (failed !== null) return { ok: false, detail: failed, ...(failedReason === undefined ? {} : { reason: failedReason }) };
      return { ok: true };
    },
    score(raw, kind) {
      const text = raw.length > module.maxChars ? raw.slice(0, module.maxChars) : raw;
      const key = sha256Hex(`${kind}\u0000${text}`);
      const hit = cache.get(key);
      if (hit !== undefined) return Promise.resolve(hit);
      if (failed !== null) return Promise.resolve({ status: 'error', detail: failed });
      if (waiting.size >= maxQueue) return Promise.resolve({ status: 'saturated', detail: `${waiting.size} texts already queued` });
      worker ??= start();
      const id = nextId++;
      const target = worker;
      return new Promise<WorkerVerdict<Result>>((resolve) => {
        const limit = loaded ? timeoutMs : timeoutMs + loadTimeoutMs;
        const timer = setTimeout(() => settle(id, { status: 'timeout', detail: `no answer within ${limit} ms` }), limit);
        timer.unref();
        waiting.set(id, { resolve: resolve as Waiting['resolve'], timer, key });
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
