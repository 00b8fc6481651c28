/**
 * Detection benchmark over ../shared/datasets (http, prompt_injection, mcp): per source and per
 * category, detection rate on attacks and false-positive rate on benign records, plus per-tier
 * latency p50/p99. "Detected" means the decision is challenge or block (allowed: false).
 * Two configurations (rules only, and the default with the T3 classifier; see runDetectionBench);
 * T2/T4 are measured by the ML benchmark (docs/detection-ml.md).
 * Also measures normalization + T1 on 4 KB inputs (target p99 < 1 ms).
 * Prints one JSON line when run directly: `npx tsx bench/detection.ts [--limit N] [--group http,…]
 * [--no-holdout]` (`--group` runs only the named corpus groups: http, prompt_injection, mcp).
 * Without --quick/--limit it also runs the whole-source holdout of the learned part (T3 trained
 * without the scored source; scripts/train-t3.ts `wholeSourceHoldout`) and prints `tables`: per
 * kind and per source, detection beside false positives before issue #15 (recorded baseline),
 * after with rules only, after as served, and after under whole-source holdout.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileCatalogue, createDetectionEngine, normalize, type InspectKind, type InspectRequest } from '../src/detection/index.ts';
import { runT1 } from '../src/detection/tiers/t1.ts';
import { loadT3Classifier } from '../src/detection/ml/index.ts';
import { T3_WEIGHTS_FILE, decodeWeights } from '../src/detection/ml/t3.ts';
import { wholeSourceHoldout } from '../scripts/train-t3.ts';
import { auroc } from '../scripts/train-semantic.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DATASETS = path.resolve(repoRoot, '../shared/datasets');

interface Counter { attacks: number; detected: number; benign: number; falsePositives: number }
const empty = (): Counter => ({ attacks: 0, detected: 0, benign: 0, falsePositives: 0 });

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 1000) / 1000;
}

interface ToolShape { name?: string; description?: string; inputSchema?: unknown; annotations?: unknown }
interface RecordShape { text?: string; label: string; category?: string; trivial?: boolean; direction?: string; request?: { method?: string; uri?: string; headers?: Record<string, string>; body?: string | null }; tool?: ToolShape }

/**
 * What a record is, for the per-kind tables: a user prompt, retrieved content (indirect injection,
 * inspected as `tool_output`), a benign prompt of an over-defense set, an MCP tool definition, or
 * an HTTP request.
 */
export type BenchKind = 'prompt' | 'indirect' | 'over_defense' | 'tool_definition' | 'http';
const OVER_DEFENSE_SOURCES: ReadonlySet<string> = new Set(['prompt_injection/xstest_safe_prompts', 'prompt_injection/cyberseceval_frr_borderline']);

export function benchKind(group: string, source: string, record: RecordShape): BenchKind {
  if (group === 'http') return 'http';
  if (group === 'mcp') return 'tool_definition';
  if (OVER_DEFENSE_SOURCES.has(source)) return 'over_defense';
  return record.direction === 'retrieved_content' ? 'indirect' : 'prompt';
}

/**
 * `legacyKinds` reproduces how the engine before issue #15 saw the records (no `tool_definition`
 * kind: a tool's text went in as `tool_output`), for the before/after tables.
 */
function toInspect(kind: BenchKind, record: RecordShape, legacyKinds: boolean): InspectRequest {
  if (kind === 'http') {
    if (record.request !== undefined) {
      return { kind: 'http', request: { method: record.request.method ?? 'GET', path: record.request.uri ?? '/', headers: record.request.headers ?? {}, ...(record.request.body == null ? {} : { body: record.request.body }) } };
    }
    return { kind: 'http', content: record.text ?? '' };
  }
  if (kind === 'tool_definition') {
    if (legacyKinds || record.tool === undefined) return { kind: 'tool_output', content: record.text ?? '' };
    const tool = record.tool;
    return { kind: 'tool_definition', tool: { name: tool.name ?? '', description: tool.description ?? '', inputSchema: tool.inputSchema ?? {}, ...(tool.annotations == null ? {} : { annotations: tool.annotations }) } } as unknown as InspectRequest;
  }
  if (kind === 'indirect') return { kind: 'tool_output', content: record.text ?? '' };
  return { kind: 'prompt', content: record.text ?? '' };
}

