/**
 * Writes the audit entry the response policy requires for every block: it listens for
 * `threat.blocked` on the service event bus, so whichever pillar blocks a request only emits the
 * event (which also feeds webhooks). Entries are batched per org (up to 100 entries or 50 ms)
 * and appended in one transaction each, so a flood of blocked requests costs one chain-head lock
 * per batch rather than per request. Posture: bounded memory — beyond `maxBacklog` waiting
 * entries, new ones are dropped and counted in a warning log line rather than exhausting the
 * process during an attack; the threat_events table still records each block.
 *
 * Each entry gets its id when the block happens and is journaled then (platform/outbox.ts): the
 * answer to the blocked request waits for that disk write (`hold`), so a SIGKILL after the answer
 * cannot lose the entry; the next process chains it from the journal, and an id already in the
 * chain is skipped, so it is never chained twice.
 */
import { randomUUID } from 'node:crypto';
import type { EventBus } from '../platform/events.ts';
import type { Logger } from '../platform/logger.ts';
import type { JournalEntry, Outbox } from '../platform/outbox.ts';
import { isDatabaseOutage, isRetryableWriteFailure } from '../platform/db/failures.ts';
import type { AuditEntryInput, AuditLog } from './audit-log.ts';

export interface BlockAuditServices {
  readonly audit: AuditLog;
  readonly events: EventBus;
  readonly logger: Logger;
  /** Where entries go while the database is unavailable (chained in order when it returns). */
  readonly outbox?: Outbox;
}

const OUTBOX_KIND = 'block_audit_entry';
interface SpooledEntry {
  orgId: string;
  entry: AuditEntryInput;
}

