/**
 * The AI gateway core: turns a validated completion request into upstream calls and the
 * service's own envelope.
 *
 * Security posture: the request is redacted (per the org's PII mode) before any byte leaves for
 * an upstream, and upstream credentials are resolved per call (org BYOK key first, then the
 * deployment's environment key) and never logged or echoed. Spending is bounded before the call:
 * the daily token budget (and the optional USD cap) is reserved atomically and settled after,
 * so concurrent requests cannot overshoot. Upstream failures are retried and failed over only
 * while nothing has reached the client; after the first streamed byte a failure becomes an
 * explicit error event, never a silent truncation. Upstream error text never reaches clients:
 * failures map to catalogue codes with the upstream status and code as details.
 *
 * Order of one completion: settings → provider check → PII (redact/block) → route plan → keys
 * (NO_PROVIDERS) → budget reservation → attempts (breaker admission, retry with backoff,
 * failover) → cost, metrics, budget settlement, anomaly check → envelope (placeholders restored
 * when the org opted in).
 */
import { randomUUID } from 'node:crypto';
import type { Cache } from '../platform/cache.ts';
import type { Database } from '../platform/db/index.ts';
import { SvcError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { Metrics } from '../platform/metrics.ts';
import { SpendTracker } from './anomaly.ts';
import type { AbortHook } from './cancel.ts';
import { BreakerRegistry, DEFAULT_BREAKER_POLICY, type BreakerPolicy, type CircuitBreaker } from './breaker.ts';
import { BudgetLedger, createBudgetStore, dailyTokenBudget, DEFAULT_COMPLETION_RESERVE, estimatePromptTokens, settlementDelta, type Reservation } from './budget.ts';
import { safeUrl, UpstreamError } from './contract.ts';
import type { ChatMessage, CompletionRequest, CompletionResult, ProviderTarget, StreamEvent, TokenUsage, ToolDefinition } from './contract.ts';
import type { GatewayEvents } from './events.ts';
import { resolveTarget, targetKey, type ProviderKeySource } from './keys.ts';
import { createStreamRestorer, redactMessages, restorePlaceholders, detectPii, type RedactionSummary } from './pii/index.ts';
import { getAdapter, invokeCompletion, invokeStream, isProviderId, providerIds, type ProviderId } from './registry.ts';
import { countsAgainstProvider, decideRetry, DEFAULT_RETRY_POLICY, sleep, type RetryPolicy } from './retry.ts';
import { DEFAULT_HEALTH_CHECK_INTERVAL_S, LatencyWindows, planRoute, type RouteCandidate } from './routing.ts';
import { normalizeMessages } from './content.ts';
import { estimateCost } from './pricing/pricing.ts';
import type { CompletionBody } from './schemas.ts';
import { SettingsStore, type GatewaySettings } from './settings.ts';

/** USD cost of a call, or null when the price of that model is unknown. */
export type CostFunction = (provider: string, model: string, usage: TokenUsage) => number | null;

export interface Invokers {
  completion: typeof invokeCompletion;
  stream: typeof invokeStream;
}

export interface GatewayServiceDeps {
  db: Database;
  cache: Cache;
  logger: Logger;
  metrics: Metrics;
  /** Per-provider keys from the environment (config.providerEnvKeys). */
  envKeys: Readonly<Record<string, string>>;
  /** The org's stored provider keys (accounts.providerKeys). */
  orgKeys: ProviderKeySource;
  events: GatewayEvents;
  costUsd?: CostFunction;
  invokers?: Invokers;
  breakerPolicy?: BreakerPolicy;
  retryPolicy?: RetryPolicy;
  /**
   * SSRF screen of an org-supplied base URL (services.checkTarget), re-run at call time so a
   * host that changed its DNS after the key was stored is caught; results are cached 60 s.
   */
  checkTarget?: (url: string) => Promise<unknown>;
  /** ALLOW_PRIVATE_TARGETS: when false, calls to org-supplied base URLs refuse private addresses at connect time. */
  allowPrivateTargets?: boolean;
  /** Told the share of the daily token budget an org has used after each settled call (TokenBudgetNearing gauge). */
  onBudgetUsage?: (orgId: string, ratio: number) => void;
  /** Health-check and breaker-sync timers, started by `start()` (default true; tests may drive `runHealthChecks` by hand). */
  timers?: boolean;
}

/** Who is asking (from the authenticated request). */
export interface Caller {
  orgId: string;
  plan: string;
  /** 'test' keys are sandbox keys: not billed, not counted against budgets or spend baselines. */
  keyClass: 'live' | 'test' | 'rstr';
  requestId: string;
}

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

/** Settlement deltas of one org and budget day, waiting for the next batch (see account()). */
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

interface Viable extends RouteCandidate {
  target: ProviderTarget;
  key: string;
}

/** Everything decided before the first upstream call. */
export interface PreparedCompletion {
  caller: Caller;
  request: CompletionRequest;
  candidates: Viable[];
  settings: GatewaySettings;
  redaction: { mapping: Map<string, string>; summary: RedactionSummary } | null;
  reservation: Reservation | null;
  tokenLimit: number;
  startedAt: number;
}

interface AttemptSuccess<T> {
  value: T;
  candidate: Viable;
  breaker: CircuitBreaker;
  probe: boolean;
  latencyMs: number;
}

/** A stream whose first event has arrived: failover is over, the client may now be answered. */
export interface OpenedStream {
  provider: string;
  model: string;
  first: StreamEvent;
  rest: AsyncIterator<StreamEvent>;
  /** Call exactly once when the stream ended, failed or was abandoned. */
  finish(
    outcome: { kind: 'done'; event: Extract<StreamEvent, { type: 'done' }>; content: string } | { kind: 'error'; error: unknown; content: string } | { kind: 'aborted'; content: string },
  ): Promise<{
    usage: TokenUsage;
    costUsd: number | null;
  } | null>;
  /** Restores PII placeholders across chunks (identity when the org did not opt in). */
  restore: { push(delta: string): string; flush(): string };
}

const MICRO = 1_000_000;
/**
 * Settlements are applied in batches, at most this long after the response: one counter update,
 * warning check and spend check per org and batch instead of per request. The reservation holds
 * the estimate meanwhile, so no limit can be passed in the interval.
 */
const SETTLE_BATCH_MS = 10;
/** The reference request cost-optimized routing compares prices on. */
const REFERENCE_USAGE: TokenUsage = { promptTokens: 1_000, completionTokens: 1_000, totalTokens: 2_000 };
const HEALTH_CHECK_TICK_MS = 5_000;
const BREAKER_SYNC_MS = 1_000;
/** How often memory-mode budget usage is written to the database (see budget.ts). */
const BUDGET_PERSIST_MS = 1_000;

export class GatewayService {
  readonly settings: SettingsStore;
  readonly budget: BudgetLedger;
  readonly spend: SpendTracker;
  readonly breakers: BreakerRegistry;
  readonly latency = new LatencyWindows();
  private readonly invokers: Invokers;
  private readonly retryPolicy: RetryPolicy;
  private readonly costOf: CostFunction;
  private readonly turns = new Map<string, number>();
  /** Budget settlements still running after their response was sent (see account()). */
  private readonly accounting = new Set<Promise<void>>();
  /** Settlements waiting for the next batch, per org and budget day. */
  private readonly pendingSettlements = new Map<string, PendingSettlement>();
  private settleTimer: NodeJS.Timeout | null = null;
  /** Last target seen per breaker key: what an active health check calls. */
  private readonly recentTargets = new Map<string, { provider: ProviderId; model: string; target: ProviderTarget; intervalS: number; lastCheckAt: number; orgId: string }>();
  private readonly timers: NodeJS.Timeout[] = [];
  /** Breaker keys whose svc_gateway_health is currently 1 (the gauge is written on changes only). */
  private readonly reportedHealthy = new Set<string>();
  private readonly screened = new Map<string, { error: unknown; until: number }>();
  // planRoute's lookups, created once (not per request: see routing.ts on closures).
  private readonly isAvailable = (id: string): boolean => this.breakers.get(id).available(Date.now());
  private readonly latencyOf = (id: string): number | null => this.latency.mean(id);
  private readonly priceOf = (id: string, model: string): number | null => this.costOf(id, model, REFERENCE_USAGE);

  constructor(private readonly deps: GatewayServiceDeps) {
    this.settings = new SettingsStore(deps.db);
    this.budget = new BudgetLedger(deps.cache, Date.now, createBudgetStore(deps.db));
    this.spend = new SpendTracker(deps.cache);
    this.invokers = deps.invokers ?? { completion: invokeCompletion, stream: invokeStream };
    this.retryPolicy = deps.retryPolicy ?? DEFAULT_RETRY_POLICY;
    this.costOf = deps.costUsd ?? (() => null);
    this.breakers = new BreakerRegistry({
      policy: deps.breakerPolicy ?? DEFAULT_BREAKER_POLICY,
      redis: () => deps.cache.redis(),
      keyPrefix: deps.cache.prefix,
      onTransition: (transition) => {
        this.reportHealth(transition.key, transition.to !== 'open');
        deps.logger.info({ gateway_id: transition.key, from: transition.from, to: transition.to, remote: transition.remote }, 'gateway breaker transition');
      },
    });
  }

  /** Starts the health-check and breaker-sync timers (unless `timers: false`); the server lifecycle calls it. */
  start(): void {
    if (!(this.deps.timers ?? true) || this.timers.length > 0) return;
    const health = setInterval(() => void this.runHealthChecks(), HEALTH_CHECK_TICK_MS);
    const sync = setInterval(() => void this.breakers.sync(), BREAKER_SYNC_MS);
    const persist = setInterval(() => void this.persistBudgets(), BUDGET_PERSIST_MS);
    health.unref();
    sync.unref();
    persist.unref();
    this.timers.push(health, sync, persist);
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    await this.settled();
    await this.persistBudgets();
  }

  /** Memory-mode budget counters to the database (see budget.ts); failures are retried on the next call. */
  private async persistBudgets(): Promise<void> {
    try {
      await this.budget.persist();
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'gateway budget usage not persisted; retried in 1 s');
    }
  }

  private reportHealth(key: string, healthy: boolean): void {
    if (healthy === this.reportedHealthy.has(key)) return;
    if (healthy) this.reportedHealthy.add(key);
    else this.reportedHealthy.delete(key);
    this.deps.metrics.gatewayHealth.set({ gateway_id: key }, healthy ? 1 : 0);
  }

  // ------------------------------------------------------------------------------- prepare

  async prepare(body: CompletionBody, caller: Caller): Promise<PreparedCompletion> {
    const startedAt = performance.now();
    const settings = await this.settings.get(caller.orgId);
    const provider = body.provider ?? (settings.routing !== null ? 'auto' : null);
    if (provider === null) throw validation('body.provider', 'required', 'body.provider is required when the org has no routing configuration');
    if (provider === 'auto' && settings.routing === null) throw validation('body.provider', 'routing_not_configured', 'provider "auto" needs a routing configuration (PUT /api/v1/gateway/routing)');
    if (provider !== 'auto' && !isProviderId(provider)) throw validation('body.provider', 'unknown_provider', `unknown provider "${provider}"`);

    const messages: ChatMessage[] = normalizeMessages(body.messages);
    let redaction: PreparedCompletion['redaction'] = null;
    if (settings.piiMode === 'block') {
      const types = new Set<string>();
      for (const message of messages) for (const span of detectPii(message.content)) types.add(span.type);
      if (types.size > 0) throw new SvcError('PII_BLOCKED', { details: { pii_types: [...types].sort() } });
    } else if (settings.piiMode === 'redact') {
      const result = redactMessages(messages, 'redact');
      if (result.summary.total > 0) redaction = { mapping: result.mapping, summary: result.summary };
      messages.splice(0, messages.length, ...result.messages);
    }

    const request: CompletionRequest = { model: body.model, messages, stream: body.stream === true };
    if (body.max_tokens !== undefined) request.max_tokens = body.max_tokens;
    if (body.temperature !== undefined) request.temperature = body.temperature;
    if (body.tools !== undefined && body.tools.length > 0) request.tools = body.tools.map(normalizeTool);

    const turn = (this.turns.get(caller.orgId) ?? 0) + 1;
    this.turns.set(caller.orgId, turn);
    if (this.turns.size > 100_000) this.turns.clear();
    const planned = planRoute({
      provider,
      model: body.model,
      routing: settings.routing,
      isAvailable: this.isAvailable,
      latencyOf: this.latencyOf,
      priceOf: this.priceOf,
      turn,
    });
    // One planned provider (the common case) is resolved without a Promise.all round.
    const resolved = planned.length === 1 ? [await this.resolveCandidate(planned[0]!, caller.orgId)] : await Promise.all(planned.map((candidate) => this.resolveCandidate(candidate, caller.orgId)));
    const candidates: Viable[] = [];
    let screenError: unknown = null;
    for (const outcome of resolved) {
      if (outcome === null) continue;
      if ('screenError' in outcome) screenError = outcome.screenError;
      else candidates.push(outcome);
    }
    if (candidates.length === 0) {
      if (screenError !== null) throw screenError;
      throw new SvcError('NO_PROVIDERS', { details: { providers: planned.map((candidate) => candidate.provider) } });
    }

    const tokenLimit = dailyTokenBudget(caller.plan);
    let reservation: Reservation | null = null;
    if (caller.keyClass !== 'test') {
      const promptTokens = estimatePromptTokens(messages);
      const completionTokens = request.max_tokens ?? DEFAULT_COMPLETION_RESERVE;
      const first = candidates[0]!;
      const reserveUsage = { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
      const estimatedUsd = this.costOf(first.provider, first.model, reserveUsage) ?? fallbackCostUsd(first.provider, first.model, reserveUsage);
      const outcome = await this.budget.reserve(
        caller.orgId,
        tokenLimit,
        promptTokens + completionTokens,
        settings.dailyUsdCap === null ? null : Math.round(settings.dailyUsdCap * MICRO),
        Math.ceil(estimatedUsd * MICRO),
      );
      if (!outcome.ok) {
        const retryAfter = Math.max(1, Math.ceil((Date.parse(outcome.resetAt) - Date.now()) / 1000));
        if (await this.deps.cache.setIfAbsent(`${this.deps.cache.prefix}gw:budget-exhausted:${caller.orgId}:${outcome.resetAt}`, '1', retryAfter * 1000)) {
          this.deps.events.emit(caller.orgId, 'budget.exhausted', { budget: outcome.budget, limit: outcome.limit, used: outcome.used, reset_at: outcome.resetAt });
        }
        throw new SvcError('BUDGET_EXHAUSTED', {
          headers: { 'Retry-After': String(retryAfter) },
          details:
            outcome.budget === 'tokens'
              ? { budget: 'daily_tokens', limit: outcome.limit, used: outcome.used, requested: promptTokens + completionTokens, reset_at: outcome.resetAt }
              : { budget: 'daily_usd', limit_usd: outcome.limit / MICRO, used_usd: outcome.used / MICRO, reset_at: outcome.resetAt },
        });
      }
      reservation = outcome.reservation;
    }
    return { caller, request, candidates, settings, redaction, reservation, tokenLimit, startedAt };
  }

  /** The candidate with its key and target; null without a key; the SSRF screen's error for a refused base URL. */
  private async resolveCandidate(candidate: RouteCandidate, orgId: string): Promise<Viable | { screenError: unknown } | null> {
    if (!isProviderId(candidate.provider)) return null;
    const target = await resolveTarget(this.deps.orgKeys, this.deps.envKeys, orgId, candidate.provider);
    if (target === null) return null;
    if (target.baseUrl !== undefined) {
      const error = await this.screen(target.baseUrl);
      if (error !== null) return { screenError: error };
    }
    return { ...candidate, target, key: targetKey(candidate.provider, target) };
  }

  /** null when the URL may be called, else the error to answer with (cached 60 s per URL). */
  private async screen(url: string): Promise<unknown> {
    const check = this.deps.checkTarget;
    if (check === undefined) return null;
    const now = Date.now();
    const hit = this.screened.get(url);
    if (hit !== undefined && hit.until > now) return hit.error;
    let error: unknown = null;
    try {
      await check(url);
    } catch (caught) {
      error = caught instanceof SvcError ? caught : new SvcError('TARGET_FORBIDDEN', { details: { field: 'base_url' } });
    }
    if (this.screened.size > 10_000) this.screened.clear();
    this.screened.set(url, { error, until: now + 60_000 });
    return error;
  }

  // ------------------------------------------------------------------------------- complete

  async complete(prepared: PreparedCompletion, signal?: AbortHook): Promise<CompletionEnvelope> {
    let success: AttemptSuccess<CompletionResult>;
    try {
      success = await this.runAttempts(prepared, signal, (candidate, attemptSignal) =>
        this.invokers.completion(candidate.provider as ProviderId, { ...prepared.request, model: candidate.model, stream: false }, candidate.target, {
          signal: attemptSignal,
          timeoutMs: this.retryPolicy.attemptTimeoutMs,
          publicOnly: candidate.target.baseUrl !== undefined && this.deps.allowPrivateTargets !== true,
        }),
      );
    } catch (error) {
      await this.release(prepared);
      throw error;
    }
    const { value: result, candidate, breaker, probe, latencyMs } = success;
    breaker.record(true, Date.now(), probe);
    this.latency.observe(candidate.key, latencyMs);
    this.reportHealth(candidate.key, breaker.state(Date.now()) !== 'open');
    const costUsd = this.account(prepared, candidate, result.model, result.usage);
    const restore = prepared.settings.piiRestore && prepared.redaction !== null;
    const envelope: CompletionEnvelope = {
      request_id: prepared.caller.requestId,
      provider: candidate.provider,
      model: result.model,
      content: restore ? restorePlaceholders(result.content, prepared.redaction!.mapping) : result.content,
      finish_reason: result.finishReason,
      usage: toPublicUsage(result.usage),
      cost_usd: costUsd,
      latency_ms: Math.round((performance.now() - prepared.startedAt) * 1000) / 1000,
      verification: null,
      response_filter: responseFilter(prepared, restore),
    };
    if (result.toolCalls !== undefined && result.toolCalls.length > 0) envelope.tool_calls = result.toolCalls;
    return envelope;
  }

  // ------------------------------------------------------------------------------- stream

  /**
   * Opens a stream: tries candidates until one yields its first event. Throws SvcError (no byte
   * sent yet, the route answers with a normal error) when none does.
   */
  async openStream(prepared: PreparedCompletion, signal: AbortHook): Promise<OpenedStream> {
    let success: AttemptSuccess<{ first: StreamEvent; rest: AsyncIterator<StreamEvent> }>;
    try {
      success = await this.runAttempts(prepared, signal, async (candidate, attemptSignal) => {
        const iterable = await this.invokers.stream(candidate.provider as ProviderId, { ...prepared.request, model: candidate.model, stream: true }, candidate.target, {
          signal: attemptSignal,
          timeoutMs: this.retryPolicy.attemptTimeoutMs,
          publicOnly: candidate.target.baseUrl !== undefined && this.deps.allowPrivateTargets !== true,
        });
        const rest = iterable[Symbol.asyncIterator]();
        const next = await rest.next();
        if (next.done === true) throw new UpstreamError({ provider: candidate.provider, status: null, code: 'network', providerCode: 'stream_ended_early' });
        return { first: next.value, rest };
      });
    } catch (error) {
      await this.release(prepared);
      throw error;
    }
    const { candidate, breaker, probe, latencyMs, value } = success;
    this.latency.observe(candidate.key, latencyMs);
    const restore = prepared.settings.piiRestore && prepared.redaction !== null;
    let finished = false;
    return {
      provider: candidate.provider,
      model: candidate.model,
      first: value.first,
      rest: value.rest,
      restore: restore ? createStreamRestorer(prepared.redaction!.mapping) : { push: (delta) => delta, flush: () => '' },
      finish: async (outcome) => {
        if (finished) return null;
        finished = true;
        const now = Date.now();
        if (outcome.kind === 'aborted') {
          // The client left mid-stream; what it was sent still counts (estimated), the rest of the reservation is released.
          breaker.record(null, now, probe);
          const usage = estimateUsage(prepared.request.messages, outcome.content);
          this.account(prepared, candidate, candidate.model, usage);
          return null;
        }
        if (outcome.kind === 'error') {
          const counts = outcome.error instanceof UpstreamError ? countsAgainstProvider(outcome.error) : true;
          breaker.record(!counts, now, probe);
          // The client received part of a completion: account for the estimated part it got.
          const usage = estimateUsage(prepared.request.messages, outcome.content);
          const costUsd = this.account(prepared, candidate, candidate.model, usage);
          return { usage, costUsd };
        }
        breaker.record(true, now, probe);
        this.reportHealth(candidate.key, breaker.state(now) !== 'open');
        const usage = outcome.event.usage ?? estimateUsage(prepared.request.messages, outcome.content);
        const costUsd = this.account(prepared, candidate, outcome.event.model ?? candidate.model, usage);
        return { usage, costUsd };
      },
    };
  }

  /** The candidate after `provider` in this request's route, with its equivalent model (verification's retry action), or null. */
  nextCandidate(prepared: PreparedCompletion, provider: string): { provider: string; model: string } | null {
    const at = prepared.candidates.findIndex((candidate) => candidate.provider === provider);
    const next = at < 0 ? undefined : prepared.candidates[at + 1];
    return next === undefined ? null : { provider: next.provider, model: next.model };
  }

  /** The response_filter summary for a stream's final event. */
  responseFilterOf(prepared: PreparedCompletion): Record<string, unknown> | null {
    return responseFilter(prepared, prepared.settings.piiRestore && prepared.redaction !== null);
  }

  // ------------------------------------------------------------------------------- attempts

  private async runAttempts<T>(
    prepared: PreparedCompletion,
    signal: AbortHook | undefined,
    attempt: (candidate: Viable, signal: AbortHook | undefined) => Promise<T>,
  ): Promise<AttemptSuccess<T>> {
    const started = performance.now();
    let lastError: unknown = null;
    let attempts = 0;
    let skippedOpen = 0;
    for (const candidate of prepared.candidates) {
      this.remember(prepared, candidate);
      const breaker = this.breakers.get(candidate.key);
      for (let tries = 1; ; tries += 1) {
        if (signal?.aborted) throw new SvcError('UPSTREAM_ERROR', { details: { reason: 'client_disconnected' } });
        const admission = breaker.admit(Date.now());
        if (admission === 'rejected') {
          skippedOpen += 1;
          break;
        }
        const probe = admission === 'probe';
        const attemptStarted = performance.now();
        attempts += 1;
        try {
          const value = await attempt(candidate, signal);
          return { value, candidate, breaker, probe, latencyMs: performance.now() - attemptStarted };
        } catch (raw) {
          const error = raw instanceof UpstreamError ? raw : new UpstreamError({ provider: candidate.provider, status: null, code: 'server', retryable: false, providerCode: 'adapter_failure', cause: raw });
          if (signal?.aborted) {
            breaker.record(null, Date.now(), probe);
            throw new SvcError('UPSTREAM_ERROR', { details: { reason: 'client_disconnected' } });
          }
          const counts = countsAgainstProvider(error);
          const before = breaker.state(Date.now());
          breaker.record(!counts, Date.now(), probe);
          this.reportHealth(candidate.key, breaker.state(Date.now()) !== 'open');
          if (before !== 'open' && breaker.state(Date.now()) === 'open') this.announceDown(prepared.caller.orgId, candidate, error, 'circuit_breaker');
          this.deps.logger.warn(
            { request_id: prepared.caller.requestId, gateway_id: candidate.key, upstream_code: error.code, upstream_status: error.status, attempt: tries },
            'upstream attempt failed',
          );
          lastError = error;
          const decision = decideRetry(error, tries, performance.now() - started, this.retryPolicy);
          if (decision.action === 'failover') break;
          try {
            await sleep(decision.delayMs, signal);
          } catch {
            throw new SvcError('UPSTREAM_ERROR', { details: { reason: 'client_disconnected' } });
          }
        }
      }
      if (performance.now() - started >= this.retryPolicy.totalBudgetMs) break;
    }
    throw failureToError(lastError, attempts, skippedOpen);
  }

  private remember(prepared: PreparedCompletion, candidate: Viable): void {
    const existing = this.recentTargets.get(candidate.key);
    const intervalS = prepared.settings.routing?.health_check_interval_s ?? DEFAULT_HEALTH_CHECK_INTERVAL_S;
    if (existing !== undefined && existing.target.apiKey === candidate.target.apiKey && existing.intervalS === intervalS) return;
    if (this.recentTargets.size > 10_000) this.recentTargets.clear();
    this.recentTargets.set(candidate.key, {
      provider: candidate.provider as ProviderId,
      model: candidate.model,
      target: candidate.target,
      intervalS,
      lastCheckAt: existing?.lastCheckAt ?? 0,
      orgId: prepared.caller.orgId,
    });
  }

  private announceDown(orgId: string, candidate: Viable, error: UpstreamError, checkType: 'circuit_breaker' | 'health_check'): void {
    const snapshot = this.breakers.get(candidate.key).snapshot(Date.now());
    const adapter = getAdapter(candidate.provider as ProviderId);
    const backend = candidate.target.baseUrl ?? adapter.defaultBaseUrl ?? '';
    this.deps.events.emit(orgId, 'gateway.down', {
      gateway_name: candidate.key,
      backend_url: backend === '' ? '' : safeUrl(backend),
      check_type: checkType,
      http_status: error.status ?? 0,
      consecutive_failures: snapshot.consecutiveFailures,
      first_failure_at: new Date(snapshot.firstFailureAt ?? Date.now()).toISOString(),
    });
  }

  /**
   * Active health checks: every provider whose breaker is not closed gets a 1-token completion
   * (max_tokens 1) at most once per its org's health_check_interval_s, with the last key that
   * used it on this replica; a success moves the breaker to half-open so real traffic can probe.
   * Closed breakers are judged by live traffic alone, so healthy providers cost nothing extra.
   */
  async runHealthChecks(now = Date.now()): Promise<number> {
    let checked = 0;
    for (const [key, entry] of this.recentTargets) {
      const breaker = this.breakers.get(key);
      if (breaker.state(now) !== 'open') continue;
      if (now - entry.lastCheckAt < entry.intervalS * 1000) continue;
      entry.lastCheckAt = now;
      checked += 1;
      try {
        await this.invokers.completion(entry.provider, { model: entry.model, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1, stream: false }, entry.target, { timeoutMs: 10_000, publicOnly: entry.target.baseUrl !== undefined && this.deps.allowPrivateTargets !== true });
        breaker.healthCheckPassed(Date.now());
        this.reportHealth(key, true);
      } catch {
        this.reportHealth(key, false);
      }
    }
    return checked;
  }

  /**
   * Breaker states for the admin endpoint of one org: the shared public providers, plus the
   * breakers of the org's own custom base URLs (another org's self-hosted hosts are not shown).
   */
  async health(orgId: string): Promise<Array<Record<string, unknown>>> {
    const now = Date.now();
    const ownKeys = new Set<string>();
    await Promise.all(
      providerIds.map(async (provider) => {
        const stored = await this.deps.orgKeys.get(orgId, provider);
        if (stored?.baseUrl) ownKeys.add(targetKey(provider, { apiKey: '', baseUrl: stored.baseUrl }));
      }),
    );
    const visible = this.breakers.snapshot().filter((entry) => !entry.key.includes('@') || ownKeys.has(entry.key));
    return visible.map((entry) => ({
      gateway_id: entry.key,
      state: entry.state,
      healthy: entry.state === 'closed',
      requests_in_window: entry.requests,
      failures_in_window: entry.failures,
      failure_rate: Math.round(entry.failureRate * 1000) / 1000,
      consecutive_failures: entry.consecutiveFailures,
      open_until: entry.openUntil === null ? null : new Date(entry.openUntil).toISOString(),
      last_failure_at: entry.lastFailureAt === null ? null : new Date(entry.lastFailureAt).toISOString(),
      mean_latency_ms: roundOrNull(this.latency.mean(entry.key)),
      health_check_interval_s: this.recentTargets.get(entry.key)?.intervalS ?? DEFAULT_HEALTH_CHECK_INTERVAL_S,
      checked_at: new Date(now).toISOString(),
    }));
  }

  // ------------------------------------------------------------------------------- money

  /**
   * The request's cost (returned at once, it is part of the response) and its accounting: token
   * metric now; budget settlement, the 80 % warning and the spend-anomaly check continue after
   * the response is sent, batched per org every SETTLE_BATCH_MS (the reservation already holds
   * the estimate, so nothing can overshoot meanwhile). settled() and close() apply what is queued.
   */
  private account(prepared: PreparedCompletion, candidate: Viable, model: string, usage: TokenUsage): number | null {
    const cost = this.costOf(candidate.provider, model, usage) ?? this.costOf(candidate.provider, candidate.model, usage);
    const costUsd = cost === null ? null : Math.round(cost * 1e10) / 1e10;
    this.deps.metrics.aiTokens.inc({ model, provider: candidate.provider }, usage.totalTokens);
    const reservation = prepared.reservation;
    if (reservation === null) return costUsd;
    // An unpriced model still counts against a USD cap, at the conservative fallback estimate.
    const microUsd = Math.round((costUsd ?? fallbackCostUsd(candidate.provider, model, usage)) * MICRO);
    const delta = settlementDelta(reservation, usage.totalTokens, microUsd);
    const key = `${reservation.orgId} ${reservation.day}`;
    const pending = this.pendingSettlements.get(key);
    if (pending === undefined) {
      this.pendingSettlements.set(key, { orgId: reservation.orgId, day: reservation.day, tokens: delta.tokens, microUsd: delta.microUsd, spend: microUsd, tokenLimit: prepared.tokenLimit, requestId: prepared.caller.requestId });
    } else {
      pending.tokens += delta.tokens;
      pending.microUsd += delta.microUsd;
      pending.spend += microUsd;
      pending.tokenLimit = prepared.tokenLimit;
    }
    if (this.settleTimer === null) {
      this.settleTimer = setTimeout(() => this.flushSettlements(), SETTLE_BATCH_MS);
      this.settleTimer.unref();
    }
    return costUsd;
  }

  /** Starts applying every queued settlement (tracked in `accounting`). */
  private flushSettlements(): void {
    if (this.settleTimer !== null) clearTimeout(this.settleTimer);
    this.settleTimer = null;
    for (const pending of this.pendingSettlements.values()) {
      const settling = this.settle(pending);
      this.accounting.add(settling);
      void settling.finally(() => this.accounting.delete(settling));
    }
    this.pendingSettlements.clear();
  }

  private async settle(pending: PendingSettlement): Promise<void> {
    const { orgId, tokenLimit } = pending;
    try {
      const used = await this.budget.adjust(orgId, pending.day, pending.tokens, pending.microUsd);
      this.deps.onBudgetUsage?.(orgId, used / tokenLimit);
      if (await this.budget.shouldWarn(orgId, used, tokenLimit)) {
        this.deps.events.emit(orgId, 'budget.warning', {
          budget: 'daily_tokens',
          limit: tokenLimit,
          used,
          ratio: Math.round((used / tokenLimit) * 1000) / 1000,
        });
      }
      const anomaly = await this.spend.add(orgId, pending.spend);
      if (anomaly !== null) {
        this.deps.events.emit(orgId, 'cost.anomaly', {
          hour_start: anomaly.hourStart,
          spend_usd: anomaly.currentMicroUsd / MICRO,
          baseline_mean_usd: anomaly.mean / MICRO,
          baseline_stddev_usd: anomaly.stddev / MICRO,
          z_score: Math.round(anomaly.z * 100) / 100,
        });
      }
    } catch (error) {
      this.deps.logger.error({ err: error, request_id: pending.requestId }, 'gateway accounting failed');
    }
  }

  /** Resolves when accounting started or queued so far has been applied (tests, shutdown). */
  async settled(): Promise<void> {
    if (this.pendingSettlements.size > 0) this.flushSettlements();
    while (this.accounting.size > 0) await Promise.allSettled([...this.accounting]);
  }

  private async release(prepared: PreparedCompletion): Promise<void> {
    if (prepared.reservation === null) return;
    try {
      await this.budget.settle(prepared.reservation, 0, 0);
    } catch (error) {
      this.deps.logger.error({ err: error }, 'gateway budget release failed');
    }
  }
}

// --------------------------------------------------------------------------------- helpers

function validation(field: string, reason: string, message: string): SvcError {
  return new SvcError('VALIDATION_FAILED', { message, details: { field, reason } });
}

function normalizeTool(tool: NonNullable<CompletionBody['tools']>[number]): ToolDefinition {
  const flat = 'function' in tool ? tool.function : tool;
  const definition: ToolDefinition = { name: flat.name, parameters: flat.parameters ?? { type: 'object', properties: {} } };
  if (flat.description !== undefined) definition.description = flat.description;
  return definition;
}

/** The price table's fallback estimate (never under-counts a budget) for a model without a listed price. */
function fallbackCostUsd(provider: string, model: string, usage: TokenUsage): number {
  return estimateCost(provider, model, usage).usd;
}

function toPublicUsage(usage: TokenUsage): CompletionEnvelope['usage'] {
  return { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.totalTokens };
}

export { toPublicUsage };

function estimateUsage(messages: ReadonlyArray<{ content: string }>, content: string): TokenUsage {
  const promptTokens = estimatePromptTokens(messages);
  const completionTokens = Math.ceil(content.length / 4);
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
}

function responseFilter(prepared: PreparedCompletion, restored: boolean): Record<string, unknown> | null {
  if (prepared.redaction === null) return null;
  return { pii: { mode: prepared.redaction.summary.mode, redacted: prepared.redaction.summary.redacted, total: prepared.redaction.summary.total, restored } };
}

function roundOrNull(value: number | null): number | null {
  return value === null ? null : Math.round(value * 1000) / 1000;
}

/** Maps the last upstream failure of a request to a catalogue error (no upstream text). */
export function failureToError(lastError: unknown, attempts: number, skippedOpen: number): SvcError {
  if (!(lastError instanceof UpstreamError)) {
    return new SvcError('UPSTREAM_UNAVAILABLE', { details: { reason: 'circuit_open', attempts, providers_skipped: skippedOpen } });
  }
  const details = { provider: lastError.provider, upstream_status: lastError.status, upstream_code: lastError.code, attempts };
  if (lastError.providerCode === 'images_not_supported' || lastError.providerCode === 'image_url_not_supported') {
    return new SvcError('IMAGES_NOT_SUPPORTED', { details: { provider: lastError.provider, reason: lastError.providerCode, attempts } });
  }
  switch (lastError.code) {
    case 'quota_exceeded':
      return new SvcError('UPSTREAM_QUOTA_EXCEEDED', { details });
    case 'auth':
      return new SvcError('UPSTREAM_AUTH_FAILED', { details });
    case 'bad_request':
    case 'not_found':
      return new SvcError('UPSTREAM_REJECTED', { details });
    case 'timeout':
      return new SvcError('UPSTREAM_TIMEOUT', { details });
    case 'rate_limited':
    case 'overloaded': {
      const seconds = Math.max(1, Math.ceil((lastError.retryAfterMs ?? 1_000) / 1000));
      return new SvcError('UPSTREAM_UNAVAILABLE', { details, headers: { 'Retry-After': String(seconds) } });
    }
    default:
      return new SvcError('UPSTREAM_ERROR', { details });
  }
}

export function newRequestId(): string {
  return randomUUID();
}
