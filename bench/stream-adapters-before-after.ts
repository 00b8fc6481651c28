/**
 * Before/after of the Anthropic, Gemini, Cohere and Bedrock stream parsers alone (issue #39 item 2,
 * speed-stream9 round: per-event async generators → one read's events converted together,
 * streamEvents). Each adapter's `parseStream` from another checkout (BENCH_BEFORE_DIR, its
 * node_modules linked) and from this one, loaded into one process, each reading the same
 * in-memory upstream answer (BENCH_STREAM_CHUNKS text deltas, 200 by default, in the provider's
 * own framing: SSE, or event-stream frames for Bedrock; BENCH_READS upstream reads, 1 by default)
 * to its done event. CPU of this process (process.cpuUsage: user + system) per stream, over
 * BENCH_ROUNDS interleaved blocks whose order alternates; the load average is printed per adapter.
 *   BENCH_BEFORE_DIR=/tmp/before BENCH_STREAM_CHUNKS=20 npx tsx bench/stream-adapters-before-after.ts
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { StreamEvent } from '../src/gateway/contract.ts';
import * as anthropicAfter from '../src/gateway/providers/anthropic.ts';
import * as bedrockAfter from '../src/gateway/providers/bedrock.ts';
import * as cohereAfter from '../src/gateway/providers/cohere.ts';
import * as geminiAfter from '../src/gateway/providers/gemini.ts';
import { encodeEvent } from '../test/fakes/providers/protocols/bedrock.ts';
import { interleavedCpu } from './lib.ts';

type Parse = (body: AsyncIterable<Uint8Array>) => AsyncIterable<StreamEvent>;
const beforeDir = process.env.BENCH_BEFORE_DIR!;
const load = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(beforeDir, path)).href)) as T;
const n = Number(process.env.BENCH_STREAM_CHUNKS ?? 200);
const reads = Number(process.env.BENCH_READS ?? 1);
const rounds = Number(process.env.BENCH_ROUNDS ?? 20);
const only = process.env.BENCH_ADAPTERS?.split(',');
const encoder = new TextEncoder();
const sse = (events: [string | null, unknown][]) => encoder.encode(events.map(([name, data]) => `${name === null ? '' : `event: ${name}\n`}data: ${JSON.stringify(data)}\n\n`).join(''));
const words = Array.from({ length: n }, (_, i) => `word${i} `);

const answers: Record<string, Uint8Array> = {
  anthropic: sse([
    ['message_start', { type: 'message_start', message: { id: 'msg_bench', type: 'message', role: 'assistant', model: 'claude-bench', content: [], usage: { input_tokens: 12, output_tokens: 1 } } }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
    ...words.map((text): [string, unknown] => ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }]),
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: n } }],
    ['message_stop', { type: 'message_stop' }],
  ]),
  gemini: sse([
    ...words.map((text): [null, unknown] => [null, { candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0 }], modelVersion: 'gemini-bench' }]),
    [null, { candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 12, candidatesTokenCount: n, totalTokenCount: 12 + n }, modelVersion: 'gemini-bench' }],
  ]),
  cohere: sse([
    ['message-start', { type: 'message-start', id: 'bench', delta: { message: { role: 'assistant' } } }],
    ...words.map((text): [string, unknown] => ['content-delta', { type: 'content-delta', index: 0, delta: { message: { content: { text } } } }]),
    ['message-end', { type: 'message-end', delta: { finish_reason: 'COMPLETE', usage: { billed_units: { input_tokens: 12, output_tokens: n }, tokens: { input_tokens: 12, output_tokens: n } } } }],
  ]),
  bedrock: (() => {
    const frames = [
      encodeEvent('messageStart', { role: 'assistant' }),
      ...words.map((text) => encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text } })),
      encodeEvent('contentBlockStop', { contentBlockIndex: 0 }),
      encodeEvent('messageStop', { stopReason: 'end_turn' }),
      encodeEvent('metadata', { usage: { inputTokens: 12, outputTokens: n, totalTokens: 12 + n }, metrics: { latencyMs: 10 } }),
    ];
    const out = new Uint8Array(frames.reduce((sum, frame) => sum + frame.length, 0));
    let offset = 0;
    for (const frame of frames) {
      out.set(frame, offset);
      offset += frame.length;
    }
    return out;
  })(),
};

const parsers: Record<string, { before: Parse; after: Parse }> = {
  anthropic: { before: (await load<typeof anthropicAfter>('src/gateway/providers/anthropic.ts')).anthropic.parseStream, after: anthropicAfter.anthropic.parseStream },
  gemini: { before: (await load<typeof geminiAfter>('src/gateway/providers/gemini.ts')).gemini.parseStream, after: geminiAfter.gemini.parseStream },
  cohere: { before: (await load<typeof cohereAfter>('src/gateway/providers/cohere.ts')).cohere.parseStream, after: cohereAfter.cohere.parseStream },
  bedrock: { before: (await load<typeof bedrockAfter>('src/gateway/providers/bedrock.ts')).bedrock.parseStream, after: bedrockAfter.bedrock.parseStream },
};

const med = (list: number[]) => [...list].sort((p, q) => p - q)[list.length >> 1]!;
for (const [name, { before, after }] of Object.entries(parsers)) {
  if (only !== undefined && !only.includes(name)) continue;
  const bytes = answers[name]!;
  const pieces: Uint8Array[] = [];
  const size = Math.ceil(bytes.length / reads);
  for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.subarray(i, i + size));
  async function* body() {
    // A fresh buffer per read, as a socket hands over (the Bedrock decoder keeps subarrays).
    for (const piece of pieces) yield new Uint8Array(piece);
  }
  const once = async (parse: Parse) => {
    let count = 0;
    const iterator = parse(body())[Symbol.asyncIterator]();
    for (let result = await iterator.next(); result.done !== true; result = await iterator.next()) {
      count++;
      if (result.value.type === 'done') break;
    }
    if (count !== n + 1) throw new Error(`${name}: ${count} events, expected ${n + 1}`);
  };
  const k = Math.max(20, Math.round(40000 / n));
  const { before: b, after: a, ratios: r } = await interleavedCpu(() => once(before), () => once(after), { rounds, perBlock: k });
  console.log(JSON.stringify({ adapter: name, load_average: loadavg().map((value) => +value.toFixed(2)), chunks: n, reads, bytes: bytes.length, before_us: +med(b).toFixed(2), after_us: +med(a).toFixed(2), after_vs_before: +med(r).toFixed(3) }));
}
