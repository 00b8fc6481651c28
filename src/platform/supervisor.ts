/**
 * The cluster primary: forks `workers` replicas of `svc serve` that share one listening port
 * (node:cluster, round-robin), restarts a replica that dies (bounded: more than `maxRestarts`
 * deaths within `restartWindowMs` stops the whole service with exit 1 rather than looping), and
 * on SIGTERM/SIGINT asks every replica to drain — stop accepting, finish in-flight requests,
 * close storage — then exits 0; a replica still running after `shutdownTimeoutMs` is killed and
 * the exit code is 1. The primary opens no database and serves no request.
 *
 * Messages between primary and workers are `{ svc: 'ready', port }` (worker → primary, once
 * listening) and `{ svc: 'shutdown' }` (primary → worker). Workers reach each other's in-memory
 * sessions through private sockets in a directory the primary creates and removes
 * (src/platform/worker-routing.ts). A scrape of /metrics is answered for
 * all listening workers together (src/platform/cluster-metrics.ts), and `watch` reads the same
 * merge (the operational alerts).
 */
import cluster, { type Worker } from 'node:cluster';
import { rmSync } from 'node:fs';
import type { Registry } from 'prom-client';
import { createMetricsCollector } from './cluster-metrics.ts';
import type { Logger } from './logger.ts';
import { CLUSTER_DIR_ENV, createSocketDir } from './worker-routing.ts';

export interface SupervisorOptions {
  workers: number;
  logger: Logger;
  /** Time a draining replica gets before it is killed, ms. */
  shutdownTimeoutMs?: number;
  maxRestarts?: number;
  restartWindowMs?: number;
  /** Called once every first-generation replica listens, with the port they share. */
  onReady?: (port: number) => void;
  /**
   * Started once every first-generation replica listens, with a function that merges every
   * listening replica's metrics (the primary's operational alerts read it); the function it
   * returns is called when the service stops.
   */
  watch?: (merged: () => Promise<Registry>) => () => void;
}

export type WorkerMessage = { svc: 'ready'; port: number } | { svc: 'shutdown' };

export function isWorkerMessage(value: unknown): value is WorkerMessage {
  return typeof value === 'object' && value !== null && typeof (value as { svc?: unknown }).svc === 'string';
}

/** Runs the primary until the service stops; resolves with the process exit code. */
export function superviseWorkers(options: SupervisorOptions): Promise<number> {
  const { logger } = options;
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? 30_000;
  const maxRestarts = options.maxRestarts ?? 5;
  const restartWindowMs = options.restartWindowMs ?? 60_000;
  const deaths: number[] = [];
  const live = new Set<Worker>();
  const listening = new Set<Worker>();
  const metrics = createMetricsCollector(() => listening);
  let waitingForReady = options.workers;
  let unwatch: (() => void) | null = null;
  let stopping = false;
  let exitCode = 0;
  // Each worker's private socket (src/platform/worker-routing.ts), in a directory only svc's user can enter.
  const socketDir = createSocketDir();

  return new Promise<number>((resolve) => {
    const fork = () => {
      const worker = cluster.fork({ [CLUSTER_DIR_ENV]: socketDir });
      live.add(worker);
      let ready = false;
      worker.on('message', (message: unknown) => {
        if (metrics.handle(worker, message)) return;
        if (!isWorkerMessage(message) || message.svc !== 'ready' || ready) return;
        ready = true;
        listening.add(worker);
        logger.info({ worker: worker.id, pid: worker.process.pid }, 'svc worker listening');
        if (waitingForReady > 0 && --waitingForReady === 0) {
          options.onReady?.(message.port);
          if (!stopping) unwatch = options.watch?.(metrics.gather) ?? null;
        }
      });
    };

    const finish = () => {
      for (const signal of ['SIGTERM', 'SIGINT'] as const) process.removeListener(signal, onSignal);
      rmSync(socketDir, { recursive: true, force: true });
      resolve(exitCode);
    };

    const stop = (reason: string, code: number) => {
      if (stopping) return;
      stopping = true;
      exitCode = Math.max(exitCode, code);
      unwatch?.();
      logger.info({ reason, workers: live.size }, 'svc stopping: draining workers');
      if (live.size === 0) return finish();
      for (const worker of live) {
        if (worker.isConnected()) worker.send({ svc: 'shutdown' } satisfies WorkerMessage);
        else worker.process.kill('SIGTERM');
      }
      const killer = setTimeout(() => {
        for (const worker of live) {
          logger.error({ worker: worker.id, pid: worker.process.pid, timeout_ms: shutdownTimeoutMs }, 'svc worker did not drain in time; killing it');
          exitCode = 1;
          worker.process.kill('SIGKILL');
        }
      }, shutdownTimeoutMs);
      killer.unref();
    };

    cluster.on('exit', (worker, code, signal) => {
      live.delete(worker);
      listening.delete(worker);
      metrics.forget(worker);
      if (stopping) {
        // A replica that could not drain (its own deadline) makes the whole stop a failure.
        if (code !== 0 || signal !== null) {
          exitCode = 1;
          logger.error({ worker: worker.id, pid: worker.process.pid, code, signal }, 'svc worker did not stop cleanly');
        }
        if (live.size === 0) finish();
        return;
      }
      const now = Date.now();
      deaths.push(now);
      while (deaths.length > 0 && deaths[0]! < now - restartWindowMs) deaths.shift();
      if (deaths.length > maxRestarts) {
        logger.error({ worker: worker.id, code, signal, deaths: deaths.length, window_ms: restartWindowMs }, 'svc workers keep dying; stopping the service');
        stop('workers keep dying', 1);
        return;
      }
      const delayMs = Math.min(250 * 2 ** (deaths.length - 1), 5_000);
      logger.error({ worker: worker.id, pid: worker.process.pid, code, signal, restart_in_ms: delayMs }, 'svc worker died; restarting it');
      setTimeout(() => {
        if (!stopping) fork();
      }, delayMs);
    });

    const onSignal = (signal: NodeJS.Signals) => stop(signal, 0);
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    for (let index = 0; index < options.workers; index++) fork();
  });
}
