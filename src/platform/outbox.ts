/**
 * The outbox for evidence: records that must reach the database (threat events, block audit
 * entries, webhook events) and survive both a database outage and the death of the process.
 *
 * Two kinds of file live under `DATA_DIR/outbox/`, each named after the process that owns it
 * (`<pid>-<start time>`: the pid and the kernel's start time of that process, so a pid reused
 * after a restart does not pass for the dead owner):
 * - the spool, `<owner>.jsonl`: records the database could not take (an outage), written when it
 *   returns. `append` resolves only after the line is written and fdatasync'd (appends that
 *   arrive during a sync share the next one: group commit). Replay reads the file from the start,
 *   hands consecutive records of one kind to that kind's handler in the order they were appended,
 *   and stops at the first outage or lock conflict, keeping the rest; once everything is written
 *   the file is removed. Records of a kind no handler takes (a file adopted from a process of
 *   another version) are set aside once the outbox has started (handlers are registered before
 *   `start()`): appended to `unreplayable/<owner>.jsonl` (fdatasync'd, kept for an operator), with
 *   an error log line and `svc_outbox_unreplayable_total`, so they neither block the records behind
 *   them nor read as an outage. Before `start()` a replay stops at them, keeping them. The spool is
 *   bounded (`maxBytes`): beyond it, records are dropped and counted in an error log line. While the
 *   spool holds records, writers keep appending to it (`pending()`), so audit entries are chained in
 *   the order they were produced.
 * - journal segments, `<owner>.journal-<tag>-<n>.jsonl`: every evidence record as it is produced
 *   (`journal`), on disk before the answer it belongs to is sent; the writer says `done()` once the
 *   record is in the database or the spool, and a segment whose records are all done is deleted.
 *   A process killed with SIGKILL leaves its segments behind with what it still held in memory.
 *
 * Files of a dead owner are adopted by the first live process that sees them (at start and every
 * 10 s): it claims each with an atomic rename into its own name (`<owner>.adopted-<id>.jsonl`), so
 * two processes never replay one file, then replays it like its spool. A claimed file whose
 * claimer died is claimed again. Handlers write idempotently on each record's own id (threat
 * event id, audit entry id, webhook event id), so a file replayed twice — a claimer killed
 * mid-replay, a journal record that had also been written — writes nothing twice.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { isDatabaseOutage, isRetryableWriteFailure } from './db/failures.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';

export interface OutboxRecord {
  kind: string;
  data: unknown;
}

/**
 * Writes records of one kind, in order. Throws on an outage or a lock conflict (replay then waits and retries).
 * Must be idempotent on each record's own id: a record may be handed over again after a crash.
 */
export type OutboxHandler = (records: unknown[]) => Promise<void>;

/** A record in the journal: `durable` resolves once it is on disk (false: the disk refused it). */
export interface JournalEntry {
  readonly durable: Promise<boolean>;
  /** The record is in the database or the spool (or was given up): the journal may forget it. */
  done(): void;
}

export interface Outbox {
  /**
   * The writer of one kind. A handler call must be all-or-nothing (one transaction), since a call
   * that failed is repeated: `group` splits runs so that one call holds records of one group
   * (e.g. one org), `batch` bounds its size (1: one record per call). Registered before `start()`.
   */
  register(kind: string, handler: OutboxHandler, options?: { group?: (data: unknown) => string; batch?: number }): void;
  /** Appends durably (resolves after fdatasync). False when the spool is full and the record was dropped. */
  append(kind: string, data: unknown): Promise<boolean>;
  /**
   * Appends several records in this order, sharing one fdatasync (a writer spooling a batch
   * waits for one disk sync, not one per record). One flag per record, as `append`.
   */
  appendMany(kind: string, items: readonly unknown[]): Promise<boolean[]>;
  /**
   * Journals a record as it is produced (group commit, fdatasync). If this process dies before
   * `done()`, the next process writes the record from the journal through the kind's handler.
   */
  journal(kind: string, data: unknown): JournalEntry;
  /** Records spooled (or adopted) and not yet written. Journaled records do not count. */
  pending(): number;
  /** Writes what is spooled; stops at an outage or a lock conflict. Returns how many records were written. */
  replay(): Promise<number>;
  /**
   * Replays every `intervalMs` while records wait (default 2 s); adopts the files of dead processes.
   * Every handler is registered by then: from now on a record of a kind none takes is set aside.
   */
  start(intervalMs?: number): void;
  /** Stops the timer, tries a last replay and leaves the rest on disk for the next start. */
  close(): Promise<void>;
}

