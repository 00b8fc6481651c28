/**
 * The outbox for evidence: records that must reach the database (threat events, block audit
 * entries, webhook events) but could not, because the database is unavailable, are appended to
 * a local spool and written when it returns.
 *
 * Durability posture: the spool is an append-only file of JSON lines under
 * `DATA_DIR/outbox/<pid>.jsonl`, one file per process (so processes sharing a directory never
 * interleave). `append` resolves only after the line is written and fdatasync'd (appends that
 * arrive during a sync share the next one: group commit). Replay reads the file from the start,
 * hands consecutive records of one kind to that kind's handler in the order they were appended,
 * and stops at the first outage, keeping the rest; once everything is written the file is
 * removed. A spool left by a process that died (its pid no longer runs) is adopted and replayed
 * at start. The spool is bounded (`maxBytes`): beyond it, records are dropped and counted in an
 * error log line; nothing else is lost silently. Order matters for the audit chain: while the
 * spool holds records, writers keep appending to it (`pending()`), so entries are chained in the
 * order they were produced.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { open, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { isDatabaseOutage } from './db/failures.ts';
import type { Logger } from './logger.ts';

export interface OutboxRecord {
  kind: string;
  data: unknown;
}

/** Writes records of one kind, in order. Throws on an outage (replay then waits and retries). */
export type OutboxHandler = (records: unknown[]) => Promise<void>;

export interface Outbox {
  /**
   * The writer of one kind. A handler call must be all-or-nothing (one transaction), since a call
   * that failed is repeated: `group` splits runs so that one call holds records of one group
   * (e.g. one org), `batch` bounds its size (1: one record per call).
   */
  register(kind: string, handler: OutboxHandler, options?: { group?: (data: unknown) => string; batch?: number }): void;
  /** Appends durably (resolves after fdatasync). False when the spool is full and the record was dropped. */
  append(kind: string, data: unknown): Promise<boolean>;
  /**
   * Appends several records in this order, sharing one fdatasync (a writer spooling a batch
   * waits for one disk sync, not one per record). One flag per record, as `append`.
   */
  appendMany(kind: string, items: readonly unknown[]): Promise<boolean[]>;
  /** Records spooled and not yet written. */
  pending(): number;
  /** Writes what is spooled; stops at an outage. Returns how many records were written. */
  replay(): Promise<number>;
  /** Replays every `intervalMs` while records wait (default 2 s); adopts spools of dead processes. */
  start(intervalMs?: number): void;
  /** Stops the timer, tries a last replay and leaves the rest on disk for the next start. */
  close(): Promise<void>;
}

