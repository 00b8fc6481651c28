/**
 * Due dates of the compliance workflows. Business days are Monday to Friday in UTC; public
 * holidays are not counted out (they differ by country and svc keeps no calendar — recorded in
 * docs/decisions.md). A deadline keeps the time of day of the event it counts from.
 */

const DAY_MS = 86_400_000;

function isWeekend(date: Date): boolean {
  const day = date.getUTCDay();
  return day === 0 || day === 6;
}

/** `from` plus `days` business days: each following Monday–Friday counts one, weekends none. */
export function addBusinessDays(from: Date, days: number): Date {
  let cursor = from.getTime();
  let left = days;
  while (left > 0) {
    cursor += DAY_MS;
    if (!isWeekend(new Date(cursor))) left -= 1;
  }
  return new Date(cursor);
}

/** `from` plus `days` calendar days. */
export function addCalendarDays(from: Date, days: number): Date {
  return new Date(from.getTime() + days * DAY_MS);
}

/** Grievance acknowledgment: within 5 business days of submission (spec, Limits). */
export const GRIEVANCE_ACKNOWLEDGE_BUSINESS_DAYS = 5;
/** Grievance substantive response: within 30 days of submission (spec, Limits). */
export const GRIEVANCE_RESPONSE_DAYS = 30;
/** Unlearning service level: 30 days (spec, Limits). */
export const UNLEARNING_SERVICE_LEVEL_DAYS = 30;
