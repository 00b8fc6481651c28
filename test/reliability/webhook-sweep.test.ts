/**
 * Item 4 of issue #14: a pending delivery whose queue job was lost (Redis lost its data) sat
 * past due until a restart. The periodic sweep now re-enqueues it, once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Webhooks } from '../../src/webhooks/index.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { startReceiver, waitFor, type Receiver } from '../webhooks/receiver.ts';

let context: TestContext;
let receiver: Receiver;
let webhooks: Webhooks;

beforeAll(async () => {
  receiver = await startReceiver();
  context = await createTestApp();
  webhooks = context.services.webhooks;
});
afterAll(async () => {
  await context.close();
  await receiver.close();
});

describe('the pending-delivery sweep', () => {
  it('delivers a pending delivery whose queue job was lost, without a restart, exactly once', async () => {
    receiver.on('/swept', { status: 200 });
    const { orgId } = await context.createOrg();
    const endpoint = await webhooks.create(orgId, { url: receiver.url('/swept'), events: ['threat.blocked'] });
    // A delivery row as emit() writes it, whose job never reached (or vanished from) the queue.
    const overdue = new Date(Date.now() - 60_000).toISOString();
    const inserted = await context.services.db.withOrg(orgId, (tx) =>
      tx.query<{ id: string }>(
        `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event, payload, state, next_attempt_at)
         VALUES (gen_random_uuid(), $1, $2, 'threat.blocked', $3, 'pending', $4) RETURNING id::text`,
        [orgId, endpoint.id, JSON.stringify({ type: 'threat.blocked', data: { request_id: 'lost-job' } }), overdue],
      ),
    );
    const deliveryId = inserted.rows[0]!.id;
    webhooks.sweepEvery(200);
    await waitFor(() => (receiver.received('/swept').length >= 1 ? true : undefined), 10_000);
    // Several more sweeps run meanwhile: none of them sends it again.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(receiver.received('/swept').filter((entry) => entry.headers['x-svc-delivery'] === deliveryId)).toHaveLength(1);
    const state = await context.services.db.withOrg(orgId, (tx) => tx.query<{ state: string }>('SELECT state FROM webhook_deliveries WHERE id = $1', [deliveryId]));
    expect(state.rows[0]?.state).toBe('confirmed');
  });

  it('leaves a delivery that is not yet overdue to its own job', async () => {
    const { orgId } = await context.createOrg();
    const endpoint = await webhooks.create(orgId, { url: receiver.url('/later'), events: ['threat.blocked'] });
    await context.services.db.withOrg(orgId, (tx) =>
      tx.query(
        `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event, payload, state, next_attempt_at)
         VALUES (gen_random_uuid(), $1, $2, 'threat.blocked', '{}', 'pending', $3)`,
        [orgId, endpoint.id, new Date(Date.now() + 60_000).toISOString()],
      ),
    );
    expect(await webhooks.sweep(new Date())).toBe(0);
  });
});
