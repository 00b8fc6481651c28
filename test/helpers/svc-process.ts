/**
 * `svc serve` as a child process on a free loopback port, for tests that need real processes
 * (replicas sharing PostgreSQL + Redis, a SIGKILL mid-delivery). The environment is the test
 * defaults (development, the test secrets, private targets allowed, one worker, warning logs)
 * plus what the caller passes; stdout and stderr are kept for failure messages.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { TEST_ENCRYPTION_KEY, TEST_METRICS_TOKEN, TEST_SECRET_KEY } from './constants.ts';
import { freePort } from './net.ts';

const root = resolve(import.meta.dirname, '../..');

export interface SvcProcess {
  name: string;
  port: number;
  process: ChildProcess;
  output: string[];
}

export interface SvcProcessOptions {
  /** Names the process in failure messages. */
  name?: string;
  /** Added to (and overriding) the test defaults; DATA_DIR is required by every caller's isolation. */
  env: Record<string, string | undefined> & { DATA_DIR: string };
  /** How long to wait for a 200 on /health (tsx processes start slowly on a loaded CI machine). */
  readyTimeoutMs?: number;
}

export async function startSvcProcess(options: SvcProcessOptions): Promise<SvcProcess> {
  // The port was free when freePort looked; another process may take it before svc binds it.
  // svc then exits with PORT_IN_USE before touching any state, and is started again on another.
  for (let attempt = 1; ; attempt++) {
    const started = await startOnce(options, await freePort());
    if (started !== 'port_in_use') return started;
    if (attempt === PORT_ATTEMPTS) throw new Error(`${options.name ?? 'svc'}: ${PORT_ATTEMPTS} free ports were taken before svc could bind them`);
  }
}

/** Tries of a fresh port when the one chosen was taken before svc bound it. */
const PORT_ATTEMPTS = 3;

async function startOnce(options: SvcProcessOptions, port: number): Promise<SvcProcess | 'port_in_use'> {
  const name = options.name ?? 'svc';
  // --json: a start-up error is one JSON line with its code (PORT_IN_USE is retried above).
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve', '--json'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ENVIRONMENT: 'development',
      SECRET_KEY: TEST_SECRET_KEY,
      API_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      METRICS_TOKEN: TEST_METRICS_TOKEN,
      ALLOW_PRIVATE_TARGETS: 'true',
      WORKERS: '1',
      LOG_LEVEL: 'warning',
      ...options.env,
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const deadline = Date.now() + (options.readyTimeoutMs ?? 180_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      if (output.join('').includes('"code":"PORT_IN_USE"')) return 'port_in_use';
      throw new Error(`${name} exited with ${child.exitCode}: ${output.join('').slice(-2000)}`);
    }
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) return { name, port, process: child, output };
    } catch {
      // not listening yet
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 250));
  }
  child.kill('SIGKILL');
  throw new Error(`${name} did not become healthy: ${output.join('').slice(-2000)}`);
}

/** SIGTERM, then waits for the exit (a graceful shutdown). */
export async function stopSvcProcess(svc: SvcProcess | undefined): Promise<void> {
  if (!svc || svc.process.exitCode !== null || svc.process.signalCode !== null) return;
  const exited = new Promise((resolveExit) => svc.process.once('exit', resolveExit));
  svc.process.kill('SIGTERM');
  await exited;
}
