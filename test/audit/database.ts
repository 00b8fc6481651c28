/**
 * A migrated database for the audit and webhook tests: real PostgreSQL when DATABASE_URL is a
 * postgres:// URL, otherwise an in-memory PGlite (one per test file; creating it takes seconds).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { migrate, openDatabase, type Database } from '../../src/platform/db/index.ts';

export const TEST_SECRET_KEY = 'test-secret-key-0123456789-abcdefghijklmnop';

export async function openTestDatabase(): Promise<Database> {
  const url = process.env.DATABASE_URL;
  const database =
    url !== undefined && /^postgres(ql)?:\/\//.test(url)
      ? await openDatabase({ kind: 'postgres', url, appUrl: null }, { appRolePassword: 'svc-test-app-role-password' })
      : await openDatabase({ kind: 'pglite', dir: null }, { appRolePassword: 'unused' });
  await migrate(database);
  return database;
}

export async function createTestOrg(database: Database): Promise<string> {
  const id = randomUUID();
  const tag = randomBytes(8).toString('hex').slice(0, 8);
  await database.query(`INSERT INTO orgs (id, tag, name, plan) VALUES ($1, $2, $3, 'pro')`, [id, tag, `org ${tag}`]);
  return id;
}
