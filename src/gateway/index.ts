/**
 * The AI gateway capability. Outside code uses only these exports.
 */
import type { AppInstance } from '../http/app-types.ts';
import type { Services } from '../services.ts';
import type { GatewayEvents } from './events.ts';
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

/** Builds the gateway service from the shared services (overrides are for tests and benches). */
export function createGatewayService(services: Services, overrides: Partial<GatewayServiceDeps> = {}): GatewayService {
  const events: GatewayEvents = services.events;
  const costUsd: CostFunction | undefined = overrides.costUsd;
  const gateway = new GatewayService({
    db: services.db,
    cache: services.cache,
    logger: services.logger,
    metrics: services.metrics,
    envKeys: services.config.providerEnvKeys,
    orgKeys: services.accounts.providerKeys,
    events,
    ...(costUsd === undefined ? {} : { costUsd }),
    ...overrides,
  });
  services.onClose.push(() => gateway.close());
  return gateway;
}

/** The capability plugin: `registerGatewayRoutes(app, services)`. */
export async function registerGatewayRoutes(app: AppInstance, services: Services): Promise<void> {
  const gateway = createGatewayService(services);
  registerGatewayRouteHandlers(app, gateway, { enabled: services.config.features.aiGateway });
}
