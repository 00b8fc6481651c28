/**
 * T5 behavioural baselines: per-endpoint and per-IP rolling baselines in the cache, scoring rate,
 * geography, time-of-day and credential-stuffing anomalies in standard deviations.
 */
export { createBehaviourBaseline } from './baseline.ts';
export type { BehaviourBaseline, BehaviourBaselineOptions, BehaviourResult } from './baseline.ts';
export { DEFAULT_BEHAVIOUR_OPTIONS, anomalyScore, combineAnomalies } from './model.ts';
export type { Anomaly, AnomalyKind, BehaviourEvent, BehaviourOptions } from './model.ts';
