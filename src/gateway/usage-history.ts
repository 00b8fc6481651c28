/**
 * Cost and tokens per org, provider, model and UTC hour (table gateway_usage_hourly, migration
 * 104), and the cost anomalies raised (gateway_cost_anomalies): what the dashboard's AI gateway
 * charts read through GET /api/v1/gateway/usage. Settlement collects each batch's totals and
 * adds them in one statement on the owner connection (system work, like budget_usage); reads run
 * under the org's row-level security.
 */
import type { Database } from '../platform/db/index.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * How long hourly usage and cost anomalies are kept (days): 13 months and a little, so a month can
 * be set beside the same month a year before; the API reads at most 90 days at a time. The daily
 * `gateway.usage.purge` job (jobs.ts) deletes older hours.
 */
export const USAGE_RETENTION_DAYS = 400;
/**
 * Days the daily budget counters (budget_usage) are kept. The ledger reads today and yesterday
 * only (budget.ts); a week leaves room for a late settlement or a sensor's report of a day held
 * through a partition, and the same spend stays in the hourly usage for USAGE_RETENTION_DAYS.
 */
export const BUDGET_RETENTION_DAYS = 7;

export interface UsageHourRow {
  orgId: string;
  /** Start of the UTC hour, ISO 8601. */
  hour: string;
  provider: string;
  model: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  /** At the listed price (0 when unpriced). */
  costUsd: number;
}

export interface CostAnomalyRow {
  hour: string;
  spendMicroUsd: number;
  meanMicroUsd: number;
  stddevMicroUsd: number;
  z: number;
}

export interface UsageBucket {
  start: string;
  provider: string;
  model: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
}

/** The last hour `hourOf` formatted (every completion asks for the current one). */
let lastHour = { start: Number.NaN, iso: '' };

/** The start of the UTC hour holding `time` (ms), ISO 8601. */
export function hourOf(time: number): string {
  const start = Math.floor(time / HOUR_MS) * HOUR_MS;
  if (start !== lastHour.start) lastHour = { start, iso: new Date(start).toISOString() };
  return lastHour.iso;
}

/**
 * What settlement and the usage route need of the history: the tables (UsageHistory) under
 * `svc serve`; at a gateway sensor, rows kept in memory until reported to the collector.
 */
export type UsageHistorySink = Pick<UsageHistory, 'add' | 'addAnomaly' | 'buckets' | 'anomalies'>;

/** The rows with each hour after `current` moved to `current`, rows then sharing a key summed (one upsert may touch a key once). */
function clampToHour(rows: readonly UsageHourRow[], current: string): UsageHourRow[] {
  if (rows.every((row) => Date.parse(row.hour) <= Date.parse(current))) return [...rows];
  const merged = new Map<string, UsageHourRow>();
  for (const row of rows) {
    const hour = Date.parse(row.hour) > Date.parse(current) ? current : row.hour;
    const key = JSON.stringify([row.orgId, Date.parse(hour), row.provider, row.model]);
    const held = merged.get(key);
    merged.set(key, held === undefined ? { ...row, hour } : {
      ...held,
      requests: held.requests + row.requests,
      promptTokens: held.promptTokens + row.promptTokens,
      completionTokens: held.completionTokens + row.completionTokens,
      costUsd: Math.round((held.costUsd + row.costUsd) * 1e10) / 1e10,
    });
  }
  return [...merged.values()];
}

export class UsageHistory {
  constructor(private readonly db: Database) {}

  /**
   * Adds each row's counts to the stored hour (one statement). An hour later than the current one
   * (a sensor whose clock runs ahead, a bad import) is counted in the current hour: the spend
   * happened, and a future-dated row would never age out of the retention.
   */
  async add(input: readonly UsageHourRow[], now: number = Date.now()): Promise<void> {
    const rows = clampToHour(input, hourOf(now));
    if (rows.length === 0) return;
    // ORDER BY the key: every worker's batch locks the rows it updates in the same order, so two
    // batches sharing keys wait for each other instead of deadlocking (PostgreSQL answered
    // "deadlock detected" under WORKERS=4, and the batch was lost; docs/decisions.md).
    await this.db.query(
      `INSERT INTO gateway_usage_hourly (org_id, hour, provider, model, requests, prompt_tokens, completion_tokens, cost_usd)
       SELECT org_id, hour, provider, model, requests, prompt_tokens, completion_tokens, cost_usd
         FROM jsonb_to_recordset($1::jsonb) AS r(org_id uuid, hour timestamptz, provider text, model text, requests bigint, prompt_tokens bigint, completion_tokens bigint, cost_usd numeric)
        ORDER BY org_id, hour, provider, model
       ON CONFLICT (org_id, hour, provider, model) DO UPDATE
         SET requests = gateway_usage_hourly.requests + excluded.requests,
             prompt_tokens = gateway_usage_hourly.prompt_tokens + excluded.prompt_tokens,
             completion_tokens = gateway_usage_hourly.completion_tokens + excluded.completion_tokens,
             cost_usd = gateway_usage_hourly.cost_usd + excluded.cost_usd`,
      [JSON.stringify(rows.map((row) => ({
        org_id: row.orgId, hour: row.hour, provider: row.provider, model: row.model, requests: row.requests,
        prompt_tokens: row.promptTokens, completion_tokens: row.completionTokens, cost_usd: row.costUsd,
      })))],
    );
  }

