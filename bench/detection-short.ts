/**
 * `npm run bench -- detection-short`: the T3 classifier on texts with almost no prose, with the
 * engine's short-text rule off (`classifierMinWords: 0`) and at cut-offs of 3–6 words (5 is
 * served, CLASSIFIER_MIN_WORDS). For each set: records, and how many reach Log (score ≥ 0.2),
 * Alert (≥ 0.4) and a refusal (challenge or block).
 *
 * Benign sets no T3 training source holds: tool arguments built from the parameters of the
 * benign MCP tools of ../shared/datasets/mcp (the first two parameters, with everyday values),
 * libinjection's benign query values, and the first 2–4 words of the benign prompts of five
 * prompt corpora. Beside them, every prompt-injection and MCP source as the detection benchmark
 * inspects it (so a cut-off that costs detection shows there). Reads ../shared/datasets;
 * skipped with a notice when it is absent.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDetectionEngine, type InspectRequest } from '../src/detection/index.ts';
import { loadT3Classifier } from '../src/detection/ml/index.ts';
import { benchKind } from './detection.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DATASETS = path.resolve(repoRoot, '../shared/datasets');
const CUT_OFFS = [0, 3, 4, 5, 6] as const;
const ARGUMENT_VALUES = ['m4', 'test', 'hello world', 'a1', '42', 'true', 'main', 'README.md', '/tmp/out.txt', 'https://example.com', 'Paris', 'en', 'octocat', 'v1.2.3', 'id_123', 'latest', 'ok', 'foo', 'bar', 'search term'];
const PROMPT_SOURCES = ['xstest_safe_prompts', 'alpaca_seed_tasks', 'gpteacher_toolformer', 'cyberseceval_frr_borderline', 'awesome_chatgpt_prompts'];

interface Item { set: string; request: InspectRequest }
interface ToolRecord { tool?: { name?: string; description?: string; inputSchema?: { properties?: Record<string, unknown> }; annotations?: unknown } }

function records(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8').split('\n').filter((line) => line.length > 0).map((line) => JSON.parse(line) as Record<string, unknown>);
}

function items(): Item[] {
  const out: Item[] = [];
  let next = 0;
  for (const file of ['official_benign_tools', 'popular_servers_benign_tools']) {
    for (const record of records(path.join(DATASETS, 'mcp', `${file}.jsonl`)) as ToolRecord[]) {
      const names = Object.keys(record.tool?.inputSchema?.properties ?? {}).slice(0, 2);
      if (names.length === 0) continue;
      const args = Object.fromEntries(names.map((name) => [name, ARGUMENT_VALUES[next++ % ARGUMENT_VALUES.length]!]));
      out.push({ set: 'benign: MCP tool arguments', request: { kind: 'prompt', content: JSON.stringify(args) } });
    }
  }
  for (const record of records(path.join(DATASETS, 'http', 'libinjection.jsonl'))) {
    if (record.label === 'benign') out.push({ set: 'benign: libinjection query values', request: { kind: 'prompt', content: String(record.text) } });
  }
  const openings = new Set<string>();
  for (const source of PROMPT_SOURCES) {
    for (const record of records(path.join(DATASETS, 'prompt_injection', `${source}.jsonl`))) {
      const words = String(record.text).split(/\s+/).filter((word) => word.length > 0);
      for (const count of [2, 3, 4]) if (words.length > count) openings.add(words.slice(0, count).join(' '));
    }
  }
  for (const content of openings) out.push({ set: 'benign: prompt openings (2–4 words)', request: { kind: 'prompt', content } });
  for (const group of ['prompt_injection', 'mcp']) {
    for (const file of readdirSync(path.join(DATASETS, group)).filter((name) => name.endsWith('.jsonl')).sort()) {
      const source = `${group}/${file.replace(/\.jsonl$/, '')}`;
      for (const record of records(path.join(DATASETS, group, file))) {
        const kind = benchKind(group, source, record as never);
        const tool = (record as ToolRecord).tool;
        const request: InspectRequest = kind === 'tool_definition'
          ? { kind: 'tool_definition', tool: { name: tool?.name ?? '', description: tool?.description ?? '', inputSchema: tool?.inputSchema ?? {}, ...(tool?.annotations == null ? {} : { annotations: tool.annotations }) } } as unknown as InspectRequest
          : { kind: kind === 'indirect' ? 'tool_output' : 'prompt', content: String(record.text ?? '') };
        out.push({ set: `${source} (${String(record.label)})`, request });
      }
    }
  }
  return out;
}

export async function runDetectionShortBench(): Promise<object> {
  if (!existsSync(DATASETS)) {
    process.stderr.write(`[bench detection-short] ${DATASETS} is absent: skipped\n`);
    return { skipped: 'datasets absent' };
  }
  const t3Classifier = loadT3Classifier();
  const list = items();
  const sets: Record<string, Record<string, { records: number; log: number; alert: number; refused: number }>> = {};
  for (const cutOff of CUT_OFFS) {
    const engine = createDetectionEngine({ analysisCache: false, t3Classifier, classifierMinWords: cutOff });
    for (const item of list) {
      const decision = await engine.inspect(item.request);
      const counts = ((sets[item.set] ??= {})[cutOff === 0 ? 'rule off' : `${cutOff} words`] ??= { records: 0, log: 0, alert: 0, refused: 0 });
      counts.records += 1;
      if (decision.threat_score >= 0.2) counts.log += 1;
      if (decision.threat_score >= 0.4) counts.alert += 1;
      if (!decision.allowed) counts.refused += 1;
    }
  }
  return { served_cut_off_words: 5, sets };
}
