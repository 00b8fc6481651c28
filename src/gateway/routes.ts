/**
 * HTTP surface of the AI gateway:
 *   POST /api/v1/gateway/completions        write  completion (JSON envelope or SSE stream)
 *   GET|PUT|DELETE /api/v1/gateway/routing  admin  the org's routing configuration
 *   GET|PUT /api/v1/gateway/pii             admin  PII mode (off|redact|block) and restoration
 *   GET|PUT /api/v1/gateway/budget          admin  today's usage, token budget, daily USD cap
 *   GET /api/v1/gateway/providers/health    admin  circuit-breaker state per provider
 *   POST /api/v1/gateway/challenge          write  a solved Challenge-band puzzle → clearance
 * and the compatible surfaces beside svc's envelope (compat/, docs/gateway.md "Compatible surfaces"):
 *   POST /v1/chat/completions   write  OpenAI Chat Completions (JSON, or chunks with stream: true)
 *   GET  /v1/models[/{model}]   read   what the org can name (OpenAI's list shape)
 *   POST /v1/messages           write  Anthropic Messages (JSON, or its event stream)
 * Those are authenticated by svc keys like every API route (Authorization: Bearer, X-API-Key —
 * which is also Anthropic's `x-api-key`); each request is translated to svc's completion body
 * and served by the same `serveCompletion`, so screening, PII, budgets, verification, evidence
 * and failover are the gateway's own. Each surface answers every error (authentication, rate
 * limits and validation included) in its API's own shape, svc's code in X-SVC-Error-Code.
 * Every completion answer carries X-AI-Risk-Class, X-AI-Generated and X-CCPA-Automated-Decision,
 * and the failover facts X-SVC-Provider-Used, X-SVC-Model-Used, X-SVC-Attempts, X-SVC-Failover.
 */
import { context as otelContext } from '@opentelemetry/api';
import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { anthropicError, anthropicStreamEncoder, envelopeToMessage, messagesToCompletionBody, MessagesRequestSchema, type MessagesRequest } from './compat/anthropic.ts';
import { chooseProvider, PROVIDER_HEADER, servableModels } from './compat/models.ts';
import { chatToCompletionBody, ChatCompletionRequestSchema, envelopeToChatCompletion, openAiError, openAiStreamEncoder, type ChatCompletionRequest } from './compat/openai.ts';
import { reportDecision, sessionIdOf, type ThreatDecision } from '../detection/index.ts';
import { SvcError } from '../platform/errors.ts';
import type { EventBus } from '../platform/events.ts';
import { auditActor, type RoutesPlugin } from '../platform/http-plugin.ts';
import type { StreamRegistry } from '../platform/streams.ts';
import { CLEARANCE_HEADER } from '../platform/challenge.ts';
import { AI_GATEWAY_EVENT } from './events.ts';
import { ClientCancel } from './cancel.ts';
import { isProviderId } from './registry.ts';
import {
  BudgetSettingsSchema,
  CompletionRequestSchema,
  LIMITS,
  PiiSettingsSchema,
  RoutingConfigSchema,
  type BudgetSettingsBody,
  type CompletionBody,
  type PiiSettingsBody,
  type RoutingConfigBody,
} from './schemas.ts';
import type { Caller, CompletionEnvelope, CompletionHooks, GatewayService, ServedFacts, StreamEncoder, StreamTarget } from './service.ts';
import { dailyTokenBudget } from './budget.ts';
import { DEFAULT_HEALTH_CHECK_INTERVAL_S } from './routing.ts';
import { CHALLENGE_VERIFY_PATH } from './screen.ts';
import type { CompletionVerifier } from './verifier.ts';

/** Transparency headers: output is AI-generated content, limited-risk class, no automated decision about a person. */
export const AI_HEADERS = {
  'X-AI-Risk-Class': 'limited_risk',
  'X-AI-Generated': 'true',
  'X-CCPA-Automated-Decision': 'false',
} as const;

