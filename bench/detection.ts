/**
 * Detection benchmark over ../shared/datasets (http, prompt_injection, mcp): per source and per
 * category, detection rate on attacks and false-positive rate on benign records, plus per-tier
 * latency p50/p99. "Detected" means the decision is challenge or block (allowed: false).
 * Runs T1 + T3 (signals and the trained classifier); T2/T4 are measured in docs/detection-ml.md.
 * Prints one JSON line when run directly: `npx tsx bench/detection.ts [--limit N]`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDetectionEngine, type InspectRequest } from '../src/detection/index.ts';
import { loadT3Classifier } from '../src/detection/ml/index.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DATASETS = path.resolve(repoRoot, '../shared/datasets');

interface Counter { attacks: number; detected: number; benign: number; falsePositives: number }
const empty = (): Counter => ({ attacks: 0, detected: 0, benign: 0, falsePositives: 0 });

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 1000) / 1000;
}

interface RecordShape { text?: string; label: string; category?: string; trivial?: boolean; request?: { method?: string; uri?: string; headers?: Record<string, string>; body?: string | null }; tool?: unknown }

function toInspect(group: string, record: RecordShape): InspectRequest {
  if (group === 'http') {
    if (record.request !== undefined) {
      return { kind: 'http', request: { method: record.request.method ?? 'GET', path: record.request.uri ?? '/', headers: record.request.headers ?? {}, ...(record.request.body == null ? {} : { body: record.request.body }) } };
    }
    return { kind: 'http', content: record.text ?? '' };
  }
  if (group === 'mcp') return { kind: 'tool_output', content: record.text ?? '' };
  return { kind: 'prompt', content: record.text ?? '' };
}

async function runConfiguration(withClassifier: boolean, limit: number | undefined): Promise<object> {
  let t3Classifier;
  if (withClassifier) {
    try { t3Classifier = loadT3Classifier(); } catch { t3Classifier = undefined; }
  }
  const engine = createDetectionEngine(t3Classifier === undefined ? {} : { t3Classifier });
  const options = { limit };
  const bySource: Record<string, Counter> = {};
  const byCategory: Record<string, Counter> = {};
  const byGroup: Record<string, Counter> = {};
  const latency: Record<string, number[]> = {};
  const total: number[] = [];
  for (const group of ['http', 'prompt_injection', 'mcp']) {
    const directory = path.join(DATASETS, group);
    if (!existsSync(directory)) continue;
    for (const file of readdirSync(directory).filter((name) => name.endsWith('.jsonl')).sort()) {
      const source = `${group}/${file.replace(/\.jsonl$/, '')}`;
      const lines = readFileSync(path.join(directory, file), 'utf8').split('\n').filter((line) => line.length > 0);
      const selected = options.limit === undefined ? lines : lines.filter((_, index) => index % Math.max(1, Math.floor(lines.length / options.limit!)) === 0);
      for (const line of selected) {
        const record = JSON.parse(line) as RecordShape;
        if (record.trivial === true) continue;
        const decision = await engine.inspect(toInspect(group, record));
        total.push(decision.latency_ms);
        for (const tier of decision.tiers) if (tier.outcome !== 'skipped') (latency[tier.tier] ??= []).push(tier.latency_ms);
        const flagged = !decision.allowed;
        const category = `${group}:${record.category ?? 'none'}`;
        for (const counter of [(bySource[source] ??= empty()), (byCategory[category] ??= empty()), (byGroup[group] ??= empty())]) {
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
  return {
    classifier: t3Classifier === undefined ? null : t3Classifier.id,
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
export async function runDetectionBench(options: { limit?: number } = {}): Promise<object> {
  if (!existsSync(DATASETS)) return { bench: 'detection', skipped: true, reason: `${DATASETS} not found` };
  return {
    bench: 'detection',
    definition: 'detected = decision challenge or block (allowed: false); false positive = a benign record detected',
    limit_per_file: options.limit ?? null,
    rules: await runConfiguration(false, options.limit),
    default: await runConfiguration(true, options.limit),
  };
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const limitIndex = process.argv.indexOf('--limit');
  const limit = limitIndex > 0 ? Number(process.argv[limitIndex + 1]) : undefined;
  const result = await runDetectionBench(limit === undefined ? {} : { limit });
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
