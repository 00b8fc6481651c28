/**
 * Retry and failover decisions (pure). A retryable upstream failure (429, 5xx, 529, timeout,
 * network) is retried on the same provider with exponential backoff and full jitter, honouring
 * the upstream's Retry-After when it fits the remaining time; everything else, or a retry that
 * would not fit, moves on to the next candidate provider (failover). The whole attempt sequence
 * is bounded by `totalBudgetMs`, so a client never waits on retries longer than that.
 */
import type { AbortHook } from './cancel.ts';
import type { UpstreamError } from './contract.ts';

export interface RetryPolicy {
  /** Attempts per provider, including the first. */
  attemptsPerProvider: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Upper bound of the time spent on all attempts and waits of one request, ms. */
  totalBudgetMs: number;
  /** Deadline of one upstream call (non-streaming: the whole call; streaming: until headers). */
  attemptTimeoutMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  attemptsPerProvider: 2,
  baseDelayMs: 100,
  maxDelayMs: 2_000,
  totalBudgetMs: 30_000,
  attemptTimeoutMs: 60_000,
};

/** Exponential backoff with full jitter: uniform in [0, min(max, base·2^(attempt-1))]. */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling * random());
}

export type RetryDecision = { action: 'retry'; delayMs: number } | { action: 'failover' };

/**
 * What to do after `attempt` (1-based) failed on one provider with `error`, `elapsedMs` after the
 * request started.
 */
export function decideRetry(
  error: Pick<UpstreamError, 'retryable' | 'retryAfterMs'>,
  attempt: number,
  elapsedMs: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): RetryDecision {
  if (!error.retryable || attempt >= policy.attemptsPerProvider) return { action: 'failover' };
  const remaining = policy.totalBudgetMs - elapsedMs;
  const hinted = error.retryAfterMs;
  if (hinted !== null && hinted !== undefined) {
    // The upstream asked us to wait: wait when it is short, else try another provider now.
    if (hinted > policy.maxDelayMs || hinted >= remaining) return { action: 'failover' };
    return { action: 'retry', delayMs: hinted };
  }
  const delayMs = backoffDelay(attempt, policy, random);
  if (delayMs >= remaining) return { action: 'failover' };
  return { action: 'retry', delayMs };
}

/**
 * Whether an upstream failure says something about the provider's health (breaker input).
 * Breakers are shared by every org using the provider, so 429 does not count: a rate limit is
 * usually one org's key or quota, and must not cut the provider off for everyone (it is retried
 * and failed over per request instead). Overload (503/529), other 5xx, timeouts and network
 * failures are provider-wide.
 */
export function countsAgainstProvider(error: Pick<UpstreamError, 'code'>): boolean {
  return error.code === 'overloaded' || error.code === 'server' || error.code === 'timeout' || error.code === 'network';
}

/** Sleeps `ms`, waking early (rejecting) when the signal aborts. */
export function sleep(ms: number, signal?: AbortHook): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
