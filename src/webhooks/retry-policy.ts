/**
 * Delivery outcome and retry schedule, as pure functions (spec: Webhook delivery outcome).
 *   2xx                 confirmed; the endpoint's failure counter resets
 *   429                 retried; Retry-After (seconds or HTTP date) honoured, capped at maxDelayMs
 *   3xx, other 4xx      exhausted at once (redirects are never followed)
 *   5xx, timeout, reset retried with exponential backoff ±10% jitter, up to maxAttempts
 *   forbidden target    exhausted at once (the URL now resolves to a non-public address)
 * `pauseAfterExhausted` consecutive exhausted deliveries pause the endpoint (circuit break).
 */

export interface DeliveryPolicy {
  /** Delay before the first retry; doubles each retry. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Attempts per delivery, the first included. */
  maxAttempts: number;
  /** Whole request (connect, headers, body) limit per attempt. */
  timeoutMs: number;
  pauseAfterExhausted: number;
}

export const DEFAULT_POLICY: DeliveryPolicy = {
  baseDelayMs: 30_000,
  maxDelayMs: 6 * 3_600_000,
  maxAttempts: 10,
  timeoutMs: 10_000,
  pauseAfterExhausted: 5,
};

export type StatusClass = '2xx' | '3xx' | '4xx' | '429' | '5xx' | 'timeout' | 'network' | 'forbidden';
export type AttemptOutcome = 'confirmed' | 'retry' | 'exhausted';

export type AttemptResult =
  | { kind: 'response'; status: number; retryAfter: string | null }
  | { kind: 'error'; code: string | null; name: string | null };

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);

export function classify(result: AttemptResult): { statusClass: StatusClass; retryable: boolean } {
  if (result.kind === 'response') {
    const { status } = result;
    if (status >= 200 && status < 300) return { statusClass: '2xx', retryable: false };
    if (status === 429) return { statusClass: '429', retryable: true };
    if (status >= 500) return { statusClass: '5xx', retryable: true };
    if (status >= 300 && status < 400) return { statusClass: '3xx', retryable: false };
    return { statusClass: '4xx', retryable: false };
  }
  if (result.code === 'ETARGETFORBIDDEN') return { statusClass: 'forbidden', retryable: false };
  if (result.name === 'TimeoutError' || result.name === 'AbortError' || (result.code !== null && TIMEOUT_CODES.has(result.code))) {
    return { statusClass: 'timeout', retryable: true };
  }
  return { statusClass: 'network', retryable: true };
}

/** Backoff before attempt `attempt + 1` after `attempt` failed: base·2^(attempt-1) ±10%, capped. */
export function backoffDelay(attempt: number, policy: DeliveryPolicy, random: () => number = Math.random): number {
  const nominal = Math.min(policy.baseDelayMs * 2 ** (attempt - 1), policy.maxDelayMs);
  const jitter = 1 + (random() * 2 - 1) * 0.1;
  return Math.max(0, Math.round(nominal * jitter));
}

/** Retry-After as milliseconds from now: delta-seconds or an HTTP date; null when absent or unparsable. */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  // HTTP date (IMF-fixdate), e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return null;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** What happens after an attempt: the outcome and, for a retry, the delay. */
export function decide(
  result: AttemptResult,
  attempt: number,
  policy: DeliveryPolicy,
  now: number,
  random: () => number = Math.random,
): { statusClass: StatusClass; outcome: AttemptOutcome; delayMs: number | null } {
  const { statusClass, retryable } = classify(result);
  if (statusClass === '2xx') return { statusClass, outcome: 'confirmed', delayMs: null };
  if (!retryable || attempt >= policy.maxAttempts) return { statusClass, outcome: 'exhausted', delayMs: null };
  const retryAfter = result.kind === 'response' && statusClass === '429' ? parseRetryAfter(result.retryAfter, now) : null;
  const delayMs = retryAfter !== null ? Math.min(retryAfter, policy.maxDelayMs) : backoffDelay(attempt, policy, random);
  return { statusClass, outcome: 'retry', delayMs };
}
