import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createReplayer, openSpool, SEVERITIES, type ReplayClock, type Severity, type Spool, type SpooledRecord } from '../../src/sensors/spool.ts';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-spool-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const HOUR = 60 * 60_000;

function entry(key: string, severity: Severity, size = 1000, createdAt = Date.now()): { idempotencyKey: string; severity: Severity; createdAt: number; envelope: Buffer } {
  return { idempotencyKey: key, severity, createdAt, envelope: Buffer.alloc(size, key.charCodeAt(key.length - 1)) };
}

async function all(spool: Spool): Promise<SpooledRecord[]> {
  return spool.peek(Number.MAX_SAFE_INTEGER);
}

/** Runs the child sensor; kills it with SIGKILL once `killAfter` lines matching `prefix` were printed. */
function runChild(args: string[], prefix: string, killAfter: number): Promise<{ lines: string[]; killed: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'spool-child.ts'), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines: string[] = [];
    let buffered = '';
    let seen = 0;
    let killed = false;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        if (line.startsWith(prefix)) seen++;
        if (!killed && seen >= killAfter) {
          killed = child.kill('SIGKILL');
        }
      }
    });
    child.on('error', reject);
    child.on('exit', () => resolve({ lines, killed }));
  });
}

describe('the spool across a sensor killed with SIGKILL', () => {
  it('keeps every record it confirmed, once, and after a kill mid-replay resends only what was not acknowledged', async () => {
    const dir = tempDir();
    // 1. A sensor spooling four findings at a time, killed mid-write after 400 confirmations.
    const first = await runChild(['append', dir, '100000'], 'spooled ', 400);
    expect(first.killed).toBe(true);
    expect(first.lines).not.toContain('finished');
    const confirmed = first.lines.filter((line) => line.startsWith('spooled ')).map((line) => line.slice(8));
    expect(confirmed.length).toBeGreaterThanOrEqual(400);

    // 2. Restarted: everything confirmed is there, nothing twice, and the envelopes are intact.
    const reopened = await openSpool({ dir });
    const records = await all(reopened);
    const keys = records.map((record) => record.idempotencyKey);
    expect(new Set(keys).size).toBe(keys.length);
    for (const key of confirmed) expect(keys).toContain(key);
    // At most the appends in flight at the kill (four at a time) were written but not confirmed.
    expect(keys.length - confirmed.length).toBeLessThanOrEqual(4);
    for (const record of records) expect(Buffer.from(record.envelope).subarray(0, record.idempotencyKey.length).toString()).toBe(record.idempotencyKey);
    await reopened.close();

    // 3. A sensor replaying (ten per batch) killed after 200 acknowledgements.
    const second = await runChild(['drain', dir], 'acked ', 200);
    expect(second.killed).toBe(true);
    const acked = new Set(second.lines.filter((line) => line.startsWith('acked ')).map((line) => line.slice(6)));
    const sent = new Set(second.lines.filter((line) => line.startsWith('sent ')).map((line) => line.slice(5)));
    expect(acked.size).toBeGreaterThanOrEqual(200);

    // 4. Restarted again: what was acknowledged is gone, the rest is there once; only records
    //    sent but not yet acknowledged at the kill (at most one batch) are sent a second time.
    const last = await openSpool({ dir });
    const remaining = (await all(last)).map((record) => record.idempotencyKey);
    expect(new Set(remaining).size).toBe(remaining.length);
    for (const key of remaining) expect(acked.has(key)).toBe(false);
    // The batch in flight at the kill may be marked on disk before its "acked" lines were printed:
    // such a record left the spool after it was sent (at most one batch). Nothing else is missing.
    const markedUnprinted = keys.filter((key) => !acked.has(key) && !remaining.includes(key));
    expect(markedUnprinted.length).toBeLessThanOrEqual(10);
    for (const key of markedUnprinted) expect(sent.has(key)).toBe(true);
    const resent = remaining.filter((key) => sent.has(key));
    expect(resent.length).toBeLessThanOrEqual(10);
    expect(acked.size + markedUnprinted.length + remaining.length).toBe(keys.length);
    await last.close();
  }, 120_000);
});

