// Inspection worker of `npm run bench -- inspect`: the default detection engine (createDetection
// with no cache or database: T1, the T3 signals and the T3 classifier, the analysis cache on)
// loaded from BENCH_SOURCE_ROOT (a checkout; this one by default), so that two checkouts can be
// measured side by side in one run. Reads one JSON line per batch, `{ "texts": [{ kind,
// content }] }`, inspects the texts one after another and answers one line: the process's user +
// system CPU time for the batch (µs) and each text's decision (with `"patterns": true` in the
// batch, each text's matched pattern ids and confidences too). Prints `{ "ready": true }` first.
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

interface Engine { inspect(request: { kind: string; content: string }): Promise<{ decision: string; threat_score: number; patterns_matched: { id: string; confidence: number }[] }> }

const root = resolve(process.env.BENCH_SOURCE_ROOT ?? resolve(import.meta.dirname, '../..'));
const detection = (await import(pathToFileURL(resolve(root, 'src/detection/index.ts')).href)) as { createDetection(options: object): Engine };
const engine = detection.createDetection({});
// Warm up the code paths (JIT) on texts the batches will not repeat.
for (let index = 0; index < 50; index++) await engine.inspect({ kind: 'prompt', content: `warm-up ${index}: summarise the attached notes in ${index} bullet points. `.repeat(1 + (index % 40)) });
process.stdout.write(`${JSON.stringify({ ready: true, root })}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === '') continue;
  const { texts, patterns: wantPatterns } = JSON.parse(line) as { texts: { kind: string; content: string }[]; patterns?: boolean };
  const decisions: string[] = [];
  const scores: number[] = [];
  const patterns: string[][] = [];
  const before = process.cpuUsage();
  for (const text of texts) {
    const decision = await engine.inspect(text);
    decisions.push(decision.decision);
    scores.push(decision.threat_score);
    if (wantPatterns === true) patterns.push(decision.patterns_matched.map((pattern) => `${pattern.id}:${Math.round(pattern.confidence * 100) / 100}`));
  }
  const used = process.cpuUsage(before);
  process.stdout.write(`${JSON.stringify({ cpu_us: used.user + used.system, decisions, scores, ...(wantPatterns === true ? { patterns } : {}) })}\n`);
}
