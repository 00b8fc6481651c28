/**
 * `npm run bench -- gateway-profile`: where svc's CPU per JSON completion goes, beside the bare
 * Fastify + undici route (issue #13 item 7: "profile and say where each remaining microsecond
 * goes"). The gateway benchmark says how far svc is from its CPU target; this one says what the
 * difference is made of.
 *
 * svc and the bare route run as child processes under V8's sampling profiler (`--cpu-prof`,
 * one sample every 100 µs), beside the fake upstream. After a warm-up under load, each server
 * gets interleaved windows of 10 connections (the Portkey comparison's load). Only the samples
 * inside a server's own windows count (the profile's clock is the monotonic clock this process
 * reads). Each sample's self time goes to one part:
 *   socket_writes      the writev/write system calls (on loopback they carry the receiver's TCP
 *                      work and, on this VM, the wake-up of an idle peer)
 *   embedded_database  PGlite and its WebAssembly (svc's evidence and counters on the default)
 *   gc                 V8's garbage collector
 *   node/<module>      node's own JavaScript (node/_http_outgoing, node/internal/streams, …)
 *   native/<name>      V8 and node natives besides socket writes: native/runMicrotasks (promise
 *                      jobs), native/(program) (V8's own work outside JavaScript), native/regexp
 *                      (every regular expression's compiled code, svc's patterns included), fs …
 *   svc/<module>       svc's code, by module folder (src/gateway/pii → svc/gateway/pii)
 *   lib/<package>      a dependency (fastify, undici, lru-cache, prom-client, …)
 *   idle               the event loop waiting
 *   other              anything else (none expected)
 * Figures are µs per completion (a part's time in the windows / completions served in them);
 * svc's own code is also listed file by file (its 20 largest files).
 * The profiler adds its own cost, so busy time here runs above the gateway benchmark's CPU
 * figure; compare the parts with each other and with the bare route, not with that figure.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild, throughput, type ChildServer, type ProbeTarget } from './lib.ts';

const PROMPT = 'Summarize in one sentence why keep-alive connections matter for API gateways.';
const UPSTREAM_KEY = 'sk-bench-upstream-key';
const SAMPLE_INTERVAL_US = 100;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

type Window = readonly [startUs: number, endUs: number];

const SOCKET_WRITES = new Set(['writev', 'write', 'writeBuffer', 'writeString', 'writeUtf8String', 'writeLatin1String', 'writeAsciiString']);

/** The part of a sample's self time (see the module comment). */
export function partOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(garbage collector)') return 'gc';
    if (SOCKET_WRITES.has(functionName)) return 'socket_writes';
    // V8 names a regular expression's compiled code after its pattern: one part for all of them.
    if (functionName.startsWith('RegExp: ')) return 'native/regexp';
    return `native/${functionName || '(anonymous)'}`;
  }
  if (url.startsWith('node:')) return `node/${url.slice('node:'.length).split('/').slice(0, 2).join('/')}`;
  if (url.startsWith('wasm://') || url.includes('/@electric-sql/pglite/')) return 'embedded_database';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [scope, name] = url.slice(modules + '/node_modules/'.length).split('/');
    return `lib/${scope!.startsWith('@') ? `${scope}/${name}` : scope}`;
  }
  const source = url.indexOf('/src/');
  if (source >= 0) {
    const folders = url.slice(source + '/src/'.length).split('/').slice(0, -1);
    return `svc/${folders.slice(0, 2).join('/') || '(root)'}`;
  }
  return 'other';
}

/** svc's own source file of a frame (`gateway/admission.ts`), or null for any other frame. */
export function svcFileOf(frame: ProfileNode['callFrame']): string | null {
  const source = frame.url.lastIndexOf('/src/');
  return source < 0 || frame.url.includes('/node_modules/') ? null : frame.url.slice(source + '/src/'.length);
}

