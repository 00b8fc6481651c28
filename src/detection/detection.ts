/**
 * The detection capability's factory: the engine with its tiers. T1 and the T3 signals always
 * run; the trained T3 classifier is loaded from its weights file (a missing file leaves T3 on
 * signals only, with a warning); the semantic tier (issue #32: sentence embedding + learned head,
 * in a worker thread shared by the process, model loaded on first use) runs when asked for
 * (`semantic: true`, DETECTION_SEMANTIC=on; off by default, see docs/detection.md); T4 runs when a judge is given (the composition root
 * passes the gateway's, when DETECTION_T4_PROVIDER / DETECTION_T4_MODEL are configured); the
 * local model tier (an operator's ONNX classifier, DETECTION_MODEL_DIR) inside T3 when given; the
 * similarity T2 and T5 only when passed in.
 */
import { createDetectionEngine, type DetectionDeps, type DetectionEngine, type SemanticLike } from './engine.ts';
import { loadT3Classifier, sharedSemanticTier, type SemanticTierOptions } from './ml/index.ts';

export interface DetectionOptions extends Omit<DetectionDeps, 'semantic'> {
  /** A semantic tier; true or options for the process's shared one; false or absent for none (default). */
  readonly semantic?: SemanticLike | boolean | SemanticTierOptions;
}

export function createDetection(options: DetectionOptions): DetectionEngine {
  const { semantic: semanticOption, ...deps } = options;
  let t3Classifier = deps.t3Classifier;
  if (t3Classifier === undefined) {
    try {
      t3Classifier = loadT3Classifier();
    } catch (error) {
      deps.logger?.warn({ err: error instanceof Error ? error.message : String(error) }, 'T3 classifier not loaded; T3 runs signals only');
    }
  }
  let semantic: SemanticLike | undefined;
  if (semanticOption === true || (typeof semanticOption === 'object' && !('score' in semanticOption))) {
    try {
      semantic = sharedSemanticTier(typeof semanticOption === 'object' ? semanticOption : {});
    } catch (error) {
      deps.logger?.warn({ err: error instanceof Error ? error.message : String(error) }, 'semantic tier not loaded; detection runs without it');
    }
  } else if (semanticOption !== undefined && semanticOption !== false) semantic = semanticOption as SemanticLike;
  return createDetectionEngine({ ...deps, ...(t3Classifier === undefined ? {} : { t3Classifier }), ...(semantic === undefined ? {} : { semantic }) });
}
