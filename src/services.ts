/**
 * Composition root: opens storage, runs migrations and builds every capability's service from
 * a resolved config. `buildApp` (src/http/build-app.ts) turns the result into routes; the CLI
 * uses it directly. Nothing here listens on a port.
 */
import { join } from 'node:path';
import { createAccounts, type Accounts } from './accounts/index.ts';
import { createCache, type Cache } from './platform/cache.ts';
import type { ResolvedConfig } from './platform/config.ts';
import { migrate, openDatabase, type Database } from './platform/db/index.ts';
import { createEventBus, type EventBus } from './platform/events.ts';
import { createLogger, createRequestLog, stdoutDestination, type Logger, type RequestLog } from './platform/logger.ts';
import type { DestinationStream } from 'pino';
import { createMetrics, type Metrics } from './platform/metrics.ts';
import { createOutbox, type Outbox } from './platform/outbox.ts';
import { createQueue, type JobQueue } from './platform/queue.ts';
import { createRateLimiter, type RateLimiter } from './platform/rate-limit.ts';
import { deriveSecret } from './platform/secrets.ts';
import { assertPublicUrl } from './platform/ssrf.ts';

export interface Services {
  readonly config: ResolvedConfig;
  readonly logger: Logger;
  /** One line per request with exactly the spec's fields (see logger.ts). */
  readonly requestLog: RequestLog;
  readonly db: Database;
  readonly cache: Cache;
  readonly queue: JobQueue;
  readonly metrics: Metrics;
  readonly rateLimiter: RateLimiter;
  readonly events: EventBus;
  readonly accounts: Accounts;
  /** Durable local spool for evidence the database could not take (platform/outbox.ts). */
  readonly outbox: Outbox;
  /** Hooks run by close(), last registered first (capabilities add their own). */
  readonly onClose: Array<() => Promise<void> | void>;
  /** SSRF check of a user-supplied URL under this deployment's ALLOW_PRIVATE_TARGETS. */
  checkTarget(url: string, field?: string): Promise<URL>;
  close(): Promise<void>;
}

export interface ServiceOptions {
  /** Where log lines go (default: buffered standard output). */
  logDestination?: DestinationStream;
  /** Run migrations on open (default true). */
  migrate?: boolean;
  /** PGlite only: start from a migrated snapshot (tests). */
  pgliteSnapshot?: Blob;
  /** Collect prom-client's default process metrics (default true). */
  defaultMetrics?: boolean;
}

export async function createServices(config: ResolvedConfig, options: ServiceOptions = {}): Promise<Services> {
  const destination = options.logDestination ?? stdoutDestination();
  const logger = createLogger(config.logLevel, destination);
  const requestLog = createRequestLog(config.logLevel, destination);
  const db = await openDatabase(
    config.database.kind === 'pglite' && config.database.dir !== null
      ? { kind: 'pglite', dir: config.database.dir }
      : config.database,
    {
      appRolePassword: deriveSecret(config.secretKey, 'svc/db-app-role'),
      ...(options.pgliteSnapshot ? { pgliteSnapshot: options.pgliteSnapshot } : {}),
    },
  );
  try {
    if (options.migrate ?? true) await migrate(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  const cache = createCache(config.cache, config.cachePrefix);
  const queue = createQueue(config.cache.kind === 'redis' ? config.cache.url : null, config.cachePrefix);
  const metrics = createMetrics({ defaultMetrics: options.defaultMetrics ?? true, dbPoolSize: () => db.poolSize() });
  const events = createEventBus(logger);
  const accounts = createAccounts({ db, config, logger });
  const onClose: Array<() => Promise<void> | void> = [];
  const outbox = createOutbox({ dir: join(config.dataDir, 'outbox'), logger });
  outbox.start();

  const redisProbe = setInterval(() => {
    void cache.ping().then((seconds) => {
      if (seconds !== null) metrics.redisLatency.observe(seconds);
    });
  }, 5_000);
  redisProbe.unref();

  let closed = false;
  return {
    config,
    logger,
    requestLog,
    db,
    cache,
    queue,
    metrics,
    rateLimiter: createRateLimiter(cache),
    events,
    accounts,
    outbox,
    onClose,
    checkTarget: (url, field) => assertPublicUrl(url, { allowPrivate: config.allowPrivateTargets, ...(field ? { field } : {}) }),
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(redisProbe);
      // Each step gets a bounded time, so one stuck dependency cannot hold shutdown forever.
      const step = async (name: string, run: () => Promise<void> | void) => {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            Promise.resolve().then(run),
            new Promise<void>((_, reject) => {
              timer = setTimeout(() => reject(new Error(`${name} did not close within 10 s`)), 10_000);
            }),
          ]);
        } catch (error) {
          logger.error({ err: error, step: name }, 'close step failed');
        } finally {
          clearTimeout(timer);
        }
      };
      for (const hook of [...onClose].reverse()) await step('capability', hook);
      await step('outbox', () => outbox.close());
      await step('accounts', () => accounts.close());
      await step('queue', () => queue.close());
      await step('cache', () => cache.close());
      await step('database', () => db.close());
      requestLog.flush();
      logger.flush();
    },
  };
}

/** Where the CLI's local socket lives for an embedded data directory. */
export function controlSocketPath(config: ResolvedConfig): string {
  return join(config.dataDir, 'svc.sock');
}
