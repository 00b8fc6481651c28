/**
 * The verification capability (issue #18): integrity, grounding, structural and constraint
 * checks on AI responses, while streaming too, a guard API, per-org policy and AI provenance.
 * Outside code uses only these exports.
 */
import { createAuditLog } from '../audit/index.ts';
import { createJudgeCompletion, provideCompletionVerifier } from '../gateway/index.ts';
import type { AppInstance } from '../http/app-types.ts';
import type { Services } from '../services.ts';
import { createGroundingJudge } from './judge.ts';
import { registerVerificationRouteHandlers } from './routes.ts';
import { createVerification, type VerificationCore, type VerificationDeps } from './service.ts';

export { createVerification } from './service.ts';
export type { VerificationCore, VerificationDeps, GuardRequest, PolicyStore } from './service.ts';
export { runVerification, verifyEnvelope, redactContent } from './verify.ts';
export type { GroundingTiers, RequestView } from './verify.ts';
export { createStreamGuard } from './stream-guard.ts';
export type { StreamGuard } from './stream-guard.ts';
export { resolvePolicy, DEFAULT_POLICY, DEFAULT_POLICY_BODY, PolicySchema, PolicyError } from './policy.ts';
export type { PolicyBody, ResolvedPolicy } from './policy.ts';
export { compileSafeRegex } from './regex-safety.ts';
export { systemPromptLeak } from './leak.ts';
export { createGroundingJudge, judgePrompt, parseJudgeAnswer } from './judge.ts';
export type { Verification, LayerResult, Finding, LayerName, Verdict, Action, VerifyInput } from './types.ts';

const cores = new WeakMap<Services, VerificationCore>();

/** The verification core built for these services by `registerVerificationRoutes`, if any (tests). */
export function verificationOf(services: Services): VerificationCore | undefined {
  return cores.get(services);
}

/** The capability plugin: builds the core through its one factory, hands the gateway its verifier, registers the routes. */
export async function registerVerificationRoutes(app: AppInstance, services: Services, overrides: Partial<VerificationDeps> = {}): Promise<void> {
  const audit = createAuditLog(services);
  // Grounding tier 3 uses the deployment's judge model when one is configured (DETECTION_T4_*);
  // it still runs only for orgs whose policy enables grounding.judge.
  const judgeConfig = services.config.detectionT4;
  const tiers = judgeConfig === null ? {} : { judge: createGroundingJudge(createJudgeCompletion(judgeConfig, services.config.providerEnvKeys, services.config.allowPrivateTargets)) };
  const core = createVerification({ db: services.db, logger: services.logger, audit, tiers, ...overrides });
  cores.set(services, core);
  provideCompletionVerifier(services, core.verifier);
  services.onClose.push(() => core.close());
  registerVerificationRouteHandlers(app, core, audit);
}
