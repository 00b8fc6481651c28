/**
 * Screening of a completion request before anything leaves svc: the user (and system) turns are
 * inspected as a prompt, with the caller's X-Session-ID for session escalation and fragment
 * correlation; tool results and RAG `sources` are inspected as tool output (indirect
 * injection), outside the session count. The stricter decision applies: block → 403
 * THREAT_BLOCKED, challenge → 403 CHALLENGE_REQUIRED, alert → notify and go on, log → go on.
 * The route reports the decision (request log fields, notifications) and then calls `refuse`.
 */
import type { DetectionEngine, ThreatDecision } from '../detection/index.ts';
import { SvcError } from '../platform/errors.ts';
import { contentText } from './content.ts';
import type { CompletionBody } from './schemas.ts';

const RANK: Record<string, number> = { allow: 0, log: 1, alert: 2, challenge: 3, block: 4 };

/** Who asked, as screening needs it. */
export interface ScreenContext {
  readonly orgId: string | undefined;
  readonly sessionId: string | undefined;
  readonly requestId: string;
  readonly sourceIp: string;
}

/** The stricter decision of the request's prompt and retrieved content; null when nothing was inspected. */
export async function screenCompletion(engine: DetectionEngine, body: CompletionBody, context: ScreenContext): Promise<ThreatDecision | null> {
  const { orgId, sessionId, requestId, sourceIp } = context;
  let prompt = '';
  let retrieved = '';
  for (const message of body.messages) {
    const text = contentText(message.content);
    if (message.role === 'user' || message.role === 'system') prompt = prompt === '' ? text : `${prompt}\n${text}`;
    else if (message.role === 'tool') retrieved = retrieved === '' ? text : `${retrieved}\n${text}`;
  }
  for (const source of body.sources ?? []) {
    const content = typeof source === 'string' ? source : source.content;
    retrieved = retrieved === '' ? content : `${retrieved}\n${content}`;
  }
  // Plain literals (one shape each) rather than spreads: this runs on every completion.
  const promptDecision = prompt === '' ? null : engine.inspect({ kind: 'prompt', content: prompt, sessionId, orgId, requestId, sourceIp, pillar: 'ai_gateway' });
  const decisions =
    retrieved === ''
      ? [await promptDecision]
      : await Promise.all([promptDecision, engine.inspect({ kind: 'tool_output', content: retrieved, sessionId: undefined, orgId, requestId, sourceIp, pillar: 'ai_gateway' })]);
  let worst: ThreatDecision | null = null;
  for (const decision of decisions) {
    if (decision !== null && (worst === null || RANK[decision.decision]! > RANK[worst.decision]!)) worst = decision;
  }
  return worst;
}

/** Where a solved challenge of the AI gateway is posted. */
export const CHALLENGE_VERIFY_PATH = '/api/v1/gateway/challenge';

/** The scope an AI-gateway clearance is valid in: one org (bound besides to one credential). */
export function challengeScope(orgId: string): string {
  return `ai_gateway:${orgId}`;
}

/** The puzzle a CHALLENGE_REQUIRED carries (platform/challenge.ts). */
export interface ChallengeOffer {
  id: string;
  token: string;
  algorithm: 'sha256';
  difficulty: number;
  expires_at: string;
  verify_url: string;
}

/** Throws the refusal a decision calls for (block, challenge — with its puzzle when offered); returns for the others. */
export function refuse(worst: ThreatDecision, challenge?: ChallengeOffer): void {
  if (worst.decision === 'block') throw new SvcError('THREAT_BLOCKED', { details: { threat: worst } });
  if (worst.decision === 'challenge') throw new SvcError('CHALLENGE_REQUIRED', { details: { ...(challenge === undefined ? {} : { challenge }), threat: worst } });
}
