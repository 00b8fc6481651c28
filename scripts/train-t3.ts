/**
 * Trains the T3 intent classifier (logistic regression over USE-lite embeddings + hashed n-grams)
 * and writes src/detection/ml/weights/t3.json.
 *
 *   npx tsx scripts/train-t3.ts            # source-wise evaluation, random held-out split, final fit
 *   npx tsx scripts/train-t3.ts --embed-only   # only fill the embedding cache
 *   npx tsx scripts/train-t3.ts --ngrams-only --engine-loso [--calibrate] [--dry-run]
 *       # the n-gram head only (what the served engine runs while T2 is off: no embedding reaches
 *       # T3), no embeddings needed; the full head of the existing weights file is kept
 *
 * Training data is read at run time from ../shared/datasets (never copied into the repository);
 * embeddings of the corpus are cached under the OS temp directory so re-runs take seconds.
 */
import { createReadStream, existsSync, readFileSync, readdirSync, writeFileSync, mkdirSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createEmbedder, MAX_EMBED_CHARS } from '../src/detection/ml/embedder.ts';
import { sha256Hex } from '../src/platform/crypto.ts';
import type { FeatureConfig, SparseFeatures, T3Head, T3Weights } from '../src/detection/ml/t3.ts';
import { EXTRA_FEATURES, T3_WEIGHTS_FILE, decodeWeights, encodeWeights, extractFeatures, headLogit, sigmoid } from '../src/detection/ml/t3.ts';
import { CHAR_MODEL_FILE, encodeCharModel, trainCharModel } from '../src/detection/ml/gibberish.ts';
import type { SeedPhrase } from '../src/detection/ml/vectors.ts';
import { loadSeedPhrases } from '../src/detection/ml/vectors.ts';
import type { DetectionDeps, ThreatDecision } from '../src/detection/index.ts';
import { auroc } from './train-semantic.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const datasets = path.resolve(repoRoot, '../shared/datasets');
const BENIGN_TRAINING_FILE = path.join(repoRoot, 'src/detection/ml/seeds/benign-training.json');
const ATTACK_TRAINING_FILE = path.join(repoRoot, 'src/detection/ml/seeds/attack-training.json');

export interface Sample {
  text: string;
  attack: boolean;
  source: string;
  category: string;
  /** `retrieved_content` for indirect-injection records (inspected as tool_output). */
  direction?: string;
  /** The full MCP tool definition (inspected as tool_definition). */
  tool?: { name?: string; description?: string; inputSchema?: unknown; annotations?: unknown };
}

export async function loadCorpus(): Promise<Sample[]> {
  if (!existsSync(datasets)) throw new Error(`datasets not found at ${datasets}`);
  const samples: Sample[] = [];
  const add = (file: string, map: (record: Record<string, unknown>) => Sample | null) => {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const sample = map(JSON.parse(line) as Record<string, unknown>);
      if (sample !== null && sample.text.trim() !== '') samples.push(sample);
    }
  };
  for (const name of readdirSync(path.join(datasets, 'prompt_injection')).filter((file) => file.endsWith('.jsonl'))) {
    add(path.join(datasets, 'prompt_injection', name), (record) => ({
      text: String(record.text ?? ''),
      attack: record.label === 'attack',
      source: `pi/${name.replace('.jsonl', '')}`,
      category: String(record.category ?? ''),
      ...(typeof record.direction === 'string' ? { direction: record.direction } : {}),
    }));
  }
  for (const name of readdirSync(path.join(datasets, 'mcp')).filter((file) => file.endsWith('.jsonl'))) {
    add(path.join(datasets, 'mcp', name), (record) => ({
      text: String(record.text ?? ''),
      attack: record.label === 'attack',
      source: `mcp/${name.replace('.jsonl', '')}`,
      category: String(record.category ?? ''),
      ...(record.tool !== null && typeof record.tool === 'object' ? { tool: record.tool as Sample['tool'] } : {}),
    }));
  }
  // Synthetic everyday sentences (names, addresses, dates): benign for injection purposes.
  for (const name of readdirSync(path.join(datasets, 'pii')).filter((file) => file.endsWith('.jsonl'))) {
    add(path.join(datasets, 'pii', name), (record) => ({
      text: String(record.text ?? ''),
      attack: false,
      source: `pii/${name.replace('.jsonl', '')}`,
      category: 'everyday',
    }));
  }
  const seen = new Set<string>();
  return samples.filter((sample) => {
    const key = `${sample.attack}:${sample.text}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Embeds every sample once per embedder id; vectors are cached in the OS temp directory. */
export async function embedCorpus(samples: Sample[]): Promise<Map<string, Float32Array>> {
  const embedder = await createEmbedder({ cacheEntries: 16 });
  const cacheDir = path.join(tmpdir(), 'svc-ml-cache');
  mkdirSync(cacheDir, { recursive: true });
  const cacheFile = path.join(cacheDir, `${embedder.id}.jsonl`);
  const vectors = new Map<string, Float32Array>();
  if (existsSync(cacheFile)) {
    const lines = createInterface({ input: createReadStream(cacheFile) });
    for await (const line of lines) {
      if (line === '') continue;
      const [key, encoded] = line.split(' ');
      if (key === undefined || encoded === undefined) continue;
      const bytes = Buffer.from(encoded, 'base64');
      vectors.set(key, new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4).slice());
    }
  }
  const wanted = process.argv.includes('--cached-only') ? samples.filter((sample) => sample.source === 'curated') : samples;
  const todo = [...new Set(wanted.map((sample) => sample.text.slice(0, MAX_EMBED_CHARS)))].filter((text) => !vectors.has(sha256Hex(text)));
  // Short texts first: faster feedback, and similar lengths batch well.
  todo.sort((a, b) => a.length - b.length);
  const started = Date.now();
  for (let start = 0; start < todo.length; start += 16) {
    const batch = todo.slice(start, start + 16);
    const embedded = await embedder.embed(batch);
    const lines: string[] = [];
    batch.forEach((text, index) => {
      const vector = embedded[index] as Float32Array;
      const key = sha256Hex(text);
      vectors.set(key, vector);
      lines.push(`${key} ${Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64')}`);
    });
    appendFileSync(cacheFile, lines.join('\n') + '\n');
    if ((start / 16) % 50 === 0) process.stderr.write(`embedded ${start + batch.length}/${todo.length} in ${Math.round((Date.now() - started) / 1000)} s\n`);
  }
  return vectors;
}

