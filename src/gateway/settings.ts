/**
 * Per-org gateway settings (table gateway_settings, row-level security): routing configuration,
 * PII mode and response restoration, daily USD cap. Reads are cached in process for
 * SETTINGS_CACHE_MS so the completion hot path does not touch the database; a write on this
 * replica invalidates at once, other replicas see it within SETTINGS_CACHE_MS.
 */
import { LRUCache } from 'lru-cache';
import type { Database } from '../platform/db/index.ts';
import type { PiiMode } from './pii/index.ts';
import { DEFAULT_HEALTH_CHECK_INTERVAL_S, type RoutingConfig } from './routing.ts';
import { entryBound } from '../platform/lru.ts';

export const SETTINGS_CACHE_MS = 5_000;
/** Orgs whose settings are kept (least recently used out). */
const SETTINGS_CACHE_MAX = 10_000;

export interface GatewaySettings {
  routing: RoutingConfig | null;
  piiMode: PiiMode;
  piiRestore: boolean;
  dailyUsdCap: number | null;
}

export const DEFAULT_SETTINGS: GatewaySettings = Object.freeze({ routing: null, piiMode: 'redact', piiRestore: false, dailyUsdCap: null });

/**
 * What the gateway reads and writes of an org's settings: the table (SettingsStore) under
 * `svc serve`, the collector's copy held in memory at a gateway sensor (src/sensors).
 */
export interface GatewaySettingsSource {
  get(orgId: string): Promise<GatewaySettings>;
  update(orgId: string, change: Partial<GatewaySettings>): Promise<GatewaySettings>;
}

export class SettingsStore implements GatewaySettingsSource {
  private readonly cached = new LRUCache<string, { value: GatewaySettings; expiresAt: number }>(entryBound(SETTINGS_CACHE_MAX));

  constructor(private readonly db: Database) {}

  async get(orgId: string): Promise<GatewaySettings> {
    const hit = this.cached.get(orgId);
    const now = Date.now();
    if (hit !== undefined && hit.expiresAt > now) return hit.value;
    const result = await this.db.withOrg(orgId, (tx) =>
      tx.query<{ routing: RoutingConfig | null; pii_mode: PiiMode; pii_restore: boolean; daily_usd_cap: string | number | null }>(
        'SELECT routing, pii_mode, pii_restore, daily_usd_cap::text AS daily_usd_cap FROM gateway_settings WHERE org_id = $1',
        [orgId],
      ),
    );
    const row = result.rows[0];
    const value: GatewaySettings =
      row === undefined
        ? DEFAULT_SETTINGS
        : {
            routing: row.routing === null ? null : { ...row.routing, health_check_interval_s: row.routing.health_check_interval_s ?? DEFAULT_HEALTH_CHECK_INTERVAL_S },
            piiMode: row.pii_mode,
            piiRestore: row.pii_restore,
            dailyUsdCap: row.daily_usd_cap === null ? null : Number(row.daily_usd_cap),
          };
    this.cached.set(orgId, { value, expiresAt: now + SETTINGS_CACHE_MS });
    return value;
  }

  async update(orgId: string, change: Partial<GatewaySettings>): Promise<GatewaySettings> {
    const current = await this.get(orgId);
    const next: GatewaySettings = { ...current, ...change };
    await this.db.withOrg(orgId, (tx) =>
      tx.query(
        `INSERT INTO gateway_settings (org_id, routing, pii_mode, pii_restore, daily_usd_cap, updated_at)
         VALUES ($1, $2::jsonb, $3, $4, $5, now())
         ON CONFLICT (org_id) DO UPDATE SET routing = EXCLUDED.routing, pii_mode = EXCLUDED.pii_mode,
           pii_restore = EXCLUDED.pii_restore, daily_usd_cap = EXCLUDED.daily_usd_cap, updated_at = now()`,
        [orgId, next.routing === null ? null : JSON.stringify(next.routing), next.piiMode, next.piiRestore, next.dailyUsdCap],
      ),
    );
    this.cached.delete(orgId);
    return next;
  }
}