export interface GatewayRoutesOptions {
  gateway: GatewayService;
  /** Where screening decisions are notified (the gateway screens; the route reports). */
  events: EventBus;
  /** FEATURE_AI_GATEWAY: when false every gateway route answers FEATURE_DISABLED. */
  enabled: boolean;
  /** The verification capability's checks (issue #18); absent or null = `verification: null`. */
  verifier?: CompletionVerifier | null;
  /** Open streamed completions, ended by shutdown (absent: streams are not tracked). */
  streams?: StreamRegistry;
  /**
   * 'traffic': the completion routes only (svc's, the compatible surfaces, the challenge), no
   * settings or usage routes — a gateway sensor, whose settings are the collector's. Default 'all'.
   */
  surface?: 'all' | 'traffic';
}

export const gatewayRoutes: RoutesPlugin<GatewayRoutesOptions> = async (app, options) => {
  const { gateway, events } = options;
  const requireEnabled = () => {
    if (!options.enabled) throw new SvcError('FEATURE_DISABLED', { details: { feature: 'ai_gateway' } });
  };

  // What the gateway asks of the HTTP exchange during a completion; built once, the reply (and its request) passed back as context.
  const hooks: CompletionHooks<FastifyReply> = {
    decided(reply, decision, sessionId) {
      return reportGatewayDecision(events, reply, decision, sessionId);
    },
    admitted(reply) {
      for (const [name, value] of Object.entries(AI_HEADERS)) reply.header(name, value);
    },
    served(reply, facts) {
      setServedHeaders(reply, facts);
    },
    takeOver(reply) {
      return takeOverReply(reply);
    },
  };

  app.post(
    '/api/v1/gateway/completions',
    { config: { scope: 'write' }, bodyLimit: LIMITS.bodyBytes, schema: { body: CompletionRequestSchema } },
    async (request, reply) => {
      requireEnabled();
      const answer = await serveCompletion(options, request, reply, request.body as CompletionBody, hooks, reply);
      return answer ?? reply;
    },
  );

  // The Challenge band for API clients: solve the puzzle of a CHALLENGE_REQUIRED, post it here,
  // and retry with the clearance in X-SVC-Clearance (docs/gateway.md).
  app.post(
    CHALLENGE_VERIFY_PATH,
    { config: { scope: 'write' }, schema: { body: Type.Object({ token: Type.String({ minLength: 1, maxLength: 1_024 }), nonce: Type.Union([Type.String({ pattern: '^[0-9]{1,16}$' }), Type.Integer({ minimum: 0, maximum: 9_007_199_254_740_991 })]) }, { additionalProperties: false }) } },
    async (request, reply) => {
      requireEnabled();
      const { orgId } = callerOf(request);
      const body = request.body as { token: string; nonce: string | number };
      const result = await gateway.verifyChallenge(orgId, challengeOf(request).client, { token: body.token, nonce: String(body.nonce) });
      if (!result.ok) throw new SvcError('CHALLENGE_FAILED', { details: { reason: result.reason } });
      reply.header('cache-control', 'no-store');
      return { clearance: result.clearance, expires_at: result.expiresAt.toISOString(), challenge_id: result.challengeId, header: 'X-SVC-Clearance' };
    },
  );

  await app.register(compatRoutes, options);
  if (options.surface === 'traffic') return;

  app.get('/api/v1/gateway/routing', { config: { scope: 'admin' } }, async (request) => {
    const settings = await gateway.settings.get(callerOf(request).orgId);
    if (settings.routing === null) throw new SvcError('NOT_FOUND', { details: { resource: 'routing' } });
    return settings.routing;
  });

  app.put('/api/v1/gateway/routing', { config: { scope: 'admin' }, schema: { body: RoutingConfigSchema } }, async (request) => {
    const body = request.body as RoutingConfigBody;
    const unknown = body.providers.filter((provider) => !isProviderId(provider));
    if (unknown.length > 0) throw new SvcError('VALIDATION_FAILED', { message: `unknown providers: ${unknown.join(', ')}`, details: { field: 'body.providers', reason: 'unknown_provider', providers: unknown } });
    const routing = { strategy: body.strategy, providers: body.providers, health_check_interval_s: body.health_check_interval_s ?? DEFAULT_HEALTH_CHECK_INTERVAL_S };
    const settings = await gateway.settings.update(callerOf(request).orgId, { routing });
    return settings.routing;
  });

  app.delete('/api/v1/gateway/routing', { config: { scope: 'admin' } }, async (request, reply) => {
    await gateway.settings.update(callerOf(request).orgId, { routing: null });
    return reply.status(204).send();
  });

  app.get('/api/v1/gateway/pii', { config: { scope: 'admin' } }, async (request) => {
    const settings = await gateway.settings.get(callerOf(request).orgId);
    return { mode: settings.piiMode, restore_in_response: settings.piiRestore };
  });

  app.put('/api/v1/gateway/pii', { config: { scope: 'admin' }, schema: { body: PiiSettingsSchema } }, async (request) => {
    const body = request.body as PiiSettingsBody;
    const change = body.restore_in_response === undefined ? { piiMode: body.mode } : { piiMode: body.mode, piiRestore: body.restore_in_response };
    const settings = await gateway.settings.update(callerOf(request).orgId, change);
    return { mode: settings.piiMode, restore_in_response: settings.piiRestore };
  });

  const budgetView = async (caller: Caller) => {
    const [settings, usage] = await Promise.all([gateway.settings.get(caller.orgId), gateway.budget.usage(caller.orgId)]);
    const limit = dailyTokenBudget(caller.plan);
    return {
      day: usage.day,
      plan: caller.plan,
      daily_token_budget: limit,
      tokens_used: usage.tokens,
      tokens_remaining: Math.max(0, limit - usage.tokens),
      daily_usd_cap: settings.dailyUsdCap,
      usd_used: settings.dailyUsdCap === null ? null : usage.microUsd / 1_000_000,
    };
  };

  app.get('/api/v1/gateway/budget', { config: { scope: 'admin' } }, async (request) => budgetView(callerOf(request)));

  app.put('/api/v1/gateway/budget', { config: { scope: 'admin' }, schema: { body: BudgetSettingsSchema } }, async (request) => {
    const body = request.body as BudgetSettingsBody;
    const caller = callerOf(request);
    await gateway.settings.update(caller.orgId, { dailyUsdCap: body.daily_usd_cap });
    return budgetView(caller);
  });

  app.get(
    '/api/v1/gateway/usage',
    {
      config: { scope: 'read' },
      schema: {
        querystring: Type.Object({
          from: Type.Optional(Type.String({ format: 'date-time', description: 'Start (inclusive); default: 24 hours (bucket=hour) or 30 days (bucket=day) before `to`.' })),
          to: Type.Optional(Type.String({ format: 'date-time', description: 'End (exclusive); default: now.' })),
          bucket: Type.Optional(Type.Union([Type.Literal('hour'), Type.Literal('day')], { default: 'hour' })),
        }, { additionalProperties: false }),
      },
    },
    async (request) => {
      const query = request.query as { from?: string; to?: string; bucket?: 'hour' | 'day' };
      const bucket = query.bucket ?? 'hour';
      const to = query.to === undefined ? new Date() : new Date(query.to);
      const from = query.from === undefined ? new Date(to.getTime() - (bucket === 'hour' ? DAY_MS : USAGE_MAX_DAYS * DAY_MS)) : new Date(query.from);
      if (!(from.getTime() < to.getTime())) throw new SvcError('VALIDATION_FAILED', { message: 'from must be before to', details: { field: 'querystring.from', reason: 'range_empty' } });
      const maxDays = bucket === 'hour' ? USAGE_MAX_HOURLY_DAYS : USAGE_MAX_DAYS * 3;
      if (to.getTime() - from.getTime() > maxDays * DAY_MS) throw new SvcError('VALIDATION_FAILED', { message: `the range may span at most ${maxDays} days with bucket=${bucket}`, details: { field: 'querystring.from', reason: 'range_too_long', max_days: maxDays } });
      const caller = callerOf(request);
      const [buckets, anomalies, budget] = await Promise.all([
        gateway.history.buckets(caller.orgId, from, to, bucket),
        gateway.history.anomalies(caller.orgId, from, to),
        budgetView(caller),
      ]);
      return {
        from: from.toISOString(),
        to: to.toISOString(),
        bucket,
        buckets: buckets.map((row) => ({
          start: row.start,
          provider: row.provider,
          model: row.model,
          requests: row.requests,
          prompt_tokens: row.promptTokens,
          completion_tokens: row.completionTokens,
          total_tokens: row.promptTokens + row.completionTokens,
          cost_usd: row.costUsd,
        })),
        budget,
        anomalies: anomalies.map((row) => ({
          hour_start: row.hour,
          spend_usd: row.spendMicroUsd / 1_000_000,
          baseline_mean_usd: row.meanMicroUsd / 1_000_000,
          baseline_stddev_usd: row.stddevMicroUsd / 1_000_000,
          z_score: Math.round(row.z * 100) / 100,
        })),
      };
    },
  );

  app.get('/api/v1/gateway/providers/health', { config: { scope: 'admin' } }, async (request) => ({ providers: await gateway.health(callerOf(request).orgId) }));
};

