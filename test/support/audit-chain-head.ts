/**
 * Holding an org's audit chain head, for the tests of writers that wait for it (PostgreSQL: PGlite
 * runs one transaction at a time). Every audited write takes the head first (the `INSERT … ON
 * CONFLICT DO UPDATE` on audit_chain_heads, a row lock) and then inserts its record; here one such
 * append is stopped right after it took the head and holds it, its transaction open, until
 * `release()`. Another audited write of the org then waits for the head behind it.
 */
import type { Database, Queryable } from '../../src/platform/db/index.ts';
import type { Services } from '../../src/services.ts';
import { waitFor } from '../helpers/wait.ts';

/** An audit entry for tests, by action. */
export const testEntry = (action: string) => ({ actor: 'cli', action, target: null, outcome: 'success' as const, details: {} });

export interface HeldChainHead {
  /** The holding append, settled once released. */
  readonly appended: Promise<unknown>;
  /** Lets the holding append insert its record and commit (more calls do nothing). */
  release(): void;
}

/**
 * Appends a first entry (`test.first`: the head row exists, as for any org that was ever audited),
 * then starts an append of `action` and resolves once it holds the chain head.
 */
export async function holdAuditChainHead(services: Pick<Services, 'db' | 'audit'>, orgId: string, action: string): Promise<HeldChainHead> {
  const { db, audit } = services;
  await audit.append(orgId, testEntry('test.first'));
  let holdingHead!: () => void;
  const headTaken = new Promise<void>((resolve) => (holdingHead = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const paused = (tx: Queryable): Queryable =>
    new Proxy(tx, {
      get(target, key) {
        if (key !== 'query') return Reflect.get(target, key, target) as unknown;
        return async (sql: string, values?: readonly unknown[]) => {
          const result = await target.query(sql, values);
          if (/INSERT INTO audit_chain_heads/.test(sql)) {
            holdingHead();
            await released;
          }
          return result;
        };
      },
    });
  const appended = db.withOrg(orgId, (tx) => audit.append(orgId, testEntry(action), { tx: paused(tx) }));
  // A holder that fails before it takes the head fails the caller, rather than leaving it waiting.
  await Promise.race([headTaken, appended.then(() => Promise.reject(new Error('the holding append committed without stopping at the chain head')))]);
  return { appended, release };
}

/** Resolves once a statement on audit_chain_heads of this database waits for a lock (the head held above). */
export async function waitForChainHeadWaiter(db: Database, timeoutMs = 10_000): Promise<void> {
  await waitFor(async () => {
    const waiting = await db.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%audit_chain_heads%'`,
    );
    return (waiting.rows[0]?.count ?? 0) > 0 ? true : undefined;
  }, timeoutMs);
}