describe('the spool bounds', () => {
  it('when full, drops low then medium, keeps every critical, and counts each drop by severity', async () => {
    const dir = tempDir();
    // Room for ten records of about 1 KB.
    const spool = await openSpool({ dir, maxBytes: 10 * 1_060, segmentBytes: 4_096 });
    for (let index = 0; index < 4; index++) await spool.append(entry(`low-${index}`, 'low'));
    for (let index = 0; index < 4; index++) await spool.append(entry(`medium-${index}`, 'medium'));
    for (let index = 0; index < 2; index++) await spool.append(entry(`high-${index}`, 'high'));
    expect(spool.stats().depth).toBe(10);
    // Full: an incoming low has nothing lower to displace, so it is the one dropped.
    expect(await spool.append(entry('low-late', 'low'))).toBe('dropped');
    // An incoming medium displaces the oldest low.
    expect(await spool.append(entry('medium-late', 'medium'))).toBe('spooled');
    // Six criticals: three lows, then three mediums make room, oldest first.
    for (let index = 0; index < 6; index++) expect(await spool.append(entry(`critical-${index}`, 'critical'))).toBe('spooled');
    const keys = (await all(spool)).map((record) => record.idempotencyKey);
    expect(keys).toEqual(['medium-3', 'high-0', 'high-1', 'medium-late', 'critical-0', 'critical-1', 'critical-2', 'critical-3', 'critical-4', 'critical-5']);
    expect(spool.dropReport().spool_full).toEqual({ low: 5, medium: 3, high: 0, critical: 0 });
    // Incoming highs displace the two mediums left; once only highs and criticals remain, a high is refused.
    expect(await spool.append(entry('high-late', 'high'))).toBe('spooled');
    expect(await spool.append(entry('high-later', 'high'))).toBe('spooled');
    expect(await spool.append(entry('high-last', 'high'))).toBe('dropped');
    // Criticals are kept even when only highs and criticals are left: highs go, then the bound is exceeded.
    for (let index = 6; index < 12; index++) expect(await spool.append(entry(`critical-${index}`, 'critical'))).toBe('spooled');
    const stats = spool.stats();
    expect(stats.bySeverity).toEqual({ low: 0, medium: 0, high: 0, critical: 12 });
    expect(spool.dropReport().spool_full).toEqual({ low: 5, medium: 5, high: 5, critical: 0 });
    expect(stats.bytes).toBeGreaterThan(10 * 1_060);
    await spool.close();
  });

  it('reports drops until the collector has acknowledged the report, across a restart', async () => {
    const dir = tempDir();
    const spool = await openSpool({ dir, maxBytes: 3 * 1_060 });
    for (let index = 0; index < 3; index++) await spool.append(entry(`critical-${index}`, 'critical'));
    for (let index = 0; index < 5; index++) await spool.append(entry(`low-${index}`, 'low'));
    for (let index = 0; index < 2; index++) await spool.append(entry(`medium-${index}`, 'medium'));
    await spool.close();
    const again = await openSpool({ dir, maxBytes: 3 * 1_060 });
    const report = again.dropReport();
    expect(report.spool_full).toEqual({ low: 5, medium: 2, high: 0, critical: 0 });
    await again.append(entry('low-after', 'low'));
    await again.markReported(report);
    expect(again.dropReport().spool_full).toEqual({ low: 1, medium: 0, high: 0, critical: 0 });
    await again.close();
    const third = await openSpool({ dir, maxBytes: 3 * 1_060 });
    expect(third.dropReport().spool_full).toEqual({ low: 1, medium: 0, high: 0, critical: 0 });
    await third.close();
  });

  it('drops records older than the age bound and counts them as expired', async () => {
    let clock = Date.now();
    const spool = await openSpool({ dir: tempDir(), now: () => clock });
    await spool.append(entry('old-high', 'high', 100, clock));
    await spool.append(entry('old-critical', 'critical', 100, clock));
    clock += 23 * HOUR;
    await spool.append(entry('young', 'medium', 100, clock));
    clock += 2 * HOUR;
    expect((await all(spool)).map((record) => record.idempotencyKey)).toEqual(['young']);
    expect(spool.dropReport().expired).toEqual({ low: 0, medium: 0, high: 1, critical: 1 });
    await spool.close();
  });

  it('keeps the files on disk near the live bytes when drops leave a few records in each segment', async () => {
    const dir = tempDir();
    const record = 1_000 + 8 + 19 + 'k-00'.length;
    const options = { dir, maxBytes: 20 * record, segmentBytes: 4 * record };
    const spool = await openSpool(options);
    // Each segment of four holds one critical and three lows; the lows are dropped as the spool fills.
    for (let index = 0; index < 60; index++) await spool.append(entry(`k-${String(index).padStart(2, '0')}`, index % 4 === 0 ? 'critical' : 'low'));
    expect(spool.stats().bySeverity).toEqual({ low: 5, medium: 0, high: 0, critical: 15 });
    const onDisk = (): number => readdirSync(dir).filter((name) => name.endsWith('.spool')).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
    // Without compaction the five segments of the first twenty records would stay whole around
    // their one critical each: 30 records' worth on disk for 20 live.
    expect(onDisk()).toBeLessThanOrEqual(options.maxBytes + 2 * options.segmentBytes);
    const before = (await all(spool)).map((each) => each.idempotencyKey);
    await spool.close();
    const reopened = await openSpool(options);
    expect((await all(reopened)).map((each) => each.idempotencyKey)).toEqual(before);
    await reopened.close();
  });

  it('finds a record once when a compaction was interrupted before it deleted the old file', async () => {
    const dir = tempDir();
    const spool = await openSpool({ dir });
    for (let index = 0; index < 5; index++) await spool.append(entry(`k-${index}`, 'high'));
    await spool.close();
    const [name] = readdirSync(dir).filter((file) => file.endsWith('.spool'));
    copyFileSync(join(dir, name!), join(dir, 'segment-0000000000000099.spool'));
    const reopened = await openSpool({ dir });
    expect((await all(reopened)).map((each) => each.idempotencyKey)).toEqual(['k-0', 'k-1', 'k-2', 'k-3', 'k-4']);
    expect(reopened.stats().depth).toBe(5);
    await reopened.close();
  });

  it('deletes a segment once every record in it was delivered', async () => {
    const dir = tempDir();
    const spool = await openSpool({ dir, segmentBytes: 3 * 1_060 });
    for (let index = 0; index < 9; index++) await spool.append(entry(`k-${index}`, SEVERITIES[index % 4]!));
    const segments = spool.stats().segments;
    expect(segments).toBe(3);
    const first = await spool.peek(6);
    await spool.acknowledge(first.map((record) => ({ seq: record.seq, outcome: 'delivered' })));
    expect(spool.stats().segments).toBe(1);
    expect(readdirSync(dir).filter((name) => name.endsWith('.spool'))).toHaveLength(1);
    expect(spool.stats().depth).toBe(3);
    await spool.close();
  });
});

