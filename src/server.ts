/**
 * `svc serve`. Startup order matters and is fixed here:
 *   1. take DATA_DIR/svc.lock when PGlite keeps its data there (one owner per data directory;
 *      a second instance stops at once naming the first one's PID and port),
 *   2. check that HOST:PORT can be bound (a busy port stops startup with one line),
 *   3. only then resolve embedded secrets, open storage, run migrations and start background work.
 *
 * Processes: with PostgreSQL and Redis, WORKERS (default: the cores the process may use) replicas serve one port through
 * node:cluster (src/platform/supervisor.ts), each a full svc on the shared storage. Embedded
 * storage (PGlite: one process per data directory; the in-memory cache is per process) is served
 * by this one process whatever WORKERS says; see docs/decisions.md.
 *
 * In embedded mode the server also listens on the owner-only control socket DATA_DIR/svc.sock
 * that the CLI uses while the server holds the PGlite data directory. SIGINT/SIGTERM drain:
 * the listener closes, in-flight requests finish, storage closes, the process exits 0.
 */
import cluster from 'node:cluster';
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config, ResolvedConfig } from './platform/config.ts';
import { acquireDataDirLock, type DataDirLock } from './platform/data-dir-lock.ts';
import { SvcError } from './platform/errors.ts';
import { limitHeapGrowth } from './platform/heap-growth.ts';
import { createLogger, stdoutDestination } from './platform/logger.ts';
import { assertPortFree, PortInUseError } from './platform/port-probe.ts';
import { resolveSecrets } from './platform/secrets.ts';
import { isWorkerMessage, superviseWorkers, type WorkerMessage } from './platform/supervisor.ts';
import { listenPrivately } from './platform/worker-routing.ts';
import type { runCommand as RunCommandFunction } from './commands.ts';
import type { Services } from './services.ts';

type RunCommand = typeof RunCommandFunction;

/** Time one process gets to drain (in-flight requests, storage) before it exits anyway, ms. */
const DRAIN_TIMEOUT_MS = 30_000;

/** How many processes serve: WORKERS with shared storage, one on embedded storage. */
export function replicaCount(config: Config): { workers: number; reason: string | null } {
  if (config.workers <= 1) return { workers: 1, reason: null };
  if (config.database.kind !== 'postgres' || config.cache.kind !== 'redis') {
    return {
      workers: 1,
      reason: 'embedded storage (PGlite opens a data directory from one process; the memory cache is per process): one process serves; WORKERS applies with DATABASE_URL and REDIS_URL',
    };
  }
  return { workers: config.workers, reason: null };
}

/** True when this process must own DATA_DIR (PGlite keeps its files there). */
export function ownsDataDir(config: Config): boolean {
  return config.database.kind === 'pglite' && config.database.dir !== null;
}

/**
 * Starts the service. Resolves once it listens (the process then runs until a signal);
 * rejects with DataDirInUseError or PortInUseError before touching any state.
 */
export async function serve(base: Config): Promise<void> {
  if (cluster.isWorker) return serveProcess(resolveSecrets(base), null);

  const lock = ownsDataDir(base) ? acquireDataDirLock(base.dataDir, { role: 'server', host: base.host, port: base.port }) : null;
  try {
    await assertPortFree(base.host, base.port);
    const config = resolveSecrets(base);
    const { workers, reason } = replicaCount(config);
    if (workers > 1) {
      // Workers load the grounding model and the detection model; a missing one is refused here, once, rather than by
      // every worker in turn until the supervisor gives up.
      if (config.verificationGroundingModel !== null) await (await import('./verification/index.ts')).checkGroundingModel(config.verificationGroundingModel.dir);
      if (config.detectionModel !== null) await (await import('./detection/index.ts')).checkModelDir(config.detectionModel.dir, { attackLabels: config.detectionModel.attackLabels });
      const logger = createLogger(config.logLevel, stdoutDestination());
      logger.info({ workers, port: config.port, host: config.host }, 'svc starting workers');
      const { sampleRegistry, startAlertEvaluator } = await import('./webhooks/index.ts');
      void superviseWorkers({
        workers,
        logger,
        shutdownTimeoutMs: DRAIN_TIMEOUT_MS + 5_000,
        onReady: (port) => logger.info({ port, host: config.host, workers, environment: config.environment }, 'svc listening'),
        // The operational alerts are evaluated here, once, over every worker's metrics merged.
        watch: (merged) => startAlertEvaluator({ logger, read: async (now) => sampleRegistry(await merged(), now) }).stop,
      }).then((code) => {
        logger.info({ code }, 'svc stopped');
        logger.flush();
        process.exit(code);
      });
      return;
    }
    await serveProcess(config, lock, reason);
  } catch (error) {
    lock?.release();
    throw error;
  }
}

