/**
 * API-security capability: protected gateways — an inline reverse proxy in front of an org's API
 * that inspects every request with the detection engine and applies the response policy — with
 * the traffic analyzer (endpoint discovery, shadow and zombie endpoints, risk), bot
 * classification, data classification, T5 behavioural baselines, backend health checks and
 * geo-blocking rules. Outside code uses only these exports.
 */
import { createBehaviourBaseline, getDetectionEngine } from '../detection/index.ts';
import type { AppInstance } from '../http/app-types.ts';
import type { Services } from '../services.ts';
import { registerApiSecurityRoutesWith } from './routes.ts';
import { createApiSecurity, type ApiSecurity, type ApiSecurityDeps } from './service.ts';

export { createApiSecurity } from './service.ts';
export type { ApiSecurity, ApiSecurityDeps, GatewayInput, TrafficOutcome, TrafficRequest } from './service.ts';
export type { Gateway, GatewayMode, BotClass, BotAction } from './types.ts';
export { classifyUserAgent, createBotClassifier } from './bots.ts';
export { normalizePath, recognizeProtocol, noiseOf } from './paths.ts';
export { createAnalyzer, MAX_ENDPOINTS, MAX_PATTERNS } from './analyzer.ts';
export { classifyData } from './data-class.ts';
export type { DataClass } from './data-class.ts';
export { solveChallenge, challengePage, CLEARANCE_COOKIE, CLEARANCE_HEADER, CHALLENGE_PATH } from './challenge.ts';
export { INSPECTION_LIMIT } from './body.ts';

const instances = new WeakMap<Services, ApiSecurity>();
const overridesByServices = new WeakMap<Services, Partial<ApiSecurityDeps>>();

/** Test and bench seam: dependencies to override for the core built on these services. Call before buildApp. */
export function configureApiSecurity(services: Services, overrides: Partial<ApiSecurityDeps>): void {
  overridesByServices.set(services, overrides);
}

/** The core built for these services by `registerApiSecurityRoutes`, if any. */
export function apiSecurityOf(services: Services): ApiSecurity | undefined {
  return instances.get(services);
}

/** Builds the core from the shared services (one factory call; the composition root can take it over as is). */
export function buildApiSecurity(services: Services): ApiSecurity {
  const config = services.config;
  return createApiSecurity({
    db: services.db,
    cache: services.cache,
    logger: services.logger,
    metrics: services.metrics,
    events: services.events,
    rateLimiter: services.rateLimiter,
    engine: getDetectionEngine(services),
    config: { secretKey: config.secretKey, allowPrivateTargets: config.allowPrivateTargets, trustProxy: config.trustProxy, geoBlocking: config.features.geoBlocking },
    checkTarget: (url, field) => services.checkTarget(url, field),
    behaviour: createBehaviourBaseline(services.cache, { namespace: 'apisec-t5' }),
    ...overridesByServices.get(services),
  });
}

export async function registerApiSecurityRoutes(app: AppInstance, services: Services): Promise<void> {
  const apisec = buildApiSecurity(services);
  instances.set(services, apisec);
  registerApiSecurityRoutesWith(app, apisec, {
    geoBlocking: services.config.features.geoBlocking,
    trustProxy: services.config.trustProxy,
    allowPrivateTargets: services.config.allowPrivateTargets,
  });
  app.urlRewrites.push((host, url) => {
    const routed = apisec.route(host, url);
    if (routed === null) return null;
    const rest = url.slice(routed.mount.length);
    return `/gw/${routed.gateway.id}${rest.startsWith('/') ? rest : `/${rest}`}`;
  });
  // Background work (route refresh, health checks) starts with the server, never at import.
  app.addHook('onReady', async () => apisec.start());
  services.onClose.push(() => apisec.close());
}
