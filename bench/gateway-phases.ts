/**
 * `npm run bench -- gateway-phases`: where one JSON completion's time goes inside svc, phase by
 * phase, beside the bare Fastify + undici route and the bare pass-through (issue #13 item 7:
 * "say where each remaining microsecond goes").
 *
 * The fake upstream, svc, the bare Fastify route and the pass-through run as child processes;
 * each server times the requests that carry `x-bench-phase` from the diagnostics channels that
 * node:http, Fastify and undici publish (bench/servers/phases.ts), so svc's code is measured as it
 * ships. Sequential keep-alive requests, interleaved rounds, after every server was warmed under
 * load. Each phase is the median over the requests of that server (µs):
 *   edge_in          request parsed by node:http → route handler starts (Fastify: routing, body
 *                    parse, schema validation; svc: also its onRequest hook — request id, API key,
 *                    rate-limit windows and concurrency slot, CORS)
 *   before_upstream  handler → upstream request created (svc: screening, settings, PII
 *                    redaction, routing plan and breaker, budget reservation, the provider's wire
 *                    format)
 *   dispatch         upstream request created → its headers written (undici)
 *   upstream         headers written → upstream answer complete (the fake upstream's own time,
 *                    the loopback hop, and whatever else the server's event loop runs meanwhile)
 *   answer           upstream answer complete → response finished (parse, svc: settlement, the
 *                    response filter, verification, provenance record queued, envelope,
 *                    serialisation; then the write to the client)
 *   server_total     request parsed → response finished
 * The pass-through has no route handler: its edge_in runs to the upstream request's creation and
 * its before_upstream is 0.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, probeLatency, startChild, throughput, type ChildServer, type ProbeTarget } from './lib.ts';
import type { PhaseTimes } from './servers/phases.ts';

const PROMPT = 'Summarize in one sentence why keep-alive connections matter for API gateways.';
const UPSTREAM_KEY = 'sk-bench-upstream-key';
const PHASES = ['edge_in', 'before_upstream', 'dispatch', 'upstream', 'answer', 'server_total'] as const;
type Phase = (typeof PHASES)[number];

/** Per-request phase durations (µs) of one server's recorded requests, as medians. */
export function phaseMedians(times: PhaseTimes[]): Record<Phase, number | null> & { requests: number } {
  const lists: Record<Phase, number[]> = { edge_in: [], before_upstream: [], dispatch: [], upstream: [], answer: [], server_total: [] };
  let requests = 0;
  for (const t of times) {
    if (t.request === undefined || t.dispatch === undefined || t.sent === undefined || t.upstream_done === undefined || t.finish === undefined) continue;
    requests += 1;
    const handler = t.handler ?? t.dispatch;
    lists.edge_in.push((handler - t.request) * 1000);
    lists.before_upstream.push((t.dispatch - handler) * 1000);
    lists.dispatch.push((t.sent - t.dispatch) * 1000);
    lists.upstream.push((t.upstream_done - t.sent) * 1000);
    lists.answer.push((t.finish - t.upstream_done) * 1000);
    lists.server_total.push((t.finish - t.request) * 1000);
  }
  const result = { requests } as Record<Phase, number | null> & { requests: number };
  for (const phase of PHASES) result[phase] = lists[phase].length === 0 ? null : Math.round(median(lists[phase]) * 10) / 10;
  return result;
}

export async function runGatewayPhasesBench(options: { quick?: boolean } = {}): Promise<Record<string, unknown>> {
  const quick = options.quick ?? false;
  const dir = mkdtempSync(join(tmpdir(), 'svc-phases-'));
  const files = { svc: join(dir, 'svc.json'), bare_fastify: join(dir, 'bare.json'), passthrough: join(dir, 'passthrough.json') };
  const children: ChildServer[] = [];
  try {
    const upstream = await startChild('bench/gateway-upstream.ts');
    children.push(upstream);
    const baseUrl = String(upstream.info.base_url);
    const svc = await startChild('bench/servers/svc.ts', { BENCH_UPSTREAM_BASE_URL: baseUrl, BENCH_PHASES_FILE: files.svc });
    const bare = await startChild('bench/servers/bare-fastify-gateway.ts', { BENCH_UPSTREAM_BASE_URL: baseUrl, BENCH_PHASES_FILE: files.bare_fastify });
    const passthrough = await startChild('bench/servers/passthrough.ts', { BENCH_UPSTREAM_BASE_URL: baseUrl, BENCH_PHASES_FILE: files.passthrough });
    children.push(svc, bare, passthrough);

    const headers = { 'content-type': 'application/json', 'x-bench-phase': '1' };
    const openAiBody = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }], max_tokens: 64 });
    const svcBody = JSON.stringify({ provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }], max_tokens: 64 });
    const targets: ProbeTarget[] = [
      { name: 'svc', origin: `http://127.0.0.1:${svc.port}`, path: '/api/v1/gateway/completions', method: 'POST', headers: { ...headers, authorization: `Bearer ${String(svc.info.api_key)}` }, body: svcBody },
      { name: 'bare_fastify', origin: `http://127.0.0.1:${bare.port}`, path: '/v1/chat/completions', method: 'POST', headers: { ...headers, authorization: `Bearer ${UPSTREAM_KEY}` }, body: openAiBody },
      { name: 'passthrough', origin: `http://127.0.0.1:${passthrough.port}`, path: '/v1/chat/completions', method: 'POST', headers: { ...headers, authorization: `Bearer ${UPSTREAM_KEY}` }, body: openAiBody },
    ];
    // Steady state first (the warm-up load carries no x-bench-phase, so it is not recorded).
    for (const target of targets) {
      const { 'x-bench-phase': _unrecorded, ...unrecorded } = target.headers ?? {};
      await throughput({ ...target, headers: unrecorded }, { connections: 10, durationSeconds: quick ? 2 : 4 });
    }
    const latency = await probeLatency(targets, quick ? { rounds: 3, perRound: 200, warmup: 100 } : { rounds: 8, perRound: 300, warmup: 100 });
    // Stopping a server writes its phase file (SIGTERM).
    for (const child of [svc, bare, passthrough]) await child.stop();

    const servers: Record<string, ReturnType<typeof phaseMedians>> = {};
    for (const [name, file] of Object.entries(files)) servers[name] = phaseMedians(JSON.parse(readFileSync(file, 'utf8')) as PhaseTimes[]);
    const difference = (of: string) => {
      const result: Partial<Record<Phase, number | null>> = {};
      for (const phase of PHASES) {
        const a = servers.svc?.[phase];
        const b = servers[of]?.[phase];
        result[phase] = a === null || a === undefined || b === null || b === undefined ? null : Math.round((a - b) * 10) / 10;
      }
      return result;
    };
    return {
      bench: 'gateway-phases',
      what: 'one non-streamed completion, sequential keep-alive requests: median µs per phase inside each server (diagnostics channels of node:http, Fastify and undici), svc against the bare Fastify + undici route and the bare pass-through',
      phases_us: servers,
      svc_minus_bare_fastify_us: difference('bare_fastify'),
      svc_minus_passthrough_us: difference('passthrough'),
      client_p50_ms: Object.fromEntries(Object.entries(latency).map(([name, figures]) => [name, figures.p50_ms])),
    };
  } finally {
    await Promise.allSettled(children.map((child) => child.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}
