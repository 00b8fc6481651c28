/**
 * Experiment (issue #32 item 4, tool_output, third round): does a per-sentence "task addressed to
 * an AI model" classifier over cheap features tell instructions planted in data from data's own
 * sentences?
 *
 *   npx tsx scripts/train-ai-task.ts            # whole-source holdout report on the indirect sources
 *   npx tsx scripts/train-ai-task.ts --write    # the same, then fit on everything and write src/detection/ml/weights/ai-task.json
 *   npx tsx scripts/train-ai-task.ts --inspect  # the highest-scoring sentences of each indirect source
 *   npx tsx scripts/train-ai-task.ts --records  # per source, how often the lone-task rule fires on a record (thresholds compared)
 *
 * Positives: instruction sentences users send to AI models (alpaca_data_5k, code_alpaca_2k,
 * alpaca_seed_tasks, gpteacher_roleplay, nq_open_questions, gsm8k_questions' final question).
 * Negatives: imperative-shaped sentences of benign tool outputs, e-mails and agent traces
 * (injecagent, llmail, tau_bench, agentdojo, spikee, garak documents) and local look-alikes
 * (Debian manual pages of sections 1 and 8 and /usr/share/doc files, read at run time; the sample
 * depends on the packages installed, so a refit on another machine differs slightly). Classes balanced, sources balanced within a class
 * (each source one unit of weight). Features: hashed word 1–2-grams with a start-of-sentence
 * marker (src/detection/ml/t3.ts `extractFeatures`). A scored source's records are never in the
 * training set of its own evaluation (whole-source holdout). Data are read at run time and never
 * copied into the repository.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sigmoid, type FeatureConfig, type SparseFeatures } from '../src/detection/ml/t3.ts';
import { AI_TASK_WEIGHTS_FILE, aiTaskFeatures, encodeAiTaskWeights, imperativeShaped, isTaskCandidate } from '../src/detection/ml/ai-task.ts';
import { segments } from '../src/detection/indirect.ts';
import { auroc } from './train-semantic.ts';
import { seededRandom } from './seeded-random.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const datasets = path.resolve(repoRoot, '../shared/datasets/prompt_injection');
const AI_TASK_FEATURES: FeatureConfig = { hashBits: 14, wordNgrams: 2, charNgrams: [] };
const PER_SOURCE = 4000;

interface Row { features: SparseFeatures; positive: boolean; source: string; weight: number }
interface RecordShape { text?: string; label: string; direction?: string }

export function records(file: string): RecordShape[] {
  return readFileSync(path.join(datasets, `${file}.jsonl`), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as RecordShape);
}

/** The sentences of a text that the classifier is asked about: imperative-shaped segments of at least four words. */
export function candidateSentences(text: string): Array<{ start: number; end: number; text: string }> {
  return segments(text).filter((segment) => isTaskCandidate(segment.text));
}

export function featuresOf(sentence: string): SparseFeatures {
  return aiTaskFeatures(sentence, AI_TASK_FEATURES);
}

export function sample<T>(items: T[], count: number, random: () => number): T[] {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [copy[index], copy[other]] = [copy[other]!, copy[index]!];
  }
  return copy.slice(0, count);
}

export function positiveSentences(random: () => number): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const first = (text: string) => segments(text)[0]?.text;
  const take = (source: string, pick: (text: string) => string | undefined) => {
    const texts = records(source).filter((record) => record.label === 'benign' && record.text !== undefined).map((record) => pick(record.text!)).filter((text): text is string => text !== undefined && text.split(/\s+/).length >= 3 && imperativeShaped(text));
    out.set(source, sample(texts, PER_SOURCE, random));
  };
  take('alpaca_data_5k', first);
  if (process.env.AI_TASK_NO_CODE !== '1') take('code_alpaca_2k', first);
  take('alpaca_seed_tasks', first);
  take('gpteacher_roleplay', first);
  take('gpteacher_toolformer', (text) => candidateSentences(text).at(-1)?.text);
  return out;
}

