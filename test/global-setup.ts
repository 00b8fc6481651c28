/**
 * Runs once before the suite. On real PostgreSQL (DATABASE_URL set) it applies the migrations
 * once, so test files do not race to migrate. On the embedded default it migrates one PGlite
 * and saves a snapshot of its data directory that every test file restores (~0.5 s) instead of
 * creating and migrating its own (~5 s and ~700 MB each).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, openDatabase, pgliteSnapshot } from '../src/platform/db/index.ts';
import { deriveSecret } from '../src/platform/secrets.ts';
import { TEST_SECRET_KEY } from './helpers/constants.ts';

export default async function setup(): Promise<() => void> {
  const appRolePassword = deriveSecret(TEST_SECRET_KEY, 'svc/db-app-role');
  const url = process.env.DATABASE_URL;
  if (url && /^postgres(ql)?:\/\//.test(url)) {
    const database = await openDatabase({ kind: 'postgres', url, appUrl: null }, { appRolePassword });
    await migrate(database);
    await database.close();
    process.stdout.write(`[svc tests] running against PostgreSQL (${new URL(url).host}) and ${process.env.REDIS_URL ? `Redis (${new URL(process.env.REDIS_URL).host})` : 'the in-memory cache'}\n`);
    return () => undefined;
  }
  const database = await openDatabase({ kind: 'pglite', dir: null }, { appRolePassword });
  await migrate(database);
  const snapshot = await pgliteSnapshot(database);
  await database.close();
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  const path = join(dir, 'pglite-snapshot.tar');
  writeFileSync(path, Buffer.from(await snapshot.arrayBuffer()));
  process.env.SVC_TEST_PGLITE_SNAPSHOT = path;
  process.stdout.write(`[svc tests] running on the embedded defaults (PGlite + in-memory cache)${process.env.REDIS_URL ? ' with Redis' : ''}\n`);
  return () => rmSync(dir, { recursive: true, force: true });
}
