/**
 * Accounts capability: organizations (plans and trials), users, API keys and upstream provider
 * keys (core: accounts.ts, no Fastify), and its routes plugin (routes.ts). Outside code uses only
 * these exports.
 */
export { createAccounts, scopeAllows, usageMonth, SCOPES, KEY_CLASSES, ROLES, PROVIDER_IDS } from './accounts.ts';
export { roleAllows, roleScope, requireRole, ADMIN_ROLES } from './access.ts';
export { SIGN_IN_METHODS, type SignInMethod, type Sessions } from './sessions.ts';
export { INVITATION_STATUSES, type UserRecord, type InvitationRecord } from './members.ts';
export { finishSignIn, SESSION_COOKIE, CSRF_COOKIE, CSRF_HEADER, type SignInBody, type SignedInUser, type SignInAnswer } from './sign-in.ts';
export { userRoutes } from './user-routes.ts';
export type { Accounts, AuthContext, OrgRecord, OrgUsage, PlanChange, PlanChangeListener, ApiKeyRecord, ProviderKeyRecord, Scope, KeyClass, Role } from './accounts.ts';
export type { FindingsQuota } from './quota.ts';
export {
  PLANS,
  PLAN_LIMITS,
  PLAN_POLICIES,
  ANONYMOUS_POLICY,
  KEY_LOOKUP_POLICY,
  OPERATIONS_POLICY,
  LOGIN_POLICY,
  REGISTER_POLICY,
  effectivePlan,
  PILLARS,
  PLAN_FEATURES,
  planAllows,
  lowestPlanWith,
  assertPlanAllows,
  sensorQuota,
  assertSensorQuota,
  findingsQuota,
  type Plan,
  type Pillar,
  type PlanFeature,
  type Gate,
} from './plans.ts';
export { createTotp, TOTP_MAX_FAILURES, TOTP_LOCK_MS, TOTP_WINDOW_STEPS, RECOVERY_CODE_COUNT, type Totp } from './totp.ts';
export { createSso, SSO_ROLES, SAML_PLANS, type Sso } from './sso.ts';
export { signInRoutes, type SignInRoutesOptions } from './sign-in-routes.ts';
export { accountRoutes, planGate, type AccountRoutesOptions } from './routes.ts';
