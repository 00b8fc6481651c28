/**
 * AI provenance: one record per completion (request_id, content hash, provider, model, sources
 * used with their hashes, checks run with verdicts, risk class, sb942_manifest_present), written
 * after the response in batches per org (≤ 500 records or 200 ms). Each batch is one transaction
 * that appends ONE audit entry to the org's hash chain and stores every record of the batch with
 * that entry's seq and hash — the chain of custody served by
 * GET /api/v1/compliance/ai-provenance/{request_id}. The entry's details carry the batch's
 * digest (`records_sha256`, see `provenanceBatchDigest`): SHA-256 over the SHA-256 of each
 * record's canonical form (RFC 8785), sorted by request id. The entry is HMAC-chained, so
 * editing, adding or deleting any record of a batch is detected by recomputing the digest from
 * the records that name its seq. Bounded memory: past `maxBacklog` waiting
 * records new ones are dropped and counted in a warning log line (the response was already
 * served; the loss is visible, never silent). While the database is unavailable, records go to
 * the evidence outbox (platform/outbox.ts) and are written, in order, when it returns; while
 * anything waits there, new records queue behind it, so the chain keeps their order. A batch
 * the database refuses for a reason other than an outage is written again record by record, so
 * only the refused record is lost (logged without content). A record whose request id is
 * already stored for the org (a spooled batch written twice, a repeated X-Request-Id) keeps the
 * first record, as before; it is left out of the batch and of its digest.
 *
 * sb942_manifest_present: California SB 942 asks for a latent disclosure (a manifest such as
 * C2PA) in AI-generated image, video and audio. svc relays text and embeds no manifest, so the
 * flag is false for every completion; it is true only if a future media path embeds one.
 */
import { createHash, hash } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import canonicalize from 'canonicalize';
import type { AuditLog } from '../audit/index.ts';
import { copyField, type Database } from '../platform/db/index.ts';
import { isDatabaseOutage, isRetryableWriteFailure } from '../platform/db/failures.ts';
import type { Logger } from '../platform/logger.ts';
import { isoTimeOrNull, recordedAt } from '../platform/time.ts';
import type { Outbox } from '../platform/outbox.ts';
import { sanitizeJson } from '../platform/db/sanitize.ts';
import type { LayerName, Verdict } from './types.ts';

export interface ProvenanceRecord {
  requestId: string;
  contentHash: string;
  delivered: boolean;
  provider: string;
  model: string;
  streamed: boolean;
  sources: Array<{ index: number; id?: string; title?: string; url?: string; sha256: string }>;
  checks: Partial<Record<LayerName, Verdict>>;
  passed: boolean | null;
  action: string | null;
  retriedFrom: string | null;
  riskClass: string;
  sb942ManifestPresent: boolean;
  /**
   * When the completion was recorded (ISO 8601, `recordedAt()`), set where the record is built (else by
   * `record`, on a copy), so a record written later (from
   * the spool after an outage or a lock conflict) is stored with its own time as created_at, not the
   * replay's. Not part of the record's digest (created_at never was).
   */
  recordedAt?: string;
}

export interface ProvenanceView {
  request_id: string;
  created_at: string;
  content_hash: string;
  hash_algorithm: 'sha256';
  delivered: boolean;
  provider: string;
  model: string;
  streamed: boolean;
  sources: ProvenanceRecord['sources'];
  checks: ProvenanceRecord['checks'];
  passed: boolean | null;
  action: string | null;
  retried_from: string | null;
  risk_class: string;
  sb942_manifest_present: boolean;
  chain_of_custody: { audit_seq: number; audit_hash: string; audit_action: string };
}

export const PROVENANCE_AUDIT_ACTION = 'ai.provenance.recorded';

/** What one provenance record states: the fields its batch digest covers (a view without created_at and chain_of_custody). */
export type ProvenanceStatement = Omit<ProvenanceView, 'created_at' | 'hash_algorithm' | 'chain_of_custody'>;

/**
 * The statement's fields in RFC 8785's member order (sorted by UTF-16 code unit). canonicalStatement
 * writes the outer object itself in this order: the library sorts an object's keys and makes a Set
 * for each key it writes, on every record (its work was about a tenth of a JSON completion's
 * allocations, most of it for this outer object; docs/benchmarks.md, "speed-json6 round").
 */
const STATEMENT_FIELDS = ['action', 'checks', 'content_hash', 'delivered', 'model', 'passed', 'provider', 'request_id', 'retried_from', 'risk_class', 'sb942_manifest_present', 'sources', 'streamed'] as const satisfies ReadonlyArray<keyof ProvenanceStatement>;

