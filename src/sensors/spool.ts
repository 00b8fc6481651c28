/**
 * The sensor's spool (spec: Errors, "collector_unreachable" and "spool_full"; Limits, "sensor
 * spool 500 MB and 24 hours", "replay rate after partition 100 envelopes per second").
 *
 * Posture: a finding the collector could not take is on disk before `append` resolves — written
 * to an append-only segment file and fsync'd (appends that arrive together share one fsync). A
 * sensor killed at any instant (SIGKILL, power loss after the fsync) loses nothing `append`
 * confirmed; a record torn by the kill is detected by its length and checksum and cut off at the
 * next open. Delivery is at least once: a record is marked done in the journal only after the
 * collector answered for it, so a kill between the answer and the mark resends it, and the
 * collector's de-duplication by idempotency_key (24 hours) makes that exactly once. The spool
 * treats an envelope as opaque bytes plus {idempotency_key, severity, created_at}.
 *
 * Bounds: live bytes at most `maxBytes` (500 MB) and records at most `maxAgeMs` old (24 hours,
 * the collector's de-duplication window: an older record could no longer be de-duplicated). When
 * full, low then medium severity go first (oldest first, the incoming record included), then high;
 * critical is always kept, past the byte bound if nothing else is left to drop. Every drop is
 * counted by reason and severity, persisted in the journal, and reported until the collector has
 * acknowledged the report.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

export const SPOOL_MAX_BYTES = 500 * 1024 * 1024;
export const SPOOL_MAX_AGE_MS = 24 * 60 * 60_000;
export const SPOOL_SEGMENT_BYTES = 8 * 1024 * 1024;
/** Spec, Limits: replay after a partition at 100 envelopes per second unless the collector sets another rate. */
export const REPLAY_RATE_PER_SECOND = 100;
/** Spec, Limits: a batch of findings holds at most 100. */
export const REPLAY_BATCH = 100;

export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];
export const DROP_REASONS = ['spool_full', 'expired', 'rejected'] as const;
/** spool_full: dropped to make room; expired: older than maxAgeMs; rejected: the collector refused it for good (e.g. sig_invalid). */
export type DropReason = (typeof DROP_REASONS)[number];

export interface SpoolEntry {
  readonly idempotencyKey: string;
  readonly severity: Severity;
  /** Milliseconds since the epoch (the finding's created_at). */
  readonly createdAt: number;
  /** The signed envelope, exactly as it will be sent. */
  readonly envelope: Uint8Array;
}

export interface SpooledRecord extends SpoolEntry {
  /** Position in the spool: increases with every append, never reused. */
  readonly seq: number;
}

export type DropCounts = Record<Severity, number>;
/** What the sensor sends the collector when it is back: drops not yet reported, by reason and severity. */
export type DropReport = Record<DropReason, DropCounts>;

export interface SpoolStats {
  readonly depth: number;
  readonly bytes: number;
  readonly bySeverity: DropCounts;
  readonly oldestCreatedAt: number | null;
  readonly segments: number;
}

export interface Spool {
  /** Resolves once the record is fsync'd ('spooled'), or when the bounds refused it ('dropped', counted). */
  append(entry: SpoolEntry): Promise<'spooled' | 'dropped'>;
  /** The oldest live records, at most `limit`, in append order (expired ones are dropped first). */
  peek(limit: number): Promise<SpooledRecord[]>;
  /** Marks records answered by the collector: 'delivered' (accepted or a duplicate) or 'rejected' (refused for good; counted). */
  acknowledge(outcomes: readonly { seq: number; outcome: 'delivered' | 'rejected' }[]): Promise<void>;
  /** Drops not yet reported (persisted across restarts). */
  dropReport(): DropReport;
  /** Call once the collector has accepted `report`: those counts are no longer reported. */
  markReported(report: DropReport): Promise<void>;
  stats(): SpoolStats;
  close(): Promise<void>;
}

export interface SpoolOptions {
  readonly dir: string;
  readonly maxBytes?: number;
  readonly maxAgeMs?: number;
  readonly segmentBytes?: number;
  readonly now?: () => number;
}

