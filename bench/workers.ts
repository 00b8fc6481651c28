/**
 * `npm run bench -- workers [-- --quick]`: throughput of `svc serve` with WORKERS=1, 2 and 4 on
 * PostgreSQL + Redis (issue #39, item 5). Needs BENCH_DATABASE_URL and BENCH_REDIS_URL (skipped
 * without them: on embedded storage one process serves whatever WORKERS says).
 *
 * The three clusters run side by side on their own ports and are measured in interleaved rounds
 * (the order rotates each round), so drift on a shared machine hits them alike. Load: JSON
 * completions against the fast fake OpenAI upstream (child process), from 16 keep-alive
 * connections spread over 8 Enterprise orgs, each with its own API key (several keys: one key's
 * rate limit is not what is measured). Per WORKERS: requests/s (median of the rounds), its ratio to
 * WORKERS=1 beside the targets (≥ 1.7× at 2, ≥ 3× at 4, stated for a machine with free cores), CPU
 * per request of the whole cluster (primary and workers, /proc), the cluster's CPU while idle
 * (which that includes), and the load average. A machine
 * with fewer free cores than workers cannot scale; `machine_busy` says when that was the case.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { createServices } from '../src/services.ts';
import { freePort, median, repoRoot, round3, startChild, type ChildServer } from './lib.ts';
import { benchConfig, discardedLogs } from './servers/svc-config.ts';

const WORKER_COUNTS = [1, 2, 4] as const;
const ORGS = 8;
const CONNECTIONS = 16;
const TARGET_RATIO: Record<number, number> = { 2: 1.7, 4: 3 };
const SECRET_KEY = 'bench-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz';
const ENCRYPTION_KEY = 'bench-encryption-key-0123456789-abcdefghijklmnopqrs';

interface Cluster { workers: number; port: number; primary: ChildProcess }

const load = () => loadavg().map((value) => Math.round(value * 100) / 100);

/** User + system CPU ticks (10 ms) of one process. */
function ticks(id: number): number {
  try {
    const fields = readFileSync(`/proc/${id}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** User + system CPU ticks of a process and its direct children (the cluster's workers). */
function clusterTicks(pid: number): number {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter((id) => id !== '').map(Number);
  } catch {
    children = [];
  }
  return [pid, ...children].reduce((sum, id) => sum + ticks(id), 0);
}


async function startCluster(workers: number, env: Record<string, string>): Promise<Cluster> {
  const port = await freePort();
  const primary = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, PORT: String(port), WORKERS: String(workers), LOG_LEVEL: 'error' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 300_000;
  // Ready when every worker answers: the primary hands connections out in turn, so `workers`
  // health checks in a row on fresh connections reach each of them.
  for (;;) {
    if (primary.exitCode !== null) throw new Error(`svc serve (WORKERS=${workers}) exited with ${primary.exitCode}`);
    if (Date.now() > deadline) throw new Error(`svc serve (WORKERS=${workers}) not healthy within 300 s`);
    const answers = await Promise.all(Array.from({ length: workers * 2 }, () => fetch(`http://127.0.0.1:${port}/health`, { headers: { connection: 'close' } }).then((response) => response.ok, () => false)));
    if (answers.every(Boolean)) break;
    await new Promise((resolveWait) => setTimeout(resolveWait, 1_000));
  }
  return { workers, port, primary };
}

async function measure(cluster: Cluster, keys: readonly string[], seconds: number, amount?: number) {
  const body = JSON.stringify({ provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Summarize in one sentence why keep-alive connections matter for API gateways.' }], max_tokens: 64 });
  let next = 0;
  const startTicks = clusterTicks(cluster.primary.pid!);
  const startPrimary = ticks(cluster.primary.pid!);
  const result = await autocannon({
    url: `http://127.0.0.1:${cluster.port}/api/v1/gateway/completions`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections: CONNECTIONS,
    ...(amount === undefined ? { duration: seconds } : { amount }),
    // Each connection sends with its own org's key.
    setupClient: (client) => client.setHeaders({ 'content-type': 'application/json', authorization: `Bearer ${keys[next++ % keys.length]!}` }),
  });
  await new Promise((resolveWait) => setTimeout(resolveWait, 300));
  const used = clusterTicks(cluster.primary.pid!) - startTicks;
  const primaryUsed = ticks(cluster.primary.pid!) - startPrimary;
  return {
    requests_per_s: result.requests.average,
    non_2xx: result.non2xx,
    errors: result.errors,
    cpu_us_per_request: result.requests.total === 0 ? null : Math.round((used * 10_000) / result.requests.total),
    // With WORKERS > 1 the primary only hands connections out; its share says whether it is in the way.
    primary_cpu_share: used === 0 ? null : Math.round((primaryUsed / used) * 1000) / 1000,
  };
}

export async function runWorkersBench(options: { quick?: boolean } = {}): Promise<object> {
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  const redisUrl = process.env.BENCH_REDIS_URL;
  if (!databaseUrl || !redisUrl) {
    process.stderr.write('[bench workers] needs BENCH_DATABASE_URL and BENCH_REDIS_URL (PostgreSQL + Redis): skipped\n');
    return { skipped: 'needs BENCH_DATABASE_URL and BENCH_REDIS_URL' };
  }
  const quick = options.quick === true;
  const rounds = quick ? 2 : 4;
  const seconds = quick ? 4 : 8;
  const loadAtStart = load();
  const scratch = mkdtempSync(join(tmpdir(), 'svc-bench-workers-'));
  const cachePrefix = `bench:workers:${randomUUID().slice(0, 8)}:`;
  const children: ChildServer[] = [];
  const clusters: Cluster[] = [];
  try {
    const upstream = await startChild('bench/gateway-upstream.ts');
    children.push(upstream);
    // Orgs and keys, written through svc itself (migrations run here first).
    const services = await createServices(benchConfig({ DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, CACHE_PREFIX: cachePrefix, DATA_DIR: join(scratch, 'setup') }), { logDestination: discardedLogs() });
    const keys: string[] = [];
    try {
      for (let index = 0; index < ORGS; index++) {
        const { org, apiKey } = await services.accounts.createOrg({ name: `bench-workers-${index}`, plan: 'enterprise' });
        await services.accounts.providerKeys.set(org.id, 'openai', 'sk-bench-upstream-key', String(upstream.info.base_url));
        keys.push(apiKey);
      }
    } finally {
      await services.close();
    }
    const env = { ENVIRONMENT: 'development', DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, CACHE_PREFIX: cachePrefix, SECRET_KEY, API_ENCRYPTION_KEY: ENCRYPTION_KEY, ALLOW_PRIVATE_TARGETS: 'true' };
    for (const workers of WORKER_COUNTS) clusters.push(await startCluster(workers, { ...env, DATA_DIR: join(scratch, `data-${workers}`) }));
    // Warm-up (JIT, pools, caches), not counted: a number of requests per worker, since each
    // worker compiles its own hot code (a cold worker burns several times the CPU per request).
    for (const cluster of clusters) await measure(cluster, keys, 0, (quick ? 400 : 1_500) * cluster.workers);
    // What each cluster burns with no request at all (timers, queue and cache polling), which
    // counts in its CPU per request above.
    const idle: Record<number, number> = {};
    const idleStart = clusters.map((cluster) => clusterTicks(cluster.primary.pid!));
    await new Promise((resolveWait) => setTimeout(resolveWait, 5_000));
    clusters.forEach((cluster, index) => (idle[cluster.workers] = Math.round(((clusterTicks(cluster.primary.pid!) - idleStart[index]!) * 10) / 5)));
    const samples: Record<number, { rps: number[]; cpu: number[]; primary: number[]; failed: number }> = {};
    for (let round = 0; round < rounds; round++) {
      const order = clusters.map((_, index) => clusters[(index + round) % clusters.length]!);
      for (const cluster of order) {
        const result = await measure(cluster, keys, seconds);
        const entry = (samples[cluster.workers] ??= { rps: [], cpu: [], primary: [], failed: 0 });
        entry.rps.push(result.requests_per_s);
        if (result.primary_cpu_share !== null) entry.primary.push(result.primary_cpu_share);
        if (result.cpu_us_per_request !== null) entry.cpu.push(result.cpu_us_per_request);
        entry.failed += result.non_2xx + result.errors;
      }
    }
    const baseline = median(samples[1]!.rps);
    const perWorkers = Object.fromEntries(WORKER_COUNTS.map((workers) => {
      const entry = samples[workers]!;
      const ratio = median(entry.rps) / baseline;
      return [`WORKERS=${workers}`, {
        requests_per_s: Math.round(median(entry.rps)),
        rounds_requests_per_s: entry.rps.map(Math.round),
        ratio_to_1_worker: round3(ratio),
        ...(TARGET_RATIO[workers] === undefined ? {} : { target_ratio: TARGET_RATIO[workers], met: ratio >= TARGET_RATIO[workers]! }),
        cpu_us_per_request: Math.round(median(entry.cpu)),
        rounds_cpu_us_per_request: entry.cpu,
        primary_cpu_share: entry.primary.length === 0 ? null : round3(median(entry.primary)),
        idle_cpu_ms_per_s: idle[workers],
        failed_requests: entry.failed,
      }];
    }));
    const loadAtEnd = load();
    return {
      storage: 'PostgreSQL + Redis',
      load: `JSON completions (fast fake OpenAI upstream), ${CONNECTIONS} connections over ${ORGS} orgs' keys, ${seconds} s per measurement, ${rounds} interleaved rounds`,
      cores: availableParallelism(),
      default_workers: availableParallelism(),
      load_average_at_start: loadAtStart,
      workers: perWorkers,
      load_average_at_end: loadAtEnd,
      machine_busy: loadAtStart[0]! > availableParallelism() / 2,
      note: 'scaling needs free cores: on a machine whose load average is near or above its core count the ratios measure contention, not svc',
    };
  } finally {
    for (const cluster of clusters) {
      if (cluster.primary.exitCode === null) {
        await new Promise<void>((resolveExit) => {
          cluster.primary.once('exit', () => resolveExit());
          cluster.primary.kill('SIGTERM');
        });
      }
    }
    await Promise.all(children.map((child) => child.stop()));
    rmSync(scratch, { recursive: true, force: true });
  }
}
