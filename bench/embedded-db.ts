/**
 * A throwaway embedded (PGlite) database for the benches that time the engine itself
 * (evidence-roundtrips.ts, evidence-copy.ts): a fresh cluster in a temporary folder, migrated,
 * handed over with its PGlite instance so that a bench can send transactions straight to the
 * engine, past svc's Database wrapper.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { migrate, openDatabase, type Database } from '../src/platform/db/index.ts';

export interface EmbeddedBenchDatabase {
  /** svc's Database over the cluster (migrations applied, role passwords set). */
  db: Database;
  /** The engine itself, for `pglite.transaction(…)` without svc's org set-up. */
  pglite: PGlite;
}

/**
 * Runs `body` on a fresh, migrated embedded database in a temporary folder `svc-bench-<name>-…`,
 * then closes it and removes the folder, also when `body` or the opening throws.
 */
export async function withEmbeddedDatabase<T>(name: string, body: (database: EmbeddedBenchDatabase) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), `svc-bench-${name}-`));
  try {
    const db = await openDatabase({ kind: 'pglite', dir }, { appRolePassword: 'bench' });
    try {
      await migrate(db);
      return await body({ db, pglite: (db as unknown as { instance: PGlite }).instance });
    } finally {
      await db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