export function embeddingOf(vectors: Map<string, Float32Array>, text: string): Float32Array {
  const vector = vectors.get(sha256Hex(text.slice(0, MAX_EMBED_CHARS)));
  if (vector === undefined) throw new Error('missing embedding');
  return vector;
}

interface Row {
  sample: Sample;
  features: SparseFeatures;
  embedding: Float32Array;
  weight: number;
}

interface TrainOptions {
  useEmbedding: boolean;
  epochs: number;
  learningRate: number;
  l2: number;
}

const FEATURES: FeatureConfig = {
  hashBits: Number(process.env.T3_HASH_BITS ?? 14),
  wordNgrams: Number(process.env.T3_WORD_NGRAMS ?? 2),
  charNgrams: (process.env.T3_CHAR_NGRAMS ?? '4').split(',').filter((value) => value !== '').map(Number),
};
const DIMENSIONS = 512;

// Measured with --engine-loso (issue #4): a cap of 200 instead of 400, our own phrasings worth 6
// instead of 3 and 8 epochs instead of 5 raise leave-one-source-out detection 89.5 -> 90.2 % at 0.6 %
// false positives; 10 epochs or no curated up-weighting cost false positives on role-play prompts.
const SOURCE_CAP = Number(process.env.T3_SOURCE_CAP ?? 200);
const CURATED_WEIGHT = Number(process.env.T3_CURATED_WEIGHT ?? 6);

/** Per-sample weights: classes balanced overall, and no single source worth more than SOURCE_CAP (200) records. */
function weigh(rows: Row[]): void {
  const perSource = new Map<string, number>();
  for (const row of rows) perSource.set(row.sample.source, (perSource.get(row.sample.source) ?? 0) + 1);
  // Everyday PII sentences are easy negatives far from any prompt: keep their share small.
  const cap = (source: string) => (source.startsWith('pii/') ? 150 : SOURCE_CAP);
  for (const row of rows) row.weight = Math.min(1, cap(row.sample.source) / (perSource.get(row.sample.source) ?? 1)) * (row.sample.source === 'curated' ? CURATED_WEIGHT : 1);
  let attack = 0;
  let benign = 0;
  for (const row of rows) {
    if (row.sample.attack) attack += row.weight;
    else benign += row.weight;
  }
  for (const row of rows) row.weight *= row.sample.attack ? (attack + benign) / (2 * attack) : (attack + benign) / (2 * benign);
}

