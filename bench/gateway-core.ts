/**
 * `npm run bench -- gateway-core`: what svc's completion logic costs by itself, without HTTP,
 * and what the evidence of each completion adds (issue #13 item 7). The gateway benchmark
 * measures svc as a server, and gateway-profile says what that server's CPU is made of; this
 * one gives the floor the logic sets when it runs warm and alone.
 *
 * One process runs svc's services on the embedded default (PGlite in a temporary directory,
 * in-memory cache). `GatewayService.completion` is called in a tight loop with the same request
 * the gateway benchmark sends. That covers screening, admission (settings, PII, route plan,
 * keys, budget reservation), the provider's wire format (OpenAI chat: the request built, a
 * canned answer parsed), settlement, the response filter, verification and the envelope
 * serialised with JSON.stringify. Only the HTTP exchange and the upstream call are left out. CPU is
 * process.cpuUsage per completion, over interleaved rounds of two kinds:
 *   logic      the provenance records wait in memory during the round and are written after it;
 *   evidence   the same, with the records written inside the round (a flush every 500
 *              completions, the writer's batch size).
 * The difference is what writing each completion's evidence costs on the embedded engine (with
 * BENCH_DATABASE_URL=postgres://…, what it costs svc's process on PostgreSQL: the server's CPU is
 * in another process and not counted).
 * A third kind of round, interleaved with the others, measures T5 (issue #32 item 6):
 *   without_t5 the logic round with the completion baselines switched off (the gateway's
 *              `behaviour` answers a resolved "no anomaly" without observing);
 * logic − without_t5 is what observing each completion in its key's profile costs (in memory).
 * `t5_observe` times the observation alone, in memory and — with BENCH_REDIS_URL — on Redis,
 * where it is round trips that overlap screening rather than CPU.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createProfileBaseline, type BehaviourResult, type ProfileBaseline } from '../src/detection/index.ts';
import { completionObservation } from '../src/gateway/behaviour.ts';
import { ClientCancel } from '../src/gateway/cancel.ts';
import { createCache } from '../src/platform/cache.ts';
import type { CompletionBody } from '../src/gateway/index.ts';
import { getAdapter } from '../src/gateway/registry.ts';
import { createServices } from '../src/services.ts';
import { median } from './lib.ts';
import { benchConfig, discardedLogs } from './servers/svc-config.ts';

const PROMPT = 'Summarize in one sentence why keep-alive connections matter for API gateways.';
/** What the benchmark's fake upstream answers, as OpenAI's chat completions API does. */
const UPSTREAM_ANSWER = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1_764_000_000,
  model: 'bench-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the bench upstream.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 },
});
const EVIDENCE_BATCH = 500;

