/**
 * Threat events recorded once the database is back, while events an outage spooled still wait for
 * the outbox's next replay, queue behind them (as block audit entries and provenance records do):
 * they are stored after the older events, so the threats listing never shows an event as older
 * than one that happened before it. Before mend-rel-35 the writer inserted them at once, and the
 * replay then stored the older events after them.
 */
import { describe, expect, it } from 'vitest';
import { createEventWriter } from '../../src/detection/events.ts';
import { databaseOutage, failingDb, outageTestbed, quietLogger as logger, sleep, switchedDatabase, threatEventKeys, threatRow as row } from './failing-stores.ts';

const testbed = outageTestbed('svc-spool-order-');

describe('threat events recorded after an outage, before the spool is replayed', () => {
  it('are stored after the events the outage spooled', async () => {
    const outbox = testbed.outbox('stand-in');
    const { db, stored } = failingDb({ conflicts: 1, failure: databaseOutage, keys: threatEventKeys }); // the first batch meets the outage
    const writer = createEventWriter(db as never, logger, outbox);
    for (const id of ['q-0', 'q-1', 'q-2']) await writer.record(row('org-1', id));
    await writer.flush();
    expect(outbox.pending()).toBe(3);
    // The database is back; two more events before the outbox's next replay.
    for (const id of ['q-3', 'q-4']) await writer.record(row('org-1', id));
    await writer.flush();
    await outbox.replay();
    // Before the change: ['q-3', 'q-4', 'q-0', 'q-1', 'q-2'].
    expect(stored).toEqual(['q-0', 'q-1', 'q-2', 'q-3', 'q-4']);
    expect(outbox.pending()).toBe(0);
    await writer.close();
    await outbox.close();
  });

  it('are listed by GET /api/v1/threats as no older than the spooled events', async () => {
    const { context } = testbed;
    const { orgId, apiKey } = await context.createOrg();
    const outbox = testbed.outbox('listing');
    const database = switchedDatabase(context.services.db);
    const writer = createEventWriter(database.db, logger, outbox);
    for (const id of ['before-0', 'before-1', 'before-2']) await writer.record(row(orgId, id));
    await writer.flush();
    expect(outbox.pending()).toBe(3);
    database.down = false;
    for (const id of ['after-0', 'after-1']) await writer.record(row(orgId, id));
    await writer.flush();
    await sleep(20); // the outbox replays on its own timer, a while after the database is back
    await outbox.replay();
    const response = await context.app.inject({ method: 'GET', url: '/api/v1/threats', headers: { authorization: `Bearer ${apiKey}` } });
    expect(response.statusCode).toBe(200);
    const listed = (response.json() as { data: Array<{ request_id: string; occurred_at: string }> }).data;
    expect(listed.map((event) => event.request_id).sort()).toEqual(['after-0', 'after-1', 'before-0', 'before-1', 'before-2']);
    const at = (prefix: string) => listed.filter((event) => event.request_id.startsWith(prefix)).map((event) => Date.parse(event.occurred_at));
    // Before the change the events recorded after the outage were stored first, so listed as older than the spooled ones.
    expect(Math.min(...at('after-'))).toBeGreaterThanOrEqual(Math.max(...at('before-')));
    await writer.close();
    await outbox.close();
  });
});
