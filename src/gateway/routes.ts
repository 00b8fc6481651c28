/**
 * HTTP surface of the AI gateway:
 *   POST /api/v1/gateway/completions        write  completion (JSON envelope or SSE stream)
 *   GET|PUT|DELETE /api/v1/gateway/routing  admin  the org's routing configuration
 *   GET|PUT /api/v1/gateway/pii             admin  PII mode (off|redact|block) and restoration
 *   GET|PUT /api/v1/gateway/budget          admin  today's usage, token budget, daily USD cap
 *   GET /api/v1/gateway/providers/health    admin  circuit-breaker state per provider
 * Every completion answer carries X-AI-Risk-Class, X-AI-Generated and X-CCPA-Automated-Decision.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { reportDecision, sessionIdOf } from '../detection/index.ts';
import { SvcError } from '../platform/errors.ts';
import type { EventBus } from '../platform/events.ts';
import type { RoutesPlugin } from '../platform/http-plugin.ts';
import type { StreamRegistry } from '../platform/streams.ts';
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
import type { Caller, CompletionHooks, GatewayService } from './service.ts';
import { dailyTokenBudget } from './budget.ts';
import { DEFAULT_HEALTH_CHECK_INTERVAL_S } from './routing.ts';
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
}

export const gatewayRoutes: RoutesPlugin<GatewayRoutesOptions> = async (app, options) => {
  const { gateway, events } = options;
  const requireEnabled = () => {
    if (!options.enabled) throw new SvcError('FEATURE_DISABLED', { details: { feature: 'ai_gateway' } });
  };

  // What the gateway asks of the HTTP exchange during a completion; built once, the reply (and its request) passed back as context.
  const hooks: CompletionHooks<FastifyReply> = {
    decided(reply, decision, sessionId) {
      reportDecision(events, reply.request, decision, sessionId === undefined ? AI_GATEWAY_EVENT : { sessionId, ...AI_GATEWAY_EVENT });
    },
    admitted(reply) {
      for (const [name, value] of Object.entries(AI_HEADERS)) reply.header(name, value);
    },
    takeOver(reply) {
      reply.hijack();
      const headers: Record<string, string | number | string[]> = {};
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value as string | number | string[];
      return { raw: reply.raw, headers };
    },
  };

  app.post(
    '/api/v1/gateway/completions',
    { config: { scope: 'write' }, bodyLimit: LIMITS.bodyBytes, schema: { body: CompletionRequestSchema } },
    async (request, reply) => {
      requireEnabled();
      const caller = callerOf(request);
      const cancel = new ClientCancel();
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) cancel.abort(new Error('client disconnected'));
      });
      const body = request.body as CompletionBody;
      // Shutdown ends a stream: the upstream call is cancelled and the client gets a final
      // SERVICE_UNAVAILABLE event (relay.ts), instead of holding app.close() open.
      const untrack = body.stream === true ? options.streams?.track({ end: (reason) => cancel.abort(reason), destroy: () => reply.raw.destroy() }) : undefined;
      try {
        // One call per completion: the JSON answer, or undefined once the stream was relayed.
        const answer = await gateway.completion({ body, caller, sessionId: sessionIdOf(request), sourceIp: request.ip, cancel, verifier: options.verifier ?? null, hooks, context: reply });
        return answer ?? reply;
      } finally {
        untrack?.();
      }
    },
  );

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

  app.get('/api/v1/gateway/providers/health', { config: { scope: 'admin' } }, async (request) => ({ providers: await gateway.health(callerOf(request).orgId) }));
};

function callerOf(request: FastifyRequest): Caller {
  const auth = request.auth;
  if (auth === null) throw new SvcError('AUTH_MISSING');
  return { orgId: auth.orgId, plan: auth.plan, keyClass: auth.keyClass, requestId: request.id };
}
