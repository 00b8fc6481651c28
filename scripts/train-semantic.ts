/**
 * Trains the semantic head of the default semantic tier (issue #32): a logistic regression over
 * the USE-lite sentence embedding of sentence windows (src/detection/ml/windows.ts), written to
 * src/detection/ml/weights/semantic.json (weights only, a few KB).
 *
 *   npx tsx scripts/train-semantic.ts --embed      # embed the sampled corpus windows once (cached)
 *   npx tsx scripts/train-semantic.ts              # whole-source holdout report + final fit
 *   npx tsx scripts/train-semantic.ts --dry-run    # holdout report only, no weights written
 *
 * Data: ../shared/datasets/prompt_injection/*.jsonl (read at run time, never copied into the
 * repository) plus the project's own phrasings in src/detection/ml/seeds/. At most
 * `PER_GROUP` records per (source, label, direction), drawn with a fixed seed, so no large source
 * dominates and the embedding cost stays bounded on a shared machine. Embeddings are cached by the
 * SHA-256 of the window text under the OS temp directory (`SEMANTIC_CACHE` overrides), never in
 * the repository.
 *
 * Weights: classes balanced, then sources balanced within a class (each source's records share
 * one unit of weight, `sqrt`-softened so a 30-record source is not worth a 5,000-record one).
 * A long record is one bag of windows: a benign record's windows are all benign (each weighs
 * 1/windows), an attack record contributes its highest-scoring window under the previous fit
 * (multiple-instance learning, two rounds): planted sentences are positives, the data around
 * them is not.
 */
import { appendFileSync, createReadStream, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createEmbedder } from '../src/detection/ml/embedder.ts';
import { sha256Hex } from '../src/platform/crypto.ts';
import { sentenceWindows, spreadWindows } from '../src/detection/ml/windows.ts';
import { readsAsEnglish } from '../src/detection/ml/semantic-head.ts';
import { seededRandom } from './seeded-random.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const datasets = path.resolve(repoRoot, '../shared/datasets');
export const SEMANTIC_WEIGHTS_FILE = path.join(repoRoot, 'src/detection/ml/weights/semantic.json');
const PER_GROUP = Number(process.env.SEMANTIC_PER_GROUP ?? 150);
/** Windows embedded per record for training (spread over the record). */
const TRAIN_WINDOWS = 12;
const cacheFile = process.env.SEMANTIC_CACHE ?? path.join(tmpdir(), 'svc-ml-cache', 'semantic-use-lite-512.jsonl');

export interface SemanticRecord {
  source: string;
  attack: boolean;
  /** prompt | tool_output | llm_output */
  kind: string;
  windows: string[];
}

export function loadSemanticCorpus(perGroup: number = PER_GROUP): SemanticRecord[] {
  const groups = new Map<string, SemanticRecord[]>();
  const add = (record: SemanticRecord) => {
    const key = `${record.source}|${record.attack}|${record.kind}`;
    const list = groups.get(key) ?? [];
    list.push(record);
    groups.set(key, list);
  };
  const seen = new Set<string>();
  for (const name of readdirSync(path.join(datasets, 'prompt_injection')).filter((file) => file.endsWith('.jsonl')).sort()) {
    for (const line of readFileSync(path.join(datasets, 'prompt_injection', name), 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const raw = JSON.parse(line) as { text?: string; label?: string; direction?: string; trivial?: boolean };
      const text = String(raw.text ?? '');
      if (text.trim() === '' || raw.trivial === true || seen.has(text)) continue;
      seen.add(text);
      const kind = raw.direction === 'retrieved_content' ? 'tool_output' : raw.direction === 'llm_output' ? 'llm_output' : 'prompt';
      add({ source: `pi/${name.replace('.jsonl', '')}`, attack: raw.label === 'attack', kind, windows: spreadWindows(sentenceWindows(text.slice(0, 16_384)), TRAIN_WINDOWS) });
    }
  }
  for (const [file, attack] of [['benign-training.json', false], ['attack-training.json', true]] as const) {
    const phrases = JSON.parse(readFileSync(path.join(repoRoot, 'src/detection/ml/seeds', file), 'utf8')) as Array<{ text: string }>;
    for (const phrase of phrases) add({ source: attack ? 'seeds/attack' : 'seeds/benign', attack, kind: 'prompt', windows: sentenceWindows(phrase.text) });
  }
  const random = seededRandom(20261128);
  const out: SemanticRecord[] = [];
  for (const key of [...groups.keys()].sort()) {
    const list = groups.get(key) as SemanticRecord[];
    for (let index = list.length - 1; index > 0; index -= 1) {
      const other = Math.floor(random() * (index + 1));
      [list[index], list[other]] = [list[other] as SemanticRecord, list[index] as SemanticRecord];
    }
    out.push(...list.slice(0, perGroup).filter((record) => record.windows.length > 0));
  }
  return out;
}

export async function loadEmbeddingCache(): Promise<Map<string, Float32Array>> {
  const cache = new Map<string, Float32Array>();
  if (!existsSync(cacheFile)) return cache;
  const lines = createInterface({ input: createReadStream(cacheFile) });
  for await (const line of lines) {
    if (line === '') continue;
    const tab = line.indexOf('\t');
    const bytes = Buffer.from(line.slice(tab + 1), 'base64');
    if (bytes.length !== 512 * 4) continue;
    cache.set(line.slice(0, tab), new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)));
  }
  return cache;
}

