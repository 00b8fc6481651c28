/**
 * Operational endpoints: liveness, dependency health and Prometheus metrics. They need no API
 * key; /metrics needs the metrics bearer token (METRICS_TOKEN, or the value `svc metrics-token`
 * prints), compared in constant time.
 */
import { Type } from '@sinclair/typebox';
import { safeEqual } from '../../platform/crypto.ts';
import { withDeadline } from '../../platform/deadline.ts';
import { SvcError } from '../../platform/errors.ts';
import type { Services } from '../../services.ts';
import type { AppInstance } from '../../platform/http-plugin.ts';

const started = Date.now();

const Check = Type.Object({ status: Type.String() }, { additionalProperties: true });

export async function registerOperationalRoutes(app: AppInstance, services: Services): Promise<void> {
  const operations = { operations: true } as const;

  app.get('/health', { config: operations, schema: { tags: ['operations'], response: { 200: Check } } }, async () => ({
    status: 'ok',
    uptime_s: Math.round((Date.now() - started) / 1000),
  }));

  app.get('/health/db', { config: operations, schema: { tags: ['operations'], response: { 200: Check, 503: Check } } }, async (_request, reply) => {
    const result = await bounded(checkDatabase(services), { status: 'error', engine: services.db.kind, latency_ms: null, pool_size: services.db.poolSize(), timed_out: true });
    if (result.status !== 'ok') reply.status(503);
    return result;
  });

  app.get('/health/redis', { config: operations, schema: { tags: ['operations'], response: { 200: Check } } }, async () =>
    bounded(checkCache(services), { status: 'degraded', configured: services.cache.configured, mode: services.cache.mode(), fallback: true, latency_ms: null, timed_out: true }),
  );

  app.get('/health/full', { config: operations, schema: { tags: ['operations'], response: { 200: Check, 503: Check } } }, async (_request, reply) => {
    // Each check is bounded, so the answer comes within HEALTH_CHECK_MS even while Redis or the
    // database hangs. Without the database svc cannot serve (503); a cache in fallback or a queue
    // that does not answer (Redis down) is degraded (200): pending deliveries wait in the database.
    const [database, cache, queue] = await Promise.all([
      bounded(checkDatabase(services), { status: 'error', engine: services.db.kind, latency_ms: null, pool_size: services.db.poolSize(), timed_out: true }),
      bounded(checkCache(services), { status: 'degraded', configured: services.cache.configured, mode: services.cache.mode(), fallback: true, latency_ms: null, timed_out: true }),
      bounded(checkQueue(services), { status: 'degraded', kind: services.queue.kind, timed_out: true }),
    ]);
    const ok = database.status === 'ok';
    if (!ok) reply.status(503);
    const degraded = cache.status !== 'ok' || queue.status !== 'ok';
    return { status: ok ? (degraded ? 'degraded' : 'ok') : 'error', checks: { db: database, redis: cache, queue } };
  });

  app.get('/metrics', { config: operations, schema: { tags: ['operations'], hide: true } }, async (request, reply) => {
    const header = request.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
    if (!safeEqual(token, services.config.metricsToken)) throw new SvcError('METRICS_TOKEN_INVALID');
    let text: string;
    try {
      text = await services.metrics.text();
    } catch (error) {
      // A replica that did not send its counts: no partial sum (counters would seem to go back).
      request.log.warn({ err: error }, 'metrics of every worker could not be merged');
      throw new SvcError('SERVICE_UNAVAILABLE');
    }
    reply.header('Content-Type', services.metrics.registry.contentType);
    return text;
  });
}

async function checkDatabase(services: Services) {
  const started = performance.now();
  try {
    await services.db.query('SELECT 1 AS ok');
    return {
      status: 'ok',
      engine: services.db.kind,
      latency_ms: round(performance.now() - started),
      pool_size: services.db.poolSize(),
    };
  } catch {
    return { status: 'error', engine: services.db.kind, latency_ms: null, pool_size: services.db.poolSize() };
  }
}

async function checkCache(services: Services) {
  const seconds = await services.cache.ping();
  if (seconds !== null) services.metrics.redisLatency.observe(seconds);
  const mode = services.cache.mode();
  return {
    status: mode === 'fallback' ? 'degraded' : 'ok',
    configured: services.cache.configured,
    mode,
    fallback: mode === 'fallback',
    latency_ms: seconds === null ? null : round(seconds * 1000),
  };
}

async function checkQueue(services: Services): Promise<Record<string, unknown> & { status: string }> {
  const health = await services.queue.health();
  return { status: health.ok ? 'ok' : 'degraded', ...health };
}

/** Longest any one check may take; /health/* answer within this plus a little. */
export const HEALTH_CHECK_MS = 1_000;

async function bounded<T extends { status: string }, F extends { status: string }>(check: Promise<T>, onTimeout: F): Promise<T | F> {
  try {
    return await withDeadline(check, HEALTH_CHECK_MS, 'health check');
  } catch {
    return onTimeout;
  }
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