export const INDIRECT = ['injecagent_tool_responses', 'agentdojo_tool_outputs', 'spikee_documents', 'garak_latent_injection_documents', 'llmail_inject_emails', 'tau_bench_agent_traces', 'greshake_indirect_injections'];

/** A manual page's text, its roff requests dropped and its escapes read (enough for sentences). */
function manText(file: string): string {
  const raw = execFileSync('zcat', ['-f', file], { encoding: 'utf8', maxBuffer: 1 << 22 });
  return raw.split('\n').filter((line) => !line.startsWith('.') && !line.startsWith("'")).join('\n').replace(/\\f[BIRP]|\\-|\\\(..|\\&|\\e/g, (escape) => (escape === '\\-' ? '-' : ''));
}

function lookAlikes(random: () => number): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const section of ['man1', 'man8']) {
    const man: string[] = [];
    for (const page of sample(readdirSync(`/usr/share/man/${section}`).filter((name) => !name.startsWith('gcloud')), 300, random)) {
      try {
        man.push(...candidateSentences(manText(path.join(`/usr/share/man/${section}`, page))).map((segment) => segment.text));
      } catch { /* unreadable page */ }
    }
    out.set(`local/${section}`, sample(man, PER_SOURCE, random));
  }
  const doc: string[] = [];
  const files = execFileSync('find', ['/usr/share/doc', '-type', 'f', '(', '-name', 'README*', '-o', '-name', '*.txt', '-o', '-name', '*.md', '-o', '-name', 'NEWS*', ')'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  for (const file of sample(files, 250, random)) {
    try {
      const text = execFileSync('zcat', ['-f', file], { encoding: 'utf8', maxBuffer: 1 << 22 }).slice(0, 20_000);
      doc.push(...candidateSentences(text).map((segment) => segment.text));
    } catch { /* unreadable file */ }
  }
  out.set('local/doc', sample(doc, PER_SOURCE, random));
  return out;
}

export function negativeSentences(random: () => number): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const source of INDIRECT) {
    const sentences = records(source).filter((record) => record.label === 'benign' && record.text !== undefined).flatMap((record) => candidateSentences(record.text!).map((segment) => segment.text));
    if (sentences.length > 0) out.set(source, sample(sentences, PER_SOURCE, random));
  }
  for (const [source, sentences] of lookAlikes(random)) out.set(source, sentences);
  return out;
}

export function rowsOf(groups: Map<string, string[]>, positive: boolean): Row[] {
  const rows: Row[] = [];
  for (const [source, sentences] of groups) {
    for (const sentence of sentences) rows.push({ features: featuresOf(sentence), positive, source, weight: 1 / sentences.length });
  }
  return rows;
}

export interface AiTaskHead { weights: Float32Array; bias: number }

/** Logistic regression by SGD over the weighted rows (each class one unit of weight, each source an equal share of it). */
export function fit(rows: Row[], epochs = 6, l2 = 1e-6, seed = 7): AiTaskHead {
  const random = seededRandom(seed);
  const size = 1 << AI_TASK_FEATURES.hashBits;
  const weights = new Float32Array(size + 3);
  let bias = 0;
  const sources = { positive: new Set(rows.filter((row) => row.positive).map((row) => row.source)).size, negative: new Set(rows.filter((row) => !row.positive).map((row) => row.source)).size };
  const scale = rows.length / 2;
  const order = rows.map((_, index) => index);
  for (let epoch = 0; epoch < epochs; epoch++) {
    const rate = 0.5 / (1 + epoch);
    for (let index = order.length - 1; index > 0; index--) {
      const other = Math.floor(random() * (index + 1));
      [order[index], order[other]] = [order[other]!, order[index]!];
    }
    for (const position of order) {
      const row = rows[position]!;
      const weight = (row.weight / (row.positive ? sources.positive : sources.negative)) * scale;
      const probability = sigmoid(logit({ weights, bias }, row.features));
      const gradient = (probability - (row.positive ? 1 : 0)) * weight * rate;
      for (let k = 0; k < row.features.indices.length; k++) {
        const index = row.features.indices[k]!;
        weights[index] = weights[index]! * (1 - l2) - gradient * row.features.values[k]!;
      }
      for (let k = 0; k < 3; k++) weights[size + k] = weights[size + k]! - gradient * row.features.extra[k]!;
      bias -= gradient;
    }
  }
  return { weights, bias };
}

