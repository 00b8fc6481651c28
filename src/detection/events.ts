/**
 * threat_events writer: decisions at or above `log` are buffered and inserted in batches off
 * the request path (every second or every 100 rows), per org under row-level security. Text
 * reaches the database sanitized (platform/db/sanitize.ts); a batch the database still refuses
 * is written again row by row, so only the refused row is lost (and logged without content).
 * Detection never waits on, or fails because of, the DB.
 *
 * Each row gets its id when it is recorded and is journaled then (platform/outbox.ts): `record`
 * returns a promise that resolves once the row is on disk, so a block can be answered only after
 * its evidence would survive a SIGKILL. Inserts skip an id already stored, so a row written again
 * from the journal or the spool after a crash is never duplicated. While the spool holds records
 * (an outage, a lost lock conflict), new rows are spooled behind them, so they are stored in the
 * order they were recorded. Each row carries the time it was recorded (`occurredAt`), stored as
 * its occurred_at, so rows written late (replayed after an outage) keep the time they happened.
 */
import { randomUUID } from 'node:crypto';
import { uuidFromText } from '../platform/crypto.ts';
import type { Database } from '../platform/db/index.ts';
import { isDatabaseOutage, isRetryableWriteFailure } from '../platform/db/failures.ts';
import type { Logger } from '../platform/logger.ts';
import { isoTimeOrNull, recordedAt } from '../platform/time.ts';
import type { JournalEntry, Outbox } from '../platform/outbox.ts';

export interface ThreatEventRow {
  /** The row's own id, fixed when it is recorded (absent only in spools of older versions). */
  readonly id?: string;
  /**
   * When the event happened (ISO 8601), fixed when it is recorded, so a row written later (from the
   * spool after an outage or a lock conflict, or from the journal after a crash) keeps its own time
   * rather than the replay's. Absent in spools of older versions and from other callers: the row then
   * gets the time of its insert (the column's default, clock_timestamp()).
   */
  readonly occurredAt?: string;
  readonly orgId: string;
  readonly requestId: string;
  readonly pillar: string;
  readonly kind: string;
  readonly threatScore: number;
  readonly decision: string;
  readonly patterns: readonly { id: string; name: string; confidence: number }[];
  readonly sessionId: string | null;
  readonly gatewayId: string | null;
  readonly details: Record<string, unknown>;
}

export interface EventWriter {
  /** Buffers the row; resolves once it is journaled on disk (at once, true, without an outbox). */
  record(row: ThreatEventRow): Promise<boolean>;
  flush(): Promise<void>;
  close(): Promise<void>;
}

const FLUSH_EVERY_MS = 1_000;
const FLUSH_AT = 100;
const MAX_BUFFER = 10_000;

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code.slice(0, 32) : error instanceof Error ? error.name.slice(0, 32) : 'unknown';
}

/** The row's recorded time, or null (none, or not a time: the insert's time then). */
const occurredAt = (row: ThreatEventRow): string | null => isoTimeOrNull(row.occurredAt);

export async function insertRows(db: Database, orgId: string, list: readonly ThreatEventRow[]): Promise<void> {
  await db.withOrg(orgId, async (tx) => {
    const values: unknown[] = [];
    const tuples = list.map((row, index) => {
      values.push(row.id ?? uuidFromText(JSON.stringify(row)) /* spooled by a version that did not fix ids */, row.orgId, row.requestId, row.pillar, row.kind, row.threatScore, row.decision, JSON.stringify(row.patterns), row.sessionId, row.gatewayId, JSON.stringify(row.details), occurredAt(row));
      const base = index * 12;
      // The event's own time when it has one; otherwise the insert's (per row, as the column's default).
      return `($${base + 1}, $${base + 2}, $${base + 3}, $${base + 4}, $${base + 5}, $${base + 6}, $${base + 7}, $${base + 8}::jsonb, $${base + 9}, $${base + 10}, $${base + 11}::jsonb, COALESCE($${base + 12}::timestamptz, clock_timestamp()))`;
    });
    await tx.query(
      `INSERT INTO threat_events (id, org_id, request_id, pillar, kind, threat_score, decision, patterns, session_id, gateway_id, details, occurred_at) VALUES ${tuples.join(', ')}
       ON CONFLICT (id) DO NOTHING`,
      values,
    );
  });
}

const OUTBOX_KIND = 'threat_event';
const DURABLE = Promise.resolve(true);

