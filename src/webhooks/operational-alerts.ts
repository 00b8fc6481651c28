/**
 * Operational alerts in-process: the spec's thresholds (GatewayDown, HighThreatRate,
 * HighLatency, RedisLatencyHigh, TokenBudgetNearing) evaluated every 15 s on the service's
 * metrics, logged when an alert starts and stops firing. One process evaluates: the only one, or
 * with WORKERS > 1 the cluster primary over the merged metrics of all its workers (a worker's own
 * registry holds only its share, so per-worker thresholds would fire at N times the rate).
 * Prometheus (ops/prometheus/alerts.yml) evaluates the same thresholds across all replicas and
 * adds ContainerRestarting, which a process cannot observe about itself. The evaluation is a
 * pure function over metric samples.
 *
 * Also owns the gauge `svc_token_budget_used_ratio{org_id}` (share of the org's daily token
 * budget used today, 0 to 1+; values from a previous UTC day are dropped at scrape time). The
 * AI gateway sets it through `setTokenBudgetUsedRatio`, and the budget.warning and
 * budget.exhausted events set it too.
 */
import { Gauge, type Registry } from 'prom-client';
import type { EventBus } from '../platform/events.ts';
import type { Logger } from '../platform/logger.ts';
import type { Metrics } from '../platform/metrics.ts';
import { utcDay } from '../platform/time.ts';

export const ALERT_THRESHOLDS = {
  threatsPerMinute: 50,
  latencyP95Seconds: 2,
  latencySustainSeconds: 300,
  redisP99Seconds: 0.1,
  tokenBudgetRatio: 0.8,
} as const;

export type AlertName = 'GatewayDown' | 'HighThreatRate' | 'HighLatency' | 'RedisLatencyHigh' | 'TokenBudgetNearing';

export interface FiringAlert {
  alert: AlertName;
  severity: 'critical' | 'warning';
  /** Label that distinguishes instances of the alert (gateway id, org id), when any. */
  subject: string | null;
  value: number;
}

/** Cumulative histogram buckets (`le` ascending, the last is +Inf). */
export type Buckets = ReadonlyArray<{ le: number; count: number }>;

export interface AlertSample {
  /** Seconds since an arbitrary origin. */
  at: number;
  gatewayHealth: ReadonlyArray<{ gatewayId: string; value: number }>;
  /** Cumulative count of svc_threats_total (all decisions). */
  threatsTotal: number;
  requestDuration: Buckets;
  redisLatency: Buckets;
  budgetRatios: ReadonlyArray<{ orgId: string; ratio: number }>;
}

export interface AlertState {
  /** When the p95 latency condition started holding (seconds), or null. */
  latencySince: number | null;
}

/** Prometheus's histogram_quantile: linear interpolation inside the bucket; NaN without data. */
export function histogramQuantile(quantile: number, buckets: Buckets): number {
  const total = buckets[buckets.length - 1]?.count ?? 0;
  if (total <= 0) return Number.NaN;
  const rank = quantile * total;
  let previousLe = 0;
  let previousCount = 0;
  for (const bucket of buckets) {
    if (bucket.count >= rank) {
      if (bucket.le === Number.POSITIVE_INFINITY) return previousLe;
      if (bucket.count === previousCount) return bucket.le;
      return previousLe + ((bucket.le - previousLe) * (rank - previousCount)) / (bucket.count - previousCount);
    }
    previousLe = bucket.le;
    previousCount = bucket.count;
  }
  return previousLe;
}

function bucketDelta(now: Buckets, then: Buckets): Buckets {
  return now.map((bucket, index) => ({ le: bucket.le, count: Math.max(0, bucket.count - (then[index]?.count ?? 0)) }));
}

/**
 * Evaluates the thresholds. `window1m` and `window5m` are the samples about one and five minutes
 * before `current` (rates and quantiles are over those windows, as in the Prometheus rules).
 */
