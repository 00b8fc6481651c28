/**
 * Issue #14 item 9: database errors were logged with their SQL parameters (PGlite attaches
 * `params` to its errors; PostgreSQL quotes input in messages and `detail`), so key hashes,
 * ciphertext and org names reached the logs. Every logged database error now carries the
 * statement and the error code, never a parameter value. Runs on PGlite, and on PostgreSQL
 * when DATABASE_URL is set (CI).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, memoryLog, usingPostgres, type TestContext } from '../helpers/app.ts';

const SECRET = 'sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0-ciphertext';

let context: TestContext | undefined;
afterEach(async () => {
  await context?.close();
  context = undefined;
});

const errorLines = (lines: string[]) => lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.level === 'error');

describe('database errors in the logs', () => {
  it('logs a failed statement with its text and SQLSTATE but without the parameter values', async () => {
    const log = memoryLog();
    context = await createTestApp({ logDestination: log.destination });
    const { services } = context;
    // A uuid column compared with a secret-looking text: 22P02, whose message quotes the input.
    const failed = await services.db.query('SELECT id FROM orgs WHERE id = $1', [SECRET]).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failed).not.toBeNull();
    services.logger.error({ err: failed }, 'lookup failed');
    services.logger.flush();
    const lines = errorLines(log.lines);
    expect(lines).toHaveLength(1);
    const err = lines[0]!.err as Record<string, unknown>;
    expect(err.code).toBe('22P02');
    expect(err.statement).toBe('SELECT id FROM orgs WHERE id = $1');
    expect(log.lines.join('\n')).not.toContain(SECRET);
    expect(log.lines.join('\n')).not.toContain('9f8e7d6c5b4a');
  });

  // Renames a table: only on the per-test PGlite (on PostgreSQL the database is shared with test files running beside it).
  it.skipIf(usingPostgres)('keeps the API key hash out of the log when the key lookup fails inside a request', async () => {
    const log = memoryLog();
    context = await createTestApp({ logDestination: log.destination });
    const { services, app } = context;
    const { orgId, apiKey } = await context.createOrg({ name: 'Confidential Org Name' });
    const { rows } = await services.db.query<{ key_hash: string }>('SELECT key_hash FROM api_keys WHERE org_id = $1', [orgId]);
    const keyHash = rows[0]!.key_hash;
    // The table the lookup reads is gone: the lookup by hash fails with 42P01 inside a request.
    await services.db.exec('ALTER TABLE api_keys RENAME TO api_keys_moved');
    try {
      const response = await app.inject({ method: 'GET', url: '/api/v1/gateway/budget', headers: { authorization: `Bearer ${apiKey}` } });
      expect(response.statusCode).toBe(500);
    } finally {
      await services.db.exec('ALTER TABLE api_keys_moved RENAME TO api_keys');
    }
    services.logger.flush();
    const lines = errorLines(log.lines);
    const failure = lines.find((line) => (line.err as { statement?: string } | undefined)?.statement?.includes('k.key_hash = $1'));
    expect(failure, 'the failed lookup is logged with its statement').toBeDefined();
    expect((failure!.err as { code?: string }).code).toBe('42P01');
    const text = log.lines.join('\n');
    expect(text).not.toContain(keyHash);
    expect(text).not.toContain(apiKey);
  });

  it('logs a unique violation without the duplicated value', async () => {
    const log = memoryLog();
    context = await createTestApp({ logDestination: log.destination });
    const { services } = context;
    const { orgId } = await context.createOrg();
    const email = `owner-${randomUUID()}-${SECRET}@example.com`;
    const insert = () =>
      services.db.query(
        `INSERT INTO users (id, org_id, email, password_hash, role) VALUES (gen_random_uuid(), $1, $2, $3, 'admin')`,
        [orgId, email, `scrypt$${SECRET}`],
      );
    await insert();
    const failed = await insert().then(
      () => null,
      (error: unknown) => error,
    );
    expect((failed as { code?: string } | null)?.code).toBe('23505');
    services.logger.error({ err: failed }, 'insert failed');
    services.logger.flush();
    expect(errorLines(log.lines)).toHaveLength(1);
    expect(log.lines.join('\n')).not.toContain(SECRET);
  });
});
