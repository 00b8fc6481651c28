/**
 * The local model tier on the request path (issue #32, item 5): the operator's ONNX text
 * classifier (model.ts) in its worker thread (model-worker.ts), behind the bounded queue,
 * content-hash cache and deadline the semantic tier uses (worker-scorer.ts). The engine runs it
 * inside T3 for the kinds configured, in the uncertain band, and turns a probability at or above
 * the threshold into a finding; a saturated queue, a late answer or a failed load fail open with
 * a zero-weight finding that says so (engine.ts).
 */
import { DetectionModelError, MODEL_FAILURES, MODEL_MAX_CHARS, type ModelFailure, type ModelReading } from './model.ts';
import { createWorkerScorer, type WorkerScorerOptions, type WorkerVerdict } from './worker-scorer.ts';

export type ModelVerdict = WorkerVerdict<ModelReading>;

export interface ModelTierConfig {
  readonly dir: string;
  /** Labels that count as an attack (DETECTION_MODEL_LABELS); null: by name. */
  readonly attackLabels: readonly string[] | null;
  /** Attack probability at or above which the model's reading is a finding. */
  readonly threshold: number;
  /** Inspect kinds the model reads. */
  readonly kinds: readonly string[];
}

export interface ModelTier {
  readonly id: string;
  readonly threshold: number;
  readonly kinds: ReadonlySet<string>;
  score(text: string, kind: string): Promise<ModelVerdict>;
  /** Loads the model now; throws DetectionModelError when it cannot be used. */
  ready(): Promise<void>;
  readonly pending: number;
  close(): Promise<void>;
}

export function createModelTier(config: ModelTierConfig, options: WorkerScorerOptions = {}): ModelTier {
  const scorer = createWorkerScorer<ModelReading>(
    {
      name: 'model-worker',
      data: { dir: config.dir, attackLabels: config.attackLabels },
      // The runtime's tensors live outside the JavaScript heap; the tokenizer's vocabulary inside it.
      heapMb: 512,
      maxChars: MODEL_MAX_CHARS,
      loadFailure: 'the local model did not load',
    },
    { loadTimeoutMs: 120_000, ...options },
  );
  return {
    id: `onnx:${config.dir.split(/[\\/]/).filter((part) => part !== '').pop() ?? 'model'}`,
    threshold: config.threshold,
    kinds: new Set(config.kinds),
    score: (text, kind) => scorer.score(text, kind),
    async ready() {
      const state = await scorer.ready();
      if (state.ok) return;
      const reason = (MODEL_FAILURES as readonly string[]).includes(state.reason ?? '') ? (state.reason as ModelFailure) : 'graph_invalid';
      throw new DetectionModelError(reason, state.detail);
    },
    get pending() {
      return scorer.pending;
    },
    close: () => scorer.close(),
  };
}
