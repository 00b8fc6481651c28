/**
 * Operational endpoints: liveness, dependency health and Prometheus metrics. They need no API
 * key; /metrics needs the metrics bearer token (METRICS_TOKEN, or the value `svc metrics-token`
 * prints), compared in constant time.
 */
import { Type } from '@sinclair/typebox';
import { safeEqual } from '../../platform/crypto.ts';
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
    const result = await checkDatabase(services);
    if (result.status !== 'ok') reply.status(503);
    return result;
  });

  app.get('/health/redis', { config: operations, schema: { tags: ['operations'], response: { 200: Check } } }, async () => checkCache(services));

  app.get('/health/full', { config: operations, schema: { tags: ['operations'], response: { 200: Check, 503: Check } } }, async (_request, reply) => {
    const [database, cache, queue] = await Promise.all([checkDatabase(services), checkCache(services), checkQueue(services)]);
    const ok = database.status === 'ok' && queue.status === 'ok';
    if (!ok) reply.status(503);
    return { status: ok ? (cache.status === 'ok' ? 'ok' : 'degraded') : 'error', checks: { db: database, redis: cache, queue } };
  });

  app.get('/metrics', { config: operations, schema: { tags: ['operations'], hide: true } }, async (request, reply) => {
    const header = request.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
    if (!safeEqual(token, services.config.metricsToken)) throw new SvcError('METRICS_TOKEN_INVALID');
    reply.header('Content-Type', services.metrics.registry.contentType);
    return services.metrics.registry.metrics();
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

async function checkQueue(services: Services) {
  const health = await services.queue.health();
  return { status: health.ok ? 'ok' : 'error', ...health };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
