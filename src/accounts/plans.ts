/**
 * Plans, trials and the limits each plan implies.
 *
 * The spec prices four plans (Community, Starter, Pro, Enterprise) but states request limits for
 * three rows (Free, Pro, Enterprise). svc maps Community → Free, Starter → Pro (a paying plan
 * gets the paid row), Pro → Pro, Enterprise → Enterprise (docs/decisions.md). "unlimited" is
 * represented by a limit of 0, which the rate limiter skips.
 */
import { SvcError } from '../platform/errors.ts';
import type { RateLimitPolicy, WindowRule } from '../platform/rate-limit.ts';

import { PLANS, type Plan } from './org-usage.ts';

export { PLANS, type Plan };

export const TRIAL_DAYS = 30;
export const TRIAL_MAX_DAYS = 90;
const DAY_MS = 86_400_000;

export interface RateRow {
  row: 'free' | 'pro' | 'enterprise';
  perMinute: number;
  perDay: number;
  burst: number;
  concurrent: number;
}

const RATE_ROWS: Record<RateRow['row'], RateRow> = {
  free: { row: 'free', perMinute: 60, perDay: 10_000, burst: 10, concurrent: 5 },
  pro: { row: 'pro', perMinute: 1_000, perDay: 500_000, burst: 200, concurrent: 50 },
  enterprise: { row: 'enterprise', perMinute: 0, perDay: 0, burst: 5_000, concurrent: 0 },
};

export const PLAN_LIMITS: Record<Plan, { rate: RateRow; dailyTokens: number; findingsPerMonth: number; sensors: number }> = {
  community: { rate: RATE_ROWS.free, dailyTokens: 10_000, findingsPerMonth: 100_000, sensors: 1 },
  starter: { rate: RATE_ROWS.pro, dailyTokens: 500_000, findingsPerMonth: 1_000_000, sensors: 3 },
  pro: { rate: RATE_ROWS.pro, dailyTokens: 5_000_000, findingsPerMonth: 10_000_000, sensors: 3 },
  enterprise: { rate: RATE_ROWS.enterprise, dailyTokens: 999_000_000, findingsPerMonth: 0, sensors: 0 },
};

/** The four pillars of the spec ("What the service does"). */
export const PILLARS = ['api_security', 'mcp_security', 'ai_gateway', 'verification'] as const;
export type Pillar = (typeof PILLARS)[number];

/** Plan-gated features beside the pillars (spec, Plans table: "SIEM export" on Pro, "SSO/SAML" on Enterprise). */
export const PLAN_FEATURES = ['siem_export', 'sso_saml'] as const;
export type PlanFeature = (typeof PLAN_FEATURES)[number];
export type Gate = Pillar | PlanFeature;

/**
 * What each plan includes (spec, Plans table). Community has one pillar, the spec not saying
 * which: the AI gateway, since the spec gives the free tier a daily token budget (Limits, "Daily
 * token by tier": free 10K), which only the AI gateway spends (docs/decisions.md). Starter and
 * above have all four; SIEM export from Pro; SSO/SAML on Enterprise only.
 */
const PLAN_GATES: Record<Plan, readonly Gate[]> = {
  community: ['ai_gateway'],
  starter: [...PILLARS],
  pro: [...PILLARS, 'siem_export'],
  enterprise: [...PILLARS, 'siem_export', 'sso_saml'],
};

/** Whether a plan includes a pillar or feature. */
export function planAllows(plan: Plan, gate: Gate): boolean {
  return PLAN_GATES[plan].includes(gate);
}

/** The cheapest plan that includes a pillar or feature. */
export function lowestPlanWith(gate: Gate): Plan {
  return PLANS.find((plan) => planAllows(plan, gate)) ?? 'enterprise';
}

/**
 * Throws 403 PLAN_UPGRADE_REQUIRED (details: feature, plan, required_plan) when the plan in force
 * lacks the pillar or feature. The one gate for every plan check (pillars, SIEM export, SAML).
 */
export function assertPlanAllows(plan: Plan, gate: Gate): void {
  if (planAllows(plan, gate)) return;
  throw new SvcError('PLAN_UPGRADE_REQUIRED', { details: { feature: gate, plan, required_plan: lowestPlanWith(gate) } });
}

/** Sensors an org on this plan may register (null: unlimited). For the collector's registration check. */
export function sensorQuota(plan: Plan): number | null {
  const limit = PLAN_LIMITS[plan].sensors;
  return limit === 0 ? null : limit;
}

/**
 * The collector's check at sensor registration: throws 403 PLAN_UPGRADE_REQUIRED (feature
 * `sensors`, with the limit and the count) when registering one more sensor would exceed the
 * plan's sensors. `registered` is how many sensors the org has now, the new one not included.
 */
