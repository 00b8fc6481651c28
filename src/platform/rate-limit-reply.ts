/**
 * How a rate-limit decision shows on the response: X-RateLimit-* on every answer, and for a
 * refusal the catalogue error with Retry-After. One place for the API limiter, the uncached-key
 * gate and the strict login/register tiers.
 */
import type { FastifyReply } from 'fastify';
import { SvcError, type ErrorCode } from './errors.ts';
import type { RateLimitDecision } from './rate-limit.ts';

export function setRateLimitHeaders(reply: FastifyReply, decision: RateLimitDecision): void {
  reply.header('X-RateLimit-Limit', decision.limit);
  reply.header('X-RateLimit-Remaining', decision.remaining);
  reply.header('X-RateLimit-Reset', decision.resetAt);
}

export function rateLimitError(decision: RateLimitDecision, code: ErrorCode): SvcError {
  return new SvcError(code, { headers: { 'Retry-After': String(decision.retryAfter) }, details: { retry_after: decision.retryAfter } });
}
