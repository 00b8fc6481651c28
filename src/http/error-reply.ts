/**
 * Pieces of the error reply that are about what to say and what to log, kept apart from the
 * app's hook wiring: BODY_TOO_LARGE states the limit; expected failures (an upstream that failed,
 * a dependency that is down) are logged at warn without a stack, bugs at error with one.
 */
import type { Logger } from '../platform/logger.ts';
import { SvcError, type ErrorCode } from '../platform/errors.ts';

/** Failures that are expected in operation: the log line says what, without a stack trace. */
const EXPECTED: ReadonlySet<ErrorCode> = new Set([
  'NO_PROVIDERS',
  'UPSTREAM_AUTH_FAILED',
  'UPSTREAM_ERROR',
  'SERVICE_UNAVAILABLE',
  'UPSTREAM_UNAVAILABLE',
  'UPSTREAM_TIMEOUT',
]);

export function bodyTooLarge(error: unknown, limitBytes: number | undefined): SvcError | null {
  if ((error as { code?: unknown } | null)?.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') return null;
  const limit = limitBytes ?? 1_048_576;
  return new SvcError('BODY_TOO_LARGE', { message: `The request body is larger than the limit of ${limit} bytes.`, details: { limit_bytes: limit } });
}

function causeSummary(error: unknown): Record<string, unknown> {
  const cause = (error as { cause?: unknown } | null)?.cause;
  const source = cause ?? error;
  const code = (source as { code?: unknown } | null)?.code;
  const status = (source as { status?: unknown; statusCode?: unknown } | null)?.status ?? (source as { statusCode?: unknown } | null)?.statusCode;
  return {
    ...(typeof code === 'string' ? { cause_code: code } : {}),
    ...(typeof status === 'number' ? { upstream_status: status } : {}),
  };
}

export function logFailure(logger: Logger, svcError: SvcError, error: unknown, requestId: string): void {
  if (svcError.status < 500) return;
  if (EXPECTED.has(svcError.code)) {
    logger.warn({ request_id: requestId, code: svcError.code, ...causeSummary(error) }, 'request failed: dependency');
    return;
  }
  logger.error({ err: error, request_id: requestId }, 'request failed');
}
