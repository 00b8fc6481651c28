/**
 * Benchmark helpers. Servers under test run as child processes (so the load generator does not
 * share their event loop); latency is measured with a sequential keep-alive probe at hrtime
 * resolution (autocannon reports whole milliseconds, too coarse for sub-millisecond overhead),
 * and throughput with autocannon. Targets are interleaved in rounds so that drift on this
 * shared machine hits both sides alike.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import autocannon from 'autocannon';
import { Pool } from 'undici';

export const repoRoot = resolve(import.meta.dirname, '..');

/** A TCP port free on 127.0.0.1 at the time of asking (for a child server to bind). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

export interface ChildServer {
  port: number;
  info: Record<string, unknown>;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `tsx <script>` (after `nodeArgs`, e.g. profiler flags); the script prints one JSON line `{ "port": n, … }` when ready. */
export async function startChild(script: string, env: Record<string, string> = {}, nodeArgs: readonly string[] = []): Promise<ChildServer> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const info = await new Promise<Record<string, unknown>>((resolveInfo, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      const line = buffer.split('\n').find((candidate) => candidate.startsWith('{') && candidate.includes('"port"'));
      if (line) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolveInfo(JSON.parse(line) as Record<string, unknown>);
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before it was ready`)));
  });
  return {
    port: Number(info.port),
    info,
    process: child,
    async stop() {
      if (child.exitCode !== null) return;
      await new Promise<void>((resolveExit) => {
        child.once('exit', () => resolveExit());
        child.kill('SIGTERM');
      });
    },
  };
}

export interface ProbeTarget {
  name: string;
  origin: string;
  path: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Expected status; any other aborts the run (a benchmark of errors measures nothing). */
  status?: number;
}

export { seededRandom } from '../scripts/seeded-random.ts';

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

/** The median of unsorted values (NaN for none); the list is not changed. */
export function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

/**
 * CPU of this process (µs, user + system) per call of two variants of one piece of code, measured
 * in blocks of `perBlock` calls: `warmup` pairs of blocks first, then `rounds` pairs in which the
 * variant that goes first alternates, so drift in the machine's load hits both alike. Returns each
 * round's figure for either variant and the after ÷ before ratio of the round.
 */
export async function interleavedCpu(before: () => Promise<unknown>, after: () => Promise<unknown>, options: { rounds: number; perBlock: number; warmup?: number }): Promise<{ before: number[]; after: number[]; ratios: number[] }> {
  const block = async (call: () => Promise<unknown>): Promise<number> => {
    const start = process.cpuUsage();
    for (let i = 0; i < options.perBlock; i++) await call();
    const used = process.cpuUsage(start);
    return (used.user + used.system) / options.perBlock;
  };
  for (let w = 0; w < (options.warmup ?? 5); w++) {
    await block(before);
    await block(after);
  }
  const figures = { before: [] as number[], after: [] as number[], ratios: [] as number[] };
  for (let round = 0; round < options.rounds; round++) {
    const beforeFirst = round % 2 === 0;
    const first = await block(beforeFirst ? before : after);
    const second = await block(beforeFirst ? after : before);
    const [b, a] = beforeFirst ? [first, second] : [second, first];
    figures.before.push(b);
    figures.after.push(a);
    figures.ratios.push(a / b);
  }
  return figures;
}

const round3 = (value: number) => Math.round(value * 1000) / 1000;

/**
 * A settled warm-up: measures windows (each returns one figure, or null to stop) until the figures
 * of two windows in a row agree within `tolerance` of the smaller one's size (at least `min`
 * windows, at most `max`). Returns every window's figure and whether the last two agreed. The
 * first windows run on code V8 has not optimised yet; a fixed count of warm-up calls can stop
 * before the code under test is hot, so its first measured rounds read a cold JIT.
 */
export async function settleWindows(window: () => Promise<number | null>, options: { min?: number; max?: number; tolerance?: number } = {}): Promise<{ figures: number[]; settled: boolean }> {
  const min = options.min ?? 3, max = options.max ?? 12, tolerance = options.tolerance ?? 0.15;
  const figures: number[] = [];
  while (figures.length < max) {
    const figure = await window();
    if (figure === null) break;
    figures.push(figure);
    if (figures.length < Math.max(2, min)) continue;
    const [previous, last] = figures.slice(-2) as [number, number];
    if (Math.abs(last - previous) <= tolerance * Math.min(Math.abs(last), Math.abs(previous))) return { figures, settled: true };
  }
  return { figures, settled: false };
}

/** Sequential keep-alive requests, interleaved over targets in rounds; latencies in ms. */
export async function probeLatency(targets: ProbeTarget[], options: { rounds?: number; perRound?: number; warmup?: number } = {}) {
  const rounds = options.rounds ?? 10;
  const perRound = options.perRound ?? 500;
  const samples = new Map<string, number[]>(targets.map((target) => [target.name, []]));
  const pools = new Map(targets.map((target) => [target.name, new Pool(target.origin, { connections: 1, pipelining: 1 })]));
  const once = async (target: ProbeTarget): Promise<number> => {
    const started = process.hrtime.bigint();
    const response = await pools.get(target.name)!.request({
      path: target.path,
      method: target.method ?? 'GET',
      headers: target.headers ?? {},
      ...(target.body === undefined ? {} : { body: target.body }),
    });
    await response.body.dump();
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    if (response.statusCode !== (target.status ?? 200)) throw new Error(`${target.name}: status ${response.statusCode}`);
    return elapsed;
  };
  for (const target of targets) for (let i = 0; i < (options.warmup ?? 300); i++) await once(target);
  for (let round = 0; round < rounds; round++) {
    for (const target of targets) {
      const list = samples.get(target.name)!;
      for (let i = 0; i < perRound; i++) list.push(await once(target));
    }
  }
  await Promise.all([...pools.values()].map((pool) => pool.close()));
  return summarize(samples);
}

/** p50/p99 (ms, 3 decimals) and count of each target's samples. */
export function summarize(samples: Map<string, number[]>): Record<string, { p50_ms: number; p99_ms: number; n: number }> {
  const result: Record<string, { p50_ms: number; p99_ms: number; n: number }> = {};
  for (const [name, list] of samples) {
    list.sort((a, b) => a - b);
    result[name] = { p50_ms: round3(percentile(list, 50)), p99_ms: round3(percentile(list, 99)), n: list.length };
  }
  return result;
}

/** Throughput with autocannon: requests/s and non-2xx count. */
export async function throughput(target: ProbeTarget, options: { connections: number; durationSeconds?: number }) {
  const result = await autocannon({
    url: `${target.origin}${target.path}`,
    method: target.method ?? 'GET',
    headers: target.headers ?? {},
    ...(target.body === undefined ? {} : { body: target.body }),
    connections: options.connections,
    duration: options.durationSeconds ?? 5,
  });
  return { requests_per_s: Math.round(result.requests.average), requests: result.requests.total, non_2xx: result.non2xx, errors: result.errors, latency_p50_ms: result.latency.p50, latency_p99_ms: result.latency.p99, latency_max_ms: result.latency.max };
}

export { round3 };
