/**
 * What `svc audit verify [--org ID] [--last N] --json` prints: one org, or every org that has a
 * chain; full verification, or the last N records of each chain.
 * → { ok, checked, first_bad: { org_id, seq, reason } | null, orgs, results: [...] }
 */
import type { AuditLog } from './audit-log.ts';
import type { FirstBad } from './chain.ts';

export interface AuditVerifyReport {
  ok: boolean;
  checked: number;
  first_bad: (FirstBad & { org_id: string }) | null;
  orgs: number;
  results: Array<{ org_id: string; ok: boolean; checked: number; first_bad: FirstBad | null }>;
}

export async function runAuditVerify(audit: AuditLog, options: { orgId?: string; last?: number } = {}): Promise<AuditVerifyReport> {
  const orgIds = options.orgId !== undefined ? [options.orgId] : await audit.orgs();
  const results: AuditVerifyReport['results'] = [];
  for (const orgId of orgIds) {
    const result = await audit.verify(orgId, options.last !== undefined ? { level: 'last', n: options.last } : { level: 'full' });
    results.push({ org_id: orgId, ...result });
  }
  const bad = results.find((result) => !result.ok);
  return {
    ok: bad === undefined,
    checked: results.reduce((sum, result) => sum + result.checked, 0),
    first_bad: bad?.first_bad ? { org_id: bad.org_id, ...bad.first_bad } : null,
    orgs: results.length,
    results,
  };
}
