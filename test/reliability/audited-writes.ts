/**
 * The setup of the tests that a change and its audit entry are stored together or not at all
 * (audited-account-writes.test.ts, audited-sign-in-writes.test.ts): the shared audit chain's
 * appends of one action made to fail (as failing-stores.ts's stand-ins fail: an outage, a lost
 * lock conflict), and what the chain then holds.
 */
import { expect, vi } from 'vitest';
import type { AuditEntryInput, AuditLog } from '../../src/audit/index.ts';
import type { Queryable } from '../../src/platform/db/index.ts';
import type { TestContext } from '../helpers/app.ts';
import { databaseOutage, lockConflict } from './failing-stores.ts';

export { databaseOutage, lockConflict };

/**
 * Makes the next `times` appends of an entry whose action is `action` fail with `failure` before
 * anything is written (the rest go through to the real chain, in the caller's transaction when it
 * gives one). A failure thrown inside a caller's transaction rolls back what it wrote, as the real
 * chain's would. Replaces the stand-in of an earlier call; restored by `vi.restoreAllMocks()`.
 */
export function failAppends(audit: AuditLog, action: string, times: number, failure: () => Error = databaseOutage): void {
  // A stand-in set before is taken away first (a spy of a spy would call itself).
  const current = audit.append;
  if (vi.isMockFunction(current)) current.mockRestore();
  const real = audit.append.bind(audit);
  let left = times;
  vi.spyOn(audit, 'append').mockImplementation(async (orgId: string, entry: AuditEntryInput, options?: { tx?: Queryable; now?: Date }) => {
    if (entry.action === action && left > 0) {
      left -= 1;
      throw failure();
    }
    return real(orgId, entry, options);
  });
}

/** The targets of the org's chained entries of `action`, in chain order. */
export async function chained(context: TestContext, orgId: string, action: string): Promise<Array<string | null>> {
  const { rows } = await context.services.db.withOrg(orgId, (tx) => tx.query<{ target: string | null }>('SELECT target FROM audit_log WHERE org_id = $1 AND action = $2 ORDER BY seq', [orgId, action]));
  return rows.map((row) => row.target);
}

/** A request refused as on an outage: 503 SERVICE_UNAVAILABLE with Retry-After. */
export function expectUnavailable(response: { statusCode: number; headers: Record<string, unknown>; json(): { error: { code: string } } }): void {
  expect(response.statusCode).toBe(503);
  expect(response.json().error.code).toBe('SERVICE_UNAVAILABLE');
  expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
}
