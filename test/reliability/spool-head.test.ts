/**
 * Threat events queue behind a non-empty spool (mend-rel-35) so that they are stored in order. A
 * spooled record that does not replay yet keeps the spool non-empty (here a kind no handler takes
 * before the outbox has started; after start it is set aside: outbox-unreplayable.test.ts; a long
 * outage's backlog likewise): the events recorded meanwhile, with the database up, must not be
 * lost when the spool is full.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEventWriter } from '../../src/detection/events.ts';
import { createOutbox } from '../../src/platform/outbox.ts';
import { failingDb, quietLogger as logger, threatEventKeys, threatRow as row } from './failing-stores.ts';

const directory = mkdtempSync(join(tmpdir(), 'svc-spool-head-'));

afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('threat events behind a spooled record that never replays', () => {
  it('are stored, not dropped, once the spool is full, while the database is up', async () => {
    // Room for the stuck record and about one event.
    const outbox = createOutbox({ dir: join(directory, 'full'), logger, maxBytes: 400 });
    expect(await outbox.append('retired_kind', { id: 'x' })).toBe(true);
    const { db, stored } = failingDb({ conflicts: 0, keys: threatEventKeys }); // the database is up
    const writer = createEventWriter(db as never, logger, outbox);
    for (const id of ['e-0', 'e-1', 'e-2', 'e-3']) await writer.record(row('org-1', id));
    await writer.flush();
    await outbox.replay(); // stops at the stuck record: no handler takes it (the outbox has not started)
    await writer.flush();
    // Every event is stored or still waits in the spool (behind the stuck record). Before the fix the
    // spool took the first and refused the others (full), which were given up: none was stored.
    expect(stored.length + outbox.pending() - 1).toBe(4);
    await writer.close();
    await outbox.close();
  });
});