/** A clock that only moves when the replayer sleeps. */
function fakeClock(): ReplayClock & { time: number } {
  const clock = {
    time: 0,
    now: () => clock.time,
    sleep: async (ms: number) => {
      clock.time += ms;
    },
  };
  return clock;
}

describe('replay', () => {
  it('sends at the set rate, in batches of at most 100, and follows a rate changed while it runs', async () => {
    const spool = await openSpool({ dir: tempDir() });
    for (let index = 0; index < 1_500; index++) await spool.append(entry(`k-${index}`, 'high', 64));
    const clock = fakeClock();
    const replayer = createReplayer(spool, { clock });
    expect(replayer.rate).toBe(100);
    const sends: { at: number; count: number }[] = [];
    const result = await replayer.run(async (records) => {
      sends.push({ at: clock.time, count: records.length });
      // The collector lowers the rate after the first 1,000 envelopes.
      if (sends.reduce((sum, send) => sum + send.count, 0) >= 1_000) replayer.setRate(50);
      return records.map(() => 'delivered');
    });
    expect(result).toEqual({ sent: 1_500, delivered: 1_500, rejected: 0, ended: 'drained' });
    expect(Math.max(...sends.map((send) => send.count))).toBeLessThanOrEqual(100);
    // In any window of a second, at most the rate plus the bucket's one second of burst.
    const inWindow = (from: number, to: number): number => sends.filter((send) => send.at >= from && send.at < to).reduce((sum, send) => sum + send.count, 0);
    const switchAt = sends.find((_, index) => sends.slice(0, index + 1).reduce((sum, send) => sum + send.count, 0) >= 1_000)!.at;
    for (let start = 0; start < switchAt - 1_000; start += 250) expect(inWindow(start, start + 1_000)).toBeLessThanOrEqual(200);
    // 1,000 at 100/s after a first second's burst of 100: about nine seconds; 500 more at 50/s: about ten.
    expect(switchAt).toBeGreaterThanOrEqual(8_900);
    expect(switchAt).toBeLessThanOrEqual(9_100);
    expect(clock.time - switchAt).toBeGreaterThanOrEqual(9_900);
    expect(clock.time - switchAt).toBeLessThanOrEqual(10_100);
    expect(spool.stats().depth).toBe(0);
    await spool.close();
  });

  it('stops when the collector is unreachable again and keeps what it had not delivered', async () => {
    const spool = await openSpool({ dir: tempDir() });
    for (let index = 0; index < 250; index++) await spool.append(entry(`k-${index}`, 'medium', 64));
    let calls = 0;
    const replayer = createReplayer(spool, { clock: fakeClock() });
    const result = await replayer.run(async (records) => {
      calls++;
      if (calls === 2) throw new Error('connect ECONNREFUSED');
      return records.map((record) => (record.idempotencyKey === 'k-7' ? 'rejected' : 'delivered'));
    });
    expect(result).toEqual({ sent: 100, delivered: 99, rejected: 1, ended: 'unreachable' });
    expect(spool.stats().depth).toBe(150);
    expect(spool.dropReport().rejected).toEqual({ low: 0, medium: 1, high: 0, critical: 0 });
    expect((await spool.peek(1))[0]?.idempotencyKey).toBe('k-100');
    await spool.close();
  });

  it('refuses a rate that is not a positive number', async () => {
    const spool = await openSpool({ dir: tempDir() });
    const replayer = createReplayer(spool);
    expect(() => replayer.setRate(0)).toThrow(RangeError);
    expect(() => replayer.setRate(Number.NaN)).toThrow(RangeError);
    await spool.close();
  });
});
