/**
 * Fits the graded threat score (src/detection/graded-score.ts, issue #32 item 3) on the
 * development corpora, and measures it and per-kind decision thresholds under whole-source
 * holdout.
 *
 *   T3_HOLDOUT_CACHE=file npx tsx scripts/fit-graded-score.ts [--write] [--bands=allow[,log,alert]]
 *     [--from-dump=file]   (GRADED_DUMP=file writes the records for --from-dump)
 *
 * 1. The engine's whole-source holdout pass (scripts/train-t3.ts `wholeSourceHoldout`, as
 *    bench/detection.ts runs it: the n-gram classifier trained without the scored source,
 *    Platt-scaled on the other sources) with the graded score off, so every record gives the
 *    decision score the policy acted on and the held-out classifier probability. T3_HOLDOUT_CACHE
 *    keeps the held-out probabilities between runs (bench/detection.ts fills the same file).
 * 2. Per kind (prompt — over-defense prompts included —, tool_output, tool_definition), a logistic
 *    fusion with non-negative evidence weights of the classifier's log-odds (English text; an
 *    offset for other languages) and the decision score, over the records whose decision lies in
 *    a graded band, sources capped at SOURCE_CAP records' worth and classes balanced. Validated
 *    leave-one-source-out: AUROC of threat_score per kind and pooled, before (the decision score)
 *    and for each variant, printed as JSON. A kind keeps the classifier's terms only where they beat
 *    its decision score; otherwise its decision score alone is calibrated (`shipped`).
 * 3. Per-kind thresholds: for each kind the refusal threshold (challenge) that maximizes balanced
 *    accuracy over the other sources (each source counted once: mean detection over attack sources,
 *    mean true-negative rate over benign ones), applied to the held-out source; printed beside the
 *    shared threshold.
 * 4. --write: the fits on every source go to src/detection/weights/graded-score.json with the
 *    holdout figures.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NOT_IN_SERVED_TRAINING } from '../bench/detection.ts';
import { DEFAULT_THRESHOLDS, decide } from '../src/detection/policy.ts';
import { GRADED_WEIGHTS_FILE, gradedThreatScore, logOdds, type GradedBand, type GradedFit, type GradedWeights } from '../src/detection/graded-score.ts';
import { T3_WEIGHTS_FILE, decodeWeights } from '../src/detection/ml/t3.ts';
import type { InspectKind } from '../src/detection/types.ts';
import { readsAsEnglish } from '../src/detection/ml/semantic-head.ts';
import { taskEvidence, type TaskEvidence } from '../src/detection/indirect.ts';
import { auroc } from './train-semantic.ts';
import { wholeSourceHoldout, type HoldoutRecord } from './train-t3.ts';

const SOURCE_CAP = 200;
const FITTED_KINDS = ['prompt', 'tool_output', 'tool_definition'] as const;
type FittedKind = (typeof FITTED_KINDS)[number];

interface Item {
  readonly source: string;
  readonly kind: FittedKind;
  readonly attack: boolean;
  readonly probability: number;
  /** The decision score (graded score off). */
  readonly score: number;
  readonly english: boolean;
  /** Tool outputs: the strongest AI-style task in the text and how unrelated it is to the rest (indirect.ts `taskEvidence`). */
  readonly task?: TaskEvidence;
}

function inspectKind(record: HoldoutRecord): FittedKind {
  if (record.kind === 'tool_definition') return 'tool_definition';
  return record.kind === 'indirect' ? 'tool_output' : 'prompt';
}

/** Source-capped, class-balanced weights (as the classifier's training: scripts/train-t3.ts). */
function weights(items: readonly Item[]): number[] {
  const perSource = new Map<string, number>();
  for (const item of items) perSource.set(item.source, (perSource.get(item.source) ?? 0) + 1);
  const raw = items.map((item) => Math.min(1, SOURCE_CAP / (perSource.get(item.source) ?? 1)));
  let attack = 0;
  let benign = 0;
  items.forEach((item, index) => {
    if (item.attack) attack += raw[index]!;
    else benign += raw[index]!;
  });
  return items.map((item, index) => raw[index]! * (item.attack ? 0.5 / Math.max(attack, 1e-9) : 0.5 / Math.max(benign, 1e-9)));
}

