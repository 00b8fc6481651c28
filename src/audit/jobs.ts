/**
 * Background audit jobs on the job queue: an hourly checkpoint of every chain whose head moved
 * since its last checkpoint, and a daily retention purge (which checkpoints before deleting).
 * Job ids are per hour / per day, so replicas that all schedule them enqueue each job once
 * (BullMQ de-duplicates by id; the in-process queue exists in one process only).
 */
import type { Database } from '../platform/db/index.ts';
import type { Logger } from '../platform/logger.ts';
import type { JobQueue } from '../platform/queue.ts';
import type { AuditLog } from './audit-log.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export interface AuditJobServices {
  readonly audit: AuditLog;
  readonly db: Database;
  readonly queue: JobQueue;
  readonly logger: Logger;
}

/** Registers the audit jobs and their schedule (the server lifecycle calls it once); returns a stop function. */
export function startAuditJobs(services: AuditJobServices, options: { checkpointEveryMs?: number; purgeEveryMs?: number } = {}): () => void {
  const { audit } = services;
  services.queue.register('audit.checkpoint', async () => {
    const stale = await services.db.query<{ org_id: string }>(
      `SELECT h.org_id::text FROM audit_chain_heads h
        WHERE h.seq > 0 AND h.seq > coalesce((SELECT max(c.seq) FROM audit_checkpoints c WHERE c.org_id = h.org_id), 0)`,
    );
    for (const { org_id: orgId } of stale.rows) await audit.checkpoint(orgId, 'periodic');
  });
  services.queue.register('audit.purge', async () => {
    const result = await audit.purge(new Date());
    if (result.deleted > 0) services.logger.info({ audit_purge: result }, 'audit retention purge');
  });

  const checkpointEvery = options.checkpointEveryMs ?? HOUR_MS;
  const purgeEvery = options.purgeEveryMs ?? DAY_MS;
  const schedule = (name: string, every: number) => {
    const enqueue = () =>
      services.queue.enqueue(name, {}, { jobId: `${name}_${Math.floor(Date.now() / every)}` }).catch((error: unknown) => {
        services.logger.error({ err: error, job: name }, 'could not enqueue audit job');
      });
    const timer = setInterval(() => void enqueue(), every);
    timer.unref();
    return timer;
  };
  const timers = [schedule('audit.checkpoint', checkpointEvery), schedule('audit.purge', purgeEvery)];
  return () => timers.forEach((timer) => clearInterval(timer));
}