export interface OutboxOptions {
  dir: string;
  logger: Logger;
  /** Bound of one spool file (default 256 MiB). */
  maxBytes?: number;
  /** This process's id (tests). */
  pid?: number;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

export function createOutbox(options: OutboxOptions): Outbox {
  const { dir, logger } = options;
  const maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
  const pid = options.pid ?? process.pid;
  const path = join(dir, `${pid}.jsonl`);
  const handlers = new Map<string, { handler: OutboxHandler; group: (data: unknown) => string; batch: number }>();
  let handle: FileHandle | null = null;
  let bytes = 0;
  let count = 0;
  let dropped = 0;
  let writing: Promise<void> = Promise.resolve();
  let batch: { lines: string[]; waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> } | null = null;
  let replaying: Promise<number> | null = null;
  let timer: NodeJS.Timeout | null = null;
  const adopted: string[] = [];

  const flushBatch = async () => {
    const current = batch;
    batch = null;
    if (current === null) return;
    try {
      if (handle === null) {
        mkdirSync(dir, { recursive: true });
        handle = await open(path, 'a');
      }
      await handle.write(current.lines.join(''));
      await handle.datasync();
      for (const waiter of current.waiters) waiter.resolve();
    } catch (error) {
      for (const waiter of current.waiters) waiter.reject(error);
    }
  };

  /** Writes the records of one spool file in order; on an outage keeps the rest in the file. */
  const writeSpooled = async (file: string): Promise<{ written: number; total: number; done: boolean }> => {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      return { written: 0, total: 0, done: true };
    }
    const records: OutboxRecord[] = [];
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        records.push(JSON.parse(line) as OutboxRecord);
      } catch {
        logger.error({ file }, 'outbox: a torn spool line was skipped'); // a crash mid-write
      }
    }
    let index = 0;
    while (index < records.length) {
      const kind = records[index]!.kind;
      const registered = handlers.get(kind);
      const group = registered?.group(records[index]!.data);
      let end = index;
      while (
        end < records.length && records[end]!.kind === kind && end - index < (registered?.batch ?? 1) &&
        (registered === undefined || registered.group(records[end]!.data) === group)
      ) end++;
      try {
        if (registered === undefined) throw Object.assign(new Error(`no outbox handler for ${kind}`), { code: 'ECONNREFUSED' });
        await registered.handler(records.slice(index, end).map((record) => record.data));
      } catch (error) {
        if (isDatabaseOutage(error)) {
          await rewrite(file, records.slice(index));
          return { written: index, total: records.length, done: false };
        }
        logger.error({ kind, records: end - index, code: (error as { code?: unknown } | null)?.code ?? null }, 'outbox: records refused by the database were dropped');
      }
      index = end;
    }
    await rm(file, { force: true });
    return { written: records.length, total: records.length, done: true };
  };

  /** Replaces a spool file by the records still to be written (temporary file, fsync, rename). */
  const rewrite = async (file: string, rest: OutboxRecord[]) => {
    const temporary = `${file}.rewrite`;
    const out = await open(temporary, 'w');
    try {
      await out.write(rest.map((record) => `${JSON.stringify(record)}\n`).join(''));
      await out.datasync();
    } finally {
      await out.close();
    }
    await rename(temporary, file);
  };

  const replayOnce = async (): Promise<number> => {
    let written = 0;
    for (const file of [...adopted]) {
      const result = await writeSpooled(file);
      written += result.written;
      if (!result.done) return written;
      adopted.splice(adopted.indexOf(file), 1);
    }
    if (count === 0) return written;
    // Inside the write chain: no append touches the file meanwhile (they queue behind).
    const run = writing.then(async () => {
      await handle?.close();
      handle = null;
      const result = await writeSpooled(path);
      // Records appended after the replay started are not in the file yet: they stay counted.
      const left = result.total - (result.done ? result.total : result.written);
      const removed = result.total - left;
      bytes = Math.max(0, Math.round(bytes * (count === 0 ? 0 : 1 - removed / count)));
      count = Math.max(0, count - removed);
      return result.written;
    });
    writing = run.then(
      () => undefined,
      () => undefined,
    );
    written += await run;
    if (dropped > 0) {
      logger.error({ dropped }, 'outbox: spool full, records dropped');
      dropped = 0;
    }
    return written;
  };

  const outbox: Outbox = {
    register(kind, handler, registration = {}) {
      handlers.set(kind, { handler, group: registration.group ?? (() => ''), batch: registration.batch ?? 500 });
    },

    async append(kind, data) {
      const line = `${JSON.stringify({ kind, data })}\n`;
      const size = Buffer.byteLength(line);
      if (bytes + size > maxBytes) {
        dropped++;
        return false;
      }
      bytes += size;
      count++;
      const done = new Promise<void>((resolve, reject) => {
        if (batch === null) {
          batch = { lines: [], waiters: [] };
          writing = writing.then(flushBatch);
        }
        batch.lines.push(line);
        batch.waiters.push({ resolve, reject });
      });
      await done;
      return true;
    },

    appendMany(kind, items) {
      // append() queues its line synchronously, so the records keep this order in the file.
      return Promise.all(items.map((data) => outbox.append(kind, data)));
    },

    pending() {
      return count + adopted.length;
    },

    replay() {
      replaying ??= replayOnce().finally(() => {
        replaying = null;
      });
      return replaying;
    },

    start(intervalMs = 2_000) {
      try {
        for (const name of readdirSync(dir)) {
          const match = /^(\d+)\.jsonl$/.exec(name);
          if (match === null || Number(match[1]) === pid || alive(Number(match[1]))) continue;
          adopted.push(join(dir, name));
        }
      } catch {
        // No spool directory yet: nothing to adopt.
      }
      if (timer !== null) clearInterval(timer);
      timer = setInterval(() => {
        if (outbox.pending() === 0) return;
        outbox.replay().catch((error: unknown) => logger.error({ message: error instanceof Error ? error.message : String(error) }, 'outbox replay failed'));
      }, intervalMs);
      timer.unref();
      if (adopted.length > 0) void outbox.replay().catch(() => undefined);
    },

    async close() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      await writing;
      if (outbox.pending() > 0) await outbox.replay().catch(() => 0);
      if (outbox.pending() > 0) logger.warn({ pending: outbox.pending(), path }, 'outbox: records stay spooled until the next start');
      await handle?.close();
      handle = null;
    },
  };
  return outbox;
}