/** Logistic regression by mini-batch Adam with L2 (decoupled weight decay). Deterministic. */
function train(rows: Row[], options: TrainOptions): T3Head {
  const hashSize = 1 << FEATURES.hashBits;
  const size = DIMENSIONS + hashSize + EXTRA_FEATURES;
  const weights = new Float64Array(size);
  const m = new Float64Array(size);
  const v = new Float64Array(size);
  let bias = 0;
  let mBias = 0;
  let vBias = 0;
  const beta1 = 0.9;
  const beta2 = 0.999;
  let step = 0;
  const order = rows.map((_, index) => index);
  let seed = 12345;
  const random = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const gradient = new Float64Array(size);
  const touched = new Set<number>();
  const batchSize = 64;
  for (let epoch = 0; epoch < options.epochs; epoch += 1) {
    for (let index = order.length - 1; index > 0; index -= 1) {
      const other = Math.floor(random() * (index + 1));
      [order[index], order[other]] = [order[other] as number, order[index] as number];
    }
    for (let start = 0; start < order.length; start += batchSize) {
      gradient.fill(0);
      touched.clear();
      let gradientBias = 0;
      const batch = order.slice(start, start + batchSize);
      for (const rowIndex of batch) {
        const row = rows[rowIndex] as Row;
        const logit = headLogit({ weights, bias }, DIMENSIONS, hashSize, row.features, options.useEmbedding ? row.embedding : undefined);
        const error = (sigmoid(logit) - (row.sample.attack ? 1 : 0)) * row.weight;
        gradientBias += error;
        if (options.useEmbedding) for (let d = 0; d < DIMENSIONS; d += 1) gradient[d] = (gradient[d] as number) + error * (row.embedding[d] as number);
        for (let k = 0; k < row.features.indices.length; k += 1) {
          const position = DIMENSIONS + (row.features.indices[k] as number);
          gradient[position] = (gradient[position] as number) + error * (row.features.values[k] as number);
        }
        for (let k = 0; k < EXTRA_FEATURES; k += 1) {
          const position = DIMENSIONS + hashSize + k;
          gradient[position] = (gradient[position] as number) + error * (row.features.extra[k] as number);
        }
      }
      step += 1;
      const correction1 = 1 - beta1 ** step;
      const correction2 = 1 - beta2 ** step;
      const scale = 1 / batch.length;
      for (let position = 0; position < size; position += 1) {
        const g = (gradient[position] as number) * scale;
        m[position] = beta1 * (m[position] as number) + (1 - beta1) * g;
        v[position] = beta2 * (v[position] as number) + (1 - beta2) * g * g;
        weights[position] =
          (weights[position] as number) * (1 - options.learningRate * options.l2) -
          (options.learningRate * ((m[position] as number) / correction1)) / (Math.sqrt((v[position] as number) / correction2) + 1e-8);
      }
      const gb = gradientBias * scale;
      mBias = beta1 * mBias + (1 - beta1) * gb;
      vBias = beta2 * vBias + (1 - beta2) * gb * gb;
      bias -= (options.learningRate * (mBias / correction1)) / (Math.sqrt(vBias / correction2) + 1e-8);
    }
  }
  if (!options.useEmbedding) for (let d = 0; d < DIMENSIONS; d += 1) weights[d] = 0;
  return { weights: Array.from(weights), bias };
}

function predict(head: T3Head, row: Row, useEmbedding: boolean): number {
  return sigmoid(headLogit(head, DIMENSIONS, 1 << FEATURES.hashBits, row.features, useEmbedding ? row.embedding : undefined));
}

interface Counts {
  tp: number;
  fp: number;
  fn: number;
  tn: number;
}

function count(rows: Row[], head: T3Head, useEmbedding: boolean, threshold = 0.5): Counts {
  const counts = { tp: 0, fp: 0, fn: 0, tn: 0 };
  for (const row of rows) {
    const positive = predict(head, row, useEmbedding) >= threshold;
    if (row.sample.attack) counts[positive ? 'tp' : 'fn'] += 1;
    else counts[positive ? 'fp' : 'tn'] += 1;
  }
  return counts;
}

const percent = (part: number, whole: number) => (whole === 0 ? null : Math.round((1000 * part) / whole) / 10);

function summary(counts: Counts) {
  return {
    precision: percent(counts.tp, counts.tp + counts.fp),
    recall: percent(counts.tp, counts.tp + counts.fn),
    false_positive_rate: percent(counts.fp, counts.fp + counts.tn),
    attacks: counts.tp + counts.fn,
    benign: counts.fp + counts.tn,
  };
}

/** Our own phrasings: T2 seeds (attacks and benign anchors) and benign training prompts. */
function curatedSamples(): Sample[] {
  const training = [BENIGN_TRAINING_FILE, ATTACK_TRAINING_FILE].flatMap((file) => JSON.parse(readFileSync(file, 'utf8')) as SeedPhrase[]);
  return [...loadSeedPhrases(), ...training].map((seed) => ({ text: seed.text, attack: seed.category !== 'benign', source: 'curated', category: seed.category }));
}

/** The probability's log-odds (clamped away from 0 and 1). */
function logOdds(probability: number): number {
  const clamped = Math.min(1 - 1e-7, Math.max(1e-7, probability));
  return Math.log(clamped / (1 - clamped));
}

export interface Platt {
  a: number;
  b: number;
}

/**
 * Platt scaling: p' = sigmoid(a * logit(p) + b), fitted by Newton's method on the weighted log
 * loss of out-of-source scores (each source capped at SOURCE_CAP records' worth, classes
 * balanced, as in training), so p' means "attack" at even odds on a source the model never saw.
 */
export function fitPlatt(items: ReadonlyArray<{ probability: number; attack: boolean; source: string }>): Platt {
  const perSource = new Map<string, number>();
  for (const item of items) perSource.set(item.source, (perSource.get(item.source) ?? 0) + 1);
  const weights = items.map((item) => Math.min(1, SOURCE_CAP / (perSource.get(item.source) ?? 1)));
  let attack = 0;
  let benign = 0;
  items.forEach((item, index) => {
    if (item.attack) attack += weights[index] as number;
    else benign += weights[index] as number;
  });
  const xs = items.map((item) => logOdds(item.probability));
  const ws = items.map((item, index) => (weights[index] as number) * (item.attack ? 0.5 / Math.max(attack, 1e-9) : 0.5 / Math.max(benign, 1e-9)));
  let a = 1;
  let b = 0;
  for (let iteration = 0; iteration < 100; iteration += 1) {
    let ga = 0, gb = 0, haa = 1e-9, hab = 0, hbb = 1e-9;
    items.forEach((item, index) => {
      const x = xs[index] as number;
      const w = ws[index] as number;
      const p = sigmoid(a * x + b);
      const error = (p - (item.attack ? 1 : 0)) * w;
      const curvature = p * (1 - p) * w;
      ga += error * x; gb += error;
      haa += curvature * x * x; hab += curvature * x; hbb += curvature;
    });
    const determinant = haa * hbb - hab * hab;
    if (Math.abs(determinant) < 1e-15) break;
    const da = (hbb * ga - hab * gb) / determinant;
    const db = (haa * gb - hab * ga) / determinant;
    a -= da; b -= db;
    if (Math.abs(da) + Math.abs(db) < 1e-9) break;
  }
  return { a, b };
}