/** One serving process: the only one (embedded, WORKERS=1) or a cluster worker. */
async function serveProcess(config: ResolvedConfig, lock: DataDirLock | null, note: string | null = null): Promise<void> {
  // Before the application loads: its modules and lexicons are the live set the factor applies to.
  limitHeapGrowth(config.heapGrowingPercent);
  // Until it listens, a worker asked to stop has nothing to drain: it leaves at once.
  let stop: ((reason: string) => Promise<void>) | null = null;
  const onShutdown = (reason: string) => (stop === null ? process.exit(0) : void stop(reason));
  process.once('SIGINT', () => onShutdown('SIGINT'));
  process.once('SIGTERM', () => onShutdown('SIGTERM'));
  if (cluster.isWorker) {
    process.on('message', (message: unknown) => {
      if (isWorkerMessage(message) && message.svc === 'shutdown') onShutdown('primary asked to drain');
    });
    process.once('disconnect', () => onShutdown('primary gone'));
  }

  // The application is loaded only now: a refused start (lock, port) never pays for loading it.
  const [{ createServices, controlSocketPath }, { buildApp }, { runCommand }] = await Promise.all([
    import('./services.ts'),
    import('./http/build-app.ts'),
    import('./commands.ts'),
  ]);
  const services = await createServices(config, { clusterWorker: cluster.isWorker });
  const { logger } = services;
  if (config.embedded || config.database.kind === 'pglite') {
    logger.warn(
      { data_dir: config.dataDir, database: 'pglite', cache: config.cache.kind },
      'embedded mode: PGlite under DATA_DIR, in-memory cache and job queue — for development and single-node use; set DATABASE_URL and REDIS_URL for production',
    );
  }
  if (note !== null) logger.info({ workers_configured: config.workers, workers: 1 }, note);
  // The spec names these two; this build sends nothing to an error monitor or an analytics
  // service, and says so rather than letting an operator believe it does.
  const unused = [config.errorMonitoringDsn === null ? null : 'ERROR_MONITORING_DSN', config.analyticsApiKey === null ? null : 'ANALYTICS_API_KEY'].filter((name) => name !== null);
  if (unused.length > 0 && (!cluster.isWorker || cluster.worker?.id === 1)) logger.warn({ variables: unused }, `${unused.join(' and ')} ${unused.length > 1 ? 'are' : 'is'} set but not used by this build: svc sends no errors or analytics anywhere`);
  // The PII name lexicons (~0.6 s to read) are loaded before the port opens, so no request pays
  // for them: completions with redaction and the API proxy's data classes both use them.
  (await import('./gateway/index.ts')).loadPiiLexicons();
  // Likewise the detection tiers' first-use work: without it the first requests of a fresh
  // worker queued behind ~0.4–1 s of it, and under load /health/db timed out meanwhile.
  const warming = performance.now();
  const warmed = await services.detection.warm();
  logger.info({ kinds: warmed, duration_ms: Math.round(performance.now() - warming) }, 'detection engine warm');
  const app = await buildApp(config, services);
  let port = config.port;
  try {
    await app.listen({ port: config.port, host: config.host });
    port = (app.server.address() as AddressInfo | null)?.port ?? config.port;
  } catch (error) {
    await app.close().catch(() => undefined);
    await services.close();
    throw (await PortInUseError.from(error, config.host, config.port)) ?? error;
  }
  lock?.setPort(port);
  // The collector's mutual-TLS listener for sensors (SENSOR_LISTEN), beside the API's port.
  let sensorListener: { close(): Promise<void> } | null = null;
  if (config.sensorListener !== null) {
    const { startSensorListener } = await import('./sensors/index.ts');
    try {
      sensorListener = await startSensorListener({ config: config.sensorListener, authority: await services.sensorCertificateAuthority(), target: app.server, logger, metrics: services.metrics });
    } catch (error) {
      await app.close().catch(() => undefined);
      await services.close();
      throw (await PortInUseError.from(error, config.sensorListener.host, config.sensorListener.port)) ?? error;
    }
  }
  // A cluster worker also serves, on its private socket, the requests other workers forward to the
  // in-memory sessions it holds (src/platform/worker-routing.ts); the same app answers them.
  const privateListener = await listenPrivately((raw, res) => app.server.emit('request', raw, res));
  const control = ownsDataDir(config) ? await startControlSocket(config, services, controlSocketPath(config), runCommand) : null;
  if (cluster.isWorker) process.send?.({ svc: 'ready', port } satisfies WorkerMessage);
  else logger.info({ port, host: config.host, environment: config.environment }, 'svc listening');

  let stopping = false;
  stop = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason, ...(cluster.isWorker ? { worker: cluster.worker?.id } : {}) }, 'svc stopping');
    const deadline = setTimeout(() => {
      logger.error({ timeout_ms: DRAIN_TIMEOUT_MS }, 'svc did not drain in time; exiting');
      logger.flush();
      process.exit(1);
    }, DRAIN_TIMEOUT_MS);
    deadline.unref();
    control?.close();
    if (control) rmSync(controlSocketPath(config), { force: true });
    privateListener?.close();
    await sensorListener?.close();
    // A keep-alive connection whose request was in flight when close() began becomes idle only
    // after its answer, and node:http closes idle connections once, at close(): without this
    // sweep such a connection held the drain until its keep-alive timeout or the deadline.
    const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
    sweep.unref();
    await app.close();
    clearInterval(sweep);
    privateListener?.closeAllConnections();
    await services.close();
    lock?.release();
    logger.flush();
    process.exit(0);
  };
}

async function startControlSocket(config: ResolvedConfig, services: Services, path: string, runCommand: RunCommand): Promise<Server> {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  rmSync(path, { force: true });
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > 65_536) request.destroy();
      else chunks.push(chunk);
    });
    request.on('end', () => {
      void (async () => {
        let status = 200;
        let body: unknown;
        try {
          if (request.method !== 'POST' || request.url !== '/command') throw new SvcError('ROUTE_NOT_FOUND');
          const { name, options } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { name: string; options: Record<string, string> };
          body = await runCommand(services, name, options ?? {});
        } catch (error) {
          status = error instanceof SvcError ? error.status : 500;
          body = {
            error: {
              code: error instanceof SvcError ? error.code : 'COMMAND_FAILED',
              message: error instanceof Error ? error.message : String(error),
              ...(error instanceof SvcError ? { details: error.details } : {}),
            },
          };
        }
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      })();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, 0o600);
  return server;
}
