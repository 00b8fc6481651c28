/**
 * The local model slot (issue #32, item 5): a Hugging Face text-classification model exported to
 * ONNX (Llama Prompt Guard 2, ProtectAI's deberta-v3-base-prompt-injection-v2, PIGuard, …) in a
 * directory the operator names, with its `tokenizer.json`; svc never downloads one
 * (docs/detection-ml.md, "Local model tier").
 *
 * The graph runs on onnxruntime-node and the text is tokenized by @huggingface/tokenizers (the
 * tokenizer.js of transformers.js, pure JavaScript): both are optional dependencies imported only
 * when a directory is configured, so svc starts and works the same without them. The model runs
 * in a worker thread (model-worker.ts, through worker-scorer.ts); this module is the loader both
 * that worker and `svc model check` use.
 *
 * A directory that is not a usable model is refused with a DetectionModelError: code
 * DETECTION_MODEL_UNAVAILABLE and a `reason` (MODEL_FAILURES), never a silent fallback.
 *
 * Reading a text: it is cut to MODEL_MAX_CHARS, tokenized once, and when its tokens exceed the
 * model's length it is read in windows of the model's length (the first, the last and evenly
 * spread ones between, MODEL_MAX_WINDOWS at most, one batch); its probability is the highest
 * window's, so an instruction at the end of a long tool output is not cut off.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export const MODEL_FAILURES = [
  /** The path is not a directory. */
  'dir_missing',
  /** No ONNX graph: model.onnx, onnx/model.onnx, or one *.onnx file in either. */
  'graph_missing',
  /** No tokenizer.json, or one the tokenizer library cannot read. */
  'tokenizer_invalid',
  /** config.json (or tokenizer_config.json) is not JSON, or its id2label is not a label list. */
  'config_invalid',
  /** onnxruntime-node or @huggingface/tokenizers is not installed. */
  'runtime_missing',
  /** The ONNX runtime could not load the graph. */
  'graph_invalid',
  /** The graph does not take input_ids / attention_mask (token_type_ids) or does not answer one logit per label. */
  'io_unsupported',
  /** No label reads as an attack and no label map names one (set DETECTION_MODEL_LABELS). */
  'labels_unmapped',
  /** The label map names a label the model does not have. */
  'labels_unknown',
] as const;
export type ModelFailure = (typeof MODEL_FAILURES)[number];

export class DetectionModelError extends Error {
  readonly code = 'DETECTION_MODEL_UNAVAILABLE';
  readonly reason: ModelFailure;
  constructor(reason: ModelFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DetectionModelError';
    this.reason = reason;
  }
}

/** Characters of a text the model reads (its first 16 KiB, in windows). */
export const MODEL_MAX_CHARS = 16_384;
/** Windows of the model's length read per text at most. */
export const MODEL_MAX_WINDOWS = 4;
/** The model's length in tokens when neither config file says (and the most svc feeds it). */
export const MODEL_MAX_TOKENS = 512;

/** Label names read as attacks when no label map is configured. */
const ATTACK_LABEL = /inject|jailbreak|malicious|unsafe|attack|harmful/i;

export interface ModelFiles {
  readonly dir: string;
  readonly graph: string;
  /** Files the graph's weights are read from: the graph and its external data beside it. */
  readonly weights: readonly string[];
  readonly tokenizer: string;
  readonly config: string | null;
  readonly tokenizerConfig: string | null;
  /** Bytes of the graph and its external data. */
  readonly bytes: number;
}

export interface ModelSettings {
  /** Labels whose probability is the attack probability (DETECTION_MODEL_LABELS); null: by name. */
  readonly attackLabels?: readonly string[] | null;
  /** Intra-op threads of the ONNX runtime (default 1: the request path shares the cores). */
  readonly threads?: number;
}

export interface ModelReading {
  /** Probability (0..1) that the text is an attack: the attack labels' mass, in its highest window. */
  readonly probability: number;
  /** The model's top label in that window. */
  readonly label: string;
  readonly windows: number;
}

export interface TextClassifier {
  readonly id: string;
  readonly files: ModelFiles;
  readonly labels: readonly string[];
  readonly attackLabels: readonly string[];
  readonly maxTokens: number;
  classify(text: string): Promise<ModelReading>;
  close(): Promise<void>;
}

/** DETECTION_MODEL_LABELS: a comma-separated list of label names; empty entries dropped. */
export function parseLabelList(text: string): string[] {
  return text.split(',').map((label) => label.trim()).filter((label) => label !== '');
}

/**
 * The labels that count as an attack: the configured ones (each must be one of the model's), or
 * those whose name reads as one (INJECTION, JAILBREAK, MALICIOUS, UNSAFE, …).
 */
