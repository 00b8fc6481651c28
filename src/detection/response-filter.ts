/**
 * The completion path's response filter: the model's answer is inspected as `llm_output` against
 * the request's system messages (and configured secrets), so an answer that reveals the system
 * prompt or a secret, or that carries planted instructions on, never reaches the client.
 *
 * - Streaming: every delta is checked before it is written (synchronously, in time proportional to
 *   the answer's length). The system prompt is tracked word by word over the whole answer so far
 *   (a recital anywhere, contiguous or in pieces far apart, stops the stream on the delta that
 *   completes it); secrets as described at BROAD_WINDOW. A leak ends the stream with an error
 *   event (`THREAT_BLOCKED`), never silently. Text already sent before the leaking delta stays
 *   sent: a contiguous secret split across deltas is caught on the delta that completes it, a
 *   scattered one within a sixteenth of the answer after it.
 * - At the end (both paths) the whole answer goes through the engine (`llm_output`: leak check,
 *   planted instructions, catalogue): block → `THREAT_BLOCKED` (403 before any byte, or the
 *   error event), otherwise `response_filter.detection` summarises a decision of log or above.
 */
import { SvcError } from '../platform/errors.ts';
import type { DetectionEngine } from './engine.ts';
import { leakDetector, promptLeakTracker } from './leak.ts';
import type { Finding, ThreatDecision } from './types.ts';

/**
 * Secrets: looked for on every delta in its text and the `secretReach` characters before it (a
 * split secret), and in the last 64 KiB whole each time a sixteenth of it is new (at least every
 * 16 characters: a secret spelled out with long separators or inside a longer encoded blob), so
 * at most 16 characters are read per character streamed. Checking the whole answer on each delta
 * was quadratic (a 150 KB stream took 47 s of CPU and held the event loop).
 */
const BROAD_WINDOW = 65_536;
const BROAD_EVERY = 16;

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
  /** The answer's last characters for the narrow secret check (kept short: sliced on every delta). */
  let tail = '';
  /** The answer's last BROAD_WINDOW characters at least, as received (joined only for a broad check). */
  let pieces: string[] = [];
  let total = 0;
  let nextBroad = 0;
  // Built at the first delta: a JSON answer is only checked by `finish`, and the tracker reads the
  // system prompt into n-grams (80–120 µs for 2 KB on the shared machine) that only a stream's deltas use.
  let secretLeaks: ((output: string) => Finding[]) | null = null;
  let promptLeaks: { push(text: string): Finding[] } | null = null;
  const checkSecrets = (text: string) => {
    const found = (secretLeaks ??= leakDetector({ secrets }))(text);
    if (found.length > 0) throw blocked(found);
  };
  return {
    push(delta) {
      if (systemPrompt !== '') {
        // The whole answer so far, word by word (leak.ts): a recital anywhere, in pieces or not.
        const found = (promptLeaks ??= promptLeakTracker(systemPrompt)).push(delta);
        if (found.length > 0) throw blocked(found);
      }
      if (secrets.length === 0) return;
      const previous = tail.length;
      tail += delta;
      pieces.push(delta);
      total += delta.length;
      // Narrow: a secret in this delta and the characters before it.
      checkSecrets(tail.slice(Math.max(0, previous - secretReach)));
      if (tail.length > 2 * secretReach) tail = tail.slice(tail.length - secretReach);
      // Broad: the last BROAD_WINDOW characters whole, once 1/16 of them is new — a secret spelled
      // out with long separators or inside a longer encoded blob.
      if (total >= nextBroad) {
        let text = pieces.length === 1 ? pieces[0]! : pieces.join('');
        if (text.length > BROAD_WINDOW) text = text.slice(text.length - BROAD_WINDOW);
        pieces = [text];
        checkSecrets(text);
        // At most 4 KiB later, so `pieces` never holds much more than BROAD_WINDOW.
        nextBroad = total + Math.max(BROAD_EVERY, text.length >> 4);
      }
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
