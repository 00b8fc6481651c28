/** Test fixtures shared by the audit and webhook tests (services from the suite's helpers). */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Database } from '../../src/platform/db/index.ts';
import { createLogger, type Logger } from '../../src/platform/logger.ts';

export async function createTestOrg(database: Database): Promise<string> {
  const id = randomUUID();
  const tag = randomBytes(8).toString('hex').slice(0, 8);
  await database.query(`INSERT INTO orgs (id, tag, name, plan) VALUES ($1, $2, $3, 'pro')`, [id, tag, `org ${tag}`]);
  return id;
}

/** A logger whose JSON lines stay in memory. */
export function memoryLogger(level: 'debug' | 'info' | 'warning' | 'error' = 'info'): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  return { logger: createLogger(level, { write: (line: string) => void lines.push(line) }), lines };
}