export function evaluateAlerts(
  current: AlertSample,
  window1m: AlertSample | null,
  window5m: AlertSample | null,
  state: AlertState,
): { firing: FiringAlert[]; state: AlertState } {
  const firing: FiringAlert[] = [];
  for (const { gatewayId, value } of current.gatewayHealth) {
    if (value === 0) firing.push({ alert: 'GatewayDown', severity: 'critical', subject: gatewayId, value });
  }
  if (window1m !== null && current.at > window1m.at) {
    const perMinute = ((current.threatsTotal - window1m.threatsTotal) * 60) / (current.at - window1m.at);
    if (perMinute > ALERT_THRESHOLDS.threatsPerMinute) firing.push({ alert: 'HighThreatRate', severity: 'warning', subject: null, value: perMinute });
  }
  let latencySince: number | null = null;
  if (window5m !== null) {
    const p95 = histogramQuantile(0.95, bucketDelta(current.requestDuration, window5m.requestDuration));
    if (p95 > ALERT_THRESHOLDS.latencyP95Seconds) {
      latencySince = state.latencySince ?? current.at;
      if (current.at - latencySince >= ALERT_THRESHOLDS.latencySustainSeconds) {
        firing.push({ alert: 'HighLatency', severity: 'warning', subject: null, value: p95 });
      }
    }
    const p99 = histogramQuantile(0.99, bucketDelta(current.redisLatency, window5m.redisLatency));
    if (p99 > ALERT_THRESHOLDS.redisP99Seconds) firing.push({ alert: 'RedisLatencyHigh', severity: 'warning', subject: null, value: p99 });
  }
  for (const { orgId, ratio } of current.budgetRatios) {
    if (ratio > ALERT_THRESHOLDS.tokenBudgetRatio) firing.push({ alert: 'TokenBudgetNearing', severity: 'warning', subject: orgId, value: ratio });
  }
  return { firing, state: { latencySince } };
}

// ------------------------------------------------------------------------- token budget gauge

const BUDGET_GAUGE = 'svc_token_budget_used_ratio';
const budgetDays = new WeakMap<Registry, Map<string, string>>();


/** The gauge on this registry (created once). */
export function tokenBudgetGauge(registry: Registry): Gauge<'org_id'> {
  const existing = registry.getSingleMetric(BUDGET_GAUGE);
  if (existing !== undefined) return existing as Gauge<'org_id'>;
  const days = new Map<string, string>();
  budgetDays.set(registry, days);
  return new Gauge({
    name: BUDGET_GAUGE,
    help: 'Share of the org daily token budget used today (0 to 1; resets at 00:00 UTC).',
    labelNames: ['org_id'],
    // Replicas read the same shared budget: the merged scrape shows the highest, not the sum.
    aggregator: 'max',
    registers: [registry],
    collect() {
      const today = utcDay(Date.now());
      for (const [orgId, day] of days) {
        if (day !== today) {
          this.remove({ org_id: orgId });
          days.delete(orgId);
        }
      }
    },
  });
}

export function setTokenBudgetUsedRatio(registry: Registry, orgId: string, ratio: number, now: number = Date.now()): void {
  if (!Number.isFinite(ratio) || ratio < 0) return;
  tokenBudgetGauge(registry).set({ org_id: orgId }, Math.round(ratio * 10_000) / 10_000);
  budgetDays.get(registry)?.set(orgId, utcDay(now));
}

// ---------------------------------------------------------------------------------- evaluator

export interface AlertServices {
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly events?: EventBus;
}

export interface AlertEvaluator {
  /** Takes a sample and evaluates now (the timer calls it every 15 s). */
  tick(now?: number): Promise<FiringAlert[]>;
  firing(): FiringAlert[];
  stop(): void;
}

interface MetricRead {
  values: Array<{ value: number; labels: Record<string, string | number | undefined>; metricName?: string }>;
}

/** A metric's values by name; none when the registry does not hold it. */
async function valuesOf(registry: Registry, name: string): Promise<MetricRead['values']> {
  const metric = registry.getSingleMetric(name) as { get(): Promise<MetricRead> | MetricRead } | undefined;
  return metric === undefined ? [] : (await metric.get()).values;
}

async function bucketsOf(registry: Registry, name: string): Promise<Buckets> {
  const byLe = new Map<number, number>();
  for (const entry of await valuesOf(registry, name)) {
    if (!entry.metricName?.endsWith('_bucket')) continue;
    const le = entry.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(entry.labels.le);
    byLe.set(le, (byLe.get(le) ?? 0) + entry.value);
  }
  return [...byLe].sort(([a], [b]) => a - b).map(([le, count]) => ({ le, count }));
}

/**
 * One sample of the metrics the thresholds read, from a registry: this process's own, or the
 * primary's merge of every worker's (prom-client's aggregated registry has the same names).
 */
