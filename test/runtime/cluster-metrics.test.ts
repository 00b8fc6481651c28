/**
 * The primary's side of /metrics with WORKERS > 1 (src/platform/cluster-metrics.ts), with
 * in-process stand-ins for cluster workers: the scrape gets every listening worker's counts
 * merged, a worker that stays silent fails the scrape instead of giving a partial sum, and a
 * worker that exits is not waited for; the primary's operational alerts read the same merge. The
 * end-to-end scrape across real workers is in test/runtime/workers.test.ts (PostgreSQL + Redis).
 */
import type { Worker } from 'node:cluster';
import { Counter, Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetricsCollector, type MetricsMessage } from '../../src/platform/cluster-metrics.ts';
import { evaluateAlerts, sampleRegistry, startAlertEvaluator } from '../../src/webhooks/index.ts';
import { memoryLogger } from '../audit/database.ts';

/** A worker stand-in: records what the primary sends; `answer` replies from its own registry. */
function fakeWorker(requests: number, health: number) {
  const registry = new Registry();
  new Counter({ name: 'svc_requests_total', help: 'h', labelNames: ['method'], registers: [registry] }).inc({ method: 'GET' }, requests);
  new Gauge({ name: 'svc_gateway_health', help: 'h', labelNames: ['gateway_id'], aggregator: 'min', registers: [registry] }).set({ gateway_id: 'g1' }, health);
  const threats = new Counter({ name: 'svc_threats_total', help: 'h', labelNames: ['decision'], registers: [registry] });
  const sent: MetricsMessage[] = [];
  let connected = true;
  const worker = {
    send: (message: MetricsMessage) => {
      sent.push(message);
      return true;
    },
    isConnected: () => connected,
  } as unknown as Worker;
  return {
    worker,
    sent,
    registry,
    threats,
    disconnect: () => (connected = false),
    /** The worker's reply to the last collection it was asked for. */
    part: async (): Promise<MetricsMessage> => {
      const collect = sent.findLast((message) => message.svc === 'metrics-collect');
      if (collect === undefined) throw new Error('not asked');
      return { svc: 'metrics-part', id: collect.id, metrics: await registry.getMetricsAsJSON() };
    },
  };
}

async function answerTo(worker: ReturnType<typeof fakeWorker>): Promise<Extract<MetricsMessage, { svc: 'metrics-text' }>> {
  for (let wait = 0; wait < 100; wait++) {
    const answer = worker.sent.find((message) => message.svc === 'metrics-text');
    if (answer !== undefined) return answer as Extract<MetricsMessage, { svc: 'metrics-text' }>;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no answer');
}

describe('metrics merged across cluster workers', () => {
  it('sums counters and takes the lowest health over every listening worker', async () => {
    const a = fakeWorker(7, 1);
    const b = fakeWorker(5, 0);
    const collector = createMetricsCollector(() => [a.worker, b.worker]);
    expect(collector.handle(a.worker, { svc: 'metrics-request', id: 41 })).toBe(true);
    collector.handle(a.worker, await a.part());
    collector.handle(b.worker, await b.part());
    const answer = await answerTo(a);
    expect(answer.id).toBe(41);
    expect(answer.error).toBeUndefined();
    expect(answer.text).toContain('svc_requests_total{method="GET"} 12');
    expect(answer.text).toContain('svc_gateway_health{gateway_id="g1"} 0');
  });

  it('fails the scrape when a worker does not send its counts in time', async () => {
    const a = fakeWorker(7, 1);
    const silent = fakeWorker(5, 1);
    const collector = createMetricsCollector(() => [a.worker, silent.worker], 50);
    collector.handle(a.worker, { svc: 'metrics-request', id: 1 });
    collector.handle(a.worker, await a.part());
    const answer = await answerTo(a);
    expect(answer.text).toBeUndefined();
    expect(answer.error).toBeDefined();
    // A late part after the deadline is ignored: one answer only.
    collector.handle(silent.worker, await silent.part());
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(a.sent.filter((message) => message.svc === 'metrics-text')).toHaveLength(1);
  });

  it('does not wait for a worker that exits during the collection', async () => {
    const a = fakeWorker(7, 1);
    const leaving = fakeWorker(5, 1);
    const collector = createMetricsCollector(() => [a.worker, leaving.worker], 5_000);
    collector.handle(a.worker, { svc: 'metrics-request', id: 2 });
    collector.handle(a.worker, await a.part());
    leaving.disconnect();
    collector.forget(leaving.worker);
    const answer = await answerTo(a);
    expect(answer.text).toContain('svc_requests_total{method="GET"} 7');
  });

  it('leaves other messages to the supervisor', () => {
    const a = fakeWorker(1, 1);
    const collector = createMetricsCollector(() => [a.worker]);
    expect(collector.handle(a.worker, { svc: 'ready', port: 8080 })).toBe(false);
    expect(collector.handle(a.worker, 'hello')).toBe(false);
  });

  it('evaluates the operational alerts once, over the counts of every worker', async () => {
    const a = fakeWorker(1, 1);
    const b = fakeWorker(1, 1);
    const collector = createMetricsCollector(() => [a.worker, b.worker]);
    const merged = async () => {
      const registry = collector.gather();
      collector.handle(a.worker, await a.part());
      collector.handle(b.worker, await b.part());
      return registry;
    };
    const { logger, lines } = memoryLogger('info');
    const evaluator = startAlertEvaluator({ logger, read: async (now) => sampleRegistry(await merged(), now), intervalMs: 3_600_000 });
    try {
      const start = Date.parse('2030-01-01T10:00:00Z');
      expect(await evaluator.tick(start)).toEqual([]);
      // 30 blocked requests a minute on each worker: 60 for the service, over the threshold of 50.
      a.threats.inc({ decision: 'block' }, 30);
      b.threats.inc({ decision: 'block' }, 30);
      const firing = await evaluator.tick(start + 60_000);
      expect(firing.map((alert) => [alert.alert, alert.value])).toEqual([['HighThreatRate', 60]]);
      expect(lines.filter((line) => line.includes('operational alert firing'))).toHaveLength(1);
      // Either worker's own registry stays under the threshold.
      const alone = evaluateAlerts(await sampleRegistry(a.registry, start + 60_000), await sampleRegistry(new Registry(), start), null, { latencySince: null });
      expect(alone.firing).toEqual([]);
    } finally {
      evaluator.stop();
    }
  });

  it('rejects a gathering that a worker does not answer, so that tick is skipped', async () => {
    const silent = fakeWorker(1, 1);
    const collector = createMetricsCollector(() => [silent.worker], 30);
    await expect(collector.gather()).rejects.toThrow();
    await expect(createMetricsCollector(() => [], 30).gather()).rejects.toThrow();
  });
});
