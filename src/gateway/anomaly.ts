/**
 * Cost-anomaly alerts: the org's spend in the current UTC hour compared with its rolling
 * baseline of the previous BASELINE_HOURS hours (z-score). Spend is kept in per-hour counters in
 * the cache (micro-dollars, 8-day expiry); the check runs at most once a minute per org and the
 * alert fires at most once per org and hour. `spendZScore` is the pure part.
 */
import { redisIncrBy, type Cache } from '../platform/cache.ts';

export const BASELINE_HOURS = 24;
export const Z_THRESHOLD = 3;
/** Hours with spend needed in the baseline before anything is judged anomalous. */
export const MIN_ACTIVE_BASELINE_HOURS = 3;
/** Spend below this in the current hour is never an anomaly (micro-dollars: $0.05). */
export const MIN_ANOMALOUS_MICRO_USD = 50_000;
const HOUR_MS = 3_600_000;
const BUCKET_TTL_MS = 8 * 24 * HOUR_MS;

export interface ZScoreResult {
  z: number;
  mean: number;
  stddev: number;
  anomalous: boolean;
}

/** z-score of `current` against `baseline` (one value per past hour, zeros included). */
export function spendZScore(current: number, baseline: readonly number[], options = { threshold: Z_THRESHOLD, minActiveHours: MIN_ACTIVE_BASELINE_HOURS, minCurrent: MIN_ANOMALOUS_MICRO_USD }): ZScoreResult {
  const count = baseline.length;
  const mean = count === 0 ? 0 : baseline.reduce((sum, value) => sum + value, 0) / count;
  const variance = count === 0 ? 0 : baseline.reduce((sum, value) => sum + (value - mean) ** 2, 0) / count;
  // A floor on the deviation keeps a perfectly flat baseline from making every change "infinite".
  const stddev = Math.max(Math.sqrt(variance), mean * 0.1, 1);
  const z = (current - mean) / stddev;
  const active = baseline.filter((value) => value > 0).length;
  return { z, mean, stddev, anomalous: active >= options.minActiveHours && current >= options.minCurrent && z >= options.threshold };
}

export class SpendTracker {
  constructor(
    private readonly cache: Cache,
    private readonly now: () => number = Date.now,
  ) {}

  private key(orgId: string, hour: number): string {
    return `${this.cache.prefix}gw:spend:${orgId}:${hour}`;
  }

  /** Adds spend to the current hour; returns a z-score result when a check ran and flagged an anomaly. */
  async add(orgId: string, microUsd: number): Promise<(ZScoreResult & { hourStart: string; currentMicroUsd: number }) | null> {
    if (microUsd <= 0) return null;
    const hour = Math.floor(this.now() / HOUR_MS);
    const current = await this.incrBy(this.key(orgId, hour), microUsd);
    const minute = Math.floor(this.now() / 60_000);
    if (!(await this.cache.setIfAbsent(`${this.cache.prefix}gw:spend-checked:${orgId}:${minute}`, '1', 120_000))) return null;
    const baseline = await this.readHours(orgId, hour);
    const result = spendZScore(current, baseline);
    if (!result.anomalous) return null;
    if (!(await this.cache.setIfAbsent(`${this.cache.prefix}gw:spend-alerted:${orgId}:${hour}`, '1', 2 * HOUR_MS))) return null;
    return { ...result, hourStart: new Date(hour * HOUR_MS).toISOString(), currentMicroUsd: current };
  }

  private async incrBy(key: string, amount: number): Promise<number> {
    const redis = this.cache.redis();
    if (redis !== null) {
      try {
        return await redisIncrBy(redis, key, amount, BUCKET_TTL_MS, true);
      } catch {
        // fall through
      }
    }
    return this.cache.memory.incr(key, BUCKET_TTL_MS, amount);
  }

  private async readHours(orgId: string, hour: number): Promise<number[]> {
    const keys = Array.from({ length: BASELINE_HOURS }, (_, index) => this.key(orgId, hour - 1 - index));
    const redis = this.cache.redis();
    if (redis !== null) {
      try {
        return (await redis.mget(...keys)).map((value) => Number(value ?? '0'));
      } catch {
        // fall through
      }
    }
    return keys.map((key) => Number(this.cache.memory.get(key) ?? '0'));
  }
}
