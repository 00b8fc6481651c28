/**
 * The AI gateway capability. Outside code uses only these exports.
 */
import { createResponseGuard, getDetectionEngine, provideT4Judge } from '../detection/index.ts';
import { screenCompletion } from './screen.ts';
import { createT4Judge } from './t4-judge.ts';
import type { AppInstance } from '../http/app-types.ts';
import { setTokenBudgetUsedRatio } from '../webhooks/index.ts';
import type { Services } from '../services.ts';
import type { GatewayEvents } from './events.ts';
import { costUsd as listedCostUsd } from './pricing/pricing.ts';
import { registerGatewayRouteHandlers } from './routes.ts';
import { GatewayService, type CostFunction, type GatewayServiceDeps } from './service.ts';

export { GatewayService } from './service.ts';
export type { Caller, CompletionEnvelope, CostFunction, GatewayServiceDeps, Invokers } from './service.ts';
export type { GatewayEvents, GatewayEventName } from './events.ts';
export { loggingEvents } from './events.ts';
export { AI_HEADERS } from './routes.ts';
export { detectPii, redactMessages, restorePlaceholders } from './pii/index.ts';
export type { PiiType, PiiSpan, PiiMode } from './pii/index.ts';
export { DAILY_TOKEN_BUDGETS } from './budget.ts';

const overridesByServices = new WeakMap<Services, Partial<GatewayServiceDeps>>();
const instances = new WeakMap<Services, GatewayService>();

/**
 * Test and bench seam: dependencies to override (invokers, policies, cost function) for the
 * gateway that `registerGatewayRoutes` will build on these services. Call before buildApp.
 */
export function configureGateway(services: Services, overrides: Partial<GatewayServiceDeps>): void {
  overridesByServices.set(services, overrides);
}

/** The gateway service built for these services by `registerGatewayRoutes`, if any. */
export function gatewayOf(services: Services): GatewayService | undefined {
  return instances.get(services);
}

/** Builds the gateway service from the shared services (overrides are for tests and benches). */
export function createGatewayService(services: Services, overrides: Partial<GatewayServiceDeps> = {}): GatewayService {
  const events: GatewayEvents = services.events;
  const costUsd: CostFunction = overrides.costUsd ?? listedCostUsd;
  const gateway = new GatewayService({
    db: services.db,
    cache: services.cache,
    logger: services.logger,
    metrics: services.metrics,
    envKeys: services.config.providerEnvKeys,
    orgKeys: services.accounts.providerKeys,
    events,
    checkTarget: (url) => services.checkTarget(url, 'base_url'),
    allowPrivateTargets: services.config.allowPrivateTargets,
    onBudgetUsage: (orgId, ratio) => setTokenBudgetUsedRatio(services.metrics.registry, orgId, ratio),
    ...overrides,
    costUsd,
  });
  services.onClose.push(() => gateway.close());
  return gateway;
}

/** The capability plugin: `registerGatewayRoutes(app, services)`. */
export async function registerGatewayRoutes(app: AppInstance, services: Services): Promise<void> {
  const gateway = createGatewayService(services, overridesByServices.get(services) ?? {});
  instances.set(services, gateway);
  // T4 (LLM escalation) asks the configured judge model through this capability's adapters.
  const judge = services.config.detectionT4;
  if (judge !== null) provideT4Judge(services, createT4Judge(judge, services.config.providerEnvKeys, services.config.allowPrivateTargets));
  const detection = getDetectionEngine(services);
  registerGatewayRouteHandlers(app, gateway, {
    enabled: services.config.features.aiGateway,
    screen: (request, body) => screenCompletion(detection, services.events, request, body),
    responseGuard: (request, body) => createResponseGuard(detection, body, { ...(request.auth?.orgId === undefined ? {} : { orgId: request.auth.orgId }), requestId: String(request.id) }),
  });
}
