/**
 * Stand-ins for the stores the evidence writers write to, whose next writes fail the way
 * PostgreSQL fails them: a lost lock conflict (40P01, the transaction rolled back whole) or an
 * outage (the connection refused). They record what they store, each record once (the writers'
 * own ids make a write repeated by a replay a no-op), in the order it was stored: what a reader of
 * the table or the chain would find. Shared by the live-write and replay tests of
 * outbox-lock-conflict.test.ts and live-lock-conflict.test.ts, and the spool-order tests.
 */
import type { AuditEntryInput } from '../../src/audit/audit-log.ts';

export const lockConflict = (): Error => Object.assign(new Error('deadlock detected'), { code: '40P01' });
export const databaseOutage = (): Error => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
export const refusedValue = (): Error => Object.assign(new Error('value out of range'), { code: '22003' });

interface StandInTransaction {
  query(sql: string, values: unknown[]): Promise<{ rows: []; rowCount: number }>;
}

export interface FailingDbOptions {
  /** How many calls fail, from the next one on. */
  conflicts: number;
  /** What they fail with (default: a lost lock conflict). */
  failure?: () => Error;
  /**
   * Which call fails: `query` (the statement; the threat event writer) or `withOrg` (the
   * transaction as it opens; the provenance writer, whose audit entry comes first). Default `query`.
   */
  at?: 'query' | 'withOrg';
  /** The keys of the records one statement stores, read from its values (e.g. the request ids). */
  keys(values: unknown[]): string[];
}

/** A database whose next `conflicts` calls (`withOrg` or `query`) fail; `stored` holds the keys stored, in order. */
export function failingDb(options: FailingDbOptions): { db: { withOrg: (orgId: string, work: (tx: StandInTransaction) => Promise<unknown>) => Promise<unknown> }; stored: string[] } {
  const stored: string[] = [];
  const at = options.at ?? 'query';
  const failure = options.failure ?? lockConflict;
  let left = options.conflicts;
  const fail = (where: 'query' | 'withOrg') => {
    if (where !== at || left === 0) return;
    left -= 1;
    throw failure();
  };
  const tx: StandInTransaction = {
    async query(_sql, values) {
      fail('query');
      const fresh = options.keys(values).filter((key) => !stored.includes(key));
      stored.push(...fresh);
      return { rows: [], rowCount: fresh.length };
    },
  };
  return {
    db: {
      async withOrg(_orgId, work) {
        fail('withOrg');
        return work(tx);
      },
    },
    stored,
  };
}

/** The request ids of a threat_events insert (12 values a row, the request id third). */
export const threatEventKeys = (values: unknown[]): string[] => values.filter((_, index) => index % 12 === 2) as string[];

/** The request ids of an ai_provenance insert (the records as JSON, second value). */
export const provenanceKeys = (values: unknown[]): string[] => (JSON.parse(values[1] as string) as Array<{ request_id: string }>).map((row) => row.request_id);

/**
 * An audit log whose next `conflicts` writes (batch or single) lose a lock conflict, whose first
 * write of the entry targeting `loneConflict` alone loses one, and which refuses a write holding
 * an entry `refuse` names; `chained` holds the entries chained, in order.
 */
export function conflictingAudit(options: { conflicts?: number; loneConflict?: string; refuse?: (entry: AuditEntryInput) => boolean }) {
  const chained: AuditEntryInput[] = [];
  let left = options.conflicts ?? 0;
  let lone = options.loneConflict;
  const take = (entries: readonly AuditEntryInput[]) => {
    if (left > 0) {
      left -= 1;
      throw lockConflict();
    }
    if (lone !== undefined && entries.length === 1 && entries[0]!.target === lone) {
      lone = undefined;
      throw lockConflict();
    }
    if (options.refuse !== undefined && entries.some(options.refuse)) throw refusedValue();
    for (const entry of entries) if (entry.id === undefined || !chained.some((known) => known.id === entry.id)) chained.push(entry);
    return entries;
  };
  const audit = {
    appendMany: async (_orgId: string, entries: readonly AuditEntryInput[]) => take(entries),
    append: async (_orgId: string, entry: AuditEntryInput) => take([entry])[0],
    addGatherer: () => () => undefined,
  };
  return { audit, chained };
}
