/**
 * The AI gateway core: turns a validated completion request into upstream calls and the
 * service's own answer. `GatewayService` composes four modules and is the one entry point the
 * HTTP layer calls per completion (`completion`, JSON or stream):
 *
 *   admission.ts   screening, settings, provider check, PII, route plan, keys, budget reservation
 *   attempts.ts    circuit breakers, retry with backoff, failover, health checks
 *   settlement.ts  cost, token metric, budget settlement, 80 % warning, spend anomaly
 *   relay.ts       a stream from its first upstream event to the client's last byte
 *
 * Security posture: nothing leaves svc before admission (screening, PII redaction or refusal,
 * SSRF screen of org base URLs, budget reserved atomically); upstream credentials are resolved
 * per call and never logged or echoed; upstream failures are retried and failed over only while
 * nothing has reached the client, and map to catalogue codes (no upstream text).
 *
 * Order of one completion: screening → admission → response guard → attempts → settlement →
 * envelope (placeholders restored when the org opted in) → response filter → verification.
 */
import { randomUUID } from 'node:crypto';
import { context as otelContext, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { createResponseGuard, withBehaviour, type BehaviourResult, type DetectionEngine, type ProfileBaseline, type ThreatDecision } from '../detection/index.ts';
import type { Cache } from '../platform/cache.ts';
import type { ChallengeOutcome, Challenges } from '../platform/challenge.ts';
import type { Database } from '../platform/db/index.ts';
import type { Logger } from '../platform/logger.ts';
import type { Metrics } from '../platform/metrics.ts';
import { Admission, type Caller, type PreparedCompletion } from './admission.ts';
import { SpendTracker } from './anomaly.ts';
import { completionObservation } from './behaviour.ts';
import { UsageHistory, type UsageHistorySink } from './usage-history.ts';
import { Attempts, type Invokers } from './attempts.ts';
import type { AbortHook, ClientCancel } from './cancel.ts';
import type { BreakerPolicy, BreakerRegistry } from './breaker.ts';
import { BudgetLedger, createBudgetStore, type BudgetStore } from './budget.ts';
import type { CompletionResult } from './contract.ts';
import { contentText } from './content.ts';
import type { GatewayEvents } from './events.ts';
import { resolveTarget, type ProviderKeySource } from './keys.ts';
import { restorePlaceholders } from './pii/index.ts';
import { providerIds, type ProviderId } from './registry.ts';
import type { CostFunction } from './pricing/pricing.ts';
import { relayStream, svcStreamEncoder, type ServedFacts, type StreamParts, type StreamTarget } from './relay.ts';
import type { RetryPolicy } from './retry.ts';
import type { LatencyWindows } from './routing.ts';
import type { CompletionBody } from './schemas.ts';
import { CHALLENGE_VERIFY_PATH, challengeScope, refuse } from './screen.ts';
import { SettingsStore, type GatewaySettingsSource } from './settings.ts';
import { estimateUsage, responseFilter, Settlement, toPublicUsage, type CompletionEnvelope } from './settlement.ts';
import type { AttemptSuccess } from './attempts.ts';
import type { CompletionVerifier } from './verifier.ts';

export type { Caller, PreparedCompletion } from './admission.ts';
export type { Invokers } from './attempts.ts';
export type { CompletionEnvelope } from './settlement.ts';
export type { CostFunction } from './pricing/pricing.ts';
export type { ServedFacts, StreamEncoder, StreamFailure, StreamSummary, StreamTarget, ToolCallFragment } from './relay.ts';

/**
 * The narrow stores the gateway keeps state in. Under `svc serve` they are tables (built from
 * `db`); a gateway sensor, which holds no database (src/sensors/gateway-sensor.ts), gives its
 * own in-memory ones fed by, and reporting to, the collector.
 */
export interface GatewayStores {
  settings: GatewaySettingsSource;
  /** Where memory-mode budget counters go (null: none, counters live in the cache only). */
  budget: BudgetStore | null;
  history: UsageHistorySink;
}

export interface GatewayServiceDeps {
  /** The tables of the stores; required unless `stores` is given. */
  db?: Database;
  /** Stores to use instead of the tables (a gateway sensor's). */
  stores?: GatewayStores;
  cache: Cache;
  logger: Logger;
  metrics: Metrics;
  /** Per-provider keys from the environment (config.providerEnvKeys). */
  envKeys: Readonly<Record<string, string>>;
  /** The org's stored provider keys (accounts.providerKeys). */
  orgKeys: ProviderKeySource;
  events: GatewayEvents;
  /**
   * Screens every completion before admission and checks every answer (the response filter).
   * Required for `completion`; a gateway built without it can only `prepare`/`complete` (tests).
   */
  detection?: DetectionEngine;
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
  /**
   * The proof-of-work challenge for the Challenge band (platform/challenge.ts): without it a
   * completion that scores there is refused with CHALLENGE_REQUIRED and nothing to solve.
   */
  challenges?: Challenges;
  /** OpenTelemetry (platform/telemetry.ts): a span per completion when tracing is on; absent, none. */
  tracer?: Tracer;
  /**
   * T5 behavioural baselines of completions (detection's subject profiles, per org and end user
   * or API key; behaviour.ts): observed beside screening, their anomalies join the threat
   * decision. Absent, completions have no T5.
   */
  behaviour?: ProfileBaseline;
}

/**
 * What the HTTP layer does at the points of a completion that concern the HTTP exchange, with
 * `context` (its request and reply) passed back: created once per route, not per request.
 */
export interface CompletionHooks<C> {
  /**
   * Screening decided (before any refusal): request log fields and notifications. A promise: the
   * refusal waits for it (a block is answered once its evidence is on disk).
   */
  decided(context: C, decision: ThreatDecision, sessionId: string | undefined): Promise<void> | void;
  /** Admission passed: the answer, or its error, is the gateway's (transparency headers). */
  admitted(context: C): void;
  /**
   * The provider that answers is known (a stream: before its first byte; JSON: once answered, and
   * again if verification's retry answered instead): the failover facts for the answer's headers.
   */
  served(context: C, facts: ServedFacts): void;
  /** A stream's first upstream event arrived: the response is taken over and written by the relay. */
  takeOver(context: C): StreamTarget;
}

/** One completion request as the HTTP layer hands it over. */
export interface CompletionCall<C> {
  body: CompletionBody;
  caller: Caller;
  /** X-Session-ID (session escalation and fragments), if any. */
  sessionId: string | undefined;
  sourceIp: string;
  /** Aborted when the client goes away. */
  cancel: ClientCancel;
  /** The verification capability's checks (issue #18); null = `verification: null`. */
  verifier: CompletionVerifier | null;
  hooks: CompletionHooks<C>;
  context: C;
  /**
   * Who is asking, for the Challenge band: `client` is the credential (`key:<id>`, `user:<id>`) a
   * clearance is bound to, `clearance` what the request presents (X-SVC-Clearance), if anything.
   */
  challenge?: { client: string; clearance: string | null };
}

/** How often memory-mode budget usage is written to the database (see budget.ts). */
const BUDGET_PERSIST_MS = 1_000;

export class GatewayService {
  readonly settings: GatewaySettingsSource;
  readonly budget: BudgetLedger;
  private persistTimer: NodeJS.Timeout | null = null;
  readonly spend: SpendTracker;
  readonly history: UsageHistorySink;
  readonly breakers: BreakerRegistry;
  readonly latency: LatencyWindows;
  private readonly admission: Admission;
  private readonly attempts: Attempts;
  private readonly settlement: Settlement;
  private readonly streamParts: StreamParts;

  constructor(private readonly deps: GatewayServiceDeps) {
    const stores = deps.stores ?? tableStores(deps.db);
    this.settings = stores.settings;
    this.budget = new BudgetLedger(deps.cache, Date.now, stores.budget);
    this.spend = new SpendTracker(deps.cache);
    this.history = stores.history;
    const costOf = deps.costUsd ?? (() => null);
    this.attempts = new Attempts(deps);
    this.breakers = this.attempts.breakers;
    this.latency = this.attempts.latency;
    const { breakers, latency } = this;
    this.admission = new Admission({
      cache: deps.cache,
      events: deps.events,
      settings: this.settings,
      budget: this.budget,
      envKeys: deps.envKeys,
      orgKeys: deps.orgKeys,
      costOf,
      detection: deps.detection,
      checkTarget: deps.checkTarget,
      // planRoute's lookups, created once (not per request: see routing.ts on closures).
      isAvailable: (key) => breakers.get(key).available(Date.now()),
      latencyOf: (key) => latency.mean(key),
    });
    this.settlement = new Settlement({ logger: deps.logger, metrics: deps.metrics, events: deps.events, budget: this.budget, spend: this.spend, costOf, onBudgetUsage: deps.onBudgetUsage, history: this.history });
    this.streamParts = { attempts: this.attempts, settlement: this.settlement };
  }

  /** Starts the health-check, breaker-sync and budget-persist timers (unless `timers: false`); the server lifecycle calls it. */
  start(): void {
    this.attempts.start();
    if (!(this.deps.timers ?? true) || this.persistTimer !== null) return;
    this.persistTimer = setInterval(() => void this.persistBudgets(), BUDGET_PERSIST_MS);
    this.persistTimer.unref();
  }

  async close(): Promise<void> {
    this.attempts.stop();
    if (this.persistTimer !== null) clearInterval(this.persistTimer);
    this.persistTimer = null;
    await this.settlement.settled();
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

  /** Resolves when accounting started or queued so far has been applied (tests, shutdown). */
  settled(): Promise<void> {
    return this.settlement.settled();
  }

  /** Active health checks of open breakers (see attempts.ts); the number of providers checked. */
  runHealthChecks(now = Date.now()): Promise<number> {
    return this.attempts.runHealthChecks(now);
  }

  /** The providers an org can be served by now: those with a key (its own, or the deployment's), in registry order. */
  async servableProviders(orgId: string): Promise<string[]> {
    const { orgKeys, envKeys } = this.deps;
    const servable = await Promise.all(providerIds.map(async (provider) => ((await resolveTarget(orgKeys, envKeys, orgId, provider)) === null ? null : provider)));
    return servable.filter((provider): provider is ProviderId => provider !== null);
  }

  /** Breaker states for the admin endpoint of one org. */
  health(orgId: string): Promise<Array<Record<string, unknown>>> {
    return this.attempts.health(orgId);
  }

  /**
   * One completion, JSON or streamed (`body.stream`): screening, admission, attempts,
   * settlement, response filter and verification. A JSON completion resolves to its answer; a
   * stream is written to the response `hooks.takeOver` hands over and resolves to undefined once
   * it ended. Refusals before any byte throw their SvcError.
   */
  async completion<C>(call: CompletionCall<C>): Promise<CompletionEnvelope | undefined> {
    const tracer = this.deps.tracer;
    if (tracer === undefined) return this.serve(call);
    // An OpenTelemetry span per completion, with the GenAI semantic conventions (no content).
    const { body } = call;
    const span = tracer.startSpan(`chat ${body.model}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': body.provider,
        'gen_ai.provider.name': body.provider,
        'gen_ai.request.model': body.model,
        ...(body.max_tokens === undefined ? {} : { 'gen_ai.request.max_tokens': body.max_tokens }),
        ...(body.temperature === undefined ? {} : { 'gen_ai.request.temperature': body.temperature }),
        'svc.request_id': call.caller.requestId,
        'svc.stream': body.stream === true,
      },
    });
    const finish = (summary: { provider: string; model: string; finishReason: string; usage: CompletionEnvelope['usage']; costUsd: number | null }) => {
      span.setAttributes({
        'gen_ai.response.model': summary.model,
        'gen_ai.provider.name': summary.provider,
        'gen_ai.response.finish_reasons': [summary.finishReason],
        'gen_ai.usage.input_tokens': summary.usage.prompt_tokens,
        'gen_ai.usage.output_tokens': summary.usage.completion_tokens,
        ...(summary.costUsd === null ? {} : { 'svc.cost_usd': summary.costUsd }),
      });
    };
    const fail = (code: string) => {
      span.setAttribute('error.type', code);
      span.setStatus({ code: SpanStatusCode.ERROR });
    };
    // A stream's outcome is known to its encoder: observe it there.
    const hooks: CompletionHooks<C> = {
      ...call.hooks,
      takeOver: (context) => {
        const target = call.hooks.takeOver(context);
        const encoder = target.encoder ?? svcStreamEncoder(call.caller.requestId);
        return {
          ...target,
          encoder: {
            ...encoder,
            end: (summary) => {
              finish(summary);
              return encoder.end(summary);
            },
            error: (failure, terminated) => {
              fail(failure.code);
              return encoder.error(failure, terminated);
            },
          },
        };
      },
    };
    try {
      const answer = await otelContext.with(trace.setSpan(otelContext.active(), span), () => this.serve({ ...call, hooks }));
      if (answer !== undefined) finish({ provider: answer.provider, model: answer.model, finishReason: answer.finish_reason, usage: answer.usage, costUsd: answer.cost_usd });
      return answer;
    } catch (error) {
      fail(typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : 'error');
      throw error;
    } finally {
      span.end();
    }
  }

  private async serve<C>(call: CompletionCall<C>): Promise<CompletionEnvelope | undefined> {
    const { body, caller, cancel, hooks, context } = call;
    // T5 observes beside screening (synchronous in memory; on Redis its round trips overlap the engine's work).
    const behaviour = this.observeBehaviour(body, caller);
    const screened = await this.admission.screen(body, caller, call.sessionId, call.sourceIp);
    const worst = screened === null || behaviour === null ? screened : withBehaviour(screened, ...(await behaviour));
    if (worst !== null) {
      await hooks.decided(context, worst, call.sessionId);
      if (worst.decision === 'challenge') this.challengeBand(worst, caller.orgId, call.challenge);
      else refuse(worst);
    }
    const prepared = await this.admission.admit(body, caller);
    // The response filter (detection's llm_output check on the answer; docs/detection.md).
    // It reads the text of the messages (content arrays joined as the gateway normalizes them).
    const guard = createResponseGuard(
      this.deps.detection!,
      { messages: body.messages.map((message) => ({ role: message.role, content: contentText(message.content) })) },
      { orgId: caller.orgId, requestId: caller.requestId },
    );
    hooks.admitted(context);
    const verifier = call.verifier;
    if (prepared.request.stream) {
      await relayStream(this.streamParts, prepared, cancel, guard, verifier, body, hooks, context);
      return undefined;
    }
    const { envelope, served } = await this.answer(prepared, cancel);
    hooks.served(context, served);
    envelope.response_filter = await guard.finish(envelope.content, envelope.response_filter);
    if (verifier === null) return envelope;
    // ---- verification hook, JSON answers (issue #18): verifier may redact, retry on the next provider, or throw VERIFICATION_BLOCKED.
    const next = this.admission.nextCandidate(prepared, envelope.provider);
    // The retried answer goes through the same response filter (THREAT_BLOCKED on a leak).
    const retry =
      next === null
        ? null
        : {
            provider: next.provider,
            run: async () => {
              const retried = await this.answer(await this.prepare({ ...body, provider: next.provider, model: next.model }, caller), cancel);
              const second = retried.envelope;
              // The first answer's provider was passed over by verification.
              hooks.served(context, { ...retried.served, passedOver: [...served.passedOver, served.provider, ...retried.served.passedOver], attempts: served.attempts + retried.served.attempts });
              second.response_filter = await guard.finish(second.content, second.response_filter);
              return second;
            },
          };
    return verifier.completion({ orgId: caller.orgId, requestId: caller.requestId, body }, envelope, retry);
  }

  /** The T5 observation of a completion: its anomalies and how long it took (ms); null without baselines. Never rejects. */
  private observeBehaviour(body: CompletionBody, caller: Caller): Promise<[BehaviourResult | null, number]> | null {
    const baseline = this.deps.behaviour;
    if (baseline === undefined) return null;
    const started = performance.now();
    return baseline.observe(completionObservation(body, caller)).then(
      (result): [BehaviourResult | null, number] => [result, performance.now() - started],
      (): [BehaviourResult | null, number] => [null, performance.now() - started],
    );
  }

  /** Admission without screening (settings, provider, PII, route plan, keys, budget reservation). */
  /**
   * The Challenge band: a request whose credential holds a valid clearance goes on; otherwise it
   * is refused with CHALLENGE_REQUIRED carrying a puzzle bound to the org and the credential.
   */
  private challengeBand(worst: ThreatDecision, orgId: string, challenge: CompletionCall<unknown>['challenge']): void {
    const challenges = this.deps.challenges;
    if (challenges === undefined || challenge === undefined) return refuse(worst);
    const scope = challengeScope(orgId);
    if (challenge.clearance !== null && challenges.cleared(challenge.clearance, scope, challenge.client)) return;
    const issued = challenges.issue(scope, challenge.client);
    refuse(worst, { id: issued.id, token: issued.token, algorithm: issued.algorithm, difficulty: issued.difficulty, expires_at: issued.expiresAt.toISOString(), verify_url: CHALLENGE_VERIFY_PATH });
  }

  /** Checks a solved challenge (POST /api/v1/gateway/challenge): a clearance for the same org and credential. */
  async verifyChallenge(orgId: string, client: string, answer: { token: string; nonce: string }): Promise<ChallengeOutcome> {
    const challenges = this.deps.challenges;
    if (challenges === undefined) return { ok: false, reason: 'signature' };
    return challenges.verify({
      scope: challengeScope(orgId),
      client,
      token: answer.token,
      nonce: answer.nonce,
      markUsed: (id, ttlMs) => this.deps.cache.setIfAbsent(`gateway:challenge-used:${id}`, '1', Math.max(ttlMs, 1_000)),
    });
  }

  prepare(body: CompletionBody, caller: Caller): Promise<PreparedCompletion> {
    return this.admission.admit(body, caller);
  }

  /** The attempts and settlement of an admitted JSON completion: the service's envelope. */
  async complete(prepared: PreparedCompletion, signal?: AbortHook): Promise<CompletionEnvelope> {
    return (await this.answer(prepared, signal)).envelope;
  }

  /** `complete`, with which provider answered after which were passed over. */
  private async answer(prepared: PreparedCompletion, signal?: AbortHook): Promise<{ envelope: CompletionEnvelope; served: ServedFacts }> {
    let success: AttemptSuccess<CompletionResult>;
    try {
      success = await this.attempts.completion(prepared, signal);
    } catch (error) {
      await this.settlement.release(prepared);
      throw error;
    }
    const { value: result, candidate } = success;
    this.attempts.succeeded(success);
    // An upstream that reported no usable usage is charged an estimate, as a stream is (never nothing).
    const usage = result.usage ?? estimateUsage(prepared.request.messages, result.content);
    const costUsd = this.settlement.account(prepared, candidate, result.model, usage);
    const restore = prepared.settings.piiRestore && prepared.redaction !== null;
    const envelope: CompletionEnvelope = {
      request_id: prepared.caller.requestId,
      provider: candidate.provider,
      model: result.model,
      content: restore ? restorePlaceholders(result.content, prepared.redaction!.mapping) : result.content,
      finish_reason: result.finishReason,
      usage: toPublicUsage(usage),
      cost_usd: costUsd,
      latency_ms: Math.round((performance.now() - prepared.startedAt) * 1000) / 1000,
      verification: null,
      response_filter: responseFilter(prepared),
    };
    if (result.toolCalls !== undefined && result.toolCalls.length > 0) envelope.tool_calls = result.toolCalls;
    return { envelope, served: { provider: candidate.provider, model: result.model, passedOver: success.passedOver, attempts: success.attempts } };
  }
}

/** The stores on the database's tables (`svc serve`). */
function tableStores(db: Database | undefined): GatewayStores {
  if (db === undefined) throw new Error('the gateway needs a database or its own stores');
  return { settings: new SettingsStore(db), budget: createBudgetStore(db), history: new UsageHistory(db) };
}

/** A request id for calls that do not come through the HTTP layer. */
export function newRequestId(): string {
  return randomUUID();
}
