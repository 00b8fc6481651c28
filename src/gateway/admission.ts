/**
 * Admission: everything decided about a completion before the first upstream call.
 *
 * Posture: nothing leaves svc before it is admitted. The request is screened by detection
 * (prompt and retrieved content, `screen.ts`), then: the org's settings → provider check → PII
 * (redacted per the org's mode, or refused) → route plan → keys (org BYOK key first, then the
 * deployment's environment key; NO_PROVIDERS without one) with the SSRF screen of an
 * org-supplied base URL re-run at call time → budget reservation (daily tokens and the optional
 * USD cap, reserved atomically so concurrent requests cannot overshoot). The caller (auth
 * context) comes from the authenticated request; credentials are never logged or echoed.
 */
import { LRUCache } from 'lru-cache';
import type { DetectionEngine, ThreatDecision } from '../detection/index.ts';
import type { Cache } from '../platform/cache.ts';
import { SvcError } from '../platform/errors.ts';
import { dailyTokenBudget, DEFAULT_COMPLETION_RESERVE, estimatePromptTokens, type BudgetLedger, type Reservation } from './budget.ts';
import type { ChatMessage, CompletionRequest, ProviderTarget, TokenUsage, ToolDefinition } from './contract.ts';
import { AI_GATEWAY_EVENT, type GatewayEvents } from './events.ts';
import { resolveTarget, targetKey, type ProviderKeySource } from './keys.ts';
import { messageSpans, redactMessages, type RedactionSummary } from './pii/index.ts';
import { isProviderId } from './registry.ts';
import { planRoute, type RouteCandidate } from './routing.ts';
import { normalizeMessages } from './content.ts';
import { fallbackCostUsd, type CostFunction } from './pricing/pricing.ts';
import type { CompletionBody } from './schemas.ts';
import { screenCompletion } from './screen.ts';
import type { GatewaySettings, GatewaySettingsSource } from './settings.ts';
import { entryBound } from '../platform/lru.ts';

/** Who is asking (from the authenticated request). */
export interface Caller {
  orgId: string;
  plan: string;
  /** 'test' keys are sandbox keys: not billed, not counted against budgets or spend baselines. */
  keyClass: 'live' | 'test' | 'rstr';
  requestId: string;
  /** The API key (or dashboard user) that called: whom the T5 baseline of completions is learned for when the body names no end user. */
  keyId?: string | null;
  userId?: string | null;
}

/** A planned provider with its credentials and breaker key. */
export interface Viable extends RouteCandidate {
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

export interface AdmissionDeps {
  cache: Cache;
  events: GatewayEvents;
  settings: GatewaySettingsSource;
  budget: BudgetLedger;
  envKeys: Readonly<Record<string, string>>;
  orgKeys: ProviderKeySource;
  costOf: CostFunction;
  detection?: DetectionEngine | undefined;
  checkTarget?: ((url: string) => Promise<unknown>) | undefined;
  /** The breaker's and latency windows' view, for the route plan. */
  isAvailable(key: string): boolean;
  latencyOf(key: string): number | null;
}

const MICRO = 1_000_000;
/** Orgs whose round-robin turn is remembered (least recently used out). */
const MAX_TURNS = 100_000;
/** Base URLs whose SSRF screen is remembered, each for SCREEN_TTL_MS. */
const MAX_SCREENED = 10_000;
const SCREEN_TTL_MS = 60_000;
/** The reference request cost-optimized routing compares prices on. */
const REFERENCE_USAGE: TokenUsage = { promptTokens: 1_000, completionTokens: 1_000, totalTokens: 2_000 };

export class Admission {
  private readonly turns = new LRUCache<string, number>(entryBound(MAX_TURNS));
  private readonly screened = new LRUCache<string, { error: unknown; until: number }>(entryBound(MAX_SCREENED));
  // planRoute's lookups, created once (not per request: see routing.ts on closures).
  private readonly priceOf = (id: string, model: string): number | null => this.deps.costOf(id, model, REFERENCE_USAGE);

  constructor(private readonly deps: AdmissionDeps) {}

  /** The stricter detection decision on the request's prompt and retrieved content (null: nothing inspected). */
  screen(body: CompletionBody, caller: Caller, sessionId: string | undefined, sourceIp: string): Promise<ThreatDecision | null> {
    const detection = this.deps.detection;
    if (detection === undefined) throw new Error('the gateway was built without a detection engine: completions cannot be screened');
    return screenCompletion(detection, body, { orgId: caller.orgId, sessionId, requestId: caller.requestId, sourceIp });
  }

