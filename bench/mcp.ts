/**
 * `npm run bench -- mcp [--quick] [--definitions-only | --latency-only]`: (1) added latency of a tools/call through svc's MCP proxy
 * over the same call made directly to the upstream, both with the official SDK client against an
 * SDK server on loopback, interleaved over rounds (ML tiers off: T1 + T3 signals), and the same
 * proxied call with the T5 baselines of tool calls switched off (`proxied_without_t5`: the proxy's
 * `behaviour` answers a resolved "no anomaly" without observing), interleaved too, after a settled
 * warm-up of the same interleaved calls (2-s windows until two agree: `warm_up_windows`); (2) the
 * tool-definition poisoning detector's detection and false-positive rates per file of
 * ../shared/datasets/mcp/ (the rule the proxy applies on first sight: poisonLevel).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createDetectionEngine, createProfileBaseline, type BehaviourResult, type ProfileBaseline } from '../src/detection/index.ts';
import { createCache } from '../src/platform/cache.ts';
import { createInspector, definitionText, poisonLevel, toolShape } from '../src/mcp/index.ts';
import { percentile, repoRoot, round3, settleWindows } from './lib.ts';

export async function runMcpBench(options: { quick?: boolean; definitionsOnly?: boolean; latencyOnly?: boolean; profile?: boolean } = {}): Promise<object> {
  const profileCalls = options.profile ? 1_500 : 0;
  if (options.latencyOnly) return { latency: await callLatency(options.quick ? 5 : 11, options.quick ? 40 : 200, profileCalls) };
  const detection = await definitionRates();
  if (options.definitionsOnly) return { detection };
  const latency = await callLatency(options.quick ? 5 : 11, options.quick ? 40 : 200, profileCalls);
  return { latency, detection };
}

async function definitionRates(): Promise<object> {
  const directory = join(repoRoot, '..', 'shared', 'datasets', 'mcp');
  if (!existsSync(directory)) return { skipped: 'needs ../shared/datasets/mcp' };
  const inspector = createInspector(createDetectionEngine({ analysisCache: false }));
  const files: Record<string, object> = {};
  for (const file of readdirSync(directory).filter((name) => name.endsWith('.jsonl')).sort()) {
    let attacks = 0, detected = 0, benign = 0, falsePositives = 0, flaggedAttacks = 0, flaggedBenignCount = 0;
    const missed: string[] = [];
    const flaggedBenign: string[] = [];
    for (const line of readFileSync(join(directory, file), 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const record = JSON.parse(line) as { label: string; tool: Record<string, unknown> };
      const name = typeof record.tool.name === 'string' ? record.tool.name : '';
      const level = poisonLevel(await inspector.tool(toolShape(name, record.tool), `${name}\n${definitionText(record.tool)}`, { orgId: 'bench' }));
      const poisoned = level === 'held';
      if (level !== null) {
        if (record.label === 'attack') flaggedAttacks++;
        else flaggedBenignCount++;
      }
      if (record.label === 'attack') {
        attacks++;
        if (poisoned) detected++;
        else if (missed.length < 5) missed.push(name);
      } else {
        benign++;
        if (poisoned) {
          falsePositives++;
          if (flaggedBenign.length < 5) flaggedBenign.push(name);
        }
      }
    }
    files[file] = {
      attacks, detected, detection_rate: attacks === 0 ? null : round3(detected / attacks),
      benign, false_positives: falsePositives, false_positive_rate: benign === 0 ? null : round3(falsePositives / benign),
      flagged_or_held_detection_rate: attacks === 0 ? null : round3(flaggedAttacks / attacks),
      flagged_or_held_false_positive_rate: benign === 0 ? null : round3(flaggedBenignCount / benign),
      examples_missed: missed, examples_false_positive: flaggedBenign,
    };
  }
  return { rule: 'poisonLevel: held = engine decision block (detection_rate / false_positive_rate); flagged = alert or challenge band with a catalogue/signal finding of an injection class; T1 + T3 signals, no ML', files };
}

async function callLatency(rounds: number, callsPerRound: number, profileCalls = 0, cpuBlockPairs = rounds < 11 ? 2 : 4, cpuBlockCalls = 500, windowMs = 2_000): Promise<object> {
  // Test helpers build svc on PGlite in memory and serve an SDK upstream on loopback; the MCP
  // core gets an engine without the ML tiers (T1 + T3 signals), as the target is stated.
  const { createTestServices } = await import('../test/helpers/app.ts');
  const { serveScripted } = await import('../test/mcp/upstreams.ts');
  const { buildApp } = await import('../src/http/build-app.ts');

  const upstream = await serveScripted(() => [
    { definition: { name: 'echo', description: 'Echoes the message.', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } }, result: (args) => `Echo: ${String(args.message)}` },
  ]);
  // The production baseline (memory cache, as the embedded default), switchable per call.
  const t5Cache = createCache({ kind: 'memory' }, 'bench-mcp:');
  const t5 = createProfileBaseline(t5Cache, { namespace: 'mcp-t5' });
  const NO_ANOMALY: Promise<BehaviourResult> = Promise.resolve({ score: 0, anomalies: [] });
  let t5On = true;
  const behaviour: ProfileBaseline = { observe: (event) => (t5On ? t5.observe(event) : NO_ANOMALY) };
  const services = await createTestServices({ env: { LOG_LEVEL: 'error' }, services: { mcp: { detection: createDetectionEngine(), behaviour } } });
  const app = await buildApp(services.config, services);
  const context = {
    app,
    createOrg: async (input: { plan: 'enterprise' }) => ({ apiKey: (await services.accounts.createOrg({ name: `bench-${Date.now()}`, plan: input.plan })).apiKey }),
    close: async () => {
      await app.close();
      await services.close();
      await t5Cache.close();
    },
  };
  try {
    await context.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(context.app.server.address() as AddressInfo).port}`;
    const { apiKey } = await context.createOrg({ plan: 'enterprise' });
    const created = await context.app.inject({ method: 'POST', url: '/api/v1/mcp/servers', headers: { authorization: `Bearer ${apiKey}` }, payload: { name: 'bench', url: upstream.url } });
    const endpoint = new URL((created.json() as { endpoint: string }).endpoint, base);
    const direct = new Client({ name: 'bench-direct', version: '1' });
    const directTransport = new StreamableHTTPClientTransport(new URL(upstream.url));
    await direct.connect(directTransport);
    const proxied = new Client({ name: 'bench-proxied', version: '1' });
    const proxiedTransport = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${apiKey}`, 'x-session-id': 'bench' } } });
    await proxied.connect(proxiedTransport);
    quietClientSignals([directTransport, proxiedTransport]);
    await proxied.listTools();
    const samples = { direct: [] as number[], proxied: [] as number[], withoutT5: [] as number[] };
    const call = async (client: Client, into: number[], withT5 = true) => {
      t5On = withT5;
      const started = performance.now();
      await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
      into.push(performance.now() - started);
      t5On = true;
    };
    const p50 = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);
    // One triple of calls in the rounds' order: direct, proxied, proxied without T5, or the reverse.
    const triple = async (forward: boolean, into: { direct: number[]; proxied: number[]; withoutT5: number[] }) => {
      if (forward) {
        await call(direct, into.direct);
        await call(proxied, into.proxied);
        await call(proxied, into.withoutT5, false);
      } else {
        await call(proxied, into.withoutT5, false);
        await call(proxied, into.proxied);
        await call(direct, into.direct);
      }
    };
    // Settled warm-up: 2-s windows of the rounds' interleaved triples (so direct and proxied
    // calls warm alike) until the added p50 of two windows in a row agree within 15 %. A fixed
    // 20 calls per client left svc's longer path still being optimised in the first rounds.
    const warmUp = { direct_p50_ms: [] as number[], proxied_p50_ms: [] as number[] };
    const { figures: warmUpAdded, settled } = await settleWindows(async () => {
      const window = { direct: [] as number[], proxied: [] as number[], withoutT5: [] as number[] };
      const until = performance.now() + windowMs;
      for (let index = 0; performance.now() < until; index++) await triple(index % 2 === 0, window);
      warmUp.direct_p50_ms.push(round3(p50(window.direct)));
      warmUp.proxied_p50_ms.push(round3(p50(window.proxied)));
      return p50(window.proxied) - p50(window.direct);
    });
    const perRound: number[] = [];
    const t5PerRound: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const roundDirect: number[] = [];
      const roundProxied: number[] = [];
      const roundWithoutT5: number[] = [];
      for (let index = 0; index < callsPerRound; index++) await triple((index + round) % 2 === 0, { direct: roundDirect, proxied: roundProxied, withoutT5: roundWithoutT5 });
      samples.direct.push(...roundDirect);
      samples.proxied.push(...roundProxied);
      samples.withoutT5.push(...roundWithoutT5);
      perRound.push(p50(roundProxied) - p50(roundDirect));
      t5PerRound.push(p50(roundProxied) - p50(roundWithoutT5));
    }
    // CPU per call (client, svc and upstream share this process): blocks of direct calls and of
    // proxied calls, alternating; a proxied block ends with the audit entries appended
    // (mcp.flush), so its gathered transactions count in it. The difference is svc's added CPU.
    const cpuBlocks = { direct: [] as number[], proxied: [] as number[] };
    const cpuBlockOf = async (client: Client, flush: boolean, calls: number) => {
      for (let index = 0; index < calls; index++) await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
      if (flush) await services.mcp.flush();
    };
    const cpuBlock = async (client: Client, flush: boolean, into: number[]) => {
      const started = process.cpuUsage();
      await cpuBlockOf(client, flush, cpuBlockCalls);
      const used = process.cpuUsage(started);
      into.push((used.user + used.system) / cpuBlockCalls);
    };
    for (let block = 0; block < cpuBlockPairs; block++) {
      if (block % 2 === 0) {
        await cpuBlock(direct, false, cpuBlocks.direct);
        await cpuBlock(proxied, true, cpuBlocks.proxied);
      } else {
        await cpuBlock(proxied, true, cpuBlocks.proxied);
        await cpuBlock(direct, false, cpuBlocks.direct);
      }
    }
    const cpuAdded = cpuBlocks.proxied.map((value, index) => value - cpuBlocks.direct[index]!);
    const profile = profileCalls > 0 ? await profileParts(profileCalls, (flush) => cpuBlockOf(flush ? proxied : direct, flush, profileCalls)) : undefined;
    await direct.close();
    await proxied.close();
    const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
    return {
      calls_per_client: samples.direct.length,
      // The settled warm-up's windows (2 s each, interleaved like the rounds): added p50 per window.
      warm_up_windows: { count: warmUpAdded.length, settled, window_s: windowMs / 1000, added_p50_ms: warmUpAdded.map(round3), ...warmUp },
      direct_p50_ms: round3(percentile(sorted(samples.direct), 50)),
      proxied_p50_ms: round3(percentile(sorted(samples.proxied), 50)),
      direct_p99_ms: round3(percentile(sorted(samples.direct), 99)),
      proxied_p99_ms: round3(percentile(sorted(samples.proxied), 99)),
      added_p50_ms: round3(percentile(sorted(perRound), 50)),
      added_p50_per_round_ms: perRound.map(round3),
      proxied_without_t5_p50_ms: round3(percentile(sorted(samples.withoutT5), 50)),
      t5_added_p50_ms: round3(percentile(sorted(t5PerRound), 50)),
      t5_added_p50_per_round_ms: t5PerRound.map(round3),
      cpu_us_per_call: {
        calls_per_block: cpuBlockCalls,
        direct: cpuBlocks.direct.map(Math.round),
        proxied: cpuBlocks.proxied.map(Math.round),
        added_per_block: cpuAdded.map(Math.round),
        added_median: Math.round(percentile(sorted(cpuAdded), 50)),
      },
      ...(profile === undefined ? {} : { profile }),
      target_added_p50_ms: 1,
      target_met: percentile(sorted(perRound), 50) <= 1,
    };
  } finally {
    restoreWarnings();
    await context.close();
    await upstream.close();
  }
}

/**
 * The SDK client's transport passes one AbortSignal (its own, per connection) to every POST's
 * fetch; undici adds an abort listener to it per request and removes it only when that request is
 * garbage-collected, raising the signal's limit to 1,500 itself on each fetch, so thousands of
 * sequential calls pass the limit and Node prints MaxListenersExceededWarning. That is the bench's
 * client, not svc: only that warning, for those two signals, is dropped (every other warning,
 * svc's signals' included, is printed as before). setMaxListeners on the signal cannot help, as
 * undici sets it back to 1,500 on every fetch.
 */
