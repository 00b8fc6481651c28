/**
 * Plans, trials and the limits each plan implies.
 *
 * The spec prices four plans (Community, Starter, Pro, Enterprise) but states request limits for
 * three rows (Free, Pro, Enterprise). svc maps Community → Free, Starter → Pro (a paying plan
 * gets the paid row), Pro → Pro, Enterprise → Enterprise (docs/decisions.md). "unlimited" is
 * represented by a limit of 0, which the rate limiter skips.
 */
import type { RateLimitPolicy, WindowRule } from '../platform/rate-limit.ts';

export const PLANS = ['community', 'starter', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

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
