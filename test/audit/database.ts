/** Test fixtures shared by the audit and webhook tests (services from the suite's helpers). */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Database } from '../../src/platform/db/index.ts';

export async function createTestOrg(database: Database): Promise<string> {
  const id = randomUUID();
  const tag = randomBytes(8).toString('hex').slice(0, 8);
  await database.query(`INSERT INTO orgs (id, tag, name, plan) VALUES ($1, $2, $3, 'pro')`, [id, tag, `org ${tag}`]);
  return id;
}
