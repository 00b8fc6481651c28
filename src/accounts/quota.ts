/**
 * The findings-per-month quota (spec, Plans: Community 100K, Starter 1M, Pro 10M, Enterprise
 * unlimited), enforced where threat events are recorded.
 *
 * What happens at the quota (docs/accounts-plans.md, docs/decisions.md): detection and the
 * response policy never stop — every request is still scored, and blocked and challenged requests
 * are still refused AND recorded (a block's evidence is never dropped). What stops, until the
 * month ends (UTC) or the plan changes, is storing the findings of the log and alert bands: they
 * are counted as dropped instead. Webhook alerts for them still fire.
 *
 * The count itself is the database's (migration 102's trigger counts the findings stored, in the
 * insert's transaction); this module answers `admit` from memory on the request path and re-reads
 * an org's count and plan at most every `refreshMs` (default 10 s) off it, so an org may pass its
 * quota by the findings of those few seconds. Dropped counts are added to the month's row at the
 * next refresh.
 */
import { LRUCache } from 'lru-cache';
import type { Database } from '../platform/db/index.ts';
import type { Logger } from '../platform/logger.ts';
import { effectivePlan, findingsQuota, type Plan } from './plans.ts';
import { entryBound } from '../platform/lru.ts';

interface QuotaState {
  /** First day of the month the answer is for (YYYY-MM-01). */
  month: string;
  overQuota: boolean;
  checkedAt: number;
}

export interface FindingsQuota {
  /** Whether a finding of this decision is stored (true for block and challenge, always). */
  admit(orgId: string, decision: string): boolean;
  /** Reads the org's count and plan now (tests; a plan change). */
  refresh(orgId: string): Promise<void>;
  /** Forgets the cached answer (the plan changed): the next `admit` re-reads. */
  forget(orgId: string): void;
  /** Dropped findings not yet added to the database's count. */
  unflushed(orgId: string): number;
  close(): Promise<void>;
}

const monthOf = (now: Date) => `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}-01`;

export function createFindingsQuota(deps: { db: Database; logger: Logger; refreshMs?: number }): FindingsQuota {
  const { db, logger } = deps;
  const refreshMs = deps.refreshMs ?? 10_000;
  const states = new LRUCache<string, QuotaState>(entryBound(50_000));
  const dropped = new Map<string, { month: string; count: number }>();
  const refreshing = new Map<string, Promise<void>>();
  /** A database outage fails every org's read: one warning a minute says so. */
  let lastFailureLog = 0;

  const read = async (orgId: string): Promise<void> => {
    const month = monthOf(new Date());
    const pending = dropped.get(orgId);
    dropped.delete(orgId);
    try {
      const state = await db.withOrg(orgId, async (tx) => {
        if (pending !== undefined && pending.count > 0) {
          await tx.query(
            `INSERT INTO org_usage AS u (org_id, month, findings_dropped) VALUES ($1, $2, $3)
             ON CONFLICT (org_id, month) DO UPDATE SET findings_dropped = u.findings_dropped + EXCLUDED.findings_dropped`,
            [orgId, pending.month, pending.count],
          );
        }
        const org = await tx.query<{ plan: Plan; trial_started_at: Date | null; trial_ends_at: Date | null }>('SELECT plan, trial_started_at, trial_ends_at FROM orgs WHERE id = $1', [orgId]);
        const row = org.rows[0];
        if (row === undefined) return { month, overQuota: false, checkedAt: Date.now() };
        const limit = findingsQuota(effectivePlan({ plan: row.plan, trialStartedAt: row.trial_started_at, trialEndsAt: row.trial_ends_at }));
        if (limit === null) return { month, overQuota: false, checkedAt: Date.now() };
        const usage = await tx.query<{ findings: string }>('SELECT findings::text FROM org_usage WHERE org_id = $1 AND month = $2', [orgId, month]);
        return { month, overQuota: Number(usage.rows[0]?.findings ?? 0) >= limit, checkedAt: Date.now() };
      });
      const before = states.get(orgId);
      if (state.overQuota && before?.overQuota !== true) logger.warn({ org_id: orgId, month }, 'findings quota reached: log- and alert-band findings are no longer stored this month (blocks still are)');
      states.set(orgId, state);
    } catch (error) {
      // Put the dropped count back for the next try; keep admitting on the last answer.
      if (pending !== undefined) {
        const now = dropped.get(orgId);
        dropped.set(orgId, { month: pending.month, count: pending.count + (now?.month === pending.month ? now.count : 0) });
      }
      if (Date.now() - lastFailureLog >= 60_000) {
        lastFailureLog = Date.now();
        logger.warn({ org_id: orgId, code: (error as { code?: unknown } | null)?.code ?? null }, 'findings quota could not be read; findings are admitted on the last answer');
      }
      const before = states.get(orgId);
      states.set(orgId, { month, overQuota: before?.overQuota ?? false, checkedAt: Date.now() });
    }
  };

  const refresh = (orgId: string): Promise<void> => {
    let running = refreshing.get(orgId);
    if (running === undefined) {
      running = read(orgId).finally(() => refreshing.delete(orgId));
      refreshing.set(orgId, running);
    }
    return running;
  };

  return {
    admit(orgId, decision) {
      const now = Date.now();
      const state = states.get(orgId);
      if (state === undefined || now - state.checkedAt >= refreshMs || state.month !== monthOf(new Date(now))) void refresh(orgId);
      if (decision === 'block' || decision === 'challenge') return true;
      const month = monthOf(new Date(now));
      if (state === undefined || !state.overQuota || state.month !== month) return true;
      const count = dropped.get(orgId);
      dropped.set(orgId, { month, count: (count?.month === month ? count.count : 0) + 1 });
      return false;
    },
    refresh,
    forget(orgId) {
      states.delete(orgId);
    },
    unflushed(orgId) {
      return dropped.get(orgId)?.count ?? 0;
    },
    async close() {
      await Promise.allSettled([...refreshing.values()]);
      for (const orgId of [...dropped.keys()]) await read(orgId).catch(() => undefined);
    },
  };
}
