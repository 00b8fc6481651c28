/**
 * Where a served streamed completion's CPU goes (issue #39 item 2, speed-stream40 round): svc over a
 * checkout's built `dist/` (SVC_DIR, default this checkout; svc-dist.mjs, plain node) and the bare
 * Fastify + undici route (bare-prof.mjs), against the fast fake upstream streaming CHUNKS deltas.
 * Sequential streamed completions on one keep-alive connection: a warm-up of N per server, two
 * unprofiled windows of N per server (whole-process and main-thread CPU from /proc, µs per
 * completion), then N profiled on each (V8's sampling profiler through node:inspector, 100 µs),
 * written to PROFILE_OUT (svc) and PROFILE_OUT_BARE (bare). Read them with phases.mjs.
 *   npm run build && CHUNKS=5 N=1500 PROFILE_OUT=/tmp/svc.cpuprofile PROFILE_OUT_BARE=/tmp/bare.cpuprofile \
 *     npx tsx bench/stream-profile/drive.ts
 *   node bench/stream-profile/phases.mjs /tmp/svc.cpuprofile 1500 <unprofiled main-thread µs>
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { repoRoot, startChild } from '../lib.ts';

const chunks = process.env.CHUNKS ?? '5';
/** MODE=json: the gateway benchmark's JSON completion instead of a streamed one (speed-json41). */
const stream = process.env.MODE !== 'json';
const count = Number(process.env.N ?? 2000);
const svcDir = process.env.SVC_DIR ?? repoRoot;
const ticks = (stat: string) => {
  const fields = readFileSync(stat, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
};
/** Starts a plain-node server script of this folder; resolves with the process and the JSON line it prints. */
async function startScript(name: string, env: Record<string, string>): Promise<{ child: ChildProcess; info: { port: number; api_key?: string } }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL(name, import.meta.url))], { env: { PATH: process.env.PATH ?? '', SVC_DIR: svcDir, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const info = await new Promise<{ port: number; api_key?: string }>((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const line = buffer.split('\n').find((candidate) => candidate.includes('"port"'));
      if (line !== undefined) resolve(JSON.parse(line) as { port: number; api_key?: string });
    });
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
  return { child, info };
}

const upstream = await startChild('bench/gateway-upstream.ts', { BENCH_STREAM_CHUNKS: chunks });
const env = { BENCH_UPSTREAM_BASE_URL: String(upstream.info.base_url) };
const bare = await startScript('./bare-prof.mjs', { ...env, PROFILE_OUT_BARE: process.env.PROFILE_OUT_BARE ?? '/tmp/bare.cpuprofile' });
const svc = await startScript('./svc-dist.mjs', { ...env, PROFILE_OUT: process.env.PROFILE_OUT ?? '/tmp/svc.cpuprofile' });
const prompt = 'Summarize in one sentence why keep-alive connections matter for API gateways.';
interface Target {
  child: ChildProcess;
  port: number;
  path: string;
  authorization: string;
  body: string;
}
const targets: Record<'svc' | 'bare', Target> = {
  bare: { child: bare.child, port: bare.info.port, path: '/v1/chat/completions', authorization: 'Bearer sk-bench-upstream-key', body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }], max_tokens: 64, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) }) },
  svc: { child: svc.child, port: svc.info.port, path: '/api/v1/gateway/completions', authorization: `Bearer ${svc.info.api_key}`, body: JSON.stringify({ provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }], max_tokens: 64, ...(stream ? { stream: true } : {}) }) },
};
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function drive(target: Target, n: number): Promise<{ cpu: number; main: number }> {
  const pool = new Pool(`http://127.0.0.1:${target.port}`, { connections: 1 });
  const pid = target.child.pid!;
  const start = ticks(`/proc/${pid}/stat`);
  const startMain = ticks(`/proc/${pid}/task/${pid}/stat`);
  for (let index = 0; index < n; index++) {
    const response = await pool.request({ path: target.path, method: 'POST', headers: { 'content-type': 'application/json', authorization: target.authorization }, body: target.body });
    const text = await response.body.text();
    if (response.statusCode !== 200 || !text.includes(stream ? '[DONE]' : 'Hello from the bench upstream')) throw new Error(`unexpected answer ${response.statusCode}`);
  }
  await delay(400);
  const result = { cpu: Math.round(((ticks(`/proc/${pid}/stat`) - start) * 10_000) / n), main: Math.round(((ticks(`/proc/${pid}/task/${pid}/stat`) - startMain) * 10_000) / n) };
  await pool.close();
  return result;
}
const load = () => loadavg().map((value) => value.toFixed(2)).join(' ');
console.log('load', load());
await drive(targets.svc, count);
await drive(targets.bare, count);
for (let window = 0; window < 2; window++) for (const name of ['svc', 'bare'] as const) console.log(name, JSON.stringify(await drive(targets[name], count)), 'load', load());
for (const name of ['svc', 'bare'] as const) {
  targets[name].child.kill('SIGUSR2');
  await delay(300);
  await drive(targets[name], count);
  targets[name].child.kill('SIGUSR2');
  await delay(2000);
  console.log(name, 'profiled');
}
console.log('load', load());
svc.child.kill('SIGTERM');
bare.child.kill('SIGTERM');
await upstream.stop();
