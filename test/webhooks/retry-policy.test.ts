import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DEFAULT_POLICY, backoffDelay, decide, parseRetryAfter } from '../../src/webhooks/retry-policy.ts';

const now = Date.parse('2030-01-01T00:00:00Z');

describe('webhook delivery outcome', () => {
  it('confirms any 2xx', () => {
    for (const status of [200, 201, 204, 299]) expect(decide({ kind: 'response', status, retryAfter: null }, 1, DEFAULT_POLICY, now).outcome).toBe('confirmed');
  });

  it('exhausts other 4xx and 3xx at once, without retry', () => {
    for (const status of [300, 301, 400, 401, 404, 410, 422]) {
      expect(decide({ kind: 'response', status, retryAfter: null }, 1, DEFAULT_POLICY, now)).toMatchObject({ outcome: 'exhausted', delayMs: null });
    }
  });

  it('retries 429 after exactly the Retry-After seconds or HTTP date', () => {
    expect(decide({ kind: 'response', status: 429, retryAfter: '7' }, 1, DEFAULT_POLICY, now)).toMatchObject({ outcome: 'retry', delayMs: 7_000, statusClass: '429' });
    const date = new Date(now + 90_000).toUTCString();
    expect(decide({ kind: 'response', status: 429, retryAfter: date }, 1, DEFAULT_POLICY, now).delayMs).toBe(90_000);
  });

  it('falls back to backoff for a 429 without a usable Retry-After', () => {
    const delay = decide({ kind: 'response', status: 429, retryAfter: 'soon' }, 1, DEFAULT_POLICY, now, () => 0.5).delayMs;
    expect(delay).toBe(DEFAULT_POLICY.baseDelayMs);
  });

  it('retries 5xx, timeouts and connection resets until the attempt limit, then exhausts', () => {
    const results = [
      { kind: 'response', status: 503, retryAfter: null },
      { kind: 'error', code: 'UND_ERR_HEADERS_TIMEOUT', name: 'HeadersTimeoutError' },
      { kind: 'error', code: null, name: 'TimeoutError' },
      { kind: 'error', code: 'ECONNRESET', name: 'Error' },
      { kind: 'error', code: 'UND_ERR_SOCKET', name: 'SocketError' },
    ] as const;
    for (const result of results) {
      expect(decide(result, 1, DEFAULT_POLICY, now).outcome).toBe('retry');
      expect(decide(result, DEFAULT_POLICY.maxAttempts, DEFAULT_POLICY, now).outcome).toBe('exhausted');
    }
    expect(decide(results[1], 1, DEFAULT_POLICY, now).statusClass).toBe('timeout');
    expect(decide(results[3], 1, DEFAULT_POLICY, now).statusClass).toBe('network');
  });

  it('exhausts at once when the target has become a forbidden address', () => {
    expect(decide({ kind: 'error', code: 'ETARGETFORBIDDEN', name: 'Error' }, 1, DEFAULT_POLICY, now)).toMatchObject({ outcome: 'exhausted', statusClass: 'forbidden' });
  });

  it('keeps every backoff within ±10% of base·2^(attempt-1), capped', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempt, random) => {
        const nominal = Math.min(DEFAULT_POLICY.baseDelayMs * 2 ** (attempt - 1), DEFAULT_POLICY.maxDelayMs);
        const delay = backoffDelay(attempt, DEFAULT_POLICY, () => random);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(nominal * 0.9));
        expect(delay).toBeLessThanOrEqual(Math.ceil(nominal * 1.1));
      }),
    );
  });

  it('ignores a malformed Retry-After', () => {
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter('-5', now)).toBeNull();
    expect(parseRetryAfter('x'.repeat(500), now)).toBeNull();
  });
});
