/**
 * The AI gateway capability. Outside code uses only these exports: the composition root builds
 * one gateway with `createGateway(deps)` (and T4's judge with `createT4Judge`), the HTTP layer
 * registers `gatewayRoutes` with it. Inside, `service.ts` composes admission, attempts,
 * settlement and the stream relay (docs/gateway.md, "Module layout").
 */
import { costUsd as listedCostUsd } from './pricing/pricing.ts';
import { GatewayService, type GatewayServiceDeps } from './service.ts';

export { GatewayService } from './service.ts';
export type { Caller, CompletionCall, CompletionEnvelope, CompletionHooks, CostFunction, GatewayServiceDeps, Invokers } from './service.ts';
export type { GatewayEvents, GatewayEventName } from './events.ts';
export { AI_GATEWAY_EVENT, loggingEvents } from './events.ts';
export { svcStreamEncoder } from './relay.ts';
export { AI_HEADERS, gatewayRoutes, type GatewayRoutesOptions } from './routes.ts';
export { createT4Judge, createJudgeCompletion } from './t4-judge.ts';
export { startGatewayJobs, USAGE_PURGE_JOB } from './jobs.ts';
export { BUDGET_RETENTION_DAYS, USAGE_RETENTION_DAYS, UsageHistory } from './usage-history.ts';
export { detectPii, loadPiiLexicons, redactMessages, restorePlaceholders } from './pii/index.ts';
export type { PiiType, PiiSpan, PiiMode } from './pii/index.ts';
export { DAILY_TOKEN_BUDGETS } from './budget.ts';
export { providerIds } from './registry.ts';
export { resolveTarget } from './keys.ts';
export type { GatewayStores } from './service.ts';
export type { GatewaySettings, GatewaySettingsSource } from './settings.ts';
export type { BudgetStore, BudgetUsageRow } from './budget.ts';
export type { UsageHistorySink, UsageHourRow } from './usage-history.ts';
export type { CompletionVerifier, StreamVerifier, VerifierContext, VerifierStop } from './verifier.ts';
export { VerificationSchema } from './verifier.ts';
export { CompletionRequestSchema, CompletionResponseSchema, SourceSchema, ToolSchema } from './schemas.ts';
export type { CompletionBody } from './schemas.ts';
export { ChatCompletionChunkSchema, ChatCompletionResponseSchema, ModelListSchema, ModelSchema, OpenAiErrorSchema } from './compat/openai.ts';
export { AnthropicErrorSchema, MessageResponseSchema, MessageStreamEventSchema } from './compat/anthropic.ts';

/**
 * The gateway: explicit dependencies (`GatewayServiceDeps`); the listed price table unless
 * `costUsd` is given. Background timers start with `start()` (the server lifecycle), not here.
 */
export function createGateway(deps: GatewayServiceDeps): GatewayService {
  return new GatewayService({ ...deps, costUsd: deps.costUsd ?? listedCostUsd });
}
