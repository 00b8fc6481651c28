/**
 * The error every failed statement surfaces as: the statement and the error code, never a
 * parameter value.
 *
 * Security posture: svc's parameters carry key hashes, provider-key ciphertext, org names,
 * e-mail addresses and prompt text. PGlite attaches the statement's `params` (and
 * `queryOptions`) to the error it throws, PostgreSQL's `detail` repeats stored values ("Key
 * (email)=(…) already exists", "Failing row contains (…)"), and class 22 messages quote the
 * offending input (`invalid input syntax for type uuid: "…"`). Any of them reached the logs
 * through pino's error serializer, which copies every enumerable property. So the database
 * layer rethrows each failure as a `DatabaseQueryError` built from an allow-list: the
 * statement (whitespace collapsed, bounded), the SQLSTATE or errno `code`, severity and the
 * schema names PostgreSQL reports (table, column, constraint, data type), and a message from
 * which every parameter's text and every quoted input value is removed. The original error is
 * kept as `cause` only when it came from the driver or the network rather than the server (a
 * refused connection, a closed pool): those carry no parameter, and outage detection
 * (failures.ts) still reads their codes through the cause chain.
 */

const STATEMENT_MAX_CHARS = 2_000;
/** Parameter text shorter than this is not searched for in messages (it would blank ordinary words). */
const MIN_REDACTED_CHARS = 4;
const REDACTED = '[redacted]';
const SCHEMA_FIELDS = ['severity', 'schema', 'table', 'column', 'constraint', 'dataType', 'routine'] as const;

type SchemaField = (typeof SCHEMA_FIELDS)[number];

export class DatabaseQueryError extends Error {
  override readonly name = 'DatabaseQueryError';
  /** SQLSTATE (server errors) or the driver's errno / code string; '' when none. */
  readonly code: string;
  /** The failing statement's text (parameters are `$n` placeholders; their values are never kept). */
  readonly statement: string;
  readonly severity?: string;
  readonly schema?: string;
  readonly table?: string;
  readonly column?: string;
  readonly constraint?: string;
  readonly dataType?: string;
  readonly routine?: string;

  constructor(message: string, code: string, statement: string, fields: Partial<Record<SchemaField, string>>, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
    this.statement = statement;
    for (const field of SCHEMA_FIELDS) {
      const value = fields[field];
      if (value !== undefined) (this as Record<SchemaField, string | undefined>)[field] = value;
    }
  }
}

/** True for an error the database server reported (it has a five-character SQLSTATE). */
function isServerError(error: object): boolean {
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && (typeof severity === 'string' || 'position' in error || 'routine' in error);
}

function parameterTexts(params: readonly unknown[] | undefined): string[] {
  const texts: string[] = [];
  for (const param of params ?? []) {
    if (param === null || param === undefined) continue;
    let text: string;
    if (typeof param === 'string') text = param;
    else if (typeof param === 'number' || typeof param === 'bigint' || typeof param === 'boolean') text = String(param);
    else if (Buffer.isBuffer(param)) text = param.toString('utf8');
    else if (param instanceof Date) text = param.toISOString();
    else {
      try {
        text = JSON.stringify(param);
      } catch {
        continue;
      }
    }
    if (text.length >= MIN_REDACTED_CHARS) texts.push(text);
    // A JSON document's string members may be quoted back on their own.
    if (typeof param === 'object' && !(param instanceof Date) && !Buffer.isBuffer(param)) collectStrings(param, texts, 0);
  }
  return texts.sort((a, b) => b.length - a.length);
}

function collectStrings(value: unknown, into: string[], depth: number): void {
  if (depth > 8 || into.length > 1_000) return;
  if (typeof value === 'string') {
    if (value.length >= MIN_REDACTED_CHARS) into.push(value);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const item of Array.isArray(value) ? value : Object.values(value as Record<string, unknown>)) collectStrings(item, into, depth + 1);
}

/** The message without parameter text and without the quoted input of a data exception. */
export function redactMessage(message: string, code: string, params: readonly unknown[] | undefined): string {
  let out = message;
  for (const text of parameterTexts(params)) if (out.includes(text)) out = out.split(text).join(REDACTED);
  // Class 22 (data exception) and 23 (integrity) messages quote the value after a colon.
  if (/^2[23]/.test(code)) out = out.replace(/: "(?:[^"\\]|\\.)*"?$/su, `: "${REDACTED}"`);
  return out;
}

function statementText(sql: string): string {
  const collapsed = sql.replace(/\s+/g, ' ').trim();
  return collapsed.length > STATEMENT_MAX_CHARS ? `${collapsed.slice(0, STATEMENT_MAX_CHARS)}…` : collapsed;
}

/**
 * The error to throw for `error`, raised by `sql` run with `params`. Idempotent: a
 * DatabaseQueryError passes through unchanged (nested wrappers, transactions).
 */
export function toQueryError(error: unknown, sql: string, params?: readonly unknown[]): unknown {
  if (error instanceof DatabaseQueryError) return error;
  if (typeof error !== 'object' || error === null) return new DatabaseQueryError(redactMessage(String(error), '', params), '', statementText(sql), {});
  const source = error as Record<string, unknown>;
  const code = typeof source.code === 'string' ? source.code : typeof source.errno === 'string' ? source.errno : '';
  const message = redactMessage(typeof source.message === 'string' ? source.message : String(error), code, params);
  const fields: Partial<Record<SchemaField, string>> = {};
  for (const field of SCHEMA_FIELDS) {
    const value = source[field];
    if (typeof value === 'string') fields[field] = value;
  }
  if (isServerError(error)) return new DatabaseQueryError(message, code, statementText(sql), fields);
  // Driver and network failures carry no parameter; keep them as the cause for outage detection.
  return new DatabaseQueryError(message, code, statementText(sql), fields, stripParameters(error));
}

/** The same error object without the properties that drivers use to attach parameters. */
function stripParameters(error: object): object {
  for (const name of ['params', 'parameters', 'values', 'queryOptions', 'detail', 'where', 'internalQuery']) {
    if (Object.prototype.hasOwnProperty.call(error, name)) {
      try {
        delete (error as Record<string, unknown>)[name];
      } catch {
        // frozen: leave it (never the case for driver errors)
      }
    }
  }
  return error;
}

/**
 * What a transaction rethrows: errors of its own statements are already DatabaseQueryErrors and
 * the callback's own errors (SvcError, …) pass unchanged; only a server error raised by
 * BEGIN/COMMIT/ROLLBACK themselves is converted.
 */
export function fromTransaction(error: unknown): unknown {
  if (error instanceof DatabaseQueryError || typeof error !== 'object' || error === null) return error;
  if (!isServerError(error) && !Object.prototype.hasOwnProperty.call(error, 'params')) return error;
  const statement = (error as { query?: unknown }).query;
  return toQueryError(error, typeof statement === 'string' ? statement : 'COMMIT');
}