const DAY_MS = 86_400_000;
/** Longest range of GET /api/v1/gateway/usage with bucket=hour (days), and the default range with bucket=day. */
const USAGE_MAX_HOURLY_DAYS = 31;
const USAGE_MAX_DAYS = 30;

/** The credential a clearance is bound to, and the clearance the request presents. */
export function challengeOf(request: FastifyRequest): { client: string; clearance: string | null } {
  const auth = request.auth;
  if (auth === null) throw new SvcError('AUTH_MISSING');
  const header = request.headers[CLEARANCE_HEADER];
  const clearance = typeof header === 'string' && header.trim() !== '' ? header.trim() : null;
  return { client: auditActor(auth), clearance };
}

/** Reports a screening decision of the AI gateway on the request (log fields, notifications). */
function reportGatewayDecision(events: EventBus, reply: FastifyReply, decision: ThreatDecision, sessionId: string | undefined): Promise<void> {
  return reportDecision(events, reply.request, decision, sessionId === undefined ? AI_GATEWAY_EVENT : { sessionId, ...AI_GATEWAY_EVENT });
}

/**
 * The failover facts of an answer (docs/gateway.md, "Answer headers"): the provider and model
 * that answered, the providers passed over before it (only when there were some) and the
 * upstream calls made. Set again when verification's retry answered instead.
 */
