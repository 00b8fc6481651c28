/**
 * Per-task calibration of the lexical grounding tier: a logistic model over the response's
 * features (grounding.ts `groundingFeatures`, named in FEATURE_NAMES) turns them into the
 * probability that the response holds an unsupported claim. One model per task kind, because
 * the same evidence weighs differently: a summary restates in new words, a data-to-text answer
 * verbalises key–value data, a QA answer quotes its passages.
 *
 * The model corrects the lexical tier's own score (1 − (1 − worst claim) × (1 − unsupported
 * share), in log-odds, an offset with weight 1): with little data the penalised weights shrink
 * toward that score rather than toward a coin flip.
 *
 * The weights are fitted by `npm run bench -- verification --fit` on the development corpora
 * (RAGTruth QA / Summary / Data2txt, ../shared/datasets/verification) with balanced class
 * weights, so 0.5 sits near the balanced-accuracy optimum and the default threshold keeps its
 * meaning. The benchmark scores them with whole-source holdout: the weights it scores on a
 * source are fitted without that source's responses.
 */

export type GroundingTask = 'qa' | 'summary' | 'data2txt';
export const GROUNDING_TASKS: readonly GroundingTask[] = ['qa', 'summary', 'data2txt'];

export const FEATURE_NAMES = [
  'worst_claim',
  'unsupported_share',
  'numbers_not_in_sources',
  'times_not_in_sources',
  'names_not_in_sources',
  'contradictions',
  'values_not_in_sources',
  'claims_with_unsupported_content',
  'mean_claim',
  'share_of_claims_at_half',
  'claims',
  'weakest_alignment',
  'novel_pairs',
  'worst_novel_pairs',
] as const;

/** Intercept first, then one weight per feature. Fitted by `npm run bench -- verification --fit` (all 691 development records, 2026-11-29). */
export const CALIBRATION: Readonly<Record<GroundingTask, readonly number[]>> = {
  // L2 0.3
  qa: [-2.6605, 0, 0, 1.8488, 0, 1.2155, 0, 0, 0.2673, 0.2793, 1.1659, 2.2441, 1.2328, 0, 0.0637],
  // L2 30
  summary: [-0.0131, 0, 0, 0.0226, 0, 0, 0.0099, 0, 0, 0, 0, 0.0124, 0.0089, 0, 0],
  // L2 0.3
  data2txt: [-1.6808, 0, 0.677, 1.7545, 1.5574, 1.0276, 2.952, 0.4459, 0, 1.0094, 0.8686, -3.2232, 0, 0, 0.922],
};

export function calibratedScore(task: GroundingTask, features: readonly number[], weights: readonly number[] = CALIBRATION[task]): number {
  let z = (weights[0] ?? 0) + lexicalPrior(features);
  for (let index = 0; index < features.length; index += 1) z += (weights[index + 1] ?? 0) * (features[index] ?? 0);
  return 1 / (1 + Math.exp(-z));
}

/** Features that are evidence of a problem: their weights may not be negative (more evidence never lowers the score). */
const MONOTONE = new Set<string>(FEATURE_NAMES.filter((name) => name !== 'claims'));

/**
 * The lexical tier's own score, 1 − (1 − worst claim) × (1 − unsupported share), in log-odds: the
 * offset the calibration corrects (its weights shrink toward it, not toward a coin flip).
 */
function lexicalPrior(features: readonly number[]): number {
  const raw = 1 - (1 - (features[0] ?? 0)) * (1 - (features[1] ?? 0));
  const clamped = Math.min(0.98, Math.max(0.02, raw));
  return Math.log(clamped / (1 - clamped));
}

/**
 * Fits a logistic model (intercept + one weight per feature) by Newton's method with an L2
 * penalty on the weights (not the intercept), each class weighted to half of the total. The
 * weights of evidence features are kept ≥ 0 (active set: a weight that comes out negative is
 * fixed at 0 and the rest refitted), so a finding can never make a response look better.
 */
export function fitCalibration(rows: ReadonlyArray<{ features: readonly number[]; positive: boolean }>, l2 = 1): number[] {
  const width = (rows[0]?.features.length ?? 0) + 1;
  const fixed = new Set<number>();
  for (let round = 0; round < width; round += 1) {
    const weights = fitFree(rows, width, fixed, l2);
    const negative = weights.findIndex((weight, index) => index > 0 && weight < 0 && MONOTONE.has(FEATURE_NAMES[index - 1] ?? ''));
    if (negative < 0) return weights.map((weight) => Math.round(weight * 10_000) / 10_000);
    fixed.add(negative);
  }
  return new Array<number>(width).fill(0);
}

function fitFree(rows: ReadonlyArray<{ features: readonly number[]; positive: boolean }>, width: number, fixed: ReadonlySet<number>, l2: number): number[] {
  const weights = new Array<number>(width).fill(0);
  const positives = rows.filter((row) => row.positive).length;
  const negatives = rows.length - positives;
  if (positives === 0 || negatives === 0) return weights;
  const classWeight = (positive: boolean) => rows.length / (2 * (positive ? positives : negatives));
  for (let iteration = 0; iteration < 50; iteration += 1) {
    const gradient = new Array<number>(width).fill(0);
    const hessian = Array.from({ length: width }, () => new Array<number>(width).fill(0));
    for (const row of rows) {
      const x = [1, ...row.features];
      const p = calibratedScore('qa', row.features, weights);
      const weight = classWeight(row.positive);
      const error = (p - (row.positive ? 1 : 0)) * weight;
      const curvature = Math.max(p * (1 - p), 1e-9) * weight;
      for (let i = 0; i < width; i += 1) {
        gradient[i]! += error * x[i]!;
        for (let j = 0; j < width; j += 1) hessian[i]![j]! += curvature * x[i]! * x[j]!;
      }
    }
    for (let i = 1; i < width; i += 1) {
      gradient[i]! += l2 * weights[i]!;
      hessian[i]![i]! += l2;
    }
    hessian[0]![0]! += 1e-6;
    // A fixed weight stays 0: its row and column drop out of the system.
    for (const index of fixed) {
      gradient[index] = 0;
      for (let j = 0; j < width; j += 1) hessian[index]![j] = hessian[j]![index] = 0;
      hessian[index]![index] = 1;
    }
    const step = solve(hessian, gradient);
    let largest = 0;
    for (let i = 0; i < width; i += 1) {
      weights[i]! -= step[i]!;
      largest = Math.max(largest, Math.abs(step[i]!));
    }
    if (largest < 1e-7) break;
  }
  return weights;
}

/** Gaussian elimination with partial pivoting (the systems here are 12 × 12). */
function solve(matrix: number[][], vector: number[]): number[] {
  const size = vector.length;
  const a = matrix.map((row, index) => [...row, vector[index]!]);
  for (let column = 0; column < size; column += 1) {
    let pivot = column;
    for (let row = column + 1; row < size; row += 1) if (Math.abs(a[row]![column]!) > Math.abs(a[pivot]![column]!)) pivot = row;
    [a[column], a[pivot]] = [a[pivot]!, a[column]!];
    const lead = a[column]![column]!;
    if (Math.abs(lead) < 1e-12) continue;
    for (let row = 0; row < size; row += 1) {
      if (row === column) continue;
      const factor = a[row]![column]! / lead;
      if (factor === 0) continue;
      for (let k = column; k <= size; k += 1) a[row]![k]! -= factor * a[column]![k]!;
    }
  }
  return a.map((row, index) => (Math.abs(row[index]!) < 1e-12 ? 0 : row[size]! / row[index]!));
}