/**
 * The canonical form (RFC 8785) of one record's statement: the outer object written here in
 * STATEMENT_FIELDS' order (its keys are ASCII names: JSON.stringify writes them as RFC 8785
 * does), each value by the canonicalize library; byte for byte the library's form of the whole
 * statement (test/verification/provenance-batch.test.ts, "canonical form of a provenance
 * record"), so stored digests still verify.
 */
export function canonicalStatement(statement: ProvenanceStatement): string {
  let text = '{';
  for (const field of STATEMENT_FIELDS) {
    const value = statement[field];
    // As the library does: an undefined member is left out.
    if (value === undefined) continue;
    text += `${text.length === 1 ? '' : ','}"${field}":${canonicalize(value) ?? 'null'}`;
  }
  return `${text}}`;
}

/** Lower-case hex SHA-256 of one record's statement in canonical form. */
export function provenanceRecordDigest(statement: ProvenanceStatement): string {
  // crypto.hash: the one-shot form, without a Hash object per record; the same hex digest.
  return hash('sha256', canonicalStatement(statement), 'hex');
}

/**
 * The digest a batch's audit entry carries (`details.records_sha256`): SHA-256 of the records'
 * own digests, sorted by request id (code-unit order) and joined with newlines. Recomputed from
 * every record naming the entry's seq, it proves none of them was edited, added or removed.
 */
export function provenanceBatchDigest(statements: readonly ProvenanceStatement[]): string {
  return batchDigestOf(statements.map((statement) => ({ statement, digest: provenanceRecordDigest(statement) })));
}

/** A record as it goes into a batch: its statement and the statement's own digest. */
interface Leaf {
  statement: ProvenanceStatement;
  digest: string;
  /** The record's created_at: its recorded time, or (a record spooled by an older version) the write's. */
  createdAt: string;
}

function batchDigestOf(leaves: readonly Pick<Leaf, 'statement' | 'digest'>[]): string {
  const sorted = [...leaves].sort((left, right) => {
    const a = left.statement.request_id;
    const b = right.statement.request_id;
    return a < b ? -1 : a > b ? 1 : 0;
  });
  return createHash('sha256').update(sorted.map((leaf) => leaf.digest).join('\n')).digest('hex');
}

/**
 * Rows per INSERT statement and records per slice of hashing, with a turn of the event loop
 * between slices. On the embedded engine a statement runs on svc's own thread, about 40 µs per
 * record: a 500-record batch written as one statement held every request for 20 ms and more,
 * which put the gateway's p99 at 10 connections near 40 ms (docs/gateway.md). Each statement
 * also costs something of its own: 100 rows to a statement adds ~12 % to a record's cost, and 50
 * rows adds ~60 % (docs/decisions.md, "Embedded engine stalls").
 */
export const ROWS_PER_STATEMENT = 100;

const UNIQUE_VIOLATION = '23505';
const COPY_COLUMNS = ['org_id', 'created_at', 'request_id', 'content_hash', 'delivered', 'provider', 'model', 'streamed', 'sources', 'checks', 'passed', 'action', 'retried_from', 'risk_class', 'sb942_manifest_present', 'audit_seq', 'audit_hash'] as const;

/** Statements as COPY text rows in COPY_COLUMNS' order, each with the org and the batch's audit entry. */
function copyText(orgId: string, leaves: readonly Leaf[], seq: number, hash: string): string {
  let text = '';
  for (const { statement: row, createdAt } of leaves) {
    text += `${copyField(orgId)}\t${copyField(createdAt)}\t${copyField(row.request_id)}\t${copyField(row.content_hash)}\t${copyField(row.delivered)}\t${copyField(row.provider)}\t${copyField(row.model)}\t${copyField(row.streamed)}\t${copyField(JSON.stringify(row.sources))}\t${copyField(JSON.stringify(row.checks))}\t${copyField(row.passed)}\t${copyField(row.action)}\t${copyField(row.retried_from)}\t${copyField(row.risk_class)}\t${copyField(row.sb942_manifest_present)}\t${copyField(seq)}\t${copyField(hash)}\n`;
  }
  return text;
}

/** A record as stored and hashed: the database layer's NUL replacement applied first, so the digest matches what is read back. */
function statementOf(record: ProvenanceRecord): ProvenanceStatement {
  return sanitizeJson({
    request_id: record.requestId,
    content_hash: record.contentHash,
    delivered: record.delivered,
    provider: record.provider,
    model: record.model,
    streamed: record.streamed,
    sources: record.sources,
    checks: record.checks,
    passed: record.passed,
    action: record.action,
    retried_from: record.retriedFrom,
    risk_class: record.riskClass,
    sb942_manifest_present: record.sb942ManifestPresent,
  });
}

