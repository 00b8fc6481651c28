/**
 * MCP security capability: an inspecting MCP proxy with a servers registry, pinned tool
 * definitions, role authorization, injection scanning, quarantine, sessions and compound chains.
 * `createMcp(deps)` builds the core (no Fastify); `registerMcpRoutes(app, services)` builds it
 * from the shared services and registers its routes (the one line in src/http/capabilities.ts).
 */
import { createAuditLog } from '../audit/index.ts';
import { getDetectionEngine } from '../detection/index.ts';
import type { AppInstance } from '../http/app-types.ts';
import type { Services } from '../services.ts';
import { registerMcpRouteHandlers } from './routes.ts';
import { createMcp, type Mcp, type McpDeps } from './service.ts';

export { createMcp, SESSION_TTL_MS } from './service.ts';
export type { Mcp, McpDeps, McpServerView, ServerInput } from './service.ts';
export { registerMcpRouteHandlers } from './routes.ts';
export { MCP_ROLES, roleAllows, roleOf } from './authorization.ts';
export type { McpRole } from './authorization.ts';
export { TOOL_CATEGORIES, cleanText, definitionHash, definitionText, inferCategory } from './definitions.ts';
export type { ToolCategory } from './definitions.ts';
export { COMPOUND_PATTERNS, CHAIN_WINDOW_MS, createChainCorrelator } from './chains.ts';
export { createInspector, contentSignals } from './inspection.ts';
export { MCP_REFUSALS } from './jsonrpc.ts';
export { poisonLevel } from './pinning.ts';

const overridesByServices = new WeakMap<Services, Partial<McpDeps>>();
const instances = new WeakMap<Services, Mcp>();

/** Test seam: dependencies to override (e.g. a short session TTL) for the core built on these services. Call before buildApp. */
export function configureMcp(services: Services, overrides: Partial<McpDeps>): void {
  overridesByServices.set(services, overrides);
}

/** The core built for these services by registerMcpRoutes, if any. */
export function mcpOf(services: Services): Mcp | undefined {
  return instances.get(services);
}

export async function registerMcpRoutes(app: AppInstance, services: Services): Promise<void> {
  const mcp = createMcp({
    db: services.db,
    cache: services.cache,
    events: services.events,
    logger: services.logger,
    audit: createAuditLog(services),
    detection: getDetectionEngine(services),
    checkTarget: (url, field) => services.checkTarget(url, field),
    allowPrivateTargets: services.config.allowPrivateTargets,
    enabled: services.config.features.mcpSecurity,
    ...overridesByServices.get(services),
  });
  instances.set(services, mcp);
  services.onClose.push(() => mcp.close());
  await registerMcpRouteHandlers(app, mcp, {
    superAdminKeys: services.config.mcpSuperAdminKeys,
    async releaseSlot(request) {
      const held = request.rateLimit;
      if (held === null || !held.holdsSlot) return;
      held.holdsSlot = false;
      await services.rateLimiter.release(held.identity);
    },
  });
}
