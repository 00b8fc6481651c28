/**
 * What a decision triggers beyond its answer: the policy's notifications — `threat.blocked` for
 * block (webhooks; the audit chain records it through its listener) and `threat.alert` for the
 * alert band (the request goes on). Core only: the request's facts arrive as plain values; the
 * Fastify side (log fields on the request, reading headers) is `reportDecision` in routes.ts.
 */
import type { EventBus } from '../platform/events.ts';
import type { ThreatDecision } from './types.ts';

/** The facts of the request a decision was made for, as the notification carries them. */
export interface RequestFacts {
  readonly requestId: string;
  readonly orgId: string | undefined;
  readonly sourceIp: string;
  readonly method: string;
  /** The route pattern (or the path without its query). */
  readonly path: string;
  readonly userAgent: string;
}

const NOTHING_HELD = Promise.resolve();

/** Whether a decision notifies anyone (block or alert). */
export function notifies(decision: ThreatDecision): boolean {
  return decision.decision === 'block' || decision.decision === 'alert';
}

/** The request-log fields of a decision (threat_score, decision, first pattern). */
export function threatLogFields(decision: ThreatDecision): { score: number; decision: string; pattern: string | null } {
  return { score: decision.threat_score, decision: decision.decision, pattern: decision.patterns_matched[0]?.id ?? null };
}

/** Resolves once the notification's evidence is on disk (the block audit entry, the webhook event): answer a block after it. */
export function notifyDecision(events: EventBus, facts: RequestFacts, decision: ThreatDecision, context: { sessionId?: string; gatewayId?: string }): Promise<void> {
  if (facts.orgId === undefined || !notifies(decision)) return NOTHING_HELD;
  return events.emit(
    facts.orgId,
    decision.decision === 'block' ? 'threat.blocked' : 'threat.alert',
    {
      request_id: facts.requestId,
      // The score the decision was made on (threat_score may rank the text within its band).
      threat_score: decision.decision_score ?? decision.threat_score,
      decision: decision.decision,
      pattern_ids: decision.patterns_matched.map((pattern) => pattern.id),
      session_id: context.sessionId ?? '',
      session_request_count: decision.session_request_count,
      session_escalation_factor: decision.session_escalation_factor,
      source_ip: facts.sourceIp,
      method: facts.method,
      path: facts.path,
      user_agent: facts.userAgent.slice(0, 512),
    },
    context.gatewayId === undefined ? {} : { gatewayId: context.gatewayId },
  );
}