export function assertSensorQuota(plan: Plan, registered: number): void {
  const limit = sensorQuota(plan);
  if (limit === null || registered < limit) return;
  throw new SvcError('PLAN_UPGRADE_REQUIRED', {
    message: `The ${plan} plan includes ${limit} sensor${limit === 1 ? '' : 's'}; remove one or upgrade.`,
    details: { feature: 'sensors', plan, limit, registered, required_plan: PLANS.find((candidate) => (sensorQuota(candidate) ?? Infinity) > registered) ?? 'enterprise' },
  });
}

/** Findings an org on this plan may store a month (null: unlimited). */
export function findingsQuota(plan: Plan): number | null {
  const limit = PLAN_LIMITS[plan].findingsPerMonth;
  return limit === 0 ? null : limit;
}

/** The burst window: at most `burst` requests in any one second. */
const BURST_WINDOW_MS = 1_000;

export function ratePolicy(row: RateRow): RateLimitPolicy {
  const windows: WindowRule[] = [];
  if (row.perMinute > 0) windows.push({ name: 'minute', windowMs: 60_000, limit: row.perMinute });
  if (row.perDay > 0) windows.push({ name: 'day', windowMs: DAY_MS, limit: row.perDay });
  if (row.burst > 0) windows.push({ name: 'burst', windowMs: BURST_WINDOW_MS, limit: row.burst });
  return { windows, concurrency: row.concurrent, headerWindow: row.perMinute > 0 ? 'minute' : 'burst' };
}

export const PLAN_POLICIES: Record<Plan, RateLimitPolicy> = {
  community: ratePolicy(PLAN_LIMITS.community.rate),
  starter: ratePolicy(PLAN_LIMITS.starter.rate),
  pro: ratePolicy(PLAN_LIMITS.pro.rate),
  enterprise: ratePolicy(PLAN_LIMITS.enterprise.rate),
};

/** Unauthenticated traffic, limited per IP with the Free row. */
export const ANONYMOUS_POLICY: RateLimitPolicy = ratePolicy(RATE_ROWS.free);

/**
 * Lookups of API keys svc has not cached, per IP: a key's first request in 30 s costs a
 * database round trip, so a flood of made-up keys is cut off here before it reaches the
 * database, while a busy NAT with many real keys still fits.
 */
export const KEY_LOOKUP_POLICY: RateLimitPolicy = {
  windows: [
    { name: 'minute', windowMs: 60_000, limit: 300 },
    { name: 'burst', windowMs: 1_000, limit: 50 },
  ],
  concurrency: 0,
  headerWindow: 'minute',
};

/** Probes and scrapers (/health*, /metrics), per IP: generous, so load balancers never trip it. */
export const OPERATIONS_POLICY: RateLimitPolicy = {
  windows: [{ name: 'minute', windowMs: 60_000, limit: 1_200 }],
  concurrency: 0,
  headerWindow: 'minute',
};

/** Strict tiers of the spec: login 5 per 60 s then blocked 300 s; register 3 per 300 s then 600 s. */
export const LOGIN_POLICY: RateLimitPolicy = {
  windows: [{ name: 'login', windowMs: 60_000, limit: 5, blockMs: 300_000 }],
  concurrency: 0,
  headerWindow: 'login',
};
export const REGISTER_POLICY: RateLimitPolicy = {
  windows: [{ name: 'register', windowMs: 300_000, limit: 3, blockMs: 600_000 }],
  concurrency: 0,
  headerWindow: 'register',
};

export interface TrialState {
  plan: Plan;
  trialStartedAt: Date | null;
  trialEndsAt: Date | null;
}

/** The plan in force now: a Starter trial that has run out falls back to Community. */
export function effectivePlan(org: TrialState, now = new Date()): Plan {
  if (org.trialEndsAt !== null && org.trialEndsAt.getTime() <= now.getTime()) return 'community';
  return org.plan;
}

/** New trial end after extending by `days`; throws RangeError beyond 90 days from the start. */
export function extendedTrialEnd(org: TrialState, days: number): Date {
  if (org.trialStartedAt === null || org.trialEndsAt === null) throw new RangeError('no trial');
  const next = new Date(org.trialEndsAt.getTime() + days * DAY_MS);
  const max = new Date(org.trialStartedAt.getTime() + TRIAL_MAX_DAYS * DAY_MS);
  if (next.getTime() > max.getTime()) throw new RangeError('trial would exceed 90 days');
  return next;
}

export function trialEnd(start: Date): Date {
  return new Date(start.getTime() + TRIAL_DAYS * DAY_MS);
}
