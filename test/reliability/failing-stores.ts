/**
 * Stand-ins for the stores the evidence writers write to, whose next writes fail the way
 * PostgreSQL fails them: a lost lock conflict (40P01, the transaction rolled back whole) or an
 * outage (the connection refused). They record what they store, each record once (the writers'
 * own ids make a write repeated by a replay a no-op), in the order it was stored: what a reader of
 * the table or the chain would find. Shared by the live-write and replay tests of
 * outbox-lock-conflict.test.ts and live-lock-conflict.test.ts, and the spool-order tests.
 *
 * Also the setup the outage tests share (spool-order.test.ts, occurred-at.test.ts): a test app and
 * a directory for their outboxes, the real database behind an outage switch, and
 * `recordThroughOutage`: records made during an outage, the outage ended, the outbox replayed.
 * And `failingAuditAppends`, the real audit chain with its next appends of one action failing
 * (admin-audit-atomic.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import type { AuditEntryInput, AuditLog } from '../../src/audit/audit-log.ts';
import type { ThreatEventRow } from '../../src/detection/events.ts';
import type { Database } from '../../src/platform/db/index.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createOutbox, type Outbox } from '../../src/platform/outbox.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';

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
 * An audit log whose next `conflicts` writes (batch or single) lose a lock conflict (or fail with
 * `failure`), whose first write of the entry targeting `loneConflict` alone loses one, and which
 * refuses a write holding an entry `refuse` names; `chained` holds the entries chained, in order.
 */
export function conflictingAudit(options: { conflicts?: number; failure?: () => Error; loneConflict?: string; refuse?: (entry: AuditEntryInput) => boolean }) {
  const chained: AuditEntryInput[] = [];
  let left = options.conflicts ?? 0;
  let lone = options.loneConflict;
  const take = (entries: readonly AuditEntryInput[]) => {
    if (left > 0) {
      left -= 1;
      throw (options.failure ?? lockConflict)();
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

/**
 * Makes the real audit chain's single appends of `action` fail: the next `failures` of them throw
 * `failure()` (default: an outage) before anything is written, as PostgreSQL fails the statement;
 * other appends, and later ones, go through to the chain. Thrown inside a caller's transaction
 * (options.tx), the failure rolls that transaction back, as the real chain's would. `restore()`
 * puts the real append back.
 */
export function failingAuditAppends(audit: AuditLog, options: { action: string; failures: number; failure?: () => Error }): { restore(): void } {
  const real = audit.append;
  let left = options.failures;
  audit.append = async (orgId, entry, appendOptions) => {
    if (entry.action === options.action && left > 0) {
      left -= 1;
      throw (options.failure ?? databaseOutage)();
    }
    return real.call(audit, orgId, entry, appendOptions);
  };
  return {
    restore() {
      audit.append = real;
    },
  };
}

/** A logger that writes nothing (the writers log every outage they meet). */
export const quietLogger = createLogger('error', { write: () => undefined } as never);

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A blocked request's threat event, as detection records it. */
export const threatRow = (orgId: string, requestId: string): ThreatEventRow => ({ orgId, requestId, pillar: 'api_security', kind: 'http', threatScore: 0.9, decision: 'block', patterns: [], sessionId: null, gatewayId: null, details: {} });

/**
 * A test app (built before the file's tests, closed after them) and a directory for the outboxes
 * they make (removed after them): `outbox(name)` makes one in its own subdirectory.
 */
export function outageTestbed(prefix: string): { readonly context: TestContext; outbox(name: string): Outbox } {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  let context: TestContext | undefined;
  beforeAll(async () => {
    context = await createTestApp();
  }, 60_000);
  afterAll(async () => {
    await context?.close();
    rmSync(directory, { recursive: true, force: true });
  });
  return {
    get context() {
      if (context === undefined) throw new Error('the test app is built in beforeAll');
      return context;
    },
    outbox: (name) => createOutbox({ dir: join(directory, name), logger: quietLogger }),
  };
}

/** `real` behind a switch: while `down`, every transaction fails as on an outage (the connection refused). */
export function switchedDatabase(real: Pick<Database, 'withOrg'>): { db: Database; down: boolean } {
  const withOrg: Database['withOrg'] = (orgId, work) => (state.down ? Promise.reject(databaseOutage()) : real.withOrg(orgId, work));
  const state = { down: true, db: { withOrg } as Database };
  return state;
}

/**
 * Makes one record per id while the database is down, `gapMs` apart (`record` makes it, `flush`
 * hands it to the database, which refuses it: spooled), lets the outage go on for `outageMs`, ends
 * it (`recover`) and replays the outbox. Returns when each record was made and when the outage
 * ended (epoch ms). Checks that every record waited in the spool and that the replay wrote them all.
 */
export async function recordThroughOutage(options: {
  outbox: Outbox;
  ids: readonly string[];
  record(id: string): unknown;
  flush(): Promise<void>;
  recover(): void;
  gapMs?: number;
  outageMs?: number;
}): Promise<{ recorded: Map<string, number>; recoveredAt: number }> {
  const recorded = new Map<string, number>();
  for (const id of options.ids) {
    recorded.set(id, Date.now());
    await options.record(id);
    await options.flush(); // meets the outage: spooled
    await sleep(options.gapMs ?? 300);
  }
  expect(options.outbox.pending()).toBe(options.ids.length);
  await sleep(options.outageMs ?? 1_000); // the outage goes on
  options.recover();
  const recoveredAt = Date.now();
  await options.outbox.replay();
  expect(options.outbox.pending()).toBe(0);
  return { recorded, recoveredAt };
}
