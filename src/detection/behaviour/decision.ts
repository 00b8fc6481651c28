/**
 * How T5 findings join a threat decision, for every pillar that has one (apisec's proxy applies
 * the same rule inline, with its bot and failed-login steps beside it): behaviour is weak
 * evidence — half its score joins the detection score as independent evidence (noisy-or), the
 * action is taken again from the org's thresholds on the combined score and is never lower than
 * the detection's own. With the default thresholds behaviour alone reaches at most the alert band
 * (0.5 < challenge); only together with content evidence near the challenge band can it lift a
 * decision further, as on protected gateways.
 */
import { decide, isAllowed } from '../policy.ts';
import type { ThreatDecision } from '../types.ts';
import type { BehaviourResult } from './baseline.ts';
import { anomalyScore } from './model.ts';

const RANK: Readonly<Record<string, number>> = { allow: 0, log: 1, alert: 2, challenge: 3, block: 4 };

/** What a name of a T5 pattern says, by anomaly kind. */
const NAMES: Readonly<Record<string, string>> = {
  rate: 'Behavioural anomaly: request rate',
  geo: 'Behavioural anomaly: geography',
  time_of_day: 'Behavioural anomaly: time of day',
  credential_stuffing: 'Behavioural anomaly: credential stuffing',
  size: 'Behavioural anomaly: size far above the baseline',
  new_value: 'Behavioural anomaly: value new to the baseline',
  sequence: 'Behavioural anomaly: call sequence new to the baseline',
};

/** A detection score with a behaviour score joined: half the behaviour's score as independent evidence (noisy-or). */
export function joinBehaviourScore(score: number, behaviourScore: number): number {
  return Math.round((1 - (1 - score) * (1 - behaviourScore * 0.5)) * 1000) / 1000;
}

/** The name of a T5 pattern id (`t5.<kind>`). */
export function behaviourPatternName(kind: string): string {
  return NAMES[kind] ?? 'Behavioural anomaly';
}

/** The decision with the behaviour's anomalies joined (the same object when there are none). */
export function withBehaviour(decision: ThreatDecision, behaviour: BehaviourResult | null, latencyMs = 0): ThreatDecision {
  if (behaviour === null || behaviour.anomalies.length === 0) return decision;
  // Joined with the score the decision was made on (below the log threshold threat_score grades
  // the evidence; behaviour joins the decision's evidence as it did before the graded score).
  const score = joinBehaviourScore(decision.decision_score ?? decision.threat_score, behaviour.score);
  const combined = decide(score, decision.thresholds);
  const action = RANK[combined]! > RANK[decision.decision]! ? combined : decision.decision;
  const details = behaviour.anomalies.map((anomaly) => `${anomaly.detail} (${anomaly.zScore} standard deviations)`).join('; ');
  return {
    ...decision,
    allowed: isAllowed(action),
    threat_score: score,
    decision_score: score,
    decision: action,
    explanation: `${decision.explanation} Behaviour (T5): ${details}.`,
    patterns_matched: [
      ...decision.patterns_matched,
      ...behaviour.anomalies.map((anomaly) => ({ id: `t5.${anomaly.kind}`, name: behaviourPatternName(anomaly.kind), confidence: Math.round(anomalyScore(anomaly.zScore) * 1000) / 1000 })),
    ],
    categories: decision.categories.includes('behavioural_anomaly') ? decision.categories : [...decision.categories, 'behavioural_anomaly'],
    tiers: [...decision.tiers, { tier: 't5', outcome: 'match', score: behaviour.score, latency_ms: Math.round(latencyMs * 1000) / 1000, detail: details.slice(0, 500) }],
  };
}
