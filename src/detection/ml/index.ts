/**
 * The ML tiers of the detection engine: T2 embedding similarity, T3 intent classifier, T4 LLM
 * escalation, and the slot for an operator's local ONNX classifier (model.ts, model-tier.ts). See
 * docs/detection-ml.md for what runs by default, training and measured figures.
 */
export { createEmbedder, MAX_EMBED_CHARS } from './embedder.ts';
export type { Embedder, EmbedderOptions } from './embedder.ts';
export { createT2, t2Score, T2_CALIBRATION } from './t2.ts';
export type { T2, T2Result } from './t2.ts';
export { loadT3Classifier, loadNliClassifier } from './t3.ts';
export type { AsyncT3Classifier, T3Classifier, T3Result } from './t3.ts';
export { createT4 } from './t4.ts';
export type { T4, T4Options, T4Outcome, T4Result } from './t4.ts';
export { runMlBench } from './bench.ts';
export { createSemanticTier, sharedSemanticTier } from './semantic.ts';
export type { SemanticTier, SemanticTierOptions, SemanticVerdict } from './semantic.ts';
export { loadSemanticHead, selectWindows, SEMANTIC_KINDS } from './semantic-head.ts';
export type { SemanticHead, SemanticKind, SemanticThresholds } from './semantic-head.ts';
export { createWorkerScorer } from './worker-scorer.ts';
export type { WorkerScorer, WorkerScorerOptions, WorkerVerdict } from './worker-scorer.ts';
export { checkModelDir, DetectionModelError, findModelFiles, loadTextClassifier, MODEL_FAILURES, MODEL_MAX_TOKENS, parseLabelList, resolveAttackLabels, softmax, windowStarts } from './model.ts';
export type { ModelFailure, ModelFiles, ModelReading, ModelSettings, TextClassifier } from './model.ts';
export { createModelTier } from './model-tier.ts';
export type { ModelTier, ModelTierConfig, ModelVerdict } from './model-tier.ts';
