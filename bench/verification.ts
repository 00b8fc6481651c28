/**
 * Verification quality and cost (`npm run bench -- verification [--quick]`).
 *
 * Grounding quality on ../shared/datasets/verification/*.jsonl (RAGTruth development records: QA,
 * Summary, Data2txt; read at run time, never copied). Protocol: the sources of each task are
 * split in two folds by source id (a source's six responses stay together); a threshold is
 * chosen on one fold (best F1) and applied to the other, both ways, and the out-of-fold
 * predictions are scored: response-level precision, recall, F1 and balanced accuracy per task,
 * character-level span F1 of the flagged spans against the annotated ones. The lexical-overlap
 * baseline (share of response words absent from the sources) goes through the same protocol in
 * the same run. Latency: p50/p99 per layer over every record with all layers enabled.
 * Overhead: the completion hook without sources and with the default policy, timed interleaved
 * against the same envelope returned unverified (the ≤ 0.1 ms p50 budget).
 *
 * `BENCH_BEFORE_DIR=<checkout of an earlier commit>` adds that checkout's grounding (its own
 * score, tier 1) to the same run: its quality through the same folds and thresholds, and its
 * cost interleaved with this one's and the word-overlap baseline's.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadavg } from 'node:os';
import { assessClaims, calibratedResponseScore, groundingFeatures, groundingFindings, groundingResult, indexSources, lexicalOverlapScore, responseShare, taskOf, type ClaimAssessment } from '../src/verification/grounding.ts';
import { CALIBRATION, FEATURE_NAMES, fitCalibration, GROUNDING_TASKS, type GroundingTask } from '../src/verification/grounding-calibration.ts';
import { runVerification } from '../src/verification/verify.ts';
import { DEFAULT_POLICY, resolvePolicy } from '../src/verification/policy.ts';
import { LAYER_NAMES } from '../src/verification/types.ts';
import { percentile } from './lib.ts';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const VERIFICATION_DATASET_DIR = resolve(repoRoot, '../shared/datasets/verification');

interface GoldSpan {
  start: number;
  end: number;
}

interface Row {
  id: string;
  task: string;
  question: string | null;
  sources: string[];
  response: string;
  label: 'hallucinated' | 'grounded';
  spans: GoldSpan[];
  ragtruth_source_id: string;
}

interface Scored {
  row: Row;
  /** The score of the earlier checkout's grounding (BENCH_BEFORE_DIR), when given. */
  before?: number;
  fold: number;
  /** The task the layer infers from the input's shape. */
  task: GroundingTask;
  features: number[];
  /** Out-of-fold calibrated score (filled per fold). */
  svc: number;
  baseline: number;
  claims: ClaimAssessment[];
  share: number;
}

const FOLDS = 5;

function load(directory: string): Row[] {
  const rows: Row[] = [];
  for (const file of readdirSync(directory).filter((name) => name.endsWith('.jsonl')).sort()) {
    for (const line of readFileSync(join(directory, file), 'utf8').split('\n')) if (line.trim() !== '') rows.push(JSON.parse(line) as Row);
  }
  return rows;
}

/** Stable fold of a source id (FNV-1a): a source's responses are always in the same fold. */
function foldOf(sourceId: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < sourceId.length; index += 1) hash = Math.imul(hash ^ sourceId.charCodeAt(index), 0x01000193);
  return (hash >>> 0) % FOLDS;
}

interface Metrics {
  precision: number;
  recall: number;
  f1: number;
  balanced_accuracy: number;
}

