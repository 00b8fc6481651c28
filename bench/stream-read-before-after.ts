/**
 * Before/after of the upstream half of a streamed completion alone (issue #39 item 2): the
 * provider registry's `invokeStream` from another checkout (BENCH_BEFORE_DIR, its own
 * node_modules) and from this one, loaded into one process, each reading the fast fake upstream's
 * streamed answer (BENCH_STREAM_CHUNKS deltas, 5 by default: the gateway benchmark's) to its done
 * event as the relay does, with BENCH_CONCURRENCY streams in flight (10 by default). CPU of this
 * process (process.cpuUsage, µs: user + system) per stream over interleaved blocks of
 * BENCH_BLOCK streams; the fake upstream runs in a child process and is not counted.
 *
 * Why beside gateway-cpu-before-after.ts: that bench measures the whole completion through three
 * servers, which on a machine shared with other work (load 20+) scatters by more than the
 * change it should show; this one measures only the code the change touched, in one process,
 * alternating the two versions block by block, so the other work's load hits both alike.
 *   BENCH_BEFORE_DIR=/tmp/before npx tsx bench/stream-read-before-after.ts
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { round3, startChild, type ChildServer } from './lib.ts';
import * as afterRegistry from '../src/gateway/registry.ts';

const beforeDir = process.env.BENCH_BEFORE_DIR;
if (!beforeDir) throw new Error('set BENCH_BEFORE_DIR to a checkout of the code to compare with (its node_modules installed)');
const rounds = Number(process.env.BENCH_ROUNDS ?? 12);
const block = Number(process.env.BENCH_BLOCK ?? 1_000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 10);
const load = () => loadavg().map((value) => Math.round(value * 100) / 100);
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;

type Registry = typeof afterRegistry;
const beforeRegistry = (await import(pathToFileURL(join(beforeDir, 'src/gateway/registry.ts')).href)) as Registry;

const results: Record<string, unknown> = { load_average_start: load(), rounds, streams_per_block: block, concurrency };
const children: ChildServer[] = [];
try {
  const upstream = await startChild('bench/gateway-upstream.ts', { BENCH_STREAM_CHUNKS: process.env.BENCH_STREAM_CHUNKS ?? '5' });
  children.push(upstream);
  const target = { apiKey: 'sk-bench-upstream-key', baseUrl: String(upstream.info.base_url) };
  const request = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Summarize in one sentence why keep-alive connections matter for API gateways.' }], max_tokens: 64, stream: true };
  /** One stream read as the relay reads it: up to its done event, then no further call. */
  const readOne = async (registry: Registry): Promise<number> => {
    const stream = (await registry.invokeStream('openai', request, target, { publicOnly: false }))[Symbol.asyncIterator]();
    let text = 0;
    for (let next = await stream.next(); next.done !== true; next = await stream.next()) {
      if (next.value.type === 'delta') text += next.value.text.length;
      if (next.value.type === 'done') break;
    }
    return text;
  };
  const runBlock = async (registry: Registry): Promise<number> => {
    let left = block;
    const worker = async () => {
      while (left > 0) {
        left -= 1;
        if ((await readOne(registry)) === 0) throw new Error('a stream without text');
      }
    };
    const start = process.cpuUsage();
    await Promise.all(Array.from({ length: concurrency }, worker));
    const used = process.cpuUsage(start);
    return (used.user + used.system) / block;
  };
  const sides: Array<[string, Registry]> = [
    ['before', beforeRegistry],
    ['after', afterRegistry],
  ];
  // Warm-up: JIT, the connection pools, lazily built parts.
  for (let index = 0; index < 3; index += 1) for (const [, registry] of sides) await runBlock(registry);
  const cpu: Record<string, number[]> = { before: [], after: [] };
  for (let round = 0; round < rounds; round += 1) {
    for (const [name, registry] of round % 2 === 0 ? sides : [...sides].reverse()) cpu[name]!.push(await runBlock(registry));
  }
  results.cpu_us_per_stream = Object.fromEntries(Object.entries(cpu).map(([name, values]) => [name, { median: round3(median(values)), rounds: values.map((value) => Math.round(value * 10) / 10) }]));
  results.after_vs_before = round3(median(cpu.after!.map((value, index) => value / cpu.before![index]!)));
} finally {
  await Promise.all(children.map((child) => child.stop()));
}
results.load_average_end = load();
process.stdout.write(`${JSON.stringify(results)}\n`);
process.exit(0);
