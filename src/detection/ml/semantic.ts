/**
 * The semantic tier's client on the request path (issue #32): a worker thread computes the
 * sentence embedding and the head's probability (semantic-worker.ts); the queue, the
 * content-hash cache, the deadline and the lazy start are worker-scorer.ts's (shared with the
 * local model tier): a text that finds the queue full is answered `saturated` and the engine
 * fails open with a finding; the worker (and the ~240 MB model) loads on the first text.
 */
import { loadSemanticHead, SEMANTIC_MAX_CHARS, type SemanticKind, type SemanticThresholds } from './semantic-head.ts';
import { createWorkerScorer, type WorkerScorerOptions, type WorkerVerdict } from './worker-scorer.ts';

export type SemanticVerdict = WorkerVerdict<{ probability: number; windows: number; window: string }>;

export interface SemanticTier {
  /** The head's calibrated probability thresholds (weights/semantic.json). */
  readonly thresholds: SemanticThresholds;
  score(text: string, kind: SemanticKind): Promise<SemanticVerdict>;
  /** Texts waiting or running in the worker now. */
  readonly pending: number;
  close(): Promise<void>;
}

export type SemanticTierOptions = WorkerScorerOptions;

export function createSemanticTier(options: SemanticTierOptions = {}): SemanticTier {
  // Read here too (a few KB): the thresholds are needed before the worker has loaded.
  const thresholds = loadSemanticHead().thresholds;
  const scorer = createWorkerScorer<{ probability: number; windows: number; window: string }>(
    { name: 'semantic-worker', maxChars: SEMANTIC_MAX_CHARS, loadFailure: 'the semantic model did not load' },
    options,
  );
  return {
    thresholds,
    get pending() {
      return scorer.pending;
    },
    score: (text, kind) => scorer.score(text, kind),
    close: () => scorer.close(),
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
