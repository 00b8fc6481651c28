/**
 * A spooled record of a kind no handler of this process takes (a file adopted from a dead process
 * of another version, a kind since retired) must not stall the outbox. Before mend-rel-36 the
 * replay took "no handler" for an outage: it stopped there for good, the records behind it (of
 * every kind, in that file and, for an adopted file, in this process's own spool) were never
 * written, and `pending()` stayed above zero, so the evidence writers queued every new record
 * behind it. Once the outbox has started (every handler registered), such records are set aside
 * under `unreplayable/` — kept, counted and logged — and the others are written.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEventWriter } from '../../src/detection/events.ts';
import { createMetrics } from '../../src/platform/metrics.ts';
import { createOutbox } from '../../src/platform/outbox.ts';
import { waitFor } from '../helpers/wait.ts';
import { failingDb, quietLogger as logger, threatEventKeys, threatRow as row } from './failing-stores.ts';

const directory = mkdtempSync(join(tmpdir(), 'svc-unreplayable-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
/** The records kept under `unreplayable/` (every file there, in order). */
const setAside = (dir: string): Array<{ kind: string; data: unknown }> => {
  const place = join(dir, 'unreplayable');
  if (!existsSync(place)) return [];
  return readdirSync(place).flatMap((name) => readFileSync(join(place, name), 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { kind: string; data: unknown }));
};
const unreplayableCount = async (metrics: ReturnType<typeof createMetrics>) => Number(/^svc_outbox_unreplayable_total (\S+)/m.exec(await metrics.text())?.[1]);

describe('a spooled record no handler takes', () => {
  it('is set aside, counted and kept, and the records behind it are written', async () => {
    const dir = join(directory, 'own');
    const metrics = createMetrics({ defaultMetrics: false });
    const outbox = createOutbox({ dir, logger, metrics });
    const written: number[] = [];
    outbox.register('item', async (records) => {
      written.push(...(records as number[]));
    });
    await outbox.append('item', 0);
    await outbox.append('retired_kind', { id: 'x' });
    await outbox.append('retired_kind', { id: 'y' });
    for (const value of [1, 2]) await outbox.append('item', value);
    outbox.start(60_000);
    // Before: the replay stopped at the retired record (as at an outage): [0] written, 4 pending for good.
    await outbox.replay();
    expect(written).toEqual([0, 1, 2]);
    expect(outbox.pending()).toBe(0);
    expect(setAside(dir)).toEqual([{ kind: 'retired_kind', data: { id: 'x' } }, { kind: 'retired_kind', data: { id: 'y' } }]);
    expect(await unreplayableCount(metrics)).toBe(2);
    // Not replayed again: the spool is gone, the set-aside file is no spool.
    await outbox.replay();
    expect(written).toEqual([0, 1, 2]);
    expect(setAside(dir)).toHaveLength(2);
    await outbox.close();
    metrics.close();
  });

  it('in a file adopted from a dead process does not keep that file, nor this process\'s own spool, from being replayed', async () => {
    const dir = join(directory, 'adopted');
    mkdirSync(dir, { recursive: true });
    // A dead process (pid 2^22 + 1 is above Linux's pid_max) of another version left a spool.
    writeFileSync(join(dir, '4194305.jsonl'), [{ kind: 'old_kind', data: 1 }, { kind: 'item', data: 'a' }, { kind: 'item', data: 'b' }].map((record) => `${JSON.stringify(record)}\n`).join(''));
    const outbox = createOutbox({ dir, logger });
    const written: unknown[] = [];
    outbox.register('item', async (records) => {
      written.push(...records);
    });
    await outbox.append('item', 'own');
    outbox.start(60_000);
    await waitFor(() => (written.length >= 3 ? true : undefined));
    await outbox.replay();
    // Before: the adopted file stopped at old_kind for good, and the own spool waited behind it (['own'] never written).
    expect(written).toEqual(['a', 'b', 'own']);
    expect(outbox.pending()).toBe(0);
    expect(setAside(dir)).toEqual([{ kind: 'old_kind', data: 1 }]);
    await outbox.close();
  });

  it('sets aside a spool line that parses but is no record, once, and writes the records behind it', async () => {
    const dir = join(directory, 'no-record');
    mkdirSync(dir, { recursive: true });
    // A dead process's spool holding lines that are JSON but no record (a hand-edited or damaged file).
    writeFileSync(join(dir, '4194306.jsonl'), ['123', 'null', '{"data":1}', JSON.stringify({ kind: 'item', data: 'a' })].map((line) => `${line}\n`).join(''));
    const outbox = createOutbox({ dir, logger });
    const written: unknown[] = [];
    outbox.register('item', async (records) => {
      written.push(...records);
    });
    outbox.start(60_000);
    await waitFor(() => (outbox.pending() > 0 || written.length > 0 ? true : undefined)); // adopted
    for (let tries = 0; tries < 3; tries++) await outbox.replay().catch(() => 0);
    // Before: the replay threw on every try (reading `kind` of null, or slicing a kind that is no string after the
    // set-aside append): 'a' never written, the file adopted for good, and `123` appended to unreplayable/ again each time.
    expect(written).toEqual(['a']);
    expect(outbox.pending()).toBe(0);
    expect(setAside(dir)).toEqual([123, null, { data: 1 }]);
    await outbox.close();
  });

  it('waits while the outbox has not started (a handler may still be registered), then is written by it', async () => {
    const dir = join(directory, 'late');
    const outbox = createOutbox({ dir, logger });
    await outbox.append('late_kind', 'first');
    expect(await outbox.replay()).toBe(0);
    expect(outbox.pending()).toBe(1);
    const written: unknown[] = [];
    outbox.register('late_kind', async (records) => {
      written.push(...records);
    });
    outbox.start(60_000);
    await outbox.replay();
    expect(written).toEqual(['first']);
    expect(setAside(dir)).toEqual([]);
    await outbox.close();
  });

  it('does not keep threat events queued behind it from being stored', async () => {
    const dir = join(directory, 'events');
    const outbox = createOutbox({ dir, logger });
    await outbox.append('retired_kind', { id: 'x' });
    const { db, stored } = failingDb({ conflicts: 0, keys: threatEventKeys }); // the database is up
    const writer = createEventWriter(db as never, logger, outbox);
    outbox.start(60_000);
    for (const id of ['e-0', 'e-1']) await writer.record(row('org-1', id));
    await writer.flush(); // queued behind the spool's head, in order
    await outbox.replay();
    for (const id of ['e-2', 'e-3']) await writer.record(row('org-1', id));
    await writer.flush(); // the spool is empty now: inserted at once
    // Before: every event waited in the spool behind the retired record, none stored.
    expect(stored).toEqual(['e-0', 'e-1', 'e-2', 'e-3']);
    expect(outbox.pending()).toBe(0);
    await writer.close();
    await outbox.close();
  });
});
