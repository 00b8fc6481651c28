/**
 * threat_events writer: decisions at or above `log` are buffered and inserted in batches off
 * the request path (every second or every 100 rows), per org under row-level security. Text
 * reaches the database sanitized (platform/db/sanitize.ts); a batch the database still refuses
 * is written again row by row, so only the refused row is lost (and logged without content).
 * Detection never waits on, or fails because of, the DB.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from '../platform/db/index.ts';
import { isDatabaseOutage } from '../platform/db/failures.ts';
import type { Logger } from '../platform/logger.ts';
import type { Outbox } from '../platform/outbox.ts';

export interface ThreatEventRow {
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
  record(row: ThreatEventRow): void;
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

export async function insertRows(db: Database, orgId: string, list: readonly ThreatEventRow[]): Promise<void> {
  await db.withOrg(orgId, async (tx) => {
    const values: unknown[] = [];
    const tuples = list.map((row, index) => {
      values.push(randomUUID(), row.orgId, row.requestId, row.pillar, row.kind, row.threatScore, row.decision, JSON.stringify(row.patterns), row.sessionId, row.gatewayId, JSON.stringify(row.details));
      const base = index * 11;
      return `($${base + 1}, $${base + 2}, $${base + 3}, $${base + 4}, $${base + 5}, $${base + 6}, $${base + 7}, $${base + 8}::jsonb, $${base + 9}, $${base + 10}, $${base + 11}::jsonb)`;
    });
    await tx.query(
      `INSERT INTO threat_events (id, org_id, request_id, pillar, kind, threat_score, decision, patterns, session_id, gateway_id, details) VALUES ${tuples.join(', ')}`,
      values,
    );
  });
}

const OUTBOX_KIND = 'threat_event';

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
        if (isDatabaseOutage(error)) throw error;
        for (const row of list) {
          await insertRows(db, row.orgId, [row]).catch((rowError: unknown) => {
            if (isDatabaseOutage(rowError)) throw rowError;
            logger?.warn({ org_id: row.orgId, request_id: row.requestId.slice(0, 128), code: errorCode(rowError) }, 'threat_events row rejected');
          });
        }
      }
    },
    { group: (row) => (row as ThreatEventRow).orgId, batch: 100 },
  );

  let buffer: ThreatEventRow[] = [];
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> = Promise.resolve();

  const write = async (rows: ThreatEventRow[]) => {
    const byOrg = new Map<string, ThreatEventRow[]>();
    for (const row of rows) byOrg.set(row.orgId, [...(byOrg.get(row.orgId) ?? []), row]);
    for (const [orgId, list] of byOrg) {
      try {
        await insertRows(db, orgId, list);
      } catch (error) {
        if (isDatabaseOutage(error)) {
          if (outbox === undefined) {
            logger?.warn({ code: errorCode(error), rows: list.length }, 'threat_events batch dropped: database unavailable');
            continue;
          }
          // Kept on disk and written when the database is back (platform/outbox.ts).
          // One disk sync for the batch, the rows in their order.
          await outbox.appendMany(OUTBOX_KIND, list).catch((spoolError: unknown) => logger?.error({ code: errorCode(spoolError), rows: list.length }, 'threat events lost: spool write failed'));
          continue;
        }
        // One row the database refuses must not take the batch with it: insert one by one.
        for (const row of list) {
          try {
            await insertRows(db, orgId, [row]);
          } catch (rowError) {
            logger?.warn({ org_id: orgId, request_id: row.requestId.slice(0, 128), code: errorCode(rowError) }, 'threat_events row rejected');
          }
        }
      }
    }
  };

  const flush = async () => {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    const rows = buffer;
    buffer = [];
    if (rows.length > 0) inFlight = inFlight.then(() => write(rows));
    await inFlight;
  };

  return {
    record(row) {
      if (buffer.length >= MAX_BUFFER) return; // shed load rather than grow without bound
      buffer.push(row);
      if (buffer.length >= FLUSH_AT) void flush();
      else if (timer === null) {
        timer = setTimeout(() => void flush(), FLUSH_EVERY_MS);
        timer.unref();
      }
    },
    flush,
    close: flush,
  };
}
