/**
 * The verification capability (issue #18): integrity, grounding, structural and constraint
 * checks on AI responses, while streaming too, a guard API, per-org policy and AI provenance.
 * Outside code uses only these exports.
 */
export { createVerification } from './service.ts';
export type { VerificationCore, VerificationDeps, GuardRequest, PolicyStore } from './service.ts';
export { runVerification, verifyEnvelope, redactContent } from './verify.ts';
export type { GroundingTiers, RequestView } from './verify.ts';
export { createStreamGuard } from './stream-guard.ts';
export type { StreamGuard } from './stream-guard.ts';
export { resolvePolicy, DEFAULT_POLICY, DEFAULT_POLICY_BODY, PolicySchema, PolicyError, POLICY_ATOM_COMPARISONS, POLICY_PATTERN_SCANS } from './policy.ts';
export type { InactiveRule, PolicyBody, ResolvedPolicy } from './policy.ts';
export { compileSafeRegex, regexInputLimit, REGEX_INPUT_LIMIT, UNBOUNDED_REGEX_INPUT_LIMIT } from './regex-safety.ts';
export { systemPromptLeak } from './constraint.ts';
export { createGroundingJudge, judgePrompt, parseJudgeAnswer } from './judge.ts';
export { checkGroundingModel, loadGroundingModel, passagesFor, GroundingModelError } from './local-model.ts';
export type { GroundingModel, GroundingModelFailure } from './local-model.ts';
export type { Verification, LayerResult, Finding, LayerName, Verdict, Action, VerifyInput } from './types.ts';
export { provenanceBatchDigest, provenanceRecordDigest, PROVENANCE_AUDIT_ACTION } from './provenance.ts';
export type { ProvenanceStatement } from './provenance.ts';
export { verificationRoutes, GuardRequestSchema } from './routes.ts';
export type { VerificationRoutesOptions } from './routes.ts';
