/**
 * The outbox (issue #14, "An outbox for evidence"): records the database could not take are
 * kept on disk and written, in order, once it takes them again — also by the next process when
 * this one died. The handler below stands in for the database writer: it refuses with the
 * error node-postgres raises when the server is down (ECONNREFUSED) until told to accept.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/platform/logger.ts';
import { createOutbox } from '../../src/platform/outbox.ts';
import { waitFor } from '../helpers/wait.ts';

const directory = mkdtempSync(join(tmpdir(), 'svc-outbox-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const logger = createLogger('error', { write: () => undefined } as never);
const outage = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
/** Waits until `count` records were written (a replay runs on the outbox's timer), then as long again as a second replay would need to write any twice. */
async function replayed(written: readonly unknown[], count: number): Promise<void> {
  await waitFor(() => (written.length >= count ? true : undefined));
  await new Promise((resolve) => setTimeout(resolve, 300));
}

describe('the evidence outbox', () => {
  it('keeps records on disk through an outage and writes them in order when the database returns', async () => {
    const dir = join(directory, 'a');
    const outbox = createOutbox({ dir, logger });
    let up = false;
    const written: number[] = [];
    outbox.register('item', async (records) => {
      if (!up) throw outage();
      written.push(...(records as number[]));
    }, { batch: 7 });
    for (let index = 0; index < 50; index++) expect(await outbox.append('item', index)).toBe(true);
    // Named after this process: its pid and, where /proc tells it, its start time.
    expect(readdirSync(dir)).toEqual([expect.stringMatching(new RegExp(`^${process.pid}(-\\d+)?\\.jsonl$`))]);
    expect(await outbox.replay()).toBe(0);
    expect(outbox.pending()).toBe(50);
    up = true;
    expect(await outbox.replay()).toBe(50);
    expect(written).toEqual(Array.from({ length: 50 }, (_, index) => index));
    expect(outbox.pending()).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
    await outbox.close();
  });

  it('resumes after the records already written when the outage returns mid-replay, without repeating them', async () => {
    const dir = join(directory, 'b');
    const outbox = createOutbox({ dir, logger });
    const written: number[] = [];
    let budget = 2;
    outbox.register('item', async (records) => {
      if (budget-- <= 0) throw outage();
      written.push(...(records as number[]));
    }, { batch: 5 });
    for (let index = 0; index < 20; index++) await outbox.append('item', index);
    expect(await outbox.replay()).toBe(10);
    budget = 100;
    expect(await outbox.replay()).toBe(10);
    expect(written).toEqual(Array.from({ length: 20 }, (_, index) => index));
    await outbox.close();
  });

  it('keeps the records a lock conflict rolled back (another writer\'s transaction) and writes them with the next replay', async () => {
    const dir = join(directory, 'lock');
    const outbox = createOutbox({ dir, logger });
    const written: number[] = [];
    let conflicts = 1;
    outbox.register('item', async (records) => {
      if (conflicts > 0) {
        conflicts -= 1;
        throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
      }
      written.push(...(records as number[]));
    }, { batch: 4 });
    for (let index = 0; index < 10; index++) await outbox.append('item', index);
    expect(await outbox.replay()).toBe(0);
    expect(outbox.pending()).toBe(10);
    expect(await outbox.replay()).toBe(10);
    expect(written).toEqual(Array.from({ length: 10 }, (_, index) => index));
    await outbox.close();
  });

  it('keeps the order of a batch appended at once and writes it back in that order', async () => {
    const dir = join(directory, 'f');
    const outbox = createOutbox({ dir, logger });
    let up = false;
    const written: number[] = [];
    outbox.register('item', async (records) => {
      if (!up) throw outage();
      written.push(...(records as number[]));
    }, { batch: 3 });
    const batch = Array.from({ length: 40 }, (_, index) => index);
    expect(await outbox.appendMany('item', batch)).toEqual(batch.map(() => true));
    await outbox.append('item', 40);
    expect(await outbox.replay()).toBe(0);
    up = true;
    expect(await outbox.replay()).toBe(41);
    expect(written).toEqual([...batch, 40]);
    await outbox.close();
  });

  it('adopts and replays the spool of a process that died', async () => {
    const dir = join(directory, 'c');
    const dead = createOutbox({ dir, logger, pid: 999_999_999 });
    dead.register('item', async () => {
      throw outage();
    });
    for (let index = 0; index < 5; index++) await dead.append('item', index);
    await dead.replay();
    const next = createOutbox({ dir, logger });
    const written: number[] = [];
    next.register('item', async (records) => void written.push(...(records as number[])));
    next.start(50);
    await replayed(written, 5);
    expect(written).toEqual([0, 1, 2, 3, 4]);
    await next.close();
  });

  it('drops records beyond its bound and says so, instead of growing without limit', async () => {
    const outbox = createOutbox({ dir: join(directory, 'd'), logger, maxBytes: 200 });
    outbox.register('item', async () => {
      throw outage();
    });
    const accepted = [];
    for (let index = 0; index < 20; index++) accepted.push(await outbox.append('item', { index }));
    expect(accepted.filter(Boolean).length).toBeLessThan(20);
    expect(accepted[0]).toBe(true);
    await outbox.close();
  });

  it('skips a torn last line left by a crash mid-write', async () => {
    const dir = join(directory, 'e');
    const dead = createOutbox({ dir, logger, pid: 999_999_998 });
    dead.register('item', async () => {
      throw outage();
    });
    await dead.append('item', 1);
    writeFileSync(join(dir, '999999998.jsonl'), '{"kind":"item","data":1}\n{"kind":"it', { flag: 'w' });
    const next = createOutbox({ dir, logger });
    const written: number[] = [];
    next.register('item', async (records) => void written.push(...(records as number[])));
    next.start(50);
    await replayed(written, 1);
    expect(written).toEqual([1]);
    await next.close();
  });

  it('replays the spool of a dead process exactly once when two processes start on the directory at the same time', async () => {
    const dir = join(directory, 'g');
    const dead = createOutbox({ dir, logger, pid: 999_999_997 });
    dead.register('item', async () => {
      throw outage();
    });
    for (let index = 0; index < 30; index++) await dead.append('item', index);
    const written: number[] = [];
    // Two live owners: this process and pid 1 (always running), as two cluster workers would be.
    const first = createOutbox({ dir, logger });
    const second = createOutbox({ dir, logger, pid: 1 });
    for (const outbox of [first, second]) outbox.register('item', async (records) => void written.push(...(records as number[])));
    first.start(20);
    second.start(20);
    await replayed(written, 30);
    expect(written.sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, index) => index));
    await Promise.all([first.close(), second.close()]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('writes what a killed process had journaled and not yet written, and forgets journaled records once written', async () => {
    const dir = join(directory, 'h');
    const killed = createOutbox({ dir, logger, pid: 999_999_996 });
    const held = killed.journal('item', 'held in memory at the kill');
    expect(await held.durable).toBe(true);
    const live = createOutbox({ dir, logger });
    const written: string[] = [];
    live.register('item', async (records) => void written.push(...(records as string[])));
    const entry = live.journal('item', 'written by its writer');
    expect(await entry.durable).toBe(true);
    entry.done();
    live.start(20);
    await replayed(written, 1);
    expect(written).toEqual(['held in memory at the kill']);
    await live.close();
    // The killed process's segment was replayed and removed; the live one's, all written, is gone too.
    expect(readdirSync(dir)).toEqual([]);
  });

  it('adopts a spool an earlier version left under the pid this process now has', async () => {
    const dir = join(directory, 'i');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${process.pid}.jsonl`), '{"kind":"item","data":7}\n');
    const outbox = createOutbox({ dir, logger });
    const written: number[] = [];
    outbox.register('item', async (records) => void written.push(...(records as number[])));
    outbox.start(20);
    await replayed(written, 1);
    expect(written).toEqual([7]);
    await outbox.close();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('settles the disk wait of a journaled record that its writer finished before the journal wrote it', async () => {
    const dir = join(directory, 'j');
    const outbox = createOutbox({ dir, logger });
    // A segment of more than 256 KiB whose records are all done is deleted at once.
    const entries = Array.from({ length: 300 }, (_, index) => outbox.journal('item', { index, text: 'x'.repeat(1_000) }));
    for (const entry of entries) entry.done();
    const settled = await Promise.race([Promise.all(entries.map((entry) => entry.durable)), new Promise((resolve) => setTimeout(() => resolve('hung'), 2_000))]);
    expect(settled).toEqual(entries.map(() => true));
    await outbox.close();
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
  });
});