// Record on disk: u32 body length, 4 bytes of SHA-256(body), body.
// Body: u64 seq, f64 createdAt, u8 severity, u16 key length, key (UTF-8), envelope.
const RECORD_HEADER = 8;
const BODY_FIXED = 8 + 8 + 1 + 2;
// Journal entry: u8 type, u8 severity, u8 reason, u8 0, u32 count, u64 seq.
const JOURNAL_ENTRY = 16;
const DONE = 1;
const DROP = 2;
const REPORTED = 3;
const JOURNAL_FILE = 'journal.log';
const JOURNAL_COMPACT_BYTES = 1024 * 1024;
const SEGMENT_NAME = /^segment-(\d{16})\.spool$/;
/** A segment other than the one being written is rewritten once less than this share of it is live. */
const COMPACT_BELOW = 0.5;

interface Live {
  readonly seq: number;
  readonly segment: number;
  readonly offset: number;
  readonly size: number;
  readonly severity: Severity;
  readonly createdAt: number;
  readonly idempotencyKey: string;
}

interface Segment {
  /** Segment files are numbered in creation order (not by sequence: compaction copies old records forward). */
  readonly id: number;
  readonly path: string;
  handle: FileHandle;
  size: number;
  live: number;
  liveBytes: number;
  /** The lowest sequence number of any record in the file, live or not (the journal keeps marks from there on). */
  minSeq: number;
}

function checksum(body: Uint8Array): Buffer {
  return createHash('sha256').update(body).digest().subarray(0, 4);
}

function encodeRecord(seq: number, entry: SpoolEntry): Buffer {
  const key = Buffer.from(entry.idempotencyKey, 'utf8');
  if (key.length > 0xffff) throw new RangeError('idempotency key longer than 65535 bytes');
  const body = Buffer.alloc(BODY_FIXED + key.length + entry.envelope.length);
  body.writeBigUInt64BE(BigInt(seq), 0);
  body.writeDoubleBE(entry.createdAt, 8);
  body.writeUInt8(SEVERITIES.indexOf(entry.severity), 16);
  body.writeUInt16BE(key.length, 17);
  key.copy(body, BODY_FIXED);
  body.set(entry.envelope, BODY_FIXED + key.length);
  const header = Buffer.alloc(RECORD_HEADER);
  header.writeUInt32BE(body.length, 0);
  checksum(body).copy(header, 4);
  return Buffer.concat([header, body]);
}

function journalEntry(type: number, seq: number, severity: Severity, reason: DropReason | 'delivered', count = 1): Buffer {
  const entry = Buffer.alloc(JOURNAL_ENTRY);
  entry.writeUInt8(type, 0);
  entry.writeUInt8(SEVERITIES.indexOf(severity), 1);
  entry.writeUInt8(reason === 'delivered' ? 255 : DROP_REASONS.indexOf(reason), 2);
  entry.writeUInt32BE(count, 4);
  entry.writeBigUInt64BE(BigInt(seq), 8);
  return entry;
}

function emptyCounts(): DropCounts {
  return { low: 0, medium: 0, high: 0, critical: 0 };
}

