/**
 * The audit log: appends to each org's hash chain, verifies it, checkpoints its head and purges
 * records past retention.
 *
 * Security posture: appends are serialized per org by a row lock on the org's chain-head row
 * (`SELECT … FOR UPDATE` inside the append transaction), so concurrent writers on any number of
 * replicas never fork a chain; the same statement works on PGlite. The application role may
 * insert and read audit records but not update or delete them (migration 030); only the owner
 * connection's retention purge deletes, and it first writes a signed checkpoint and a signed
 * anchor so the remaining chain still verifies. Verification never trusts the stored hashes:
 * it recomputes each one with the chain key and compares the newest records with the head row
 * and the latest signed checkpoint, so deleting the newest records is detected too. Checkpoints
 * are also written to the log stream, an anchor outside the database.
 */
import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../platform/db/index.ts';
import type { Logger } from '../platform/logger.ts';
import type { JobQueue } from '../platform/queue.ts';
import { deriveSecret } from '../platform/secrets.ts';
import { SvcError } from '../platform/errors.ts';
import { sanitizeJson, sanitizeParam } from '../platform/db/sanitize.ts';
import { isUuid } from '../platform/uuid.ts';
import {
  ChainVerifier,
  GENESIS,
  ZERO_HASH,
  checkpointSignature,
  checkpointValid,
  recordHash,
  recordView,
  type AuditEntry,
  type AuditRecord,
  type ChainStart,
  type Checkpoint,
  type CheckpointKind,
  type VerifyResult,
} from './chain.ts';

/** 7 years, the spec's audit retention. */
export const RETENTION_DAYS = 2_555;
/** A periodic checkpoint is written in the append transaction every this many records. */
export const CHECKPOINT_EVERY = 100;
const PAGE_SIZE = 1_000;
const MAX_TEXT = 512;
const MAX_DETAILS_BYTES = 16_384;

export interface AuditServices {
  readonly config: { readonly secretKey: string };
  readonly db: Database;
  readonly queue?: JobQueue;
  readonly logger?: Logger;
}

export type VerifyOptions =
  | { level: 'full' }
  | { level: 'entry'; seq: number }
  | { level: 'last'; n: number };

export interface AuditListOptions {
  limit?: number;
  /** Records with seq below this (pagination cursor, newest first). */
  before?: number;
  action?: string;
  /** Records whose details.session_id is this (MCP session audit). */
  sessionId?: string;
}

export interface AuditLog {
  /**
   * Appends one record to the org's chain; with `tx`, inside the caller's org transaction. Null
   * when the entry's `id` is already in the chain (nothing appended).
   */
  append(orgId: string, entry: AuditEntryInput, options?: { tx?: Queryable; now?: Date }): Promise<AuditRecord | null>;
  /**
   * Appends several entries in order in one transaction (one lock of the chain head). Entries
   * whose `id` the chain already holds are skipped: the records returned are those appended.
   */
  appendMany(orgId: string, entries: readonly AuditEntryInput[], options?: { tx?: Queryable; now?: Date }): Promise<AuditRecord[]>;
  verify(orgId: string, options?: VerifyOptions): Promise<VerifyResult>;
  /** Writes a signed checkpoint of the current head; null when the chain is empty. */
  checkpoint(orgId: string, kind?: CheckpointKind): Promise<Checkpoint | null>;
  /** Deletes records older than the retention period for every org; returns how many. */
  purge(now?: Date, retentionDays?: number): Promise<{ orgs: number; deleted: number }>;
  list(orgId: string, options?: AuditListOptions): Promise<AuditRecord[]>;
  /** Org ids that have a chain (the CLI's `audit verify` without --org). */
  orgs(): Promise<string[]>;
  /**
   * A writer that gathers entries before appending them (the MCP audit) registers how to append
   * an org's gathered entries now: `list` and `verify` wait for every registered writer first, so
   * a read sees each entry this process made before it (read your writes). Returns a function
   * that unregisters it.
   */
  addGatherer(flush: (orgId: string) => Promise<void>): () => void;
}

