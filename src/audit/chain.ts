/**
 * The audit hash chain, as pure functions: canonical form, record hash, checkpoint signature and
 * an incremental verifier. No I/O here (audit-log.ts reads and writes the rows).
 *
 * Security posture: every record's hash is HMAC-SHA256, keyed with a deployment secret derived
 * from SECRET_KEY (label "svc/audit-chain"), over the RFC 8785 (JCS) canonical form of the
 * record including its org, sequence number and the previous record's hash. Anyone without the
 * key cannot recompute a hash, so editing, inserting, deleting or reordering records breaks the
 * chain at the first affected sequence number. Deleting the newest records leaves a valid
 * prefix, so the head is also anchored outside the records: the chain-head row and signed
 * checkpoints (HMAC, label "svc/audit-checkpoint") that the verifier compares with. Comparisons
 * of hashes use constant-time equality. One chain per organization.
 */
import { createHmac } from 'node:crypto';
import canonicalize from 'canonicalize';
import { safeEqual } from '../platform/crypto.ts';

/** Previous hash of the first record of every chain. */
export const ZERO_HASH = '0'.repeat(64);
/** Version of the canonical form; part of the hashed object so the form can evolve. */
export const CHAIN_FORMAT = 1;

/** What a caller records. `details` must be a JSON object (no integers above 2^53). */
export interface AuditEntry {
  actor: string;
  action: string;
  target: string | null;
  outcome: string;
  details: Record<string, unknown>;
}

/** A stored record: the entry plus its place in the chain. */
export interface AuditRecord extends AuditEntry {
  orgId: string;
  seq: number;
  /** ISO 8601 UTC with milliseconds. */
  occurredAt: string;
  prevHash: string;
  hash: string;
}

export type UnsignedRecord = Omit<AuditRecord, 'hash'>;

/** The exact text that is hashed: JCS of the record with its previous hash. */
export function canonicalRecord(record: UnsignedRecord): string {
  // JCS sorts the members, so the order of the fields here does not change the hash.
  const text = canonicalize({ v: CHAIN_FORMAT, org_id: record.orgId, ...recordFields(record) });
  if (text === undefined) throw new Error('audit record cannot be canonicalized');
  return text;
}

/** Lower-case hex HMAC-SHA256 of the canonical record. */
export function recordHash(chainKey: string, record: UnsignedRecord): string {
  return createHmac('sha256', chainKey).update(canonicalRecord(record)).digest('hex');
}

export type CheckpointKind = 'periodic' | 'manual' | 'purge' | 'anchor';

/**
 * A signed statement "the chain of org X had hash H at seq N". `anchor` checkpoints mark where a
 * purge cut the chain: the first remaining record must link to their hash.
 */
export interface Checkpoint {
  orgId: string;
  seq: number;
  hash: string;
  kind: CheckpointKind;
  createdAt: string;
  signature: string;
}

export function checkpointSignature(checkpointKey: string, checkpoint: Omit<Checkpoint, 'signature'>): string {
  const text = canonicalize({
    v: CHAIN_FORMAT,
    org_id: checkpoint.orgId,
    seq: checkpoint.seq,
    hash: checkpoint.hash,
    kind: checkpoint.kind,
    created_at: checkpoint.createdAt,
  });
  return createHmac('sha256', checkpointKey).update(text ?? '').digest('hex');
}

export function checkpointValid(checkpointKey: string, checkpoint: Checkpoint): boolean {
  return safeEqual(checkpointSignature(checkpointKey, checkpoint), checkpoint.signature);
}

// ------------------------------------------------------------------------------ verification

export type BadReason =
  | 'hash_mismatch' // the record's content does not hash to its stored hash (edited)
  | 'prev_hash_mismatch' // the record does not link to its predecessor (reordered, replaced)
  | 'seq_gap' // a sequence number is missing (deleted) or out of order
  | 'missing_records' // fewer records than the head or a checkpoint says exist (tail deleted)
  | 'checkpoint_mismatch' // the record at a checkpoint's seq has another hash
  | 'checkpoint_signature_invalid' // a checkpoint was forged or altered
  | 'not_found'; // single-entry verification of a seq that does not exist