function emptyReport(): DropReport {
  return { spool_full: emptyCounts(), expired: emptyCounts(), rejected: emptyCounts() };
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Opens (or creates) the spool in `dir`, recovering what a previous process left there. */
export async function openSpool(options: SpoolOptions): Promise<Spool> {
  const dir = options.dir;
  const maxBytes = options.maxBytes ?? SPOOL_MAX_BYTES;
  const maxAgeMs = options.maxAgeMs ?? SPOOL_MAX_AGE_MS;
  const segmentBytes = options.segmentBytes ?? SPOOL_SEGMENT_BYTES;
  const now = options.now ?? Date.now;
  await mkdir(dir, { recursive: true, mode: 0o700 });

  // The journal: which records are done, and the drop counters.
  const journalPath = join(dir, JOURNAL_FILE);
  let journalBytes: Buffer;
  try {
    journalBytes = await readFile(journalPath);
  } catch {
    journalBytes = Buffer.alloc(0);
  }
  const whole = journalBytes.length - (journalBytes.length % JOURNAL_ENTRY);
  const done = new Set<number>();
  const counts = emptyReport();
  for (let offset = 0; offset < whole; offset += JOURNAL_ENTRY) {
    const type = journalBytes.readUInt8(offset);
    const severity = SEVERITIES[journalBytes.readUInt8(offset + 1)];
    const reason = DROP_REASONS[journalBytes.readUInt8(offset + 2)];
    const count = journalBytes.readUInt32BE(offset + 4);
    const seq = Number(journalBytes.readBigUInt64BE(offset + 8));
    if (type === DONE || (type === DROP && seq > 0)) done.add(seq);
    if (severity !== undefined && reason !== undefined) {
      if (type === DROP) counts[reason][severity] += count;
      else if (type === REPORTED) counts[reason][severity] = Math.max(0, counts[reason][severity] - count);
    }
  }
  let journal = await open(journalPath, 'a+', 0o600);
  if (whole !== journalBytes.length) await journal.truncate(whole);
  let journalSize = whole;

  // The segments: every intact record not done is live; a torn tail is cut off. A record found
  // twice (a compaction interrupted before it deleted the old file) is live once.
  const segments = new Map<number, Segment>();
  const found: Live[] = [];
  const live = new Map<number, Live>();
  const bySeverity = new Map<Severity, Map<number, Live>>(SEVERITIES.map((severity) => [severity, new Map()]));
  let liveBytes = 0;
  let nextSeq = 1;
  let lastSegmentId = 0;
  const names = (await readdir(dir)).filter((name) => SEGMENT_NAME.test(name)).sort();
  for (const name of names) {
    const id = Number(SEGMENT_NAME.exec(name)![1]);
    lastSegmentId = Math.max(lastSegmentId, id);
    const path = join(dir, name);
    const bytes = await readFile(path);
    let offset = 0;
    const segment: Segment = { id, path, handle: await open(path, 'r+'), size: 0, live: 0, liveBytes: 0, minSeq: Number.MAX_SAFE_INTEGER };
    while (offset + RECORD_HEADER <= bytes.length) {
      const length = bytes.readUInt32BE(offset);
      if (length < BODY_FIXED || offset + RECORD_HEADER + length > bytes.length) break;
      const body = bytes.subarray(offset + RECORD_HEADER, offset + RECORD_HEADER + length);
      if (!checksum(body).equals(bytes.subarray(offset + 4, offset + 8))) break;
      const seq = Number(body.readBigUInt64BE(0));
      const keyLength = body.readUInt16BE(17);
      if (BODY_FIXED + keyLength > body.length) break;
      nextSeq = Math.max(nextSeq, seq + 1);
      segment.minSeq = Math.min(segment.minSeq, seq);
      if (!done.has(seq)) {
        found.push({
          seq, segment: id, offset, size: RECORD_HEADER + length,
          severity: SEVERITIES[body.readUInt8(16)] ?? 'critical',
          createdAt: body.readDoubleBE(8),
          idempotencyKey: body.subarray(BODY_FIXED, BODY_FIXED + keyLength).toString('utf8'),
        });
      }
      offset += RECORD_HEADER + length;
    }
    if (offset < bytes.length) {
      await segment.handle.truncate(offset);
      await segment.handle.sync();
    }
    segment.size = offset;
    segments.set(id, segment);
  }
  // Oldest first; of a record found twice, the copy in the newer segment.
  found.sort((left, right) => left.seq - right.seq || right.segment - left.segment);
  for (const record of found) {
    if (live.has(record.seq)) continue;
    live.set(record.seq, record);
    bySeverity.get(record.severity)!.set(record.seq, record);
    liveBytes += record.size;
    const segment = segments.get(record.segment)!;
    segment.live++;
    segment.liveBytes += record.size;
  }
  // The journal may name records beyond the last intact one only if they were torn: forget them.
  for (const seq of done) if (seq >= nextSeq) done.delete(seq);

  let active: Segment | undefined = [...segments.values()].at(-1);
  let queue: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };

  async function newSegment(): Promise<Segment> {
    const id = ++lastSegmentId;
    const path = join(dir, `segment-${String(id).padStart(16, '0')}.spool`);
    const segment: Segment = { id, path, handle: await open(path, 'wx+', 0o600), size: 0, live: 0, liveBytes: 0, minSeq: Number.MAX_SAFE_INTEGER };
    await syncDir(dir);
    segments.set(id, segment);
    return segment;
  }

  /** Writes a record's bytes at the end of the active segment (a new one when it is full); the caller syncs `touched`. */
  async function writeRecord(seq: number, bytes: Buffer, touched: Set<Segment>): Promise<{ segment: Segment; offset: number }> {
    if (active === undefined || (active.size > 0 && active.size + bytes.length > segmentBytes)) {
      if (active !== undefined && touched.has(active)) {
        await active.handle.sync();
        touched.delete(active);
      }
      active = await newSegment();
    }
    const segment = active;
    const offset = segment.size;
    await segment.handle.write(bytes, 0, bytes.length, offset);
    touched.add(segment);
    segment.size += bytes.length;
    segment.minSeq = Math.min(segment.minSeq, seq);
    return { segment, offset };
  }

  /** Forgets a live record (done or dropped); the caller writes the journal entry. */
  function forget(record: Live): void {
    live.delete(record.seq);
    bySeverity.get(record.severity)!.delete(record.seq);
    liveBytes -= record.size;
    done.add(record.seq);
    const segment = segments.get(record.segment);
    if (segment !== undefined) {
      segment.live--;
      segment.liveBytes -= record.size;
    }
  }

  /**
   * Gives disk space back: a segment with no live record is deleted; one mostly dead (records
   * delivered or dropped around a few kept ones) has its live records copied forward — fsync'd
   * before the old file goes, and found once at the next open if a crash comes between — so that
   * the files on disk stay near the live bytes. Then the journal is compacted.
   */
  async function reclaim(): Promise<void> {
    const touched = new Set<Segment>();
    const emptied: Segment[] = [];
    for (const segment of [...segments.values()]) {
      if (segment === active) continue;
      if (segment.live > 0 && segment.liveBytes >= segment.size * COMPACT_BELOW) continue;
      for (const record of [...live.values()].filter((candidate) => candidate.segment === segment.id)) {
        const bytes = Buffer.alloc(record.size);
        await segment.handle.read(bytes, 0, record.size, record.offset);
        const { segment: target, offset } = await writeRecord(record.seq, bytes, touched);
        const moved: Live = { ...record, segment: target.id, offset };
        live.set(record.seq, moved);
        bySeverity.get(record.severity)!.set(record.seq, moved);
        target.live++;
        target.liveBytes += record.size;
      }
      emptied.push(segment);
    }
    for (const segment of touched) await segment.handle.sync();
    for (const segment of emptied) {
      await segment.handle.close();
      await rm(segment.path, { force: true });
      segments.delete(segment.id);
    }
    if (emptied.length > 0) await syncDir(dir);
    if (journalSize < JOURNAL_COMPACT_BYTES) return;
    const firstKept = Math.min(...[...segments.values()].map((segment) => segment.minSeq), nextSeq);
    const entries: Buffer[] = [];
    for (const seq of done) {
      if (seq >= firstKept) entries.push(journalEntry(DONE, seq, 'low', 'delivered'));
      else done.delete(seq);
    }
    for (const reason of DROP_REASONS) {
      for (const severity of SEVERITIES) if (counts[reason][severity] > 0) entries.push(journalEntry(DROP, 0, severity, reason, counts[reason][severity]));
    }
    const temporary = `${journalPath}.tmp`;
    const handle = await open(temporary, 'w', 0o600);
    await handle.writeFile(Buffer.concat(entries));
    await handle.sync();
    await handle.close();
    await journal.close();
    await rename(temporary, journalPath);
    await syncDir(dir);
    journal = await open(journalPath, 'a+', 0o600);
    journalSize = entries.length * JOURNAL_ENTRY;
  }

  async function writeJournal(entries: readonly Buffer[]): Promise<void> {
    if (entries.length === 0) return;
    const bytes = Buffer.concat(entries);
    await journal.write(bytes, 0, bytes.length, null);
    await journal.sync();
    journalSize += bytes.length;
  }

  function expireInto(entries: Buffer[]): void {
    // In append order from the oldest, up to the first record still young: created_at follows the
    // append order closely, and this keeps the check linear in what expires.
    const cutoff = now() - maxAgeMs;
    // (Deleting the entry being visited is safe while iterating a Map.)
    for (const record of live.values()) {
      if (record.createdAt >= cutoff) break;
      forget(record);
      counts.expired[record.severity]++;
      entries.push(journalEntry(DROP, record.seq, record.severity, 'expired'));
    }
  }

  /**
   * Makes room for `size` bytes of a record of `severity`: which stored records to drop, or null
   * when the incoming record is the one to drop. Lower severities go first, oldest first.
   */
  function evictionFor(severity: Severity, size: number): Live[] | null {
    let needed = liveBytes + size - maxBytes;
    if (needed <= 0) return [];
    const rank = SEVERITIES.indexOf(severity);
    const victims: Live[] = [];
    // A low or medium record may push out a lower one; high pushes out low and medium; critical also high.
    const droppable: readonly Severity[] = severity === 'critical' ? ['low', 'medium', 'high'] : SEVERITIES.filter((candidate, index) => index < rank && candidate !== 'high');
    for (const candidate of droppable) {
      for (const record of bySeverity.get(candidate)!.values()) {
        if (needed <= 0) break;
        victims.push(record);
        needed -= record.size;
      }
    }
    if (needed > 0 && severity !== 'critical') return null;
    return victims;
  }

  interface Waiting {
    readonly entry: SpoolEntry;
    readonly resolve: (value: 'spooled' | 'dropped') => void;
    readonly reject: (error: unknown) => void;
  }
  let waiting: Waiting[] = [];
  let flushing = false;

  async function flush(batch: Waiting[]): Promise<void> {
    const journalEntries: Buffer[] = [];
    expireInto(journalEntries);
    const outcomes: ('spooled' | 'dropped')[] = [];
    const touched = new Set<Segment>();
    for (const { entry } of batch) {
      if (entry.createdAt < now() - maxAgeMs) {
        counts.expired[entry.severity]++;
        journalEntries.push(journalEntry(DROP, 0, entry.severity, 'expired'));
        outcomes.push('dropped');
        continue;
      }
      const seq = nextSeq;
      const bytes = encodeRecord(seq, entry);
      const victims = evictionFor(entry.severity, bytes.length);
      if (victims === null) {
        counts.spool_full[entry.severity]++;
        journalEntries.push(journalEntry(DROP, 0, entry.severity, 'spool_full'));
        outcomes.push('dropped');
        continue;
      }
      for (const victim of victims) {
        forget(victim);
        counts.spool_full[victim.severity]++;
        journalEntries.push(journalEntry(DROP, victim.seq, victim.severity, 'spool_full'));
      }
      nextSeq++;
      const { segment, offset } = await writeRecord(seq, bytes, touched);
      const record: Live = { seq, segment: segment.id, offset, size: bytes.length, severity: entry.severity, createdAt: entry.createdAt, idempotencyKey: entry.idempotencyKey };
      segment.live++;
      segment.liveBytes += bytes.length;
      live.set(seq, record);
      bySeverity.get(entry.severity)!.set(seq, record);
      liveBytes += bytes.length;
      outcomes.push('spooled');
    }
    for (const segment of touched) await segment.handle.sync();
    await writeJournal(journalEntries);
    batch.forEach((item, index) => item.resolve(outcomes[index]!));
    if (journalEntries.length > 0) await reclaim();
  }

  function pump(): void {
    if (flushing || waiting.length === 0) return;
    flushing = true;
    const batch = waiting;
    waiting = [];
    void exclusive(() => flush(batch)).catch((error: unknown) => {
      for (const item of batch) item.reject(error);
    }).finally(() => {
      flushing = false;
      pump();
    });
  }

  async function readRecord(record: Live): Promise<SpooledRecord> {
    const segment = segments.get(record.segment)!;
    const buffer = Buffer.alloc(record.size);
    await segment.handle.read(buffer, 0, record.size, record.offset);
    const keyLength = buffer.readUInt16BE(RECORD_HEADER + 17);
    return {
      seq: record.seq,
      idempotencyKey: record.idempotencyKey,
      severity: record.severity,
      createdAt: record.createdAt,
      envelope: buffer.subarray(RECORD_HEADER + BODY_FIXED + keyLength),
    };
  }

  return {
    append(entry) {
      if (!SEVERITIES.includes(entry.severity)) return Promise.reject(new RangeError(`unknown severity ${String(entry.severity)}`));
      return new Promise((resolve, reject) => {
        waiting.push({ entry, resolve, reject });
        pump();
      });
    },
    peek: (limit) => exclusive(async () => {
      const entries: Buffer[] = [];
      expireInto(entries);
      await writeJournal(entries);
      const out: SpooledRecord[] = [];
      for (const record of live.values()) {
        if (out.length >= limit) break;
        out.push(await readRecord(record));
      }
      return out;
    }),
    acknowledge: (outcomes) => exclusive(async () => {
      const entries: Buffer[] = [];
      for (const { seq, outcome } of outcomes) {
        const record = live.get(seq);
        if (record === undefined) continue;
        forget(record);
        if (outcome === 'rejected') counts.rejected[record.severity]++;
        entries.push(outcome === 'rejected' ? journalEntry(DROP, seq, record.severity, 'rejected') : journalEntry(DONE, seq, record.severity, 'delivered'));
      }
      await writeJournal(entries);
      await reclaim();
    }),
    dropReport() {
      return { spool_full: { ...counts.spool_full }, expired: { ...counts.expired }, rejected: { ...counts.rejected } };
    },
    markReported: (report) => exclusive(async () => {
      const entries: Buffer[] = [];
      for (const reason of DROP_REASONS) {
        for (const severity of SEVERITIES) {
          const count = Math.min(report[reason][severity], counts[reason][severity]);
          if (count <= 0) continue;
          counts[reason][severity] -= count;
          entries.push(journalEntry(REPORTED, 0, severity, reason, count));
        }
      }
      await writeJournal(entries);
    }),
    stats() {
      const oldest = live.values().next().value?.createdAt ?? null;
      const severities = emptyCounts();
      for (const severity of SEVERITIES) severities[severity] = bySeverity.get(severity)!.size;
      return { depth: live.size, bytes: liveBytes, bySeverity: severities, oldestCreatedAt: oldest, segments: segments.size };
    },
    close: () => exclusive(async () => {
      for (const segment of segments.values()) await segment.handle.close();
      await journal.close();
    }),
  };
}