export async function runGatewayCoreBench(options: { quick?: boolean } = {}) {
  const rounds = options.quick ? 4 : 8;
  const perRound = options.quick ? 1_500 : 3_000;
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-core-'));
  // BENCH_DATABASE_URL: the evidence written to PostgreSQL instead (multi-row INSERTs; the server's own CPU is not counted).
  const config = benchConfig({ DATABASE_URL: process.env.BENCH_DATABASE_URL ?? `pglite:${dataDir}/pglite`, DATA_DIR: dataDir, REDIS_URL: 'memory:', LOG_LEVEL: 'warn' });
  // The production baseline (memory cache, as the embedded default), switchable per round.
  const t5Cache = createCache({ kind: 'memory' }, 'bench-core:');
  const t5 = createProfileBaseline(t5Cache, { namespace: 'ai-t5' });
  const NO_ANOMALY: Promise<BehaviourResult> = Promise.resolve({ score: 0, anomalies: [] });
  let t5On = true;
  const behaviour: ProfileBaseline = { observe: (event) => (t5On ? t5.observe(event) : NO_ANOMALY) };
  const services = await createServices(config, {
    logDestination: discardedLogs(),
    // Records are written only when the bench flushes them (inside an evidence round, or after a logic round).
    verification: { provenance: { flushMs: 3_600_000, batch: EVIDENCE_BATCH, maxBacklog: 1_000_000_000 } },
    gateway: {
      behaviour,
      invokers: {
        // The provider's wire format without the network: the request is built as for the
        // upstream call and the upstream's answer is parsed.
        async completion(providerId, request, target) {
          const adapter = getAdapter(providerId);
          const built = adapter.buildRequest(request, target);
          if (built instanceof Promise) await built;
          return adapter.parseResponse(200, { 'content-type': 'application/json' }, UPSTREAM_ANSWER, request.model);
        },
        stream() {
          throw new Error('the core bench sends JSON completions only');
        },
      },
    },
  });
  try {
    const { org } = await services.accounts.createOrg({ name: 'bench-core', plan: 'enterprise' });
    await services.accounts.providerKeys.set(org.id, 'openai', 'sk-bench-upstream-key', null);
    const body: CompletionBody = { provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }], max_tokens: 64 };
    const hooks = {
      decided() {},
      admitted() {},
      served() {},
      takeOver(): never {
        throw new Error('the core bench sends JSON completions only');
      },
    };
    let sequence = 0;
    let envelopeBytes = 0;
    const completion = async () => {
      sequence += 1;
      const envelope = await services.gateway.completion({
        body,
        caller: { orgId: org.id, plan: 'enterprise', keyClass: 'live', requestId: `bench-core-${sequence}`, keyId: 'bench-key' },
        sessionId: undefined,
        sourceIp: '127.0.0.1',
        cancel: new ClientCancel(),
        verifier: services.verification.verifier,
        hooks,
        context: null,
      });
      envelopeBytes = Buffer.byteLength(JSON.stringify(envelope));
    };
    const cpuUs = () => {
      const usage = process.cpuUsage();
      return usage.user + usage.system;
    };
    const round = async (kind: 'logic' | 'evidence' | 'without_t5') => {
      t5On = kind !== 'without_t5';
      const started = cpuUs();
      for (let index = 0; index < perRound; index++) {
        await completion();
        if (kind === 'evidence' && index % EVIDENCE_BATCH === EVIDENCE_BATCH - 1) await services.verification.provenance.flush();
      }
      if (kind === 'evidence') await services.verification.provenance.flush();
      const used = (cpuUs() - started) / perRound;
      if (kind !== 'evidence') await services.verification.provenance.flush();
      t5On = true;
      return used;
    };
    for (let index = 0; index < (options.quick ? 3_000 : 6_000); index++) await completion();
    await services.verification.provenance.flush();
    const figures: Record<'logic' | 'evidence' | 'without_t5', number[]> = { logic: [], evidence: [], without_t5: [] };
    for (let index = 0; index < rounds; index++) {
      for (const kind of index % 2 === 0 ? (['logic', 'without_t5', 'evidence'] as const) : (['evidence', 'without_t5', 'logic'] as const)) figures[kind].push(Math.round(await round(kind)));
    }
    const logic = median(figures.logic);
    const withoutT5 = median(figures.without_t5);
    const withEvidence = median(figures.evidence);
    const observe = await observeCost(body, org.id, options.quick ? 20_000 : 100_000);
    return {
      completions_per_round: perRound,
      rounds,
      envelope_bytes: envelopeBytes,
      logic_cpu_us_per_completion: logic,
      with_evidence_cpu_us_per_completion: withEvidence,
      evidence_cpu_us_per_completion: withEvidence - logic,
      // Issue #39 item 3: the evidence write ≤ 40 µs of CPU per completion.
      target_evidence_cpu_us_per_completion: 40,
      evidence_target_met: withEvidence - logic <= 40,
      without_t5_cpu_us_per_completion: withoutT5,
      t5_cpu_us_per_completion: logic - withoutT5,
      t5_observe: observe,
      per_round: figures,
    };
  } finally {
    await t5Cache.close();
    await services.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * One completion's T5 observation alone (the bench's request, one API key's profile): mean wall
 * time per call in memory, and on Redis (BENCH_REDIS_URL) where the record travels to Redis and
 * back (GET + compare-and-set) — time the completion spends waiting only where it exceeds screening.
 */
async function observeCost(body: CompletionBody, orgId: string, calls: number): Promise<object> {
  const event = completionObservation(body, { orgId, plan: 'enterprise', keyClass: 'live', requestId: 'bench', keyId: 'bench-observe' });
  const time = async (baseline: ProfileBaseline, count: number) => {
    for (let index = 0; index < Math.min(1_000, count); index++) await baseline.observe(event);
    const started = performance.now();
    for (let index = 0; index < count; index++) await baseline.observe(event);
    return Math.round(((performance.now() - started) / count) * 1000 * 10) / 10;
  };
  const memory = createCache({ kind: 'memory' }, 'bench-observe:');
  const result: Record<string, number | string> = { memory_us_per_observation: await time(createProfileBaseline(memory), calls) };
  await memory.close();
  const redisUrl = process.env.BENCH_REDIS_URL;
  if (redisUrl === undefined) result.redis = 'skipped: set BENCH_REDIS_URL';
  else {
    const redis = createCache({ kind: 'redis', url: redisUrl }, `bench-observe-${process.pid}:`);
    for (let attempt = 0; attempt < 50 && redis.redis() === null; attempt++) await new Promise((resolve) => setTimeout(resolve, 20));
    result.redis_us_per_observation = await time(createProfileBaseline(redis), Math.min(calls, 5_000));
    const client = redis.redis();
    if (client !== null) {
      const keys = await client.keys(`bench-observe-${process.pid}:*`);
      if (keys.length > 0) await client.del(...keys);
    }
    await redis.close();
  }
  return result;
}