  /** Settings, provider, PII, route plan, keys and budget reservation; throws the refusal's SvcError. */
  async admit(body: CompletionBody, caller: Caller): Promise<PreparedCompletion> {
    const startedAt = performance.now();
    const settings = await this.deps.settings.get(caller.orgId);
    const provider = body.provider ?? (settings.routing !== null ? 'auto' : null);
    if (provider === null) throw validation('body.provider', 'required', 'body.provider is required when the org has no routing configuration');
    if (provider === 'auto' && settings.routing === null) throw validation('body.provider', 'routing_not_configured', 'provider "auto" needs a routing configuration (PUT /api/v1/gateway/routing)');
    if (provider !== 'auto' && !isProviderId(provider)) throw validation('body.provider', 'unknown_provider', `unknown provider "${provider}"`);

    const messages: ChatMessage[] = normalizeMessages(body.messages);
    let redaction: PreparedCompletion['redaction'] = null;
    if (settings.piiMode === 'block') {
      const types = new Set<string>();
      for (const message of messages) for (const span of messageSpans(message.content)) types.add(span.type);
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
    const planned = planRoute({
      provider,
      model: body.model,
      routing: settings.routing,
      isAvailable: this.deps.isAvailable,
      latencyOf: this.deps.latencyOf,
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
      const estimatedUsd = this.deps.costOf(first.provider, first.model, reserveUsage) ?? fallbackCostUsd(first.provider, first.model, reserveUsage);
      const outcome = await this.deps.budget.reserve(
        caller.orgId,
        tokenLimit,
        promptTokens + completionTokens,
        settings.dailyUsdCap === null ? null : Math.round(settings.dailyUsdCap * MICRO),
        Math.ceil(estimatedUsd * MICRO),
      );
      if (!outcome.ok) {
        const retryAfter = Math.max(1, Math.ceil((Date.parse(outcome.resetAt) - Date.now()) / 1000));
        const cache = this.deps.cache;
        if (await cache.setIfAbsent(`${cache.prefix}gw:budget-exhausted:${caller.orgId}:${outcome.resetAt}`, '1', retryAfter * 1000)) {
          this.deps.events.emit(caller.orgId, 'budget.exhausted', { budget: outcome.budget, limit: outcome.limit, used: outcome.used, reset_at: outcome.resetAt }, AI_GATEWAY_EVENT);
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

  /** The candidate after `provider` in this request's route, with its equivalent model (verification's retry action), or null. */
  nextCandidate(prepared: PreparedCompletion, provider: string): { provider: string; model: string } | null {
    const at = prepared.candidates.findIndex((candidate) => candidate.provider === provider);
    const next = at < 0 ? undefined : prepared.candidates[at + 1];
    return next === undefined ? null : { provider: next.provider, model: next.model };
  }

  /** The candidate with its key and target; null without a key; the SSRF screen's error for a refused base URL. */
  private async resolveCandidate(candidate: RouteCandidate, orgId: string): Promise<Viable | { screenError: unknown } | null> {
    if (!isProviderId(candidate.provider)) return null;
    const target = await resolveTarget(this.deps.orgKeys, this.deps.envKeys, orgId, candidate.provider);
    if (target === null) return null;
    if (target.baseUrl !== undefined) {
      const error = await this.screenTarget(target.baseUrl);
      if (error !== null) return { screenError: error };
    }
    return { ...candidate, target, key: targetKey(candidate.provider, target) };
  }

  /** null when the URL may be called, else the error to answer with (remembered SCREEN_TTL_MS per URL). */
  private async screenTarget(url: string): Promise<unknown> {
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
    this.screened.set(url, { error, until: now + SCREEN_TTL_MS });
    return error;
  }
}

function validation(field: string, reason: string, message: string): SvcError {
  return new SvcError('VALIDATION_FAILED', { message, details: { field, reason } });
}

function normalizeTool(tool: NonNullable<CompletionBody['tools']>[number]): ToolDefinition {
  const flat = 'function' in tool ? tool.function : tool;
  const definition: ToolDefinition = { name: flat.name, parameters: flat.parameters ?? { type: 'object', properties: {} } };
  if (flat.description !== undefined) definition.description = flat.description;
  return definition;
}
