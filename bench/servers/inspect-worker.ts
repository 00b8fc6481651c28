// Inspection worker of `npm run bench -- inspect`: the default detection engine (createDetection
// with no cache or database: T1, the T3 signals and the T3 classifier, the analysis cache on)
// loaded from BENCH_SOURCE_ROOT (a checkout; this one by default), so that two checkouts can be
// measured side by side in one run. Reads one JSON line per batch, `{ "texts": [{ kind,
// content }] }`, inspects the texts one after another and answers one line: the process's user +
// system CPU time for the batch (µs) and each text's decision (with `"patterns": true` in the
// batch, each text's matched pattern ids and confidences too). With `"t3_weights": "<file>"` in
// the batch, the texts are inspected by an engine whose T3 classifier is that weights file's (the
// drift part's out-of-sample rows: the head trained without the source measured), everything else
// as served. Prints `{ "ready": true }` first.
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { readFileSync } from 'node:fs';

interface Engine { inspect(request: { kind: string; content: string }): Promise<{ decision: string; threat_score: number; patterns_matched: { id: string; confidence: number }[] }> }

const root = resolve(process.env.BENCH_SOURCE_ROOT ?? resolve(import.meta.dirname, '../..'));
const detection = (await import(pathToFileURL(resolve(root, 'src/detection/index.ts')).href)) as { createDetection(options: object): Engine };
const engine = detection.createDetection({});
const t3 = (await import(pathToFileURL(resolve(root, 'src/detection/ml/t3.ts')).href)) as { createT3Classifier(weights: unknown): unknown; decodeWeights(text: string): unknown };
// The last held-out engine only (the drift part asks for one source's head after another).
let heldOut: { file: string; engine: Engine } | null = null;
const engineFor = (weightsFile: string | undefined): Engine => {
  if (weightsFile === undefined) return engine;
  if (heldOut?.file !== weightsFile) heldOut = { file: weightsFile, engine: detection.createDetection({ t3Classifier: t3.createT3Classifier(t3.decodeWeights(readFileSync(weightsFile, 'utf8'))) }) };
  return heldOut.engine;
};
// Warm up the code paths (JIT) on texts the batches will not repeat.
for (let index = 0; index < 50; index++) await engine.inspect({ kind: 'prompt', content: `warm-up ${index}: summarise the attached notes in ${index} bullet points. `.repeat(1 + (index % 40)) });
process.stdout.write(`${JSON.stringify({ ready: true, root })}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === '') continue;
  const { texts, patterns: wantPatterns, t3_weights: weightsFile } = JSON.parse(line) as { texts: { kind: string; content: string }[]; patterns?: boolean; t3_weights?: string };
  const inspector = engineFor(weightsFile);
  const decisions: string[] = [];
  const scores: number[] = [];
  const patterns: string[][] = [];
  const before = process.cpuUsage();
  for (const text of texts) {
    const decision = await inspector.inspect(text);
    decisions.push(decision.decision);
    scores.push(decision.threat_score);
    if (wantPatterns === true) patterns.push(decision.patterns_matched.map((pattern) => `${pattern.id}:${Math.round(pattern.confidence * 100) / 100}`));
  }
  const used = process.cpuUsage(before);
  process.stdout.write(`${JSON.stringify({ cpu_us: used.user + used.system, decisions, scores, ...(wantPatterns === true ? { patterns } : {}) })}\n`);
}
