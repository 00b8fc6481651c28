import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addBusinessDays, addCalendarDays } from './business-days.ts';

const DAY_MS = 86_400_000;
const weekday = (date: Date) => date.getUTCDay() !== 0 && date.getUTCDay() !== 6;

describe('business days', () => {
  it('counts Monday to Friday only, keeping the time of day', () => {
    expect(addBusinessDays(new Date('2026-11-27T10:00:00.000Z'), 5).toISOString()).toBe('2026-12-04T10:00:00.000Z'); // Friday → Friday
    expect(addBusinessDays(new Date('2026-11-28T23:30:00.000Z'), 5).toISOString()).toBe('2026-12-04T23:30:00.000Z'); // Saturday → Friday
    expect(addBusinessDays(new Date('2026-11-29T00:00:00.000Z'), 5).toISOString()).toBe('2026-12-04T00:00:00.000Z'); // Sunday → Friday
    expect(addBusinessDays(new Date('2026-11-30T08:00:00.000Z'), 5).toISOString()).toBe('2026-12-07T08:00:00.000Z'); // Monday → Monday
    expect(addBusinessDays(new Date('2026-12-03T08:00:00.000Z'), 1).toISOString()).toBe('2026-12-04T08:00:00.000Z'); // Thursday → Friday
    expect(addBusinessDays(new Date('2026-12-04T08:00:00.000Z'), 1).toISOString()).toBe('2026-12-07T08:00:00.000Z'); // Friday → Monday
  });

  it('always lands on a weekday with exactly n weekdays after the start (property)', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }), fc.integer({ min: 1, max: 40 }), (start, days) => {
        const due = addBusinessDays(start, days);
        expect(weekday(due)).toBe(true);
        let counted = 0;
        for (let cursor = start.getTime() + DAY_MS; cursor <= due.getTime(); cursor += DAY_MS) if (weekday(new Date(cursor))) counted += 1;
        expect(counted).toBe(days);
        expect((due.getTime() - start.getTime()) % DAY_MS).toBe(0);
        expect(due.getTime() - start.getTime()).toBeLessThanOrEqual((days + 2 * Math.ceil(days / 5) + 2) * DAY_MS);
      }),
    );
  });

  it('adds calendar days for the 30-day response', () => {
    expect(addCalendarDays(new Date('2026-11-27T10:00:00.000Z'), 30).toISOString()).toBe('2026-12-27T10:00:00.000Z');
  });
});
