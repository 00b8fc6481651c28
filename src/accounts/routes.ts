/**
 * Accounts API: sign-up and sign-in (strict rate tiers; both complete in finishSignIn, which sets
 * the dashboard cookies), the caller's organization and trial, API keys (shown once, with their
 * creator), and upstream provider keys (stored encrypted, shown masked). Users, invitations and
 * the session routes: user-routes.ts. Scopes: GET needs read; creating, revoking and setting keys
 * needs admin.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuditLog } from '../audit/index.ts';
import type { FeatureFlags } from '../platform/config.ts';
import { retryingLockConflicts } from '../platform/db/failures.ts';
import type { Queryable } from '../platform/db/index.ts';
import { SvcError } from '../platform/errors.ts';
import { auditActor, type RoutesPlugin } from '../platform/http-plugin.ts';
import type { Metrics } from '../platform/metrics.ts';
import type { RateLimiter, RateLimitPolicy } from '../platform/rate-limit.ts';
import { rateLimitError, setRateLimitHeaders } from '../platform/rate-limit-reply.ts';
import { KEY_CLASSES, SCOPES, type Accounts, type AuthContext } from './accounts.ts';
import { assertPlanAllows, LOGIN_POLICY, PLANS, REGISTER_POLICY, type Gate } from './plans.ts';
import { finishSignIn } from './sign-in.ts';
import type { Totp } from './totp.ts';

const Email = Type.String({ format: 'email', maxLength: 320 });
const Password = Type.String({ minLength: 12, maxLength: 256 });
const Org = Type.Object(
  {
    id: Type.String(),
    tag: Type.String(),
    name: Type.String(),
    plan: Type.Union(PLANS.map((plan) => Type.Literal(plan))),
    effective_plan: Type.String(),
    trial_started_at: Type.Union([Type.String(), Type.Null()]),
    trial_ends_at: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String(),
  },
  { additionalProperties: false },
);
const ApiKey = Type.Object(
  {
    key_id: Type.String(),
    display: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    scope: Type.String(),
    class: Type.String(),
    created_at: Type.String(),
    last_used_at: Type.Union([Type.String(), Type.Null()]),
    revoked_at: Type.Union([Type.String(), Type.Null()]),
    created_by: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);
const ProviderKey = Type.Object(
  { provider: Type.String(), key: Type.String(), base_url: Type.Union([Type.String(), Type.Null()]), updated_at: Type.String() },
  { additionalProperties: false },
);

export interface AccountRoutesOptions {
  accounts: Accounts;
  /** Key and configuration changes are written here. */
  audit: AuditLog;
  rateLimiter: RateLimiter;
  metrics: Pick<Metrics, 'rateLimitHits'>;
  /** SSRF check of a user-supplied base URL. */
  checkTarget(url: string, field?: string): Promise<URL>;
  /** TOTP second factor: password login answers a second step for users who enabled it. */
  totp?: Pick<Totp, 'active' | 'issueMfaToken'>;
  /** The deployment's feature flags (FEATURE_* in the environment), shown by GET /api/v1/config/features. */
  features: FeatureFlags;
}

/** Each feature flag's name in the API and the environment variable that sets it. */
const FEATURE_VARIABLES: ReadonlyArray<[keyof FeatureFlags, string, string]> = [
  ['mcpSecurity', 'mcp_security', 'FEATURE_MCP_SECURITY'],
  ['aiGateway', 'ai_gateway', 'FEATURE_AI_GATEWAY'],
  ['geoBlocking', 'geo_blocking', 'FEATURE_GEO_BLOCKING'],
  ['hipaaBaa', 'hipaa_baa', 'FEATURE_HIPAA_BAA'],
  ['soc2Reports', 'soc2_reports', 'FEATURE_SOC2_REPORTS'],
];

