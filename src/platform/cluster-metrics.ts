/**
 * One /metrics answer for all workers. With WORKERS > 1 a scrape reaches whichever worker the
 * primary hands the connection to, and each worker counts only its own requests; so the worker
 * that takes the scrape asks the primary, the primary collects every listening worker's registry
 * (`getMetricsAsJSON`) and merges them with prom-client's `AggregatorRegistry.aggregate` — counters
 * and histograms summed, gauges by the aggregator each one declares — and sends the text back.
 *
 * Messages (all carry `svc`, like the supervisor's):
 *   worker → primary  { svc: 'metrics-request', id }            a scrape arrived
 *   primary → worker  { svc: 'metrics-collect', id }            send your registry
 *   worker → primary  { svc: 'metrics-part', id, metrics }      its registry as JSON
 *   primary → worker  { svc: 'metrics-text', id, text | error } the merged exposition
 * A worker that does not answer within the deadline fails the scrape (503): a partial sum would
 * look to Prometheus like counters that went backwards.
 */
import type { Worker } from 'node:cluster';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client';

/** How long the primary waits for every worker's registry, and a worker for the primary's answer. */
export const CLUSTER_METRICS_TIMEOUT_MS = 3_000;

type Part = MetricObjectWithValues<MetricValue<string>>[];

export type MetricsMessage =
  | { svc: 'metrics-request'; id: number }
  | { svc: 'metrics-collect'; id: number }
  | { svc: 'metrics-part'; id: number; metrics: Part }
  | { svc: 'metrics-text'; id: number; text?: string; error?: string };

function isMetricsMessage(value: unknown): value is MetricsMessage {
  const svc = (value as { svc?: unknown } | null)?.svc;
  return typeof svc === 'string' && svc.startsWith('metrics-') && typeof (value as { id?: unknown }).id === 'number';
}

interface Collection {
  waiting: Set<Worker>;
  parts: Part[];
  finish: (registry?: Registry, error?: string) => void;
}

/** Merges the parts of a complete collection. */
function merge(entry: Collection): void {
  let registry: Registry;
  try {
    registry = AggregatorRegistry.aggregate(entry.parts);
  } catch (error) {
    entry.finish(undefined, error instanceof Error ? error.message : String(error));
    return;
  }
  entry.finish(registry);
}

/**
 * The primary's side: `handle` takes every message a worker sends and answers the metrics ones
 * (returns false for any other message). `listening()` names the workers to collect from.
 * `gather()` collects for the primary itself (its operational alerts read the merged metrics).
 */
export function createMetricsCollector(listening: () => Iterable<Worker>, timeoutMs = CLUSTER_METRICS_TIMEOUT_MS) {
  let nextId = 0;
  const pending = new Map<number, Collection>();

  /** Every listening worker's registry merged into one; rejects at the deadline or with no worker. */
  const gather = () =>
    new Promise<Registry>((resolve, reject) => {
      const id = nextId++;
      const waiting = new Set([...listening()].filter((worker) => worker.isConnected()));
      const entry: Collection = {
        waiting,
        parts: [],
        finish: (registry?: Registry, error?: string) => {
          if (!pending.delete(id)) return; // answered already (timeout, then a late merge)
          clearTimeout(timer);
          if (registry === undefined) reject(new Error(error));
          else resolve(registry);
        },
      };
      const timer = setTimeout(() => entry.finish(undefined, `${entry.waiting.size} worker(s) did not send their metrics within ${timeoutMs} ms`), timeoutMs);
      pending.set(id, entry);
      for (const worker of waiting) worker.send({ svc: 'metrics-collect', id } satisfies MetricsMessage);
      if (waiting.size === 0) entry.finish(undefined, 'no worker is listening');
    });

  /** A scrape that reached `requester`: the merged exposition goes back to it. */
  const collect = (requester: Worker, requestId: number) => {
    const reply = (answer: { text: string } | { error: string }) => {
      if (requester.isConnected()) requester.send({ svc: 'metrics-text', id: requestId, ...answer } satisfies MetricsMessage);
    };
    gather()
      .then((registry) => registry.metrics())
      .then(
        (text) => reply({ text }),
        (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
      );
  };

  const handle = (worker: Worker, message: unknown): boolean => {
    if (!isMetricsMessage(message)) return false;
    if (message.svc === 'metrics-request') collect(worker, message.id);
    else if (message.svc === 'metrics-part') {
      const entry = pending.get(message.id);
      if (entry === undefined || !entry.waiting.delete(worker)) return true;
      entry.parts.push(message.metrics);
      if (entry.waiting.size === 0) merge(entry);
    }
    return true;
  };

  /** A worker that left is not waited for (its counts are gone with it). */
  const forget = (worker: Worker) => {
    for (const entry of pending.values()) {
      if (entry.waiting.delete(worker) && entry.waiting.size === 0) merge(entry);
    }
  };

  return { handle, forget, gather };
}

/** Raised in a worker when the primary could not merge the workers' metrics. */
export class ClusterMetricsError extends Error {}

/**
 * A worker's side: answers the primary's collections from `registry`, and returns the function
 * that gets the merged exposition for a scrape. `close()` removes the listener.
 */
export function shareMetricsWithPrimary(registry: Registry, timeoutMs = CLUSTER_METRICS_TIMEOUT_MS): { text: () => Promise<string>; close: () => void } {
  let nextId = 0;
  const waiting = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();
  const onMessage = (message: unknown) => {
    if (!isMetricsMessage(message)) return;
    if (message.svc === 'metrics-collect') {
      // A registry that cannot be read sends nothing: the primary's deadline fails that scrape.
      registry.getMetricsAsJSON().then(
        (metrics) => {
          if (process.connected) process.send?.({ svc: 'metrics-part', id: message.id, metrics } satisfies MetricsMessage);
        },
        () => undefined,
      );
    } else if (message.svc === 'metrics-text') {
      const request = waiting.get(message.id);
      if (request === undefined) return;
      waiting.delete(message.id);
      if (message.error === undefined) request.resolve(message.text ?? '');
      else request.reject(new ClusterMetricsError(message.error));
    }
  };
  process.on('message', onMessage);
  const text = () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new ClusterMetricsError(`the primary did not answer within ${timeoutMs} ms`));
      }, timeoutMs + 500);
      waiting.set(id, {
        resolve: (value) => (clearTimeout(timer), resolve(value)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
      if (process.send === undefined || !process.connected) {
        waiting.delete(id);
        clearTimeout(timer);
        reject(new ClusterMetricsError('no primary to ask'));
        return;
      }
      process.send({ svc: 'metrics-request', id } satisfies MetricsMessage);
    });
  return { text, close: () => process.off('message', onMessage) };
}
