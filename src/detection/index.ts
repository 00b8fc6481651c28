/**
 * Detection capability: the engine (normalization, five-tier cascade, scoring, response policy,
 * session escalation, fragments, explainability) and its routes. The composition root builds one
 * engine with `createDetection(deps)`; other capabilities receive it and call
 * `engine.inspect({ kind, content, sessionId, orgId, … })`, and their routes report a decision
 * with `reportDecision(events, request, decision, context)`.
 */
export { createDetection } from './detection.ts';
export { createDetectionEngine } from './engine.ts';
export { createT4, createModelTier, checkModelDir, loadTextClassifier, DetectionModelError, parseLabelList, MODEL_FAILURES, softmax } from './ml/index.ts';
export type { ModelTier, ModelTierConfig, TextClassifier } from './ml/index.ts';
export { checkModel, type ModelCheckReport } from './model-check.ts';
export type { BehaviourTier, DetectionDeps, DetectionEngine, InspectRequest, ModelLike, SemanticLike, T2Like, T3ClassifierLike, T4Like } from './engine.ts';
export type { DetectionOptions } from './detection.ts';
export { normalize, spellSlugs, MAX_SCAN_LENGTH } from './normalize/index.ts';
export { CATALOGUE, compileCatalogue } from './catalogue/index.ts';
export type { CatalogueEntry, Category } from './catalogue/index.ts';
export { REDOS_CHECK_FLAGS, REDOS_CHECK_OPTIONS, regularExpressionsOf, superLinearPatterns, type SuperLinearPattern } from './catalogue/redos.ts';
export { DEFAULT_THRESHOLDS, decide, isAllowed, resolveThresholds, sessionFactor, escalate, THREAT_SIGNAL_FLOOR } from './policy.ts';
export { httpScanText } from './http-text.ts';
export { notifyDecision, threatLogFields, type RequestFacts } from './report.ts';
export { anomalyScore, behaviourPatternName, createBehaviourBaseline, createProfileBaseline, joinBehaviourScore, withBehaviour } from './behaviour/index.ts';
export type { BehaviourBaseline, BehaviourBaselineOptions, BehaviourResult, ProfileBaseline, ProfileBaselineOptions, ProfileEvent } from './behaviour/index.ts';
export type { ThreatEventRow } from './events.ts';
export type { ThresholdStore } from './thresholds.ts';
export type { Decision, HttpRequestShape, InspectKind, Span, ThreatDecision, Thresholds, ToolDefinitionShape, Verdict } from './types.ts';
export { detectionRoutes, reportDecision, sessionIdOf, type DetectionRoutesOptions } from './routes.ts';
export { createResponseGuard } from './response-filter.ts';
export { detectLeak } from './leak.ts';
export type { LeakContext } from './leak.ts';
export type { ResponseGuard, ResponseFilterRequest } from './response-filter.ts';