export interface OutboxOptions {
  dir: string;
  logger: Logger;
  /** Bound of one spool file (default 256 MiB). */
  maxBytes?: number;
  /** This process's id (tests; the owner name is then the pid alone). */
  pid?: number;
  /** Counts the records set aside as unreplayable (svc_outbox_unreplayable_total). */
  metrics?: Pick<Metrics, 'outboxUnreplayable'>;
}

/** A journal segment is closed for new records at this size. */
const SEGMENT_BYTES = 8 * 1024 * 1024;
/** A segment whose records are all done is deleted once it holds this much (else kept for the next). */
const SEGMENT_IDLE_BYTES = 256 * 1024;
const ADOPT_EVERY_MS = 10_000;
const OWNED_FILE = /^(\d+)(?:-(\d+))?\.(?:(?:journal|adopted)-[A-Za-z0-9-]+\.)?jsonl$/;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

/** The kernel's start time of a process (Linux /proc), or null where it cannot be read. */
function startTime(pid: number | 'self'): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const value = fields[19]; // field 22 of stat(5); fields[0] is field 3
    return value !== undefined && /^\d+$/.test(value) ? value : null;
  } catch {
    return null;
  }
}

/** Whether the process that named a file `<pid>-<start>` still runs (not merely its pid). */
function ownerAlive(pid: number, start: string | undefined): boolean {
  if (!alive(pid)) return false;
  if (start === undefined) return true;
  const current = startTime(pid);
  return current === null || current === start;
}

/** Paths that live outboxes of this process write: never claimed, even under this process's name. */
const inUse = new Set<string>();

interface Segment {
  path: string;
  handle: FileHandle | null;
  bytes: number;
  outstanding: number;
  lines: string[];
  waiters: Array<(ok: boolean) => void>;
}