/** Self time (µs) per part (`classify`; null leaves a sample out), of the samples taken inside `windows`. */
export function partsInWindows(profile: CpuProfile, windows: readonly Window[], classify: (frame: ProfileNode['callFrame']) => string | null = partOf): Map<string, number> {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const parts = new Map<string, number>();
  let at = profile.startTime;
  for (let index = 0; index < profile.samples.length; index++) {
    const delta = profile.timeDeltas[index] ?? 0;
    at += delta;
    if (!windows.some(([start, end]) => at >= start && at <= end)) continue;
    const part = classify(frames.get(profile.samples[index]!)!);
    if (part !== null) parts.set(part, (parts.get(part) ?? 0) + delta);
  }
  return parts;
}

/** The group a part belongs to, for the summary: svc, libraries, runtime (node/ and native/), or the part itself. */
export function groupOf(part: string): string {
  if (part.startsWith('svc/')) return 'svc';
  if (part.startsWith('lib/')) return 'libraries';
  if (part.startsWith('node/') || part.startsWith('native/')) return 'runtime';
  return part;
}

const round1 = (value: number) => Math.round(value * 10) / 10;

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

function readProfile(dir: string): CpuProfile {
  // The main thread's profile is the first one a process writes (workers, if any, follow it).
  const [first] = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile')).sort();
  if (first === undefined) throw new Error(`no CPU profile in ${dir}`);
  return JSON.parse(readFileSync(join(dir, first), 'utf8')) as CpuProfile;
}

interface ServerFigures {
  busy_us_per_completion: number;
  by_group: Record<string, number>;
  us_per_completion: Record<string, number>;
  top_svc_files_us_per_completion?: Record<string, number>;
}

/**
 * One server's figures from its profile: busy time, groups and parts per completion, and svc's
 * largest files when asked; `exact` is µs per completion by part, unrounded (for svc − bare).
 */
function serverFigures(profile: CpuProfile, windows: readonly Window[], served: number, withFiles: boolean): { figures: ServerFigures; exact: Record<string, number> } {
  const parts = partsInWindows(profile, windows);
  const byPart: Record<string, number> = {};
  const groups = new Map<string, number>();
  let busy = 0;
  for (const [part, us] of [...parts].sort((left, right) => right[1] - left[1])) {
    if (us / served >= 0.1) byPart[part] = round1(us / served);
    groups.set(groupOf(part), (groups.get(groupOf(part)) ?? 0) + us);
    if (part !== 'idle') busy += us;
  }
  const figures: ServerFigures = {
    busy_us_per_completion: round1(busy / served),
    by_group: Object.fromEntries([...groups].sort((left, right) => right[1] - left[1]).map(([group, us]) => [group, round1(us / served)])),
    us_per_completion: byPart,
  };
  if (withFiles) {
    // svc's own code file by file, the largest first: where a per-phase budget has to cut.
    const files = [...partsInWindows(profile, windows, svcFileOf)].sort((left, right) => right[1] - left[1]).slice(0, 20);
    figures.top_svc_files_us_per_completion = Object.fromEntries(files.map(([file, us]) => [file, round1(us / served)]));
  }
  return { figures, exact: Object.fromEntries([...parts].map(([part, us]) => [part, us / served])) };
}

