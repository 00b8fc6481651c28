import { describe, expect, it } from 'vitest';
import { UpstreamError, safeUrl } from '../../contract.ts';
import { codeForStatus, retryAfterMs } from './common.ts';

describe('retryAfterMs', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('reads seconds, HTTP dates and retry-after-ms, preferring milliseconds', () => {
    expect(retryAfterMs({ 'retry-after': '3' }, now)).toBe(3000);
    expect(retryAfterMs({ 'retry-after': '0.5' }, now)).toBe(500);
    expect(retryAfterMs({ 'retry-after': 'Thu, 01 Jan 2026 00:00:10 GMT' }, now)).toBe(10_000);
    expect(retryAfterMs({ 'retry-after-ms': '250', 'retry-after': '9' }, now)).toBe(250);
  });

  it('returns null for absent or malformed values and caps absurd ones at one hour', () => {
    expect(retryAfterMs({}, now)).toBeNull();
    expect(retryAfterMs({ 'retry-after': 'soon' }, now)).toBeNull();
    expect(retryAfterMs({ 'retry-after': '-5' }, now)).toBeNull();
    expect(retryAfterMs({ 'retry-after': '99999999' }, now)).toBe(3_600_000);
    expect(retryAfterMs({ 'retry-after': 'Wed, 31 Dec 2025 23:00:00 GMT' }, now)).toBe(0);
  });
});

describe('codeForStatus', () => {
  it('maps statuses to upstream error codes', () => {
    expect([429, 401, 403, 404, 408, 503, 529, 500, 502, 400, 422].map(codeForStatus)).toEqual([
      'rate_limited',
      'auth',
      'auth',
      'not_found',
      'timeout',
      'overloaded',
      'overloaded',
      'server',
      'server',
      'bad_request',
      'bad_request',
    ]);
  });
});

describe('UpstreamError', () => {
  it('strips query strings and credentials from the URL and marks retryability by code', () => {
    const error = new UpstreamError({ provider: 'gemini', status: 503, code: 'overloaded', url: 'https://user:pw@host.example/v1/x?key=SECRET' });
    expect(error.url).toBe('https://host.example/v1/x');
    expect(error.retryable).toBe(true);
    expect(error.message).not.toContain('SECRET');
    expect(new UpstreamError({ provider: 'p', status: 400, code: 'bad_request' }).retryable).toBe(false);
    expect(safeUrl('not a url')).toBe('[unparseable url]');
  });

  it('drops a provider code that is not a plain identifier', () => {
    const error = new UpstreamError({ provider: 'p', status: 400, code: 'bad_request', providerCode: 'Incorrect API key sk-123 provided' });
    expect(error.providerCode).toBeNull();
  });
});
