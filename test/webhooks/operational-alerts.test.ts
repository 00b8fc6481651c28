import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/platform/metrics.ts';
import { createEventBus } from '../../src/platform/events.ts';
import {
  evaluateAlerts,
  histogramQuantile,
  setTokenBudgetUsedRatio,
  startOperationalAlerts,
  type AlertSample,
} from '../../src/webhooks/index.ts';
import { memoryLogger } from '../audit/database.ts';

const empty: AlertSample = { at: 0, gatewayHealth: [], threatsTotal: 0, requestDuration: [], redisLatency: [], budgetRatios: [] };

describe('in-process operational alerts', () => {
  it('computes quantiles the way Prometheus histogram_quantile does', () => {
    const buckets = [
      { le: 2, count: 0 },
      { le: 5, count: 100 },
      { le: Number.POSITIVE_INFINITY, count: 100 },
    ];
    expect(histogramQuantile(0.95, buckets)).toBeCloseTo(4.85, 10);
    expect(histogramQuantile(0.5, [{ le: 0.1, count: 10 }, { le: Number.POSITIVE_INFINITY, count: 10 }])).toBeCloseTo(0.05, 10);
    expect(histogramQuantile(0.99, [{ le: 1, count: 0 }, { le: Number.POSITIVE_INFINITY, count: 0 }])).toBeNaN();
  });

  it('fires at the spec thresholds and not below them', () => {
    const state = { latencySince: null };
    const quiet = evaluateAlerts({ ...empty, at: 60, threatsTotal: 50, gatewayHealth: [{ gatewayId: 'a', value: 1 }], budgetRatios: [{ orgId: 'o', ratio: 0.8 }] }, empty, empty, state);
    expect(quiet.firing).toEqual([]);
    const loud = evaluateAlerts({ ...empty, at: 60, threatsTotal: 51, gatewayHealth: [{ gatewayId: 'a', value: 0 }], budgetRatios: [{ orgId: 'o', ratio: 0.81 }] }, empty, empty, state);
    expect(loud.firing.map((alert) => [alert.alert, alert.severity, alert.subject])).toEqual([
      ['GatewayDown', 'critical', 'a'],
      ['HighThreatRate', 'warning', null],
      ['TokenBudgetNearing', 'warning', 'o'],
    ]);
  });

  it('raises HighLatency only after p95 stayed above 2 s for 5 minutes', () => {
    const slow = (at: number, count: number): AlertSample => ({
      ...empty,
      at,
      requestDuration: [
        { le: 2, count: 0 },
        { le: 5, count },
        { le: Number.POSITIVE_INFINITY, count },
      ],
    });
    let state = { latencySince: null as number | null };
    const names: string[][] = [];
    for (let minute = 5; minute <= 11; minute++) {
      const result = evaluateAlerts(slow(minute * 60, minute * 100), null, slow((minute - 5) * 60, (minute - 5) * 100), state);
      state = result.state;
      names.push(result.firing.map((alert) => alert.alert));
    }
    expect(names).toEqual([[], [], [], [], [], ['HighLatency'], ['HighLatency']]);
  });

  it('samples the live metrics, sets the token budget gauge from budget events, and logs transitions', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const { logger, lines } = memoryLogger('info');
    const events = createEventBus(logger);
    const evaluator = startOperationalAlerts({ metrics, logger, events }, { intervalMs: 3_600_000 });
    try {
      const start = Date.parse('2030-01-01T10:00:00Z');
      await evaluator.tick(start);
      metrics.gatewayHealth.set({ gateway_id: 'gw-7' }, 0);
      metrics.threats.inc({ decision: 'block' }, 80);
      events.emit('org-1', 'budget.warning', { budget: 'daily_tokens', limit: 1_000, used: 900, ratio: 0.9 });
      const firing = await evaluator.tick(start + 60_000);
      expect(firing.map((alert) => alert.alert).sort()).toEqual(['GatewayDown', 'HighThreatRate', 'TokenBudgetNearing']);
      expect(lines.some((line) => line.includes('"alert":"GatewayDown"') && line.includes('operational alert firing'))).toBe(true);
      metrics.gatewayHealth.set({ gateway_id: 'gw-7' }, 1);
      const later = await evaluator.tick(start + 180_000);
      expect(later.map((alert) => alert.alert)).toEqual(['TokenBudgetNearing']);
      expect(lines.some((line) => line.includes('operational alert resolved'))).toBe(true);
      expect(await metrics.registry.metrics()).toContain('svc_token_budget_used_ratio{org_id="org-1"} 0.9');
    } finally {
      evaluator.stop();
    }
  });

  it('in a cluster worker keeps the token budget gauge and leaves the evaluation to the primary', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const { logger, lines } = memoryLogger('info');
    const events = createEventBus(logger);
    const evaluator = startOperationalAlerts({ metrics, logger, events }, { intervalMs: 3_600_000, evaluate: false });
    try {
      metrics.gatewayHealth.set({ gateway_id: 'gw-7' }, 0);
      events.emit('org-1', 'budget.warning', { budget: 'daily_tokens', limit: 1_000, used: 900, ratio: 0.9 });
      expect(await evaluator.tick()).toEqual([]);
      expect(lines.some((line) => line.includes('operational alert firing'))).toBe(false);
      expect(await metrics.registry.metrics()).toContain('svc_token_budget_used_ratio{org_id="org-1"} 0.9');
    } finally {
      evaluator.stop();
    }
  });

  it('drops token budget ratios of a previous UTC day at scrape time', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    setTokenBudgetUsedRatio(metrics.registry, 'org-old', 0.95, Date.now() - 2 * 86_400_000);
    setTokenBudgetUsedRatio(metrics.registry, 'org-new', 0.5);
    const text = await metrics.registry.metrics();
    expect(text).not.toContain('org-old');
    expect(text).toContain('svc_token_budget_used_ratio{org_id="org-new"} 0.5');
  });
});