export async function runGatewayProfileBench(options: { quick?: boolean; stream?: boolean } = {}) {
  // `--stream`: profile streamed completions (svc's own SSE format; the bare route pipes the upstream's bytes).
  const stream = options.stream ?? process.argv.includes('--stream');
  const streamField = stream ? { stream: true } : {};
  const rounds = options.quick ? 2 : 4;
  const seconds = options.quick ? 2 : 3;
  const children: ChildServer[] = [];
  const dirs: string[] = [];
  const profiled = async (name: string, script: string, env: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), `svc-profile-${name}-`));
    dirs.push(dir);
    const child = await startChild(script, env, ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${SAMPLE_INTERVAL_US}`]);
    children.push(child);
    return { child, dir };
  };
  try {
    const upstream = await startChild('bench/gateway-upstream.ts');
    children.push(upstream);
    const baseUrl = String(upstream.info.base_url);
    const svc = await profiled('svc', 'bench/servers/svc.ts', { BENCH_UPSTREAM_BASE_URL: baseUrl });
    const bare = await profiled('bare', 'bench/servers/bare-fastify-gateway.ts', { BENCH_UPSTREAM_BASE_URL: baseUrl });
    const json = { 'content-type': 'application/json' };
    const targets: Array<{ name: 'svc' | 'bare'; server: { child: ChildServer; dir: string }; target: ProbeTarget }> = [
      {
        name: 'svc',
        server: svc,
        target: {
          name: 'svc',
          origin: `http://127.0.0.1:${svc.child.port}`,
          path: '/api/v1/gateway/completions',
          method: 'POST',
          headers: { ...json, authorization: `Bearer ${String(svc.child.info.api_key)}` },
          body: JSON.stringify({ provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }], max_tokens: 64, ...streamField }),
        },
      },
      {
        name: 'bare',
        server: bare,
        target: {
          name: 'bare',
          origin: `http://127.0.0.1:${bare.child.port}`,
          path: '/v1/chat/completions',
          method: 'POST',
          headers: { ...json, authorization: `Bearer ${UPSTREAM_KEY}` },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }], max_tokens: 64, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) }),
        },
      },
    ];
    // BENCH_PROFILE_WARM_S: a longer warm-up under load (svc's first ~20 s of load are 10-40× its
    // steady state on a busy machine, while models and lexicons load on first use).
    const warmSeconds = Number(process.env.BENCH_PROFILE_WARM_S ?? (options.quick ? 2 : 4));
    for (const { target } of targets) await throughput(target, { connections: 10, durationSeconds: warmSeconds });
    const windows: Record<string, Window[]> = { svc: [], bare: [] };
    const completions: Record<string, number> = { svc: 0, bare: 0 };
    let refused = 0;
    for (let round = 0; round < rounds; round++) {
      for (const { name, target } of round % 2 === 0 ? targets : [...targets].reverse()) {
        const start = monotonicUs();
        const result = await throughput(target, { connections: 10, durationSeconds: seconds });
        windows[name]!.push([start, monotonicUs()]);
        completions[name]! += result.requests - result.non_2xx;
        refused += result.non_2xx + result.errors;
      }
    }
    // The profiles are written when the servers exit.
    await Promise.all([svc.child.stop(), bare.child.stop()]);
    const report: Record<string, ServerFigures> = {};
    const perCompletion: Record<string, Record<string, number>> = {};
    for (const { name, server } of targets) {
      const { figures, exact } = serverFigures(readProfile(server.dir), windows[name]!, Math.max(1, completions[name]!), name === 'svc');
      report[name] = figures;
      perCompletion[name] = exact;
    }
    // svc − bare per part, largest first: what svc's extra CPU is made of.
    const partNames = new Set([...Object.keys(perCompletion.svc!), ...Object.keys(perCompletion.bare!)]);
    partNames.delete('idle');
    const difference = [...partNames]
      .map((part) => [part, round1((perCompletion.svc![part] ?? 0) - (perCompletion.bare![part] ?? 0))] as const)
      .filter(([, us]) => Math.abs(us) >= 0.5)
      .sort((left, right) => right[1] - left[1]);
    return {
      mode: stream ? 'stream' : 'json',
      load: { connections: 10, rounds, seconds_per_window: seconds, sample_interval_us: SAMPLE_INTERVAL_US },
      svc: { completions: completions.svc, ...report.svc },
      bare: { completions: completions.bare, ...report.bare },
      // Parts under 0.5 µs either way are left out.
      svc_minus_bare_us_per_completion: Object.fromEntries(difference),
      refused_or_failed: refused,
    };
  } finally {
    await Promise.all(children.map((child) => child.stop()));
    // BENCH_PROFILE_KEEP=1 keeps the .cpuprofile files (their folders go to stderr) for a closer look.
    if (process.env.BENCH_PROFILE_KEEP) process.stderr.write(`profiles kept in ${dirs.join(' ')}\n`);
    else for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}