// ---------------------------------------------------------------------------------------------
// Replay

/** The collector's answer for one record of a batch. 'retry': not taken now (replay stops and keeps it). */
export type ReplayOutcome = 'delivered' | 'rejected' | 'retry';

export interface ReplayClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export interface ReplayResult {
  readonly sent: number;
  readonly delivered: number;
  readonly rejected: number;
  /** 'drained': the spool is empty; 'unreachable': a send failed or asked to retry; 'stopped': stop() was called. */
  readonly ended: 'drained' | 'unreachable' | 'stopped';
}

export interface Replayer {
  /** Envelopes per second; the collector may change it at run time (it applies from the next batch). */
  setRate(perSecond: number): void;
  readonly rate: number;
  /**
   * Sends the spool's records oldest first, in batches of at most REPLAY_BATCH, no faster than the
   * rate (token bucket holding at most one second of tokens). `send` answers one outcome per record
   * or throws when the collector cannot be reached.
   */
  run(send: (records: readonly SpooledRecord[]) => Promise<readonly ReplayOutcome[]>): Promise<ReplayResult>;
  stop(): void;
}

const realClock: ReplayClock = { now: () => performance.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };

export function createReplayer(spool: Spool, options: { rate?: number; batch?: number; clock?: ReplayClock } = {}): Replayer {
  const clock = options.clock ?? realClock;
  const batch = Math.max(1, Math.min(REPLAY_BATCH, options.batch ?? REPLAY_BATCH));
  let rate = REPLAY_RATE_PER_SECOND;
  let stopped = false;
  const setRate = (perSecond: number): void => {
    if (!(Number.isFinite(perSecond) && perSecond > 0)) throw new RangeError('replay rate must be a positive number of envelopes per second');
    rate = perSecond;
  };
  if (options.rate !== undefined) setRate(options.rate);

  return {
    setRate,
    get rate() {
      return rate;
    },
    stop() {
      stopped = true;
    },
    async run(send) {
      stopped = false;
      let tokens = Math.max(1, rate);
      let last = clock.now();
      let sent = 0;
      let delivered = 0;
      let rejected = 0;
      const result = (ended: ReplayResult['ended']): ReplayResult => ({ sent, delivered, rejected, ended });
      for (;;) {
        if (stopped) return result('stopped');
        const at = clock.now();
        tokens = Math.min(Math.max(1, rate), tokens + ((at - last) / 1000) * rate);
        last = at;
        if (tokens < 1) {
          await clock.sleep(Math.ceil(((1 - tokens) / rate) * 1000));
          continue;
        }
        const records = await spool.peek(Math.min(batch, Math.floor(tokens)));
        if (records.length === 0) return result('drained');
        let outcomes: readonly ReplayOutcome[];
        try {
          outcomes = await send(records);
        } catch {
          return result('unreachable');
        }
        tokens -= records.length;
        sent += records.length;
        const answered: { seq: number; outcome: 'delivered' | 'rejected' }[] = [];
        let retry = false;
        records.forEach((record, index) => {
          const outcome = outcomes[index] ?? 'retry';
          if (outcome === 'retry') retry = true;
          else answered.push({ seq: record.seq, outcome });
        });
        await spool.acknowledge(answered);
        for (const answer of answered) {
          if (answer.outcome === 'delivered') delivered++;
          else rejected++;
        }
        if (retry) return result('unreachable');
      }
    },
  };
}
