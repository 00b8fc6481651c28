// svc with its full stack (auth, rate limit, request log line, metrics; for completions also
// detection screening, budget and PII redaction) on the embedded engines, or on BENCH_DATABASE_URL
// / BENCH_REDIS_URL; logs go to /dev/null so the terminal is not the bottleneck. Prints the port
// and an admin key for an Enterprise org (rate limited, but with room for the benchmark), whose
// OpenAI key points at BENCH_UPSTREAM_BASE_URL when that is set (the gateway benchmark).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../src/http/build-app.ts';
import { createServices } from '../../src/services.ts';
import { limitHeapGrowth } from '../../src/platform/heap-growth.ts';
import { recordPhases } from './phases.ts';
import { benchConfig, discardedLogs } from './svc-config.ts';

recordPhases();

// The embedded default keeps PGlite in a data directory on disk, so the benchmark does too (an
// in-memory PGlite grows its files by copying them, a cost the default never pays).
const dataDir = process.env.BENCH_DATABASE_URL ? null : mkdtempSync(join(tmpdir(), 'svc-bench-'));
const config = benchConfig({
  DATABASE_URL: process.env.BENCH_DATABASE_URL ?? `pglite:${dataDir}/pglite`,
  ...(dataDir === null ? {} : { DATA_DIR: dataDir }),
  REDIS_URL: process.env.BENCH_REDIS_URL ?? 'memory:',
  ALLOW_PRIVATE_TARGETS: 'true',
  CACHE_PREFIX: `bench:${process.pid}:`,
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  // BENCH_HEAP_GROWING_PERCENT: 0 for V8's own heuristic (what this server ran with before).
  ...(process.env.BENCH_HEAP_GROWING_PERCENT === undefined ? {} : { HEAP_GROWING_PERCENT: process.env.BENCH_HEAP_GROWING_PERCENT }),
});
// As `svc serve` does in each serving process (src/server.ts), before the services load.
limitHeapGrowth(config.heapGrowingPercent);
const services = await createServices(config, { logDestination: discardedLogs() });
const app = await buildApp(config, services);
await app.listen({ port: 0, host: '127.0.0.1' });
const { org, apiKey } = await services.accounts.createOrg({ name: 'bench', plan: 'enterprise' });
if (process.env.BENCH_UPSTREAM_BASE_URL) {
  await services.accounts.providerKeys.set(org.id, 'openai', 'sk-bench-upstream-key', process.env.BENCH_UPSTREAM_BASE_URL);
}
// A second org, identical but with verification turned off: the gateway benchmark times both in
// the same rounds to measure what the verification layers add (issue #18).
const unverified = await services.accounts.createOrg({ name: 'bench-unverified', plan: 'enterprise' });
if (process.env.BENCH_UPSTREAM_BASE_URL) {
  await services.accounts.providerKeys.set(unverified.org.id, 'openai', 'sk-bench-upstream-key', process.env.BENCH_UPSTREAM_BASE_URL);
}
// A third org on the Community plan (60 requests a minute): the gateway benchmark's overload
// phase sends its requests far past that limit beside the Enterprise org's traffic, to measure
// what refused requests take from served capacity.
const abuser = await services.accounts.createOrg({ name: 'bench-abuser', plan: 'community' });
await app.inject({ method: 'PUT', url: '/api/v1/config/verification', headers: { authorization: `Bearer ${unverified.apiKey}` }, payload: { enabled: false } });
// More keys of the same org (BENCH_EXTRA_KEYS): a bench that runs past the Enterprise plan's burst
// window (5,000 requests a second per key) spreads its requests over them.
const extraKeys: string[] = [];
for (let index = 0; index < Number(process.env.BENCH_EXTRA_KEYS ?? 0); index++) {
  extraKeys.push((await services.accounts.createKey(org.id, { scope: 'admin', keyClass: 'live', name: `bench ${index + 2}` })).apiKey);
}
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0, api_key: apiKey, org_id: org.id, api_key_unverified: unverified.apiKey, api_key_abuser: abuser.apiKey, api_keys: [apiKey, ...extraKeys] })}\n`);
process.on('SIGTERM', () =>
  void app
    .close()
    .then(() => services.close())
    .then(() => {
      if (dataDir !== null) rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    }),
);
