/**
 * The gateway's background job on the job queue: a daily retention purge of the hourly usage and
 * cost anomalies (usage-history.ts, USAGE_RETENTION_DAYS) and of the daily budget counters
 * (BUDGET_RETENTION_DAYS), scheduled like the audit purge and the
 * webhook deliveries' cleanup. The job id is per day, so replicas that all schedule it enqueue it
 * once (BullMQ de-duplicates by id; the in-process queue exists in one process only).
 */
import type { Logger } from '../platform/logger.ts';
import type { JobQueue } from '../platform/queue.ts';
import type { UsageHistory } from './usage-history.ts';

const DAY_MS = 86_400_000;
export const USAGE_PURGE_JOB = 'gateway.usage.purge';

export interface GatewayJobServices {
  readonly history: Pick<UsageHistory, 'purge'>;
  readonly queue: JobQueue;
  readonly logger: Logger;
}

/** Registers the purge and its daily schedule (the server lifecycle calls it once); returns a stop function. */
export function startGatewayJobs(services: GatewayJobServices, options: { purgeEveryMs?: number } = {}): () => void {
  services.queue.register(USAGE_PURGE_JOB, async () => {
    const deleted = await services.history.purge(new Date());
    if (deleted.usage + deleted.anomalies + deleted.budgets > 0) services.logger.info({ gateway_usage_purge: deleted }, 'gateway usage retention purge');
  });
  const every = options.purgeEveryMs ?? DAY_MS;
  const timer = setInterval(() => {
    services.queue.enqueue(USAGE_PURGE_JOB, {}, { jobId: `${USAGE_PURGE_JOB}_${Math.floor(Date.now() / every)}` }).catch((error: unknown) => {
      services.logger.error({ err: error, job: USAGE_PURGE_JOB }, 'could not enqueue gateway usage purge');
    });
  }, every);
  timer.unref();
  return () => clearInterval(timer);
}
