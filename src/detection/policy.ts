/**
 * Response policy: maps a threat score to an action with the spec's bands, per-org thresholds,
 * and the session-escalation rule. Pure.
 *
 *   score < log (0.2)          allow      (below the spec's lowest band: forwarded, not logged)
 *   log <= score < alert       log        (0.2–0.4: allow and log)
 *   alert <= score < challenge alert      (0.4–0.6: allow and send a webhook)
 *   challenge <= score < block challenge  (0.6–0.7: CAPTCHA / second factor before forwarding)
 *   score >= block (0.7)       block      (403 and an audit-log entry)
 */
import type { Decision, Thresholds } from './types.ts';

/** Categories of the spec's agent-hijacking classes; they default to block. */
export const HIJACKING_CATEGORIES: ReadonlySet<string> = new Set(['context-poisoning', 'agent-impersonation', 'exfiltration', 'prompt-chaining', 'sleeper-payload']);

export const DEFAULT_THRESHOLDS: Thresholds = Object.freeze({ log: 0.2, alert: 0.4, challenge: 0.6, block: 0.7 });

/** T1 score above which the pipeline stops and blocks at once (spec: "score above 0.9"). */
export const IMMEDIATE_BLOCK_SCORE = 0.9;

export function decide(score: number, thresholds: Thresholds = DEFAULT_THRESHOLDS): Decision {
  if (score >= thresholds.block) return 'block';
  if (score >= thresholds.challenge) return 'challenge';
  if (score >= thresholds.alert) return 'alert';
  if (score >= thresholds.log) return 'log';
  return 'allow';
}

/** Allowed means forwarded without friction: challenge and block are not allowed. */
export function isAllowed(decision: Decision): boolean {
  return decision !== 'challenge' && decision !== 'block';
}

/** The smallest positive threshold (finer values mean nothing for a score and do not fit a real). */
export const MIN_THRESHOLD = 1e-6;

export class ThresholdError extends Error {
  constructor(
    readonly field: string,
    message: string,
    /** Set when the values break the required order (lowest band first). */
    readonly order?: readonly string[],
  ) {
    super(message);
    this.name = 'ThresholdError';
  }
}

/**
 * Resolves a partial update into a full, ordered set. Given values are kept; a missing band
 * keeps its current value but is lowered to the next band up when that one moved below it
 * (block 0.5 → challenge 0.5, an empty challenge band). Order log <= alert <= challenge <= block
 * must hold among the given values, block must be > 0.
 */
export function resolveThresholds(update: Partial<Thresholds>, current: Thresholds = DEFAULT_THRESHOLDS): Thresholds {
  const order = ['log', 'alert', 'challenge', 'block'] as const;
  for (const name of order) {
    const value = update[name];
    if (value !== undefined && !(Number.isFinite(value) && value >= 0 && value <= 1)) throw new ThresholdError(`${name}_threshold`, `${name}_threshold must be between 0 and 1`);
    // Stored as PostgreSQL real: a positive value below its smallest normal number cannot be stored.
    if (value !== undefined && value > 0 && value < MIN_THRESHOLD) throw new ThresholdError(`${name}_threshold`, `${name}_threshold must be 0 or at least ${MIN_THRESHOLD}`);
  }
  if (update.block !== undefined && update.block <= 0) throw new ThresholdError('block_threshold', 'block_threshold must be above 0');
  const result: Record<(typeof order)[number], number> = { ...current };
  for (const name of order) if (update[name] !== undefined) result[name] = update[name];
  for (let index = order.length - 2; index >= 0; index--) {
    const name = order[index]!;
    const above = order[index + 1]!;
    if (result[name] > result[above]) {
      if (update[name] !== undefined) {
        throw new ThresholdError(`${name}_threshold`, `${name}_threshold (${result[name]}) must not exceed ${above}_threshold (${result[above]}): the order is log <= alert <= challenge <= block`, order.map((band) => `${band}_threshold`));
      }
      result[name] = result[above];
    }
  }
  return Object.freeze(result);
}

/**
 * Session escalation factor for the n-th request of a session: the spec's anchors 1 → 1.0,
 * 3 → 1.3, 5 → 2.0, 8+ → 2.5, linearly interpolated in between (2 → 1.15, 4 → 1.65,
 * 6 → 2.17, 7 → 2.33).
 */
export function sessionFactor(requestCount: number): number {
  const anchors: readonly (readonly [number, number])[] = [[1, 1.0], [3, 1.3], [5, 2.0], [8, 2.5]];
  if (requestCount <= 1) return 1;
  if (requestCount >= 8) return 2.5;
  for (let index = 0; index < anchors.length - 1; index++) {
    const [fromCount, fromFactor] = anchors[index]!;
    const [toCount, toFactor] = anchors[index + 1]!;
    if (requestCount <= toCount) return Math.round((fromFactor + ((requestCount - fromCount) * (toFactor - fromFactor)) / (toCount - fromCount)) * 100) / 100;
  }
  return 2.5;
}

/** Escalation tier label for svc_session_escalations_total{tier}. */
export function escalationTier(requestCount: number): 'baseline' | 'elevated' | 'high_alert' | 'automatic_block' {
  if (requestCount >= 8) return 'automatic_block';
  if (requestCount >= 5) return 'high_alert';
  if (requestCount >= 3) return 'elevated';
  return 'baseline';
}

/** A request carries a threat signal when its base score reaches this floor. */
export const THREAT_SIGNAL_FLOOR = 0.15;

export interface EscalationResult {
  readonly score: number;
  readonly factor: number;
  readonly autoBlocked: boolean;
}

/**
 * Applies the factor to a base score. At 8+ requests a request with a threat signal (base >=
 * THREAT_SIGNAL_FLOOR) is blocked outright; a clean request is never blocked for the session's
 * length alone, whatever the count.
 */
export function escalate(baseScore: number, requestCount: number, thresholds: Thresholds = DEFAULT_THRESHOLDS): EscalationResult {
  const factor = sessionFactor(requestCount);
  if (baseScore < THREAT_SIGNAL_FLOOR) return { score: baseScore, factor, autoBlocked: false };
  let score = Math.min(1, baseScore * factor);
  const autoBlocked = requestCount >= 8 && score < thresholds.block;
  if (requestCount >= 8) score = Math.max(score, thresholds.block);
  return { score: Math.round(score * 1e4) / 1e4, factor, autoBlocked };
}