function setServedHeaders(reply: FastifyReply, facts: ServedFacts): void {
  reply.header('X-SVC-Provider-Used', facts.provider);
  reply.header('X-SVC-Model-Used', facts.model);
  reply.header('X-SVC-Attempts', String(facts.attempts));
  if (facts.passedOver.length > 0) reply.header('X-SVC-Failover', facts.passedOver.join(', '));
}

/** Hands the response over to the stream relay, with the headers set so far (and the stream's wire format). Exported for bench/stream-takeover-before-after.ts. */
export function takeOverReply(reply: FastifyReply, encoder?: StreamEncoder): StreamTarget {
  reply.hijack();
  // Fastify builds a fresh object on each getHeaders: it is handed over as it is (the relay adds
  // the stream's own headers to it) instead of copied; an unset (undefined) header is dropped.
  const headers = reply.getHeaders() as Record<string, string | number | string[] | undefined>;
  for (const name in headers) if (headers[name] === undefined) delete headers[name];
  return encoder === undefined ? { raw: reply.raw, headers: headers as StreamTarget['headers'] } : { raw: reply.raw, headers: headers as StreamTarget['headers'], encoder };
}

/** What serving one completion over HTTP needs from the routes' options. */
interface CompletionServing {
  gateway: GatewayService;
  verifier?: CompletionVerifier | null;
  streams?: StreamRegistry;
}

/**
 * One completion over HTTP, for svc's envelope and the compatible surfaces alike: the caller,
 * cancellation when the client leaves, the stream tracked for shutdown, then the gateway's one
 * call. The JSON answer, or undefined once a stream was relayed.
 */
async function serveCompletion<C>(serving: CompletionServing, request: FastifyRequest, reply: FastifyReply, body: CompletionBody, hooks: CompletionHooks<C>, context: C): Promise<CompletionEnvelope | undefined> {
  const caller = callerOf(request);
  const cancel = new ClientCancel();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) cancel.abort(new Error('client disconnected'));
  });
  // Shutdown ends a stream: the upstream call is cancelled and the client gets a final
  // SERVICE_UNAVAILABLE event (relay.ts), instead of holding app.close() open.
  const untrack = body.stream === true ? serving.streams?.track({ end: (reason) => cancel.abort(reason), destroy: () => reply.raw.destroy() }) : undefined;
  try {
    const call = () => serving.gateway.completion({ body, caller, sessionId: sessionIdOf(request), sourceIp: request.ip, cancel, verifier: serving.verifier ?? null, hooks, context, challenge: challengeOf(request) });
    // With tracing on, the completion's spans (and the upstream's traceparent) follow the request's.
    return await (request.traceContext === null ? call() : otelContext.with(request.traceContext, call));
  } finally {
    untrack?.();
  }
}

