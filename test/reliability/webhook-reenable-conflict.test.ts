/**
 * Re-enabling a paused webhook endpoint releases the deliveries held while it was paused. The
 * route tries the whole change again when it loses a lock conflict (retryingLockConflicts): so the
 * release must belong to the change's transaction. It used to run in a transaction of its own after
 * the change had committed: a lost lock conflict there made the route try again, the second try
 * found the endpoint active already and released nothing, so the held deliveries were never sent,
 * and the re-enable was audited twice (review-37).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { conflictOnce } from '../support/lock-conflicts.ts';

describe('re-enabling a webhook endpoint whose held deliveries lose a lock conflict', () => {
  let context: TestContext;
  beforeAll(async () => {
    context = await createTestApp();
  }, 120_000);
  afterAll(async () => context?.close());

  it('sends the held deliveries again and records the re-enable once', async () => {
    const org = await context.createOrg();
    const call = (method: 'POST' | 'PATCH', url: string, payload: Record<string, unknown>) =>
      context.app.inject({ method, url, headers: { authorization: `Bearer ${org.apiKey}` }, payload });
    const created = await call('POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/held', events: ['threat.blocked'] });
    expect(created.statusCode).toBe(201);
    const endpointId = created.json().id as string;
    expect((await call('PATCH', `/api/v1/webhooks/${endpointId}`, { state: 'paused' })).statusCode).toBe(200);
    // A delivery held while the endpoint is paused (what the deliverer does to a due retry).
    const deliveryId = randomUUID();
    const { db } = context.services;
    await db.withOrg(org.orgId, (tx) =>
      tx.query(`INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event, payload, state, attempts) VALUES ($1, $2, $3, 'threat.blocked', '{}', 'held', 1)`, [
        deliveryId,
        org.orgId,
        endpointId,
      ]),
    );

    // The statement that releases the held deliveries loses one lock conflict (40P01: PostgreSQL
    // rolled its transaction back whole).
    const conflict = conflictOnce(db, org.orgId, /SET state = 'pending'[\s\S]*state = 'held'/);
    let answer;
    try {
      answer = await call('PATCH', `/api/v1/webhooks/${endpointId}`, { state: 'active' });
    } finally {
      conflict.restore();
    }
    expect(conflict.left()).toBe(0);
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ state: 'active' });

    const delivery = (await db.withOrg(org.orgId, (tx) => tx.query<{ state: string }>('SELECT state FROM webhook_deliveries WHERE id = $1', [deliveryId]))).rows[0];
    expect(delivery?.state).not.toBe('held');
    // The pause and the re-enable: one entry each.
    const updates = await context.services.audit.list(org.orgId, { action: 'webhook.update' });
    expect(updates.map((record) => record.details)).toEqual(
      expect.arrayContaining([expect.objectContaining({ state: 'paused' }), expect.objectContaining({ state: 'active' })]),
    );
    expect(updates).toHaveLength(2);
  });
});
