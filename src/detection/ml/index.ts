/**
 * The ML tiers of the detection engine: T2 embedding similarity, T3 intent classifier, T4 LLM
 * escalation. See docs/detection-ml.md for what runs by default, training and measured figures.
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
