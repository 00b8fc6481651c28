/**
 * Settlement: what a completion cost, once it ended.
 *
 * The cost is computed at once (it is part of the response) and the token metric counted; the
 * budget settlement (the reservation's estimate replaced by the actual usage), the 80 % warning
 * and the spend-anomaly check continue after the response is sent, batched per org and budget
 * day every SETTLE_BATCH_MS: the reservation already holds the estimate, so no limit can be
 * passed meanwhile. The hourly usage rows (the dashboard's charts) are gathered for
 * HISTORY_BATCH_MS and added in one statement. A failed request releases its reservation.
 * `settled()` (tests, shutdown) applies whatever is queued.
 */
import { isDatabaseOutage, isRetryableWriteFailure } from '../platform/db/failures.ts';
import type { Logger } from '../platform/logger.ts';
import type { Metrics } from '../platform/metrics.ts';
import type { SpendTracker } from './anomaly.ts';
import { estimatePromptTokens, settlementDelta, type BudgetLedger } from './budget.ts';
import type { TokenUsage } from './contract.ts';
import { AI_GATEWAY_EVENT, type GatewayEvents } from './events.ts';
import { fallbackCostUsd, type CostFunction } from './pricing/pricing.ts';
import type { PreparedCompletion, Viable } from './admission.ts';
import { hourOf, type UsageHistorySink, type UsageHourRow } from './usage-history.ts';

/** The service's own answer to a JSON completion. */
export interface CompletionEnvelope {
  request_id: string;
  provider: string;
  model: string;
  content: string;
  finish_reason: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  /** null when the model has no listed price; budgets then count the conservative fallback estimate. */
  cost_usd: number | null;
  latency_ms: number;
  verification: Record<string, unknown> | null;
  response_filter: Record<string, unknown> | null;
  tool_calls?: Array<{ id: string; name: string; arguments: string }>;
}

export interface SettlementDeps {
  logger: Logger;
  metrics: Metrics;
  events: GatewayEvents;
  budget: BudgetLedger;
  spend: SpendTracker;
  costOf: CostFunction;
  /** Told the share of the daily token budget an org has used after each settled call. */
  onBudgetUsage?: ((orgId: string, ratio: number) => void) | undefined;
  /** Where cost and tokens per org, model and hour are kept (the dashboard's charts); none in unit tests. */
  history?: UsageHistorySink | undefined;
}

/** Settlement deltas of one org and budget day, waiting for the next batch. */
interface PendingSettlement {
  orgId: string;
  day: string;
  tokens: number;
  microUsd: number;
  /** Micro-USD spent: what the spend-anomaly tracker is told. */
  spend: number;
  tokenLimit: number;
  /** The last request in the batch (for the log line if accounting fails). */
  requestId: string;
}

const MICRO = 1_000_000;
/**
 * Settlements are applied in batches, at most this long after the response: one counter update,
 * warning check and spend check per org and batch instead of per request.
 */
const SETTLE_BATCH_MS = 10;
/**
 * Hourly usage rows are added at most this long after the response. One upsert per org, hour,
 * provider and model and batch: at 10 ms (the settlements' batch) the upsert of the one hot row
 * ran ~100 times a second under load and was the largest single cost of the embedded engine
 * (issue #39, docs/benchmarks.md "gwcpu round"). A second is what the memory-mode budget
 * counters wait too (service.ts); shutdown and `settled()` add what is held.
 */
const HISTORY_BATCH_MS = 1_000;
/** Hourly rows held back for the next batch while the database is out (beyond: logged and dropped). */
const HISTORY_HELD_ROWS = 10_000;

