/**
 * The one place the HTTP edge registers capabilities' routes: each capability's routes plugin,
 * encapsulated (`app.register`), with the core the composition root (src/services.ts) built for
 * it and the few shared services its routes need. One line per capability, in registration order.
 */
import { accountRoutes, signInRoutes, userRoutes } from '../accounts/index.ts';
import { apiSecurityRoutes } from '../apisec/index.ts';
import { auditRoutes } from '../audit/index.ts';
import { complianceRoutes, optOutHook } from '../compliance/index.ts';
import { detectionRoutes } from '../detection/index.ts';
import { gatewayRoutes } from '../gateway/index.ts';
import { mcpRoutes } from '../mcp/index.ts';
import { sensorRoutes } from '../sensors/index.ts';
import type { AppInstance } from '../platform/http-plugin.ts';
import { siemRoutes } from '../siem/index.ts';
import { webhookRoutes } from '../webhooks/index.ts';
import { verificationRoutes } from '../verification/index.ts';
import type { Services } from '../services.ts';

export async function registerCapabilities(app: AppInstance, services: Services): Promise<void> {
  const { accounts, audit, detection, events, gateway, webhooks, verification, rateLimiter, metrics, checkTarget } = services;
  // The AI opt-out's effect on every API request that names an opted-out subject (docs/compliance.md).
  app.addHook('preHandler', optOutHook(services.compliance));
  await app.register(accountRoutes, { accounts, audit, rateLimiter, metrics, checkTarget, totp: services.signIn.totp, features: services.config.features });
  await app.register(userRoutes, { accounts, audit, rateLimiter, metrics, checkTarget });
  await app.register(signInRoutes, { accounts, totp: services.signIn.totp, sso: services.signIn.sso, rateLimiter, metrics, publicUrl: services.config.publicUrlSet ? services.config.publicUrl : null });
  await app.register(detectionRoutes, { engine: detection, events, audit: services.audit });
  await app.register(gatewayRoutes, { gateway, events, streams: services.streams, enabled: services.config.features.aiGateway, verifier: verification.verifier });
  await app.register(auditRoutes, { audit });
  await app.register(webhookRoutes, { webhooks, audit });
  await app.register(siemRoutes, { siem: services.siem, audit });
  await app.register(apiSecurityRoutes, {
    apisec: services.apisec,
    geoBlocking: services.config.features.geoBlocking,
    trustProxy: services.config.trustProxy,
    allowPrivateTargets: services.config.allowPrivateTargets,
    streams: services.streams,
  });
  await app.register(verificationRoutes, { verification, audit });
  await app.register(mcpRoutes, {
    mcp: services.mcp,
    superAdminKeys: services.config.mcpSuperAdminKeys,
    rateLimiter,
    streams: services.streams,
    origins: { allowedOrigins: services.config.mcpAllowedOrigins, allowedHosts: services.config.mcpAllowedHosts },
    routing: services.routing,
    oauth: services.mcpOAuth,
    // A verified OAuth token's holder: the org's plan and tag, the configured role and its scope, never a key.
    oauthCredential: async ({ orgId, subject, role }) => {
      const org = await services.accounts.getOrg(orgId);
      if (org === null) return null;
      const scope = role === 'admin' ? 'admin' : role === 'operator' ? 'write' : 'read';
      return { kind: 'user', orgId, orgTag: org.tag, plan: org.effective_plan, scope, keyClass: 'live', keyId: null, userId: `oauth:${subject}`, role };
    },
  });
  await app.register(complianceRoutes, { compliance: services.compliance });
  await app.register(sensorRoutes, { collector: services.collector, mtlsOnly: services.config.sensorListener !== null });
}