export function applyPlatt(platt: Platt, probability: number): number {
  return sigmoid(platt.a * logOdds(probability) + platt.b);
}

export type EngineKind = 'prompt' | 'indirect' | 'over_defense' | 'tool_definition';
const OVER_DEFENSE_SOURCES: ReadonlySet<string> = new Set(['pi/xstest_safe_prompts', 'pi/cyberseceval_frr_borderline']);

/** What bench/detection.ts inspects a record as (its `benchKind`), for the same per-kind tables. */
function engineKind(sample: Sample): EngineKind {
  if (sample.source.startsWith('mcp/')) return 'tool_definition';
  if (OVER_DEFENSE_SOURCES.has(sample.source)) return 'over_defense';
  return sample.direction === 'retrieved_content' ? 'indirect' : 'prompt';
}

/**
 * End-to-end estimate for unseen sources: runs the detection engine (T1, T3 signals, classifier
 * contribution, policy) over every prompt-injection and MCP record, inspected as
 * bench/detection.ts does (prompt, tool_output for retrieved content, tool_definition), with the
 * classifier answering its leave-one-source-out probability (the model that never saw the
 * record's source). With `calibrate`, that probability is Platt-scaled by a fit on the other
 * sources' out-of-source scores (never on the scored source). "Detected" = challenge or block,
 * as in bench/detection.ts.
 */
/** One record of the engine's whole-source holdout pass, for a caller that fits on the engine's output (scripts/fit-graded-score.ts). */
export interface HoldoutRecord {
  readonly source: string;
  readonly kind: EngineKind;
  readonly attack: boolean;
  /** The held-out classifier probability the engine was given (after Platt scaling when calibrated). */
  readonly probability: number;
  readonly decision: ThreatDecision;
  readonly text: string;
}

export interface EngineLosoOptions {
  /** Extra engine options (e.g. `gradedScore: false` for the raw decision score). */
  readonly engine?: Partial<DetectionDeps>;
  /** Called with every inspected record. */
  readonly collect?: (record: HoldoutRecord) => void;
}

