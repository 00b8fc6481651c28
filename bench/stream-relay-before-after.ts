/**
 * Before/after of the stream relay alone (issue #39 item 2): `pipe` (src/gateway/relay.ts, one
 * write per upstream read) against the per-event relay it replaced (test/support/relay-reference.ts),
 * in one process, over real HTTP on loopback. Each request is answered by relaying the OpenAI
 * adapter's parse of an in-memory upstream answer (BENCH_STREAM_CHUNKS deltas, in BENCH_READS
 * reads, 1 by default) to the Node response with svc's own encoder; no Fastify, detection,
 * settlement or database, so what differs between the two sides is the relay. The client (undici,
 * one connection, sequential) runs in the same process and costs the same on both sides. CPU of the
 * process (process.cpuUsage, user + system) per streamed completion over interleaved blocks whose
 * order alternates; medians, the ratio after ÷ before per block pair, and the load average.
 * BENCH_SAME=1 runs `pipe` on both sides (an A/A run).
 *   [BENCH_STREAM_CHUNKS=5] [BENCH_READS=1] [BENCH_ROUNDS=12] [BENCH_BLOCK=400] npx tsx bench/stream-relay-before-after.ts
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { Pool } from 'undici';
import { round3 } from './lib.ts';
import type { PreparedCompletion } from '../src/gateway/admission.ts';
import { ClientCancel } from '../src/gateway/cancel.ts';
import type { StreamEvent } from '../src/gateway/contract.ts';
import { openai } from '../src/gateway/providers/openai.ts';
import { pipe, type OpenedStream } from '../src/gateway/relay.ts';
import { pipeReference } from '../test/support/relay-reference.ts';

const chunks = Number(process.env.BENCH_STREAM_CHUNKS ?? 5);
const readsPerAnswer = Number(process.env.BENCH_READS ?? 1);
const rounds = Number(process.env.BENCH_ROUNDS ?? 12);
const block = Number(process.env.BENCH_BLOCK ?? 400);
const same = process.env.BENCH_SAME === '1';
const load = () => loadavg().map((value) => Math.round(value * 100) / 100);
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;

const words = ['Keep', '-alive', ' connections', ' let', ' a', ' gateway', ' reuse', ' sockets', ' and', ' skip'];
let text = `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'gpt-4o-mini', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`;
for (let index = 0; index < chunks; index++) {
  text += `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content: words[index % words.length] }, finish_reason: null }] })}\n\n`;
}
text += `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'gpt-4o-mini', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`;
text += `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 20, completion_tokens: chunks, total_tokens: 20 + chunks } })}\n\n`;
text += 'data: [DONE]\n\n';
const bytes = new TextEncoder().encode(text);
const reads: Uint8Array[] = [];
for (let index = 0; index < readsPerAnswer; index++) reads.push(bytes.subarray(Math.floor((bytes.length * index) / readsPerAnswer), Math.floor((bytes.length * (index + 1)) / readsPerAnswer)));
const body = (): AsyncIterable<Uint8Array> => ({
  async *[Symbol.asyncIterator]() {
    for (const read of reads) yield new Uint8Array(read);
  },
});

const prepared = {
  caller: { requestId: 'req_0123456789abcdef', orgId: 'org_1' },
  request: { messages: [{ role: 'user', content: 'hi' }] },
  settings: { piiRestore: false },
  redaction: null,
  startedAt: performance.now(),
} as unknown as PreparedCompletion;
const relays = { before: same ? pipe : pipeReference, after: pipe };

const server = createServer((request, response: ServerResponse) => {
  const relay = request.url === '/before' ? relays.before : relays.after;
  request.resume();
  request.on('end', () => {
    void (async () => {
      const rest = openai.parseStream(body(), 'gpt-4o-mini')[Symbol.asyncIterator]();
      const first = await rest.next();
      const opened: OpenedStream = {
        provider: 'openai',
        model: 'gpt-4o-mini',
        served: { provider: 'openai', model: 'gpt-4o-mini', passedOver: [], attempts: 1 },
        first: first.value as StreamEvent,
        rest,
        restore: { push: (delta) => delta, flush: () => '' },
        finish: (outcome) => (outcome.kind === 'done' ? { usage: outcome.event.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, costUsd: 0.0001 } : null),
      };
      const headers = { 'x-request-id': 'req_0123456789abcdef', 'x-svc-provider-used': 'openai', 'x-svc-model-used': 'gpt-4o-mini' };
      await relay({ ...prepared, startedAt: performance.now() } as PreparedCompletion, opened, { raw: response, headers }, new ClientCancel(), null, null);
    })();
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 1 });
const once = async (path: string): Promise<string> => {
  const response = await pool.request({ path, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  return response.body.text();
};
const masked = (answer: string) => answer.replace(/"latency_ms":[0-9.e-]+/, '');
if (masked(await once('/before')) !== masked(await once('/after'))) throw new Error('the two relays sent different bodies');
const runBlock = async (path: string): Promise<number> => {
  const start = process.cpuUsage();
  for (let index = 0; index < block; index++) await once(path);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / block;
};
for (let index = 0; index < 3; index++) for (const path of ['/before', '/after']) await runBlock(path);
const results: Record<string, unknown> = { load_average_start: load(), deltas: chunks, upstream_reads: readsPerAnswer, rounds, streams_per_block: block, a_a: same };
const cpu: Record<string, number[]> = { before: [], after: [] };
for (let round = 0; round < rounds; round++) {
  for (const name of round % 2 === 0 ? ['before', 'after'] : ['after', 'before']) cpu[name]!.push(await runBlock(`/${name}`));
}
results.cpu_us_per_stream = Object.fromEntries(Object.entries(cpu).map(([name, values]) => [name, { median: round3(median(values)), rounds: values.map((value) => Math.round(value)) }]));
const ratios = cpu.after!.map((value, index) => value / cpu.before![index]!);
results.after_vs_before = round3(median(ratios));
results.blocks_after_lower = ratios.filter((ratio) => ratio < 1).length;
results.load_average_end = load();
process.stdout.write(`${JSON.stringify(results)}\n`);
await pool.close();
server.close();
process.exit(0);
