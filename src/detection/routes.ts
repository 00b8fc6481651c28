/**
 * Detection API: POST /api/v1/inspect (write scope) returns the Threat decision for a prompt,
 * tool output or HTTP request without forwarding anything; GET/POST /api/v1/config/thresholds
 * (read / admin scope) read and set the org's response thresholds.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { retryingLockConflicts } from '../platform/db/failures.ts';
import type { Queryable } from '../platform/db/index.ts';
import type { WithinWrite } from '../platform/db/within.ts';
import { SvcError } from '../platform/errors.ts';
import type { EventBus } from '../platform/events.ts';
import { auditActor, type RoutesPlugin } from '../platform/http-plugin.ts';
import type { DetectionEngine } from './engine.ts';
import { notifies, notifyDecision, threatLogFields } from './report.ts';
import type { ThreatDecision } from './types.ts';
import { ThresholdError } from './policy.ts';
import type { Thresholds } from './types.ts';

const MAX_CONTENT = 1_048_576;

/** An MCP tool as `tools/list` returns it (kind `tool_definition`). */
const ToolDefinitionBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    description: Type.Optional(Type.String({ maxLength: 65_536 })),
    inputSchema: Type.Optional(Type.Unknown()),
    annotations: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
);

export const InspectBody = Type.Object(
  {
    kind: Type.Union([Type.Literal('prompt'), Type.Literal('tool_output'), Type.Literal('http'), Type.Literal('tool_definition'), Type.Literal('llm_output')]),
    content: Type.Optional(Type.String({ maxLength: MAX_CONTENT })),
    tool: Type.Optional(ToolDefinitionBody),
    system_prompt: Type.Optional(Type.String({ maxLength: MAX_CONTENT })),
    secrets: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), { maxItems: 64 })),
    request: Type.Optional(
      Type.Object(
        {
          method: Type.Optional(Type.String({ maxLength: 32 })),
          path: Type.Optional(Type.String({ maxLength: 16_384 })),
          query: Type.Optional(Type.Union([Type.String({ maxLength: 65_536 }), Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]))])),
          headers: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]))),
          body: Type.Optional(Type.Unknown()),
        },
        { additionalProperties: false },
      ),
    ),
    session_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  },
  { additionalProperties: false },
);

const Threshold = Type.Number({ minimum: 0, maximum: 1 });
export const ThresholdsBody = Type.Object(
  {
    block_threshold: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
    challenge_threshold: Type.Optional(Threshold),
    alert_threshold: Type.Optional(Threshold),
    log_threshold: Type.Optional(Threshold),
  },
  { additionalProperties: false, minProperties: 1 },
);

function thresholdsView(thresholds: Thresholds, updatedAt?: Date) {
  return {
    thresholds: {
      log_threshold: thresholds.log,
      alert_threshold: thresholds.alert,
      challenge_threshold: thresholds.challenge,
      block_threshold: thresholds.block,
    },
    ...(updatedAt === undefined ? {} : { updated_at: updatedAt.toISOString() }),
  };
}

const NOTHING_HELD = Promise.resolve();

/**
 * Reports a decision made for a request: its log fields on the request (threat_score, decision,
 * pattern in the request line) and, for block or alert, the notification with the request's
 * facts. For the routes of every pillar that enforces decisions. Resolves once the
 * notification's evidence is on disk: a route answers a block after it. `inspected`: the method
 * and path of the request the decision is about when it is not this one (/api/v1/inspect of kind
 * http names them in its body); the notification reports those.
 */
export function reportDecision(
  events: EventBus,
  request: FastifyRequest,
  decision: ThreatDecision,
  context: { sessionId?: string; gatewayId?: string },
  inspected: { method?: string; path?: string } = {},
): Promise<void> {
  request.threat = threatLogFields(decision);
  if (request.auth === null || !notifies(decision)) return NOTHING_HELD;
  const userAgent = request.headers['user-agent'];
  return notifyDecision(
    events,
    {
      requestId: String(request.id),
      orgId: request.auth.orgId,
      sourceIp: request.ip,
      method: inspected.method ?? request.method,
      path: inspected.path ?? request.routeOptions.url ?? request.url.split('?')[0] ?? '',
      userAgent: typeof userAgent === 'string' ? userAgent : '',
    },
    decision,
    context,
  );
}

/** The method (upper case) and path (query cut off) an inspect body gives for the inspected request, where it gives them. */
function inspectedFacts(described: { method?: string; path?: string } | undefined): { method?: string; path?: string } {
  const method = described?.method?.trim().toUpperCase();
  const path = described?.path?.split('?')[0]?.slice(0, 2_048);
  return { ...(method === undefined || method === '' ? {} : { method }), ...(path === undefined || path === '' ? {} : { path }) };
}