export interface ProvenanceWriter {
  record(orgId: string, record: ProvenanceRecord): void;
  flush(): Promise<void>;
  get(orgId: string, requestId: string): Promise<ProvenanceView | null>;
  close(): Promise<void>;
}

const OUTBOX_KIND = 'provenance_record';

/** A record of the batch was already stored: the transaction is rolled back and the batch written without it. */
class AlreadyStored extends Error {
  readonly code = 'provenance_already_stored';
}
interface SpooledRecord {
  orgId: string;
  record: ProvenanceRecord;
}

function failureCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code.slice(0, 32) : error instanceof Error ? error.name.slice(0, 32) : 'unknown';
}

export function createProvenanceWriter(
  deps: { db: Database; audit: AuditLog; logger: Logger; outbox?: Outbox },
  options: { flushMs?: number; batch?: number; maxBacklog?: number } = {},
): ProvenanceWriter {
  // On the embedded engine a transaction costs about 4 ms of svc's CPU whatever it carries, so
  // under load the window decides the cost per record: 50 ms (about 70 records at 1.4k
  // completions/s) cost ~190 µs per record, 200 ms (~280 records) ~135 µs (docs/gateway.md).
  const flushMs = options.flushMs ?? 200;
  const batch = options.batch ?? 500;
  const maxBacklog = options.maxBacklog ?? 50_000;
  const { outbox } = deps;
  const waiting = new Map<string, ProvenanceRecord[]>();
  const running = new Map<string, Promise<void>>();
  let backlog = 0;
  let dropped = 0;
  let timer: NodeJS.Timeout | null = null;

  /**
   * A chunk's statements with their digests, computed before its transaction a slice at a time.
   * A request id repeated within the chunk keeps its first record.
   */
  const prepare = async (chunk: readonly ProvenanceRecord[]): Promise<Leaf[]> => {
    const seen = new Set<string>();
    const leaves: Leaf[] = [];
    for (let start = 0; start < chunk.length; start += ROWS_PER_STATEMENT) {
      if (start > 0) await nextTurn();
      for (const record of chunk.slice(start, start + ROWS_PER_STATEMENT)) {
        const statement = statementOf(record);
        if (seen.has(statement.request_id)) continue;
        seen.add(statement.request_id);
        leaves.push({ statement, digest: provenanceRecordDigest(statement), createdAt: isoTimeOrNull(record.recordedAt) ?? recordedAt() });
      }
    }
    return leaves;
  };

  /**
   * One transaction: one audit entry with the digest of the chunk's records, then the records
   * with that entry's seq and hash, ROWS_PER_STATEMENT to a statement with a turn of the event
   * loop between them. One entry per batch instead of one per record: on the
   * embedded engine an audit row (its canonical JSON and HMAC, the jsonb details, two indexes)
   * cost more than half of a record's evidence (docs/decisions.md, "Gateway hot path").
   * A record whose request id is already stored (a spooled batch written twice, a repeated
   * X-Request-Id) is found by the inserts themselves: fewer rows stored than the digest covers
   * rolls the transaction back, and the chunk is written again without the stored ids
   * (`excludeStored`), so the common case pays no lookup.
   */
  const writeChunk = async (orgId: string, chunk: readonly ProvenanceRecord[]): Promise<void> => writeLeaves(orgId, await prepare(chunk), false);

  const writeLeaves = async (orgId: string, leaves: readonly Leaf[], excludeStored: boolean): Promise<void> => {
    try {
      await deps.db.withOrg(orgId, async (tx) => {
        let fresh = leaves;
        if (excludeStored) {
          const stored = await tx.query<{ request_id: string }>('SELECT request_id FROM ai_provenance WHERE org_id = $1 AND request_id = ANY($2::text[])', [
            orgId,
            leaves.map((leaf) => leaf.statement.request_id),
          ]);
          const known = new Set(stored.rows.map((row) => row.request_id));
          fresh = leaves.filter((leaf) => !known.has(leaf.statement.request_id));
        }
        if (fresh.length === 0) return;
        let delivered = 0;
        let failed = 0;
        for (const { statement } of fresh) {
          if (statement.delivered && statement.passed !== false) delivered += 1;
          else if (statement.delivered) failed += 1;
        }
        const [entry] = await deps.audit.appendMany(
          orgId,
          [
            {
              actor: 'system:verification',
              action: PROVENANCE_AUDIT_ACTION,
              target: fresh.length === 1 ? fresh[0]!.statement.request_id.slice(0, 512) : null,
              outcome: 'recorded',
              details: { records: fresh.length, records_sha256: batchDigestOf(fresh), delivered, failed, blocked: fresh.length - delivered - failed },
            },
          ],
          { tx },
        );
        // A statement carries many rows: on the embedded engine every statement is parsed and
        // planned inside the process, and a row-by-row insert cost as much CPU as the
        // completion it records.
        let inserted = 0;
        for (let start = 0; start < fresh.length; start += ROWS_PER_STATEMENT) {
          if (start > 0) await nextTurn();
          const slice = fresh.slice(start, start + ROWS_PER_STATEMENT);
          if (tx.copyRows !== undefined) {
            // The embedded engine: COPY, no conflict clause (a stored id fails it with 23505, below).
            inserted += await tx.copyRows('ai_provenance', COPY_COLUMNS, copyText(orgId, slice, entry!.seq, entry!.hash));
            continue;
          }
          const rows = slice.map((leaf) => ({ ...leaf.statement, created_at: leaf.createdAt }));
          const result = await tx.query(
            `INSERT INTO ai_provenance (org_id, created_at, request_id, content_hash, delivered, provider, model, streamed, sources, checks, passed, action, retried_from, risk_class, sb942_manifest_present, audit_seq, audit_hash)
             SELECT $1, r.created_at, r.request_id, r.content_hash, r.delivered, r.provider, r.model, r.streamed, r.sources, r.checks, r.passed, r.action, r.retried_from, r.risk_class, r.sb942_manifest_present, $3, $4
             FROM jsonb_to_recordset($2::jsonb) AS r(created_at timestamptz, request_id text, content_hash text, delivered boolean, provider text, model text, streamed boolean, sources jsonb, checks jsonb, passed boolean, action text, retried_from text, risk_class text, sb942_manifest_present boolean)
             ON CONFLICT (org_id, request_id) DO NOTHING`,
            [orgId, JSON.stringify(rows), entry!.seq, entry!.hash],
          );
          inserted += result.rowCount;
        }
        // The digest must cover exactly the stored records.
        if (inserted !== fresh.length) throw new AlreadyStored();
      });
    } catch (error) {
      // COPY (the embedded engine) meets a stored id as a unique violation instead of skipping it.
      if ((error instanceof AlreadyStored || (error as { code?: unknown } | null)?.code === UNIQUE_VIOLATION) && !excludeStored) return writeLeaves(orgId, leaves, true);
      throw error;
    }
  };

  // An outage, or (when the outbox can keep the records) a lock conflict: the transaction rolled back whole, and the
  // same records may be written later, so they are kept rather than refused.
  const retryLater = (error: unknown): boolean => (outbox !== undefined ? isRetryableWriteFailure(error) : isDatabaseOutage(error));

  /** After a refused batch: each record alone, so only a record the database refuses is lost. Rethrows an outage or a lock conflict (retryLater). */
  const writeEach = async (orgId: string, chunk: readonly ProvenanceRecord[]): Promise<void> => {
    for (const record of chunk) {
      try {
        await writeChunk(orgId, [record]);
      } catch (error) {
        if (retryLater(error)) throw error;
        deps.logger.error({ org_id: orgId, request_id: record.requestId.slice(0, 128), code: failureCode(error) }, 'verification provenance record rejected');
      }
    }
  };

  const spool = async (orgId: string, chunk: readonly ProvenanceRecord[]): Promise<void> => {
    const kept = await outbox!.appendMany(OUTBOX_KIND, chunk.map((record) => ({ orgId, record }) satisfies SpooledRecord)).catch((error: unknown) => {
      deps.logger.error({ org_id: orgId, records: chunk.length, code: failureCode(error) }, 'verification provenance records lost: spool write failed');
      return chunk.map(() => true);
    });
    const lost = kept.filter((flag) => !flag).length;
    if (lost > 0) deps.logger.error({ org_id: orgId, records: lost }, 'verification provenance records lost: spool full');
  };

  // Replayed in spool order, one org and one transaction per call (a repeated call writes nothing twice).
  outbox?.register(
    OUTBOX_KIND,
    async (records) => {
      const list = records as SpooledRecord[];
      if (list.length === 0) return;
      const orgId = list[0]!.orgId;
      const chunk = list.map((item) => item.record);
      try {
        await writeChunk(orgId, chunk);
      } catch (error) {
        // An outage or a lock conflict (the transaction rolled back whole): kept for the next replay (review-34b).
        if (isRetryableWriteFailure(error)) throw error;
        await writeEach(orgId, chunk);
      }
    },
    { group: (record) => (record as SpooledRecord).orgId, batch },
  );

  const writeOrg = (orgId: string): Promise<void> => {
    const previous = running.get(orgId) ?? Promise.resolve();
    const next = previous.then(async () => {
      for (;;) {
        const records = waiting.get(orgId);
        if (records === undefined || records.length === 0) {
          waiting.delete(orgId);
          return;
        }
        const chunk = records.splice(0, batch);
        backlog -= chunk.length;
        try {
          // While anything waits in the spool, new records queue behind it (the chain keeps their order).
          if (outbox !== undefined && outbox.pending() > 0) await spool(orgId, chunk);
          else await writeChunk(orgId, chunk);
        } catch (error) {
          // A lock conflict rolled the transaction back whole: kept like an outage's records, rather than written one by
          // one, where a second conflict lost the record.
          if (retryLater(error)) {
            if (outbox !== undefined) await spool(orgId, chunk);
            else deps.logger.error({ org_id: orgId, records: chunk.length, code: failureCode(error) }, 'verification provenance lost: database unavailable');
            continue;
          }
          // One record the database refuses must not take the batch with it.
          await writeEach(orgId, chunk).catch(async (outage: unknown) => {
            if (outbox !== undefined) await spool(orgId, chunk);
            else deps.logger.error({ org_id: orgId, records: chunk.length, code: failureCode(outage) }, 'verification provenance lost: database unavailable');
          });
        }
      }
    });
    const tracked = next.finally(() => {
      if (running.get(orgId) === tracked) running.delete(orgId);
    });
    running.set(orgId, tracked);
    return tracked;
  };

  const flushAll = async (): Promise<void> => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    await Promise.all([...waiting.keys()].map((orgId) => writeOrg(orgId)));
    await Promise.all([...running.values()]);
  };

  return {
    record(orgId, record) {
      if (backlog >= maxBacklog) {
        dropped += 1;
        if (dropped === 1 || dropped % 1_000 === 0) deps.logger.warn({ dropped }, 'verification provenance backlog full: records dropped');
        return;
      }
      backlog += 1;
      // Its time is fixed by now: written later (spooled during an outage), the record keeps it as created_at. The
      // completion path stamps the record as it builds it (verification/service.ts); a caller that did not (tests,
      // tools) gets a stamped copy here.
      const stamped = record.recordedAt === undefined ? { ...record, recordedAt: recordedAt() } : record;
      const list = waiting.get(orgId);
      if (list === undefined) waiting.set(orgId, [stamped]);
      else list.push(stamped);
      if (timer === null) {
        timer = setTimeout(() => void flushAll(), flushMs);
        timer.unref();
      }
    },
    flush: flushAll,
    async get(orgId, requestId) {
      if (waiting.has(orgId) || running.has(orgId)) await flushAll();
      const result = await deps.db.withOrg(orgId, (tx) =>
        tx.query<{
          request_id: string; created_at: Date; content_hash: string; delivered: boolean; provider: string; model: string; streamed: boolean;
          sources: ProvenanceRecord['sources']; checks: ProvenanceRecord['checks']; passed: boolean | null; action: string | null; retried_from: string | null;
          risk_class: string; sb942_manifest_present: boolean; audit_seq: string; audit_hash: string;
        }>(
          `SELECT request_id, created_at, content_hash, delivered, provider, model, streamed, sources, checks, passed, action, retried_from, risk_class, sb942_manifest_present, audit_seq::text AS audit_seq, audit_hash
           FROM ai_provenance WHERE org_id = $1 AND request_id = $2`,
          [orgId, requestId],
        ),
      );
      const row = result.rows[0];
      if (row === undefined) return null;
      return {
        request_id: row.request_id,
        created_at: new Date(row.created_at).toISOString(),
        content_hash: row.content_hash,
        hash_algorithm: 'sha256',
        delivered: row.delivered,
        provider: row.provider,
        model: row.model,
        streamed: row.streamed,
        sources: row.sources,
        checks: row.checks,
        passed: row.passed,
        action: row.action,
        retried_from: row.retried_from,
        risk_class: row.risk_class,
        sb942_manifest_present: row.sb942_manifest_present,
        chain_of_custody: { audit_seq: Number(row.audit_seq), audit_hash: row.audit_hash, audit_action: PROVENANCE_AUDIT_ACTION },
      };
    },
    close: flushAll,
  };
}
