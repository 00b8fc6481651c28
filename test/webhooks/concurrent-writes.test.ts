/**
 * Webhook deliveries written by several writers at once (mend-34, as the usage counters in
 * test/gateway/usage-history.test.ts). The outbox's writer turns one org's spooled events into
 * deliveries, one per event and endpoint, in one `INSERT … ON CONFLICT DO NOTHING`. Two such
 * statements that insert the same new delivery ids in opposite orders each wait on a row the
 * other inserted: PostgreSQL rolls one back with "deadlock detected". The rows are written in id
 * order, so concurrent writers wait for each other instead. PGlite has one connection and runs
 * the statements one after the other, so that test runs only on PostgreSQL (DATABASE_URL). A
 * statement a lock conflict still rolls back loses nothing: the event is spooled and written by
 * the outbox's next replay (both databases).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Queryable } from '../../src/platform/db/index.ts';
import { createEventBus } from '../../src/platform/events.ts';
import { InProcessQueue, type JobQueue } from '../../src/platform/queue.ts';
import { createOutbox, type Outbox, type OutboxHandler } from '../../src/platform/outbox.ts';
import type { Services } from '../../src/services.ts';
import { createWebhooks } from '../../src/webhooks/index.ts';
import { createTestServices, ownPostgresDatabase } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';
import { createTestOrg, memoryLogger } from '../audit/database.ts';

const onPostgres = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== '';
const ENDPOINTS = 6;
/** Larger than the outbox's batches of 100: long statements overlap on every run (with 100 events, six endpoints, they did not always). */
const EVENTS = 400;
const WRITERS = 8;
const ROUNDS = 4;

let services: Services;

let database: Awaited<ReturnType<typeof ownPostgresDatabase>>;
const directory = mkdtempSync(join(tmpdir(), 'svc-webhook-writes-'));

beforeAll(async () => {
  // On PostgreSQL a database of its own: the thousands of pending deliveries written here would be re-queued and sent by
  // every other file's svc that starts on the shared one.
  database = await ownPostgresDatabase();
  services = await createTestServices(database === undefined ? {} : { env: { DATABASE_URL: database.url } });
});

afterAll(async () => {
  await services?.close();
  await database?.drop();
  rmSync(directory, { recursive: true, force: true });
});

describe('webhook deliveries written by several writers at once', () => {
  it.skipIf(!onPostgres)('writes every delivery once when concurrent batches share events in opposite orders', async () => {
    // The outbox's writer for webhook events, taken as the webhooks service registers it; no worker takes its jobs.
    const handlers = new Map<string, OutboxHandler>();
    const outbox = { register: (kind: string, handler: OutboxHandler) => void handlers.set(kind, handler) } as unknown as Outbox;
    const queue = new InProcessQueue();
    const webhooks = createWebhooks({ config: services.config, db: services.db, queue, logger: memoryLogger().logger, outbox });
    const write = handlers.get('webhook_event')!;
    expect(write).toBeDefined();
    const orgId = await createTestOrg(services.db);
    for (let index = 0; index < ENDPOINTS; index++) await webhooks.create(orgId, { url: `http://127.0.0.1:9/hook-${index}`, events: ['threat.blocked'] });
    for (let round = 0; round < ROUNDS; round++) {
      // New events each round: a delivery already stored is skipped without a wait.
      const events = Array.from({ length: EVENTS }, (_, index) => ({
        id: randomUUID(), orgId, event: 'threat.blocked', gatewayId: null, at: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString(),
        data: { request_id: `req-${round}-${index}`, threat_score: 0.95, decision: 'block' },
      }));
      const outcomes = await Promise.allSettled(Array.from({ length: WRITERS }, (_, writer) => write(writer % 2 === 0 ? events : [...events].reverse())));
      expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
    }
    const stored = await services.db.withOrg(orgId, (tx) => tx.query<{ count: string; distinct: string }>('SELECT count(*)::text AS count, count(DISTINCT id)::text AS distinct FROM webhook_deliveries'));
    expect(stored.rows).toEqual([{ count: String(ROUNDS * EVENTS * ENDPOINTS), distinct: String(ROUNDS * EVENTS * ENDPOINTS) }]);
    await webhooks.close();
    await queue.close();
  });
});

describe('webhook deliveries a lock conflict rolled back', () => {
  it('spools the event and writes its deliveries with the next replay instead of losing them', async () => {
    // The database as it is, except that the next insert of deliveries loses a lock conflict (SQLSTATE 40P01).
    let conflicts = 1;
    const conflicted = (tx: Queryable): Queryable => ({
      ...tx,
      query: (sql, params) => {
        if (conflicts > 0 && sql.includes('INSERT INTO webhook_deliveries')) {
          conflicts -= 1;
          return Promise.reject(Object.assign(new Error('deadlock detected'), { code: '40P01' }));
        }
        return tx.query(sql, params);
      },
      exec: (sql) => tx.exec(sql),
    });
    const base = services.db;
    const db: Database = {
      kind: base.kind,
      query: (sql, params) => base.query(sql, params),
      exec: (sql) => base.exec(sql),
      transaction: (fn) => base.transaction(fn),
      withOrg: (orgId, fn) => base.withOrg(orgId, (tx) => fn(conflicted(tx))),
      poolSize: () => base.poolSize(),
      close: async () => undefined,
    };
    const { logger } = memoryLogger('error');
    const outbox = createOutbox({ dir: join(directory, 'spool'), logger });
    const events = createEventBus(logger);
    // No worker takes the delivery jobs: the rows are what this test reads.
    const queue = { register: () => undefined, enqueue: async () => undefined, close: async () => undefined } as unknown as JobQueue;
    const webhooks = createWebhooks({ config: services.config, db, queue, logger, events, outbox });
    webhooks.start();
    const orgId = await createTestOrg(services.db);
    await webhooks.create(orgId, { url: 'http://127.0.0.1:9/first', events: ['threat.blocked'] });
    await webhooks.create(orgId, { url: 'http://127.0.0.1:9/second', events: ['threat.blocked'] });
    await events.emit(orgId, 'threat.blocked', { request_id: 'req-conflict', threat_score: 0.97, decision: 'block' });
    await waitFor(() => (outbox.pending() > 0 ? true : undefined));
    expect(conflicts).toBe(0);
    expect(await outbox.replay()).toBe(1);
    const stored = await services.db.withOrg(orgId, (tx) => tx.query<{ event: string }>('SELECT event FROM webhook_deliveries'));
    expect(stored.rows).toEqual([{ event: 'threat.blocked' }, { event: 'threat.blocked' }]);
    await webhooks.close();
    await outbox.close();
  });
});
