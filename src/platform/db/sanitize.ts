/**
 * Text that PostgreSQL cannot store, made storable at the one boundary every write crosses.
 *
 * Security posture: PostgreSQL rejects U+0000 in `text` ("invalid byte sequence for encoding
 * UTF8: 0x00") and the JSON escapes `\u0000` and of a lone surrogate (`\ud800`) in `jsonb`
 * ("unsupported Unicode escape sequence"); a lone surrogate in a string also has no UTF-8
 * form, and JCS (the audit chain's and the pins' hashing) refuses it. Any one of them in a
 * single row fails the whole statement, so one hostile request could otherwise make a batched
 * insert (threat events, audit entries) lose every row beside it. Every query parameter passes
 * through `sanitizeParam`: a NUL character or a lone surrogate becomes U+FFFD (the replacement
 * character, so the stored text still shows that something was there), and a JSON document
 * with such an escape is re-serialised with the same replacement. The function is idempotent,
 * so a caller that must hash exactly what is stored (the audit chain) sanitizes first with the
 * same function and the database layer then changes nothing.
 */

export const NUL_REPLACEMENT = '\uFFFD';
const JSON_NUL_ESCAPE = '\\u0000';
/** A JSON escape of a lone surrogate: a high one not followed by a low one, or a low one not after a high one (pairs are valid for jsonb). */
const JSON_SURROGATE_ESCAPE = /\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}/;

/** A string with every NUL and every lone surrogate replaced by U+FFFD; other values unchanged. */
export function sanitizeText(value: string): string {
  const text = value.includes('\0') ? value.replaceAll('\0', NUL_REPLACEMENT) : value;
  return text.isWellFormed() ? text : text.toWellFormed();
}

/** A deep copy of a JSON-like value whose strings (keys and values) hold no NUL and no lone surrogate. */
export function sanitizeJson<T>(value: T): T {
  if (typeof value === 'string') return sanitizeText(value) as T;
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date || Buffer.isBuffer(value) || ArrayBuffer.isView(value)) return value;
  if (Array.isArray(value)) return value.map((item: unknown) => sanitizeJson(item)) as T;
  const copy: Record<string, unknown> = {};
  const source = value as Record<string, unknown>;
  // Object.keys, not Object.entries: the same members in the same order without a [key, value]
  // array per member (a JSON completion's evidence record is copied here; docs/benchmarks.md,
  // "speed-json41 round").
  for (const key of Object.keys(source)) copy[sanitizeText(key)] = sanitizeJson(source[key]);
  return copy as T;
}

/**
 * One query parameter made storable. Strings lose raw NULs and lone surrogates; a string that is
 * a JSON object or array carrying the `\u0000` escape or a surrogate escape is parsed, cleaned
 * and serialised again (the escaped form only matters to jsonb, and only JSON documents start
 * with `{` or `[`).
 */
export function sanitizeParam(value: unknown): unknown {
  if (typeof value === 'string') {
    const text = sanitizeText(value);
    if ((text.includes(JSON_NUL_ESCAPE) || (text.includes('\\u') && JSON_SURROGATE_ESCAPE.test(text))) && (text.startsWith('{') || text.startsWith('['))) {
      try {
        return JSON.stringify(sanitizeJson(JSON.parse(text) as unknown));
      } catch {
        return text;
      }
    }
    return text;
  }
  if (Array.isArray(value)) return value.map(sanitizeParam);
  if (value !== null && typeof value === 'object' && !(value instanceof Date) && !Buffer.isBuffer(value) && !ArrayBuffer.isView(value)) {
    return sanitizeJson(value);
  }
  return value;
}

/** Parameters of one statement made storable; the same array when nothing needed a change. */
export function sanitizeParams(params: readonly unknown[] | undefined): unknown[] | undefined {
  if (params === undefined) return undefined;
  let changed = false;
  const out = params.map((value) => {
    const clean = sanitizeParam(value);
    if (clean !== value) changed = true;
    return clean;
  });
  return changed ? out : (params as unknown[]);
}
