/**
 * The completion path's response filter: the model's answer is inspected as `llm_output` against
 * the request's system messages (and configured secrets), so an answer that reveals the system
 * prompt or a secret, or that carries planted instructions on, never reaches the client.
 *
 * - Streaming: every delta is checked before it is written (the leak check is synchronous and
 *   bounded: secrets are looked for on every delta in its text and the characters before it a
 *   split or encoded secret needs; the system prompt, once enough new characters arrived, in the
 *   last `STREAM_WINDOW` characters, so a long answer costs time in proportion to its length); a
 *   leak ends the stream with an error event
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

/**
 * A system-prompt leak shows as 8 shared five-word phrases (about 12 words, leak.ts), or 30 % of
 * a short prompt's, so the new text and the 512 characters before it show a contiguous one. The
 * check runs every 64 new characters while the answer is short (leaks usually come first), then
 * every 1/16 of the answer's length up to every 256, so a long answer costs time in proportion to
 * its length. Checking the whole answer on each delta was quadratic (a 150 KB stream took 47 s of
 * CPU and held the event loop). `finish` reads the whole answer.
 */
const STREAM_CHECK_EVERY = 64;
const STREAM_CHECK_EVERY_MAX = 256;
const STREAM_WINDOW = 512;

/** The parts of a completion request the filter reads. */
export interface ResponseFilterRequest {
  readonly messages: readonly { readonly role: string; readonly content: string }[];
}

export interface ResponseGuard {
  /** Called with each delta of the answer before it is written; throws THREAT_BLOCKED on a leak. */
  push(delta: string): void;
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
  // A secret spelled out, reversed or encoded spans up to about four times its length.
  const secretReach = 4 * secrets.reduce((longest, secret) => Math.max(longest, secret.length), 0) + 64;
  // The answer's tail: the last max(STREAM_WINDOW, secretReach) characters and what came since.
  let tail = '';
  let sinceCheck = 0;
  let total = 0;
  return {
    push(delta) {
      if (secrets.length === 0 && systemPrompt === '') return;
      const previous = tail.length;
      tail += delta;
      sinceCheck += delta.length;
      total += delta.length;
      if (secrets.length > 0) {
        // Secrets are short: on every delta, in its text and the characters before it.
        const found = detectLeak(tail.slice(Math.max(0, previous - secretReach)), { secrets });
        if (found.length > 0) throw blocked(found);
      }
      if (systemPrompt !== '' && sinceCheck >= Math.min(STREAM_CHECK_EVERY_MAX, Math.max(STREAM_CHECK_EVERY, total >> 4))) {
        const found = detectLeak(tail.slice(Math.max(0, tail.length - sinceCheck - STREAM_WINDOW)), { systemPrompt });
        sinceCheck = 0;
        if (found.some((finding) => finding.confidence >= 0.7)) throw blocked(found);
      }
      const keep = Math.max(STREAM_WINDOW, secretReach);
      if (tail.length > 2 * keep) tail = tail.slice(tail.length - keep);
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
