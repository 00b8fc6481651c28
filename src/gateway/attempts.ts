/**
 * Attempts: the upstream calls of one completion, after admission and before settlement.
 *
 * Posture: a failing upstream must not take svc down nor burn the client's time. Each candidate
 * of the route plan is tried behind its circuit breaker (an open breaker skips the provider at
 * once), retried with backoff while the retry policy allows, then failed over to the next
 * candidate; all of it only while nothing has reached the client. A client that leaves stops the
 * attempts and is never counted against the provider. Upstream error text never reaches
 * clients: the last failure maps to a catalogue code (`failureToError`).
 *
 * Also owned here: latency windows (least-latency routing), the svc_gateway_health gauge, the
 * `gateway.down` event, active health checks of open breakers and the admin health view.
 */
import { LRUCache } from 'lru-cache';
import { SvcError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { Metrics } from '../platform/metrics.ts';
import type { Cache } from '../platform/cache.ts';
import type { AbortHook } from './cancel.ts';
import { BreakerRegistry, DEFAULT_BREAKER_POLICY, type BreakerPolicy, type CircuitBreaker } from './breaker.ts';
import { safeUrl, UpstreamError } from './contract.ts';
import type { CompletionResult, ProviderTarget, StreamEvent } from './contract.ts';
import { AI_GATEWAY_EVENT, type GatewayEvents } from './events.ts';
import { targetKey, type ProviderKeySource } from './keys.ts';
import { getAdapter, invokeCompletion, invokeStream, providerIds, type ProviderId } from './registry.ts';
import { countsAgainstProvider, decideRetry, DEFAULT_RETRY_POLICY, sleep, type RetryPolicy } from './retry.ts';
import { DEFAULT_HEALTH_CHECK_INTERVAL_S, LatencyWindows } from './routing.ts';
import type { PreparedCompletion, Viable } from './admission.ts';
import { entryBound } from '../platform/lru.ts';

export interface Invokers {
  completion: typeof invokeCompletion;
  stream: typeof invokeStream;
}

export interface AttemptsDeps {
  cache: Cache;
  logger: Logger;
  metrics: Metrics;
  events: GatewayEvents;
  orgKeys: ProviderKeySource;
  invokers?: Invokers;
  breakerPolicy?: BreakerPolicy;
  retryPolicy?: RetryPolicy;
  allowPrivateTargets?: boolean;
  timers?: boolean;
}

/** The attempt that answered: the breaker outcome is recorded by whoever learns how it ended. */
export interface AttemptSuccess<T> {
  value: T;
  candidate: Viable;
  breaker: CircuitBreaker;
  probe: boolean;
  latencyMs: number;
  /** Providers passed over before this one answered (failed, or skipped with an open breaker), in order. */
  passedOver: string[];
  /** Upstream calls made for this request, retries included (the successful one counts). */
  attempts: number;
}

/** A stream's first event has arrived: failover is over. */
export interface FirstEvent {
  first: StreamEvent;
  rest: AsyncIterator<StreamEvent>;
}

const HEALTH_CHECK_TICK_MS = 5_000;
const BREAKER_SYNC_MS = 1_000;
/** Breaker keys whose last target an active health check remembers (least recently used out). */
const MAX_REMEMBERED_TARGETS = 10_000;

interface RememberedTarget {
  provider: ProviderId;
  model: string;
  target: ProviderTarget;
  intervalS: number;
  lastCheckAt: number;
  orgId: string;
}

export class Attempts {
  readonly breakers: BreakerRegistry;
  readonly latency = new LatencyWindows();
  readonly invokers: Invokers;
  readonly retryPolicy: RetryPolicy;
  /** Last target seen per breaker key: what an active health check calls. */
  private readonly recentTargets = new LRUCache<string, RememberedTarget>(entryBound(MAX_REMEMBERED_TARGETS));
  private readonly timers: NodeJS.Timeout[] = [];
  /** Breaker keys whose svc_gateway_health is currently 1 (the gauge is written on changes only). */
  private readonly reportedHealthy = new Set<string>();

  constructor(private readonly deps: AttemptsDeps) {
    this.invokers = deps.invokers ?? { completion: invokeCompletion, stream: invokeStream };
    this.retryPolicy = deps.retryPolicy ?? DEFAULT_RETRY_POLICY;
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

  /** Starts the health-check and breaker-sync timers (unless `timers: false`). */
  start(): void {
    if (!(this.deps.timers ?? true) || this.timers.length > 0) return;
    const health = setInterval(() => void this.runHealthChecks(), HEALTH_CHECK_TICK_MS);
    const sync = setInterval(() => void this.breakers.sync(), BREAKER_SYNC_MS);
    health.unref();
    sync.unref();
    this.timers.push(health, sync);
  }

  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
  }

  /** A JSON completion: the first candidate that answers. */
  completion(prepared: PreparedCompletion, signal: AbortHook | undefined): Promise<AttemptSuccess<CompletionResult>> {
    return this.run(prepared, signal, (candidate, attemptSignal) =>
      this.invokers.completion(candidate.provider as ProviderId, { ...prepared.request, model: candidate.model, stream: false }, candidate.target, {
        signal: attemptSignal,
        timeoutMs: this.retryPolicy.attemptTimeoutMs,
        publicOnly: candidate.target.baseUrl !== undefined && this.deps.allowPrivateTargets !== true,
      }),
    );
  }

  /** A stream: the first candidate whose stream yields its first event (a stream that ends before it is a failure). */
  stream(prepared: PreparedCompletion, signal: AbortHook): Promise<AttemptSuccess<FirstEvent>> {
    return this.run(prepared, signal, async (candidate, attemptSignal) => {
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
  }

  /** The answer was complete: the breaker counts a success, the gauge follows. */
  succeeded(success: AttemptSuccess<unknown>, now = Date.now()): void {
    success.breaker.record(true, now, success.probe);
    this.reportHealth(success.candidate.key, success.breaker.state(now) !== 'open');
  }

  /** Breaker outcome of a stream that ended after its first event (the client left, or upstream failed). */
  streamEnded(success: AttemptSuccess<unknown>, outcome: 'aborted' | { error: unknown }, now = Date.now()): void {
    if (outcome === 'aborted') {
      success.breaker.record(null, now, success.probe);
      return;
    }
    const counts = outcome.error instanceof UpstreamError ? countsAgainstProvider(outcome.error) : true;
    success.breaker.record(!counts, now, success.probe);
  }

  private async run<T>(prepared: PreparedCompletion, signal: AbortHook | undefined, attempt: (candidate: Viable, signal: AbortHook | undefined) => Promise<T>): Promise<AttemptSuccess<T>> {
    const started = performance.now();
    let lastError: unknown = null;
    let attempts = 0;
    let skippedOpen = 0;
    const passedOver: string[] = [];
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
          const latencyMs = performance.now() - attemptStarted;
          this.latency.observe(candidate.key, latencyMs);
          return { value, candidate, breaker, probe, latencyMs, passedOver, attempts };
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
      passedOver.push(candidate.provider);
      if (performance.now() - started >= this.retryPolicy.totalBudgetMs) break;
    }
    throw failureToError(lastError, attempts, skippedOpen);
  }

  private remember(prepared: PreparedCompletion, candidate: Viable): void {
    const existing = this.recentTargets.get(candidate.key);
    const intervalS = prepared.settings.routing?.health_check_interval_s ?? DEFAULT_HEALTH_CHECK_INTERVAL_S;
    if (existing !== undefined && existing.target.apiKey === candidate.target.apiKey && existing.intervalS === intervalS) return;
    this.recentTargets.set(candidate.key, {
      provider: candidate.provider as ProviderId,
      model: candidate.model,
      target: candidate.target,
      intervalS,
      lastCheckAt: existing?.lastCheckAt ?? 0,
      orgId: prepared.caller.orgId,
    });
  }

  private reportHealth(key: string, healthy: boolean): void {
    if (healthy === this.reportedHealthy.has(key)) return;
    if (healthy) this.reportedHealthy.add(key);
    else this.reportedHealthy.delete(key);
    // kind tells a provider's breaker apart from a protected gateway's backend (same metric, the spec's name).
    this.deps.metrics.gatewayHealth.set({ gateway_id: key, kind: 'ai_provider' }, healthy ? 1 : 0);
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
    }, AI_GATEWAY_EVENT);
  }

  /**
   * Active health checks: every provider whose breaker is not closed gets a 1-token completion
   * (max_tokens 1) at most once per its org's health_check_interval_s, with the last key that
   * used it on this replica; a success moves the breaker to half-open so real traffic can probe.
   * Closed breakers are judged by live traffic alone, so healthy providers cost nothing extra.
   */
  async runHealthChecks(now = Date.now()): Promise<number> {
    let checked = 0;
    // A snapshot of the entries: iterating does not refresh their recency, and the awaits below may add entries.
    for (const [key, entry] of [...this.recentTargets.entries()]) {
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
      health_check_interval_s: this.recentTargets.peek(entry.key)?.intervalS ?? DEFAULT_HEALTH_CHECK_INTERVAL_S,
      checked_at: new Date(now).toISOString(),
    }));
  }
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
