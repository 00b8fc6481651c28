/**
 * The completion path's response filter: the model's answer is inspected as `llm_output` against
 * the request's system messages (and configured secrets), so an answer that reveals the system
 * prompt or a secret, or that carries planted instructions on, never reaches the client.
 *
 * - Streaming: every delta is checked before it is written (the leak check is synchronous and
 *   bounded: it runs when at least `STREAM_CHECK_EVERY` new characters arrived and on the
 *   delta that completes a secret); a leak ends the stream with an error event
 *   (`THREAT_BLOCKED`), never silently. Text already sent before the leaking delta stays sent:
 *   a secret split across deltas is caught on the delta that completes it, the earlier
 *   fragments were already written.
 * - At the end (both paths) the whole answer goes through the engine (`llm_output`: leak check,
 *   planted instructions, catalogue): block → `THREAT_BLOCKED` (403 before any byte, or the
 *   error event), otherwise `response_filter.detection` summarises a decision of log or above.
 */
import { SvcError } from '../platform/errors.ts';
import type { DetectionEngine } from './engine.ts';
import { detectLeak } from './leak.ts';
import type { Finding, ThreatDecision } from './types.ts';

const STREAM_CHECK_EVERY = 64;

/** The parts of a completion request the filter reads. */
export interface ResponseFilterRequest {
  readonly messages: readonly { readonly role: string; readonly content: string }[];
}

export interface ResponseGuard {
  /** Called with the accumulated answer before a delta is written; throws THREAT_BLOCKED on a leak. */
  check(accumulated: string): void;
  /** The whole answer: throws THREAT_BLOCKED on block, else returns `response_filter` with a `detection` part when relevant. */
  finish(content: string, current: Record<string, unknown> | null): Promise<Record<string, unknown> | null>;
}

export interface ResponseGuardOptions {
  readonly orgId?: string;
  readonly requestId?: string;
  readonly secrets?: readonly string[];
}

function blocked(findings: readonly Finding[], decision?: ThreatDecision): SvcError {
  return new SvcError('THREAT_BLOCKED', {
    details: decision === undefined ? { threat: { kind: 'llm_output', decision: 'block', patterns_matched: findings.map((finding) => ({ id: finding.id, name: finding.name, confidence: finding.confidence })) } } : { threat: decision },
  });
}

/** A guard for one completion; null when there is nothing to guard (no system prompt, no secrets). */
export function createResponseGuard(engine: DetectionEngine, body: ResponseFilterRequest, options: ResponseGuardOptions = {}): ResponseGuard {
  const systemPrompt = body.messages.filter((message) => message.role === 'system' || message.role === 'developer').map((message) => message.content).join('\n');
  const secrets = options.secrets ?? [];
  const context = { ...(systemPrompt === '' ? {} : { systemPrompt }), ...(secrets.length === 0 ? {} : { secrets }) };
  const guarded = systemPrompt !== '' || secrets.length > 0;
  let checkedAt = 0;
  return {
    check(accumulated) {
      if (!guarded || accumulated.length - checkedAt < STREAM_CHECK_EVERY) {
        // Secrets are short: look for them on every delta (cheap substring checks).
        if (secrets.length === 0) return;
        const found = detectLeak(accumulated, { secrets });
        if (found.length > 0) throw blocked(found);
        return;
      }
      checkedAt = accumulated.length;
      const found = detectLeak(accumulated, context);
      if (found.some((finding) => finding.confidence >= 0.7)) throw blocked(found);
    },
    async finish(content, current) {
      const decision = await engine.inspect({
        kind: 'llm_output',
        content,
        ...context,
        ...(options.orgId === undefined ? {} : { orgId: options.orgId }),
        ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
        pillar: 'ai_gateway',
      });
      if (decision.decision === 'block' || decision.decision === 'challenge') throw blocked([], decision);
      if (decision.decision === 'allow') return current;
      return { ...(current ?? {}), detection: { decision: decision.decision, threat_score: decision.threat_score, patterns_matched: decision.patterns_matched } };
    },
  };
}