export class Settlement {
  /** Budget settlements still running after their response was sent. */
  private readonly accounting = new Set<Promise<void>>();
  /** Settlements waiting for the next batch, per org and budget day. */
  private readonly pending = new Map<string, PendingSettlement>();
  /** Per-hour usage rows waiting for the next batch, per org, hour, provider and model. */
  private readonly pendingHours = new Map<string, UsageHourRow>();
  private timer: NodeJS.Timeout | null = null;
  private historyTimer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: SettlementDeps) {}

  /** The call's cost (null when unpriced), its token metric, and its budget settlement queued. */
  account(prepared: PreparedCompletion, candidate: Viable, model: string, usage: TokenUsage): number | null {
    const costOf = this.deps.costOf;
    const cost = costOf(candidate.provider, model, usage) ?? costOf(candidate.provider, candidate.model, usage);
    const costUsd = cost === null ? null : Math.round(cost * 1e10) / 1e10;
    this.deps.metrics.aiTokens.inc({ model, provider: candidate.provider }, usage.totalTokens);
    if (costUsd !== null && costUsd > 0) this.deps.metrics.aiCost.inc({ model, provider: candidate.provider }, costUsd);
    this.recordHour(prepared.caller.orgId, candidate.provider, model, usage, costUsd);
    const reservation = prepared.reservation;
    if (reservation === null) return costUsd;
    // An unpriced model still counts against a USD cap, at the conservative fallback estimate.
    const microUsd = Math.round((costUsd ?? fallbackCostUsd(candidate.provider, model, usage)) * MICRO);
    const delta = settlementDelta(reservation, usage.totalTokens, microUsd);
    const key = `${reservation.orgId} ${reservation.day}`;
    const pending = this.pending.get(key);
    if (pending === undefined) {
      this.pending.set(key, { orgId: reservation.orgId, day: reservation.day, tokens: delta.tokens, microUsd: delta.microUsd, spend: microUsd, tokenLimit: prepared.tokenLimit, requestId: prepared.caller.requestId });
    } else {
      pending.tokens += delta.tokens;
      pending.microUsd += delta.microUsd;
      pending.spend += microUsd;
      pending.tokenLimit = prepared.tokenLimit;
    }
    this.schedule();
    return costUsd;
  }

  private schedule(): void {
    if (this.timer === null) {
      this.timer = setTimeout(() => this.flush(), SETTLE_BATCH_MS);
      this.timer.unref();
    }
  }

  /** Adds one call to its org's, model's and hour's row (cost: the listed price; 0 when unpriced). */
  private recordHour(orgId: string, provider: string, model: string, usage: TokenUsage, costUsd: number | null): void {
    if (this.deps.history === undefined) return;
    this.scheduleHistory();
    this.holdHour({ orgId, hour: hourOf(Date.now()), provider, model, requests: 1, promptTokens: usage.promptTokens, completionTokens: usage.completionTokens, costUsd: costUsd ?? 0 });
  }

  /** Starts the held rows' batch timer unless one runs. */
  private scheduleHistory(): void {
    if (this.historyTimer !== null) return;
    this.historyTimer = setTimeout(() => this.flushHistory(), HISTORY_BATCH_MS);
    this.historyTimer.unref();
  }

  /** Adds a row's counts to the held row of its org, hour, provider and model. */
  private holdHour(add: UsageHourRow): void {
    const key = `${add.orgId} ${add.hour} ${add.provider} ${add.model}`;
    const row = this.pendingHours.get(key);
    if (row === undefined) {
      this.pendingHours.set(key, { ...add });
    } else {
      row.requests += add.requests;
      row.promptTokens += add.promptTokens;
      row.completionTokens += add.completionTokens;
      row.costUsd = Math.round((row.costUsd + add.costUsd) * 1e10) / 1e10;
    }
  }

  /** A completion whose end is not known from upstream (the client left, or upstream failed mid-stream): what was sent, estimated. */
  accountEstimated(prepared: PreparedCompletion, candidate: Viable, content: string): { usage: TokenUsage; costUsd: number | null } {
    const usage = estimateUsage(prepared.request.messages, content);
    return { usage, costUsd: this.account(prepared, candidate, candidate.model, usage) };
  }

  /** A request that failed before any answer: its whole reservation is released. */
  async release(prepared: PreparedCompletion): Promise<void> {
    if (prepared.reservation === null) return;
    try {
      await this.deps.budget.settle(prepared.reservation, 0, 0);
    } catch (error) {
      this.deps.logger.error({ err: error }, 'gateway budget release failed');
    }
  }

  /** Resolves when accounting started or queued so far has been applied (tests, shutdown). */
  async settled(): Promise<void> {
    if (this.pending.size > 0) this.flush();
    if (this.pendingHours.size > 0) this.flushHistory();
    while (this.accounting.size > 0) await Promise.allSettled([...this.accounting]);
  }

  /** Starts applying every queued settlement (tracked in `accounting`). */
  private flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    for (const pending of this.pending.values()) {
      const settling = this.settle(pending);
      this.accounting.add(settling);
      void settling.finally(() => this.accounting.delete(settling));
    }
    this.pending.clear();
  }

  /** Starts adding the held hourly usage rows (tracked in `accounting`). */
  private flushHistory(): void {
    if (this.historyTimer !== null) clearTimeout(this.historyTimer);
    this.historyTimer = null;
    if (this.pendingHours.size > 0 && this.deps.history !== undefined) {
      const history = this.deps.history;
      const rows = [...this.pendingHours.values()];
      const recording = history.add(rows).catch((error: unknown) => {
        // The database is out: the rows wait for the next batch (bounded), as the budget counters do.
        // A lock conflict (another worker's batch) rolled the statement back whole: the same
        // rows are tried again with the next batch.
        if (isRetryableWriteFailure(error) && this.pendingHours.size + rows.length <= HISTORY_HELD_ROWS) {
          for (const row of rows) this.holdHour(row);
          this.scheduleHistory();
          if (isDatabaseOutage(error)) this.deps.logger.warn({ code: 'DATABASE_UNAVAILABLE', rows: rows.length }, 'gateway usage history held for the next batch: the database is unavailable');
          else this.deps.logger.warn({ err: error, rows: rows.length }, 'gateway usage history held for the next batch: a lock conflict rolled it back');
          return;
        }
        this.deps.logger.error({ err: error, rows: rows.length }, 'gateway usage history not recorded');
      });
      this.accounting.add(recording);
      void recording.finally(() => this.accounting.delete(recording));
    }
    this.pendingHours.clear();
  }

  private async settle(pending: PendingSettlement): Promise<void> {
    const { orgId, tokenLimit } = pending;
    const { budget, events } = this.deps;
    try {
      const used = await budget.adjust(orgId, pending.day, pending.tokens, pending.microUsd);
      this.deps.onBudgetUsage?.(orgId, used / tokenLimit);
      if (await budget.shouldWarn(orgId, used, tokenLimit)) {
        events.emit(orgId, 'budget.warning', {
          budget: 'daily_tokens',
          limit: tokenLimit,
          used,
          ratio: Math.round((used / tokenLimit) * 1000) / 1000,
        }, AI_GATEWAY_EVENT);
      }
      const anomaly = await this.deps.spend.add(orgId, pending.spend);
      if (anomaly !== null) {
        await this.deps.history?.addAnomaly(orgId, { hour: anomaly.hourStart, spendMicroUsd: anomaly.currentMicroUsd, meanMicroUsd: anomaly.mean, stddevMicroUsd: anomaly.stddev, z: anomaly.z });
        events.emit(orgId, 'cost.anomaly', {
          hour_start: anomaly.hourStart,
          spend_usd: anomaly.currentMicroUsd / MICRO,
          baseline_mean_usd: anomaly.mean / MICRO,
          baseline_stddev_usd: anomaly.stddev / MICRO,
          z_score: Math.round(anomaly.z * 100) / 100,
        }, AI_GATEWAY_EVENT);
      }
    } catch (error) {
      this.deps.logger.error({ err: error, request_id: pending.requestId }, 'gateway accounting failed');
    }
  }
}

export function toPublicUsage(usage: TokenUsage): CompletionEnvelope['usage'] {
  return { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.totalTokens };
}

/** The response_filter summary of the gateway's own PII handling (null when nothing was redacted). */
export function responseFilter(prepared: PreparedCompletion): Record<string, unknown> | null {
  if (prepared.redaction === null) return null;
  const restored = prepared.settings.piiRestore;
  return { pii: { mode: prepared.redaction.summary.mode, redacted: prepared.redaction.summary.redacted, total: prepared.redaction.summary.total, restored } };
}

/** Usage estimated from the text (characters / 4), when upstream did not report it. */
export function estimateUsage(messages: ReadonlyArray<{ content: string }>, content: string): TokenUsage {
  const promptTokens = estimatePromptTokens(messages);
  const completionTokens = Math.ceil(content.length / 4);
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
}
