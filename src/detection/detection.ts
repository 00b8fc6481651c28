/**
 * The detection capability's factory: the engine with its tiers. T1 and the T3 signals always
 * run; the trained T3 classifier is loaded from its weights file (a missing file leaves T3 on
 * signals only, with a warning); T4 runs when a judge is given (the composition root passes the
 * gateway's, when DETECTION_T4_PROVIDER / DETECTION_T4_MODEL are configured); T2 (embeddings,
 * ~240 MB) and T5 only when passed in.
 */
import { createDetectionEngine, type DetectionDeps, type DetectionEngine } from './engine.ts';
import { loadT3Classifier } from './ml/index.ts';

export function createDetection(deps: DetectionDeps): DetectionEngine {
  let t3Classifier = deps.t3Classifier;
  if (t3Classifier === undefined) {
    try {
      t3Classifier = loadT3Classifier();
    } catch (error) {
      deps.logger?.warn({ err: error instanceof Error ? error.message : String(error) }, 'T3 classifier not loaded; T3 runs signals only');
    }
  }
  return createDetectionEngine(t3Classifier === undefined ? deps : { ...deps, t3Classifier });
}
