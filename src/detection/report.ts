/**
 * What a decision triggers beyond its answer: the request's log fields, and the policy's
 * notifications — `threat.blocked` for block (webhooks; the audit chain records it through its
 * listener) and `threat.alert` for the alert band (the request goes on). Shared by the guard
 * API and the pillars that enforce decisions.
 */
import type { FastifyRequest } from 'fastify';
import type { EventBus } from '../platform/events.ts';
import type { ThreatDecision } from './types.ts';

export function reportDecision(events: EventBus, request: FastifyRequest, decision: ThreatDecision, context: { sessionId?: string; gatewayId?: string }): void {
  request.threat = {
    score: decision.threat_score,
    decision: decision.decision,
    pattern: decision.patterns_matched[0]?.id ?? null,
  };
  const orgId = request.auth?.orgId;
  if (orgId === undefined) return;
  if (decision.decision !== 'block' && decision.decision !== 'alert') return;
  const userAgent = request.headers['user-agent'];
  events.emit(
    orgId,
    decision.decision === 'block' ? 'threat.blocked' : 'threat.alert',
    {
      request_id: String(request.id),
      threat_score: decision.threat_score,
      decision: decision.decision,
      pattern_ids: decision.patterns_matched.map((pattern) => pattern.id),
      session_id: context.sessionId ?? '',
      session_request_count: decision.session_request_count,
      session_escalation_factor: decision.session_escalation_factor,
      source_ip: request.ip,
      method: request.method,
      path: request.routeOptions.url ?? request.url.split('?')[0] ?? '',
      user_agent: typeof userAgent === 'string' ? userAgent.slice(0, 512) : '',
    },
    context.gatewayId === undefined ? {} : { gatewayId: context.gatewayId },
  );
}

/** The X-Session-ID header, bounded; undefined when absent. */
export function sessionIdOf(request: FastifyRequest): string | undefined {
  const header = request.headers['x-session-id'];
  return typeof header === 'string' && header.length > 0 ? header.slice(0, 256) : undefined;
}
