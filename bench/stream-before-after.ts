/**
 * Before/after of svc's streamed completions in one run (issue #39 item 2): the bare Fastify
 * route that pipes the upstream's bytes, svc from another checkout (BENCH_BEFORE_DIR, e.g.
 * `git worktree add /tmp/before <commit>` with node_modules linked) and svc from this one, each
 * against the fast fake upstream streaming BENCH_STREAM_CHUNKS deltas (5 and 200 by default:
 * the gateway benchmark's short answer and a long one in small deltas, where per-chunk work
 * shows). User + system CPU per streamed completion of each server over interleaved rounds of
 * sequential requests (/proc/<pid>/stat, 10 ms ticks), the ratios to the bare route in the same
 * round, and the load average.
 *   BENCH_BEFORE_DIR=/tmp/before npx tsx bench/stream-before-after.ts [--quick]
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { round3, startChild, type ChildServer } from './lib.ts';

const beforeDir = process.env.BENCH_BEFORE_DIR;
if (!beforeDir) throw new Error('set BENCH_BEFORE_DIR to a checkout of the code to compare with (its node_modules installed or linked)');
const quick = process.argv.includes('--quick');
const chunkCounts = (process.env.BENCH_STREAM_CHUNKS ?? '5,200').split(',').map(Number);
const cpuTicks = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
};
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
const load = () => loadavg().map((value) => Math.round(value * 100) / 100);
const prompt = 'Summarize in one sentence why keep-alive connections matter for API gateways.';
const results: Record<string, unknown> = { load_average_start: load() };
for (const chunks of chunkCounts) {
  const children: ChildServer[] = [];
  try {
    const upstream = await startChild('bench/gateway-upstream.ts', { BENCH_STREAM_CHUNKS: String(chunks) });
    children.push(upstream);
    const env = { BENCH_UPSTREAM_BASE_URL: String(upstream.info.base_url) };
    const bare = await startChild('bench/servers/bare-fastify-gateway.ts', env);
    const before = await startChild(join(beforeDir, 'bench/servers/svc.ts'), env);
    const after = await startChild('bench/servers/svc.ts', env);
    children.push(bare, before, after);
    const targets = [
      { name: 'bare', server: bare, path: '/v1/chat/completions', authorization: 'Bearer sk-bench-upstream-key', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }], max_tokens: 64, stream: true, stream_options: { include_usage: true } } },
      { name: 'before', server: before, path: '/api/v1/gateway/completions', authorization: `Bearer ${String(before.info.api_key)}`, body: { provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }], max_tokens: 64, stream: true } },
      { name: 'after', server: after, path: '/api/v1/gateway/completions', authorization: `Bearer ${String(after.info.api_key)}`, body: { provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }], max_tokens: 64, stream: true } },
    ];
    const perRound = quick ? 300 : 1000;
    const rounds = quick ? 3 : 6;
    const cpu: Record<string, number[]> = {};
    let failed = 0;
    for (let round = -1; round < rounds; round++) {
      for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
        const pool = new Pool(`http://127.0.0.1:${target.server.port}`, { connections: 1 });
        const body = JSON.stringify(target.body);
        const start = cpuTicks(target.server.process.pid!);
        for (let index = 0; index < perRound; index++) {
          const response = await pool.request({ path: target.path, method: 'POST', headers: { 'content-type': 'application/json', authorization: target.authorization }, body });
          const text = await response.body.text();
          if (response.statusCode !== 200 || !text.includes('[DONE]')) failed++;
        }
        await new Promise((resolve) => setTimeout(resolve, 300));
        // Round -1 warms every server up and is not counted.
        if (round >= 0) (cpu[target.name] ??= []).push(((cpuTicks(target.server.process.pid!) - start) * 10_000) / perRound);
        await pool.close();
      }
    }
    const ratios = (name: string) => cpu[name]!.map((value, index) => value / cpu.bare![index]!);
    results[`chunks_${chunks}`] = {
      cpu_us_per_streamed_completion: Object.fromEntries(Object.entries(cpu).map(([name, values]) => [name, { median: Math.round(median(values)), rounds: values.map(Math.round) }])),
      ratio_to_bare: { before: round3(median(ratios('before'))), after: round3(median(ratios('after'))) },
      after_vs_before: round3(median(cpu.after!.map((value, index) => value / cpu.before![index]!))),
      failed,
    };
  } finally {
    await Promise.all(children.map((child) => child.stop()));
  }
}
results.load_average_end = load();
process.stdout.write(`${JSON.stringify(results)}\n`);
