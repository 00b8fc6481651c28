/**
 * Accounts capability: organizations (plans and trials), users, API keys and upstream provider
 * keys (core: accounts.ts, no Fastify), and its routes plugin (routes.ts). Outside code uses only
 * these exports.
 */
export { createAccounts, scopeAllows, usageMonth, SCOPES, KEY_CLASSES, ROLES, PROVIDER_IDS } from './accounts.ts';
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
export { accountRoutes, planGate, type AccountRoutesOptions } from './routes.ts';