/**
 * Logistic regression on (log-odds + 9 for English text, other language, score), the slopes of
 * the log-odds and the score non-negative: projected Newton steps (a weight that would turn
 * negative is held at 0 and the others refitted).
 */
export function fitFusion(items: readonly Item[], options: { useScore?: boolean; scoreOnly?: boolean; task?: boolean; offTopic?: boolean } = {}): GradedFit {
  const w = weights(items);
  const useScore = options.useScore !== false;
  // scoreOnly: a calibration of the decision score alone (the kind's level among the others; its own ranking unchanged).
  const useClassifier = options.scoreOnly !== true;
  const useTask = options.task === true;
  const useOffTopic = options.offTopic === true;
  const size = 6;
  const taskTerm = (item: Item) => (item.task === undefined || item.task.probability <= 0 ? 0 : logOdds(item.task.probability) + 9);
  const xs = items.map((item) => [1, useClassifier && item.english ? logOdds(item.probability) + 9 : 0, useClassifier && !item.english ? 1 : 0, useScore ? item.score : 0, useTask ? taskTerm(item) : 0, useOffTopic ? taskTerm(item) * (item.task?.offTopic ?? 0) : 0]);
  const beta = [0, 0, 0, 0, 0, 0];
  const free = [true, useClassifier, useClassifier && items.some((item) => !item.english), useScore, useTask, useOffTopic];
  const nonNegative = [1, 3, 4, 5];
  for (let iteration = 0; iteration < 200; iteration++) {
    const gradient = new Array<number>(size).fill(0);
    const hessian = Array.from({ length: size }, (_, row) => Array.from({ length: size }, (_, column) => (row === column ? 1e-6 : 0)));
    items.forEach((item, index) => {
      const x = xs[index]!;
      let z = 0;
      for (let k = 0; k < size; k++) z += beta[k]! * x[k]!;
      const p = 1 / (1 + Math.exp(-z));
      const error = (p - (item.attack ? 1 : 0)) * w[index]!;
      const curvature = Math.max(1e-9, p * (1 - p)) * w[index]!;
      for (let row = 0; row < size; row++) {
        gradient[row]! += error * x[row]!;
        for (let column = 0; column < size; column++) hessian[row]![column]! += curvature * x[row]! * x[column]!;
      }
    });
    // A little L2 on the slopes keeps a near-separable kind finite.
    for (let row = 1; row < size; row++) { gradient[row]! += 1e-4 * beta[row]!; hessian[row]![row]! += 1e-4; }
    const active = beta.map((_, index) => index).filter((index) => free[index]);
    const step = solve(active.map((row) => active.map((column) => hessian[row]![column]!)), active.map((row) => gradient[row]!));
    let moved = 0;
    active.forEach((index, position) => {
      beta[index]! -= step[position]!;
      moved += Math.abs(step[position]!);
    });
    let clipped = false;
    for (const index of nonNegative) {
      if (beta[index]! < 0) { beta[index] = 0; free[index] = false; clipped = true; }
    }
    if (!clipped && moved < 1e-10) break;
  }
  return { bias: round(beta[0]!), probability: round(beta[1]!), score: round(beta[3]!), ...(useClassifier ? { otherLanguage: round(beta[2]!) } : {}), ...(useTask ? { task: round(beta[4]!) } : {}), ...(useOffTopic ? { offTopicTask: round(beta[5]!) } : {}) };
}

function solve(matrix: number[][], vector: number[]): number[] {
  const size = vector.length;
  const a = matrix.map((row, index) => [...row, vector[index]!]);
  for (let column = 0; column < size; column++) {
    let pivot = column;
    for (let row = column + 1; row < size; row++) if (Math.abs(a[row]![column]!) > Math.abs(a[pivot]![column]!)) pivot = row;
    [a[column], a[pivot]] = [a[pivot]!, a[column]!];
    const lead = a[column]![column]!;
    if (Math.abs(lead) < 1e-15) return new Array<number>(size).fill(0);
    for (let row = 0; row < size; row++) {
      if (row === column) continue;
      const factor = a[row]![column]! / lead;
      for (let k = column; k <= size; k++) a[row]![k]! -= factor * a[column]![k]!;
    }
  }
  return a.map((row, index) => row[size]! / row[index]!);
}