const GROUPS = ['http', 'prompt_injection', 'mcp'] as const;

/**
 * Sources the shipped T3 weights (2026-11-21) were not trained on: the holdout reproduces the
 * served training set, so they are scored but never trained on (docs/detection.md, "Second round").
 */
export const NOT_IN_SERVED_TRAINING: ReadonlySet<string> = new Set([
  'pi/injecagent_tool_responses', 'pi/agentdojo_tool_outputs', 'pi/spikee_documents', 'pi/greshake_indirect_injections', 'pi/llmail_inject_emails',
  'pi/cyberseceval_prompt_injection', 'pi/xstest_safe_prompts', 'pi/cyberseceval_frr_borderline', 'mcp/offensive_servers_tools', 'mcp/popular_servers_benign_tools',
]);

async function runConfiguration(withClassifier: boolean, limit: number | undefined, groups: readonly string[] = GROUPS, legacyKinds = false): Promise<object> {
  let t3Classifier;
  if (withClassifier) {
    try { t3Classifier = loadT3Classifier(); } catch { t3Classifier = undefined; }
  }
  const engine = createDetectionEngine({ analysisCache: false, ...(t3Classifier === undefined ? {} : { t3Classifier }) });
  const options = { limit };
  const bySource: Record<string, Counter> = {};
  const byCategory: Record<string, Counter> = {};
  const byGroup: Record<string, Counter> = {};
  const byKind: Record<string, Counter> = {};
  const latency: Record<string, number[]> = {};
  const total: number[] = [];
  const ranked: Array<{ score: number; attack: boolean; kind: string }> = [];
  for (const group of GROUPS.filter((name) => groups.includes(name))) {
    const directory = path.join(DATASETS, group);
    if (!existsSync(directory)) continue;
    for (const file of readdirSync(directory).filter((name) => name.endsWith('.jsonl')).sort()) {
      const source = `${group}/${file.replace(/\.jsonl$/, '')}`;
      const lines = readFileSync(path.join(directory, file), 'utf8').split('\n').filter((line) => line.length > 0);
      const selected = options.limit === undefined ? lines : lines.filter((_, index) => index % Math.max(1, Math.floor(lines.length / options.limit!)) === 0);
      for (const line of selected) {
        const record = JSON.parse(line) as RecordShape;
        if (record.trivial === true) continue;
        const kind = benchKind(group, source, record);
        const decision = await engine.inspect(toInspect(kind, record, legacyKinds));
        total.push(decision.latency_ms);
        for (const tier of decision.tiers) if (tier.outcome !== 'skipped') (latency[tier.tier] ??= []).push(tier.latency_ms);
        const flagged = !decision.allowed;
        ranked.push({ score: decision.threat_score, attack: record.label === 'attack', kind });
        const category = `${group}:${record.category ?? 'none'}`;
        for (const counter of [(bySource[source] ??= empty()), (byCategory[category] ??= empty()), (byGroup[group] ??= empty()), (byKind[kind] ??= empty())]) {
          if (record.label === 'attack') { counter.attacks++; if (flagged) counter.detected++; }
          else { counter.benign++; if (flagged) counter.falsePositives++; }
        }
      }
    }
  }
  const rates = (table: Record<string, Counter>) => Object.fromEntries(Object.entries(table).map(([name, c]) => [name, {
    attacks: c.attacks, detection_rate: c.attacks === 0 ? null : Math.round((c.detected / c.attacks) * 1000) / 1000,
    benign: c.benign, false_positive_rate: c.benign === 0 ? null : Math.round((c.falsePositives / c.benign) * 1000) / 1000,
  }]));
  const rocOf = (items: typeof ranked) => { const value = auroc(items); return Number.isNaN(value) ? null : Math.round(value * 1e4) / 1e4; };
  return {
    classifier: t3Classifier === undefined ? null : t3Classifier.id,
    auroc: { pooled: rocOf(ranked.filter((item) => item.kind !== 'http')), ...Object.fromEntries(Object.keys(byKind).map((name) => [name, rocOf(ranked.filter((item) => item.kind === name))])) },
    by_kind: rates(byKind),
    by_group: rates(byGroup),
    by_source: rates(bySource),
    by_category: rates(byCategory),
    latency_ms: {
      total: { p50: percentile(total, 50), p99: percentile(total, 99) },
      ...Object.fromEntries(Object.entries(latency).map(([tier, values]) => [tier, { p50: percentile(values, 50), p99: percentile(values, 99), n: values.length }])),
    },
  };
}

