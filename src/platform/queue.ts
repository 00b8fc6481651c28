/**
 * Job queue: BullMQ on Redis in production, an in-process queue in embedded mode.
 *
 * Contract: `register(name, handler)` before `start()`; `enqueue(name, data, options)` returns
 * once the job is accepted. A handler that throws is retried per its `attempts`/`backoffMs`
 * options (exponential). `jobId` de-duplicates: enqueuing an id that is waiting or active is a
 * no-op. The in-process queue keeps jobs in memory only, so a capability that must survive a
 * restart keeps its own durable record (e.g. webhook deliveries in the database) and re-enqueues
 * pending work on start.
 */
import { Queue, Worker, type ConnectionOptions } from 'bullmq';

export interface JobOptions {
  /** Delay before the first run, ms. */
  delayMs?: number;
  /** De-duplication id. */
  jobId?: string;
  /** Total runs including the first (default 1: the handler manages its own retries). */
  attempts?: number;
  /** Base delay of the exponential backoff between attempts, ms. */
  backoffMs?: number;
}

export type JobHandler<Data> = (data: Data, meta: { attempt: number; jobId: string }) => Promise<void>;

export interface QueueHealth {
  kind: 'bullmq' | 'in-process';
  ok: boolean;
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
}

export interface JobQueue {
  readonly kind: 'bullmq' | 'in-process';
  register<Data>(name: string, handler: JobHandler<Data>, options?: { concurrency?: number }): void;
  enqueue<Data>(name: string, data: Data, options?: JobOptions): Promise<void>;
  health(): Promise<QueueHealth>;
  close(): Promise<void>;
}

// ------------------------------------------------------------------------------- in-process

interface InProcessJob {
  id: string;
  name: string;
  data: unknown;
  attempt: number;
  options: JobOptions;
}

export class InProcessQueue implements JobQueue {
  readonly kind = 'in-process' as const;
  private readonly handlers = new Map<string, { handler: JobHandler<unknown>; concurrency: number; active: number }>();
  private readonly ready = new Map<string, InProcessJob[]>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly known = new Set<string>();
  private failed = 0;
  private activeCount = 0;
  private closed = false;
  private sequence = 0;
  private readonly idleWaiters: Array<() => void> = [];

  register<Data>(name: string, handler: JobHandler<Data>, options: { concurrency?: number } = {}): void {
    this.handlers.set(name, { handler: handler as JobHandler<unknown>, concurrency: options.concurrency ?? 4, active: 0 });
  }

  async enqueue<Data>(name: string, data: Data, options: JobOptions = {}): Promise<void> {
    if (this.closed) throw new Error('queue is closed');
    const id = options.jobId ?? `${name}:${++this.sequence}`;
    if (this.known.has(id)) return;
    this.known.add(id);
    this.schedule({ id, name, data, attempt: 1, options }, options.delayMs ?? 0);
  }

  private schedule(job: InProcessJob, delayMs: number): void {
    if (delayMs > 0) {
      const timer = setTimeout(() => {
        this.timers.delete(job.id);
        this.push(job);
      }, delayMs);
      timer.unref();
      this.timers.set(job.id, timer);
    } else {
      this.push(job);
    }
  }

  private push(job: InProcessJob): void {
    const list = this.ready.get(job.name) ?? [];
    list.push(job);
    this.ready.set(job.name, list);
    queueMicrotask(() => this.drain(job.name));
  }

  private drain(name: string): void {
    const entry = this.handlers.get(name);
    const list = this.ready.get(name);
    if (entry === undefined || list === undefined || this.closed) return;
    while (entry.active < entry.concurrency && list.length > 0) {
      const job = list.shift()!;
      entry.active++;
      this.activeCount++;
      void entry.handler(job.data, { attempt: job.attempt, jobId: job.id }).then(
        () => this.finish(entry, job, null),
        (error: unknown) => this.finish(entry, job, error),
      );
    }
  }

  private finish(entry: { active: number }, job: InProcessJob, error: unknown): void {
    entry.active--;
    this.activeCount--;
    const attempts = job.options.attempts ?? 1;
    if (error !== null && job.attempt < attempts && !this.closed) {
      const delay = (job.options.backoffMs ?? 1_000) * 2 ** (job.attempt - 1);
      this.schedule({ ...job, attempt: job.attempt + 1 }, delay);
    } else {
      if (error !== null) this.failed++;
      this.known.delete(job.id);
    }
    this.drain(job.name);
    if (this.activeCount === 0 && [...this.ready.values()].every((list) => list.length === 0)) {
      for (const waiter of this.idleWaiters.splice(0)) waiter();
    }
  }

