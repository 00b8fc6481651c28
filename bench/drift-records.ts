/**
 * `npx tsx bench/drift-records.ts <checkout> <source:kind> …`: why the length-drift texts of
 * `npm run bench -- inspect` (drift part) are refused. For each named benign source of
 * ../shared/datasets/prompt_injection (`agentdojo_tool_outputs:tool_output`,
 * `tau_bench_agent_traces:prompt`, …) it rebuilds the drift part's ~1 KB and ~8 KB texts of whole
 * records (the same draw: `textMaker` with `whole`, up to 120 texts), inspects them with the
 * checkout's served engine (`createDetection({})`), and for every refused text (challenge or block)
 * inspects each of its records alone. A refused text is classed by the first record refused alone:
 * `rule>=0.6` (a rule finding at or above CONFIDENT_FINDING), `classifier>=0.9` (the T3 classifier's
 * confident band), `weak-combination` (weak findings that reach Challenge together inside that one
 * record), or `accumulation` (no record is refused alone). With VERBOSE=1 each refused text is
 * printed as a JSON line: its findings and each culprit record's findings and opening. Ends with a
 * JSON tally per source and size.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

interface Pattern { id: string; confidence: number }
interface Engine { inspect(request: { kind: string; content: string }): Promise<{ decision: string; threat_score: number; patterns_matched: Pattern[] }> }

const [checkout, ...wanted] = process.argv.slice(2);
if (checkout === undefined || wanted.length === 0) throw new Error('usage: npx tsx bench/drift-records.ts <checkout> <source:kind> …');
const detection = (await import(pathToFileURL(path.resolve(checkout, 'src/detection/index.ts')).href)) as { createDetection(options: object): Engine };
const engine = detection.createDetection({});
const directory = path.resolve(import.meta.dirname, '../../shared/datasets/prompt_injection');
const want = new Set(wanted);
const kindOf = (record: Record<string, unknown>) => (record.direction === 'retrieved_content' ? 'tool_output' : record.direction === 'llm_output' ? 'llm_output' : 'prompt');
const refused = (decision: string) => decision === 'challenge' || decision === 'block';
const shown = (patterns: readonly Pattern[]) => patterns.map((pattern) => `${pattern.id}:${Math.round(pattern.confidence * 100) / 100}`).join(',');

function classOf(patterns: readonly Pattern[]): string {
  if (patterns.some((pattern) => !pattern.id.startsWith('ml.') && pattern.confidence >= 0.6)) return 'rule>=0.6';
  if (patterns.some((pattern) => pattern.id.startsWith('ml.') && pattern.confidence >= 0.9)) return 'classifier>=0.9';
  return 'weak-combination';
}

const tally: Record<string, Record<string, number>> = {};
for (const file of readdirSync(directory).filter((name) => name.endsWith('.jsonl')).sort()) {
  const bySource = new Map<string, string[]>();
  for (const line of readFileSync(path.join(directory, file), 'utf8').split('\n').filter((text) => text.length > 0)) {
    const record = JSON.parse(line) as Record<string, unknown>;
    if (record.label === 'attack') continue;
    const key = `${file.replace(/\.jsonl$/, '')}:${kindOf(record)}`;
    const list = bySource.get(key) ?? [];
    list.push(String(record.text ?? ''));
    bySource.set(key, list);
  }
  for (const [key, list] of bySource) {
    if (!want.has(key)) continue;
    const kind = key.slice(key.lastIndexOf(':') + 1);
    const total = list.reduce((sum, text) => sum + text.length + 2, 0);
    for (const kb of [1, 8]) {
      // The drift part's draw (bench/inspect.ts textMaker, whole records): one cursor per size.
      let cursor = 0;
      const count = Math.min(120, Math.floor(total / (kb * 1024)));
      const row: Record<string, number> = { texts: count, refused: 0 };
      for (let index = 0; index < count; index++) {
        let text = '';
        const parts: string[] = [];
        while (text.length < kb * 1024) {
          const record = list[cursor++ % list.length]!;
          const next = `${record}\n\n`;
          if (text.length > 0 && text.length + next.length > kb * 1024) break;
          text += next;
          parts.push(record);
        }
        cursor += 1;
        const decision = await engine.inspect({ kind, content: text.trimEnd() });
        if (!refused(decision.decision)) continue;
        row.refused = (row.refused ?? 0) + 1;
        const culprits: string[] = [];
        for (const part of parts) {
          const alone = await engine.inspect({ kind, content: part });
          if (refused(alone.decision)) culprits.push(`${classOf(alone.patterns_matched)}|${shown(alone.patterns_matched)}|${part.slice(0, 70).replace(/\s+/g, ' ')}`);
        }
        const cause = culprits[0]?.split('|')[0] ?? 'accumulation';
        row[cause] = (row[cause] ?? 0) + 1;
        if (process.env.VERBOSE === '1') process.stdout.write(`${JSON.stringify({ source: key, kb, decision: decision.decision, score: decision.threat_score, findings: shown(decision.patterns_matched), culprits })}\n`);
      }
      tally[`${key} ${kb}KB`] = row;
    }
  }
}
process.stdout.write(`${JSON.stringify(tally, null, 1)}\n`);
