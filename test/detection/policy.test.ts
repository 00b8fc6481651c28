import { describe, expect, it } from 'vitest';
import { DEFAULT_THRESHOLDS, decide, escalate, isAllowed, resolveThresholds, sessionFactor, ThresholdError } from '../../src/detection/policy.ts';
import { combineFindings, noisyOr } from '../../src/detection/score.ts';

describe('response policy', () => {
  it('maps scores to the spec bands, allow below 0.2', () => {
    expect(decide(0)).toBe('allow');
    expect(decide(0.19)).toBe('allow');
    expect(decide(0.2)).toBe('log');
    expect(decide(0.39)).toBe('log');
    expect(decide(0.4)).toBe('alert');
    expect(decide(0.6)).toBe('challenge');
    expect(decide(0.69)).toBe('challenge');
    expect(decide(0.7)).toBe('block');
    expect(decide(1)).toBe('block');
  });

  it('treats challenge and block as not allowed', () => {
    expect(['allow', 'log', 'alert', 'challenge', 'block'].map((decision) => isAllowed(decision as never))).toEqual([true, true, true, false, false]);
  });

  it('lowers the bands below a lowered block threshold, keeping their order', () => {
    const thresholds = resolveThresholds({ block: 0.5 });
    expect(thresholds).toEqual({ log: 0.2, alert: 0.4, challenge: 0.5, block: 0.5 });
    expect(decide(0.55, thresholds)).toBe('block');
    expect(resolveThresholds({ block: 0.1 })).toEqual({ log: 0.1, alert: 0.1, challenge: 0.1, block: 0.1 });
  });

  it('rejects thresholds out of order or out of range, naming the field', () => {
    expect(() => resolveThresholds({ alert: 0.8, block: 0.7 })).toThrow(ThresholdError);
    expect(() => resolveThresholds({ challenge: 0.9, block: 0.8 })).toThrow(expect.objectContaining({ field: 'challenge_threshold' }));
    expect(() => resolveThresholds({ block: 0 })).toThrow(ThresholdError);
    expect(() => resolveThresholds({ log: 1.5 })).toThrow(ThresholdError);
  });
});

describe('session escalation', () => {
  it('uses the spec anchors and interpolates linearly in between', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map(sessionFactor)).toEqual([1, 1.15, 1.3, 1.65, 2, 2.17, 2.33, 2.5, 2.5]);
  });

  it('multiplies a threatening score and caps it at 1', () => {
    expect(escalate(0.3, 5).score).toBe(0.6);
    expect(escalate(0.5, 8).score).toBe(1);
  });

  it('blocks automatically at 8+ requests only when the request carries a threat signal', () => {
    const threatening = escalate(0.16, 9, DEFAULT_THRESHOLDS);
    expect(decide(threatening.score)).toBe('block');
    expect(threatening.autoBlocked).toBe(true);
    const clean = escalate(0.05, 50, DEFAULT_THRESHOLDS);
    expect(decide(clean.score)).toBe('allow');
    expect(clean.autoBlocked).toBe(false);
  });
});

describe('scoring', () => {
  it('combines categories as a noisy-or and damps repeats within a category', () => {
    expect(noisyOr([0.5, 0.5])).toBe(0.75);
    const finding = (category: string, confidence: number) => ({ id: `${category}${confidence}`, name: 'x', category, confidence, tier: 't1' as const });
    expect(combineFindings([finding('a', 0.5), finding('a', 0.5)])).toBe(0.625);
    expect(combineFindings([finding('a', 0.5), finding('b', 0.5)])).toBe(0.75);
    expect(combineFindings([])).toBe(0);
  });
});
