/**
 * The operator's view of `svc serve` on the embedded default: `npm start` runs the compiled
 * build and stops on SIGTERM sent to the npm process; a second instance on the same DATA_DIR
 * exits at once naming the first one's PID and port (#14 item 7); a busy port exits before any
 * state is touched (#14 item 8); a lock left by a dead process is taken over; the port opens only
 * after the detection engine is warm (#33 item 8).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireDataDirLock, DataDirInUseError, processStartTime } from '../../src/platform/data-dir-lock.ts';
import { freePort } from '../helpers/net.ts';

const root = resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(join(tmpdir(), 'svc-serve-'));
const baseEnv: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warning', WORKERS: '4' };

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `svc serve --json` from the source, run to completion (it is expected to refuse to start). */
function serveOnce(env: NodeJS.ProcessEnv) {
  const started = Date.now();
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve', '--json'], { cwd: root, env: { ...baseEnv, ...env }, encoding: 'utf8', timeout: 60_000 });
  const lines = result.stderr.trim().split('\n').filter((line) => line.startsWith('{'));
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, seconds: (Date.now() - started) / 1000, error: JSON.parse(lines.at(-1) ?? 'null')?.error as { code: string; message: string } | undefined };
}

async function waitForHealth(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 150_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`svc exited with ${child.exitCode} before listening`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 250));
  }
  throw new Error('svc did not become healthy');
}

