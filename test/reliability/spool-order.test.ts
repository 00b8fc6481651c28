/**
 * Threat events recorded once the database is back, while events an outage spooled still wait for
 * the outbox's next replay, queue behind them (as block audit entries and provenance records do):
 * they are stored after the older events, so the threats listing never shows an event while an
 * older one is still missing from it. Before mend-rel-35 the writer inserted them at once, and the
 * replay then stored the older events after them.
 */
import { describe, expect, it } from 'vitest';
import { createEventWriter } from '../../src/detection/events.ts';
import { databaseOutage, failingDb, outageTestbed, quietLogger as logger, switchedDatabase, threatEventKeys, threatRow as row } from './failing-stores.ts';

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

  it('are not listed by GET /api/v1/threats before the spooled events, and are listed after them once replayed', async () => {
    const { context } = testbed;
    const { orgId, apiKey } = await context.createOrg();
    const outbox = testbed.outbox('listing');
    const database = switchedDatabase(context.services.db);
    const writer = createEventWriter(database.db, logger, outbox);
    const recordedInOrder = ['before-0', 'before-1', 'before-2', 'after-0', 'after-1'];
    const listed = async () => {
      const response = await context.app.inject({ method: 'GET', url: '/api/v1/threats', headers: { authorization: `Bearer ${apiKey}` } });
      expect(response.statusCode).toBe(200);
      return (response.json() as { data: Array<{ request_id: string; occurred_at: string }> }).data;
    };
    /** Listed, oldest first by when each was recorded: always the first n recorded (no event shown while an older one is missing). */
    const listedIds = async () => (await listed()).map((event) => event.request_id).sort((a, b) => recordedInOrder.indexOf(a) - recordedInOrder.indexOf(b));
    for (const id of recordedInOrder.slice(0, 3)) await writer.record(row(orgId, id));
    await writer.flush();
    expect(outbox.pending()).toBe(3);
    database.down = false;
    for (const id of recordedInOrder.slice(3)) await writer.record(row(orgId, id));
    await writer.flush();
    // The database is back and the outbox has not replayed yet (it replays on its own timer, a while
    // later). Before mend-rel-35 the events recorded after the outage were inserted at once: a
    // client polling the listing saw after-0 and after-1 without the three older events, which then
    // appeared behind the newest it had seen (a poll from that event on never showed them).
    const beforeReplay = await listedIds();
    expect(beforeReplay).toEqual(recordedInOrder.slice(0, beforeReplay.length));
    await outbox.replay();
    const replayed = await listed();
    expect(replayed.map((event) => event.request_id).sort()).toEqual([...recordedInOrder].sort());
    const at = (prefix: string) => replayed.filter((event) => event.request_id.startsWith(prefix)).map((event) => Date.parse(event.occurred_at));
    expect(Math.min(...at('after-'))).toBeGreaterThanOrEqual(Math.max(...at('before-')));
    await writer.close();
    await outbox.close();
  });
});
