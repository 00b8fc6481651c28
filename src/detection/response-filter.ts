/**
 * The completion path's response filter: the model's answer is inspected as `llm_output` against
 * the request's system messages (and configured secrets), so an answer that reveals the system
 * prompt or a secret, or that carries planted instructions on, never reaches the client.
 *
 * - Streaming: every delta is checked before it is written (the leak check is synchronous and
 *   bounded, so a long answer costs time in proportion to its length). Narrow checks: secrets on
 *   every delta, in its text and the characters before it a split secret needs; the system prompt,
 *   once enough new characters arrived, in the last `STREAM_WINDOW` characters. A broad check reads
 *   the last 64 KiB whole each time a sixteenth of it is new (at least every 16 characters for
 *   secrets, 64 for the prompt), for
 *   what no window shows: a secret spelled out with long separators or inside a longer encoded
 *   blob, a prompt recited in pieces far apart. A leak ends the stream with an error event
 *   (`THREAT_BLOCKED`), never silently. Text already sent before the leaking delta stays sent:
 *   a contiguous secret split across deltas is caught on the delta that completes it, a
 *   scattered one within a sixteenth of the answer after it.
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
 * CPU and held the event loop); the broad check's period grows with what it reads, so it costs at
 * most 16 characters read per character streamed. `finish` reads the whole answer.
 */
const STREAM_CHECK_EVERY = 64;
const STREAM_CHECK_EVERY_MAX = 256;
const STREAM_WINDOW = 512;
/** What the broad check reads (what detectLeak reads of a text at most), every 1/16 of it that is new. */
const BROAD_WINDOW = 65_536;
/** The broad secrets check's shortest period (a secret check costs little; a prompt check reads the whole prompt). */
const BROAD_SECRETS_EVERY = 16;

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
  /** The answer's last BROAD_WINDOW characters at least (trimmed when twice that), with what came since. */
  let recent = '';
  let sinceWindow = 0;
  let total = 0;
  let nextBroadSecrets = secrets.length > 0 ? 0 : Number.POSITIVE_INFINITY;
  let nextBroadPrompt = 0;
  const check = (text: string, what: 'secrets' | 'prompt') => {
    if (what === 'secrets') {
      const found = detectLeak(text, { secrets });
      if (found.length > 0) throw blocked(found);
      return;
    }
    const found = detectLeak(text, { systemPrompt });
    if (found.some((finding) => finding.confidence >= 0.7)) throw blocked(found);
  };
  return {
    push(delta) {
      if (secrets.length === 0 && systemPrompt === '') return;
      const previous = recent.length;
      recent += delta;
      sinceWindow += delta.length;
      total += delta.length;
      // Narrow: a secret in this delta and the characters before it; a recital in the last new characters.
      if (secrets.length > 0) check(recent.slice(Math.max(0, previous - secretReach)), 'secrets');
      if (systemPrompt !== '' && sinceWindow >= Math.min(STREAM_CHECK_EVERY_MAX, Math.max(STREAM_CHECK_EVERY, total >> 4))) {
        check(recent.slice(Math.max(0, recent.length - sinceWindow - STREAM_WINDOW)), 'prompt');
        sinceWindow = 0;
      }
      // Broad: the last BROAD_WINDOW characters whole, once 1/16 of them is new — a secret spelled
      // out with long separators or inside a longer encoded blob, a prompt recited in pieces far apart.
      const broad = total >= nextBroadSecrets || (systemPrompt !== '' && total >= nextBroadPrompt);
      if (broad) {
        const text = recent.length > BROAD_WINDOW ? recent.slice(recent.length - BROAD_WINDOW) : recent;
        if (secrets.length > 0 && total >= nextBroadSecrets) {
          check(text, 'secrets');
          nextBroadSecrets = total + Math.max(BROAD_SECRETS_EVERY, text.length >> 4);
        }
        if (systemPrompt !== '' && total >= nextBroadPrompt) {
          check(text, 'prompt');
          nextBroadPrompt = total + Math.max(STREAM_CHECK_EVERY, text.length >> 4);
        }
      }
      if (recent.length > 2 * BROAD_WINDOW) recent = recent.slice(recent.length - BROAD_WINDOW);
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
