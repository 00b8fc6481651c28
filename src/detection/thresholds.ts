/**
 * Per-org response thresholds, stored in detection_thresholds (migration 010, row-level
 * security) and cached per replica for 10 seconds (a change made on one replica reaches the
 * others within that time; the replica that made it sees it at once). While the database is down
 * the values last read stay in force.
 */
import { LRUCache } from 'lru-cache';
import { isDatabaseOutage } from '../platform/db/failures.ts';
import type { Database } from '../platform/db/index.ts';
import { noWithin, type WithinWrite } from '../platform/db/within.ts';
import { DEFAULT_THRESHOLDS, resolveThresholds } from './policy.ts';
import type { Thresholds } from './types.ts';
import { entryBound } from '../platform/lru.ts';

export const THRESHOLD_CACHE_MS = 10_000;

export interface ThresholdStore {
  get(orgId: string): Promise<Thresholds>;
  /**
   * Validates (ThresholdError) and saves the change; `within` runs in the save's transaction (the
   * audit entry): a failure of it stores nothing.
   */
  set(orgId: string, update: Partial<Thresholds>, within?: WithinWrite<Thresholds>): Promise<{ thresholds: Thresholds; updatedAt: Date }>;
}

interface Row {
  log_threshold: number;
  alert_threshold: number;
  challenge_threshold: number;
  block_threshold: number;
  updated_at: Date;
}

const toThresholds = (row: Row | undefined): Thresholds =>
  row === undefined ? DEFAULT_THRESHOLDS : Object.freeze({ log: row.log_threshold, alert: row.alert_threshold, challenge: row.challenge_threshold, block: row.block_threshold });

export function createThresholdStore(db: Database | undefined): ThresholdStore {
  const cached = new LRUCache<string, { value: Thresholds; until: number }>(entryBound(10_000));
  /** Changes saved by this replica: a read that saw this count change while it ran is not cached. */
  let writes = 0;
  const read = async (orgId: string): Promise<Thresholds> => {
    if (db === undefined) return DEFAULT_THRESHOLDS;
    const result = await db.withOrg(orgId, (tx) =>
      tx.query<Row>('SELECT log_threshold, alert_threshold, challenge_threshold, block_threshold, updated_at FROM detection_thresholds WHERE org_id = $1', [orgId]),
    );
    return toThresholds(result.rows[0]);
  };
  return {
    async get(orgId) {
      const hit = cached.get(orgId);
      if (hit !== undefined && hit.until > Date.now()) return hit.value;
      const seen = writes;
      let value: Thresholds;
      try {
        value = await read(orgId);
      } catch (error) {
        // Database down: the org's thresholds last read stay in force (asked again after the TTL)
        // rather than the defaults the engine would fall back to.
        if (hit === undefined || !isDatabaseOutage(error)) throw error;
        cached.set(orgId, { value: hit.value, until: Date.now() + THRESHOLD_CACHE_MS });
        return hit.value;
      }
      // A read that a change on this replica overtook may hold the values it replaced: not kept.
      if (seen === writes) cached.set(orgId, { value, until: Date.now() + THRESHOLD_CACHE_MS });
      return value;
    },
    async set(orgId, update, within = noWithin) {
      if (db === undefined) throw new Error('threshold store has no database');
      // The values the update is merged with are read in the write's transaction, their row locked
      // (created first with the defaults when the org has none, so that a first change locks it as
      // well): a change committed by another request meanwhile is merged, not overwritten with the
      // values it replaced, and the audit entry records what this write stored on top of it.
      const { thresholds, result } = await db.withOrg(orgId, async (tx) => {
        await tx.query(
          `INSERT INTO detection_thresholds (org_id, log_threshold, alert_threshold, challenge_threshold, block_threshold)
           VALUES ($1, $2, $3, $4, $5) ON CONFLICT (org_id) DO NOTHING`,
          [orgId, DEFAULT_THRESHOLDS.log, DEFAULT_THRESHOLDS.alert, DEFAULT_THRESHOLDS.challenge, DEFAULT_THRESHOLDS.block],
        );
        const locked = await tx.query<Row>('SELECT log_threshold, alert_threshold, challenge_threshold, block_threshold, updated_at FROM detection_thresholds WHERE org_id = $1 FOR UPDATE', [orgId]);
        const thresholds = resolveThresholds(update, toThresholds(locked.rows[0]));
        const saved = await tx.query<{ updated_at: Date }>(
          `INSERT INTO detection_thresholds (org_id, log_threshold, alert_threshold, challenge_threshold, block_threshold, updated_at)
           VALUES ($1, $2, $3, $4, $5, now())
           ON CONFLICT (org_id) DO UPDATE SET log_threshold = EXCLUDED.log_threshold, alert_threshold = EXCLUDED.alert_threshold,
             challenge_threshold = EXCLUDED.challenge_threshold, block_threshold = EXCLUDED.block_threshold, updated_at = now()
           RETURNING updated_at`,
          [orgId, thresholds.log, thresholds.alert, thresholds.challenge, thresholds.block],
        );
        await within(tx, thresholds);
        return { thresholds, result: saved };
      });
      // Kept as already expired rather than in force: another change on this replica committed
      // after this one may have been cached first, so the next read asks the database (and keeps
      // these values should it be down).
      writes += 1;
      cached.set(orgId, { value: thresholds, until: 0 });
      return { thresholds, updatedAt: result.rows[0]?.updated_at ?? new Date() };
    },
  };
}