export async function sampleRegistry(registry: Registry, now: number): Promise<AlertSample> {
  const [health, threats, budget] = await Promise.all([
    valuesOf(registry, 'svc_gateway_health'),
    valuesOf(registry, 'svc_threats_total'),
    valuesOf(registry, BUDGET_GAUGE),
  ]);
  return {
    at: now / 1000,
    gatewayHealth: health.map((entry) => ({ gatewayId: String(entry.labels.gateway_id ?? ''), value: entry.value })),
    threatsTotal: threats.reduce((sum, entry) => sum + entry.value, 0),
    requestDuration: await bucketsOf(registry, 'svc_request_duration_seconds'),
    redisLatency: await bucketsOf(registry, 'svc_redis_latency_seconds'),
    budgetRatios: budget.map((entry) => ({ orgId: String(entry.labels.org_id ?? ''), ratio: entry.value })),
  };
}

/** Keeps the token budget gauge of `registry` from the budget.warning and budget.exhausted events. */
export function trackTokenBudget(registry: Registry, events: EventBus): () => void {
  tokenBudgetGauge(registry);
  return events.subscribe((event) => {
    const data = event.data as { used?: unknown; limit?: unknown; budget?: unknown };
    if ((event.event === 'budget.warning' || event.event === 'budget.exhausted') && typeof data.used === 'number' && typeof data.limit === 'number' && data.limit > 0) {
      if (event.event === 'budget.exhausted' && data.budget !== 'tokens' && data.budget !== 'daily_tokens') return;
      setTokenBudgetUsedRatio(registry, event.orgId, data.used / data.limit, event.at.getTime());
    }
  });
}

/**
 * Evaluates the thresholds every `intervalMs` over the samples `read` returns, and logs each
 * alert when it starts and stops firing. A read that fails skips that tick (logged).
 */
export function startAlertEvaluator(options: { logger: Logger; read: (now: number) => Promise<AlertSample>; intervalMs?: number; onStop?: () => void }): AlertEvaluator {
  const { logger, read } = options;
  const samples: AlertSample[] = [];
  let state: AlertState = { latencySince: null };
  let current: FiringAlert[] = [];

  const closest = (target: number): AlertSample | null => {
    let best: AlertSample | null = null;
    for (const candidate of samples) if (candidate.at <= target) best = candidate;
    return best ?? samples[0] ?? null;
  };

  const key = (alert: FiringAlert) => `${alert.alert}:${alert.subject ?? ''}`;

  const evaluator: AlertEvaluator = {
    async tick(now = Date.now()) {
      const latest = await read(now);
      const window1m = closest(latest.at - 60);
      const window5m = closest(latest.at - 300);
      samples.push(latest);
      while (samples.length > 0 && samples[0]!.at < latest.at - 330) samples.shift();
      const result = evaluateAlerts(latest, window1m, window5m, state);
      state = result.state;
      const before = new Set(current.map(key));
      const after = new Set(result.firing.map(key));
      for (const alert of result.firing) if (!before.has(key(alert))) logger.warn({ alert: alert.alert, severity: alert.severity, subject: alert.subject, value: alert.value }, 'operational alert firing');
      for (const alert of current) if (!after.has(key(alert))) logger.info({ alert: alert.alert, subject: alert.subject }, 'operational alert resolved');
      current = result.firing;
      return current;
    },
    firing: () => current,
    stop() {
      clearInterval(timer);
      options.onStop?.();
    },
  };
  const timer = setInterval(() => {
    evaluator.tick().catch((error: unknown) => logger.error({ err: error }, 'operational alert evaluation failed'));
  }, options.intervalMs ?? 15_000);
  timer.unref();
  return evaluator;
}

/**
 * This process's alerts: the token budget gauge kept from budget events and, unless `evaluate`
 * is false (a cluster worker: the primary evaluates the merged metrics of all workers), the
 * thresholds evaluated over this process's own registry.
 */
export function startOperationalAlerts(services: AlertServices, options: { intervalMs?: number; evaluate?: boolean } = {}): AlertEvaluator {
  const { metrics, logger } = services;
  const untrack = services.events === undefined ? undefined : trackTokenBudget(metrics.registry, services.events);
  if (options.evaluate === false) return { tick: () => Promise.resolve([]), firing: () => [], stop: () => untrack?.() };
  tokenBudgetGauge(metrics.registry);
  return startAlertEvaluator({
    logger,
    read: (now) => sampleRegistry(metrics.registry, now),
    ...(options.intervalMs === undefined ? {} : { intervalMs: options.intervalMs }),
    onStop: () => untrack?.(),
  });
}