function callerOf(request: FastifyRequest): Caller {
  const auth = request.auth;
  if (auth === null) throw new SvcError('AUTH_MISSING');
  return { orgId: auth.orgId, plan: auth.plan, keyClass: auth.keyClass, requestId: request.id, keyId: auth.keyId, userId: auth.userId };
}

// ---------------------------------------------------------------------------------------------
// The compatible surfaces: OpenAI Chat Completions and models, Anthropic Messages (compat/)
// ---------------------------------------------------------------------------------------------

/** One compatible completion's exchange: the reply, and how its stream is written once the provider is known. */
interface Exchange {
  reply: FastifyReply;
  encoder: (model: string) => StreamEncoder;
  model: string;
}

/** What the error handler of the app answered: svc's envelope (build-app.ts). */
interface SvcErrorBody {
  error: { code: string; message: string; field?: unknown; upstream_code?: unknown };
}

type ErrorHandler = (this: unknown, error: FastifyError, request: FastifyRequest, reply: FastifyReply) => unknown;

/**
 * svc's error, as the app's own error handler maps and logs it, then re-shaped by `shape`. An
 * upstream's "no such model" (UPSTREAM_REJECTED with a 404 upstream) is 404 model_not_found here,
 * as OpenAI and Anthropic clients expect.
 */
function reshapeErrors(svcErrors: ErrorHandler, shape: (status: number, code: string, message: string, param: string | null, requestId: string) => unknown) {
  return async function (this: unknown, error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    const body = (await svcErrors.call(this, error, request, reply)) as SvcErrorBody;
    let { code } = body.error;
    let status = reply.statusCode;
    if (code === 'UPSTREAM_REJECTED' && body.error.upstream_code === 'not_found') {
      code = 'MODEL_NOT_FOUND';
      status = 404;
      reply.status(404);
    }
    reply.header('X-SVC-Error-Code', code);
    const field = typeof body.error.field === 'string' ? body.error.field.replace(/^body\./, '') : null;
    return shape(status, code, body.error.message, field, request.id);
  };
}

/** svc's facts of a JSON answer: its cost and the verification verdict (the failover facts are set when served). */
function setAnswerHeaders(reply: FastifyReply, envelope: CompletionEnvelope): void {
  if (envelope.cost_usd !== null) reply.header('X-SVC-Cost-USD', String(envelope.cost_usd));
  const verification = envelope.verification as { passed?: unknown; action?: unknown } | null;
  reply.header('X-SVC-Verification', verification === null ? 'none' : `passed=${String(verification.passed)}; action=${String(verification.action)}`);
}

const headerOf = (request: FastifyRequest): string | undefined => {
  const value = request.headers[PROVIDER_HEADER];
  return typeof value === 'string' ? value : undefined;
};