async function engineLoso(rows: Row[], heads: ReadonlyArray<readonly [string, Array<{ probability: number; attack: boolean; row: Row }>]>, calibrate: boolean, loso: EngineLosoOptions = {}): Promise<Record<string, unknown>> {
  const { createDetectionEngine } = await import('../src/detection/index.ts');
  const report: Record<string, unknown> = {};
  // Debugging aid: T3_ENGINE_DUMP=file writes every miss and false positive (first head) as JSON lines.
  const dump = process.env.T3_ENGINE_DUMP;
  if (dump !== undefined) writeFileSync(dump, '');
  for (const [head, items] of heads) {
    const probabilities = new Map<string, number>();
    const sources = [...new Set(items.map((item) => item.row.sample.source))];
    const fits: Record<string, Platt> = {};
    for (const source of sources) {
      const own = items.filter((item) => item.row.sample.source === source);
      let platt: Platt | null = null;
      if (calibrate) {
        platt = fitPlatt(items.filter((item) => item.row.sample.source !== source).map((item) => ({ probability: item.probability, attack: item.attack, source: item.row.sample.source })));
        fits[source] = { a: Math.round(platt.a * 1000) / 1000, b: Math.round(platt.b * 1000) / 1000 };
      }
      for (const item of own) probabilities.set(`${item.row.sample.source}\u0000${item.row.sample.text}`, platt === null ? item.probability : applyPlatt(platt, item.probability));
    }
    // One inspection at a time: the classifier answers the probability of the record being inspected.
    let current = 0;
    // T3_CONFIDENT=p: the classifier-alone threshold of the engine (the sweep of docs/detection.md, "Fourth round").
    const confident = process.env.T3_CONFIDENT === undefined ? {} : { classifierConfident: Number(process.env.T3_CONFIDENT) };
    const engine = createDetectionEngine({ analysisCache: false, ...confident, ...loso.engine, t3Classifier: { id: `loso-${head}`, classify: () => ({ attackProbability: current }) } });
    // AUROC of threat_score (the ranking over every record, not only the decision at block).
    const ranked: Array<{ score: number; attack: boolean; kind: string }> = [];
    type Counter = { attacks: number; detected: number; benign: number; falsePositives: number };
    const bySource = new Map<string, Counter & { kind: string }>();
    const byKind = new Map<string, Counter>();
    for (const row of rows) {
      if (row.sample.source === 'curated' || row.sample.source.startsWith('pii/')) continue;
      const kind = engineKind(row.sample);
      current = probabilities.get(`${row.sample.source}\u0000${row.sample.text}`) ?? 0;
      const tool = row.sample.tool;
      const request = kind === 'tool_definition' && tool !== undefined
        ? { kind: 'tool_definition' as const, tool: { name: tool.name ?? '', description: tool.description ?? '', inputSchema: tool.inputSchema ?? {}, ...(tool.annotations == null ? {} : { annotations: tool.annotations }) } }
        : { kind: kind === 'indirect' ? ('tool_output' as const) : ('prompt' as const), content: row.sample.text };
      const decision = await engine.inspect(request as Parameters<typeof engine.inspect>[0]);
      const flagged = !decision.allowed;
      ranked.push({ score: decision.threat_score, attack: row.sample.attack, kind });
      loso.collect?.({ source: row.sample.source, kind, attack: row.sample.attack, probability: current, decision, text: row.sample.text });
      if (dump !== undefined && head === heads[0]?.[0] && flagged !== row.sample.attack) {
        appendFileSync(dump, JSON.stringify({ source: row.sample.source, kind, attack: row.sample.attack, probability: Math.round(current * 1000) / 1000, score: decision.threat_score, patterns: decision.patterns_matched.map((pattern) => pattern.id), text: row.sample.text.slice(0, 4000) }) + '\n');
      }
      const sourceCounter = bySource.get(row.sample.source) ?? { kind, attacks: 0, detected: 0, benign: 0, falsePositives: 0 };
      bySource.set(row.sample.source, sourceCounter);
      const kindCounter = byKind.get(kind) ?? { attacks: 0, detected: 0, benign: 0, falsePositives: 0 };
      byKind.set(kind, kindCounter);
      for (const counter of [sourceCounter, kindCounter]) {
        if (row.sample.attack) { counter.attacks += 1; if (flagged) counter.detected += 1; }
        else { counter.benign += 1; if (flagged) counter.falsePositives += 1; }
      }
    }
    const rates = (c: Counter) => ({ attacks: c.attacks, detected: percent(c.detected, c.attacks), benign: c.benign, false_positives: percent(c.falsePositives, c.benign) });
    const rocOf = (items: typeof ranked) => { const value = auroc(items); return Number.isNaN(value) ? null : Math.round(value * 1e4) / 1e4; };
    report[head] = {
      calibrated: calibrate,
      auroc: { pooled: rocOf(ranked), ...Object.fromEntries([...byKind.keys()].map((key) => [key, rocOf(ranked.filter((item) => item.kind === key))])) },
      by_kind: Object.fromEntries([...byKind].map(([key, c]) => [key, rates(c)])),
      by_source: Object.fromEntries([...bySource].sort(([left], [right]) => left.localeCompare(right)).map(([key, c]) => [key, { kind: c.kind, ...rates(c) }])),
      ...(calibrate ? { platt_per_held_out_source: fits } : {}),
    };
    process.stderr.write(`engine with leave-one-source-out classifier (${head} head${calibrate ? ', Platt-calibrated on the other sources' : ''}): ${JSON.stringify(report[head], null, 1)}\n`);
  }
  return report;
}

/**
 * The whole-source holdout of the served configuration (T2 off, so T3 answers with its n-gram
 * head): for every source, the n-gram head is trained on all other sources (and our own
 * phrasings), the engine scores the source with that head, optionally Platt-calibrated on the
 * other sources' out-of-source scores. Used by bench/detection.ts; no embeddings needed.
 */
export async function wholeSourceHoldout(options: { calibrate?: boolean; sources?: (source: string) => boolean; excludeFromTraining?: ReadonlySet<string> } & EngineLosoOptions = {}): Promise<Record<string, unknown>> {
  const training = await holdoutTraining(options.excludeFromTraining);
  const { rows, sources } = training;
  const scored: Array<{ probability: number; attack: boolean; row: Row }> = [];
  // Debugging aid: T3_HOLDOUT_CACHE=file keeps the held-out probabilities between runs (training is
  // deterministic and the n-gram features do not depend on the catalogue or normalization), so a
  // rule change is re-measured in the time of the engine pass alone. Keyed by everything the
  // training depends on; a stale file is recomputed.
  const cacheFile = process.env.T3_HOLDOUT_CACHE;
  const cacheKey = training.key;
  const cached = cacheFile !== undefined && existsSync(cacheFile) ? (JSON.parse(readFileSync(cacheFile, 'utf8')) as { key: string; probabilities: number[] }) : null;
  if (cached !== null && cached.key === cacheKey) {
    let index = 0;
    for (const source of sources) for (const row of rows) if (row.sample.source === source) scored.push({ probability: cached.probabilities[index++] as number, attack: row.sample.attack, row });
    const wantedCached = options.sources;
    const report = await engineLoso(wantedCached === undefined ? rows : rows.filter((row) => wantedCached(row.sample.source)), [['ngrams', scored]], options.calibrate === true, options);
    return report.ngrams as Record<string, unknown>;
  }
  for (const source of sources) {
    const head = training.trainWithout(source);
    for (const row of rows) if (row.sample.source === source) scored.push({ probability: predict(head, row, false), attack: row.sample.attack, row });
  }
  if (cacheFile !== undefined) writeFileSync(cacheFile, JSON.stringify({ key: cacheKey, probabilities: scored.map((item) => item.probability) }));
  const wanted = options.sources;
  const scoredRows = wanted === undefined ? rows : rows.filter((row) => wanted(row.sample.source));
  const report = await engineLoso(scoredRows, [['ngrams', scored]], options.calibrate === true, options);
  return report.ngrams as Record<string, unknown>;
}