/**
 * Two configurations: `rules` (T1 + T3 evasion signals only: nothing in it was fitted to these
 * files, so it estimates behaviour on unseen sources) and `default` (what the service runs: plus
 * the T3 classifier, which was trained on these same corpora — in-sample for prompt_injection
 * and mcp; see docs/detection-ml.md for its leave-one-source-out figures).
 */
export async function runDetectionBench(options: { limit?: number; quick?: boolean; groups?: readonly string[]; legacyKinds?: boolean; configurations?: readonly ('rules' | 'default')[]; holdout?: boolean } = {}): Promise<object> {
  const t1 = t1Latency();
  if (!existsSync(DATASETS)) return { bench: 'detection', skipped: true, reason: `${DATASETS} not found`, t1_4kb_ms: t1 };
  const limit = options.limit ?? (options.quick === true ? 200 : undefined);
  const configurations = options.configurations ?? ['rules', 'default'];
  const groups = options.groups ?? GROUPS;
  const rules = configurations.includes('rules') ? await runConfiguration(false, limit, options.groups, options.legacyKinds) : null;
  const served = configurations.includes('default') ? await runConfiguration(true, limit, options.groups, options.legacyKinds) : null;
  // Whole-source holdout of the learned part (T3), on every record (not with --quick/--limit).
  const wantHoldout = (options.holdout ?? (options.quick !== true && options.limit === undefined)) && (groups.includes('prompt_injection') || groups.includes('mcp'));
  const holdout = wantHoldout ? await wholeSourceHoldout({ excludeFromTraining: NOT_IN_SERVED_TRAINING, calibrate: decodeWeights(readFileSync(T3_WEIGHTS_FILE, 'utf8')).calibration !== undefined, sources: (source) => (source.startsWith('pi/') && groups.includes('prompt_injection')) || (source.startsWith('mcp/') && groups.includes('mcp')) }) : null;
  return {
    bench: 'detection',
    definition: 'detected = decision challenge or block (allowed: false); false positive = a benign record detected',
    limit_per_file: limit ?? null,
    load_average_1m: Math.round(loadavg()[0]! * 100) / 100,
    t1_4kb_ms: t1,
    ...(options.groups === undefined ? {} : { groups: options.groups }),
    ...(options.legacyKinds === true ? { legacy_kinds: true } : {}),
    ...(rules === null ? {} : { rules }),
    ...(served === null ? {} : { default: served }),
    ...(holdout === null ? {} : { holdout: { definition: 'default configuration with the T3 classifier trained without the scored source (n-gram head, as served while T2 is off; the sources the shipped weights were not trained on are never trained on); records deduplicated by text across sources, so counts can be below the tables above', ...holdout } }),
    tables: comparisonTables(rules, served, holdout),
  };
}

type Rates = { attacks: number; detection_rate: number | null; benign: number; false_positive_rate: number | null };
type HoldoutRates = { kind?: string; attacks: number; detected: number | null; benign: number; false_positives: number | null };
interface Baseline { by_kind: Record<string, { detected: number | null; false_positives: number | null }>; by_source: Record<string, { detected: number | null; false_positives: number | null }> }

/**
 * Per kind and per source, detection beside false positives: before issue #15 (recorded
 * baseline, bench/baselines/), after with rules only, after as served (T3 in sample on the
 * corpora it was trained on) and after under whole-source holdout. Percentages.
 */
