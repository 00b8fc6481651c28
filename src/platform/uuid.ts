/**
 * The one check for "is this text a UUID" that stores, the CLI and the database layer run before
 * an id reaches SQL. Accepted: 8-4-4-4-12 hex digits, either case, anchored at both ends; the
 * version and variant nibbles are not checked, so every id the service issues (`randomUUID()`,
 * PostgreSQL `gen_random_uuid()`, the hash-derived ids of `uuidFromText` and `md5(…)::uuid`) passes, and so do ids a
 * client brings from elsewhere. The pattern is linear (fixed-width classes, no nesting), and an
 * id that passes can be spliced into a SQL literal: it holds no quote, backslash or newline.
 */

/** The pattern as a JSON Schema `pattern` string (schemas take a string, not a RegExp). */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

const UUID = new RegExp(UUID_PATTERN);

/** Whether `value` is a UUID in the 8-4-4-4-12 hex form, either case. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
