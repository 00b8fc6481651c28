/**
 * One owner per data directory. PGlite lets exactly one process open a data directory; a second
 * `svc serve` (or a CLI command run while no server answers on the control socket) on the same
 * DATA_DIR would open it too, take over the control socket and lose writes. So the process that
 * will own DATA_DIR first creates DATA_DIR/svc.lock with O_EXCL, holding its PID, the PID's start
 * time (Linux: /proc/<pid>/stat, so a PID reused after a crash is not mistaken for the owner),
 * its role and port. A second process finds the lock held by a live owner and stops at once;
 * a lock whose owner is gone is stale and is taken over.
 *
 * Posture: the lock is advisory between svc processes (it cannot stop someone opening the
 * directory by hand) and errs towards "busy": an owner whose liveness cannot be judged counts as
 * alive, and the message says which file to remove.
 */
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export type LockRole = 'server' | 'cli';

export interface LockHolder {
  pid: number;
  /** Process start time in clock ticks since boot (Linux), null where it cannot be read. */
  started: number | null;
  role: LockRole;
  host: string | null;
  port: number | null;
  since: string;
}

export interface DataDirLock {
  readonly path: string;
  /** Records the port actually bound (PORT=0 lets the kernel choose). */
  setPort(port: number): void;
  /** Removes the lock if this process still holds it. Idempotent. */
  release(): void;
}

/** Thrown when a live process holds DATA_DIR. `code` is stable; the message is one line. */
export class DataDirInUseError extends Error {
  readonly code = 'DATA_DIR_IN_USE';
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    const where = holder.port === null ? 'no port' : `port ${holder.port}`;
    super(
      `DATA_DIR ${dataDir} is in use by svc ${holder.role === 'server' ? 'serve' : 'CLI command'} pid ${holder.pid} (${where}, since ${holder.since}); ` +
        `stop that one, or start this one with another DATA_DIR (and another PORT, e.g. DATA_DIR=${dataDir}-2 PORT=${(holder.port ?? 8080) + 1}); ` +
        `if pid ${holder.pid} is not svc, remove ${join(dataDir, LOCK_FILE)}`,
    );
    this.name = 'DataDirInUseError';
  }
}

export const LOCK_FILE = 'svc.lock';

/** Start time of a process in clock ticks since boot, from /proc (Linux); null elsewhere. */
export function processStartTime(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (comm) may hold spaces and parentheses: fields after the last ')' start at field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const value = Number(fields[19]); // field 22, starttime
    return Number.isFinite(value) ? value : null;
  } catch {
    return null;
  }
}

function isAlive(holder: LockHolder): boolean {
  if (holder.pid === process.pid) return false; // a lock left by an earlier life of this PID (containers reuse PIDs)
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    // EPERM: the process exists under another user; judged by the start time below.
  }
  if (holder.started === null) return true;
  const started = processStartTime(holder.pid);
  return started === null || started === holder.started;
}

function readHolder(path: string): LockHolder | null {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockHolder>;
    if (typeof parsed.pid !== 'number' || !Number.isInteger(parsed.pid) || parsed.pid <= 0) return null;
    return {
      pid: parsed.pid,
      started: typeof parsed.started === 'number' ? parsed.started : null,
      role: parsed.role === 'cli' ? 'cli' : 'server',
      host: typeof parsed.host === 'string' ? parsed.host : null,
      port: typeof parsed.port === 'number' ? parsed.port : null,
      since: typeof parsed.since === 'string' ? parsed.since : 'unknown',
    };
  } catch {
    return null;
  }
}

function sameHolder(a: LockHolder | null, b: LockHolder | null): boolean {
  return a !== null && b !== null && a.pid === b.pid && a.started === b.started && a.since === b.since;
}

/**
 * Takes DATA_DIR/svc.lock for this process, creating DATA_DIR (0700) if needed. Throws
 * DataDirInUseError when a live process holds it; takes over a stale lock.
 */
export function acquireDataDirLock(dataDir: string, owner: { role: LockRole; host?: string | null; port?: number | null }): DataDirLock {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, LOCK_FILE);
  const mine: LockHolder = {
    pid: process.pid,
    started: processStartTime(process.pid),
    role: owner.role,
    host: owner.host ?? null,
    port: owner.port ?? null,
    since: new Date().toISOString(),
  };

  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, JSON.stringify(mine));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      return handle(path, mine);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = readHolder(path);
    if (holder === null) {
      // Being written right now (create and write are two steps), or damaged: look again shortly,
      // and after a few looks treat an unreadable lock as stale.
      if (attempt < 5) {
        sleepSync(20);
        continue;
      }
    } else if (isAlive(holder)) {
      throw new DataDirInUseError(dataDir, holder);
    }
    // Stale: move it aside atomically, then make sure what was moved is what was judged stale —
    // a concurrent starter may have taken over in between, and its fresh lock must stay.
    const aside = `${path}.stale-${process.pid}`;
    try {
      renameSync(path, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    const moved = readHolder(aside);
    if (holder !== null && !sameHolder(moved, holder)) {
      try {
        linkSync(aside, path); // put the other starter's lock back
      } catch {
        // someone holds a newer lock already; theirs stands
      }
    }
    unlinkSync(aside);
  }
  const holder = readHolder(path);
  if (holder !== null) throw new DataDirInUseError(dataDir, holder);
  throw new Error(`could not take ${path}; remove it if no svc process uses ${dataDir}`);
}

function handle(path: string, mine: LockHolder): DataDirLock {
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.removeListener('exit', release);
    if (sameHolder(readHolder(path), mine)) {
      try {
        unlinkSync(path);
      } catch {
        // already gone
      }
    }
  };
  process.once('exit', release);
  return {
    path,
    setPort(port) {
      if (released) return;
      mine.port = port;
      const temporary = `${path}.${process.pid}.tmp`;
      writeFileSync(temporary, JSON.stringify(mine), { mode: 0o600 });
      renameSync(temporary, path);
    },
    release,
  };
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
