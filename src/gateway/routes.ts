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
import { createResponseGuard, reportDecision, sessionIdOf, type DetectionEngine, type ResponseGuard } from '../detection/index.ts';
import { ERRORS, SvcError } from '../platform/errors.ts';
import type { EventBus } from '../platform/events.ts';
import type { RoutesPlugin } from '../platform/http-plugin.ts';
import { isShuttingDown, shutdownErrorPayload, type StreamRegistry } from '../platform/streams.ts';
import { refuse, screenCompletion } from './screen.ts';
import { ClientCancel } from './cancel.ts';
import { contentText } from './content.ts';
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
import { failureToError, toPublicUsage, type Caller, type GatewayService, type OpenedStream, type PreparedCompletion } from './service.ts';
import { SSE_DONE, sseLine, SseWriter } from './sse-writer.ts';
import { dailyTokenBudget } from './budget.ts';
import { DEFAULT_HEALTH_CHECK_INTERVAL_S } from './routing.ts';
import { UpstreamError } from './contract.ts';
import type { CompletionVerifier, StreamVerifier, VerifierStop } from './verifier.ts';

/** Transparency headers: output is AI-generated content, limited-risk class, no automated decision about a person. */
export const AI_HEADERS = {
  'X-AI-Risk-Class': 'limited_risk',
  'X-AI-Generated': 'true',
  'X-CCPA-Automated-Decision': 'false',
} as const;

export interface GatewayRoutesOptions {
  gateway: GatewayService;
  /** Screens every completion request before it is prepared (see screen.ts). */
  detection: DetectionEngine;
  events: EventBus;
  /** FEATURE_AI_GATEWAY: when false every gateway route answers FEATURE_DISABLED. */
  enabled: boolean;
  /** The verification capability's checks (issue #18); absent or null = `verification: null`. */
  verifier?: CompletionVerifier | null;
  /** Open streamed completions, ended by shutdown (absent: streams are not tracked). */
  streams?: StreamRegistry;
}