function portAcceptsConnections(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/health`).then(
    () => true,
    () => false,
  );
}

describe('svc serve started with `npm start` (compiled)', { timeout: 600_000 }, () => {
  const dataDir = join(scratch, 'first');
  let port = 0;
  let npm: ChildProcess;
  let exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  let log = '';

  beforeAll(async () => {
    port = await freePort();
    // npm start builds dist/ first when it is missing or older than src/ (prestart); do that
    // here, outside the health deadline (CI's npm ci has built it already).
    const build = spawnSync(process.execPath, ['scripts/build.js', '--if-stale'], { cwd: root, stdio: 'ignore', timeout: 400_000 });
    expect(build.status).toBe(0);
    npm = spawn('npm', ['start'], { cwd: root, env: { ...baseEnv, LOG_LEVEL: 'info', DATA_DIR: dataDir, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    npm.stdout?.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
    exit = new Promise((resolveExit) => npm.once('exit', (code, signal) => resolveExit({ code, signal })));
    await waitForHealth(port, npm);
  }, 600_000);

  /** The server's JSON log lines so far (npm's own banner left out). */
  const logLines = () =>
    log
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; kinds?: string[]; duration_ms?: number });

  afterAll(() => {
    if (npm.exitCode === null) npm.kill('SIGKILL');
  });

  it('records its PID and port in DATA_DIR/svc.lock', () => {
    const holder = JSON.parse(readFileSync(join(dataDir, 'svc.lock'), 'utf8')) as { pid: number; port: number; role: string };
    expect(holder).toMatchObject({ port, role: 'server' });
    expect(holder.pid).not.toBe(npm.pid); // the server itself, not the npm launcher
  });

  it('opens its port only once the detection engine has run every text kind (#33 item 8: the first requests after a cold start no longer queue behind the tiers\' first-use work)', () => {
    const lines = logLines();
    const warm = lines.findIndex((line) => line.msg === 'detection engine warm');
    const listening = lines.findIndex((line) => line.msg === 'svc listening');
    expect(warm).toBeGreaterThanOrEqual(0);
    expect(listening).toBeGreaterThan(warm);
    expect(lines[warm]?.kinds).toEqual(expect.arrayContaining(['prompt', 'tool_output', 'llm_output', 'tool_definition', 'http']));
    expect(lines[warm]?.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('refuses a second instance on the same DATA_DIR at once, naming the running PID and port', async () => {
    const holder = JSON.parse(readFileSync(join(dataDir, 'svc.lock'), 'utf8')) as { pid: number };
    const second = serveOnce({ DATA_DIR: dataDir, PORT: String(await freePort()) });
    expect(second.status).toBe(1);
    expect(second.error?.code).toBe('DATA_DIR_IN_USE');
    expect(second.error?.message).toContain(`pid ${holder.pid}`);
    expect(second.error?.message).toContain(`port ${port}`);
    expect(second.stdout).toBe('');
    // The running instance still owns the directory and still answers.
    expect(JSON.parse(readFileSync(join(dataDir, 'svc.lock'), 'utf8')).pid).toBe(holder.pid);
    expect(await portAcceptsConnections(port)).toBe(true);
  });

  it('refuses a busy port before creating or opening any state in DATA_DIR', () => {
    const otherDir = join(scratch, 'busy-port');
    const refused = serveOnce({ DATA_DIR: otherDir, PORT: String(port) });
    expect(refused.status).toBe(1);
    expect(refused.error?.code).toBe('PORT_IN_USE');
    expect(refused.stderr.trim().split('\n').filter((line) => line.startsWith('{'))).toHaveLength(1);
    for (const state of ['pglite', 'secrets.json', 'svc.lock', 'svc.sock']) expect(existsSync(join(otherDir, state))).toBe(false);
  });

  it('stops the server when SIGTERM is sent to the npm process: exit 0, port closed, lock released', async () => {
    npm.kill('SIGTERM');
    const result = await exit;
    expect(result.code === 0 || result.signal === 'SIGTERM').toBe(true);
    let open = true;
    for (let attempt = 0; attempt < 40 && open; attempt++) {
      open = await portAcceptsConnections(port);
      if (open) await new Promise((resolveWait) => setTimeout(resolveWait, 250));
    }
    expect(open).toBe(false);
    expect(existsSync(join(dataDir, 'svc.lock'))).toBe(false);
    expect(existsSync(join(dataDir, 'svc.sock'))).toBe(false);
  });
});

describe('a busy port on a fresh DATA_DIR', { timeout: 120_000 }, () => {
  let blocker: Server;
  let port = 0;

  beforeAll(async () => {
    blocker = createServer();
    await new Promise<void>((resolveListen) => blocker.listen(0, '127.0.0.1', () => resolveListen()));
    port = (blocker.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolveClose) => blocker.close(() => resolveClose())));

  it('exits non-zero with one PORT_IN_USE line, without a stack trace and without touching DATA_DIR', () => {
    const dataDir = join(scratch, 'fresh');
    const refused = serveOnce({ DATA_DIR: dataDir, PORT: String(port) });
    expect(refused.status).toBe(1);
    expect(refused.error?.code).toBe('PORT_IN_USE');
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join(dataDir, 'pglite'))).toBe(false);
    expect(existsSync(join(dataDir, 'secrets.json'))).toBe(false);
    expect(existsSync(join(dataDir, 'svc.lock'))).toBe(false);
  });
});

describe('the DATA_DIR lock', () => {
  it('takes over a lock whose process is gone', () => {
    const dataDir = join(scratch, 'stale');
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadPid = Number(dead.stdout);
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, 'svc.lock'), JSON.stringify({ pid: deadPid, started: 1, role: 'server', host: '127.0.0.1', port: 9, since: '2026-01-01T00:00:00.000Z' }));
    const lock = acquireDataDirLock(dataDir, { role: 'server', port: 8080 });
    expect(JSON.parse(readFileSync(join(dataDir, 'svc.lock'), 'utf8'))).toMatchObject({ pid: process.pid, port: 8080 });
    lock.release();
    expect(existsSync(join(dataDir, 'svc.lock'))).toBe(false);
  });

  it('takes over a lock whose PID now belongs to a different process (PID reused)', () => {
    const dataDir = join(scratch, 'reused');
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      const started = processStartTime(other.pid!);
      if (started === null) return; // no /proc: the start time cannot tell PIDs apart here
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(join(dataDir, 'svc.lock'), JSON.stringify({ pid: other.pid, started: started - 1, role: 'server', port: 9, since: 'earlier' }));
      const lock = acquireDataDirLock(dataDir, { role: 'server', port: 8080 });
      expect(JSON.parse(readFileSync(join(dataDir, 'svc.lock'), 'utf8')).pid).toBe(process.pid);
      lock.release();
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('refuses while the owning process is alive', () => {
    const dataDir = join(scratch, 'alive');
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(join(dataDir, 'svc.lock'), JSON.stringify({ pid: other.pid, started: processStartTime(other.pid!), role: 'server', port: 9, since: 'now' }));
      expect(() => acquireDataDirLock(dataDir, { role: 'server', port: 8080 })).toThrow(DataDirInUseError);
    } finally {
      other.kill('SIGKILL');
    }
  });
});
