/**
 * The gateway context: what a gateway sensor (`svc sensor --class gateway`) needs of its org to
 * serve the AI gateway's traffic without a database (docs/sensors.md, "Gateway context"), built
 * by the collector from its own stores for gateway sensors only:
 *
 *   - the org's gateway settings (routing, PII mode and restoration, daily USD cap) and plan;
 *   - per provider, the credential a completion would use under `svc serve` (the org's own key
 *     first, else the deployment's environment key) with its base URL;
 *   - the org's API keys that are not revoked, as their SHA-256 hashes (never the keys), with
 *     scope and class: the sensor authenticates its clients against them;
 *   - today's budget usage as the collector counts it (so a budget spent elsewhere, or reported by
 *     this sensor, is exhausted at the sensor too).
 *
 * The whole context is sealed to the sensor's enrolled key (sealing.ts) and travels only on
 * GET /sensors/{id}/config; registration and heartbeat answer its etag alone, so a sensor pulls
 * again only when something changed. The etag is a SHA-256 of the context salted with the
 * sensor's key, cut to 32 characters (the context's secrets are random keys: nothing to guess).
 *
 * The other way, the sensor reports on its heartbeat the budget and usage it recorded
 * (`gateway_usage`), which the collector adds to the budget ledger and the usage history.
 */
import { createHash } from 'node:crypto';
import type { Database } from '../../platform/db/index.ts';
import { sealToSensor } from '../sealing.ts';

/** The org's gateway settings as the context carries them. */
export interface GatewayContextSettings {
  readonly routing: unknown;
  readonly pii_mode: string;
  readonly pii_restore: boolean;
  readonly daily_usd_cap: number | null;
}

export interface GatewayContext {
  readonly org_id: string;
  readonly org_tag: string;
  readonly plan: string;
  readonly settings: GatewayContextSettings;
  /** provider id → the credential and base URL a completion uses. */
  readonly providers: Readonly<Record<string, { readonly key: string; readonly base_url: string | null }>>;
  /** The org's keys that are not revoked: hex SHA-256 of the key, never the key. */
  readonly api_keys: ReadonlyArray<{ readonly hash: string; readonly key_id: string; readonly scope: string; readonly class: string }>;
  /** Today's usage as the collector counts it (tokens, micro-dollars). */
  readonly budget: { readonly day: string; readonly tokens: number; readonly micro_usd: number };
}

/** What a directive carries for a gateway sensor: the etag, and on a configuration pull the sealed context. */
export interface GatewayContextDirective {
  readonly etag: string;
  readonly sealed?: string;
}

/** What a gateway sensor reports on its heartbeat: the budget and usage it recorded since the last report. */
export interface GatewayUsageReport {
  readonly budget: ReadonlyArray<{ readonly day: string; readonly tokens: number; readonly micro_usd: number }>;
  readonly hours: ReadonlyArray<{ readonly hour: string; readonly provider: string; readonly model: string; readonly requests: number; readonly prompt_tokens: number; readonly completion_tokens: number; readonly cost_usd: number }>;
}

/**
 * The gateway's events a gateway sensor sends its collector (a finding of kind
 * `gateway_event`, `details: { event, data }`) for the collector to deliver as the org's webhooks,
 * with the fields each carries as `svc serve` emits them (src/gateway/settlement.ts, attempts.ts).
 */
export const FORWARDED_GATEWAY_EVENTS = {
  'budget.warning': { budget: 'string', limit: 'number', used: 'number', ratio: 'number' },
  'cost.anomaly': { hour_start: 'string', spend_usd: 'number', baseline_mean_usd: 'number', baseline_stddev_usd: 'number', z_score: 'number' },
  'gateway.down': { gateway_name: 'string', backend_url: 'string', check_type: 'string', http_status: 'number', consecutive_failures: 'number', first_failure_at: 'string' },
} as const satisfies Record<string, Record<string, 'string' | 'number'>>;
export type ForwardedGatewayEvent = keyof typeof FORWARDED_GATEWAY_EVENTS;
/** The `kind` of the finding that carries a gateway event (pillar `gateway`, no pattern, no threat event). */
export const GATEWAY_EVENT_KIND = 'gateway_event';

/**
 * The event a gateway-event finding's `details` carry, its data reduced to the event's own fields
 * (each of its type, strings at most 2 048 characters); null when the details name no forwarded
 * event or a field is missing or of another type.
 */
export function forwardedGatewayEvent(details: Record<string, unknown> | undefined): { event: ForwardedGatewayEvent; data: Record<string, string | number> } | null {
  const event = details?.event;
  const data = details?.data;
  if (typeof event !== 'string' || !Object.hasOwn(FORWARDED_GATEWAY_EVENTS, event) || typeof data !== 'object' || data === null) return null;
  const fields: Record<string, 'string' | 'number'> = FORWARDED_GATEWAY_EVENTS[event as ForwardedGatewayEvent];
  const out: Record<string, string | number> = {};
  for (const [field, type] of Object.entries(fields)) {
    const value = (data as Record<string, unknown>)[field];
    if (type === 'number' ? typeof value !== 'number' || !Number.isFinite(value) : typeof value !== 'string' || value.length > 2_048) return null;
    out[field] = value as string | number;
  }
  return { event: event as ForwardedGatewayEvent, data: out };
}

