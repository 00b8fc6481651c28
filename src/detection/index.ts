/**
 * Detection capability: the engine (normalization, five-tier cascade, scoring, response policy,
 * session escalation, fragments, explainability) and its routes. Other capabilities use
 * `getDetectionEngine(services).inspect({ kind, content, sessionId, orgId, … })`.
 */
import type { AppInstance } from '../http/app-types.ts';
import type { Services } from '../services.ts';
import { createDetectionEngine, type DetectionDeps, type DetectionEngine, type T4Like } from './engine.ts';
import { loadT3Classifier } from './ml/index.ts';
import { registerRoutesWith } from './routes.ts';

export { createDetectionEngine } from './engine.ts';
export { createT4 } from './ml/index.ts';
export type { BehaviourTier, DetectionDeps, DetectionEngine, InspectRequest, T2Like, T3ClassifierLike, T4Like } from './engine.ts';
export { normalize, MAX_SCAN_LENGTH } from './normalize/index.ts';
export { CATALOGUE, compileCatalogue } from './catalogue/index.ts';
export { DEFAULT_THRESHOLDS, decide, isAllowed, resolveThresholds, sessionFactor, escalate, THREAT_SIGNAL_FLOOR } from './policy.ts';
export { httpScanText } from './http-text.ts';
export type { Decision, HttpRequestShape, InspectKind, ThreatDecision, Thresholds, Verdict } from './types.ts';

const engines = new WeakMap<Services, DetectionEngine>();
const judges = new WeakMap<Services, T4Like>();

/**
 * Supplies T4's judge for these services: the AI gateway capability does, when
 * DETECTION_T4_PROVIDER / DETECTION_T4_MODEL are configured (it owns the provider adapters).
 */
export function provideT4Judge(services: Services, judge: T4Like): void {
  judges.set(services, judge);
}

/**
 * The engine of an app's services (one per Services object). By default T1, the T3 signals and
 * the trained T3 classifier run; T4 runs when configured (its judge is late-bound: whichever
 * capability registers first creates the engine). T2 (embeddings, ~240 MB) is added by whoever
 * configures it through `createDetectionEngine(deps)`.
 */
export function getDetectionEngine(services: Services, extra: Partial<DetectionDeps> = {}): DetectionEngine {
  const existing = engines.get(services);
  if (existing !== undefined) return existing;
  let t3Classifier: DetectionDeps['t3Classifier'];
  try {
    t3Classifier = loadT3Classifier();
  } catch (error) {
    services.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'T3 classifier not loaded; T3 runs signals only');
  }
  // Without a judge (the gateway capability absent) T4 answers 'error': it fails open and the decision says so.
  const t4: T4Like | undefined =
    services.config.detectionT4 === null
      ? undefined
      : { classify: (text) => judges.get(services)?.classify(text) ?? Promise.resolve({ outcome: 'error' as const, confidence: 0 }) };
  const engine = createDetectionEngine({
    cache: services.cache,
    db: services.db,
    logger: services.logger,
    outbox: services.outbox,
    metrics: services.metrics,
    ...(t3Classifier === undefined ? {} : { t3Classifier }),
    ...(t4 === undefined ? {} : { t4 }),
    ...extra,
  });
  engines.set(services, engine);
  services.onClose.push(() => engine.close());
  return engine;
}

export async function registerDetectionRoutes(app: AppInstance, services: Services): Promise<void> {
  registerRoutesWith(app, services, getDetectionEngine(services));
}
export { reportDecision, sessionIdOf } from './report.ts';
