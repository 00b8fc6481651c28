/**
 * The deliverer's writes that lose a lock conflict (40P01 deadlock, 40001 serialization failure)
 * are made again (rel-39; the claim since rel-40). Each is one transaction that PostgreSQL rolls
 * back whole, decided before it runs: the claim that takes the delivery's lease (its conditions are
 * checked afresh on the retry: claimed once, sent once), the attempt's record (attempt row, delivery
 * state, endpoint failure counter) and the hold of a retry whose endpoint is paused. Thrown, the
 * claim ended the job with the delivery pending and unqueued until the sweep; the attempt was lost
 * with the delivery left leased (sent again by the sweep after the lease, although the receiver had
 * confirmed it); the retry was neither held nor queued again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/services.ts';
import type { DeliveryPolicy, Webhooks } from '../../src/webhooks/index.ts';
import { createTestServices, ownPostgresDatabase } from '../helpers/app.ts';
import { createTestOrg } from '../audit/database.ts';
import { conflictOnce as injectConflict } from '../support/lock-conflicts.ts';
import { startReceiver, waitFor, type Receiver } from './receiver.ts';

/** A retry waits a second: time to pause the endpoint first on a loaded machine. */
const POLICY: Partial<DeliveryPolicy> = { baseDelayMs: 1_000, maxDelayMs: 2_000, maxAttempts: 4, timeoutMs: 2_000, pauseAfterExhausted: 3 };

let services: Services;
let webhooks: Webhooks;
let receiver: Receiver;
let database: Awaited<ReturnType<typeof ownPostgresDatabase>>;

beforeAll(async () => {
  // On PostgreSQL a database of its own: another file's svc would re-queue these deliveries.
  database = await ownPostgresDatabase();
  services = await createTestServices({ ...(database === undefined ? {} : { env: { DATABASE_URL: database.url } }), services: { webhooks: { policy: POLICY } } });
  webhooks = services.webhooks;
  webhooks.start();
  receiver = await startReceiver();
}, 120_000);

afterAll(async () => {
  await services?.close();
  await receiver?.close();
  await database?.drop();
});

/** The next statement of `org` matching `statement` loses a lock conflict, once. */
const conflictOnce = (org: string, statement: RegExp) => injectConflict(services.db, org, statement);

async function deliveryRow(id: string) {
  const result = await services.db.query<{ state: string; attempts: number }>('SELECT state, attempts FROM webhook_deliveries WHERE id = $1', [id]);
  return result.rows[0]!;
}

describe('the deliverer losing a lock conflict', () => {
  // Before, the claim's conflict ended the job with the delivery pending and unqueued, sent only
  // when the sweep found it overdue (10 s past due at the earliest); the record's lost the attempt
  // with the delivery left pending under its lease (30 s and more), to be sent again.
  it.each([
    { write: 'claim', statement: /UPDATE webhook_deliveries d SET attempts = d\.attempts \+ 1/, title: 'claims a delivery again when its claim loses a lock conflict, and sends it once' },
    { write: 'record', statement: /INSERT INTO webhook_attempts/, title: 'records a confirmed attempt once when its record loses a lock conflict, without sending it again' },
  ])('$title', async ({ write, statement }) => {
    const path = `/${write}`;
    receiver.on(path, { status: 200 });
    const orgId = await createTestOrg(services.db);
    const { id } = await webhooks.create(orgId, { url: receiver.url(path), events: ['threat.blocked'] });
    const conflict = conflictOnce(orgId, statement);
    try {
      const { deliveries } = await webhooks.emit(orgId, 'threat.blocked', { request_id: `req-${write}`, threat_score: 0.95, decision: 'block' });
      const row = await waitFor(async () => {
        const current = await deliveryRow(deliveries[0]!);
        return current.state === 'confirmed' ? current : undefined;
      }, 8_000);
      expect(conflict.left()).toBe(0);
      expect(row.attempts).toBe(1);
    } finally {
      conflict.restore();
    }
    expect(receiver.received(path)).toHaveLength(1);
    const summary = await webhooks.failureSummary(orgId, id);
    expect(summary.counts['2xx']).toBe(1);
    expect(summary.deliveries).toMatchObject({ confirmed: 1, pending: 0 });
  });

  it('holds a retry whose endpoint was paused when the hold loses a lock conflict, and sends it after re-enable', async () => {
    receiver.on('/hold', { status: 503 }, { status: 200 });
    const orgId = await createTestOrg(services.db);
    const { id } = await webhooks.create(orgId, { url: receiver.url('/hold'), events: ['threat.blocked'] });
    const { deliveries } = await webhooks.emit(orgId, 'threat.blocked', { request_id: 'req-hold', threat_score: 0.95, decision: 'block' });
    const deliveryId = deliveries[0]!;
    await waitFor(async () => ((await deliveryRow(deliveryId)).attempts === 1 && receiver.received('/hold').length === 1 ? true : undefined));
    const conflict = conflictOnce(orgId, /FOR SHARE OF e/);
    try {
      await webhooks.update(orgId, id, { state: 'paused' });
      // Before: the hold was thrown away with its transaction, the delivery left pending until the sweep.
      await waitFor(async () => ((await deliveryRow(deliveryId)).state === 'held' ? true : undefined), 8_000);
      expect(conflict.left()).toBe(0);
    } finally {
      conflict.restore();
    }
    await webhooks.update(orgId, id, { state: 'active' });
    const settled = await waitFor(async () => {
      const current = await deliveryRow(deliveryId);
      return current.state === 'confirmed' ? current : undefined;
    }, 8_000);
    expect(settled.attempts).toBe(2);
    expect(receiver.received('/hold')).toHaveLength(2);
  });
});