export type AuditEntryInput = Omit<AuditEntry, 'target' | 'details'> & {
  target?: string | null;
  details?: Record<string, unknown>;
  /**
   * The entry's own id (a UUID), fixed by a writer that may hand the same entry over twice (the
   * evidence outbox after a crash): an entry whose id the chain already holds is skipped, never
   * chained twice. Without it the entry gets a new id.
   */
  id?: string;
  /**
   * When the audited thing happened (ISO 8601), fixed by a writer that may append the entry later
   * (the evidence outbox's spool after an outage, its journal after a crash): it becomes the
   * record's occurred_at, hashed like any other. Without it (or a time not yet come) the record gets
   * the append's time, as before.
   */
  occurredAt?: string;
};

interface RecordRow {
  org_id: string;
  seq: string;
  occurred_at: Date;
  actor: string;
  action: string;
  target: string | null;
  outcome: string;
  details: Record<string, unknown>;
  prev_hash: string;
  hash: string;
}

interface CheckpointRow {
  org_id: string;
  seq: string;
  hash: string;
  kind: CheckpointKind;
  created_at: Date;
  signature: string;
}

const RECORD_COLUMNS = 'org_id::text, seq::text, occurred_at, actor, action, target, outcome, details, prev_hash, hash';
const CHECKPOINT_COLUMNS = 'org_id::text, seq::text, hash, kind, created_at, signature';

