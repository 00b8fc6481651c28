/**
 * Where a JSON (or, with --stream, streamed) completion's CPU moved between two checkouts: svc
 * from BENCH_BEFORE_DIR (another checkout with its own node_modules) and svc from this one, both
 * under V8's sampling profiler (`--cpu-prof`, one sample every 100 µs) beside the fast fake
 * upstream, driven in interleaved windows of 10 connections (the gateway benchmark's load). Only
 * the samples inside a server's own windows count. Each sample's self time goes to its function
 * (name and file, the file relative to src/ or node_modules/ so the two checkouts' frames match),
 * to its file, and to its part (gateway-profile.ts's `partOf`: gc, native/regexp, svc/<module>…).
 * Prints µs per completion of each, before and after, and after − before, largest change first.
 * The profiler adds its own cost, and on a shared machine the figures are noisy: compare the two
 * servers' parts with each other, not with the gateway benchmark's CPU figure.
 *   BENCH_BEFORE_DIR=/tmp/before npx tsx bench/gateway-profile-before-after.ts [--quick] [--stream]
 * BENCH_ROUNDS (default 4, 2 with --quick), BENCH_WINDOW_S (3, 2), BENCH_PROFILE_WARM_S (8, 4),
 * BENCH_TOP (how many functions to list, default 30).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { partOf, partsInWindows } from './gateway-profile.ts';
import { startChild, throughput, type ChildServer, type ProbeTarget } from './lib.ts';

const beforeDir = process.env.BENCH_BEFORE_DIR;
if (!beforeDir) throw new Error('set BENCH_BEFORE_DIR to a checkout of the code to compare with (its node_modules installed)');
const quick = process.argv.includes('--quick');
const stream = process.argv.includes('--stream');
const rounds = Number(process.env.BENCH_ROUNDS ?? (quick ? 2 : 4));
const seconds = Number(process.env.BENCH_WINDOW_S ?? (quick ? 2 : 3));
const warmSeconds = Number(process.env.BENCH_PROFILE_WARM_S ?? (quick ? 4 : 8));
const top = Number(process.env.BENCH_TOP ?? 30);
const PROMPT = 'Summarize in one sentence why keep-alive connections matter for API gateways.';
const SAMPLE_INTERVAL_US = 100;

type Frame = { functionName: string; url: string };
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: Frame }>;
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A frame's file, the same in both checkouts: `src/gateway/routes.ts`, `fastify/lib/reply.js`, `node:internal/…`. */
function fileOf(url: string): string {
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) return url.slice(modules + '/node_modules/'.length);
  const source = url.lastIndexOf('/src/');
  if (source >= 0) return url.slice(source + 1);
  return url === '' ? '(native)' : url;
}
const functionOf = (frame: Frame) => `${frame.functionName || '(anonymous)'} ${fileOf(frame.url)}`;

const load = () => loadavg().map((value) => Math.round(value * 100) / 100);
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
const round1 = (value: number) => Math.round(value * 10) / 10;

function readProfile(dir: string): CpuProfile {
  const [first] = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile')).sort();
  if (first === undefined) throw new Error(`no CPU profile in ${dir}`);
  return JSON.parse(readFileSync(join(dir, first), 'utf8')) as CpuProfile;
}

/** before, after and after − before (µs per completion) of each key, the largest change first, `limit` rows. */
function compare(before: Map<string, number>, after: Map<string, number>, served: { before: number; after: number }, limit: number) {
  const keys = new Set([...before.keys(), ...after.keys()]);
  keys.delete('idle');
  keys.delete('(idle) (native)');
  return Object.fromEntries(
    [...keys]
      .map((key) => {
        const was = (before.get(key) ?? 0) / served.before;
        const now = (after.get(key) ?? 0) / served.after;
        return [key, { before: round1(was), after: round1(now), change: round1(now - was) }] as const;
      })
      .sort((left, right) => Math.abs(right[1].change) - Math.abs(left[1].change))
      .slice(0, limit),
  );
}

const results: Record<string, unknown> = { load_average_start: load(), mode: stream ? 'stream' : 'json', rounds, seconds_per_window: seconds, sample_interval_us: SAMPLE_INTERVAL_US };
const children: ChildServer[] = [];
const dirs: string[] = [];
try {
  const upstream = await startChild('bench/gateway-upstream.ts');
  children.push(upstream);
  const env = { BENCH_UPSTREAM_BASE_URL: String(upstream.info.base_url) };
  const profiled = async (name: string, script: string) => {
    const dir = mkdtempSync(join(tmpdir(), `svc-profile-${name}-`));
    dirs.push(dir);
    const child = await startChild(script, env, ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${SAMPLE_INTERVAL_US}`]);
    children.push(child);
    return { child, dir };
  };
  const servers = { before: await profiled('before', join(beforeDir, 'bench/servers/svc.ts')), after: await profiled('after', 'bench/servers/svc.ts') };
  const body = JSON.stringify({ provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }], max_tokens: 64, ...(stream ? { stream: true } : {}) });
  const targetOf = (name: 'before' | 'after'): ProbeTarget => ({
    name,
    origin: `http://127.0.0.1:${servers[name].child.port}`,
    path: '/api/v1/gateway/completions',
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${String(servers[name].child.info.api_key)}` },
    body,
  });
  const names = ['before', 'after'] as const;
  for (const name of names) await throughput(targetOf(name), { connections: 10, durationSeconds: warmSeconds });
  const windows: Record<string, Array<readonly [number, number]>> = { before: [], after: [] };
  const served = { before: 0, after: 0 };
  let refused = 0;
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      const start = monotonicUs();
      const result = await throughput(targetOf(name), { connections: 10, durationSeconds: seconds });
      windows[name]!.push([start, monotonicUs()]);
      served[name] += result.requests - result.non_2xx;
      refused += result.non_2xx + result.errors;
    }
  }
  await Promise.all(names.map((name) => servers[name].child.stop()));
  const profiles = { before: readProfile(servers.before.dir), after: readProfile(servers.after.dir) };
  const by = (classify: (frame: Frame) => string | null) => ({
    before: partsInWindows(profiles.before, windows.before!, classify),
    after: partsInWindows(profiles.after, windows.after!, classify),
  });
  const busy = (parts: Map<string, number>, count: number) => round1([...parts].filter(([part]) => part !== 'idle').reduce((sum, [, us]) => sum + us, 0) / count);
  const parts = by(partOf);
  const files = by((frame) => fileOf(frame.url));
  const functions = by(functionOf);
  Object.assign(results, {
    completions: served,
    refused_or_failed: refused,
    busy_us_per_completion: { before: busy(parts.before, served.before), after: busy(parts.after, served.after) },
    parts_us_per_completion: compare(parts.before, parts.after, served, top),
    files_us_per_completion: compare(files.before, files.after, served, top),
    functions_us_per_completion: compare(functions.before, functions.after, served, top),
  });
} finally {
  await Promise.all(children.map((child) => child.stop()));
  if (process.env.BENCH_PROFILE_KEEP) process.stderr.write(`profiles kept in ${dirs.join(' ')}\n`);
  else for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
results.load_average_end = load();
process.stdout.write(`${JSON.stringify(results, null, 1)}\n`);