function metrics(pairs: ReadonlyArray<{ predicted: boolean; actual: boolean }>): Metrics {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let tn = 0;
  for (const { predicted, actual } of pairs) {
    if (predicted && actual) tp += 1;
    else if (predicted) fp += 1;
    else if (actual) fn += 1;
    else tn += 1;
  }
  const precision = tp + fp === 0 ? 0 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 0 : tp / (tp + fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  const tnr = tn + fp === 0 ? 0 : tn / (tn + fp);
  return { precision: r3(precision), recall: r3(recall), f1: r3(f1), balanced_accuracy: r3((recall + tnr) / 2) };
}

/** Area under the ROC curve (ties count half). */
function auroc(scores: ReadonlyArray<{ score: number; actual: boolean }>): number {
  const positives = scores.filter((item) => item.actual).map((item) => item.score);
  const negatives = scores.filter((item) => !item.actual).map((item) => item.score);
  if (positives.length === 0 || negatives.length === 0) return Number.NaN;
  let total = 0;
  for (const p of positives) for (const n of negatives) total += p > n ? 1 : p === n ? 0.5 : 0;
  return r3(total / (positives.length * negatives.length));
}

/** The threshold with the best mean of F1 and balanced accuracy (both are reported; F1 alone flags everything on Data2txt). */
function bestThreshold(scores: ReadonlyArray<{ score: number; actual: boolean }>): number {
  const candidates = [...new Set(scores.map((item) => item.score))].sort((a, b) => a - b);
  let best = 1;
  let bestValue = -1;
  for (const threshold of candidates) {
    const { f1, balanced_accuracy } = metrics(scores.map((item) => ({ predicted: item.score >= threshold, actual: item.actual })));
    if (f1 + balanced_accuracy > bestValue) [best, bestValue] = [threshold, f1 + balanced_accuracy];
  }
  return best;
}

/** Out-of-fold evaluation of one scorer: thresholds per fold, predictions pooled. */
function crossFit(items: readonly Scored[], scoreOf: (item: Scored) => number): { metrics: Metrics; thresholds: number[]; predicted: Map<Scored, number> } {
  const thresholds: number[] = [];
  const pairs: Array<{ predicted: boolean; actual: boolean }> = [];
  const predicted = new Map<Scored, number>();
  for (let fold = 0; fold < FOLDS; fold += 1) {
    const calibration = items.filter((item) => item.fold !== fold).map((item) => ({ score: scoreOf(item), actual: item.row.label === 'hallucinated' }));
    const threshold = bestThreshold(calibration);
    thresholds.push(r3(threshold));
    for (const item of items.filter((entry) => entry.fold === fold)) {
      pairs.push({ predicted: scoreOf(item) >= threshold, actual: item.row.label === 'hallucinated' });
      predicted.set(item, threshold);
    }
  }
  return { metrics: metrics(pairs), thresholds, predicted };
}

const PENALTIES = [0.1, 0.3, 1, 3, 10, 30];

/**
 * The L2 penalty for a calibration, chosen by a holdout inside the training records only (their
 * sources split by a second hash into 4 folds): the penalty with the lowest out-of-fold log loss.
 */
function choosePenalty(training: readonly Scored[]): number {
  const inner = (item: Scored) => foldOf(`${item.row.ragtruth_source_id}/inner`) % 4;
  let best = 1;
  let bestLoss = Number.POSITIVE_INFINITY;
  for (const l2 of PENALTIES) {
    let loss = 0;
    for (let fold = 0; fold < 4; fold += 1) {
      const fit = training.filter((item) => inner(item) !== fold);
      if (fit.length === 0) continue;
      const weights = fitCalibration(fit.map((item) => ({ features: item.features, positive: item.row.label === 'hallucinated' })), l2);
      for (const item of training.filter((entry) => inner(entry) === fold)) {
        const p = Math.min(1 - 1e-6, Math.max(1e-6, calibratedResponseScore(item.task, item.claims, item.share, weights)));
        loss -= item.row.label === 'hallucinated' ? Math.log(p) : Math.log(1 - p);
      }
    }
    if (loss < bestLoss) [best, bestLoss] = [l2, loss];
  }
  return best;
}

/** Character-level span F1 of the findings the layer reports at the fold's threshold. */
function spanF1(items: readonly Scored[], thresholdOf: Map<Scored, number>): Metrics {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const item of items) {
    const threshold = thresholdOf.get(item)!;
    const predicted = new Uint8Array(item.row.response.length);
    // Exactly the findings the layer reports at this threshold.
    if (item.svc >= threshold) for (const span of groundingFindings(item.claims, threshold)) predicted.fill(1, span.start, span.end);
    const gold = new Uint8Array(item.row.response.length);
    for (const span of item.row.spans) gold.fill(1, span.start, span.end);
    for (let index = 0; index < gold.length; index += 1) {
      if (predicted[index] && gold[index]) tp += 1;
      else if (predicted[index]) fp += 1;
      else if (gold[index]) fn += 1;
    }
  }
  const precision = tp + fp === 0 ? 0 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 0 : tp / (tp + fn);
  return { precision: r3(precision), recall: r3(recall), f1: r3(precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall)), balanced_accuracy: Number.NaN };
}