async function embedAll(records: SemanticRecord[]): Promise<void> {
  mkdirSync(path.dirname(cacheFile), { recursive: true });
  const cache = await loadEmbeddingCache();
  // Round-robin over records so a partial cache covers every source.
  const wanted: string[] = [];
  const queued = new Set<string>();
  const maxWindows = Math.max(...records.map((record) => record.windows.length));
  for (let depth = 0; depth < maxWindows; depth += 1) {
    for (const record of records) {
      const window = record.windows[depth];
      if (window === undefined) continue;
      const key = sha256Hex(window);
      if (cache.has(key) || queued.has(key)) continue;
      queued.add(key);
      wanted.push(window);
    }
  }
  console.error(`records ${records.length}, windows to embed ${wanted.length} (cached ${cache.size})`);
  const embedder = await createEmbedder({ cacheEntries: 16 });
  const started = Date.now();
  for (let start = 0; start < wanted.length; start += 32) {
    const batch = wanted.slice(start, start + 32);
    const vectors = await embedder.embed(batch);
    appendFileSync(cacheFile, batch.map((text, index) => `${sha256Hex(text)}\t${Buffer.from((vectors[index] as Float32Array).buffer).toString('base64')}`).join('\n') + '\n');
    if ((start / 32) % 20 === 0) console.error(`${start + batch.length}/${wanted.length} ${Math.round((Date.now() - started) / 1000)} s`);
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const records = loadSemanticCorpus();
  if (process.argv.includes('--embed')) {
    await embedAll(records);
  }
}

// ---------------------------------------------------------------------------------------------
// Training: logistic regression over [embedding ‖ kind one-hot], mini-batch Adam, L2.

export const KINDS = ['prompt', 'tool_output', 'llm_output'] as const;
const DIMENSIONS = 512;
const FEATURES = DIMENSIONS + KINDS.length;

export interface SemanticWeights {
  /** Embedder the head was fitted on (the tier refuses weights of another embedder). */
  embedder: string;
  windowChars: number;
  /** FEATURES weights: embedding dimensions, then one bias per kind. */
  weights: number[];
  bias: number;
  /** Probability thresholds chosen under whole-source holdout (docs/detection-ml.md). */
  thresholds: { strong: number; weak: number; benign: number };
  trainedAt: string;
  metrics: Record<string, unknown>;
}

interface Row { vector: Float32Array; kind: number; attack: boolean; weight: number; record: number }

function logit(weights: Float64Array, bias: number, vector: Float32Array, kind: number): number {
  let sum = bias + (weights[DIMENSIONS + kind] as number);
  for (let index = 0; index < DIMENSIONS; index += 1) sum += (weights[index] as number) * (vector[index] as number);
  return sum;
}

const sigmoid = (value: number): number => 1 / (1 + Math.exp(-value));

function fit(rows: Row[], options: { epochs: number; l2: number; seed: number }): { weights: Float64Array; bias: number } {
  const weights = new Float64Array(FEATURES);
  let bias = 0;
  const m = new Float64Array(FEATURES + 1);
  const v = new Float64Array(FEATURES + 1);
  const rate = 0.01;
  let step = 0;
  const random = seededRandom(options.seed);
  const order = rows.map((_, index) => index);
  const totalWeight = rows.reduce((sum, row) => sum + row.weight, 0);
  const batch = 64;
  const gradient = new Float64Array(FEATURES + 1);
  for (let epoch = 0; epoch < options.epochs; epoch += 1) {
    for (let index = order.length - 1; index > 0; index -= 1) {
      const other = Math.floor(random() * (index + 1));
      [order[index], order[other]] = [order[other] as number, order[index] as number];
    }
    for (let start = 0; start < order.length; start += batch) {
      gradient.fill(0);
      let batchWeight = 0;
      for (let offset = start; offset < Math.min(order.length, start + batch); offset += 1) {
        const row = rows[order[offset] as number] as Row;
        const error = (sigmoid(logit(weights, bias, row.vector, row.kind)) - (row.attack ? 1 : 0)) * row.weight;
        for (let feature = 0; feature < DIMENSIONS; feature += 1) gradient[feature] = (gradient[feature] as number) + error * (row.vector[feature] as number);
        gradient[DIMENSIONS + row.kind] = (gradient[DIMENSIONS + row.kind] as number) + error;
        gradient[FEATURES] = (gradient[FEATURES] as number) + error;
        batchWeight += row.weight;
      }
      // Mean over the data's weight (so L2 is comparable across folds), plus L2 on the weights.
      const scale = (rows.length / totalWeight) / Math.max(1, Math.min(batch, order.length - start));
      step += 1;
      for (let feature = 0; feature <= FEATURES; feature += 1) {
        const current = feature === FEATURES ? bias : (weights[feature] as number);
        const g = (gradient[feature] as number) * scale + (feature < DIMENSIONS ? options.l2 * current : 0);
        m[feature] = 0.9 * (m[feature] as number) + 0.1 * g;
        v[feature] = 0.999 * (v[feature] as number) + 0.001 * g * g;
        const update = (rate * ((m[feature] as number) / (1 - 0.9 ** step))) / (Math.sqrt((v[feature] as number) / (1 - 0.999 ** step)) + 1e-8);
        if (feature === FEATURES) bias -= update;
        else weights[feature] = current - update;
      }
      void batchWeight;
    }
  }
  return { weights, bias };
}

interface Bag { record: SemanticRecord; vectors: Float32Array[]; kind: number }

/**
 * Rows for one fit: class-balanced, source-balanced (sqrt-softened) record weights; a bag's
 * weight is split over its windows, except attack bags in the MIL round, which contribute only
 * their highest-scoring window under `previous`.
 */
function rowsFor(bags: Bag[], previous: { weights: Float64Array; bias: number } | null): Row[] {
  const perSource = new Map<string, number>();
  for (const bag of bags) perSource.set(`${bag.record.attack}|${bag.record.source}`, (perSource.get(`${bag.record.attack}|${bag.record.source}`) ?? 0) + 1);
  const classTotal = { attack: 0, benign: 0 };
  for (const [key, count] of perSource) classTotal[key.startsWith('true') ? 'attack' : 'benign'] += Math.sqrt(count);
  const rows: Row[] = [];
  bags.forEach((bag, index) => {
    const key = `${bag.record.attack}|${bag.record.source}`;
    const count = perSource.get(key) as number;
    // Each source weighs sqrt(count) within its class; each class weighs the same in total.
    const recordWeight = (Math.sqrt(count) / count / classTotal[bag.record.attack ? 'attack' : 'benign']) * bags.length / 2;
    if (bag.record.attack && previous !== null && bag.vectors.length > 1) {
      let best = 0;
      let bestLogit = -Infinity;
      bag.vectors.forEach((vector, position) => {
        const value = logit(previous.weights, previous.bias, vector, bag.kind);
        if (value > bestLogit) [best, bestLogit] = [position, value];
      });
      rows.push({ vector: bag.vectors[best] as Float32Array, kind: bag.kind, attack: true, weight: recordWeight, record: index });
      return;
    }
    for (const vector of bag.vectors) rows.push({ vector, kind: bag.kind, attack: bag.record.attack, weight: recordWeight / bag.vectors.length, record: index });
  });
  return rows;
}

function train(bags: Bag[], l2: number, epochs: number): { weights: Float64Array; bias: number } {
  const first = fit(rowsFor(bags, null), { epochs, l2, seed: 1 });
  return fit(rowsFor(bags, first), { epochs, l2, seed: 2 });
}

/** A record's probability: the highest window's. */
function bagProbability(model: { weights: Float64Array; bias: number }, bag: Bag): number {
  let best = -Infinity;
  for (const vector of bag.vectors) best = Math.max(best, logit(model.weights, model.bias, vector, bag.kind));
  return sigmoid(best);
}

export function auroc(scored: Array<{ score: number; attack: boolean }>): number {
  const sorted = [...scored].sort((left, right) => left.score - right.score);
  let rankSum = 0;
  let attacks = 0;
  for (let index = 0; index < sorted.length; ) {
    let end = index;
    while (end < sorted.length && (sorted[end] as { score: number }).score === (sorted[index] as { score: number }).score) end += 1;
    const rank = (index + end + 1) / 2;
    for (let position = index; position < end; position += 1) if ((sorted[position] as { attack: boolean }).attack) { rankSum += rank; attacks += 1; }
    index = end;
  }
  const benign = sorted.length - attacks;
  return attacks === 0 || benign === 0 ? NaN : (rankSum - (attacks * (attacks + 1)) / 2) / (attacks * benign);
}

async function bagsOf(records: SemanticRecord[]): Promise<Bag[]> {
  const cache = await loadEmbeddingCache();
  const bags: Bag[] = [];
  let missing = 0;
  let notEnglish = 0;
  for (const record of records) {
    // The tier leaves text that does not read as English to the other tiers; so does training.
    const english = record.windows.filter(readsAsEnglish);
    if (english.length === 0) { notEnglish += 1; continue; }
    const vectors = english.map((window) => cache.get(sha256Hex(window))).filter((vector): vector is Float32Array => vector !== undefined);
    if (vectors.length === 0) { missing += 1; continue; }
    bags.push({ record, vectors, kind: KINDS.indexOf(record.kind as (typeof KINDS)[number]) });
  }
  console.error(`${notEnglish} records have no window that reads as English (not scored by the tier, left out)`);
  if (missing > 0) console.error(`${missing} records without cached embeddings skipped (run --embed)`);
  return bags;
}

/** Whole-source holdout: every source scored by a head fitted without it. */
function holdout(bags: Bag[], l2: number, epochs: number): Array<{ bag: Bag; probability: number }> {
  const sources = [...new Set(bags.map((bag) => bag.record.source))].filter((source) => !source.startsWith('seeds/'));
  const out: Array<{ bag: Bag; probability: number }> = [];
  for (const source of sources) {
    const model = train(bags.filter((bag) => bag.record.source !== source), l2, epochs);
    for (const bag of bags) if (bag.record.source === source) out.push({ bag, probability: bagProbability(model, bag) });
  }
  return out;
}

function report(scored: Array<{ bag: Bag; probability: number }>, thresholds: number[]): Record<string, unknown> {
  const bySource = new Map<string, Array<{ bag: Bag; probability: number }>>();
  for (const item of scored) {
    const key = `${item.bag.record.source}:${item.bag.record.kind}`;
    bySource.set(key, [...(bySource.get(key) ?? []), item]);
  }
  const table: Record<string, unknown> = {};
  for (const [key, items] of [...bySource.entries()].sort()) {
    const attacks = items.filter((item) => item.bag.record.attack);
    const benign = items.filter((item) => !item.bag.record.attack);
    table[key] = Object.fromEntries(thresholds.map((threshold) => [threshold, attacks.length > 0 ? `TPR ${(100 * attacks.filter((item) => item.probability >= threshold).length / attacks.length).toFixed(1)} (${attacks.length})` : `FPR ${(100 * benign.filter((item) => item.probability >= threshold).length / benign.length).toFixed(1)} (${benign.length})`]));
  }
  const byKind: Record<string, number> = {};
  for (const kind of KINDS) byKind[kind] = auroc(scored.filter((item) => item.bag.record.kind === kind).map((item) => ({ score: item.probability, attack: item.bag.record.attack })));
  return { auroc: auroc(scored.map((item) => ({ score: item.probability, attack: item.bag.record.attack }))), aurocByKind: byKind, bySource: table };
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url) && !process.argv.includes('--embed')) {
  const bags = await bagsOf(loadSemanticCorpus());
  const l2 = Number(process.env.SEMANTIC_L2 ?? 1e-3);
  const epochs = Number(process.env.SEMANTIC_EPOCHS ?? 6);
  console.error(`bags ${bags.length}, windows ${bags.reduce((sum, bag) => sum + bag.vectors.length, 0)}, l2 ${l2}, epochs ${epochs}`);
  const scored = holdout(bags, l2, epochs);
  const thresholds = [0.5, 0.7, 0.8, 0.9, 0.95];
  const metrics = report(scored, thresholds);
  console.log(JSON.stringify(metrics, null, 1));
  if (process.env.SEMANTIC_HOLDOUT_DUMP !== undefined) writeFileSync(process.env.SEMANTIC_HOLDOUT_DUMP, JSON.stringify(scored.map((item) => ({ source: item.bag.record.source, kind: item.bag.record.kind, attack: item.bag.record.attack, p: item.probability }))));
  if (!process.argv.includes('--dry-run')) {
    const model = train(bags, l2, epochs);
    const output: SemanticWeights = {
      embedder: 'use-lite-512',
      windowChars: 320,
      weights: [...model.weights].map((value) => Math.round(value * 1e5) / 1e5),
      bias: Math.round(model.bias * 1e5) / 1e5,
      thresholds: { strong: Number(process.env.SEMANTIC_STRONG ?? 0.95), weak: Number(process.env.SEMANTIC_WEAK ?? 0.8), benign: Number(process.env.SEMANTIC_BENIGN ?? 0.2) },
      trainedAt: new Date().toISOString().slice(0, 10),
      metrics: { holdoutAuroc: metrics.auroc, holdoutAurocByKind: metrics.aurocByKind, records: bags.length, l2, epochs },
    };
    writeFileSync(SEMANTIC_WEIGHTS_FILE, JSON.stringify(output) + '\n');
    console.error(`wrote ${SEMANTIC_WEIGHTS_FILE}`);
  }
}
