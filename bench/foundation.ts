/**
 * Foundation benchmark: an authenticated request through svc's full middleware stack (auth,
 * rate limit, request log line, metrics) against a bare Fastify route, in the same run.
 * Reports p50/p99 added latency (sequential keep-alive probe, interleaved rounds) and
 * requests/s at 1 and 10 connections (autocannon). Target: ≤ 0.2 ms added at p50.
 */
import { pathToFileURL } from 'node:url';
import { probeLatency, round3, startChild, throughput, type ProbeTarget } from './lib.ts';

export async function runFoundationBench(options: { quick?: boolean } = {}) {
  const bare = await startChild('bench/servers/bare-fastify.ts');
  const svc = await startChild('bench/servers/svc.ts', process.env.BENCH_DATABASE_URL ? { BENCH_DATABASE_URL: process.env.BENCH_DATABASE_URL } : {});
  try {
    const targets: ProbeTarget[] = [
      { name: 'bare_fastify', origin: `http://127.0.0.1:${bare.port}`, path: '/api/v1/whoami' },
      { name: 'svc', origin: `http://127.0.0.1:${svc.port}`, path: '/api/v1/whoami', headers: { authorization: `Bearer ${String(svc.info.api_key)}` } },
    ];
    const latency = await probeLatency(targets, options.quick ? { rounds: 4, perRound: 250 } : { rounds: 10, perRound: 500 });
    const duration = options.quick ? 2 : 5;
    const rates: Record<string, unknown> = {};
    for (const connections of [1, 10]) {
      for (const target of targets) rates[`${target.name}_c${connections}`] = await throughput(target, { connections, durationSeconds: duration });
    }
    return {
      bench: 'foundation',
      what: 'GET /api/v1/whoami with an API key through auth, rate limit, logging and metrics vs a bare Fastify route',
      latency,
      added_p50_ms: round3(latency.svc!.p50_ms - latency.bare_fastify!.p50_ms),
      added_p99_ms: round3(latency.svc!.p99_ms - latency.bare_fastify!.p99_ms),
      target_added_p50_ms: 0.2,
      throughput: rates,
    };
  } finally {
    await Promise.all([bare.stop(), svc.stop()]);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(`${JSON.stringify(await runFoundationBench({ quick: process.argv.includes('--quick') }))}\n`);
}
