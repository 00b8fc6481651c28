/**
 * Risk tolerance (EU AI Act Art. 9 risk management, Art. 15 accuracy and robustness): the
 * thresholds svc works to, machine-readable, with the current value beside each one svc can
 * measure. Fairness metrics (DPD, EOD) need protected attributes of people, which svc never
 * holds, so they are stated and marked `measured: false`. Latency and error rate come from this
 * process's request metrics since it started; threat confidence from the org's threat decisions
 * of the last 24 hours.
 */
import type { Database } from '../platform/db/index.ts';
import type { Metrics } from '../platform/metrics.ts';
import { histogramQuantile, sampleRegistry } from '../webhooks/index.ts';

export const RISK_TOLERANCE = [
  { metric: 'demographic_parity_difference', comparison: 'at_most', threshold: 0.1, unit: 'ratio' },
  { metric: 'equal_opportunity_difference', comparison: 'at_most', threshold: 0.1, unit: 'ratio' },
  { metric: 'threat_confidence', comparison: 'at_least', threshold: 0.7, unit: 'score' },
  { metric: 'latency_p95', comparison: 'at_most', threshold: 500, unit: 'ms' },
  { metric: 'error_rate', comparison: 'at_most', threshold: 0.001, unit: 'ratio' },
] as const;

export interface ToleranceEntry {
  metric: string;
  comparison: 'at_most' | 'at_least';
  threshold: number;
  unit: string;
  measured: boolean;
  current: number | null;
  within: boolean | null;
  source: string;
}

const round = (value: number, digits = 4) => Math.round(value * 10 ** digits) / 10 ** digits;

export async function riskTolerance(deps: { db: Database; metrics?: Metrics }, orgId: string): Promise<{ thresholds: ToleranceEntry[]; measured_at: string }> {
  const confidence = await deps.db.withOrg(orgId, (tx) =>
    tx.query<{ mean: number | null; decisions: number }>(
      `SELECT avg(threat_score)::float8 AS mean, count(*)::int AS decisions FROM threat_events WHERE decision IN ('block', 'challenge') AND occurred_at > now() - interval '24 hours'`,
    ),
  );
  let p95: number | null = null;
  let errorRate: number | null = null;
  if (deps.metrics !== undefined) {
    const sample = await sampleRegistry(deps.metrics.registry, Date.now());
    const quantile = histogramQuantile(0.95, sample.requestDuration);
    p95 = Number.isFinite(quantile) ? round(quantile * 1000, 1) : null;
    const requests = (await deps.metrics.requests.get()).values;
    const total = requests.reduce((sum, entry) => sum + entry.value, 0);
    const errors = requests.filter((entry) => Number(entry.labels.status) >= 500).reduce((sum, entry) => sum + entry.value, 0);
    errorRate = total > 0 ? round(errors / total, 6) : null;
  }
  const mean = confidence.rows[0]?.mean ?? null;
  const values: Record<string, { current: number | null; source: string; measured: boolean }> = {
    demographic_parity_difference: { current: null, measured: false, source: 'not measurable: svc holds no protected attributes of the people behind requests' },
    equal_opportunity_difference: { current: null, measured: false, source: 'not measurable: svc holds no protected attributes of the people behind requests' },
    threat_confidence: { current: mean === null ? null : round(mean), measured: true, source: `mean threat score of the org's block and challenge decisions in the last 24 hours (${confidence.rows[0]?.decisions ?? 0} decisions)` },
    latency_p95: { current: p95, measured: true, source: 'p95 of svc_request_duration_seconds of this process since it started' },
    error_rate: { current: errorRate, measured: true, source: 'share of 5xx answers in svc_requests_total of this process since it started' },
  };
  return {
    thresholds: RISK_TOLERANCE.map((entry) => {
      const value = values[entry.metric]!;
      const within = value.current === null ? null : entry.comparison === 'at_most' ? value.current <= entry.threshold : value.current >= entry.threshold;
      return { metric: entry.metric, comparison: entry.comparison, threshold: entry.threshold, unit: entry.unit, measured: value.measured, current: value.current, within, source: value.source };
    }),
    measured_at: new Date().toISOString(),
  };
}
