/**
 * Real svc processes for the sensors' end-to-end tests: the CLI run once (`svc org create …`),
 * long-running `svc serve` / `svc sensor` children (their stderr kept for the report when one
 * exits with an error), polling until a condition holds, and the environments the tests give
 * them: the collector's (embedded, or PostgreSQL + Redis when DATABASE_URL / REDIS_URL are set)
 * and a sensor's (nothing of the collector's: a database and a cache it could not reach, and a
 * DATA_DIR that must stay absent).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { TEST_ENCRYPTION_KEY, TEST_SECRET_KEY } from '../helpers/constants.ts';

export const SVC_ROOT = resolve(import.meta.dirname, '../..');

/** The collector's environment: on real engines, configured as a deployment would be (its secrets given, one worker). */
export function collectorEnvironment(dataDir: string, cachePrefix: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warning',
    ...(process.env.DATABASE_URL === undefined ? {} : { SECRET_KEY: TEST_SECRET_KEY, API_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, WORKERS: '1', DATABASE_URL: process.env.DATABASE_URL }),
    ...(process.env.REDIS_URL === undefined ? {} : { REDIS_URL: process.env.REDIS_URL, CACHE_PREFIX: `${cachePrefix}:${process.pid}:` }),
    ...extra,
  };
}

/** A sensor's environment: a database and a cache it could not reach, and a DATA_DIR where an embedded database would be created. */
export function unreachableStorageEnvironment(dataDir: string): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warning', DATA_DIR: dataDir, DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/none', REDIS_URL: 'redis://127.0.0.1:1' };
}

/** Runs `svc ARGS --json`-style commands to completion; the last JSON line of stdout (or stderr on failure). */
export function runSvc(args: string[], env: NodeJS.ProcessEnv) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: SVC_ROOT, env, encoding: 'utf8', timeout: 150_000 });
  const lines = (result.status === 0 ? result.stdout : result.stderr).trim().split('\n').filter((line) => line.startsWith('{'));
  return { status: result.status, json: JSON.parse(lines[lines.length - 1] ?? 'null') };
}

/** The long-running svc processes of one test file; `stopAll` in its afterAll. */
export class SvcProcesses {
  readonly children: ChildProcess[] = [];

  start(args: string[], env: NodeJS.ProcessEnv, onError?: (text: string) => void): ChildProcess {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: SVC_ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let errors = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      errors = (errors + chunk.toString()).slice(-4_000);
      onError?.(chunk.toString());
    });
    child.on('exit', (code) => {
      if (code !== 0 && code !== null) process.stderr.write(`[${args.slice(0, 3).join(' ')} exited ${code}] ${errors}\n`);
    });
    this.children.push(child);
    return child;
  }

  async stopAll(): Promise<void> {
    for (const child of this.children) await stopProcess(child);
  }
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  child.kill('SIGTERM');
  await exited;
}

/** Polls `probe` until it answers something other than undefined (errors count as not yet). */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch {
      // not there yet
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export const healthy = (url: string) => until(`${url}/health`, async () => ((await fetch(`${url}/health`)).ok ? true : undefined));

/**
 * The order of a sensor's start-up log lines (pino JSON on stderr): where `detection engine warm`
 * and `sensor listening` fall, and the kinds the warm-up ran. Waits for the listening line.
 */
export async function startupOrder(logged: () => string): Promise<{ warm: number; listening: number; kinds: unknown }> {
  return until('the sensor listening line', async () => {
    const lines = logged().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { msg?: string; kinds?: unknown });
    const listening = lines.findIndex((line) => line.msg === 'sensor listening');
    if (listening < 0) return undefined;
    const warm = lines.findIndex((line) => line.msg === 'detection engine warm');
    return { warm, listening, kinds: lines[warm]?.kinds };
  }, 30_000);
}

/** Every file under a directory, recursively. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]));
}
