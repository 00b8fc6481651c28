/**
 * Before/after of a stream's take-over alone (issue #39 item 2): `takeOverReply` (routes.ts: the
 * reply hijacked, the headers set so far handed to the relay) and `SseWriter.start` (relay.ts: the
 * stream's own headers added, `writeHead`, the first event written) from another checkout
 * (BENCH_BEFORE_DIR, its own node_modules) and from this one, loaded into one process and run on
 * real Node `ServerResponse`s. The reply is Fastify's shape as the take-over sees it: `hijack`,
 * `getHeaders` as Fastify 5 builds it (the raw response's headers, then the reply's) and `raw`,
 * with the headers a streamed completion carries by then (request id, rate limit, transparency,
 * the provider used). CPU of this process (process.cpuUsage, µs: user + system) per take-over over
 * interleaved blocks; the load average is printed beside.
 *   BENCH_BEFORE_DIR=/tmp/before npx tsx bench/stream-takeover-before-after.ts
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { round3 } from './lib.ts';
import * as afterRelay from '../src/gateway/relay.ts';
import * as afterRoutes from '../src/gateway/routes.ts';

const beforeDir = process.env.BENCH_BEFORE_DIR;
if (!beforeDir) throw new Error('set BENCH_BEFORE_DIR to a checkout of the code to compare with (its node_modules installed)');
const rounds = Number(process.env.BENCH_ROUNDS ?? 12);
const block = Number(process.env.BENCH_BLOCK ?? 50_000);
const load = () => loadavg().map((value) => Math.round(value * 100) / 100);
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;

interface Side {
  takeOverReply: typeof afterRoutes.takeOverReply;
  SseWriter: typeof afterRelay.SseWriter;
}
const before: Side = {
  takeOverReply: ((await import(pathToFileURL(join(beforeDir, 'src/gateway/routes.ts')).href)) as typeof afterRoutes).takeOverReply,
  SseWriter: ((await import(pathToFileURL(join(beforeDir, 'src/gateway/relay.ts')).href)) as typeof afterRelay).SseWriter,
};
const after: Side = { takeOverReply: afterRoutes.takeOverReply, SseWriter: afterRelay.SseWriter };

const socket = new Socket();
const request = new IncomingMessage(socket);
request.httpVersionMajor = 1;
request.httpVersionMinor = 1;
const first = 'data: {"request_id":"req_0123456789abcdef","index":0,"delta":""}\n\n';
/** A reply as the take-over sees it, with Fastify 5's getHeaders. */
const replyOf = () => {
  const raw = new ServerResponse(request);
  const replyHeaders: Record<string, string | number> = {
    'x-request-id': 'req_0123456789abcdef',
    'x-ratelimit-limit': 600,
    'x-ratelimit-remaining': 599,
    'x-ratelimit-reset': 1_796_000_000,
    'x-ai-generated': 'true',
    'x-ai-act-risk': 'limited',
    'x-ai-automated-decision': 'none',
    'x-svc-provider-used': 'openai',
    'x-svc-model-used': 'gpt-4o-mini',
    'x-svc-attempts': '1',
  };
  return { raw, hijack() {}, getHeaders: () => ({ ...raw.getHeaders(), ...replyHeaders }) };
};
let bytes = 0;
const runBlock = (side: Side): number => {
  const start = process.cpuUsage();
  for (let index = 0; index < block; index += 1) {
    const reply = replyOf();
    const target = side.takeOverReply(reply as never);
    void new side.SseWriter(target.raw).start(target.headers, first);
    bytes += (target.raw as unknown as { _header: string })._header.length;
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / block;
};

const results: Record<string, unknown> = { load_average_start: load(), rounds, take_overs_per_block: block };
const sides: Array<[string, Side]> = [
  ['before', before],
  ['after', after],
];
// The two must write the same head.
const heads = sides.map(([, side]) => {
  const reply = replyOf();
  const target = side.takeOverReply(reply as never);
  void new side.SseWriter(target.raw).start(target.headers, first);
  return (target.raw as unknown as { _header: string })._header.replace(/^Date: .*\r\n/m, '');
});
if (heads[0] !== heads[1]) throw new Error(`the heads differ:\n${heads[0]}\n---\n${heads[1]}`);
for (let index = 0; index < 3; index += 1) for (const [, side] of sides) runBlock(side);
const cpu: Record<string, number[]> = { before: [], after: [] };
for (let round = 0; round < rounds; round += 1) {
  for (const [name, side] of round % 2 === 0 ? sides : [...sides].reverse()) cpu[name]!.push(runBlock(side));
}
results.cpu_us_per_take_over = Object.fromEntries(Object.entries(cpu).map(([name, values]) => [name, { median: round3(median(values)), rounds: values.map((value) => Math.round(value * 100) / 100) }]));
const ratios = cpu.after!.map((value, index) => value / cpu.before![index]!);
results.after_vs_before = round3(median(ratios));
results.blocks_after_lower = ratios.filter((ratio) => ratio < 1).length;
results.head_bytes = bytes > 0 ? heads[1]!.length : 0;
results.load_average_end = load();
process.stdout.write(`${JSON.stringify(results)}\n`);
process.exit(0);