/** The tier-1 functions of an earlier checkout's grounding module (their shapes then). */
interface BeforeGrounding {
  indexSources(sources: readonly string[], question: string | null): unknown;
  assessClaims(content: string, index: unknown): unknown[];
  responseShare(content: string, index: unknown): number;
  groundingResult(claims: unknown[], share: number, threshold: number, info: Record<string, unknown>): { score: number };
}

async function loadBefore(): Promise<BeforeGrounding | null> {
  const directory = process.env.BENCH_BEFORE_DIR;
  if (directory === undefined || directory === '') return null;
  return (await import(resolve(directory, 'src/verification/grounding.ts'))) as BeforeGrounding;
}

function beforeScore(before: BeforeGrounding, row: Row): number {
  const index = before.indexSources(row.sources, row.question);
  return before.groundingResult(before.assessClaims(row.response, index), before.responseShare(row.response, index), 1, {}).score;
}

export async function runVerificationBench(options: { quick?: boolean; fit?: boolean } = {}): Promise<object> {
  if (!existsSync(VERIFICATION_DATASET_DIR)) return { skipped: `needs ${VERIFICATION_DATASET_DIR}` };
  const rows = load(VERIFICATION_DATASET_DIR);
  const load_average_at_start = loadavg().map(r2);
  const before = await loadBefore();
  const scored: Scored[] = rows.map((row) => {
    const index = indexSources(row.sources, row.question);
    const claims = assessClaims(row.response, index);
    const share = responseShare(row.response, index);
    const task = taskOf(index, row.question);
    return {
      row,
      fold: foldOf(row.ragtruth_source_id),
      task,
      features: groundingFeatures(claims, share),
      svc: 0,
      baseline: lexicalOverlapScore(row.response, row.sources),
      claims,
      share,
      ...(before === null ? {} : { before: beforeScore(before, row) }),
    };
  });
  const actual = (item: Scored) => item.row.label === 'hallucinated';
  // Whole-source holdout: each fold's calibration (and its L2 penalty, by an inner holdout) is fitted on the other folds' sources (per task) and scores this fold.
  const penalties: Record<string, number[]> = {};
  for (const task of GROUNDING_TASKS) {
    const items = scored.filter((item) => item.task === task);
    penalties[task] = [];
    for (let fold = 0; fold < FOLDS; fold += 1) {
      const training = items.filter((item) => item.fold !== fold);
      const l2 = choosePenalty(training);
      penalties[task].push(l2);
      const weights = fitCalibration(training.map((item) => ({ features: item.features, positive: actual(item) })), l2);
      for (const item of items.filter((entry) => entry.fold === fold)) item.svc = calibratedResponseScore(task, item.claims, item.share, weights);
    }
  }
  const tasks: Record<string, object> = {};
  let beatsEverywhere = true;
  for (const task of [...new Set(rows.map((row) => row.task))].sort()) {
    const items = scored.filter((item) => item.row.task === task);
    const svc = crossFit(items, (item) => item.svc);
    const baseline = crossFit(items, (item) => item.baseline);
    const atDefault = metrics(items.map((item) => ({ predicted: item.svc >= DEFAULT_POLICY.grounding.threshold, actual: actual(item) })));
    if (svc.metrics.f1 <= baseline.metrics.f1 || svc.metrics.balanced_accuracy <= baseline.metrics.balanced_accuracy) beatsEverywhere = false;
    tasks[task] = {
      responses: items.length,
      hallucinated: items.filter(actual).length,
      sources: new Set(items.map((item) => item.row.ragtruth_source_id)).size,
      inferred_task: [...new Set(items.map((item) => item.task))],
      svc_grounding: { ...svc.metrics, auroc: auroc(items.map((item) => ({ score: item.svc, actual: actual(item) }))), thresholds_per_fold: svc.thresholds },
      svc_at_default_threshold: { threshold: DEFAULT_POLICY.grounding.threshold, ...atDefault },
      lexical_overlap_baseline: { ...baseline.metrics, auroc: auroc(items.map((item) => ({ score: item.baseline, actual: actual(item) }))), thresholds_per_fold: baseline.thresholds },
      ...(before === null
        ? {}
        : {
            before: {
              ...crossFit(items, (item) => item.before ?? 0).metrics,
              auroc: auroc(items.map((item) => ({ score: item.before ?? 0, actual: actual(item) }))),
              at_default_threshold: metrics(items.map((item) => ({ predicted: (item.before ?? 0) >= DEFAULT_POLICY.grounding.threshold, actual: actual(item) }))),
            },
          }),
      span_level: spanF1(items, svc.predicted),
      // Reference point: F1 of flagging every response (Data2txt is two-thirds hallucinated).
      flag_everything_f1: metrics(items.map((item) => ({ predicted: true, actual: actual(item) }))).f1,
    };
  }
  const fitted = options.fit
    ? Object.fromEntries(
        GROUNDING_TASKS.map((task) => {
          const items = scored.filter((item) => item.task === task);
          const l2 = choosePenalty(items);
          return [task, { l2, weights: fitCalibration(items.map((item) => ({ features: item.features, positive: actual(item) })), l2) }];
        }),
      )
    : undefined;
  // The shipped weights on the same records (in-sample: for reference only, never the headline).
  const shipped = Object.fromEntries(
    GROUNDING_TASKS.map((task) => {
      const items = scored.filter((item) => item.task === task);
      return [task, metrics(items.map((item) => ({ predicted: calibratedResponseScore(task, item.claims, item.share, CALIBRATION[task]) >= DEFAULT_POLICY.grounding.threshold, actual: actual(item) })))];
    }),
  );

  // Latency per layer: every record with all layers on (JSON check and constraint rules included).
  const policy = resolvePolicy({
    structural: { check_code_fences: true, check_tool_arguments: true },
    constraint: { banned_phrases: ['as an ai language model'], must_not_match: ['(?i)password\\s*[:=]'], allowed_url_hosts: ['example.com'], pii: 'all', system_prompt_leak: true, detect_refusal: true, max_chars: 100_000 },
  });
  const perLayer = new Map<string, number[]>(LAYER_NAMES.map((name) => [name, []]));
  const limit = options.quick ? 120 : rows.length;
  for (const row of rows.slice(0, limit)) {
    const verification = await runVerification(
      { content: row.response, finishReason: 'stop', sources: row.sources, question: row.question, systemPrompts: ['You are a helpful assistant answering from the given passages only.'] },
      policy,
    );
    for (const name of LAYER_NAMES) perLayer.get(name)!.push(verification.layers[name].ms);
  }
  const latency: Record<string, { p50_ms: number; p99_ms: number }> = {};
  for (const [name, samples] of perLayer) {
    samples.sort((a, b) => a - b);
    latency[name] = { p50_ms: r4(percentile(samples, 50)), p99_ms: r4(percentile(samples, 99)) };
  }

  return {
    records: rows.length,
    protocol: `${FOLDS}-fold by source id (whole-source holdout): per task, the calibration and the threshold with the best mean of F1 and balanced accuracy are fitted on the other folds and applied to this one; out-of-fold predictions pooled`,
    load_average_at_start,
    tasks,
    beats_baseline_on_every_task: beatsEverywhere,
    l2_per_fold: penalties,
    shipped_weights_in_sample: shipped,
    ...(fitted === undefined ? {} : { fitted_weights: { features: ['intercept', ...FEATURE_NAMES], ...fitted } }),
    latency_per_layer: latency,
    grounding_cost: groundingCost(rows, options.quick === true, before),
    overhead: await overheadBench(options.quick === true),
    load_average_at_end: loadavg().map(r2),
  };
}

