/**
 * How many sensors an org may register under its plan (spec: Plans — Community 1, Starter 3;
 * 0 = unlimited). The collector asks only this function, so the plans capability's own check can
 * replace it in one place.
 */
import { PLAN_LIMITS, type Plan } from '../accounts/index.ts';

export function sensorsAllowedByPlan(plan: Plan): number {
  return PLAN_LIMITS[plan].sensors;
}