export function resolveAttackLabels(labels: readonly string[], configured: readonly string[] | null | undefined): string[] {
  if (configured !== null && configured !== undefined && configured.length > 0) {
    const unknown = configured.filter((label) => !labels.includes(label));
    if (unknown.length > 0) throw new DetectionModelError('labels_unknown', `DETECTION_MODEL_LABELS names ${unknown.join(', ')}, which the model does not have (its labels: ${labels.join(', ')}).`);
    return [...configured];
  }
  const named = labels.filter((label) => ATTACK_LABEL.test(label));
  if (named.length === 0 || named.length === labels.length) {
    throw new DetectionModelError('labels_unmapped', `No label of the model (${labels.join(', ')}) reads as an attack: set DETECTION_MODEL_LABELS to the ones that do (Llama Prompt Guard 2: LABEL_1).`);
  }
  return named;
}

function readJson(file: string | null): Record<string, unknown> | null {
  if (file === null) return null;
  try {
    const value: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('not a JSON object');
    return value as Record<string, unknown>;
  } catch (cause) {
    throw new DetectionModelError('config_invalid', `${file} is not a JSON object: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** The ONNX graph of a directory: model.onnx, onnx/model.onnx, or the one *.onnx in either. */
function findGraph(dir: string): string | null {
  for (const candidate of [path.join(dir, 'model.onnx'), path.join(dir, 'onnx', 'model.onnx')]) if (existsSync(candidate)) return candidate;
  for (const folder of [dir, path.join(dir, 'onnx')]) {
    if (!existsSync(folder) || !statSync(folder).isDirectory()) continue;
    const graphs = readdirSync(folder).filter((file) => file.endsWith('.onnx'));
    if (graphs.length === 1) return path.join(folder, graphs[0] as string);
  }
  return null;
}

/** The files of a model directory (checked, not loaded); throws DetectionModelError. */
export function findModelFiles(modelDir: string): ModelFiles {
  const dir = path.resolve(modelDir);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new DetectionModelError('dir_missing', `${dir} is not a directory. Point DETECTION_MODEL_DIR at a local ONNX text-classification model (model.onnx, tokenizer.json, config.json); svc never downloads one.`);
  }
  const graph = findGraph(dir);
  if (graph === null) {
    throw new DetectionModelError('graph_missing', `${dir} holds no ONNX graph (model.onnx, onnx/model.onnx, or a single *.onnx in either). Export the model with \`optimum-cli export onnx --task text-classification\` into it.`);
  }
  const tokenizer = path.join(dir, 'tokenizer.json');
  if (!existsSync(tokenizer)) {
    throw new DetectionModelError('tokenizer_invalid', `${dir} holds no tokenizer.json (the fast tokenizer file; optimum-cli export writes it beside the graph).`);
  }
  const optional = (name: string) => (existsSync(path.join(dir, name)) ? path.join(dir, name) : null);
  const base = path.basename(graph);
  const weights = [graph, ...readdirSync(path.dirname(graph)).filter((file) => file !== base && file.startsWith(base) && /[._]data$/.test(file)).map((file) => path.join(path.dirname(graph), file))];
  const bytes = weights.reduce((total, file) => total + statSync(file).size, 0);
  return { dir, graph, weights, tokenizer, config: optional('config.json'), tokenizerConfig: optional('tokenizer_config.json'), bytes };
}

/** The label names of config.json's id2label in index order; null when the file gives none. */
export function labelsOf(config: Record<string, unknown> | null, file = 'config.json'): string[] | null {
  const id2label = config?.['id2label'];
  if (id2label === undefined) return null;
  if (id2label === null || typeof id2label !== 'object') throw new DetectionModelError('config_invalid', `${file}: id2label must map indices to label names`);
  const entries = Object.entries(id2label as Record<string, unknown>);
  const labels: string[] = [];
  for (const [index, label] of entries) {
    const position = Number(index);
    if (!Number.isInteger(position) || position < 0 || position >= entries.length || typeof label !== 'string' || labels[position] !== undefined) {
      throw new DetectionModelError('config_invalid', `${file}: id2label must map 0..n-1 to label names (got ${JSON.stringify(id2label)})`);
    }
    labels[position] = label;
  }
  return labels;
}

/** The model's length in tokens: tokenizer_config.json's model_max_length, else config.json's max_position_embeddings, at most MODEL_MAX_TOKENS. */
function maxTokensOf(config: Record<string, unknown> | null, tokenizerConfig: Record<string, unknown> | null): number {
  for (const value of [tokenizerConfig?.['model_max_length'], config?.['max_position_embeddings']]) {
    if (typeof value === 'number' && Number.isInteger(value) && value >= 4 && value <= 1_000_000) return Math.min(value, MODEL_MAX_TOKENS);
  }
  return MODEL_MAX_TOKENS;
}

