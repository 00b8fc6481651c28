/**
 * What kind of failure a database error is, so callers can answer the right thing: an outage
 * (connection refused, server shutting down, pool exhausted) or a lost lock conflict is retried
 * later or answered 503 SERVICE_UNAVAILABLE; a value the database cannot store (class 22 "data exception": a number
 * out of range, an invalid text encoding) is the client's input, answered 400; anything else is
 * a bug (500).
 */
import pRetry from 'p-retry';
import { SvcError } from '../errors.ts';

/** SQLSTATE classes and codes that mean "the database is not there right now". */
const OUTAGE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '53400']);
const OUTAGE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN']);
const OUTAGE_MESSAGES = [
  'Connection terminated',
  'connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Cannot use a pool after calling end',
  'the database system is',
  'PGlite is closed',
  'Client was closed',
];

function fields(error: unknown): { code: string; message: string } {
  if (typeof error !== 'object' || error === null) return { code: '', message: String(error) };
  const code = (error as { code?: unknown }).code;
  const message = (error as { message?: unknown }).message;
  return { code: typeof code === 'string' ? code : '', message: typeof message === 'string' ? message : '' };
}

/** The database (or the connection to it) is unavailable; the same statement may work later. */
export function isDatabaseOutage(error: unknown): boolean {
  const { code, message } = fields(error);
  if (code.startsWith('08') || OUTAGE_SQLSTATES.has(code) || OUTAGE_ERRNOS.has(code)) return true;
  if (error instanceof AggregateError) return error.errors.some(isDatabaseOutage);
  if (OUTAGE_MESSAGES.some((fragment) => message.includes(fragment))) return true;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== error && isDatabaseOutage(cause);
}

/**
 * The statement lost a lock conflict (40P01 deadlock detected, 40001 serialization failure): the
 * database rolled it back whole, and the same statement may succeed when tried again.
 */
export function isLockConflict(error: unknown): boolean {
  const { code } = fields(error);
  return code === '40P01' || code === '40001';
}

/**
 * A write that failed but may succeed when tried again: an outage or a lost lock conflict. The
 * one decision every evidence writer and replay handler makes before falling back to writing
 * records one by one: a retryable failure keeps the records (spooled, or rethrown so that the
 * outbox keeps them) rather than refusing any of them.
 */
export function isRetryableWriteFailure(error: unknown): boolean {
  return isDatabaseOutage(error) || isLockConflict(error);
}

/** How a write that lost a lock conflict is tried again: attempts in all, and the backoff between them. */
export interface LockConflictRetry {
  /** Attempts, the first included. */
  readonly attempts: number;
  /** The wait before the second attempt is drawn from [minMs, 2 × minMs] ms; it doubles with each further attempt, capped at maxMs. */
  readonly minMs: number;
  readonly maxMs: number;
}

/**
 * Four attempts, waits drawn from [10, 20], [20, 40] and [40, 80] ms: the transaction that won the
 * conflict has usually committed by then, and a request waits at most 0.14 s longer (plus the
 * attempts) before it is answered as on an outage.
 */
export const LOCK_CONFLICT_RETRY: LockConflictRetry = { attempts: 4, minMs: 10, maxMs: 80 };

/**
 * A failure of `work` as p-retry receives it. p-retry replaces a thrown value that is not an Error
 * by a TypeError of its own, and never asks `shouldRetry` about a TypeError: a value carried here
 * (anything that is not an Error, and a TypeError) reaches `shouldRetry` and the caller unchanged.
 */
class Carried extends Error {
  constructor(readonly value: unknown) {
    super('carried failure');
  }
}
const carried = (error: unknown): unknown => (error instanceof Carried ? error.value : error);

/**
 * Runs `work` (a whole transaction, which a lock conflict rolls back) and runs it again, after a
 * short randomized backoff (p-retry), while it loses a lock conflict, up to `policy.attempts` in
 * all. Any other failure, and the last attempt's conflict, is thrown to the caller as it was
 * thrown (whatever its type: see `Carried`): for the caller a conflict that persists is a
 * retryable failure like an outage, never a refusal of the records.
 */
export function retryingLockConflicts<T>(work: () => Promise<T>, policy: LockConflictRetry = LOCK_CONFLICT_RETRY): Promise<T> {
  return pRetry(
    async () => {
      try {
        return await work();
      } catch (error) {
        throw error instanceof Error && !(error instanceof TypeError) ? error : new Carried(error);
      }
    },
    {
      retries: policy.attempts - 1,
      minTimeout: policy.minMs,
      maxTimeout: policy.maxMs,
      factor: 2,
      randomize: true,
      shouldRetry: ({ error }) => isLockConflict(carried(error)),
    },
  ).catch((error: unknown) => {
    throw carried(error);
  });
}

/** A value in the statement cannot be stored (SQLSTATE class 22, "data exception"). */
export function isInvalidValue(error: unknown): boolean {
  return /^22[0-9A-Z]{3}$/.test(fields(error).code);
}

/** Seconds a client is told to wait when the database is unavailable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Seconds a client is told to wait after its request lost a lock conflict (another transaction held the rows). */
export const LOCK_CONFLICT_RETRY_AFTER_SECONDS = 1;

/**
 * The catalogue error for a database failure that reached a request: 503 SERVICE_UNAVAILABLE
 * with Retry-After for an outage and for a lost lock conflict (the transaction was rolled back
 * whole: the same request may succeed when sent again), 400 VALIDATION_FAILED for a value the
 * database cannot store; null for anything else (a bug: the caller answers 500).
 */
export function databaseFailure(error: unknown): SvcError | null {
  if (error instanceof SvcError) return null;
  if (isDatabaseOutage(error)) {
    return new SvcError('SERVICE_UNAVAILABLE', {
      message: 'The database is unavailable; retry after the number of seconds in Retry-After.',
      details: { dependency: 'database' },
      headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
      cause: error,
    });
  }
  if (isLockConflict(error)) {
    return new SvcError('SERVICE_UNAVAILABLE', {
      message: 'The request lost a lock conflict with another transaction and was rolled back; retry after the number of seconds in Retry-After.',
      details: { dependency: 'database', reason: 'lock_conflict' },
      headers: { 'Retry-After': String(LOCK_CONFLICT_RETRY_AFTER_SECONDS) },
      cause: error,
    });
  }
  if (isInvalidValue(error)) {
    return new SvcError('VALIDATION_FAILED', { message: 'A value in the request cannot be stored (out of range or not valid text).', details: { reason: 'value_not_storable' }, cause: error });
  }
  return null;
}
