/**
 * Before/after of svc's shared request path in one run: bare Fastify, svc from another checkout
 * (BENCH_BEFORE_DIR, e.g. `git worktree add /tmp/before <commit>` with node_modules linked) and
 * svc from this one, as three child servers. Latency probes of GET /api/v1/whoami (interleaved
 * rounds) and of a JSON completion against the fast fake provider, then user and system CPU per
 * request of each svc over rounds of sequential requests (/proc/<pid>/stat, 10 ms ticks).
 *   BENCH_BEFORE_DIR=/tmp/before /work/coord/qbench.sh npx tsx bench/before-after.ts [--quick]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import { probeLatency, round3, startChild, type ChildServer, type ProbeTarget } from './lib.ts';

const beforeDir = process.env.BENCH_BEFORE_DIR;
if (!beforeDir) throw new Error('set BENCH_BEFORE_DIR to a checkout of the code to compare with (its node_modules installed or linked)');

const quick = process.argv.includes('--quick');
const cpuTicks = (pid: number) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return [Number(f[11]), Number(f[12])] as const; };
const children: ChildServer[] = [];
try {
  const upstream = await startChild('bench/gateway-upstream.ts'); children.push(upstream);
  const env = { BENCH_UPSTREAM_BASE_URL: String(upstream.info.base_url) };
  const bare = await startChild('bench/servers/bare-fastify.ts'); children.push(bare);
  const before = await startChild(join(beforeDir, 'bench/servers/svc.ts'), env); children.push(before);
  const after = await startChild('bench/servers/svc.ts', env); children.push(after);
  const body = JSON.stringify({ provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Summarize in one sentence why keep-alive connections matter for API gateways.' }], max_tokens: 64 });
  const whoami = (name: string, c: ChildServer): ProbeTarget => ({ name, origin: `http://127.0.0.1:${c.port}`, path: '/api/v1/whoami', ...(c === bare ? {} : { headers: { authorization: `Bearer ${String(c.info.api_key)}` } }) });
  const completion = (name: string, c: ChildServer): ProbeTarget => ({ name, origin: `http://127.0.0.1:${c.port}`, path: '/api/v1/gateway/completions', method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${String(c.info.api_key)}` }, body });
  const opts = quick ? { rounds: 4, perRound: 250 } : { rounds: 10, perRound: 500 };
  const whoamiLatency = await probeLatency([whoami('bare', bare), whoami('before', before), whoami('after', after)], opts);
  const completionLatency = await probeLatency([completion('before', before), completion('after', after)], opts);
  // CPU per request: N sequential requests per server, interleaved rounds; ticks are 10 ms.
  const tick = 10_000; const n = quick ? 2000 : 5000; const rounds = quick ? 2 : 6;
  let refused = 0; const cpu: Record<string, number[]> = {}; const sys: Record<string, number[]> = {};
  for (let r = 0; r < rounds; r++) {
    for (const [kind, make] of [['whoami', whoami], ['completion', completion]] as const) {
      for (const [name, c] of [['before', before], ['after', after]] as const) {
        const t = make(name, c); const pool = new Pool(t.origin, { connections: 1 });
        const start = cpuTicks(c.process.pid!);
        for (let i = 0; i < n; i++) { const res = await pool.request({ path: t.path, method: t.method ?? 'GET', headers: t.headers ?? {}, ...(t.body ? { body: t.body } : {}) }); await res.body.dump(); if (res.statusCode !== 200) refused++; }
        await new Promise((r2) => setTimeout(r2, 300));
        const end = cpuTicks(c.process.pid!);
        (cpu[`${kind}_${name}`] ??= []).push(((end[0] - start[0]) * tick) / n);
        (sys[`${kind}_${name}`] ??= []).push(((end[1] - start[1]) * tick) / n);
        await pool.close();
      }
    }
  }
  const median = (list: number[]) => { const s = [...list].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]!; };
  process.stdout.write(`${JSON.stringify({
    whoami: whoamiLatency, whoami_added_p50_ms: { before: round3(whoamiLatency.before!.p50_ms - whoamiLatency.bare!.p50_ms), after: round3(whoamiLatency.after!.p50_ms - whoamiLatency.bare!.p50_ms) },
    completion: completionLatency, cpu_phase_non_200: refused,
    user_cpu_us_per_request: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, { median: Math.round(median(v)), rounds: v.map(Math.round) }])),
    sys_cpu_us_per_request: Object.fromEntries(Object.entries(sys).map(([k, v]) => [k, { median: Math.round(median(v)), rounds: v.map(Math.round) }])),
  })}\n`);
} finally {
  await Promise.all(children.map((c) => c.stop()));
}
