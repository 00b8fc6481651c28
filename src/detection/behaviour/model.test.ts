import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BEHAVIOUR_OPTIONS, advanceRate, anomalyScore, combineAnomalies, emptyEndpoint, emptyRate, poissonTailZ, pruneRecent, stepEndpoint, zFromLogTail } from './model.ts';

describe('T5 model (pure)', () => {
  it('converts tail probabilities to the usual normal quantiles', () => {
    expect(zFromLogTail(Math.log(0.5), 10)).toBe(0);
    expect(zFromLogTail(Math.log(0.001), 10)).toBeCloseTo(3.09, 1);
    expect(zFromLogTail(Math.log(1e-5), 10)).toBeCloseTo(4.26, 1);
    expect(zFromLogTail(-1e6, 10)).toBe(10);
  });

  it('finds nothing surprising in an expected count and a lot in a flood from a rare source', () => {
    expect(poissonTailZ(5, 5, 10)).toBe(0);
    expect(poissonTailZ(1, 0.2, 10)).toBeLessThan(1.5);
    expect(poissonTailZ(20, 0.01, 10)).toBe(10);
  });

  it('zero-fills at most one day of idle minutes, however long the gap', () => {
    const state = emptyRate(0);
    state.count = 50;
    let closed = 0;
    advanceRate(state, 10_000_000, 1 / 30, () => (closed += 1));
    expect(closed).toBe(1 + 1_440);
    expect(state.rate.mean).toBeLessThan(1e-6);
  });

  it('keeps an endpoint state bounded in the number of countries', () => {
    const state = emptyEndpoint(0);
    for (let index = 0; index < 500; index += 1) stepEndpoint(state, index * 1_000, `C${index}`, DEFAULT_BEHAVIOUR_OPTIONS);
    expect(Object.keys(state.countries).length).toBeLessThanOrEqual(64);
  });

  it('forgets recent items outside the window and caps how many it keeps', () => {
    const recent: Record<string, number> = {};
    for (let index = 0; index < 300; index += 1) recent[`k${index}`] = index;
    const kept = pruneRecent(recent, 300, 250);
    expect(Object.keys(kept).length).toBe(100);
    expect(kept.k0).toBeUndefined();
  });

  it('combines anomalies into a score between 0 and 1 that never falls when evidence is added', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { maxLength: 6 }), fc.double({ min: -10, max: 10, noNaN: true }), (zs, extra) => {
        const anomalies = zs.map((zScore) => ({ kind: 'rate' as const, zScore, detail: '' }));
        const score = combineAnomalies(anomalies);
        const more = combineAnomalies([...anomalies, { kind: 'geo', zScore: extra, detail: '' }]);
        return score >= 0 && score <= 1 && more >= score;
      }),
    );
    expect(anomalyScore(2)).toBe(0);
    expect(anomalyScore(3)).toBeCloseTo(0.39, 2);
  });
});