export function createEventWriter(db: Database, logger?: Logger, outbox?: Outbox): EventWriter {
  // One org per call, one transaction: a replay that fails is repeated without duplicates.
  outbox?.register(
    OUTBOX_KIND,
    async (rows) => {
      const list = rows as ThreatEventRow[];
      if (list.length === 0) return;
      try {
        await insertRows(db, list[0]!.orgId, list);
      } catch (error) {
        // A lock conflict rolled the statement back whole: the rows wait in the spool (ON CONFLICT (id) DO NOTHING makes
        // the replay write none twice) instead of being dropped as refused (review-34b).
        if (isRetryableWriteFailure(error)) throw error;
        for (const row of list) {
          await insertRows(db, row.orgId, [row]).catch((rowError: unknown) => {
            if (isRetryableWriteFailure(rowError)) throw rowError;
            logger?.warn({ org_id: row.orgId, request_id: row.requestId.slice(0, 128), code: errorCode(rowError) }, 'threat_events row rejected');
          });
        }
      }
    },
    { group: (row) => (row as ThreatEventRow).orgId, batch: 100 },
  );

  interface Buffered {
    row: ThreatEventRow;
    journaled: JournalEntry | null;
  }
  let buffer: Buffered[] = [];
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> = Promise.resolve();
  const settle = (list: readonly Buffered[]) => {
    for (const item of list) item.journaled?.done();
  };

  // Kept in the spool, in order, for its replay: what an outage or a lock conflict (the statement rolled back whole) stopped.
  const spool = async (entries: readonly Buffered[]) => {
    await spoolTaken(entries, true);
  };
  // Returns the entries the spool refused (full), or none when `giveUp`: then they are settled, given up as the spool's bound says.
  const spoolTaken = async (entries: readonly Buffered[], giveUp: boolean): Promise<Buffered[]> => {
    const list = entries.map((item) => item.row);
    // One disk sync for the rows, in their order. If the spool cannot take them, the journal keeps them for the next start.
    return outbox!.appendMany(OUTBOX_KIND, list).then(
      (taken) => {
        const refused = giveUp ? [] : entries.filter((_, index) => taken[index] !== true);
        settle(giveUp ? entries : entries.filter((_, index) => taken[index] === true));
        return refused;
      },
      (spoolError: unknown) => {
        logger?.error({ code: errorCode(spoolError), rows: list.length }, 'threat events not spooled: spool write failed (kept in the journal)');
        return [];
      },
    );
  };

  const write = async (items: Buffered[]) => {
    const byOrg = new Map<string, Buffered[]>();
    for (const item of items) {
      const list = byOrg.get(item.row.orgId);
      if (list === undefined) byOrg.set(item.row.orgId, [item]);
      else list.push(item);
    }
    for (const [orgId, queued] of byOrg) {
      let entries = queued;
      // While anything waits in the spool, new rows queue behind it (as the block audit and provenance writers do):
      // the replay stores them after the older ones, so no event lands before one that happened earlier. The spool can
      // be full with the database up (a long outage's backlog the replay has not caught up with; before the outbox
      // starts, a record no handler takes yet): the rows it refuses here are inserted now rather than given up.
      if (outbox !== undefined && outbox.pending() > 0) {
        entries = await spoolTaken(entries, false);
        if (entries.length === 0) continue;
      }
      const list = entries.map((item) => item.row);
      try {
        await insertRows(db, orgId, list);
        settle(entries);
      } catch (error) {
        if (isDatabaseOutage(error) && outbox === undefined) {
          logger?.warn({ code: errorCode(error), rows: list.length }, 'threat_events batch dropped: database unavailable');
          continue;
        }
        // Kept on disk and written when the database is back (platform/outbox.ts); a lock conflict likewise, rather than
        // rows written one by one, where a second conflict dropped a row as rejected.
        if (outbox !== undefined && isRetryableWriteFailure(error)) {
          await spool(entries);
          continue;
        }
        // One row the database refuses must not take the batch with it: insert one by one.
        for (const [index, item] of entries.entries()) {
          try {
            await insertRows(db, orgId, [item.row]);
          } catch (rowError) {
            if (outbox !== undefined && isRetryableWriteFailure(rowError)) {
              // Not refused: this row and the ones after it wait in the spool.
              await spool(entries.slice(index));
              break;
            }
            logger?.warn({ org_id: orgId, request_id: item.row.requestId.slice(0, 128), code: errorCode(rowError) }, 'threat_events row rejected');
          }
          item.journaled?.done();
        }
      }
    }
  };

  const flush = async () => {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    const items = buffer;
    buffer = [];
    if (items.length > 0) inFlight = inFlight.then(() => write(items));
    await inFlight;
  };

  return {
    record(input) {
      if (buffer.length >= MAX_BUFFER) return DURABLE; // shed load rather than grow without bound
      // Its id and its time are fixed now: a row written later (spool, journal) is stored once, at the time it happened.
      const row = input.id === undefined || input.occurredAt === undefined ? { ...input, id: input.id ?? randomUUID(), occurredAt: input.occurredAt ?? recordedAt() } : input;
      const journaled = outbox?.journal(OUTBOX_KIND, row) ?? null;
      buffer.push({ row, journaled });
      if (buffer.length >= FLUSH_AT) void flush();
      else if (timer === null) {
        timer = setTimeout(() => void flush(), FLUSH_EVERY_MS);
        timer.unref();
      }
      return journaled?.durable ?? DURABLE;
    },
    flush,
    close: flush,
  };
}