/** Default policy, no sources: the hook's cost on a typical non-streamed answer, interleaved with no hook. */
async function overheadBench(quick: boolean): Promise<object> {
  const { verifyEnvelope } = await import('../src/verification/verify.ts');
  const envelope = {
    request_id: 'r',
    provider: 'openai',
    model: 'gpt-4o-mini',
    content: 'Paris is the capital of France. It has been the seat of government since the tenth century, with a population of about two million people in the city proper.',
    finish_reason: 'stop',
    verification: null as unknown,
  };
  const request = { messages: [{ role: 'system', content: 'You are a concise geography assistant.' }, { role: 'user', content: 'What is the capital of France?' }] };
  const rounds = quick ? 5 : 15;
  const perRound = quick ? 2_000 : 10_000;
  const added: number[] = [];
  const verified: number[] = [];
  const bare: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const withHook: number[] = [];
    const without: number[] = [];
    for (let index = 0; index < perRound; index += 1) {
      let started = performance.now();
      await Promise.resolve({ ...envelope });
      without.push(performance.now() - started);
      started = performance.now();
      await verifyEnvelope({ ...envelope }, request, DEFAULT_POLICY);
      withHook.push(performance.now() - started);
    }
    withHook.sort((a, b) => a - b);
    without.sort((a, b) => a - b);
    verified.push(percentile(withHook, 50));
    bare.push(percentile(without, 50));
    added.push(percentile(withHook, 50) - percentile(without, 50));
  }
  added.sort((a, b) => a - b);
  verified.sort((a, b) => a - b);
  bare.sort((a, b) => a - b);
  const p50 = percentile(added, 50);
  return { rounds, per_round: perRound, verified_p50_ms: r4(percentile(verified, 50)), unverified_p50_ms: r4(percentile(bare, 50)), added_p50_ms: r4(p50), budget_ms: 0.1, within_budget: p50 <= 0.1 };
}

