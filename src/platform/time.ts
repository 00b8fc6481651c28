/** Calendar helpers shared by budgets, spend counters and the budget gauge. */

const DAY_MS = 86_400_000;
let dayStart = 0;
let dayLabel = '1970-01-01';

/** The UTC date of `now` as YYYY-MM-DD (the label is reused while `now` stays in the same day: hot path). */
export function utcDay(now: number): string {
  if (now >= dayStart && now < dayStart + DAY_MS) return dayLabel;
  dayStart = Math.floor(now / DAY_MS) * DAY_MS;
  dayLabel = new Date(dayStart).toISOString().slice(0, 10);
  return dayLabel;
}