  /** Resolves when nothing is running or ready (delayed jobs excluded). Tests use it. */
  idle(): Promise<void> {
    if (this.activeCount === 0 && [...this.ready.values()].every((list) => list.length === 0)) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async health(): Promise<QueueHealth> {
    const waiting = [...this.ready.values()].reduce((sum, list) => sum + list.length, 0);
    return { kind: this.kind, ok: !this.closed, waiting, active: this.activeCount, delayed: this.timers.size, failed: this.failed };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.ready.clear();
  }
}

// ----------------------------------------------------------------------------------- BullMQ

export class BullQueue implements JobQueue {
  readonly kind = 'bullmq' as const;
  private readonly queues = new Map<string, Queue>();
  private readonly workers: Worker[] = [];

  constructor(
    private readonly connection: ConnectionOptions,
    private readonly prefix: string,
  ) {}

  private queue(name: string): Queue {
    let queue = this.queues.get(name);
    if (queue === undefined) {
      queue = new Queue(name, { connection: this.connection, prefix: `${this.prefix}bull` });
      queue.on('error', () => undefined);
      this.queues.set(name, queue);
    }
    return queue;
  }

  register<Data>(name: string, handler: JobHandler<Data>, options: { concurrency?: number } = {}): void {
    const worker = new Worker(
      name,
      async (job) => handler(job.data as Data, { attempt: job.attemptsMade + 1, jobId: job.id ?? '' }),
      { connection: this.connection, prefix: `${this.prefix}bull`, concurrency: options.concurrency ?? 4 },
    );
    worker.on('error', () => undefined);
    this.workers.push(worker);
    this.queue(name);
  }

  async enqueue<Data>(name: string, data: Data, options: JobOptions = {}): Promise<void> {
    await this.queue(name).add(name, data, {
      // BullMQ refuses custom ids containing ':' (its own key separator) unless they have exactly three parts.
      ...(options.jobId === undefined ? {} : { jobId: options.jobId.replaceAll(':', '_') }),
      delay: options.delayMs ?? 0,
      attempts: options.attempts ?? 1,
      backoff: { type: 'exponential', delay: options.backoffMs ?? 1_000 },
      removeOnComplete: 1_000,
      removeOnFail: 5_000,
    });
  }

  async health(): Promise<QueueHealth> {
    const totals = { waiting: 0, active: 0, delayed: 0, failed: 0 };
    try {
      for (const queue of this.queues.values()) {
        const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed');
        totals.waiting += counts.waiting ?? 0;
        totals.active += counts.active ?? 0;
        totals.delayed += counts.delayed ?? 0;
        totals.failed += counts.failed ?? 0;
      }
      return { kind: this.kind, ok: true, ...totals };
    } catch {
      return { kind: this.kind, ok: false, ...totals };
    }
  }

  /**
   * Stops taking jobs and closes connections. An active job is not waited for beyond 5 s (it
   * stays in BullMQ and is retried by the next worker); a worker whose blocking connection
   * hangs after a Redis restart is disconnected instead of holding shutdown forever.
   */
  async close(): Promise<void> {
    // Closing a connection BullMQ is still initialising leaves its Redis version probe rejected
    // with nobody listening (an app closed right after start): let initialisation finish first.
    let readyTimer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.workers, ...this.queues.values()].map((item) => item.waitUntilReady())),
      new Promise<void>((resolve) => {
        readyTimer = setTimeout(resolve, 2_000);
      }),
    ]);
    clearTimeout(readyTimer);
    const closing = Promise.allSettled([
      ...this.workers.map((worker) => worker.close()),
      ...[...this.queues.values()].map((queue) => queue.close()),
    ]);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      closing.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), 5_000);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      await Promise.allSettled([...this.workers, ...this.queues.values()].map((item) => item.disconnect()));
    }
  }
}

export function createQueue(redisUrl: string | null, prefix: string): JobQueue {
  if (redisUrl === null) return new InProcessQueue();
  const url = new URL(redisUrl);
  const connection: ConnectionOptions = {
    host: url.hostname,
    port: Number(url.port || 6379),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
    ...(url.pathname.length > 1 ? { db: Number(url.pathname.slice(1)) } : {}),
    maxRetriesPerRequest: null,
  };
  return new BullQueue(connection, prefix);
}
