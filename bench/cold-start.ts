/**
 * `npm run bench -- cold-start [-- --quick]`: the first seconds after `svc serve` answers /health
 * on PostgreSQL + Redis (issue #33, item 8: "in the first 17 s after a cold start, completions
 * took over 15 s and /health/db said timed out while PostgreSQL was up"). Needs
 * BENCH_DATABASE_URL and BENCH_REDIS_URL (skipped without them).
 *
 * Each round starts a fresh `svc serve` (WORKERS=2, through tsx) and, from the moment /health
 * answers, sends JSON completions from 24 concurrent loops to the fast fake OpenAI upstream for
 * 17 s (8 s with --quick) while /health/db is read every 500 ms. With BENCH_BEFORE_DIR (a checkout
 * of the code to compare with, its node_modules installed) the rounds alternate between that
 * checkout and this one, so both see the machine's drift alike. Per side: the slowest completion,
 * the slowest of the first 24, the p50 and p99 over the window, completions over 2 s and 15 s, and
 * /health/db answers that were not 200.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServices } from '../src/services.ts';
import { freePort, median, repoRoot, startChild } from './lib.ts';
import { benchConfig, discardedLogs } from './servers/svc-config.ts';

const CONCURRENCY = 24;
const SECRET_KEY = 'bench-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz';
const ENCRYPTION_KEY = 'bench-encryption-key-0123456789-abcdefghijklmnopqrs';

const load = () => loadavg().map((value) => Math.round(value * 100) / 100);
const sleep = (ms: number) => new Promise((resolveWait) => setTimeout(resolveWait, ms));


interface Round {
  side: string;
  load_at_start: number[];
  start_to_health_ms: number;
  completions: number;
  non_200: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  first_24_max_ms: number;
  over_2s: number;
  over_15s: number;
  health_db_not_ok: number;
  health_db_max_ms: number;
}

async function round(side: string, root: string, env: Record<string, string>, key: string, seconds: number): Promise<Round> {
  const port = await freePort();
  const loadAtStart = load();
  const started = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, PORT: String(port), WORKERS: '2', LOG_LEVEL: 'error' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 300_000;
    while (!(await fetch(`${base}/health`).then((response) => response.ok, () => false))) {
      if (child.exitCode !== null) throw new Error(`svc serve (${side}) exited with ${child.exitCode}`);
      if (Date.now() > deadline) throw new Error(`svc serve (${side}) not healthy within 300 s`);
      await sleep(100);
    }
    const up = Date.now();
    const end = up + seconds * 1000;
    const body = JSON.stringify({ provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Summarize in one sentence why keep-alive connections matter for API gateways.' }], max_tokens: 32 });
    const completions: Array<{ at: number; ms: number; status: number }> = [];
    const health: Array<{ ms: number; status: number }> = [];
    const loop = async () => {
      while (Date.now() < end) {
        const at = Date.now();
        const status = await fetch(`${base}/api/v1/gateway/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body })
          .then(async (response) => (await response.arrayBuffer(), response.status), () => -1);
        completions.push({ at, ms: Date.now() - at, status });
      }
    };
    const probe = async () => {
      while (Date.now() < end) {
        const at = Date.now();
        const status = await fetch(`${base}/health/db`).then(async (response) => (await response.arrayBuffer(), response.status), () => -1);
        health.push({ ms: Date.now() - at, status });
        await sleep(500);
      }
    };
    await Promise.all([...Array.from({ length: CONCURRENCY }, loop), probe()]);
    const times = completions.map((completion) => completion.ms).sort((a, b) => a - b);
    const first = [...completions].sort((a, b) => a.at - b.at).slice(0, CONCURRENCY).map((completion) => completion.ms);
    return {
      side,
      load_at_start: loadAtStart,
      start_to_health_ms: up - started,
      completions: completions.length,
      non_200: completions.filter((completion) => completion.status !== 200).length,
      p50_ms: times[Math.floor(times.length / 2)] ?? 0,
      p99_ms: times[Math.floor(times.length * 0.99)] ?? 0,
      max_ms: times.at(-1) ?? 0,
      first_24_max_ms: Math.max(0, ...first),
      over_2s: times.filter((ms) => ms > 2_000).length,
      over_15s: times.filter((ms) => ms > 15_000).length,
      health_db_not_ok: health.filter((answer) => answer.status !== 200).length,
      health_db_max_ms: Math.max(0, ...health.map((answer) => answer.ms)),
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolveExit) => (child.exitCode !== null ? resolveExit(null) : child.once('exit', resolveExit)));
  }
}

export async function runColdStartBench(options: { quick?: boolean } = {}): Promise<object> {
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  const redisUrl = process.env.BENCH_REDIS_URL;
  if (!databaseUrl || !redisUrl) {
    process.stderr.write('[bench cold-start] needs BENCH_DATABASE_URL and BENCH_REDIS_URL (PostgreSQL + Redis): skipped\n');
    return { skipped: 'needs BENCH_DATABASE_URL and BENCH_REDIS_URL' };
  }
  const quick = options.quick === true;
  const seconds = quick ? 8 : 17;
  const pairs = quick ? 1 : 2;
  const beforeDir = process.env.BENCH_BEFORE_DIR;
  const sides: Array<[string, string]> = beforeDir ? [['before', beforeDir], ['after', repoRoot]] : [['this', repoRoot]];
  const scratch = mkdtempSync(join(tmpdir(), 'svc-bench-cold-'));
  const cachePrefix = `bench:cold:${randomUUID().slice(0, 8)}:`;
  const upstream = await startChild('bench/gateway-upstream.ts');
  try {
    const services = await createServices(benchConfig({ DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, CACHE_PREFIX: cachePrefix, DATA_DIR: join(scratch, 'setup') }), { logDestination: discardedLogs() });
    let key: string;
    try {
      const { org, apiKey } = await services.accounts.createOrg({ name: `bench-cold-${Date.now()}`, plan: 'enterprise' });
      await services.accounts.providerKeys.set(org.id, 'openai', 'sk-bench-upstream-key', String(upstream.info.base_url));
      key = apiKey;
    } finally {
      await services.close();
    }
    const env = { ENVIRONMENT: 'development', DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, CACHE_PREFIX: cachePrefix, SECRET_KEY, API_ENCRYPTION_KEY: ENCRYPTION_KEY, ALLOW_PRIVATE_TARGETS: 'true' };
    const rounds: Round[] = [];
    for (let pair = 0; pair < pairs; pair += 1) {
      const order = pair % 2 === 0 ? sides : [...sides].reverse();
      for (const [side, root] of order) rounds.push(await round(side, root, { ...env, DATA_DIR: join(scratch, `data-${side}-${pair}`) }, key, seconds));
    }
    const summary = Object.fromEntries(sides.map(([side]) => {
      const mine = rounds.filter((entry) => entry.side === side);
      return [side, { first_24_max_ms: median(mine.map((entry) => entry.first_24_max_ms)), max_ms: median(mine.map((entry) => entry.max_ms)), p99_ms: median(mine.map((entry) => entry.p99_ms)), over_15s: mine.reduce((sum, entry) => sum + entry.over_15s, 0), health_db_not_ok: mine.reduce((sum, entry) => sum + entry.health_db_not_ok, 0) }];
    }));
    return { bench: 'cold-start', workers: 2, concurrency: CONCURRENCY, window_s: seconds, summary, rounds };
  } finally {
    await upstream.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}
