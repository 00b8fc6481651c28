/**
 * JSON-lines logger (pino). Posture: secrets never reach a log line — redaction paths are fixed
 * here, at creation, and cover credentials wherever they appear in logged objects.
 *
 * Request log lines carry exactly the spec's fields: level, time, request_id, org_id,
 * gateway_id, method, path, status, duration_ms, threat_score, decision, pattern
 * (see `requestLogLine`). Other lines carry level, time and msg plus context.
 */
import { pino, type Logger, type DestinationStream } from 'pino';
import type { LogLevel } from './config.ts';

export type { Logger };

const PINO_LEVEL: Record<LogLevel, string> = { debug: 'debug', info: 'info', warning: 'warn', error: 'error' };

export const REDACT_PATHS = [
  'api_key',
  'key',
  'secret',
  'password',
  'token',
  'authorization',
  '*.api_key',
  '*.key',
  '*.secret',
  '*.password',
  '*.token',
  '*.authorization',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
];

/**
 * Standard output, buffered: lines are written in batches of ≥ 4 KiB or every 200 ms, whichever
 * comes first (one write per request line cost a syscall each). `logger.flush()` on shutdown.
 */
export function stdoutDestination(): DestinationStream {
  return pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 200 });
}

const LEVEL_LABELS: Readonly<Record<string, { level: string }>> = Object.freeze({
  trace: { level: 'trace' },
  debug: { level: 'debug' },
  info: { level: 'info' },
  warn: { level: 'warning' },
  error: { level: 'error' },
  fatal: { level: 'fatal' },
});

/** pino level labels as svc logs them ('warn' is written 'warning'); constant objects, no allocation per line. */
const levelLabel = (label: string): { level: string } => LEVEL_LABELS[label] ?? { level: label };

export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level: PINO_LEVEL[level],
      base: null,
      messageKey: 'msg',
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: levelLabel },
    },
    destination ?? stdoutDestination(),
  );
}

let stampedAt = -1;
let stamp = '';
let secondAt = -1;
let secondPrefix = '';

/**
 * `,"time":"<ISO>"` as pino's isoTime writes it. Under load nearly every request falls in a new
 * millisecond, so the date and time are formatted once per second and only the milliseconds per line.
 */
export function cachedIsoTime(now = Date.now()): string {
  if (now !== stampedAt) {
    stampedAt = now;
    const milliseconds = now % 1000;
    const second = now - milliseconds;
    if (second !== secondAt) {
      secondAt = second;
      secondPrefix = `,"time":"${new Date(second).toISOString().slice(0, 20)}`;
    }
    stamp = `${secondPrefix}${milliseconds < 10 ? '00' : milliseconds < 100 ? '0' : ''}${milliseconds}Z"`;
  }
  return stamp;
}

/** Writes the one line per request (info level). */
export interface RequestLog {
  write(fields: RequestLogFields): void;
  /** Hands lines still held back to the destination (shutdown; the destination's own flush follows). */
  flush(): void;
}

/** Request lines are handed to the destination in chunks of about this size, or after REQUEST_LOG_HOLD_MS. */
const REQUEST_LOG_CHUNK_CHARS = 16_384;
const REQUEST_LOG_HOLD_MS = 50;

/**
 * The request-line writer: same destination, level and line format as the pino logger
 * (`{"level":"info","time":…,<fields>}`), built with one JSON.stringify. Its lines carry only
 * the fixed fields of `RequestLogFields` (ids, method, route path, status, numbers), never
 * headers, bodies or other user objects, so there is nothing to redact; a pino line with its
 * generic serializer cost ~9 µs, this one ~2 µs, on every request. Lines are handed to the
 * destination in chunks (≈ 16 KiB or every 50 ms): the destination measures the bytes of its
 * pending buffer on every write, which per line cost more than building the line.
 */
export function createRequestLog(level: LogLevel, destination: DestinationStream): RequestLog {
  const enabled = level === 'debug' || level === 'info';
  let pending = '';
  let timer: NodeJS.Timeout | null = null;
  const flush = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (pending === '') return;
    const chunk = pending;
    pending = '';
    destination.write(chunk);
  };
  return {
    write(fields) {
      if (!enabled) return;
      pending += `{"level":"info"${cachedIsoTime()},${JSON.stringify(fields).slice(1)}\n`;
      if (pending.length >= REQUEST_LOG_CHUNK_CHARS) flush();
      else if (timer === null) {
        timer = setTimeout(flush, REQUEST_LOG_HOLD_MS);
        timer.unref();
      }
    },
    flush,
  };
}

export interface RequestLogFields {
  request_id: string;
  org_id: string | null;
  gateway_id: string | null;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  threat_score: number | null;
  decision: string | null;
  pattern: string | null;
}
