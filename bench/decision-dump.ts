/**
 * `npx tsx bench/decision-dump.ts <checkout> <out.tsv>`: the decisions of a checkout's engine as
 * served (`createDetection({})`, loaded from `<checkout>/src`) on every record of
 * ../shared/datasets it can read as a request, one line per text: index, decision, threat_score
 * and patterns_matched (ids and confidences). Two checkouts' files compared with `cmp` show
 * whether a change that should not move detection (a faster formulation) moved any of it.
 *
 * Texts, in a fixed order: each prompt-injection record as its kind (retrieved content as
 * tool_output, agent traces as llm_output, the rest as prompts); the same records of each kind
 * concatenated and cut at 1, 4 and 16 KB; the HTTP payload lists as http; the PII corpora as
 * prompts; RAGTruth's answers as llm_output and their sources as tool_output.
 */
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

interface Engine { inspect(request: { kind: string; content: string }): Promise<{ decision: string; threat_score: number; patterns_matched: unknown }> }

const [checkout, out] = process.argv.slice(2);
if (checkout === undefined || out === undefined) throw new Error('usage: npx tsx bench/decision-dump.ts <checkout> <out.tsv>');
const datasets = path.resolve(import.meta.dirname, '../../shared/datasets');
const detection = (await import(pathToFileURL(path.resolve(checkout, 'src/detection/detection.ts')).href)) as { createDetection(options: object): Engine };
const engine = detection.createDetection({});

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter((line) => line.length > 0).map((line) => JSON.parse(line) as Record<string, unknown>);
const texts: { kind: string; content: string }[] = [];
const byKind: Record<string, string[]> = { prompt: [], tool_output: [], llm_output: [] };
const injection = path.join(datasets, 'prompt_injection');
for (const file of readdirSync(injection).filter((name) => name.endsWith('.jsonl')).sort()) {
  for (const record of lines(path.join(injection, file))) {
    const kind = record.direction === 'retrieved_content' ? 'tool_output' : record.direction === 'llm_output' ? 'llm_output' : 'prompt';
    texts.push({ kind, content: String(record.text) });
    byKind[kind]!.push(String(record.text));
  }
}
for (const size of [1024, 4096, 16384]) {
  for (const [kind, records] of Object.entries(byKind)) {
    let text = '';
    for (const record of records) {
      text += `${record}\n\n`;
      if (text.length >= size) {
        texts.push({ kind, content: text.slice(0, size) });
        text = '';
      }
    }
  }
}
for (const file of ['debian_wfuzz', 'fuzzdb', 'libinjection', 'payloadsallthethings']) for (const record of lines(path.join(datasets, 'http', `${file}.jsonl`))) texts.push({ kind: 'http', content: String(record.text) });
for (const record of lines(path.join(datasets, 'http', 'crs_regression.jsonl'))) {
  const request = record.request as { uri?: unknown; data?: unknown } | undefined;
  if (typeof request?.uri === 'string') texts.push({ kind: 'http', content: request.uri + (typeof request.data === 'string' ? `\n${request.data}` : '') });
}
for (const file of ['presidio_research_generated_large', 'presidio_research_generated_small', 'presidio_research_synth_v2']) for (const record of lines(path.join(datasets, 'pii', `${file}.jsonl`))) texts.push({ kind: 'prompt', content: String(record.text) });
for (const file of ['ragtruth_data2txt_dev', 'ragtruth_train']) {
  for (const record of lines(path.join(datasets, 'verification', `${file}.jsonl`))) {
    texts.push({ kind: 'llm_output', content: String(record.response) });
    for (const source of (record.sources as unknown[] | undefined) ?? []) texts.push({ kind: 'tool_output', content: String(source) });
  }
}

const output = createWriteStream(out);
for (const [index, text] of texts.entries()) {
  const decision = await engine.inspect(text);
  output.write(`${index}\t${decision.decision}\t${decision.threat_score}\t${JSON.stringify(decision.patterns_matched)}\n`);
}
output.end();
process.stderr.write(`${texts.length} texts -> ${out}\n`);