const round = (value: number, digits = 4) => Math.round(value * 10 ** digits) / 10 ** digits;
const roc = (scored: Array<{ score: number; attack: boolean }>) => {
  const value = auroc(scored);
  return Number.isNaN(value) ? null : round(value);
};

/** Balanced accuracy with each source counted once (mean detection over attack sources, mean 1 − FPR over benign ones). */
function sourceBalancedAccuracy(items: readonly Item[], threshold: number): number {
  const bySource = new Map<string, { attacks: number; detected: number; benign: number; refused: number }>();
  for (const item of items) {
    const counter = bySource.get(item.source) ?? { attacks: 0, detected: 0, benign: 0, refused: 0 };
    bySource.set(item.source, counter);
    const refused = item.score >= threshold;
    if (item.attack) { counter.attacks++; if (refused) counter.detected++; } else { counter.benign++; if (refused) counter.refused++; }
  }
  const tpr: number[] = [];
  const tnr: number[] = [];
  for (const counter of bySource.values()) {
    if (counter.attacks > 0) tpr.push(counter.detected / counter.attacks);
    if (counter.benign > 0) tnr.push(1 - counter.refused / counter.benign);
  }
  const mean = (values: number[]) => (values.length === 0 ? 1 : values.reduce((sum, value) => sum + value, 0) / values.length);
  return (mean(tpr) + mean(tnr)) / 2;
}

const THRESHOLD_GRID = [0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8];