// The optional packages' surfaces svc uses (declared here: svc must typecheck without them).
interface OrtTensor { readonly data: ArrayLike<number>; readonly dims: readonly number[] }
interface OrtSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, unknown>): Promise<Record<string, OrtTensor>>;
  release(): Promise<void>;
}
interface Ort {
  InferenceSession: { create(file: string, options: Record<string, unknown>): Promise<OrtSession> };
  Tensor: new (type: 'int64', data: BigInt64Array, dims: number[]) => unknown;
}
interface Tokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): { ids: number[] };
  token_to_id(token: string): number | undefined;
}
interface Tokenizers { Tokenizer: new (tokenizer: object, config: object) => Tokenizer }

async function importOptional<T>(specifier: string): Promise<T> {
  try {
    const module = (await import(specifier)) as T & { default?: T };
    return (module.default ?? module) as T;
  } catch (cause) {
    throw new DetectionModelError(
      'runtime_missing',
      `The local model tier needs ${specifier}, an optional dependency that is not installed. Install it with \`npm install\` (not \`--omit=optional\`), or unset DETECTION_MODEL_DIR.`,
      { cause },
    );
  }
}

/** onnxruntime-node and @huggingface/tokenizers, imported (throws runtime_missing). */
export async function importModelRuntime(): Promise<{ ort: Ort; tokenizers: Tokenizers }> {
  const [ort, tokenizers] = await Promise.all([importOptional<Ort>('onnxruntime-node'), importOptional<Tokenizers>('@huggingface/tokenizers')]);
  return { ort, tokenizers };
}

/**
 * The cheap part of loading, for the main thread before the worker starts: the files, the
 * labels under the label map, and the optional packages. Throws DetectionModelError.
 */
export async function checkModelDir(modelDir: string, settings: ModelSettings = {}): Promise<{ files: ModelFiles; labels: string[] | null; attackLabels: string[] | null }> {
  const files = findModelFiles(modelDir);
  const labels = labelsOf(readJson(files.config));
  const attackLabels = labels === null ? null : resolveAttackLabels(labels, settings.attackLabels);
  await importModelRuntime();
  return { files, labels, attackLabels };
}

/** The token ids a tokenizer puts before and after a text's own (e.g. [CLS] … [SEP]). */
function specialTokens(tokenizer: Tokenizer): { prefix: number[]; suffix: number[] } {
  const plain = tokenizer.encode('hello', { add_special_tokens: false }).ids;
  const full = tokenizer.encode('hello').ids;
  for (let start = 0; start + plain.length <= full.length; start += 1) {
    if (plain.every((id, offset) => full[start + offset] === id)) return { prefix: full.slice(0, start), suffix: full.slice(start + plain.length) };
  }
  return { prefix: [], suffix: [] };
}

/** Start offsets of the windows read: all when few, else the first, the last and evenly spread ones. */
export function windowStarts(tokens: number, size: number, limit = MODEL_MAX_WINDOWS): number[] {
  if (tokens <= size) return [0];
  const last = tokens - size;
  const count = Math.min(limit, Math.ceil(tokens / size));
  return Array.from({ length: count }, (_, index) => Math.round((last * index) / (count - 1)));
}

/**
 * The probabilities of `length` logits read from `values` at `start` (one row of a model's output
 * tensor), shifted by their maximum so that large logits do not overflow. Shared with the
 * verification capability's grounding model (its NLI logits).
 */
export function softmax(values: ArrayLike<number>, start: number, length: number): number[] {
  let max = -Infinity;
  for (let index = 0; index < length; index += 1) max = Math.max(max, values[start + index] as number);
  const exps = Array.from({ length }, (_, index) => Math.exp((values[start + index] as number) - max));
  const sum = exps.reduce((total, value) => total + value, 0);
  return exps.map((value) => value / sum);
}

/**
 * Loads the model of `modelDir` (checked first): tokenizer, graph, labels, then one probe text
 * through it to check its inputs and outputs. Throws DetectionModelError.
 */
