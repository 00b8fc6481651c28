/**
 * Makes one statement lose a lock conflict (40P01), as PostgreSQL answers a deadlock: the next
 * statement of `orgId` run through `db.withOrg` that matches `statement` is rejected once, and
 * its transaction rolled back. Used by the tests of the writes that retry a lost lock conflict
 * (retryingLockConflicts).
 */
import type { Database, Queryable } from '../../src/platform/db/index.ts';
import { lockConflict } from '../reliability/failing-stores.ts';

export interface InjectedConflict {
  /** Puts the real withOrg back. */
  restore(): void;
  /** Conflicts not yet injected (0 once the statement ran). */
  left(): number;
}

export function conflictOnce(db: Database, orgId: string, statement: RegExp): InjectedConflict {
  const realWithOrg = db.withOrg.bind(db);
  let conflicts = 1;
  db.withOrg = <T>(org: string, work: (tx: Queryable) => Promise<T>): Promise<T> =>
    realWithOrg(org, (tx) =>
      work(
        new Proxy(tx, {
          get(target, key) {
            if (key !== 'query') return Reflect.get(target, key, target) as unknown;
            return (sql: string, values?: readonly unknown[]) => {
              if (conflicts > 0 && org === orgId && statement.test(sql)) {
                conflicts -= 1;
                return Promise.reject(lockConflict());
              }
              return target.query(sql, values);
            };
          },
        }),
      ),
    );
  return { restore: () => void (db.withOrg = realWithOrg), left: () => conflicts };
}
