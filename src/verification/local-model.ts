/**
 * Grounding tier 2: a local NLI (natural-language inference) cross-encoder, loaded once at
 * startup from a directory the operator names (VERIFICATION_GROUNDING_MODEL_DIR), never
 * downloaded. It scores (source passage as premise, claim as hypothesis) pairs and answers the
 * probability that the claim is NOT entailed by the sources: 1 − the best entailment
 * probability over the source passages most relevant to the claim.
 *
 * The model runs through @huggingface/transformers (ONNX runtime), an optional dependency
 * imported only when a directory is configured, with remote models disabled and one inference
 * thread (the request path shares two cores). A missing directory, missing model files, a
 * missing package or a model without an entailment label stop startup with a
 * GroundingModelError (code GROUNDING_MODEL_UNAVAILABLE and a `reason`), never a silent
 * fallback and never a download.
 *
 * verify.ts asks it only about claims in the policy's uncertain band, one claim at a time,
 * each within the configured per-claim budget (fails open, and says so).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { softmax } from '../detection/index.ts';
import { contentTokens, splitClaims } from './text.ts';

/** The tier-2 scorer verify.ts calls (a loaded model, or a test's injected scorer). */
export interface GroundingModel {
  /** Names the model in `layers.grounding.info.local_model.model`. */
  readonly id: string;
  /** Per-claim budget, ms: past it the claim keeps its tier-1 score and the layer's info says so. */
  readonly timeoutMs: number;
  /** 0–1: probability the claim is not supported by the sources (higher = more likely a problem). */
  score(claim: string, sources: readonly string[], signal: AbortSignal): Promise<number>;
}

export type GroundingModelFailure = 'dir_missing' | 'model_files_missing' | 'package_missing' | 'labels_unsupported' | 'load_failed';

export class GroundingModelError extends Error {
  readonly code = 'GROUNDING_MODEL_UNAVAILABLE';
  readonly reason: GroundingModelFailure;
  constructor(reason: GroundingModelFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GroundingModelError';
    this.reason = reason;
  }
}

/** Source passages longer than this are cut into windows of whole sentences (~300 tokens). */
export const PASSAGE_CHARS = 1_200;
/** Passages scored per claim: the ones sharing most content words with it. */
export const PASSAGES_PER_CLAIM = 4;

/**
 * The source passages to score a claim against: every source cut into sentence windows of at
 * most PASSAGE_CHARS, ranked by the number of the claim's content words they hold (ties: order
 * in the sources), the first PASSAGES_PER_CLAIM kept. Pure.
 */
export function passagesFor(claim: string, sources: readonly string[], limit = PASSAGES_PER_CLAIM): string[] {
  const claimStems = new Set(contentTokens(claim).map((token) => token.stem));
  const windows: Array<{ text: string; overlap: number; order: number }> = [];
  for (const source of sources) {
    let current = '';
    const flush = () => {
      if (current.trim() === '') return;
      const stems = new Set(contentTokens(current).map((token) => token.stem));
      let overlap = 0;
      for (const stem of claimStems) if (stems.has(stem)) overlap += 1;
      windows.push({ text: current.trim(), overlap, order: windows.length });
      current = '';
    };
    for (const sentence of splitClaims(source)) {
      const text = sentence.text.length > PASSAGE_CHARS ? sentence.text.slice(0, PASSAGE_CHARS) : sentence.text;
      if (current.length + text.length + 1 > PASSAGE_CHARS) flush();
      current += (current === '' ? '' : ' ') + text;
    }
    flush();
  }
  windows.sort((left, right) => right.overlap - left.overlap || left.order - right.order);
  return windows.slice(0, limit).map((window) => window.text);
}

/** Files a transformers.js model directory must hold (the ONNX graph is looked up under onnx/). */
function checkModelDir(absolute: string): void {
  if (!existsSync(absolute) || !statSync(absolute).isDirectory()) {
    throw new GroundingModelError('dir_missing', `VERIFICATION_GROUNDING_MODEL_DIR ${absolute} is not a directory. Point it at a local ONNX NLI model (config.json, tokenizer.json, onnx/model.onnx); svc never downloads one.`);
  }
  const missing = ['config.json', 'tokenizer.json'].filter((file) => !existsSync(path.join(absolute, file)));
  const onnxDir = path.join(absolute, 'onnx');
  const hasGraph = existsSync(onnxDir) && readdirSync(onnxDir).some((file) => file.endsWith('.onnx'));
  if (!hasGraph) missing.push('onnx/*.onnx');
  if (missing.length > 0) {
    throw new GroundingModelError('model_files_missing', `VERIFICATION_GROUNDING_MODEL_DIR ${absolute} lacks ${missing.join(', ')}. Export the model with Optimum (\`optimum-cli export onnx --task text-classification\`) into that directory.`);
  }
}

