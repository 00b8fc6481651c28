// Small pure helpers shared by the adapters: boundary checks on upstream JSON, status → error
// code mapping, Retry-After parsing. No I/O, no provider knowledge.
import { UpstreamError } from '../../contract.ts';
import type { FinishReason, TokenUsage, UpstreamErrorCode, UpstreamHeaders } from '../../contract.ts';

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function objectAt(value: unknown, key: string): JsonObject | undefined {
  if (!isObject(value)) return undefined;
  const inner = value[key];
  return isObject(inner) ? inner : undefined;
}

export function arrayAt(value: unknown, key: string): unknown[] | undefined {
  if (!isObject(value)) return undefined;
  const inner = value[key];
  return Array.isArray(inner) ? inner : undefined;
}

export function stringAt(value: unknown, key: string): string | undefined {
  if (!isObject(value)) return undefined;
  const inner = value[key];
  return typeof inner === 'string' ? inner : undefined;
}

/**
 * Most tokens one call may report in one count: far beyond any model's context and output
 * (a few million), so only a broken or hostile upstream reaches it. A count above it is no count:
 * 1e300 tokens would exhaust the org's daily budget and overflow the bigint the budget is stored in.
 */
export const MAX_TOKEN_COUNT = 100_000_000;

/** A non-negative integer token count up to MAX_TOKEN_COUNT, or undefined. */
export function countAt(value: unknown, key: string): number | undefined {
  if (!isObject(value)) return undefined;
  const inner = value[key];
  return typeof inner === 'number' && Number.isFinite(inner) && inner >= 0 && inner <= MAX_TOKEN_COUNT ? Math.trunc(inner) : undefined;
}

export function invalidResponse(provider: string, cause?: unknown): UpstreamError {
  return new UpstreamError({ provider, status: null, code: 'invalid_response', retryable: false, cause });
}

/** JSON.parse that maps failure to UpstreamError('invalid_response') and requires an object. */
export function parseJsonObject(provider: string, text: string): JsonObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw invalidResponse(provider, error);
  }
  if (!isObject(parsed)) throw invalidResponse(provider);
  return parsed;
}

/** Like parseJsonObject but returns undefined instead of throwing (for error bodies). */
export function tryParseJsonObject(text: string): JsonObject | undefined {
  if (text.length === 0 || text.length > 1_000_000) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export function headerValue(headers: UpstreamHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

const MAX_RETRY_AFTER_MS = 3_600_000;

/** Retry hint from `retry-after-ms` (OpenAI, Azure) or `retry-after` (seconds or HTTP date). */
export function retryAfterMs(headers: UpstreamHeaders, now: number = Date.now()): number | null {
  const milliseconds = headerValue(headers, 'retry-after-ms');
  if (milliseconds !== undefined && /^\d{1,10}(\.\d{1,6})?$/.test(milliseconds.trim())) {
    return Math.min(Math.ceil(Number(milliseconds.trim())), MAX_RETRY_AFTER_MS);
  }
  const value = headerValue(headers, 'retry-after')?.trim();
  if (value === undefined || value.length === 0 || value.length > 64) return null;
  if (/^\d{1,10}(\.\d{1,6})?$/.test(value)) return Math.min(Math.ceil(Number(value) * 1000), MAX_RETRY_AFTER_MS);
  // An HTTP date always names its weekday/month; anything else ("-5", "soon") is ignored.
  if (!/^[A-Za-z]{3}, /.test(value)) return null;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return null;
  return Math.min(Math.max(0, date - now), MAX_RETRY_AFTER_MS);
}

export function codeForStatus(status: number): UpstreamErrorCode {
  if (status === 429) return 'rate_limited';
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'not_found';
  if (status === 408) return 'timeout';
  if (status === 503 || status === 529) return 'overloaded';
  if (status >= 500) return 'server';
  // A redirect is a moved or misconfigured base URL (never followed: it could point anywhere), not a rejected request.
  if (status >= 300 && status < 400) return 'invalid_response';
  return 'bad_request';
}

/** The common error shape: code from status (overridable), Retry-After from headers. */
export function upstreamErrorFor(
  provider: string,
  status: number,
  headers: UpstreamHeaders,
  providerCode: string | undefined,
  override?: { code?: UpstreamErrorCode; retryAfterMs?: number | null },
): UpstreamError {
  return new UpstreamError({
    provider,
    status,
    code: override?.code ?? codeForStatus(status),
    retryAfterMs: retryAfterMs(headers) ?? override?.retryAfterMs ?? null,
    providerCode: providerCode ?? null,
  });
}

export function usageOf(promptTokens: number, completionTokens: number, extra: { total?: number; cached?: number; reasoning?: number } = {}): TokenUsage {
  // A reported total below the sum of its parts is not believed (it would make the call cheap for the budget).
  const usage: TokenUsage = { promptTokens, completionTokens, totalTokens: Math.max(extra.total ?? 0, promptTokens + completionTokens) };
  if (extra.cached !== undefined) usage.cachedPromptTokens = extra.cached;
  if (extra.reasoning !== undefined) usage.reasoningTokens = extra.reasoning;
  return usage;
}

export function finishFrom(table: Readonly<Record<string, FinishReason>>, raw: string | null | undefined): FinishReason {
  if (raw === null || raw === undefined) return 'other';
  return Object.hasOwn(table, raw) ? (table[raw] as FinishReason) : 'other';
}

/** Tool-call arguments arrive as JSON text; providers that want an object get {} for invalid JSON. */
export function argumentsObject(text: string): JsonObject {
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

export function joinUrl(base: string, path: string): string {
  return (base.endsWith('/') ? base.slice(0, -1) : base) + path;
}

/** Error thrown when a stream ends without its provider's terminal event. */
export function truncatedStream(provider: string, cause?: unknown): UpstreamError {
  return new UpstreamError({ provider, status: null, code: 'network', providerCode: 'stream_truncated', cause });
}