/** The compatible surfaces (see the module comment), registered by `gatewayRoutes`. */
const compatRoutes: RoutesPlugin<GatewayRoutesOptions> = async (app, options) => {
  const { gateway, events } = options;
  const requireEnabled = () => {
    if (!options.enabled) throw new SvcError('FEATURE_DISABLED', { details: { feature: 'ai_gateway' } });
  };

  const hooks: CompletionHooks<Exchange> = {
    decided(exchange, decision, sessionId) {
      return reportGatewayDecision(events, exchange.reply, decision, sessionId);
    },
    admitted(exchange) {
      for (const [name, value] of Object.entries(AI_HEADERS)) exchange.reply.header(name, value);
    },
    served(exchange, facts) {
      exchange.model = facts.model;
      setServedHeaders(exchange.reply, facts);
    },
    takeOver(exchange) {
      return takeOverReply(exchange.reply, exchange.encoder(exchange.model));
    },
  };

  /** The provider and model for a request's `model` (models.ts), with the org's routing and keys. */
  const choose = async (request: FastifyRequest, model: string) => {
    const orgId = callerOf(request).orgId;
    const settings = await gateway.settings.get(orgId);
    return chooseProvider(model, { header: headerOf(request), hasRouting: settings.routing !== null, servable: () => gateway.servableProviders(orgId) });
  };

  /** The header that names the provider for a bare model (documented in /openapi.json). */
  const providerHeader = Type.Object({ [PROVIDER_HEADER]: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Provider id (or "auto") for the model; see docs/gateway.md, "Compatible surfaces".' })) });

  /** One compatible completion: served as the envelope's, its JSON answer translated by `answer` (a stream is written by `encoder`). */
  const serveCompatible = async <Answer>(request: FastifyRequest, reply: FastifyReply, body: CompletionBody, encoder: Exchange['encoder'], answer: (envelope: CompletionEnvelope) => Answer): Promise<Answer | FastifyReply> => {
    const envelope = await serveCompletion(options, request, reply, body, hooks, { reply, model: body.model, encoder });
    if (envelope === undefined) return reply;
    setAnswerHeaders(reply, envelope);
    return answer(envelope);
  };

  const listModels = async (request: FastifyRequest) => {
    requireEnabled();
    const orgId = callerOf(request).orgId;
    const [servable, settings] = await Promise.all([gateway.servableProviders(orgId), gateway.settings.get(orgId)]);
    return servableModels(servable, settings.routing !== null).map((model) => ({ id: model.id, object: 'model' as const, created: 0, owned_by: model.owned_by }));
  };

  // OpenAI: its error shape for every answer of these routes (authentication and rate limits included).
  await app.register(async (openai) => {
    openai.setErrorHandler(reshapeErrors(openai.errorHandler as ErrorHandler, (status, code, message, param) => openAiError(status, code.toLowerCase(), message, param)));

    openai.post(
      '/v1/chat/completions',
      { config: { scope: 'write' }, bodyLimit: LIMITS.bodyBytes, schema: { tags: ['gateway'], summary: 'OpenAI Chat Completions (compatible surface)', body: ChatCompletionRequestSchema, headers: providerHeader } },
      async (request, reply) => {
        requireEnabled();
        const chat = request.body as ChatCompletionRequest;
        const body = chatToCompletionBody(chat, await choose(request, chat.model));
        const includeUsage = chat.stream_options?.include_usage === true;
        return serveCompatible(request, reply, body, (model) => openAiStreamEncoder(request.id, model, includeUsage), envelopeToChatCompletion);
      },
    );

    openai.get('/v1/models', { config: { scope: 'read' }, schema: { tags: ['gateway'], summary: 'Models the org can name (OpenAI list shape)' } }, async (request) => ({ object: 'list' as const, data: await listModels(request) }));

    openai.get(
      '/v1/models/:model',
      { config: { scope: 'read' }, schema: { tags: ['gateway'], summary: 'One model the org can name (its slash percent-encoded)', params: Type.Object({ model: Type.String({ minLength: 1, maxLength: 256 }) }) } },
      async (request) => {
        const id = (request.params as { model: string }).model;
        const found = (await listModels(request)).find((model) => model.id === id);
        if (found === undefined) throw new SvcError('MODEL_NOT_FOUND', { details: { model: id } });
        return found;
      },
    );
  });

  // Anthropic: its error shape.
  await app.register(async (anthropic) => {
    anthropic.setErrorHandler(reshapeErrors(anthropic.errorHandler as ErrorHandler, (status, _code, message, _param, requestId) => anthropicError(status, message, requestId)));

    anthropic.post(
      '/v1/messages',
      { config: { scope: 'write' }, bodyLimit: LIMITS.bodyBytes, schema: { tags: ['gateway'], summary: 'Anthropic Messages (compatible surface)', body: MessagesRequestSchema, headers: providerHeader } },
      async (request, reply) => {
        requireEnabled();
        const messages = request.body as MessagesRequest;
        const body = messagesToCompletionBody(messages, await choose(request, messages.model));
        return serveCompatible(request, reply, body, (model) => anthropicStreamEncoder(request.id, model), envelopeToMessage);
      },
    );
  });
};