interface Transformers {
  env: { allowRemoteModels: boolean; allowLocalModels: boolean; localModelPath: string; backends?: { onnx?: { wasm?: { numThreads?: number } } } };
  AutoTokenizer: { from_pretrained(name: string): Promise<(texts: string[], options: Record<string, unknown>) => Record<string, unknown>> };
  AutoModelForSequenceClassification: {
    from_pretrained(name: string, options?: Record<string, unknown>): Promise<((inputs: Record<string, unknown>) => Promise<{ logits: { data: ArrayLike<number>; dims: number[] } }>) & { config: { id2label?: Record<string, string> } }>;
  };
}

async function importTransformers(): Promise<Transformers> {
  const specifier = '@huggingface/transformers';
  try {
    return (await import(specifier)) as Transformers;
  } catch (cause) {
    throw new GroundingModelError(
      'package_missing',
      'VERIFICATION_GROUNDING_MODEL_DIR is set, but @huggingface/transformers is not installed. Install it with ' +
        '`npm install --save-exact @huggingface/transformers --onnxruntime-node-install-cuda=skip`, or unset the variable ' +
        '(grounding then runs its lexical tier, and the LLM judge where a policy enables it).',
      { cause },
    );
  }
}

/** The index of the entailment class from the model's id2label (MNLI-style labels). */
export function entailmentIndex(id2label: Record<string, string> | undefined): number | null {
  if (id2label === undefined) return null;
  for (const [index, label] of Object.entries(id2label)) if (/entail/i.test(label) && !/not|non/i.test(label)) return Number(index);
  return null;
}

/**
 * The cheap part of loading, for a process that will not load the model itself (the cluster
 * primary before it forks workers): the directory, its files and the package; throws the same
 * GroundingModelError.
 */
export async function checkGroundingModel(modelDir: string): Promise<void> {
  checkModelDir(path.resolve(modelDir));
  await importTransformers();
}

/**
 * Loads the model from `modelDir` (checked first, then the optional package). Inference calls
 * are serialised: one pair batch at a time on one thread; a claim whose budget ran out before
 * its turn is not run at all (its signal is aborted).
 */
export async function loadGroundingModel(modelDir: string, options: { timeoutMs: number }): Promise<GroundingModel> {
  const absolute = path.resolve(modelDir);
  checkModelDir(absolute);
  const transformers = await importTransformers();
  transformers.env.allowRemoteModels = false;
  transformers.env.allowLocalModels = true;
  transformers.env.localModelPath = path.dirname(absolute) + path.sep;
  const name = path.basename(absolute);
  let tokenizer: Awaited<ReturnType<Transformers['AutoTokenizer']['from_pretrained']>>;
  let model: Awaited<ReturnType<Transformers['AutoModelForSequenceClassification']['from_pretrained']>>;
  try {
    tokenizer = await transformers.AutoTokenizer.from_pretrained(name);
    model = await transformers.AutoModelForSequenceClassification.from_pretrained(name, { dtype: 'fp32', session_options: { intraOpNumThreads: 1, interOpNumThreads: 1 } });
  } catch (cause) {
    throw new GroundingModelError('load_failed', `the grounding model in ${absolute} could not be loaded: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
  const entail = entailmentIndex(model.config.id2label);
  if (entail === null) {
    throw new GroundingModelError('labels_unsupported', `the grounding model in ${absolute} has no entailment label in config.json id2label (${JSON.stringify(model.config.id2label ?? {})}); use an NLI (MNLI-style) cross-encoder.`);
  }
  let chain: Promise<unknown> = Promise.resolve();
  return {
    id: `onnx-nli:${name}`,
    timeoutMs: options.timeoutMs,
    score(claim, sources, signal) {
      const run = async (): Promise<number> => {
        if (signal.aborted) throw new Error('grounding model budget spent before the claim was scored');
        const premises = passagesFor(claim, sources);
        if (premises.length === 0) return 1;
        const inputs = tokenizer(premises, { text_pair: premises.map(() => claim), padding: true, truncation: true });
        const { logits } = await model(inputs);
        const classes = logits.dims[1] ?? 0;
        let best = 0;
        for (let row = 0; row < premises.length; row += 1) best = Math.max(best, softmax(logits.data, row * classes, classes)[entail] ?? 0);
        return 1 - best;
      };
      const result = chain.then(run, run);
      chain = result.catch(() => undefined);
      return result;
    },
  };
}