export const gatewayRoutes: RoutesPlugin<GatewayRoutesOptions> = async (app, options) => {
  const { gateway, detection, events } = options;
  const requireEnabled = () => {
    if (!options.enabled) throw new SvcError('FEATURE_DISABLED', { details: { feature: 'ai_gateway' } });
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
      const sessionId = sessionIdOf(request);
      const worst = await screenCompletion(detection, body, { orgId: caller.orgId, sessionId, requestId: caller.requestId, sourceIp: request.ip });
      if (worst !== null) {
        reportDecision(events, request, worst, sessionId === undefined ? { gatewayId: 'ai_gateway' } : { sessionId, gatewayId: 'ai_gateway' });
        refuse(worst);
      }
      const prepared = await gateway.prepare(body, caller);
      // The response filter (detection's llm_output check on the answer; docs/detection.md).
      // It reads the text of the messages (content arrays joined as the gateway normalizes them).
      const guard = createResponseGuard(
        detection,
        { messages: body.messages.map((message) => ({ role: message.role, content: contentText(message.content) })) },
        { orgId: caller.orgId, requestId: caller.requestId },
      );
      for (const [name, value] of Object.entries(AI_HEADERS)) reply.header(name, value);
      const verifier = options.verifier ?? null;
      if (!prepared.request.stream) {
        const envelope = await gateway.complete(prepared, cancel);
        envelope.response_filter = await guard.finish(envelope.content, envelope.response_filter);
        // ---- verification hook, JSON answers (issue #18): verifier may redact, retry on the next provider, or throw VERIFICATION_BLOCKED.
        if (verifier !== null) {
          const next = gateway.nextCandidate(prepared, envelope.provider);
          // The retried answer goes through the same response filter (THREAT_BLOCKED on a leak).
          const retry =
            next === null
              ? null
              : {
                  provider: next.provider,
                  run: async () => {
                    const second = await gateway.complete(await gateway.prepare({ ...body, provider: next.provider, model: next.model }, caller), cancel);
                    second.response_filter = await guard.finish(second.content, second.response_filter);
                    return second;
                  },
                };
          return verifier.completion({ orgId: caller.orgId, requestId: caller.requestId, body }, envelope, retry);
        }
        return envelope;
      }
      const opened = await gateway.openStream(prepared, cancel);
      // ---- verification hook, streams (issue #18): a hold-back guard between upstream deltas and the client.
      const verifying = verifier === null ? null : await verifier.stream({ orgId: caller.orgId, requestId: caller.requestId, body });
      reply.hijack();
      // Shutdown ends the stream: the upstream call is cancelled and the client gets a final
      // SERVICE_UNAVAILABLE event (pipeStream), instead of holding app.close() open.
      const untrack = options.streams?.track({ end: (reason) => cancel.abort(reason), destroy: () => reply.raw.destroy() });
      try {
        await pipeStream(gateway, prepared, opened, reply, cancel, guard, verifying);
      } finally {
        untrack?.();
      }
      return reply;
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

/** Relays an opened stream to the client; failures after the first byte become an error event. */
async function pipeStream(gateway: GatewayService, prepared: PreparedCompletion, opened: OpenedStream, reply: FastifyReply, cancel: ClientCancel, guard: ResponseGuard | null, verifying: StreamVerifier | null = null): Promise<void> {
  const writer = new SseWriter(reply.raw);
  const requestId = prepared.caller.requestId;
  const headers: Record<string, string | number | string[]> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value as string | number | string[];
  let index = 0;
  let content = '';
  let started = false;
  const send = async (text: string) => {
    if (!started) {
      started = true;
      await writer.start(headers, text);
    } else await writer.write(text);
  };
  let event = opened.first;
  /** Verification ended the stream: upstream cancelled (not the provider's fault), explicit error event with the verdict. */
  const stopForVerification = async (stop: VerifierStop): Promise<void> => {
    cancel.abort();
    await opened.rest.return?.().catch(() => undefined);
    await opened.finish({ kind: 'aborted', content });
    await send(sseLine({ request_id: requestId, error: { code: stop.code, message: ERRORS[stop.code].message, verification: stop.verification } }));
    await writer.write(SSE_DONE);
    writer.end();
  };
  try {
    for (;;) {
      if (writer.isClosed || cancel.aborted) throw new Error('client disconnected');
      if (event.type === 'delta') {
        content += event.text;
        guard?.check(content);
        let text = opened.restore.push(event.text);
        if (verifying !== null) {
          const checked = verifying.push(text);
          if (checked.stop !== null) return await stopForVerification(checked.stop);
          text = checked.release;
        }
        if (text !== '' || !started) await send(sseLine({ request_id: requestId, index: index++, delta: text }));
      } else if (event.type === 'tool_call_delta') {
        const toolCall: Record<string, unknown> = { index: event.index, arguments_delta: event.argumentsDelta };
        if (event.id !== undefined) toolCall.id = event.id;
        if (event.name !== undefined) toolCall.name = event.name;
        if (event.thoughtSignature !== undefined) toolCall.thought_signature = event.thoughtSignature;
        await send(sseLine({ request_id: requestId, index: index++, tool_call: toolCall }));
      } else {
        let rest = opened.restore.flush();
        let verification: Record<string, unknown> | null = null;
        if (verifying !== null) {
          const flushed = verifying.push(rest);
          if (flushed.stop !== null) return await stopForVerification(flushed.stop);
          const ended = await verifying.end({ finishReason: event.finishReason, provider: opened.provider, model: event.model ?? opened.model });
          if (ended.stop !== null) return await stopForVerification(ended.stop);
          rest = flushed.release + ended.release;
          verification = ended.verification;
        }
        if (rest !== '') await send(sseLine({ request_id: requestId, index: index++, delta: rest }));
        const filtered = guard === null ? gateway.responseFilterOf(prepared) : await guard.finish(content, gateway.responseFilterOf(prepared));
        const settled = await opened.finish({ kind: 'done', event, content });
        const usage = settled?.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
        await send(
          sseLine({
            request_id: requestId,
            provider: opened.provider,
            model: event.model ?? opened.model,
            finish_reason: event.finishReason,
            usage: toPublicUsage(usage),
            cost_usd: settled === null ? 0 : settled.costUsd,
            latency_ms: Math.round((performance.now() - prepared.startedAt) * 1000) / 1000,
            verification,
            response_filter: filtered,
            done: true,
          }),
        );
        await writer.write(SSE_DONE);
        writer.end();
        return;
      }
      const next = await opened.rest.next();
      if (next.done === true) throw new UpstreamError({ provider: opened.provider, status: null, code: 'network', providerCode: 'stream_ended_without_done' });
      event = next.value;
    }
  } catch (error) {
    if (cancel.aborted && isShuttingDown(cancel.reason) && !writer.isClosed) {
      // The server is stopping: settled like a stream the client left, then a final error event.
      await opened.rest.return?.().catch(() => undefined);
      await opened.finish({ kind: 'aborted', content });
      await send(sseLine(shutdownErrorPayload(requestId)));
      writer.end();
      return;
    }
    if (writer.isClosed || cancel.aborted) {
      cancel.abort();
      await opened.rest.return?.().catch(() => undefined);
      await opened.finish({ kind: 'aborted', content });
      writer.end();
      return;
    }
    if (error instanceof SvcError) {
      // The response filter ended the stream (a leak): the provider did nothing wrong, so the
      // stream is settled like one the client left (no breaker failure), then the error event.
      await opened.rest.return?.().catch(() => undefined);
      await opened.finish({ kind: 'aborted', content });
      await send(sseLine({ request_id: requestId, error: { code: error.code, message: error.message } }));
      writer.end();
      return;
    }
    await opened.finish({ kind: 'error', error, content });
    const mapped = failureToError(error instanceof UpstreamError ? error : new UpstreamError({ provider: opened.provider, status: null, code: 'server', retryable: false, cause: error }), 1, 0);
    // A cut stream: held-back text is released only if it passes, and the error event carries the verdict.
    const ended = verifying === null ? null : await verifying.end({ finishReason: 'error', cut: true, provider: opened.provider, model: opened.model }).catch(() => null);
    if (ended !== null && ended.stop === null && ended.release !== '') await send(sseLine({ request_id: requestId, index: index++, delta: ended.release }));
    const verification = ended === null ? {} : { verification: ended.verification };
    await send(sseLine({ request_id: requestId, error: { code: mapped.code, message: mapped.message, ...verification } }));
    writer.end();
  }
}
