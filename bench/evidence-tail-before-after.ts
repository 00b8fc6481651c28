/**
 * Before/after of the JSON completion's tail at 10 connections (issue #39 item 3: the evidence
 * write must get cheaper without holding the event loop longer). svc from another checkout
 * (BENCH_BEFORE_DIR, e.g. `git worktree add --detach /tmp/before <commit>` with its node_modules)
 * and svc from this one, both on the embedded engine against the fast fake upstream, are driven
 * in interleaved windows of 10 connections (autocannon; the order alternates each round, before
 * first in even rounds). Each window's latency p99 and max, requests/s and the load average at its
 * start are printed, with per-round after − before differences of p99 and max and their medians.
 * At 10 connections svc answers thousands of completions a second, so each evidence window
 * (200 ms) writes a full chunk: what a longer hold of the event loop by the embedded engine would
 * show in exactly these figures.
 *   BENCH_BEFORE_DIR=/tmp/before npx tsx bench/evidence-tail-before-after.ts [--quick]
 * BENCH_ROUNDS (default 8, --quick 4), BENCH_WINDOW_S (default 3).
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import autocannon from 'autocannon';
import { startChild, type ChildServer } from './lib.ts';

const beforeDir = process.env.BENCH_BEFORE_DIR;
if (!beforeDir) throw new Error('set BENCH_BEFORE_DIR to a checkout of the code to compare with (its node_modules installed)');
const quick = process.argv.includes('--quick');
const rounds = Number(process.env.BENCH_ROUNDS ?? (quick ? 4 : 8));
const seconds = Number(process.env.BENCH_WINDOW_S ?? 3);
const WARM_UP_WINDOWS = quick ? 3 : 5;
/** Longer than svc's evidence window (src/verification/provenance.ts, 200 ms) plus one write. */
const SETTLE_MS = 600;
const PROMPT = 'Summarize in one sentence why keep-alive connections matter for API gateways.';
const BODY = JSON.stringify({ provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }], max_tokens: 64 });

const load = () => Math.round(loadavg()[0]! * 100) / 100;
const median = (list: number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** 10 connections for `seconds`, the requests going round the org's keys (one key's burst window refuses a fast server). */
async function drive(server: ChildServer, windowSeconds: number) {
  const keys = (server.info.api_keys as string[] | undefined) ?? [String(server.info.api_key)];
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}/api/v1/gateway/completions`,
    connections: 10,
    duration: windowSeconds,
    requests: keys.map((key) => ({ method: 'POST' as const, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: BODY })),
  });
  return { requests_per_s: Math.round(result.requests.average), p50_ms: result.latency.p50, p99_ms: result.latency.p99, max_ms: result.latency.max, failed: result.non2xx + result.errors };
}

const results: Record<string, unknown> = { load_average_start: loadavg().map((value) => Math.round(value * 100) / 100), rounds, seconds_per_window: seconds };
const children: ChildServer[] = [];
try {
  const upstream = await startChild('bench/gateway-upstream.ts');
  children.push(upstream);
  const env = { BENCH_UPSTREAM_BASE_URL: String(upstream.info.base_url), BENCH_EXTRA_KEYS: '3' };
  const before = await startChild(join(beforeDir, 'bench/servers/svc.ts'), env);
  children.push(before);
  const after = await startChild('bench/servers/svc.ts', env);
  children.push(after);
  const servers = [
    { name: 'before', server: before },
    { name: 'after', server: after },
  ] as const;
  // Warm-up (models and lexicons load on first use; the JIT settles), not counted.
  for (let window = 0; window < WARM_UP_WINDOWS; window++) for (const { server } of servers) await drive(server, 2);
  const windows: Record<string, Array<ReturnType<typeof drive> extends Promise<infer R> ? R & { load: number } : never>> = { before: [], after: [] };
  for (let round = 0; round < rounds; round++) {
    for (const { name, server } of round % 2 === 0 ? servers : [...servers].reverse()) {
      await delay(SETTLE_MS);
      const startLoad = load();
      windows[name]!.push({ ...(await drive(server, seconds)), load: startLoad });
    }
  }
  const pairs = windows.before!.map((before, index) => ({ p99: windows.after![index]!.p99_ms - before.p99_ms, max: windows.after![index]!.max_ms - before.max_ms }));
  results.windows = windows;
  results.median = Object.fromEntries(
    Object.entries(windows).map(([name, list]) => [name, { requests_per_s: median(list.map((w) => w.requests_per_s)), p50_ms: median(list.map((w) => w.p50_ms)), p99_ms: median(list.map((w) => w.p99_ms)), max_ms: median(list.map((w) => w.max_ms)) }]),
  );
  results.after_minus_before = { p99_ms_per_round: pairs.map((pair) => pair.p99), p99_ms_median: median(pairs.map((pair) => pair.p99)), max_ms_per_round: pairs.map((pair) => pair.max), max_ms_median: median(pairs.map((pair) => pair.max)) };
} finally {
  await Promise.all(children.map((child) => child.stop()));
}
results.load_average_end = loadavg().map((value) => Math.round(value * 100) / 100);
process.stdout.write(`${JSON.stringify(results)}\n`);