export function createOutbox(options: OutboxOptions): Outbox {
  const { dir, logger } = options;
  const maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
  const pid = options.pid ?? process.pid;
  const ownStart = options.pid === undefined ? startTime('self') : null;
  const owner = ownStart === null ? String(pid) : `${pid}-${ownStart}`;
  const path = join(dir, `${owner}.jsonl`);
  const journalTag = randomBytes(4).toString('hex');
  const handlers = new Map<string, { handler: OutboxHandler; group: (data: unknown) => string; batch: number }>();
  let handle: FileHandle | null = null;
  let bytes = 0;
  let count = 0;
  let dropped = 0;
  let writing: Promise<void> = Promise.resolve();
  let batch: { lines: string[]; waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> } | null = null;
  let replaying: Promise<number> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let lastAdoption = 0;
  let started = false;
  const adopted: string[] = [];
  const unreplayablePath = join(dir, 'unreplayable', `${owner}.jsonl`);
  inUse.add(path);

  // ---------------------------------------------------------------------------- journal
  let segment: Segment | null = null;
  let segmentIndex = 0;
  const segments = new Set<Segment>();
  let journalWriting: Promise<void> = Promise.resolve();
  let journalFlushQueued = false;
  let journalFailures = 0;

  const flushJournal = async () => {
    journalFlushQueued = false;
    for (const current of segments) {
      if (current.lines.length === 0) continue;
      const lines = current.lines;
      const waiters = current.waiters;
      current.lines = [];
      current.waiters = [];
      let ok = true;
      try {
        if (current.handle === null) {
          await mkdir(dir, { recursive: true });
          current.handle = await open(current.path, 'a');
          await syncDirectory(dir);
        }
        await current.handle.write(lines.join(''));
        await current.handle.datasync();
      } catch (error) {
        ok = false;
        if (journalFailures++ % 1000 === 0) logger.error({ code: (error as { code?: unknown } | null)?.code ?? null, records: lines.length }, 'outbox: journal write failed; these records are held in memory only');
      }
      for (const waiter of waiters) waiter(ok);
    }
  };

  /** Closes and deletes a segment whose records are all written (behind the pending journal writes). */
  const retire = (current: Segment) => {
    segments.delete(current);
    inUse.delete(current.path);
    // Lines not flushed yet belong to records already written elsewhere (done): durable as they are.
    for (const waiter of current.waiters) waiter(true);
    current.lines = [];
    current.waiters = [];
    journalWriting = journalWriting.then(async () => {
      await current.handle?.close().catch(() => undefined);
      current.handle = null;
      await rm(current.path, { force: true }).catch(() => undefined);
    });
  };

  const journal = (kind: string, data: unknown): JournalEntry => {
    const line = `${JSON.stringify({ kind, data })}\n`;
    if (segment === null || segment.bytes >= SEGMENT_BYTES) {
      if (segment !== null && segment.outstanding === 0) retire(segment);
      segment = { path: join(dir, `${owner}.journal-${journalTag}-${segmentIndex++}.jsonl`), handle: null, bytes: 0, outstanding: 0, lines: [], waiters: [] };
      segments.add(segment);
      inUse.add(segment.path);
    }
    const current = segment;
    current.bytes += Buffer.byteLength(line);
    current.outstanding++;
    const durable = new Promise<boolean>((resolve) => {
      current.lines.push(line);
      current.waiters.push(resolve);
    });
    if (!journalFlushQueued) {
      journalFlushQueued = true;
      journalWriting = journalWriting.then(flushJournal);
    }
    let finished = false;
    return {
      durable,
      done() {
        if (finished) return;
        finished = true;
        current.outstanding--;
        if (current.outstanding > 0) return;
        if (current === segment) {
          if (current.bytes < SEGMENT_IDLE_BYTES) return;
          segment = null;
        }
        retire(current);
      },
    };
  };

  // ------------------------------------------------------------------------------ spool
  const flushBatch = async () => {
    const current = batch;
    batch = null;
    if (current === null) return;
    try {
      if (handle === null) {
        await mkdir(dir, { recursive: true });
        handle = await open(path, 'a');
      }
      await handle.write(current.lines.join(''));
      await handle.datasync();
      for (const waiter of current.waiters) waiter.resolve();
    } catch (error) {
      for (const waiter of current.waiters) waiter.reject(error);
    }
  };

  /**
   * Keeps records no handler takes apart from the spool (appended and fdatasync'd before the spool
   * forgets them: a crash in between leaves them in both, never in neither). False: not kept.
   */
  const setAside = async (kind: string | null, rest: readonly OutboxRecord[]): Promise<boolean> => {
    let out: FileHandle | null = null;
    try {
      await mkdir(join(dir, 'unreplayable'), { recursive: true });
      out = await open(unreplayablePath, 'a');
      await out.write(rest.map((record) => `${JSON.stringify(record)}\n`).join(''));
      await out.datasync();
    } catch (error) {
      logger.error({ kind: kind?.slice(0, 64) ?? null, records: rest.length, code: (error as { code?: unknown } | null)?.code ?? null }, 'outbox: records no handler takes could not be set aside; they stay in the spool');
      return false;
    } finally {
      await out?.close().catch(() => undefined);
    }
    logger.error({ kind: kind?.slice(0, 64) ?? null, records: rest.length, path: unreplayablePath }, 'outbox: records of a kind no handler takes were set aside as unreplayable');
    options.metrics?.outboxUnreplayable.inc(rest.length);
    return true;
  };

  /**
   * Writes the records of one spool file in order; on an outage keeps the rest in the file.
   * `processed`: records the file no longer holds (written, refused, or set aside); `written` leaves out those set aside.
   */
  const writeSpooled = async (file: string): Promise<{ processed: number; written: number; total: number; done: boolean }> => {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      return { processed: 0, written: 0, total: 0, done: true };
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
    // A line that parses but is no record (no string kind: a hand-edited or damaged file) has no kind a handler takes.
    const kindOf = (record: OutboxRecord | null): string | null => (typeof record?.kind === 'string' ? record.kind : null);
    let index = 0;
    let setAsideCount = 0;
    const stop = async () => {
      await rewrite(file, records.slice(index));
      return { processed: index, written: index - setAsideCount, total: records.length, done: false };
    };
    while (index < records.length) {
      const kind = kindOf(records[index]!);
      const registered = kind === null ? undefined : handlers.get(kind);
      if (registered === undefined) {
        // No handler takes this kind. Before start() one may still be registered: wait, as on an outage. Once started,
        // none will be: the run of them is set aside, so that it neither blocks the records behind it nor reads as an outage.
        let end = index;
        while (end < records.length && kindOf(records[end]!) === kind) end++;
        if (!started || !(await setAside(kind, records.slice(index, end)))) return stop();
        setAsideCount += end - index;
        index = end;
        continue;
      }
      const group = registered.group(records[index]!.data);
      let end = index;
      while (end < records.length && kindOf(records[end]!) === kind && end - index < registered.batch && registered.group(records[end]!.data) === group) end++;
      try {
        await registered.handler(records.slice(index, end).map((record) => record.data));
      } catch (error) {
        // An outage, or a lock conflict that rolled the call back whole (another writer's transaction): the records wait
        // for the next replay (the call is all-or-nothing and idempotent, so nothing is written twice).
        if (isRetryableWriteFailure(error)) {
          if (!isDatabaseOutage(error)) logger.warn({ kind, records: end - index, code: (error as { code?: unknown }).code }, 'outbox: a lock conflict rolled the records back; they wait for the next replay');
          return stop();
        }
        logger.error({ kind, records: end - index, code: (error as { code?: unknown } | null)?.code ?? null }, 'outbox: records refused by the database were dropped');
      }
      index = end;
    }
    await rm(file, { force: true });
    return { processed: records.length, written: records.length - setAsideCount, total: records.length, done: true };
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

  /**
   * Claims every file of a dead owner (and any file under this process's name that no live outbox
   * of this process writes: a previous life with the same pid) by renaming it into this process's
   * name. A rename that finds no file lost the race to another process: that one replays it.
   */
  const adopt = async () => {
    lastAdoption = Date.now();
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return; // no outbox directory yet: nothing to adopt
    }
    for (const name of names) {
      const match = OWNED_FILE.exec(name);
      if (match === null) continue;
      const file = join(dir, name);
      if (adopted.includes(file)) continue;
      // Under this pid: this process's own files, or those of an earlier life with the same pid
      // (an unnamed start time: written by a version that named files by pid alone).
      const mine = match[1] === String(pid) && (match[2] === undefined || match[2] === (ownStart ?? undefined));
      if (mine ? inUse.has(file) : ownerAlive(Number(match[1]), match[2])) continue;
      const claimed = join(dir, `${owner}.adopted-${randomBytes(6).toString('hex')}.jsonl`);
      try {
        await rename(file, claimed);
      } catch {
        continue; // claimed by another process first
      }
      adopted.push(claimed);
    }
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
      const left = result.total - (result.done ? result.total : result.processed);
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

    journal,

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
      started = true;
      if (timer !== null) clearInterval(timer);
      timer = setInterval(() => {
        void (async () => {
          if (Date.now() - lastAdoption >= ADOPT_EVERY_MS) await adopt();
          if (outbox.pending() === 0) return;
          await outbox.replay();
        })().catch((error: unknown) => logger.error({ message: error instanceof Error ? error.message : String(error) }, 'outbox replay failed'));
      }, intervalMs);
      timer.unref();
      void adopt()
        .then(() => (adopted.length > 0 ? outbox.replay() : 0))
        .catch(() => undefined);
    },

    async close() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      await writing;
      if (outbox.pending() > 0) await outbox.replay().catch(() => 0);
      if (outbox.pending() > 0) logger.warn({ pending: outbox.pending(), path }, 'outbox: records stay spooled until the next start');
      await handle?.close();
      handle = null;
      inUse.delete(path);
      // Segments whose records are all written go; the others stay for the next start to replay.
      for (const current of [...segments]) {
        if (current.outstanding === 0) retire(current);
        else logger.warn({ records: current.outstanding, path: current.path }, 'outbox: journaled records not yet written stay for the next start');
      }
      segment = null;
      await journalWriting;
      for (const current of segments) {
        inUse.delete(current.path);
        await current.handle?.close().catch(() => undefined);
        current.handle = null;
      }
    },
  };
  return outbox;
}

/** Makes a new file's name durable (fsync of its directory), where the platform allows it. */
async function syncDirectory(dir: string): Promise<void> {
  let directory: FileHandle | null = null;
  try {
    directory = await open(dir, 'r');
    await directory.sync();
  } catch {
    // Not supported here (some platforms refuse fsync on a directory): the data itself is synced.
  } finally {
    await directory?.close().catch(() => undefined);
  }
}