export interface BlockAuditWriter {
  /** Writes everything waiting now. */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

const TEXT_FIELDS = ['request_id', 'decision', 'session_id', 'source_ip', 'method', 'path', 'user_agent'] as const;

/** The audit entry for a threat.blocked event's data. */
export function blockEntry(data: Record<string, unknown>, gatewayId: string | null): AuditEntryInput {
  const details: Record<string, unknown> = { gateway_id: gatewayId };
  for (const field of TEXT_FIELDS) if (typeof data[field] === 'string') details[field] = (data[field] as string).slice(0, 512);
  if (typeof data.threat_score === 'number') details.threat_score = data.threat_score;
  if (Array.isArray(data.pattern_ids)) details.pattern_ids = data.pattern_ids.filter((id) => typeof id === 'string').slice(0, 50);
  const requestId = typeof data.request_id === 'string' && data.request_id !== '' ? data.request_id.slice(0, 512) : null;
  return { actor: 'system:response-policy', action: 'threat.blocked', target: requestId, outcome: 'blocked', details };
}

export function startBlockAudit(services: BlockAuditServices, options: { flushMs?: number; batch?: number; maxBacklog?: number } = {}): BlockAuditWriter {
  const { audit } = services;
  const flushMs = options.flushMs ?? 50;
  const batch = options.batch ?? 100;
  const maxBacklog = options.maxBacklog ?? 50_000;
  interface Waiting {
    entry: AuditEntryInput;
    journaled: JournalEntry | null;
  }
  const waiting = new Map<string, Waiting[]>();
  const outbox = services.outbox;
  const settle = (chunk: readonly Waiting[]) => {
    for (const item of chunk) item.journaled?.done();
  };
  const spool = async (orgId: string, chunk: readonly Waiting[]) => {
    // One disk sync for the chunk, the entries in their order.
    await outbox!.appendMany(OUTBOX_KIND, chunk.map((item) => ({ orgId, entry: item.entry }) satisfies SpooledEntry)).then(
      () => settle(chunk),
      (error: unknown) => {
        // The journal still holds them: the next start chains them.
        services.logger.error({ org_id: orgId, entries: chunk.length, code: failureCode(error) }, 'block audit entries not spooled: spool write failed (kept in the journal)');
      },
    );
  };
  // Replayed in spool order, one org per call, one transaction each (appendMany; ids already chained are skipped).
  outbox?.register(
    OUTBOX_KIND,
    async (records) => {
      const list = records as SpooledEntry[];
      if (list.length === 0) return;
      const orgId = list[0]!.orgId;
      const entries = list.map((record) => record.entry);
      try {
        await audit.appendMany(orgId, entries);
      } catch (error) {
        // A lock conflict rolled the one transaction back whole: the entries stay in the spool for the next replay
        // (appendMany skips ids already chained), rather than being written one by one, where a second conflict
        // would replace an entry by an `audit.entry_rejected` marker (review-34b).
        if (isRetryableWriteFailure(error)) throw error;
        // An entry that loses a lock conflict (or meets an outage) alone stays in the spool too: the whole call is
        // repeated, and the entries already chained are skipped.
        const stopped = await appendEach(audit, services.logger, orgId, entries, error, true);
        if (stopped !== null) throw stopped.error;
      }
    },
    { group: (record) => (record as SpooledEntry).orgId, batch: 100 },
  );
  const running = new Map<string, Promise<void>>();
  let backlog = 0;
  let dropped = 0;
  const droppedByOrg = new Map<string, number>();
  let timer: NodeJS.Timeout | null = null;

  const writeOrg = (orgId: string): Promise<void> => {
    const previous = running.get(orgId) ?? Promise.resolve();
    const next = previous.then(async () => {
      for (;;) {
        const items = waiting.get(orgId);
        if (items === undefined || items.length === 0) {
          waiting.delete(orgId);
          return;
        }
        const chunk = items.splice(0, batch);
        const entries = chunk.map((item) => item.entry);
        try {
          // While anything waits in the spool, new entries queue behind it: the chain keeps their order.
          if (outbox !== undefined && outbox.pending() > 0) await spool(orgId, chunk);
          else {
            await audit.appendMany(orgId, entries);
            settle(chunk);
          }
        } catch (error) {
          // A lock conflict rolled the one transaction back whole: like an outage, the entries are kept in the spool
          // (chained, in order, by its replay) rather than written one by one, where a second conflict replaced an
          // entry by an `audit.entry_rejected` marker.
          if (outbox !== undefined && isRetryableWriteFailure(error)) await spool(orgId, chunk);
          else {
            // One entry the database refuses must not take the batch with it: write one by one.
            const stopped = await appendEach(audit, services.logger, orgId, entries, error, outbox !== undefined);
            const written = stopped === null ? chunk.length : stopped.index;
            settle(chunk.slice(0, written));
            // An entry that lost a lock conflict or met an outage alone: it and the ones after it wait in the spool.
            if (written < chunk.length) await spool(orgId, chunk.slice(written));
          }
        } finally {
          backlog -= chunk.length;
        }
      }
    });
    running.set(orgId, next);
    void next.finally(() => {
      if (running.get(orgId) === next) running.delete(orgId);
    });
    return next;
  };

  const enqueue = (orgId: string, item: Waiting) => {
    const list = waiting.get(orgId) ?? [];
    list.push(item);
    waiting.set(orgId, list);
    backlog++;
    return list.length;
  };

  const flush = async () => {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    if (dropped > 0) {
      services.logger.warn({ dropped }, 'block audit backlog full: entries dropped');
      // The chain itself says that entries are missing, so `audit verify` reports the gap.
      for (const [orgId, count] of droppedByOrg) enqueue(orgId, { entry: gapEntry('audit.entries_dropped', null, { count, reason: 'backlog_full' }), journaled: null });
      droppedByOrg.clear();
      dropped = 0;
    }
    await Promise.all([...waiting.keys()].map(writeOrg));
  };

  const unsubscribe = services.events.subscribe((event) => {
    if (event.event !== 'threat.blocked') return;
    if (backlog >= maxBacklog) {
      dropped++;
      droppedByOrg.set(event.orgId, (droppedByOrg.get(event.orgId) ?? 0) + 1);
      return;
    }
    // Its id and its time (the block's) are fixed now: chained later from the spool or the journal, it keeps both.
    const entry: AuditEntryInput = { ...blockEntry(event.data, event.gatewayId), id: randomUUID(), occurredAt: event.at.toISOString() };
    const journaled = outbox?.journal(OUTBOX_KIND, { orgId: event.orgId, entry } satisfies SpooledEntry) ?? null;
    if (journaled !== null) event.hold(journaled.durable);
    if (enqueue(event.orgId, { entry, journaled }) >= batch) void writeOrg(event.orgId);
    else if (timer === null) {
      timer = setTimeout(() => void flush(), flushMs);
      timer.unref();
    }
  });

  // Reads of the chain (GET /api/v1/audit, verification) append what waits here first.
  const removeGatherer = audit.addGatherer(() => flush());
  const writer: BlockAuditWriter = {
    flush,
    async stop() {
      unsubscribe();
      removeGatherer();
      await flush();
      await Promise.all([...running.values()]);
    },
  };
  return writer;
}

/** An entry that records, in the chain, that evidence is missing (and why). */
export function gapEntry(action: 'audit.entry_rejected' | 'audit.entries_dropped', target: string | null, details: Record<string, unknown>): AuditEntryInput {
  return { actor: 'system:response-policy', action, target, outcome: 'failure', details };
}

function failureCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code.slice(0, 32) : error instanceof Error ? error.name.slice(0, 32) : 'unknown';
}

/**
 * After a failed batch: each entry alone, so only an entry the database refuses is lost, and
 * that loss is itself an entry of the chain (`audit.entry_rejected`). Logged without the
 * entry's content (it may carry request data): org, target and the database's error code.
 * With `keep` (an outbox can hold them), an entry that loses a lock conflict or meets an outage
 * is not refused: the writing stops there and the entry's index comes back, for the caller to
 * keep it and the ones after it.
 */
async function appendEach(
  audit: AuditLog,
  logger: Logger,
  orgId: string,
  entries: readonly AuditEntryInput[],
  batchError: unknown,
  keep: boolean,
): Promise<{ index: number; error: unknown } | null> {
  if (isDatabaseOutage(batchError)) {
    logger.error({ org_id: orgId, entries: entries.length, code: failureCode(batchError) }, 'could not write block audit entries: database unavailable');
    return null;
  }
  for (const [index, entry] of entries.entries()) {
    try {
      await audit.append(orgId, entry);
    } catch (error) {
      if (keep && isRetryableWriteFailure(error)) return { index, error };
      const code = failureCode(error);
      logger.warn({ org_id: orgId, target: entry.target ?? null, action: entry.action, code }, 'block audit entry rejected');
      try {
        await audit.append(orgId, gapEntry('audit.entry_rejected', entry.target ?? null, { action: entry.action, code }));
      } catch (markerError) {
        logger.error({ org_id: orgId, target: entry.target ?? null, code: failureCode(markerError) }, 'block audit entry lost');
      }
    }
  }
  return null;
}
