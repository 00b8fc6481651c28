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

/**
 * The request-line logger: same destination and level, no redaction. Its lines are built only
 * from the fixed fields of `RequestLogFields` (ids, method, route path, status, numbers), never
 * from headers, bodies or other user objects, so there is nothing to redact — and redaction
 * was the largest single cost of a request line.
 */
let stampedAt = -1;
let stamp = '';

/** pino's isoTime, formatted once per millisecond (the request line is written for every request). */
function cachedIsoTime(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}


export function createRequestLogger(level: LogLevel, destination: DestinationStream): Logger {
  return pino(
    {
      level: PINO_LEVEL[level],
      base: null,
      timestamp: cachedIsoTime,
      formatters: { level: levelLabel },
    },
    destination,
  );
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
