/**
 * Before/after of the OpenAI-compatible stream parser alone (issue #39 item 2, speed-stream8
 * round): `parseOpenAiStream` from another checkout (BENCH_BEFORE_DIR, its node_modules linked) and
 * from this one, loaded into one process, each reading the same in-memory SSE answer (the fast fake
 * upstream's chunks: BENCH_STREAM_CHUNKS deltas, 200 by default, in BENCH_READS upstream reads, 1
 * by default) to its done event. CPU of this process (process.cpuUsage: user + system) per stream
 * over BENCH_ROUNDS interleaved blocks; no network, so what it shows is the parser's own cost.
 *   BENCH_BEFORE_DIR=/tmp/before BENCH_STREAM_CHUNKS=5 npx tsx bench/stream-parse-before-after.ts
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { interleavedCpu } from './lib.ts';
import * as after from '../src/gateway/providers/shared/openai-chat.ts';
const before = (await import(pathToFileURL(join(process.env.BENCH_BEFORE_DIR!, 'src/gateway/providers/shared/openai-chat.ts')).href)) as typeof after;
const n = Number(process.env.BENCH_STREAM_CHUNKS ?? 200);
const rounds = Number(process.env.BENCH_ROUNDS ?? 20);
const base = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1700000000, model: 'bench-model' };
const line = (p: unknown) => `data: ${JSON.stringify(p)}\n\n`;
let text = line({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
for (let i = 0; i < n; i++) text += line({ ...base, choices: [{ index: 0, delta: { content: `word${i} ` }, finish_reason: null }] });
text += line({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) + line({ ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 } }) + 'data: [DONE]\n\n';
const bytes = new TextEncoder().encode(text);
const reads = Number(process.env.BENCH_READS ?? 1);
const pieces: Uint8Array[] = []; const size = Math.ceil(bytes.length / reads);
for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.subarray(i, i + size));
async function* body() { for (const p of pieces) yield p; }
const once = async (mod: typeof after) => { let c = 0; const it = mod.parseOpenAiStream('openai', body())[Symbol.asyncIterator](); for (let r = await it.next(); !r.done; r = await it.next()) { c++; if (r.value.type === 'done') break; } return c; };
const k = Math.max(20, Math.round(40000 / n));
const { before: b, after: a, ratios: r } = await interleavedCpu(() => once(before), () => once(after), { rounds, perBlock: k });
const med = (l: number[]) => [...l].sort((p, q) => p - q)[l.length >> 1]!;
console.log(JSON.stringify({ load_average: loadavg().map((value) => +value.toFixed(2)), chunks: n, reads, before_us: +med(b).toFixed(2), after_us: +med(a).toFixed(2), after_vs_before: +med(r).toFixed(3) }));