/** The X-Session-ID header, bounded; undefined when absent. */
export function sessionIdOf(request: FastifyRequest): string | undefined {
  const header = request.headers['x-session-id'];
  return typeof header === 'string' && header.length > 0 ? header.slice(0, 256) : undefined;
}

export interface DetectionRoutesOptions {
  engine: DetectionEngine;
  events: EventBus;
  /**
   * Threshold changes are written to the org's audit chain (approval history, compliance export),
   * in the change's transaction (`tx`): the change and its entry are stored together or not at all.
   */
  audit?: { append(orgId: string, entry: { actor: string; action: string; target: string | null; outcome: string; details: Record<string, unknown> }, options: { tx: Queryable }): Promise<unknown> };
}

export const detectionRoutes: RoutesPlugin<DetectionRoutesOptions> = async (app, { engine, events, audit }) => {
  app.post('/api/v1/inspect', { config: { scope: 'write' }, schema: { body: InspectBody, tags: ['detection'] } }, async (request) => {
    const body = request.body as Static<typeof InspectBody>;
    const auth = request.auth;
    if (auth === null || auth === undefined) throw new SvcError('AUTH_MISSING');
    const missing = body.kind === 'http' ? body.request === undefined && body.content === undefined : body.kind === 'tool_definition' ? body.tool === undefined : body.content === undefined;
    if (missing) throw new SvcError('VALIDATION_FAILED', { details: { field: body.kind === 'http' ? 'request' : body.kind === 'tool_definition' ? 'tool' : 'content' } });
    const sessionId = body.session_id ?? sessionIdOf(request);
    const decision = await engine.inspect({
      kind: body.kind,
      ...(body.content === undefined ? {} : { content: body.content }),
      ...(body.request === undefined ? {} : { request: body.request }),
      ...(body.tool === undefined ? {} : { tool: body.tool }),
      ...(body.system_prompt === undefined ? {} : { systemPrompt: body.system_prompt }),
      ...(body.secrets === undefined ? {} : { secrets: body.secrets }),
      ...(sessionId === undefined ? {} : { sessionId }),
      orgId: auth.orgId,
      requestId: String(request.id),
      sourceIp: request.ip,
    });
    // A decision about an HTTP request the caller describes: the notification names that
    // request's method and path (without its query), not the inspect route's. The answer waits
    // until the block's evidence is on disk (docs/reliability.md, "Durability of an answered block").
    const inspected = body.kind === 'http' ? inspectedFacts(body.request) : {};
    await reportDecision(events, request, decision, sessionId === undefined ? {} : { sessionId }, inspected);
    return decision;
  });

  app.get('/api/v1/config/thresholds', { config: { scope: 'read' }, schema: { tags: ['detection'] } }, async (request) => {
    const auth = request.auth;
    if (auth === null || auth === undefined) throw new SvcError('AUTH_MISSING');
    return thresholdsView(await engine.thresholds.get(auth.orgId));
  });

  app.post('/api/v1/config/thresholds', { config: { scope: 'admin' }, schema: { body: ThresholdsBody, tags: ['detection'] } }, async (request) => {
    const auth = request.auth;
    if (auth === null || auth === undefined) throw new SvcError('AUTH_MISSING');
    const body = request.body as Static<typeof ThresholdsBody>;
    const update = {
      ...(body.block_threshold === undefined ? {} : { block: body.block_threshold }),
      ...(body.challenge_threshold === undefined ? {} : { challenge: body.challenge_threshold }),
      ...(body.alert_threshold === undefined ? {} : { alert: body.alert_threshold }),
      ...(body.log_threshold === undefined ? {} : { log: body.log_threshold }),
    };
    const actor = auditActor(auth);
    const note: WithinWrite<Thresholds> = async (tx, thresholds) => {
      await audit?.append(auth.orgId, { actor, action: 'config.thresholds.set', target: null, outcome: 'success', details: { request_id: String(request.id), ...thresholdsView(thresholds).thresholds } }, { tx });
    };
    try {
      // Tried again whole on a lost lock conflict; an outage answers 503 with nothing stored.
      const saved = await retryingLockConflicts(() => engine.thresholds.set(auth.orgId, update, note));
      return thresholdsView(saved.thresholds, saved.updatedAt);
    } catch (error) {
      if (error instanceof ThresholdError) throw new SvcError('VALIDATION_FAILED', { message: error.message, details: { field: error.field, ...(error.order ? { reason: 'order', order: error.order } : {}) } });
      throw error;
    }
  });
};