/**
 * Tier-1 grounding against the word-overlap baseline on the same records, interleaved in the same
 * run (the machine is shared: the ratio is the figure, the milliseconds are context).
 */
function groundingCost(rows: readonly Row[], quick: boolean, before: BeforeGrounding | null): object {
  const sample = rows.slice(0, quick ? 120 : rows.length);
  const grounding: number[] = [];
  const overlap: number[] = [];
  const earlier: number[] = [];
  for (let round = 0; round < (quick ? 2 : 5); round += 1) {
    for (const row of sample) {
      let started = performance.now();
      if (before !== null) {
        beforeScore(before, row);
        earlier.push(performance.now() - started);
      }
      started = performance.now();
      lexicalOverlapScore(row.response, row.sources);
      overlap.push(performance.now() - started);
      started = performance.now();
      const index = indexSources(row.sources, row.question);
      const claims = assessClaims(row.response, index);
      groundingResult(claims, responseShare(row.response, index), 0.5, {}, taskOf(index, row.question));
      grounding.push(performance.now() - started);
    }
  }
  grounding.sort((a, b) => a - b);
  overlap.sort((a, b) => a - b);
  const p50 = percentile(grounding, 50);
  const baseline = percentile(overlap, 50);
  earlier.sort((a, b) => a - b);
  return {
    records: sample.length,
    grounding_p50_ms: r4(p50),
    grounding_p99_ms: r4(percentile(grounding, 99)),
    word_overlap_p50_ms: r4(baseline),
    ratio_p50: r2(p50 / baseline),
    ...(before === null ? {} : { before_p50_ms: r4(percentile(earlier, 50)), before_p99_ms: r4(percentile(earlier, 99)), before_ratio_p50: r2(percentile(earlier, 50) / baseline) }),
    load_average: loadavg().map(r2),
  };
}

function r2(value: number): number {
  return Math.round(value * 100) / 100;
}
function r3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
function r4(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