/**
 * The whole-source holdout's training set and trainer: every record (deduplicated) and our own
 * phrasings, and the n-gram head trained without one source and without `excludeFromTraining`.
 * `key` covers everything the training depends on (for caches).
 */
async function holdoutTraining(excludeFromTraining: ReadonlySet<string> | undefined): Promise<{ rows: Row[]; sources: string[]; key: string; trainWithout(source: string): T3Head }> {
  const samples = [...(await loadCorpus()), ...curatedSamples()];
  const noEmbedding = new Float32Array(DIMENSIONS);
  const rows: Row[] = samples.map((sample) => ({ sample, features: extractFeatures(sample.text, FEATURES), embedding: noEmbedding, weight: 1 }));
  const optionsFor: TrainOptions = { useEmbedding: false, epochs: Number(process.env.T3_EPOCHS ?? 8), learningRate: Number(process.env.T3_LR ?? 0.01), l2: Number(process.env.T3_L2 ?? 3e-3) };
  const sources = [...new Set(rows.map((row) => row.sample.source))].filter((source) => source !== 'curated').sort();
  const key = sha256Hex(JSON.stringify({ optionsFor, sources, excluded: [...(excludeFromTraining ?? [])].sort(), rows: rows.map((row) => `${row.sample.source}\u0000${row.sample.attack}\u0000${row.sample.text}`) }));
  return {
    rows,
    sources,
    key,
    trainWithout(source: string): T3Head {
      const train1 = rows.filter((row) => row.sample.source !== source && excludeFromTraining?.has(row.sample.source) !== true);
      weigh(train1);
      return train(train1, optionsFor);
    },
  };
}

/** The held-out n-gram head of one source, and what its classifier needs beside it. */
export interface HeldOutHeads {
  readonly features: FeatureConfig;
  readonly dimensions: number;
  /** Sources with a head (every source of the holdout). */
  readonly sources: readonly string[];
  /** The n-gram head trained without `source` (float32, as a weights file stores it). */
  head(source: string): T3Head;
  /** Platt scaling for `source`'s head, fitted on the other sources' held-out probabilities (as the holdout calibrates). */
  platt(source: string): Platt;
}

/**
 * The heads the whole-source holdout trains (one per source, `holdoutTraining`), kept rather than
 * read once per record, so a caller can score other texts with the classifier that never saw a
 * source (bench/inspect.ts's length drift). Cached in `cacheFile` (keyed as the holdout's cache;
 * a stale file is retrained): the first run trains every source's head, as the holdout does.
 */
export async function wholeSourceHeads(options: { excludeFromTraining?: ReadonlySet<string>; cacheFile?: string } = {}): Promise<HeldOutHeads> {
  const training = await holdoutTraining(options.excludeFromTraining);
  const pack = (values: ArrayLike<number>) => Buffer.from(Float32Array.from(values).buffer).toString('base64');
  const unpack = (encoded: string) => {
    const bytes = Buffer.from(encoded, 'base64');
    return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4).slice();
  };
  type Stored = { key: string; heads: Record<string, { bias: number; weights: string }>; probabilities: Record<string, Array<[number, boolean]>> };
  const cached = options.cacheFile !== undefined && existsSync(options.cacheFile) ? (JSON.parse(readFileSync(options.cacheFile, 'utf8')) as Stored) : null;
  let stored: Stored;
  if (cached !== null && cached.key === training.key) stored = cached;
  else {
    stored = { key: training.key, heads: {}, probabilities: {} };
    for (const source of training.sources) {
      const started = Date.now();
      const trained = training.trainWithout(source);
      // Rounded to float32 (what a weights file holds), so a cached head answers as a fresh one.
      const head: T3Head = { weights: Float32Array.from(trained.weights), bias: trained.bias };
      stored.heads[source] = { bias: head.bias, weights: pack(head.weights) };
      stored.probabilities[source] = training.rows.filter((row) => row.sample.source === source).map((row) => [predict(head, row, false), row.sample.attack]);
      process.stderr.write(`held-out head without ${source}: ${Math.round((Date.now() - started) / 100) / 10} s\n`);
    }
    if (options.cacheFile !== undefined) writeFileSync(options.cacheFile, JSON.stringify(stored));
  }
  const heads = new Map(Object.entries(stored.heads).map(([source, head]) => [source, { bias: head.bias, weights: unpack(head.weights) }]));
  const platts = new Map<string, Platt>();
  return {
    features: FEATURES,
    dimensions: DIMENSIONS,
    sources: training.sources,
    head(source: string): T3Head {
      const head = heads.get(source);
      if (head === undefined) throw new Error(`no held-out head for ${source}`);
      return head;
    },
    platt(source: string): Platt {
      let fit = platts.get(source);
      if (fit === undefined) {
        fit = fitPlatt(Object.entries(stored.probabilities).filter(([other]) => other !== source).flatMap(([other, items]) => items.map(([probability, attack]) => ({ probability, attack, source: other }))));
        platts.set(source, fit);
      }
      return fit;
    },
  };
}

