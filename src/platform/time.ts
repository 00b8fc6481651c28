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

let lastMicros = 0;
let lastSecond = Number.NaN;
let secondPrefix = '';

/**
 * Now as an ISO 8601 UTC time with microseconds (PostgreSQL's timestamptz resolution), strictly
 * increasing within this process: evidence stamped when it is recorded (and written later, from a
 * spool) keeps the order it was recorded in, as clock_timestamp() kept it for rows of one insert.
 * A wall clock set back by more than a millisecond is followed, not papered over.
 * Hot path (every completion's record): the text up to the second's '.' is formatted once per
 * second and the six fraction digits are appended to it.
 */
export function recordedAt(): string {
  let micros = Date.now() * 1000 + Math.floor((performance.now() % 1) * 1000);
  if (micros <= lastMicros && lastMicros - micros < 1000) micros = lastMicros + 1;
  lastMicros = micros;
  const second = Math.floor(micros / 1_000_000);
  if (second !== lastSecond) {
    lastSecond = second;
    // toISOString ends in '.mmmZ'; what precedes the milliseconds is the same for the whole second.
    secondPrefix = new Date(second * 1000).toISOString().slice(0, -4);
  }
  return `${secondPrefix}${String(micros - second * 1_000_000).padStart(6, '0')}Z`;
}

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z$/;

/** `value` when it is an ISO 8601 UTC time that names a real instant (as recordedAt writes them), else null. */
export function isoTimeOrNull(value: unknown): string | null {
  if (typeof value !== 'string' || !ISO_UTC.test(value) || Number.isNaN(Date.parse(value))) return null;
  return value;
}