export interface FirstBad {
  seq: number;
  reason: BadReason;
}

export interface VerifyResult {
  ok: boolean;
  /** Records whose hash and link were checked. */
  checked: number;
  first_bad: FirstBad | null;
}

/** Where verification starts: the genesis (seq 0, zero hash) or a purge anchor. */
export interface ChainStart {
  seq: number;
  hash: string;
}

export const GENESIS: ChainStart = { seq: 0, hash: ZERO_HASH };

/**
 * Checks records in ascending seq order, one page at a time. `start` is the (seq, hash) the
 * first pushed record must follow. Stops at the first bad record; later pushes are ignored.
 */
export class ChainVerifier {
  private expectedSeq: number;
  private previousHash: string;
  private checkedCount = 0;
  private bad: FirstBad | null = null;
  private readonly seen = new Map<number, string>();

  constructor(
    private readonly chainKey: string,
    start: ChainStart,
    /** seq → hash that must be seen (checkpoints, head); recorded for `finish`. */
    private readonly expectations: ReadonlyMap<number, string> = new Map(),
  ) {
    this.expectedSeq = start.seq + 1;
    this.previousHash = start.hash;
  }

  get failed(): boolean {
    return this.bad !== null;
  }

  push(record: AuditRecord): void {
    if (this.bad !== null) return;
    if (record.seq !== this.expectedSeq) {
      this.bad = { seq: Math.min(record.seq, this.expectedSeq), reason: 'seq_gap' };
      return;
    }
    if (!safeEqual(recordHash(this.chainKey, record), record.hash)) {
      this.bad = { seq: record.seq, reason: 'hash_mismatch' };
      return;
    }
    if (!safeEqual(record.prevHash, this.previousHash)) {
      this.bad = { seq: record.seq, reason: 'prev_hash_mismatch' };
      return;
    }
    const expected = this.expectations.get(record.seq);
    if (expected !== undefined && !safeEqual(expected, record.hash)) {
      this.bad = { seq: record.seq, reason: 'checkpoint_mismatch' };
      return;
    }
    this.checkedCount++;
    this.previousHash = record.hash;
    this.expectedSeq = record.seq + 1;
    if (expected !== undefined) this.seen.set(record.seq, record.hash);
  }

  /** After the last page: every expectation at or beyond the start must have been met. */
  finish(): VerifyResult {
    if (this.bad === null) {
      const lastSeq = this.expectedSeq - 1;
      for (const seq of this.expectations.keys()) {
        if (seq > lastSeq) {
          this.bad = { seq: lastSeq + 1, reason: 'missing_records' };
          break;
        }
      }
    }
    return { ok: this.bad === null, checked: this.checkedCount, first_bad: this.bad };
  }
}

/** Verifies one complete in-memory chain (tests and small chains). */
export function verifyRecords(
  chainKey: string,
  records: readonly AuditRecord[],
  options: { start?: ChainStart; expectations?: ReadonlyMap<number, string> } = {},
): VerifyResult {
  const verifier = new ChainVerifier(chainKey, options.start ?? GENESIS, options.expectations);
  for (const record of records) {
    verifier.push(record);
    if (verifier.failed) break;
  }
  return verifier.finish();
}

/** A record's fields as the API, the database columns and the hashed text name them (snake case, without org and hash). */
function recordFields(record: UnsignedRecord) {
  return {
    seq: record.seq,
    occurred_at: record.occurredAt,
    actor: record.actor,
    action: record.action,
    target: record.target,
    outcome: record.outcome,
    details: record.details,
    prev_hash: record.prevHash,
  };
}

/** An audit record as the API and the database columns name its fields (snake case, without org). */
export function recordView(record: AuditRecord) {
  return { ...recordFields(record), hash: record.hash };
}