export async function loadTextClassifier(modelDir: string, settings: ModelSettings = {}): Promise<TextClassifier> {
  const files = findModelFiles(modelDir);
  const config = readJson(files.config);
  const tokenizerConfig = readJson(files.tokenizerConfig);
  let labels = labelsOf(config);
  const { ort, tokenizers } = await importModelRuntime();
  let tokenizer: Tokenizer;
  try {
    tokenizer = new tokenizers.Tokenizer(JSON.parse(readFileSync(files.tokenizer, 'utf8')) as object, tokenizerConfig ?? {});
    tokenizer.encode('probe');
  } catch (cause) {
    throw new DetectionModelError('tokenizer_invalid', `${files.tokenizer} could not be read as a tokenizer: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
  const threads = settings.threads ?? 1;
  let session: OrtSession;
  try {
    session = await ort.InferenceSession.create(files.graph, { intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all', executionProviders: ['cpu'] });
  } catch (cause) {
    throw new DetectionModelError('graph_invalid', `${files.graph} could not be loaded by the ONNX runtime: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
  const known = new Set(['input_ids', 'attention_mask', 'token_type_ids']);
  const unknownInputs = session.inputNames.filter((name) => !known.has(name));
  if (!session.inputNames.includes('input_ids') || unknownInputs.length > 0) {
    await session.release();
    throw new DetectionModelError('io_unsupported', `${files.graph} takes ${session.inputNames.join(', ')}; a text classifier takes input_ids and attention_mask (and token_type_ids).`);
  }
  const output = session.outputNames.includes('logits') ? 'logits' : (session.outputNames[0] as string);
  const maxTokens = maxTokensOf(config, tokenizerConfig);
  const { prefix, suffix } = specialTokens(tokenizer);
  const size = Math.max(1, maxTokens - prefix.length - suffix.length);
  const padId = tokenizer.token_to_id('[PAD]') ?? tokenizer.token_to_id('<pad>') ?? 0;
  const multiLabel = config?.['problem_type'] === 'multi_label_classification';

  /** Logits per window of one text: [windows][labels]. */
  const run = async (text: string): Promise<number[][]> => {
    const content = tokenizer.encode(text.length > MODEL_MAX_CHARS ? text.slice(0, MODEL_MAX_CHARS) : text, { add_special_tokens: false }).ids;
    const windows = windowStarts(content.length, size).map((start) => [...prefix, ...content.slice(start, start + size), ...suffix]);
    const width = Math.max(...windows.map((window) => window.length));
    const ids = new BigInt64Array(windows.length * width).fill(BigInt(padId));
    const mask = new BigInt64Array(windows.length * width);
    windows.forEach((window, row) => window.forEach((id, column) => {
      ids[row * width + column] = BigInt(id);
      mask[row * width + column] = 1n;
    }));
    const dims = [windows.length, width];
    const feeds: Record<string, unknown> = { input_ids: new ort.Tensor('int64', ids, dims) };
    if (session.inputNames.includes('attention_mask')) feeds['attention_mask'] = new ort.Tensor('int64', mask, dims);
    if (session.inputNames.includes('token_type_ids')) feeds['token_type_ids'] = new ort.Tensor('int64', new BigInt64Array(windows.length * width), dims);
    const result = (await session.run(feeds))[output];
    const classes = result?.dims[1] ?? 0;
    if (result === undefined || result.dims.length !== 2 || result.dims[0] !== windows.length || classes < 2) {
      throw new DetectionModelError('io_unsupported', `${files.graph} answered ${output} of shape [${result?.dims.join(', ') ?? ''}]; a text classifier answers logits of shape [batch, labels] with 2 labels or more.`);
    }
    return windows.map((_, row) => Array.from({ length: classes }, (_, column) => result.data[row * classes + column] as number));
  };

  let probe: number[][];
  try {
    probe = await run('probe');
  } catch (error) {
    await session.release();
    if (error instanceof DetectionModelError) throw error;
    throw new DetectionModelError('io_unsupported', `${files.graph} failed on a probe text: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const classes = probe[0]?.length ?? 0;
  labels ??= Array.from({ length: classes }, (_, index) => `LABEL_${index}`);
  if (labels.length !== classes) {
    await session.release();
    throw new DetectionModelError('io_unsupported', `${files.graph} answers ${classes} logits but config.json names ${labels.length} labels.`);
  }
  let attackLabels: string[];
  try {
    attackLabels = resolveAttackLabels(labels, settings.attackLabels);
  } catch (error) {
    await session.release();
    throw error;
  }
  const attackIndices = attackLabels.map((label) => labels.indexOf(label));
  const modelLabels = labels;

  return {
    id: `onnx:${path.basename(files.dir)}`,
    files,
    labels: modelLabels,
    attackLabels,
    maxTokens,
    async classify(text) {
      const rows = await run(text);
      let best: ModelReading = { probability: -1, label: '', windows: rows.length };
      for (const logits of rows) {
        const probabilities = multiLabel ? logits.map((value) => 1 / (1 + Math.exp(-value))) : softmax(logits, 0, logits.length);
        const probability = multiLabel ? Math.max(...attackIndices.map((index) => probabilities[index] as number)) : attackIndices.reduce((sum, index) => sum + (probabilities[index] as number), 0);
        if (probability > best.probability) {
          const top = probabilities.indexOf(Math.max(...probabilities));
          best = { probability: Math.min(1, Math.max(0, probability)), label: modelLabels[top] as string, windows: rows.length };
        }
      }
      return best;
    },
    close: () => session.release(),
  };
}