async function main(): Promise<void> {
  const samples = [...(await loadCorpus()), ...curatedSamples()];
  if (process.argv.includes('--charlm')) {
    // The letter model behind the adversarial-suffix signal: benign English prose only (role-play
    // and instruction prompts, our own benign phrasings). Tool descriptions, tool-use prompts and
    // the everyday PII sentences stay out so they measure its false positives out of sample.
    const prose = samples.filter((sample) => !sample.attack && ['pi/gpteacher_roleplay', 'pi/alpaca_seed_tasks', 'curated'].includes(sample.source));
    writeFileSync(CHAR_MODEL_FILE, encodeCharModel(trainCharModel(prose.map((sample) => sample.text)), `benign prose: ${prose.length} texts (gpteacher_roleplay, alpaca_seed_tasks, curated benign)`));
    process.stderr.write(`letter model written from ${prose.length} texts\n`);
    return;
  }
  process.stderr.write(`${samples.length} samples\n`);
  const ngramsOnly = process.argv.includes('--ngrams-only');
  const vectors = ngramsOnly ? new Map<string, Float32Array>() : await embedCorpus(samples);
  if (process.argv.includes('--embed-only')) return;
  const noNgrams = process.env.T3_NO_NGRAMS === '1';
  const noEmbedding = new Float32Array(DIMENSIONS);
  // Sources scored but never trained on (T3_TRAIN_EXCLUDE=pi/a,pi/b): reproduces a training set
  // without them, e.g. the one before the newer corpora existed.
  const excluded = new Set((process.env.T3_TRAIN_EXCLUDE ?? '').split(',').filter((source) => source !== ''));
  const trainable = (row: Row) => !excluded.has(row.sample.source);
  const rows: Row[] = samples
    .filter((sample) => ngramsOnly || vectors.has(sha256Hex(sample.text.slice(0, MAX_EMBED_CHARS))))
    .map((sample) => {
      const features = extractFeatures(sample.text, FEATURES);
      if (noNgrams) {
        features.indices = new Int32Array(0);
        features.values = new Float32Array(0);
      }
      return { sample, features, embedding: ngramsOnly ? noEmbedding : embeddingOf(vectors, sample.text), weight: 1 };
    });
  const epochs = Number(process.env.T3_EPOCHS ?? 8);
  const l2 = Number(process.env.T3_L2 ?? 3e-3);
  const learningRate = Number(process.env.T3_LR ?? 0.01);
  const optionsFor = (useEmbedding: boolean): TrainOptions => ({ useEmbedding, epochs, learningRate, l2 });

  const inspect = process.argv.find((argument) => argument.startsWith('--inspect-source='))?.slice('--inspect-source='.length);
  if (inspect !== undefined) {
    // Debugging aid: train without one source and print its highest-scored benign / lowest-scored attack records.
    const rest = rows.filter((row) => row.sample.source !== inspect && trainable(row));
    const held = rows.filter((row) => row.sample.source === inspect);
    weigh(rest);
    const head = train(rest, optionsFor(true));
    const scoredHeld = held.map((row) => ({ row, probability: predict(head, row, true) }));
    scoredHeld.sort((left, right) => (left.row.sample.attack ? left.probability : -left.probability) - (right.row.sample.attack ? right.probability : -right.probability));
    for (const item of scoredHeld.slice(0, 25)) process.stdout.write(`${item.probability.toFixed(2)} ${item.row.sample.attack ? 'A' : 'B'} ${item.row.sample.text.slice(0, 140).replace(/\s+/g, ' ')}\n`);
    return;
  }

  // 1. Random stratified 80/20 split (optimistic: same sources on both sides).
  let seed = 7;
  const random = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const heldOut = new Set(rows.filter(() => random() < 0.2));
  const trainRows = rows.filter((row) => !heldOut.has(row) && trainable(row));
  const testRows = rows.filter((row) => heldOut.has(row));
  weigh(trainRows);
  const random80 = {
    full: ngramsOnly ? null : summary(count(testRows, train(trainRows, optionsFor(true)), true)),
    ngrams: summary(count(testRows, train(trainRows, optionsFor(false)), false)),
  };
  process.stderr.write(`random split: ${JSON.stringify(random80)}\n`);

  // 2. Source-wise: leave one source out, train on all others, score the held-out source.
  const sources = [...new Set(rows.map((row) => row.sample.source))].filter((source) => source !== 'curated').sort();
  const bySource: Record<string, unknown> = {};
  const pooled = { full: { tp: 0, fp: 0, fn: 0, tn: 0 }, ngrams: { tp: 0, fp: 0, fn: 0, tn: 0 } };
  const scored: Array<{ probability: number; attack: boolean; row: Row }> = [];
  const scoredNgrams: Array<{ probability: number; attack: boolean; row: Row }> = [];
  if (!process.argv.includes('--quick')) {
    for (const source of sources) {
      const train1 = rows.filter((row) => row.sample.source !== source && trainable(row));
      const test1 = rows.filter((row) => row.sample.source === source);
      weigh(train1);
      let full: Counts = { tp: 0, fp: 0, fn: 0, tn: 0 };
      if (!ngramsOnly) {
        const fullHead = train(train1, optionsFor(true));
        for (const row of test1) scored.push({ probability: predict(fullHead, row, true), attack: row.sample.attack, row });
        full = count(test1, fullHead, true);
      }
      const ngramHead = train(train1, optionsFor(false));
      for (const row of test1) scoredNgrams.push({ probability: predict(ngramHead, row, false), attack: row.sample.attack, row });
      const ngrams = count(test1, ngramHead, false);
      for (const key of ['tp', 'fp', 'fn', 'tn'] as const) {
        pooled.full[key] += full[key];
        pooled.ngrams[key] += ngrams[key];
      }
      bySource[source] = { full: summary(full), ngrams: summary(ngrams) };
      process.stderr.write(`${source.padEnd(40)} full ${JSON.stringify(summary(full))}\n${''.padEnd(40)} ngrm ${JSON.stringify(summary(ngrams))}\n`);
    }
  }
  const sweepOf = (items: Array<{ probability: number; attack: boolean }>) => [0.5, 0.7, 0.8, 0.9, 0.95].map((threshold) => {
    const counts = { tp: 0, fp: 0, fn: 0, tn: 0 };
    for (const item of items) {
      const positive = item.probability >= threshold;
      if (item.attack) counts[positive ? 'tp' : 'fn'] += 1;
      else counts[positive ? 'fp' : 'tn'] += 1;
    }
    return { threshold, ...summary(counts) };
  });
  const calibrate = process.argv.includes('--calibrate');
  let engineReport: Record<string, unknown> | null = null;
  if (process.argv.includes('--engine-loso')) {
    engineReport = await engineLoso(rows, ngramsOnly ? [['ngrams', scoredNgrams]] : [['ngrams', scoredNgrams], ['full', scored]], false);
    if (calibrate) engineReport = { uncalibrated: engineReport, calibrated: await engineLoso(rows, [['ngrams', scoredNgrams]], true) };
  }
  if (process.env.T3_REPORT !== undefined) writeFileSync(process.env.T3_REPORT, JSON.stringify({ excluded_from_training: [...excluded], engine: engineReport }, null, 1) + '\n');
  const sweep = sweepOf(scored);
  const sweepNgrams = sweepOf(scoredNgrams);
  process.stderr.write(`leave-one-source-out threshold sweep (full head): ${JSON.stringify(sweep)}\n`);
  process.stderr.write(`leave-one-source-out threshold sweep (n-grams head): ${JSON.stringify(sweepNgrams)}\n`);
  const sourceWise = { pooled: { full: summary(pooled.full), ngrams: summary(pooled.ngrams) }, threshold_sweep_full: sweep, threshold_sweep_ngrams: sweepNgrams, by_source: bySource };
  process.stderr.write(`leave-one-source-out pooled: ${JSON.stringify(sourceWise.pooled)}\n`);

  // 3. Final fit on everything (but the excluded sources).
  const finalRows = rows.filter(trainable);
  weigh(finalRows);
  // The n-gram head's Platt scaling, fitted on every source's out-of-source score.
  const platt = calibrate && scoredNgrams.length > 0 ? fitPlatt(scoredNgrams.map((item) => ({ probability: item.probability, attack: item.attack, source: item.row.sample.source }))) : null;
  const weights: T3Weights = {
    version: 1,
    embedderId: 'use-lite-512',
    dimensions: DIMENSIONS,
    features: FEATURES,
    // --ngrams-only keeps the full (embedding) head of the existing weights.
    full: ngramsOnly ? decodeWeights(readFileSync(T3_WEIGHTS_FILE, 'utf8')).full : train(finalRows, optionsFor(true)),
    ngrams: train(finalRows, optionsFor(false)),
    ...(platt === null ? {} : { calibration: { head: 'ngrams' as const, method: 'platt' as const, a: platt.a, b: platt.b } }),
    trainedAt: new Date().toISOString().slice(0, 10),
    metrics: { threshold: 0.5, hyperparameters: { epochs, l2, learningRate }, random_80_20: random80, leave_one_source_out: sourceWise.pooled, leave_one_source_out_sweep: { full: sweep, ngrams: sweepNgrams }, samples: finalRows.length, ...(ngramsOnly ? { full_head: 'kept from the previous weights (trained without embeddings this run)' } : {}) },
  };
  if (!process.argv.includes('--dry-run')) {
    mkdirSync(path.dirname(T3_WEIGHTS_FILE), { recursive: true });
    writeFileSync(T3_WEIGHTS_FILE, encodeWeights(weights));
  }
  process.stdout.write(JSON.stringify({ random_80_20: random80, leave_one_source_out: sourceWise }, null, 1) + '\n');
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  await main();
}
