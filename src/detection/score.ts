/**
 * Scoring: how findings combine into a tier score and tier scores into the threat score. Pure.
 *
 * - Within one category, the strongest finding counts fully and each further one counts half
 *   (several weak jailbreak tells add up, one pattern repeated in two phrasings does not double).
 * - Across categories and across tiers, scores combine as a noisy-or: 1 - Π(1 - s).
 */
import type { Finding } from './types.ts';

export function noisyOr(scores: readonly number[]): number {
  let keep = 1;
  for (const score of scores) keep *= 1 - Math.min(1, Math.max(0, score));
  return round(1 - keep);
}

export function combineFindings(findings: readonly Finding[]): number {
  const byCategory = new Map<string, number[]>();
  for (const finding of findings) {
    const list = byCategory.get(finding.category) ?? [];
    list.push(finding.confidence);
    byCategory.set(finding.category, list);
  }
  const categoryScores: number[] = [];
  for (const list of byCategory.values()) {
    list.sort((left, right) => right - left);
    const [strongest = 0, ...rest] = list;
    categoryScores.push(noisyOr([strongest, ...rest.map((score) => score / 2)]));
  }
  return noisyOr(categoryScores);
}

export function round(value: number): number {
  return Math.round(value * 1e4) / 1e4;
}