let restoreWarnings = () => {};
function quietClientSignals(transports: readonly StreamableHTTPClientTransport[]): void {
  const signals = new Set(transports.map((transport) => (transport as unknown as { _abortController?: AbortController })._abortController?.signal).filter((signal) => signal !== undefined));
  const printers = process.listeners('warning');
  const filter = (warning: Error & { target?: unknown }) => {
    if (warning.name === 'MaxListenersExceededWarning' && signals.has(warning.target as AbortSignal)) return;
    for (const printer of printers) printer.call(process, warning);
  };
  process.removeAllListeners('warning');
  process.on('warning', filter);
  restoreWarnings = () => {
    process.off('warning', filter);
    for (const printer of printers) process.on('warning', printer);
    restoreWarnings = () => {};
  };
}

/**
 * `--profile`: where svc's added CPU per call goes. V8's sampling profiler (node:inspector, one
 * sample every 100 µs) over a block of direct calls and then a block of proxied calls (their audit
 * entries appended at its end); each part's self time per call (bench/gateway-profile.ts's parts),
 * proxied minus direct, is svc's share of that part. Idle time is left out.
 */
async function profileParts(calls: number, block: (proxied: boolean) => Promise<void>): Promise<object> {
  const { Session } = await import('node:inspector/promises');
  const { partOf, partsInWindows } = await import('./gateway-profile.ts');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  const profiled = async (proxied: boolean) => {
    await session.post('Profiler.start');
    await block(proxied);
    const { profile } = await session.post('Profiler.stop');
    return partsInWindows(profile as Parameters<typeof partsInWindows>[0], [[0, Number.MAX_SAFE_INTEGER]], partOf);
  };
  const direct = await profiled(false);
  const proxied = await profiled(true);
  session.disconnect();
  const parts = new Set([...direct.keys(), ...proxied.keys()].filter((part) => part !== 'idle'));
  const added = [...parts].map((part) => [part, ((proxied.get(part) ?? 0) - (direct.get(part) ?? 0)) / calls] as const).sort((a, b) => b[1] - a[1]);
  const total = added.reduce((sum, [, value]) => sum + value, 0);
  return {
    calls_per_block: calls,
    added_us_per_call: Math.round(total),
    parts_us_per_call: Object.fromEntries(added.filter(([, value]) => Math.abs(value) >= 1).map(([part, value]) => [part, Math.round(value)])),
  };
}
