/**
 * Detection API: POST /api/v1/inspect (write scope) returns the Threat decision for a prompt,
 * tool output or HTTP request without forwarding anything; GET/POST /api/v1/config/thresholds
 * (read / admin scope) read and set the org's response thresholds.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { AppInstance } from '../http/app-types.ts';
import { reportDecision, sessionIdOf } from './report.ts';
import { SvcError } from '../platform/errors.ts';
import type { Services } from '../services.ts';
import type { DetectionEngine } from './engine.ts';
import { ThresholdError } from './policy.ts';
import type { Thresholds } from './types.ts';

const MAX_CONTENT = 1_048_576;

export const InspectBody = Type.Object(
  {
    kind: Type.Union([Type.Literal('prompt'), Type.Literal('tool_output'), Type.Literal('http')]),
    content: Type.Optional(Type.String({ maxLength: MAX_CONTENT })),
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

export function registerRoutesWith(app: AppInstance, services: Services, engine: DetectionEngine): void {
  app.post('/api/v1/inspect', { config: { scope: 'write' }, schema: { body: InspectBody, tags: ['detection'] } }, async (request) => {
    const body = request.body as Static<typeof InspectBody>;
    const auth = request.auth;
    if (auth === null || auth === undefined) throw new SvcError('AUTH_MISSING');
    if (body.kind === 'http' ? body.request === undefined && body.content === undefined : body.content === undefined) {
      throw new SvcError('VALIDATION_FAILED', { details: { field: body.kind === 'http' ? 'request' : 'content' } });
    }
    const sessionId = body.session_id ?? sessionIdOf(request);
    const decision = await engine.inspect({
      kind: body.kind,
      ...(body.content === undefined ? {} : { content: body.content }),
      ...(body.request === undefined ? {} : { request: body.request }),
      ...(sessionId === undefined ? {} : { sessionId }),
      orgId: auth.orgId,
      requestId: String(request.id),
      sourceIp: request.ip,
    });
    reportDecision(services.events, request, decision, sessionId === undefined ? {} : { sessionId });
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
    try {
      const saved = await engine.thresholds.set(auth.orgId, {
        ...(body.block_threshold === undefined ? {} : { block: body.block_threshold }),
        ...(body.challenge_threshold === undefined ? {} : { challenge: body.challenge_threshold }),
        ...(body.alert_threshold === undefined ? {} : { alert: body.alert_threshold }),
        ...(body.log_threshold === undefined ? {} : { log: body.log_threshold }),
      });
      return thresholdsView(saved.thresholds, saved.updatedAt);
    } catch (error) {
      if (error instanceof ThresholdError) throw new SvcError('VALIDATION_FAILED', { message: error.message, details: { field: error.field, ...(error.order ? { reason: 'order', order: error.order } : {}) } });
      throw error;
    }
  });
}