export function logit(head: AiTaskHead, features: SparseFeatures): number {
  let sum = head.bias;
  const size = 1 << AI_TASK_FEATURES.hashBits;
  for (let k = 0; k < features.indices.length; k++) sum += head.weights[features.indices[k]!]! * features.values[k]!;
  for (let k = 0; k < 3; k++) sum += head.weights[size + k]! * features.extra[k]!;
  return sum;
}

function recordScore(head: AiTaskHead, text: string): number {
  let best = 0;
  for (const sentence of candidateSentences(text)) best = Math.max(best, sigmoid(logit(head, featuresOf(sentence.text))));
  return best;
}

function main(): void {
  const random = seededRandom(20261129);
  const positives = positiveSentences(random);
  const negatives = negativeSentences(random);
  const positiveRows = rowsOf(positives, true);
  const negativeRows = rowsOf(negatives, false);
  console.error(`positives ${positiveRows.length} from ${positives.size} sources, negatives ${negativeRows.length} from ${negatives.size}`);
  const report: Record<string, unknown> = {};
  if (process.argv.includes('--records')) {
    // Record-level firing rate of the lone-task rule per source under whole-source holdout, with
    // local look-alikes never in training (manual pages of sections 5 and 7, and package READMEs;
    // training reads sections 1 and 8).
    const unseenMan = (section: string, count: number) => sample(readdirSync(`/usr/share/man/${section}`), count, random).map((page) => {
      try {
        return manText(path.join(`/usr/share/man/${section}`, page)).slice(0, 8000);
      } catch { return ''; }
    }).filter(Boolean);
    const unseenPages = [...unseenMan('man5', 150), ...unseenMan('man7', 100)];
    const readmes = sample(execFileSync('find', [path.join(repoRoot, 'node_modules'), '-maxdepth', '3', '-iname', 'README.md'], { encoding: 'utf8' }).split('\n').filter(Boolean), 300, random).map((file) => readFileSync(file, 'utf8').slice(0, 8000));
    const variants: Array<[string, number, number]> = [['p>=0.9', 0.9, 99], ['p>=0.95', 0.95, 99], ['p>=0.98', 0.98, 99], ['p>=0.9, <=3 at 0.5', 0.9, 3], ['p>=0.95, <=3 at 0.5', 0.95, 3], ['p>=0.9, <=2 at 0.5', 0.9, 2]];
    const fires = (head: AiTaskHead, text: string, threshold: number, maxMid: number) => {
      let high = 0; let mid = 0;
      for (const sentence of candidateSentences(text)) {
        const probability = sigmoid(logit(head, featuresOf(sentence.text)));
        if (probability >= 0.5) mid++;
        if (probability >= threshold) high++;
      }
      return high >= 1 && high <= 2 && mid <= maxMid;
    };
    const full = fit([...positiveRows, ...negativeRows]);
    if (process.argv.includes('--show-unseen')) {
      const scored = unseenPages.flatMap((text) => candidateSentences(text).map((sentence) => ({ text: sentence.text.slice(0, 120), score: sigmoid(logit(full, featuresOf(sentence.text))) })));
      console.error(scored.sort((a, b) => b.score - a.score).slice(0, 40).map((item) => `${item.score.toFixed(3)} ${item.text}`).join('\n'));
      return;
    }
    const table: Record<string, Record<string, string>> = {};
    const sources: Array<[string, Array<{ text: string; attack: boolean }>, AiTaskHead]> = [['local/man5+7 (unseen)', unseenPages.map((text) => ({ text, attack: false })), full], ['local/node_modules READMEs (unseen)', readmes.map((text) => ({ text, attack: false })), full]];
    for (const source of INDIRECT) {
      const head = fit([...positiveRows, ...negativeRows.filter((row) => row.source !== source)]);
      sources.push([source, records(source).filter((record) => record.text !== undefined && record.direction === 'retrieved_content').map((record) => ({ text: record.text!, attack: record.label === 'attack' })), head]);
    }
    for (const [source, items, head] of sources) {
      table[source] = {};
      for (const [name, threshold, maxMid] of variants) {
        const attacks = items.filter((item) => item.attack); const benign = items.filter((item) => !item.attack);
        const rate = (list: typeof items) => (list.length === 0 ? '—' : `${((100 * list.filter((item) => fires(head, item.text, threshold, maxMid)).length) / list.length).toFixed(1)} %`);
        table[source]![name] = `${rate(attacks)} / ${rate(benign)}`;
      }
      console.error(source, JSON.stringify(table[source]));
    }
    return;
  }
  if (process.argv.includes('--inspect')) {
    const head = fit([...positiveRows, ...negativeRows]);
    for (const source of INDIRECT) {
      const scored = records(source).filter((record) => record.text !== undefined).flatMap((record) => candidateSentences(record.text!).map((segment) => ({ text: segment.text.slice(0, 140), attack: record.label === 'attack', score: sigmoid(logit(head, featuresOf(segment.text))) })));
      const top = (attack: boolean) => scored.filter((item) => item.attack === attack).sort((a, b) => b.score - a.score).slice(0, 12).map((item) => `${item.score.toFixed(3)} ${item.text}`);
      console.error(`== ${source} benign`); console.error(top(false).join('\n'));
      console.error(`== ${source} attack`); console.error(top(true).join('\n'));
    }
    return;
  }
  for (const source of ['injecagent_tool_responses', 'agentdojo_tool_outputs', 'spikee_documents', 'garak_latent_injection_documents', 'greshake_indirect_injections', 'llmail_inject_emails', 'tau_bench_agent_traces']) {
    const head = fit([...positiveRows, ...negativeRows.filter((row) => row.source !== source)]);
    const scored = records(source).filter((record) => record.text !== undefined && record.direction === 'retrieved_content').map((record) => ({ score: recordScore(head, record.text!), attack: record.label === 'attack' }));
    const benign = scored.filter((item) => !item.attack).map((item) => item.score).sort((a, b) => a - b);
    const attacks = scored.filter((item) => item.attack).map((item) => item.score);
    const at = (threshold: number) => ({ threshold, tpr: attacks.filter((score) => score >= threshold).length / Math.max(1, attacks.length), fpr: benign.filter((score) => score >= threshold).length / Math.max(1, benign.length) });
    report[source] = { attacks: attacks.length, benign: benign.length, auroc: auroc(scored), at: [0.5, 0.8, 0.9, 0.95, 0.98].map(at) };
    console.error(source, JSON.stringify(report[source]));
  }
  console.log(JSON.stringify(report));
  if (process.argv.includes('--write')) {
    const head = fit([...positiveRows, ...negativeRows]);
    writeFileSync(AI_TASK_WEIGHTS_FILE, encodeAiTaskWeights({ version: 1, features: AI_TASK_FEATURES, bias: head.bias, weights: head.weights, trainedAt: new Date().toISOString(), metrics: { holdout: report, positives: Object.fromEntries([...positives].map(([source, items]) => [source, items.length])), negatives: Object.fromEntries([...negatives].map(([source, items]) => [source, items.length])) } }));
    console.error(`wrote ${AI_TASK_WEIGHTS_FILE}`);
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) main();