export function createAuditLog(services: AuditServices): AuditLog {
  const chainKey = deriveSecret(services.config.secretKey, 'svc/audit-chain');
  const checkpointKey = deriveSecret(services.config.secretKey, 'svc/audit-checkpoint');
  const { db } = services;
  const gatherers = new Set<(orgId: string) => Promise<void>>();
  /** Appends what the registered writers gathered for the org; a failed write stays theirs (journal, spool), and the read goes on. */
  const flushGathered = async (orgId: string): Promise<void> => {
    if (gatherers.size === 0) return;
    await Promise.all([...gatherers].map((flush) => flush(orgId).catch((error: unknown) => services.logger?.warn({ org_id: orgId, err: error instanceof Error ? error.message : String(error) }, 'gathered audit entries could not be appended before a read; the read shows the chain without them'))));
  };

  const writeCheckpoint = async (tx: Queryable, orgId: string, seq: number, hash: string, kind: CheckpointKind): Promise<Checkpoint> => {
    const unsigned = { orgId, seq, hash, kind, createdAt: new Date().toISOString() };
    const checkpoint: Checkpoint = { ...unsigned, signature: checkpointSignature(checkpointKey, unsigned) };
    await tx.query(
      'INSERT INTO audit_checkpoints (id, org_id, seq, hash, kind, created_at, signature) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [randomUUID(), orgId, seq, hash, kind, checkpoint.createdAt, checkpoint.signature],
    );
    services.logger?.info({ audit_checkpoint: { org_id: orgId, seq, hash, kind, signature: checkpoint.signature } }, 'audit checkpoint');
    return checkpoint;
  };

  /** Appends entries in order under one lock of the org's chain head; returns the records. */
  const appendIn = async (tx: Queryable, orgId: string, inputs: readonly AuditEntryInput[], now: Date): Promise<AuditRecord[]> => {
    if (inputs.length === 0) return [];
    const entries = inputs.map(normalizeEntry);
    const ids = inputs.map((input) => (input.id !== undefined && isUuid(input.id) ? input.id.toLowerCase() : null));
    // One statement creates the head on the first append and otherwise locks it (ON CONFLICT DO
    // UPDATE takes the row lock): concurrent appends of this org wait here, in order.
    const head = await tx.query<{ seq: string; hash: string }>(
      `INSERT INTO audit_chain_heads AS h (org_id, seq, hash) VALUES ($1, 0, $2)
       ON CONFLICT (org_id) DO UPDATE SET seq = h.seq RETURNING h.seq::text, h.hash`,
      [orgId, ZERO_HASH],
    );
    const current = head.rows[0];
    if (current === undefined) throw new Error('audit chain head missing after upsert');
    // Under the head's lock: no other writer can chain one of these ids between this read and the insert.
    const given = ids.filter((id) => id !== null);
    const stored = new Set<string>();
    if (given.length > 0) {
      const found = await tx.query<{ id: string }>('SELECT id::text FROM audit_log WHERE id = ANY($1::uuid[])', [given]);
      for (const row of found.rows) stored.add(row.id);
    }
    let seq = Number(current.seq);
    let prevHash = current.hash;
    const records: AuditRecord[] = [];
    const recordIds: string[] = [];
    for (const [index, entry] of entries.entries()) {
      const id = ids[index] ?? randomUUID();
      if (stored.has(id)) continue;
      stored.add(id);
      recordIds.push(id);
      seq += 1;
      const unsigned = { orgId, seq, occurredAt: occurredAt(inputs[index]!, now), ...entry, prevHash };
      const record: AuditRecord = { ...unsigned, hash: recordHash(chainKey, unsigned) };
      records.push(record);
      prevHash = record.hash;
    }
    // One statement with one parameter for the whole batch: on the embedded engine every
    // statement is parsed, planned and bound inside svc's process, and a VALUES list with ten
    // parameters per row cost more to parse and bind than the rows cost to store.
    if (records.length === 0) return [];
    const rows = records.map((record, index) => ({ id: recordIds[index], ...recordView(record) }));
    const last = records[records.length - 1]!;
    await tx.query(
      `WITH appended AS (
         INSERT INTO audit_log (id, org_id, seq, occurred_at, actor, action, target, outcome, details, prev_hash, hash)
         SELECT r.id, $1, r.seq, r.occurred_at, r.actor, r.action, r.target, r.outcome, r.details, r.prev_hash, r.hash
         FROM jsonb_to_recordset($2::jsonb) AS r(id uuid, seq bigint, occurred_at timestamptz, actor text, action text, target text, outcome text, details jsonb, prev_hash text, hash text)
         RETURNING seq)
       UPDATE audit_chain_heads SET seq = $3, hash = $4, updated_at = now()
        WHERE org_id = $1`,
      [orgId, JSON.stringify(rows), last.seq, last.hash],
    );
    for (const record of records) {
      if (record.seq % CHECKPOINT_EVERY === 0) await writeCheckpoint(tx, orgId, record.seq, record.hash, 'periodic');
    }
    return records;
  };

  const readStart = async (tx: Queryable, orgId: string): Promise<{ start: ChainStart; bad: VerifyResult | null }> => {
    const anchors = await tx.query<CheckpointRow>(
      `SELECT ${CHECKPOINT_COLUMNS} FROM audit_checkpoints WHERE org_id = $1 AND kind = 'anchor' ORDER BY audit_checkpoints.seq DESC LIMIT 1`,
      [orgId],
    );
    const anchorRow = anchors.rows[0];
    if (anchorRow === undefined) return { start: GENESIS, bad: null };
    const anchor = toCheckpoint(anchorRow);
    if (!checkpointValid(checkpointKey, anchor)) {
      return { start: GENESIS, bad: { ok: false, checked: 0, first_bad: { seq: anchor.seq, reason: 'checkpoint_signature_invalid' } } };
    }
    return { start: { seq: anchor.seq, hash: anchor.hash }, bad: null };
  };

  /** seq → hash the chain must contain: latest signed checkpoint and the head row. */
  const readExpectations = async (tx: Queryable, orgId: string): Promise<{ expectations: Map<number, string>; bad: VerifyResult | null }> => {
    const expectations = new Map<number, string>();
    const latest = await tx.query<CheckpointRow>(
      `SELECT ${CHECKPOINT_COLUMNS} FROM audit_checkpoints WHERE org_id = $1 ORDER BY audit_checkpoints.seq DESC, created_at DESC LIMIT 1`,
      [orgId],
    );
    const checkpointRow = latest.rows[0];
    if (checkpointRow !== undefined) {
      const checkpoint = toCheckpoint(checkpointRow);
      if (!checkpointValid(checkpointKey, checkpoint)) {
        return { expectations, bad: { ok: false, checked: 0, first_bad: { seq: checkpoint.seq, reason: 'checkpoint_signature_invalid' } } };
      }
      expectations.set(checkpoint.seq, checkpoint.hash);
    }
    const head = await tx.query<{ seq: string; hash: string }>('SELECT seq::text, hash FROM audit_chain_heads WHERE org_id = $1', [orgId]);
    const headRow = head.rows[0];
    if (headRow !== undefined && Number(headRow.seq) > 0 && !expectations.has(Number(headRow.seq))) {
      expectations.set(Number(headRow.seq), headRow.hash);
    }
    return { expectations, bad: null };
  };

  const feed = async (tx: Queryable, orgId: string, verifier: ChainVerifier, fromSeq: number, toSeq: number | null): Promise<void> => {
    let after = fromSeq;
    for (;;) {
      const page = await tx.query<RecordRow>(
        `SELECT ${RECORD_COLUMNS} FROM audit_log WHERE org_id = $1 AND seq > $2 ${toSeq === null ? '' : 'AND seq <= $4'}
         ORDER BY audit_log.seq LIMIT $3`,
        toSeq === null ? [orgId, after, PAGE_SIZE] : [orgId, after, PAGE_SIZE, toSeq],
      );
      for (const row of page.rows) {
        verifier.push(toRecord(row));
        if (verifier.failed) return;
      }
      if (page.rows.length < PAGE_SIZE) return;
      after = Number(page.rows[page.rows.length - 1]!.seq);
    }
  };

  const verify = async (orgId: string, options: VerifyOptions = { level: 'full' }): Promise<VerifyResult> => {
    await flushGathered(orgId);
    return db.withOrg(orgId, async (tx) => {
      // Anchors and expectations first: records appended meanwhile only extend the chain.
      const { start, bad: anchorBad } = await readStart(tx, orgId);
      if (anchorBad !== null) return anchorBad;
      const { expectations, bad } = await readExpectations(tx, orgId);
      if (bad !== null) return bad;

      if (options.level === 'full') {
        const verifier = new ChainVerifier(chainKey, start, expectations);
        await feed(tx, orgId, verifier, start.seq, null);
        return verifier.finish();
      }

      if (options.level === 'last') {
        const n = Math.max(1, Math.floor(options.n));
        const lastRow = await tx.query<{ seq: string | null }>('SELECT max(seq)::text AS seq FROM audit_log WHERE org_id = $1', [orgId]);
        // The newest stored record, not the head: a deleted tail then shows as missing_records.
        const lastSeq = Number(lastRow.rows[0]?.seq ?? 0);
        const firstSeq = Math.max(start.seq + 1, lastSeq - n + 1);
        const chainStart = await predecessor(tx, orgId, firstSeq, start);
        if ('bad' in chainStart) return chainStart.bad;
        const verifier = new ChainVerifier(chainKey, chainStart, expectations);
        await feed(tx, orgId, verifier, chainStart.seq, null);
        return verifier.finish();
      }

      const seq = Math.floor(options.seq);
      const exists = await tx.query('SELECT 1 FROM audit_log WHERE org_id = $1 AND seq = $2', [orgId, seq]);
      if (seq <= start.seq || exists.rows.length === 0) return { ok: false, checked: 0, first_bad: { seq, reason: 'not_found' } };
      const chainStart = await predecessor(tx, orgId, seq, start);
      if ('bad' in chainStart) return chainStart.bad;
      const entryExpectations = new Map([...expectations].filter(([expectedSeq]) => expectedSeq === seq));
      const verifier = new ChainVerifier(chainKey, chainStart, entryExpectations);
      await feed(tx, orgId, verifier, chainStart.seq, seq);
      const result = verifier.finish();
      if (result.ok && result.checked === 0) return { ok: false, checked: 0, first_bad: { seq, reason: 'not_found' } };
      if (!result.ok) return result;
      // The successor (when present) must link to this entry.
      const next = await tx.query<RecordRow>(`SELECT ${RECORD_COLUMNS} FROM audit_log WHERE org_id = $1 AND seq = $2`, [orgId, seq + 1]);
      const nextRow = next.rows[0];
      if (nextRow !== undefined) {
        const mine = await tx.query<{ hash: string }>('SELECT hash FROM audit_log WHERE org_id = $1 AND seq = $2', [orgId, seq]);
        if (nextRow.prev_hash !== mine.rows[0]?.hash) return { ok: false, checked: 1, first_bad: { seq: seq + 1, reason: 'prev_hash_mismatch' } };
      }
      return result;
    });
  };

  /** The (seq, hash) that record `seq` must follow: its predecessor's stored hash, or the start. */
  const predecessor = async (tx: Queryable, orgId: string, seq: number, start: ChainStart): Promise<ChainStart | { bad: VerifyResult }> => {
    if (seq - 1 <= start.seq) return start;
    const previous = await tx.query<{ hash: string }>('SELECT hash FROM audit_log WHERE org_id = $1 AND seq = $2', [orgId, seq - 1]);
    const row = previous.rows[0];
    if (row === undefined) return { bad: { ok: false, checked: 0, first_bad: { seq: seq - 1, reason: 'seq_gap' } } };
    return { seq: seq - 1, hash: row.hash };
  };

  const checkpoint = async (orgId: string, kind: CheckpointKind = 'manual'): Promise<Checkpoint | null> =>
    db.transaction(async (tx) => {
      const head = await tx.query<{ seq: string; hash: string }>('SELECT seq::text, hash FROM audit_chain_heads WHERE org_id = $1 FOR UPDATE', [orgId]);
      const row = head.rows[0];
      if (row === undefined || Number(row.seq) === 0) return null;
      return writeCheckpoint(tx, orgId, Number(row.seq), row.hash, kind);
    });

  const purge = async (now: Date = new Date(), retentionDays: number = RETENTION_DAYS): Promise<{ orgs: number; deleted: number }> => {
    const cutoff = new Date(now.getTime() - retentionDays * 86_400_000);
    const candidates = await db.query<{ org_id: string }>('SELECT DISTINCT org_id::text FROM audit_log WHERE occurred_at < $1', [cutoff.toISOString()]);
    let deleted = 0;
    for (const { org_id: orgId } of candidates.rows) {
      deleted += await db.transaction(async (tx) => {
        const head = await tx.query<{ seq: string; hash: string }>('SELECT seq::text, hash FROM audit_chain_heads WHERE org_id = $1 FOR UPDATE', [orgId]);
        const headRow = head.rows[0];
        if (headRow === undefined) return 0;
        await writeCheckpoint(tx, orgId, Number(headRow.seq), headRow.hash, 'purge');
        // The newest record older than the cutoff becomes the anchor the rest links to.
        const last = await tx.query<{ seq: string; hash: string }>(
          'SELECT seq::text, hash FROM audit_log WHERE org_id = $1 AND occurred_at < $2 ORDER BY audit_log.seq DESC LIMIT 1',
          [orgId, cutoff.toISOString()],
        );
        const anchor = last.rows[0];
        if (anchor === undefined) return 0;
        await writeCheckpoint(tx, orgId, Number(anchor.seq), anchor.hash, 'anchor');
        const removed = await tx.query('DELETE FROM audit_log WHERE org_id = $1 AND seq <= $2', [orgId, Number(anchor.seq)]);
        return removed.rowCount;
      });
    }
    return { orgs: candidates.rows.length, deleted };
  };

  const list = async (orgId: string, options: AuditListOptions = {}): Promise<AuditRecord[]> => {
    await flushGathered(orgId);
    return db.withOrg(orgId, async (tx) => {
      const limit = Math.min(Math.max(1, Math.floor(options.limit ?? 50)), 500);
      const params: unknown[] = [orgId, limit];
      const conditions = ['org_id = $1'];
      if (options.before !== undefined) {
        params.push(options.before);
        conditions.push(`seq < $${params.length}`);
      }
      if (options.action !== undefined) {
        params.push(options.action);
        conditions.push(`action = $${params.length}`);
      }
      if (options.sessionId !== undefined) {
        params.push(options.sessionId);
        conditions.push(`details->>'session_id' = $${params.length}`);
      }
      const result = await tx.query<RecordRow>(`SELECT ${RECORD_COLUMNS} FROM audit_log WHERE ${conditions.join(' AND ')} ORDER BY audit_log.seq DESC LIMIT $2`, params);
      return result.rows.map(toRecord);
    });
  };

  return {
    async append(orgId, entry, options = {}) {
      const now = options.now ?? new Date();
      const records = options.tx !== undefined ? await appendIn(options.tx, orgId, [entry], now) : await db.withOrg(orgId, (tx) => appendIn(tx, orgId, [entry], now));
      return records[0] ?? null;
    },
    async appendMany(orgId, entries, options = {}) {
      const now = options.now ?? new Date();
      if (options.tx !== undefined) return appendIn(options.tx, orgId, entries, now);
      return db.withOrg(orgId, (tx) => appendIn(tx, orgId, entries, now));
    },
    verify,
    checkpoint,
    purge,
    list,
    async orgs() {
      const result = await db.query<{ org_id: string }>('SELECT org_id::text FROM audit_chain_heads ORDER BY org_id');
      return result.rows.map((row) => row.org_id);
    },
    addGatherer(flush) {
      gatherers.add(flush);
      return () => {
        gatherers.delete(flush);
      };
    },
  };
}