  /** Records a raised cost anomaly (once per org and hour). */
  async addAnomaly(orgId: string, anomaly: CostAnomalyRow): Promise<void> {
    await this.db.query(
      `INSERT INTO gateway_cost_anomalies (org_id, hour, spend_micro_usd, baseline_mean_micro_usd, baseline_stddev_micro_usd, z_score)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (org_id, hour) DO NOTHING`,
      [orgId, anomaly.hour, anomaly.spendMicroUsd, anomaly.meanMicroUsd, anomaly.stddevMicroUsd, anomaly.z],
    );
  }

  /**
   * Deletes usage hours and cost anomalies older than the retention, for every org (system work,
   * on the owner connection, like the webhook deliveries' cleanup); returns how many rows went.
   */
  async purge(now: Date = new Date(), retentionDays: number = USAGE_RETENTION_DAYS): Promise<{ usage: number; anomalies: number; budgets: number }> {
    const cutoff = new Date(now.getTime() - retentionDays * DAY_MS).toISOString();
    const current = hourOf(now.getTime());
    // Hours stored with a date after the current hour (written before add() clamped them, or by
    // hand) are folded into the current hour, from where they age out like any other.
    await this.db.query(
      `WITH moved AS (DELETE FROM gateway_usage_hourly WHERE hour > $1 RETURNING *)
       INSERT INTO gateway_usage_hourly (org_id, hour, provider, model, requests, prompt_tokens, completion_tokens, cost_usd)
       SELECT org_id, $1, provider, model, sum(requests), sum(prompt_tokens), sum(completion_tokens), sum(cost_usd) FROM moved GROUP BY org_id, provider, model ORDER BY org_id, provider, model
       ON CONFLICT (org_id, hour, provider, model) DO UPDATE
         SET requests = gateway_usage_hourly.requests + excluded.requests,
             prompt_tokens = gateway_usage_hourly.prompt_tokens + excluded.prompt_tokens,
             completion_tokens = gateway_usage_hourly.completion_tokens + excluded.completion_tokens,
             cost_usd = gateway_usage_hourly.cost_usd + excluded.cost_usd`,
      [current],
    );
    const usage = await this.db.query('DELETE FROM gateway_usage_hourly WHERE hour < $1', [cutoff]);
    // The daily budget counters: future days folded into today (the ledger clamps them on the way
    // in; these were stored before, or by hand), days past their retention deleted.
    const today = current.slice(0, 10);
    await this.db.query(
      `WITH moved AS (DELETE FROM budget_usage WHERE day > $1::date RETURNING *)
       INSERT INTO budget_usage (org_id, day, tokens, micro_usd)
       SELECT org_id, $1::date, sum(tokens), sum(micro_usd) FROM moved GROUP BY org_id ORDER BY org_id
       ON CONFLICT (org_id, day) DO UPDATE
         SET tokens = budget_usage.tokens + excluded.tokens, micro_usd = budget_usage.micro_usd + excluded.micro_usd, updated_at = now()`,
      [today],
    );
    const budgets = await this.db.query('DELETE FROM budget_usage WHERE day < $1::date', [new Date(Date.parse(today) - BUDGET_RETENTION_DAYS * DAY_MS).toISOString().slice(0, 10)]);
    // An anomaly is one hour's spend against its baseline: one dated in the future describes nothing.
    const anomalies = await this.db.query('DELETE FROM gateway_cost_anomalies WHERE hour < $1 OR hour > $2', [cutoff, current]);
    return { usage: usage.rowCount, anomalies: anomalies.rowCount, budgets: budgets.rowCount };
  }

  /** Totals per bucket (hour or day, UTC), provider and model in [from, to). */
  async buckets(orgId: string, from: Date, to: Date, bucket: 'hour' | 'day'): Promise<UsageBucket[]> {
    const result = await this.db.withOrg(orgId, (tx) =>
      tx.query<{ start: Date | string; provider: string; model: string; requests: string; prompt_tokens: string; completion_tokens: string; cost_usd: string }>(
        `SELECT date_trunc($4, hour AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS start, provider, model,
                sum(requests)::text AS requests, sum(prompt_tokens)::text AS prompt_tokens,
                sum(completion_tokens)::text AS completion_tokens, sum(cost_usd)::text AS cost_usd
           FROM gateway_usage_hourly WHERE org_id = $1 AND hour >= $2 AND hour < $3
          GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
        [orgId, from.toISOString(), to.toISOString(), bucket],
      ),
    );
    return result.rows.map((row) => ({
      start: new Date(row.start).toISOString(),
      provider: row.provider,
      model: row.model,
      requests: Number(row.requests),
      promptTokens: Number(row.prompt_tokens),
      completionTokens: Number(row.completion_tokens),
      costUsd: Number(row.cost_usd),
    }));
  }

  /** Cost anomalies raised in [from, to), newest first. */
  async anomalies(orgId: string, from: Date, to: Date): Promise<CostAnomalyRow[]> {
    const result = await this.db.withOrg(orgId, (tx) =>
      tx.query<{ hour: Date | string; spend_micro_usd: string; baseline_mean_micro_usd: number; baseline_stddev_micro_usd: number; z_score: number }>(
        `SELECT hour, spend_micro_usd::text AS spend_micro_usd, baseline_mean_micro_usd, baseline_stddev_micro_usd, z_score
           FROM gateway_cost_anomalies WHERE org_id = $1 AND hour >= $2 AND hour < $3 ORDER BY hour DESC LIMIT 500`,
        [orgId, from.toISOString(), to.toISOString()],
      ),
    );
    return result.rows.map((row) => ({
      hour: new Date(row.hour).toISOString(),
      spendMicroUsd: Number(row.spend_micro_usd),
      meanMicroUsd: Number(row.baseline_mean_micro_usd),
      stddevMicroUsd: Number(row.baseline_stddev_micro_usd),
      z: Number(row.z_score),
    }));
  }
}