export const accountRoutes: RoutesPlugin<AccountRoutesOptions> = async (app, services) => {
  const { accounts, audit } = services;
  /**
   * Key and configuration changes are written to the org's audit chain, in the change's own
   * transaction (`tx`): the change and its entry are stored together or not at all.
   */
  const record = (tx: Queryable, request: FastifyRequest, action: string, target: string | null, details: Record<string, unknown> = {}) => {
    const caller = auth(request);
    return audit.append(
      caller.orgId,
      {
        actor: auditActor(caller),
        action,
        target,
        outcome: 'success',
        details: { request_id: request.id, ...details },
      },
      { tx },
    );
  };

  app.post(
    '/api/v1/auth/register',
    {
      config: { public: true },
      schema: {
        tags: ['accounts'],
        body: Type.Object(
          { email: Email, password: Password, org_name: Type.String({ minLength: 1, maxLength: 200 }) },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      await strictTier(services, request, reply, 'register', REGISTER_POLICY, 'REGISTER_BLOCKED');
      const { org, userId, role } = await accounts.users.register({
        email: request.body.email,
        password: request.body.password,
        orgName: request.body.org_name,
      });
      const signedIn = await finishSignIn(request, reply, { userId, orgId: org.id, role }, 'password');
      reply.status(201);
      return { org_tag: org.tag, plan: org.plan, trial_ends_at: org.trial_ends_at, ...signedIn };
    },
  );

  app.post(
    '/api/v1/auth/login',
    {
      config: { public: true },
      schema: {
        tags: ['accounts'],
        body: Type.Object({ email: Type.String({ maxLength: 320 }), password: Type.String({ maxLength: 256 }) }, { additionalProperties: false }),
      },
    },
    async (request, reply) => {
      await strictTier(services, request, reply, 'login', LOGIN_POLICY, 'LOGIN_BLOCKED');
      const user = await accounts.users.login(request.body.email, request.body.password);
      if (user === null) throw new SvcError('LOGIN_FAILED');
      // With TOTP active the password is only the first step: the answer carries the token the
      // second step (POST /api/v1/auth/login/totp) takes with a code, and no session.
      if (services.totp !== undefined && (await services.totp.active(user))) {
        return { mfa_required: true as const, ...(await services.totp.issueMfaToken(user)) };
      }
      return finishSignIn(request, reply, user, 'password');
    },
  );

  app.get(
    '/api/v1/whoami',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['accounts'],
        description: 'Who the credential belongs to: org, plan, scope and key class. Answered from memory; no database round trip.',
      },
    },
    async (request) => {
      const caller = auth(request);
      return {
        org_id: caller.orgId,
        org_tag: caller.orgTag,
        plan: caller.plan,
        scope: caller.scope,
        class: caller.keyClass,
        key_id: caller.keyId,
        user_id: caller.userId,
        role: caller.role,
      };
    },
  );

  app.get(
    '/api/v1/config/features',
    { config: { scope: 'read' }, schema: { tags: ['accounts'], description: "The deployment's feature flags in force (set by FEATURE_* in svc's environment; the same for every org). Read-only." } },
    async (request) => {
      auth(request);
      return { data: FEATURE_VARIABLES.map(([key, flag, variable]) => ({ flag, enabled: services.features[key], variable })) };
    },
  );

  app.get('/api/v1/org', { config: { scope: 'read' }, schema: { tags: ['accounts'], response: { 200: Org } } }, async (request) => {
    const org = await accounts.getOrg(auth(request).orgId);
    if (org === null) throw new SvcError('NOT_FOUND');
    return org;
  });

  app.post(
    '/api/v1/org/trial/extend',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['accounts'],
        body: Type.Object({ days: Type.Integer({ minimum: 1, maximum: 60 }) }, { additionalProperties: false }),
        response: { 200: Org },
      },
    },
    async (request) => {
      return retryingLockConflicts(() =>
        accounts.extendTrial(auth(request).orgId, request.body.days, (tx, org) => record(tx, request, 'org.trial_extended', org.id, { days: request.body.days, trial_ends_at: org.trial_ends_at })),
      );
    },
  );

  app.get(
    '/api/v1/org/usage',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['accounts'],
        description:
          'Usage against every quota of the plan in force: findings this month (stored, limit, dropped at the quota), sensors, trial days left, pillars and features included, rate and token limits. null limits are unlimited.',
      },
    },
    async (request) => accounts.usage(auth(request).orgId),
  );

  app.put(
    '/api/v1/org/plan',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['accounts'],
        description:
          'Changes the plan (upgrade, downgrade, or conversion of a trial): a super_admin only. There is no payment processor; the plan is what the operator sets. The new plan has no trial.',
        body: Type.Object({ plan: Type.Union(PLANS.map((plan) => Type.Literal(plan))) }, { additionalProperties: false }),
      },
    },
    async (request) => {
      const caller = auth(request);
      if (caller.role !== 'super_admin') throw new SvcError('ROLE_INSUFFICIENT', { details: { required_role: 'super_admin', role: caller.role } });
      const result = await retryingLockConflicts(() =>
        accounts.changePlan(caller.orgId, request.body.plan, (tx, changed) =>
          record(tx, request, 'org.plan_changed', caller.orgId, {
            from: changed.previous.plan,
            from_effective: changed.previous.effective_plan,
            to: changed.org.plan,
            change: changed.change,
            trial_ends_at_before: changed.previous.trial_ends_at,
          }),
        ),
      );
      return { org: result.org, previous: result.previous, change: result.change };
    },
  );

  app.post(
    '/api/v1/keys',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['accounts'],
        body: Type.Object(
          {
            scope: Type.Union(SCOPES.map((scope) => Type.Literal(scope))),
            class: Type.Optional(Type.Union(KEY_CLASSES.map((keyClass) => Type.Literal(keyClass)))),
            name: Type.Optional(Type.String({ maxLength: 200 })),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const caller = auth(request);
      // A test or restricted key cannot mint a key of another class (no escalation to live).
      if (caller.kind === 'api_key' && caller.keyClass !== 'live' && (request.body.class ?? 'live') !== caller.keyClass) {
        throw new SvcError('KEY_CLASS_FORBIDDEN', { details: { field: 'body.class', key_class: caller.keyClass, allowed: [caller.keyClass] } });
      }
      const { key, apiKey } = await retryingLockConflicts(() =>
        accounts.createKey(
          caller.orgId,
          { scope: request.body.scope, keyClass: request.body.class ?? 'live', name: request.body.name ?? null, createdBy: auditActor(caller) },
          (tx, created) => record(tx, request, 'api_key.created', created.key_id, { scope: created.scope, class: created.class }),
        ),
      );
      reply.status(201);
      return { ...key, api_key: apiKey };
    },
  );

  app.get('/api/v1/keys', { config: { scope: 'admin' }, schema: { tags: ['accounts'], response: { 200: Type.Object({ data: Type.Array(ApiKey) }) } } }, async (request) => ({
    data: await accounts.listKeys(auth(request).orgId),
  }));

  app.delete(
    '/api/v1/keys/:id',
    { config: { scope: 'admin' }, schema: { tags: ['accounts'], params: Type.Object({ id: Type.String({ format: 'uuid' }) }), response: { 200: ApiKey } } },
    async (request) => {
      return retryingLockConflicts(() => accounts.revokeKey(auth(request).orgId, request.params.id, (tx, key) => record(tx, request, 'api_key.revoked', key.key_id)));
    },
  );

  app.put(
    '/api/v1/providers/:provider/key',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['accounts'],
        params: Type.Object({ provider: Type.String({ pattern: '^[a-z][a-z0-9_]{1,31}$' }) }),
        body: Type.Object(
          { key: Type.String({ minLength: 1, maxLength: 8192 }), base_url: Type.Optional(Type.String({ format: 'uri', maxLength: 2048 })) },
          { additionalProperties: false },
        ),
        response: { 200: ProviderKey },
      },
    },
    async (request) => {
      const baseUrl = request.body.base_url ?? null;
      if (baseUrl !== null) await services.checkTarget(baseUrl, 'base_url');
      return retryingLockConflicts(() =>
        accounts.providerKeys.set(auth(request).orgId, request.params.provider, request.body.key, baseUrl, (tx, stored) => record(tx, request, 'provider_key.set', stored.provider, { base_url: stored.base_url })),
      );
    },
  );

  app.get('/api/v1/providers', { config: { scope: 'read' }, schema: { tags: ['accounts'], response: { 200: Type.Object({ data: Type.Array(ProviderKey) }) } } }, async (request) => ({
    data: await accounts.providerKeys.list(auth(request).orgId),
  }));

  app.delete(
    '/api/v1/providers/:provider/key',
    { config: { scope: 'admin' }, schema: { tags: ['accounts'], params: Type.Object({ provider: Type.String({ pattern: '^[a-z][a-z0-9_]{1,31}$' }) }) } },
    async (request, reply) => {
      const removed = await retryingLockConflicts(() =>
        accounts.providerKeys.remove(auth(request).orgId, request.params.provider, (tx, provider) => record(tx, request, 'provider_key.removed', provider)),
      );
      if (!removed) throw new SvcError('NOT_FOUND');
      reply.status(204);
    },
  );
};