async function main(): Promise<void> {
  process.env.T3_HOLDOUT_CACHE ??= path.join(tmpdir(), 'svc-t3-holdout.json');
  const items: Item[] = [];
  const dump = process.env.GRADED_DUMP;
  if (dump !== undefined) writeFileSync(dump, '');
  // --from-dump=file: the records of an earlier run's GRADED_DUMP (fits again without the engine pass).
  const fromDump = process.argv.find((argument) => argument.startsWith('--from-dump='))?.slice('--from-dump='.length);
  if (fromDump !== undefined) items.push(...readFileSync(fromDump, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Item));
  const decisionScoreHoldout = fromDump !== undefined ? null : await wholeSourceHoldout({
    excludeFromTraining: NOT_IN_SERVED_TRAINING,
    calibrate: decodeWeights(readFileSync(T3_WEIGHTS_FILE, 'utf8')).calibration !== undefined,
    engine: { gradedScore: false },
    collect: (record) => {
      const kind = inspectKind(record);
      items.push({ source: record.source, kind, attack: record.attack, probability: record.probability, score: record.decision.threat_score, english: readsAsEnglish(record.text), ...(kind === 'tool_output' ? { task: taskEvidence(record.text) } : {}) });
      // Debugging aid: GRADED_DUMP=file writes each record's evidence as a JSON line (no text).
      if (dump !== undefined) appendFileSync(dump, `${JSON.stringify({ ...items.at(-1), base: record.decision.base_score, patterns: record.decision.patterns_matched.map((pattern) => [pattern.id, pattern.confidence]), tiers: record.decision.tiers.map((tier) => [tier.tier, tier.outcome, tier.score]) })}\n`);
    },
  });
  const log = DEFAULT_THRESHOLDS.log;
  const report: Record<string, unknown> = {};
  const bandsArgument = process.argv.find((argument) => argument.startsWith('--bands='))?.slice('--bands='.length);
  const shippedBands = (bandsArgument ?? 'allow').split(',') as GradedBand[];
  const variants = { allow: ['allow'], graded_bands: ['allow', 'log', 'alert'] } as const satisfies Record<string, readonly GradedBand[]>;
  // Records each variant is fitted on: those whose decision score lies in a band it grades.
  const fittedOn = (bands: readonly GradedBand[]) => (item: Item) => (bands as readonly string[]).includes(decide(item.score, DEFAULT_THRESHOLDS));
  // Tool outputs' task evidence (fourth planted-instruction round): the decision score with the strongest AI-style task, with its off-topic share, or both.
  const taskVariants = { allow_score_task: { scoreOnly: true, task: true }, allow_score_off_topic: { scoreOnly: true, offTopic: true }, allow_score_task_off_topic: { scoreOnly: true, task: true, offTopic: true } } as const;
  const pooled: Record<string, Array<{ score: number; attack: boolean }>> = { before: [], allow: [], graded_bands: [], allow_probability_only: [], allow_score_only: [], ...Object.fromEntries(Object.keys(taskVariants).map((name) => [name, []])) };
  const fits: Partial<Record<InspectKind, GradedFit>> = {};
  // The configuration written: graded kinds as graded, the others on their decision score.
  const shippedPooled: Array<{ score: number; attack: boolean }> = [];
  const thresholds: Record<string, unknown> = {};
  for (const kind of FITTED_KINDS) {
    const ofKind = items.filter((item) => item.kind === kind);
    const sources = [...new Set(ofKind.map((item) => item.source))].sort();
    const scored: Record<string, Array<{ score: number; attack: boolean }>> = { before: [], allow: [], graded_bands: [], allow_probability_only: [], allow_score_only: [], ...(kind === 'tool_output' ? Object.fromEntries(Object.keys(taskVariants).map((name) => [name, []])) : {}) };
    const perSource: Record<string, unknown> = {};
    const chosen: Record<string, unknown> = {};
    for (const source of sources) {
      const others = ofKind.filter((item) => item.source !== source);
      const held = ofKind.filter((item) => item.source === source);
      const fitsWithout = Object.fromEntries(Object.entries(variants).map(([name, bands]) => [name, fitFusion(others.filter(fittedOn(bands)))])) as Record<keyof typeof variants, GradedFit>;
      const probabilityOnly = fitFusion(others.filter(fittedOn(variants.allow)), { useScore: false });
      const scoreOnly = fitFusion(others.filter(fittedOn(variants.allow)), { scoreOnly: true });
      const taskFits = kind === 'tool_output' ? Object.entries(taskVariants).map(([name, options]) => [name, fitFusion(others.filter(fittedOn(variants.allow)), options)] as const) : [];
      for (const item of held) {
        const evidence = { probability: item.probability, score: item.score, english: item.english, ...(item.task === undefined ? {} : { task: item.task }) };
        for (const [name, fit] of taskFits) scored[name]!.push({ score: gradedThreatScore(fit, evidence, DEFAULT_THRESHOLDS), attack: item.attack });
        scored.before!.push({ score: item.score, attack: item.attack });
        for (const [name, bands] of Object.entries(variants)) scored[name]!.push({ score: gradedThreatScore(fitsWithout[name as keyof typeof variants], evidence, DEFAULT_THRESHOLDS, bands), attack: item.attack });
        scored.allow_probability_only!.push({ score: gradedThreatScore(probabilityOnly, evidence, DEFAULT_THRESHOLDS), attack: item.attack });
        scored.allow_score_only!.push({ score: gradedThreatScore(scoreOnly, evidence, DEFAULT_THRESHOLDS), attack: item.attack });
      }
      // Per-kind threshold chosen on the other sources, applied to this one.
      let best = DEFAULT_THRESHOLDS.challenge;
      let bestAccuracy = -1;
      for (const threshold of THRESHOLD_GRID) {
        const accuracy = sourceBalancedAccuracy(others, threshold);
        if (accuracy > bestAccuracy + 1e-9) { bestAccuracy = accuracy; best = threshold; }
      }
      const attacks = held.filter((item) => item.attack);
      const benign = held.filter((item) => !item.attack);
      const rate = (list: Item[], threshold: number) => (list.length === 0 ? null : round((100 * list.filter((item) => item.score >= threshold).length) / list.length, 1));
      chosen[source] = { threshold: best, attacks: attacks.length, detected_shared: rate(attacks, DEFAULT_THRESHOLDS.challenge), detected_per_kind: rate(attacks, best), benign: benign.length, false_positives_shared: rate(benign, DEFAULT_THRESHOLDS.challenge), false_positives_per_kind: rate(benign, best) };
      perSource[source] = { ...fitsWithout, ...Object.fromEntries(taskFits) };
    }
    for (const [name, list] of Object.entries(scored)) pooled[name]!.push(...list);
    // The classifier takes part in a kind's grade only when that beat its decision score under
    // whole-source holdout; otherwise the kind's decision score is calibrated alone (its own
    // ranking unchanged, its level among the other kinds' graded scores set).
    const shippedVariant = shippedBands.length === 1 ? 'allow' : 'graded_bands';
    const better = (roc(scored[shippedVariant]!) ?? 0) > (roc(scored.before!) ?? 0);
    // Tool outputs: the task evidence joins their decision score where a variant with it beat the decision score alone leave-one-source-out.
    // The off-topic share is reported, not chosen from: on the development corpora it does not rank
    // allowed attacks above allowed benign outputs, and where every candidate sentence is wholly off
    // topic its term equals the task term, so those fits are degenerate in some folds (all weights 0).
    const taskChoice = kind === 'tool_output' && !better && (roc(scored.allow_score_task!) ?? 0) > (roc(scored.allow_score_only!) ?? 0) ? 'allow_score_task' : undefined;
    fits[kind] = fitFusion(ofKind.filter(fittedOn(shippedBands)), better ? {} : taskChoice !== undefined ? taskVariants[taskChoice] : { scoreOnly: true });
    shippedPooled.push(...(better ? scored[shippedVariant]! : scored[taskChoice ?? 'allow_score_only']!));
    report[kind] = { records: ofKind.length, allowed: ofKind.filter((item) => item.score < log).length, in_graded_bands: ofKind.filter(fittedOn(variants.graded_bands)).length, auroc: Object.fromEntries(Object.entries(scored).map(([name, list]) => [name, roc(list)])), fit_on_every_source: fits[kind] ?? null, fits_without_each_source: perSource };
    thresholds[kind] = { threshold_on_every_source: THRESHOLD_GRID.reduce((best, threshold) => (sourceBalancedAccuracy(ofKind, threshold) > sourceBalancedAccuracy(ofKind, best) + 1e-9 ? threshold : best), DEFAULT_THRESHOLDS.challenge), by_held_out_source: chosen };
  }
  const holdout = { auroc_pooled: { ...Object.fromEntries(Object.entries(pooled).map(([name, list]) => [name, roc(list)])), shipped: roc(shippedPooled) }, by_kind: Object.fromEntries(FITTED_KINDS.map((kind) => [kind, (report[kind] as { auroc: unknown }).auroc])) };
  // The engine pass above is bench/detection.ts's whole-source holdout with the decision score as threat_score.
  process.stdout.write(`${JSON.stringify({ holdout, kinds: report, per_kind_thresholds: thresholds, engine_holdout_decision_score: decisionScoreHoldout }, null, 1)}\n`);
  if (process.argv.includes('--write')) {
    const weightsFile: GradedWeights = {
      version: 1,
      fittedAt: new Date().toISOString().slice(0, 10),
      method: `per kind: logistic regression (the classifier's terms only where they beat the decision score under whole-source holdout, else the decision score alone; for tool outputs the strongest AI-style task's log-odds + 9 where it beat the decision score alone) with non-negative weights on (n-gram classifier log-odds + 9, decision score), records whose decision is ${shippedBands.join(' / ')}, sources capped at 200 records, classes balanced; scripts/fit-graded-score.ts`,
      kinds: fits,
      bands: shippedBands,
      holdout,
    };
    mkdirSync(path.dirname(GRADED_WEIGHTS_FILE), { recursive: true });
    writeFileSync(GRADED_WEIGHTS_FILE, `${JSON.stringify(weightsFile, null, 1)}\n`);
    process.stderr.write(`written ${GRADED_WEIGHTS_FILE}\n`);
  }
}

await main();
