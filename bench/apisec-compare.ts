/**
 * Before/after in one run (issue #16 overhead work): the backend directly, the bare pass-through,
 * svc from an older tree (BENCH_BEFORE_TREE: a checkout with node_modules, e.g. `git archive
 * b203694 | tar -x -C /tmp/before && ln -s $PWD/node_modules /tmp/before/`) and svc from this
 * tree, interleaved by the benchmark's own probe; then requests/s at 16 connections (3 windows).
 * Run under /work/coord/qbench.sh: `BENCH_BEFORE_TREE=/tmp/before npx tsx bench/apisec-compare.ts`.
 */
import { spawn } from 'node:child_process';
import { median, probeLatency, round3, startChild, throughput, type ProbeTarget } from './lib.ts';

const SMALL_JSON = JSON.stringify({ name: 'widget', price: 9.99, tags: ['a', 'b'] });
const backend = await startChild('bench/servers/apisec-backend.ts');
const upstream = `http://127.0.0.1:${backend.port}`;
const passthrough = await startChild('bench/servers/passthrough-any.ts', { BENCH_UPSTREAM_BASE_URL: upstream });
const svcAfter = await startChild('bench/servers/apisec-svc.ts', { BENCH_UPSTREAM_BASE_URL: upstream });
const child = spawn(process.execPath, ['--import', 'tsx', 'bench/servers/apisec-svc.ts'], { cwd: process.env.BENCH_BEFORE_TREE ?? '/tmp/apispeed-before', env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', BENCH_UPSTREAM_BASE_URL: upstream }, stdio: ['ignore', 'pipe', 'inherit'] });
const before = await new Promise<{ port: number; gateway_id: string }>((ok) => { let b = ''; child.stdout!.on('data', (c: Buffer) => { b += c; const l = b.split('\n').find((x) => x.startsWith('{')); if (l) ok(JSON.parse(l)); }); });
const origins: Record<string, { origin: string; prefix: string }> = {
  direct: { origin: upstream, prefix: '' },
  passthrough: { origin: `http://127.0.0.1:${passthrough.port}`, prefix: '' },
  svc_before: { origin: `http://127.0.0.1:${before.port}`, prefix: `/gw/${before.gateway_id}` },
  svc_after: { origin: `http://127.0.0.1:${svcAfter.port}`, prefix: `/gw/${String(svcAfter.info.gateway_id)}` },
};
const targets = (kind: 'get' | 'post'): ProbeTarget[] => Object.entries(origins).map(([name, { origin, prefix }]): ProbeTarget => kind === 'get' ? { name, origin, path: `${prefix}/small`, headers: { accept: 'application/json' } } : { name, origin, path: `${prefix}/echo`, method: 'POST', headers: { 'content-type': 'application/json' }, body: SMALL_JSON });
const out: Record<string, unknown> = {};
// Steady state first (as bench/apisec.ts): each server serves both kinds under load for 3 s.
for (const kind of ['get', 'post'] as const) for (const target of targets(kind)) await throughput(target, { connections: 4, durationSeconds: 3 });
for (const kind of ['get', 'post'] as const) {
  const s = await probeLatency(targets(kind), { rounds: 9, perRound: 400, warmup: 500 });
  out[`latency_${kind}`] = { ...s, before_over_passthrough_p50_ms: round3(s.svc_before!.p50_ms - s.passthrough!.p50_ms), after_over_passthrough_p50_ms: round3(s.svc_after!.p50_ms - s.passthrough!.p50_ms) };
}
for (const kind of ['get', 'post'] as const) {
  const windows: Record<string, number[]> = {};
  for (let round = 0; round < 3; round++) for (const t of targets(kind).filter((x) => x.name !== 'direct')) (windows[t.name] ??= []).push((await throughput(t, { connections: 16, durationSeconds: 3 })).requests_per_s);
  out[`rps16_${kind}`] = Object.fromEntries(Object.entries(windows).map(([k, v]) => [k, median(v)]));
}
process.stdout.write(`${JSON.stringify(out)}\n`);
child.kill('SIGTERM'); await svcAfter.stop(); await passthrough.stop(); await backend.stop();
process.exit(0);