export interface GatewayContextDeps {
  readonly db: Database;
  /** The org's gateway settings (the gateway's settings store). */
  settingsOf(orgId: string): Promise<{ routing: unknown; piiMode: string; piiRestore: boolean; dailyUsdCap: number | null }>;
  /** The credential a completion for this org and provider would use (org key, else environment key); null without one. */
  providerTarget(orgId: string, provider: string): Promise<{ key: string; baseUrl: string | null } | null>;
  readonly providers: readonly string[];
  /** The org's effective plan and tag. */
  orgOf(orgId: string): Promise<{ plan: string; tag: string } | null>;
  /** Today's budget usage (the gateway's ledger). */
  budgetUsage(orgId: string): Promise<{ day: string; tokens: number; microUsd: number }>;
  /** Adds a sensor's reported usage to the ledger and the usage history. */
  recordUsage(orgId: string, report: GatewayUsageReport): Promise<void>;
  /** Records a cost anomaly a sensor raised in the usage history (as `svc serve`'s settlement does); absent: not recorded. */
  recordAnomaly?(orgId: string, anomaly: { hour: string; spendMicroUsd: number; meanMicroUsd: number; stddevMicroUsd: number; z: number }): Promise<void>;
}

export function createGatewayContexts(deps: GatewayContextDeps) {
  async function build(orgId: string): Promise<GatewayContext | null> {
    const [settings, org, usage, keys, targets] = await Promise.all([
      deps.settingsOf(orgId),
      deps.orgOf(orgId),
      deps.budgetUsage(orgId),
      deps.db.withOrg(orgId, (tx) =>
        tx.query<{ id: string; key_hash: string; scope: string; class: string }>('SELECT id::text, key_hash, scope, class FROM api_keys WHERE org_id = $1 AND revoked_at IS NULL ORDER BY id', [orgId]),
      ),
      Promise.all(deps.providers.map(async (provider) => [provider, await deps.providerTarget(orgId, provider)] as const)),
    ]);
    if (org === null) return null;
    const providers: Record<string, { key: string; base_url: string | null }> = {};
    for (const [provider, target] of targets) if (target !== null) providers[provider] = { key: target.key, base_url: target.baseUrl };
    return {
      org_id: orgId,
      org_tag: org.tag,
      plan: org.plan,
      settings: { routing: settings.routing, pii_mode: settings.piiMode, pii_restore: settings.piiRestore, daily_usd_cap: settings.dailyUsdCap },
      providers,
      api_keys: keys.rows.map((row) => ({ hash: row.key_hash, key_id: row.id, scope: row.scope, class: row.class })),
      budget: { day: usage.day, tokens: usage.tokens, micro_usd: usage.microUsd },
    };
  }

  return {
    /** The context's directive for one gateway sensor: its etag, and the sealed context when `full`. */
    async directive(sensor: { org_id: string; public_key: string }, full: boolean): Promise<GatewayContextDirective | null> {
      const context = await build(sensor.org_id);
      if (context === null) return null;
      const text = Buffer.from(JSON.stringify(context));
      const etag = createHash('sha256').update(sensor.public_key).update('\n').update(text).digest('base64url').slice(0, 32);
      return full ? { etag, sealed: await sealToSensor(sensor.public_key, text) } : { etag };
    },
    recordUsage: (orgId: string, report: GatewayUsageReport) => deps.recordUsage(orgId, report),
    /**
     * What the collector keeps of a gateway event a sensor forwarded before delivering it: a cost
     * anomaly goes into the usage history (the dashboard's chart marks), as under `svc serve`.
     * One whose hour is not the start of an hour, or whose spend is past what the history holds, is delivered but not recorded.
     */
    async recordEvent(orgId: string, forwarded: { event: ForwardedGatewayEvent; data: Record<string, string | number> }): Promise<void> {
      if (forwarded.event !== 'cost.anomaly' || deps.recordAnomaly === undefined) return;
      const { hour_start: hour, spend_usd: spend, baseline_mean_usd: mean, baseline_stddev_usd: stddev, z_score: z } = forwarded.data as { hour_start: string; spend_usd: number; baseline_mean_usd: number; baseline_stddev_usd: number; z_score: number };
      const at = Date.parse(hour);
      if (!/^\d{4}-\d\d-\d\dT\d\d:00:00(?:\.000)?Z$/.test(hour) || !Number.isFinite(at)) return;
      const micro = (usd: number) => Math.round(usd * 1_000_000);
      // A spend the usage history cannot hold exactly (bigint micro-USD; past 2^53 in JavaScript)
      // is delivered but not recorded: its insert would fail the sensor's whole batch, every time it is resent.
      if (!Number.isSafeInteger(micro(spend))) return;
      await deps.recordAnomaly(orgId, { hour: new Date(at).toISOString(), spendMicroUsd: micro(spend), meanMicroUsd: micro(mean), stddevMicroUsd: micro(stddev), z });
    },
  };
}

export type GatewayContexts = ReturnType<typeof createGatewayContexts>;
