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
 * The difference is what writing each completion's evidence costs on the embedded engine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClientCancel } from '../src/gateway/cancel.ts';
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
  const config = benchConfig({ DATABASE_URL: `pglite:${dataDir}/pglite`, DATA_DIR: dataDir, REDIS_URL: 'memory:', LOG_LEVEL: 'warn' });
  const services = await createServices(config, {
    logDestination: discardedLogs(),
    // Records are written only when the bench flushes them (inside an evidence round, or after a logic round).
    verification: { provenance: { flushMs: 3_600_000, batch: EVIDENCE_BATCH, maxBacklog: 1_000_000_000 } },
    gateway: {
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
        caller: { orgId: org.id, plan: 'enterprise', keyClass: 'live', requestId: `bench-core-${sequence}` },
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
    const round = async (kind: 'logic' | 'evidence') => {
      const started = cpuUs();
      for (let index = 0; index < perRound; index++) {
        await completion();
        if (kind === 'evidence' && index % EVIDENCE_BATCH === EVIDENCE_BATCH - 1) await services.verification.provenance.flush();
      }
      if (kind === 'evidence') await services.verification.provenance.flush();
      const used = (cpuUs() - started) / perRound;
      if (kind === 'logic') await services.verification.provenance.flush();
      return used;
    };
    for (let index = 0; index < (options.quick ? 3_000 : 6_000); index++) await completion();
    await services.verification.provenance.flush();
    const figures: Record<'logic' | 'evidence', number[]> = { logic: [], evidence: [] };
    for (let index = 0; index < rounds; index++) {
      for (const kind of index % 2 === 0 ? (['logic', 'evidence'] as const) : (['evidence', 'logic'] as const)) figures[kind].push(Math.round(await round(kind)));
    }
    const logic = median(figures.logic);
    const withEvidence = median(figures.evidence);
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
      per_round: figures,
    };
  } finally {
    await services.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