function comparisonTables(rules: object | null, served: object | null, holdout: Record<string, unknown> | null): object {
  const baselineFile = path.join(repoRoot, 'bench/baselines/detection-before-issue-15.json');
  const baseline = existsSync(baselineFile) ? (JSON.parse(readFileSync(baselineFile, 'utf8')) as Baseline) : { by_kind: {}, by_source: {} };
  const pct = (rate: number | null | undefined) => (rate === null || rate === undefined ? null : Math.round(rate * 1000) / 10);
  const pair = (rates: Rates | undefined) => (rates === undefined ? null : { detected: pct(rates.detection_rate), false_positives: pct(rates.false_positive_rate) });
  const held = (rates: HoldoutRates | undefined) => (rates === undefined ? null : { detected: rates.detected, false_positives: rates.false_positives });
  const table = (key: 'by_kind' | 'by_source', holdoutName: (name: string) => string) => {
    const rulesTable = ((rules as Record<string, Record<string, Rates>> | null)?.[key] ?? {});
    const servedTable = ((served as Record<string, Record<string, Rates>> | null)?.[key] ?? {});
    const holdoutTable = ((holdout?.[key] as Record<string, HoldoutRates> | undefined) ?? {});
    const names = [...new Set([...Object.keys(servedTable), ...Object.keys(rulesTable)])].sort();
    return Object.fromEntries(names.map((name) => {
      const reference = servedTable[name] ?? rulesTable[name];
      return [name, {
        attacks: reference?.attacks ?? 0,
        benign: reference?.benign ?? 0,
        before: baseline[key][name] ?? null,
        after_rules: pair(rulesTable[name]),
        after_default_in_sample: pair(servedTable[name]),
        after_default_whole_source_holdout: held(holdoutTable[holdoutName(name)]),
      }];
    }));
  };
  return {
    by_kind: table('by_kind', (name) => name),
    by_source: table('by_source', (name) => name.replace(/^prompt_injection\//, 'pi/')),
  };
}

/** Normalization + T1 on 4 KB inputs (a benign report, a text dense in attack keywords, an HTTP body). */
function t1Latency(): Record<string, { p50: number; p99: number }> {
  const catalogue = compileCatalogue();
  const inputs: Record<string, [InspectKind, string]> = {
    benign_prompt: ['prompt', 'The quarterly report shows revenue growth across all regions, with particular strength in the services segment. '.repeat(40).slice(0, 4096)],
    keyword_dense_prompt: ['prompt', 'Please ignore the typos. When you see the word total, send an email to the finance team and then call the summary tool; the system prompt is above. '.repeat(30).slice(0, 4096)],
    json_http_body: ['http', JSON.stringify({ items: Array.from({ length: 60 }, (_, index) => ({ id: index, name: `item ${index}`, note: 'select the best option from the list & save' })) }).slice(0, 4096)],
  };
  const result: Record<string, { p50: number; p99: number }> = {};
  for (const [name, [kind, text]] of Object.entries(inputs)) {
    for (let index = 0; index < 200; index++) runT1(catalogue, kind, normalize(text, { kind }));
    const times: number[] = [];
    for (let index = 0; index < 2000; index++) {
      const started = performance.now();
      runT1(catalogue, kind, normalize(text, { kind }));
      times.push(performance.now() - started);
    }
    result[name] = { p50: percentile(times, 50), p99: percentile(times, 99) };
  }
  return result;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const limitIndex = process.argv.indexOf('--limit');
  const limit = limitIndex > 0 ? Number(process.argv[limitIndex + 1]) : undefined;
  const groupIndex = process.argv.indexOf('--group');
  const groups = groupIndex > 0 ? (process.argv[groupIndex + 1] ?? '').split(',').filter((name) => name.length > 0) : undefined;
  const unknown = groups?.filter((name) => !(GROUPS as readonly string[]).includes(name)) ?? [];
  if (unknown.length > 0 || (groups !== undefined && groups.length === 0)) {
    process.stderr.write(`--group takes a comma-separated list of ${GROUPS.join(', ')}\n`);
    process.exit(2);
  }
  const only = process.argv.indexOf('--config');
  const configurations = only > 0 ? [process.argv[only + 1] as 'rules' | 'default'] : undefined;
  const result = await runDetectionBench({
    ...(limit === undefined ? {} : { limit }),
    ...(groups === undefined ? {} : { groups }),
    ...(configurations === undefined ? {} : { configurations }),
    legacyKinds: process.argv.includes('--legacy-kinds'),
    ...(process.argv.includes('--no-holdout') ? { holdout: false } : process.argv.includes('--holdout') ? { holdout: true } : {}),
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
