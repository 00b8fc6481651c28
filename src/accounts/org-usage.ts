/**
 * The plan names and GET /api/v1/org/usage's answer (docs/accounts-plans.md). Their own file, with
 * no imports, so the dashboard can take the types (a type-only import, erased from its bundle)
 * instead of restating them.
 */

export const PLANS = ['community', 'starter', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

/** Usage against every quota of the plan in force (GET /api/v1/org/usage). null limits: unlimited. */
export interface OrgUsage {
  org_id: string;
  plan: Plan;
  effective_plan: Plan;
  trial: { active: boolean; started_at: string | null; ends_at: string | null; days_left: number | null; max_days: number };
  period: { start: string; end: string };
  findings: { used: number; limit: number | null; remaining: number | null; over_quota: boolean; dropped: number };
  sensors: { used: number | null; limit: number | null };
  pillars: Record<string, boolean>;
  features: Record<string, boolean>;
  rate: { requests_per_minute: number | null; requests_per_day: number | null; burst: number; concurrent: number | null };
  daily_tokens: { limit: number };
}
