/**
 * PostgreSQL and Redis instances owned by one fault test: started on free loopback ports from
 * the Debian binaries (.ci/run installs them), so the test can stop, kill and restart them.
 * PostgreSQL runs as the `postgres` user through runuser, so this needs root; `faultSupport()`
 * says why the suite cannot run when it cannot.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/net.ts';

export function faultSupport(): { ok: true; pgBin: string } | { ok: false; reason: string } {
  if (process.getuid?.() !== 0) return { ok: false, reason: 'needs root (PostgreSQL runs as the postgres user via runuser)' };
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a)) : [];
  const pgBin = versions.map((version) => `/usr/lib/postgresql/${version}/bin`).find((bin) => existsSync(join(bin, 'initdb')));
  if (pgBin === undefined) return { ok: false, reason: 'PostgreSQL binaries not installed (apt-get install postgresql)' };
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    execFileSync('id', ['postgres'], { stdio: 'ignore' });
  } catch {
    return { ok: false, reason: 'redis-server or the postgres user is missing' };
  }
  return { ok: true, pgBin };
}

const PASSWORD = 'fault-suite-password';
/** Tries of a fresh port when the one chosen was taken before the server bound it. */
const PORT_ATTEMPTS = 3;

export interface PostgresInstance {
  url: string;
  stop(): void;
  start(): void;
  destroy(): void;
}

export async function startPostgres(pgBin: string): Promise<PostgresInstance> {
  const work = mkdtempSync(join(tmpdir(), 'svc-fault-pg-'));
  const data = join(work, 'data');
  const sockets = join(work, 'sock');
  execFileSync('mkdir', ['-p', data, sockets]);
  writeFileSync(join(work, 'pw'), `${PASSWORD}\n`);
  execFileSync('chown', ['-R', 'postgres', work]);
  const asPostgres = (command: string, args: string[]) => execFileSync('runuser', ['-u', 'postgres', '--', join(pgBin, command), ...args], { stdio: 'ignore' });
  asPostgres('initdb', ['-D', data, '-U', 'postgres', `--pwfile=${join(work, 'pw')}`, '--auth-local=trust', '--auth-host=scram-sha-256']);
  let port = 0;
  const start = () =>
    asPostgres('pg_ctl', ['-D', data, '-l', join(work, 'log'), '-w', '-o', `-p ${port} -k ${sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`, 'start']);
  // The port is chosen just before the first start and chosen again if another process took it
  // meanwhile (pg_ctl then fails: PostgreSQL could not bind it). Restarts keep the port.
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      start();
      break;
    } catch (error) {
      if (attempt === PORT_ATTEMPTS || !readFileSync(join(work, 'log'), 'utf8').includes('could not bind')) throw error;
    }
  }
  execFileSync('runuser', ['-u', 'postgres', '--', 'psql', '-h', sockets, '-p', String(port), '-U', 'postgres', '-qc', 'CREATE DATABASE svc_fault'], { stdio: 'ignore' });
  return {
    url: `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/svc_fault`,
    stop: () => asPostgres('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
    start,
    destroy() {
      try {
        asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(work, { recursive: true, force: true });
    },
  };
}

export interface RedisInstance {
  url: string;
  kill(): void;
  start(): Promise<void>;
  destroy(): void;
}

export async function startRedis(): Promise<RedisInstance> {
  let port = 0;
  let child: ChildProcess | null = null;
  /** Starts redis-server on `port`; false when it exited instead (the port was taken). */
  const launch = async (): Promise<boolean> => {
    const started = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    child = started;
    for (let attempt = 0; attempt < 50; attempt++) {
      if (started.exitCode !== null) return false;
      try {
        execFileSync('redis-cli', ['-p', String(port), 'ping'], { stdio: 'ignore' });
        // The answer may come from another server on a taken port, before this one gives up.
        await new Promise((resolve) => setTimeout(resolve, 100));
        if (started.exitCode !== null) return false;
        return true;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    throw new Error('redis-server did not start');
  };
  const start = async () => {
    if (!(await launch())) throw new Error(`redis-server could not bind port ${port} again`);
  };
  // A port chosen again if another process took it before redis-server bound it; restarts keep it.
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    if (await launch()) break;
    if (attempt === PORT_ATTEMPTS) throw new Error('redis-server found no free port');
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    kill() {
      child?.kill('SIGKILL');
      child = null;
    },
    start,
    destroy() {
      child?.kill('SIGKILL');
    },
  };
}
