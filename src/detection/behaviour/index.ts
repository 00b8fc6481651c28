/**
 * T5 behavioural baselines: per-endpoint and per-IP rolling baselines in the cache, scoring rate,
 * geography, time-of-day and credential-stuffing anomalies in standard deviations; and subject
 * profiles (an API key's completions, a role's MCP calls) scoring rate, time of day, sizes, new
 * values and call sequences the same way, through the same state store.
 */
export { createBehaviourBaseline } from './baseline.ts';
export type { BehaviourBaseline, BehaviourBaselineOptions, BehaviourResult } from './baseline.ts';
export { behaviourPatternName, joinBehaviourScore, withBehaviour } from './decision.ts';
export { DEFAULT_BEHAVIOUR_OPTIONS, anomalyScore, combineAnomalies } from './model.ts';
export type { Anomaly, AnomalyKind, BehaviourEvent, BehaviourOptions } from './model.ts';
export { DEFAULT_PROFILE_OPTIONS } from './profile.ts';
export type { ProfileOptions } from './profile.ts';
export { createProfileBaseline } from './profiles.ts';
export type { ProfileBaseline, ProfileBaselineOptions, ProfileEvent } from './profiles.ts';
