/**
 * Evidence written twice is stored once (issue #33, item 1): a record the outbox hands over again
 * after a crash — from a journal segment or a spool file — carries the id it got when it was
 * produced, and the writers skip an id already stored. A threat event row, an audit entry and a
 * webhook event's deliveries are each written twice here; each must exist once.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRows, type ThreatEventRow } from '../../src/detection/events.ts';
import type { Services } from '../../src/services.ts';
import { createTestServices } from '../helpers/app.ts';
import { createTestOrg } from '../audit/database.ts';

let services: Services;

beforeAll(async () => {
  services = await createTestServices();
});

afterAll(async () => {
  await services?.close();
});

describe('evidence written again after a crash', () => {
  it('stores a threat event once when its row is written again', async () => {
    const orgId = await createTestOrg(services.db);
    const row: ThreatEventRow = {
      id: randomUUID(), orgId, requestId: 'req-twice', pillar: 'api_security', kind: 'prompt', threatScore: 0.97, decision: 'block',
      patterns: [{ id: 'pi.ignore', name: 'ignore', confidence: 0.9 }], sessionId: null, gatewayId: null, details: {},
    };
    await insertRows(services.db, orgId, [row]);
    await insertRows(services.db, orgId, [row, { ...row, id: randomUUID(), requestId: 'req-other' }]);
    const stored = await services.db.withOrg(orgId, (tx) => tx.query<{ request_id: string }>('SELECT request_id FROM threat_events ORDER BY request_id'));
    expect(stored.rows.map((entry) => entry.request_id)).toEqual(['req-other', 'req-twice']);
  });

  it('chains an audit entry once when it is appended again with its id, and the chain still verifies', async () => {
    const orgId = await createTestOrg(services.db);
    const entry = (target: string) => ({ id: randomUUID(), actor: 'system:response-policy', action: 'threat.blocked', target, outcome: 'blocked' });
    const first = entry('req-1');
    const second = entry('req-2');
    expect(await services.audit.appendMany(orgId, [first, second])).toHaveLength(2);
    // A replay of both, with a new entry between them and the first one twice in the batch.
    const appended = await services.audit.appendMany(orgId, [first, entry('req-3'), second, first]);
    expect(appended.map((record) => [record.seq, record.target])).toEqual([[3, 'req-3']]);
    expect(await services.audit.append(orgId, second)).toBeNull();
    const chain = await services.audit.list(orgId);
    expect(chain.map((record) => record.target)).toEqual(['req-3', 'req-2', 'req-1']);
    expect(await services.audit.verify(orgId)).toEqual({ ok: true, checked: 3, first_bad: null });
  });

  it('creates one delivery per endpoint, under the same id, when a webhook event is emitted again with its id', async () => {
    const orgId = await createTestOrg(services.db);
    // Nothing listens there: the delivery stays pending, which is all this test looks at.
    await services.webhooks.create(orgId, { url: 'http://127.0.0.1:9/first', events: ['threat.blocked'] });
    await services.webhooks.create(orgId, { url: 'http://127.0.0.1:9/second', events: ['threat.blocked'] });
    const eventId = randomUUID();
    const data = { request_id: 'req-webhook', threat_score: 0.97, decision: 'block' };
    const first = await services.webhooks.emit(orgId, 'threat.blocked', data, { eventId });
    const again = await services.webhooks.emit(orgId, 'threat.blocked', data, { eventId });
    const other = await services.webhooks.emit(orgId, 'threat.blocked', data);
    expect(first.deliveries).toHaveLength(2);
    expect(again.deliveries).toEqual([]);
    expect(other.deliveries).toHaveLength(2);
    const stored = await services.db.withOrg(orgId, (tx) => tx.query<{ id: string }>('SELECT id::text FROM webhook_deliveries'));
    expect(stored.rows.map((row) => row.id).sort()).toEqual([...first.deliveries, ...other.deliveries].sort());
  });
});