/**
 * The plan gate of a pillar's or feature's route: 403 PLAN_UPGRADE_REQUIRED when the caller's plan
 * in force lacks it. Pillars gate creating and changing their configuration (and the verification
 * guard API); reading, deleting and the traffic through resources already configured stay open,
 * so a downgrade never switches protection off (docs/accounts-plans.md).
 */
export function planGate(request: FastifyRequest, gate: Gate): void {
  assertPlanAllows(auth(request).plan, gate);
}

/** The caller: the onRequest hook has guaranteed it for routes with a scope. */
export function auth(request: { readonly auth: AuthContext | null }): AuthContext {
  if (request.auth === null) throw new SvcError('AUTH_MISSING');
  return request.auth;
}

/** The strict per-IP tiers of the sign-in endpoints (LOGIN_POLICY, REGISTER_POLICY). */
export async function strictTier(
  services: Pick<AccountRoutesOptions, 'rateLimiter' | 'metrics'>,
  request: FastifyRequest,
  reply: FastifyReply,
  name: string,
  policy: RateLimitPolicy,
  code: 'LOGIN_BLOCKED' | 'REGISTER_BLOCKED',
  identity: string = request.ip,
): Promise<void> {
  const decision = await services.rateLimiter.hit(`${name}:${identity}`, policy);
  setRateLimitHeaders(reply, decision);
  if (!decision.allowed) {
    services.metrics.rateLimitHits.inc({ scope: name, gateway: 'api' });
    throw rateLimitError(decision, code);
  }
}