/**
 * The record's time: the entry's own when it names a real instant no later than the append (a
 * journaled or spooled entry written late), else the append's. In milliseconds, as the record is
 * read back (toRecord) and verified: what is hashed equals what PostgreSQL gives back.
 */
function occurredAt(input: AuditEntryInput, now: Date): string {
  const given = typeof input.occurredAt === 'string' ? Date.parse(input.occurredAt) : Number.NaN;
  return new Date(Number.isNaN(given) || given > now.getTime() ? now.getTime() : given).toISOString();
}

/** Bounds and normalizes an entry so that what is hashed equals what PostgreSQL gives back. */
function normalizeEntry(input: AuditEntryInput): AuditEntry {
  const text = (name: string, value: unknown, required: boolean): string | null => {
    if (value === undefined || value === null) {
      if (required) throw new SvcError('VALIDATION_FAILED', { details: { field: name } });
      return null;
    }
    if (typeof value !== 'string' || value.length === 0 || value.length > MAX_TEXT) {
      throw new SvcError('VALIDATION_FAILED', { details: { field: name } });
    }
    // Stored (and hashed) exactly as the database layer would store it: NUL becomes U+FFFD.
    return sanitizeParam(value) as string;
  };
  const details = input.details ?? {};
  if (typeof details !== 'object' || details === null || Array.isArray(details)) {
    throw new SvcError('VALIDATION_FAILED', { details: { field: 'details' } });
  }
  // JSON round trip: drops undefined, turns Dates into strings; jsonb then gives back the same value.
  const serialized = JSON.stringify(sanitizeJson(details), (_key, value: unknown) => {
    if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) {
      throw new SvcError('VALIDATION_FAILED', { details: { field: 'details', reason: 'integer_beyond_2^53' } });
    }
    return value;
  });
  if (Buffer.byteLength(serialized) > MAX_DETAILS_BYTES) throw new SvcError('VALIDATION_FAILED', { details: { field: 'details', reason: 'too_large' } });
  return {
    actor: text('actor', input.actor, true)!,
    action: text('action', input.action, true)!,
    target: text('target', input.target, false),
    outcome: text('outcome', input.outcome, true)!,
    details: JSON.parse(serialized) as Record<string, unknown>,
  };
}

function toRecord(row: RecordRow): AuditRecord {
  return {
    orgId: row.org_id,
    seq: Number(row.seq),
    occurredAt: row.occurred_at.toISOString(),
    actor: row.actor,
    action: row.action,
    target: row.target,
    outcome: row.outcome,
    details: typeof row.details === 'string' ? (JSON.parse(row.details) as Record<string, unknown>) : row.details,
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

function toCheckpoint(row: CheckpointRow): Checkpoint {
  return {
    orgId: row.org_id,
    seq: Number(row.seq),
    hash: row.hash,
    kind: row.kind,
    createdAt: row.created_at.toISOString(),
    signature: row.signature,
  };
}
