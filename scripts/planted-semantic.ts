/**
 * Experiment (issue #32 items 2 and 4, tool_output, fifth round): does the sentence embedding svc
 * ships (USE-lite) tell an instruction planted in data from data's own sentences better than the
 * lexical `indirect.ai-task` classifier, and does the relation of that sentence to the rest of its
 * text (a planted task is about something else) add to it?
 *
 *   npx tsx scripts/planted-semantic.ts [--per-source N] [--records N]   # the holdout report (JSON on stdout)
 *   npx tsx scripts/planted-semantic.ts --skip-holdout --write FILE      # the head fitted on every sentence, to FILE
 *
 * (a) A per-sentence logistic-regression head on the 512-d embedding: "a request addressed to an
 *     AI assistant" (the instruction sentences of alpaca_data_5k, code_alpaca_2k,
 *     alpaca_seed_tasks, gpteacher_roleplay, gpteacher_toolformer) against "a sentence of ordinary
 *     data" (the imperative-shaped sentences of the benign tool outputs, e-mails and traces of the
 *     indirect sources, and local manual pages and /usr/share/doc files): the same sentences as
 *     scripts/train-ai-task.ts, classes balanced, each source an equal share of its class.
 * (b) The cosine of the strongest candidate sentence to the embedding of the rest of its text.
 *
 * Whole-source holdout: each indirect source is scored by heads (semantic and lexical) fitted
 * without its sentences. Record score = the highest probability over the record's
 * imperative-shaped candidate sentences (taskEvidence's candidates). Data are read at run time,
 * embeddings cached under /tmp (never in the repository).
 *
 * Result (docs/detection.md, "Planted instructions by meaning, fifth round"): the embedding head
 * ranks about as the lexical classifier does, the relation has no direction, and on the sealed set
 * neither separates planted tasks from benign AI-style requests; nothing in src/ reads the head.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { sigmoid } from '../src/detection/ml/t3.ts';
import { createEmbedder, dot } from '../src/detection/ml/embedder.ts';
import { candidateSentences, featuresOf, fit as fitLexical, INDIRECT, logit as lexicalLogit, negativeSentences, positiveSentences, records, rowsOf, sample } from './train-ai-task.ts';
import { auroc } from './train-semantic.ts';
import { seededRandom } from './seeded-random.ts';

const argument = (name: string, fallback: number): number => {
  const index = process.argv.indexOf(name);
  return index < 0 ? fallback : Number(process.argv[index + 1]);
};
const PER_SOURCE = argument('--per-source', 1200);
const PER_CLASS = argument('--records', 200);
const MAX_CANDIDATES = 16;
const CACHE = '/tmp/plantsem-embeddings.json';

const cache = new Map<string, number[]>(existsSync(CACHE) ? (JSON.parse(readFileSync(CACHE, 'utf8')) as Array<[string, number[]]>) : []);
const key = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 24);
const embedder = await createEmbedder({ maxBatch: 64, cacheEntries: 16 });

let unsaved = 0;
function saveCache(): void {
  writeFileSync(CACHE, JSON.stringify([...cache]));
  unsaved = 0;
}

async function embedAll(texts: string[]): Promise<Float32Array[]> {
  const missing = [...new Set(texts.filter((text) => !cache.has(key(text))))];
  for (let start = 0; start < missing.length; start += 256) {
    const slice = missing.slice(start, start + 256);
    const vectors = await embedder.embed(slice);
    slice.forEach((text, index) => cache.set(key(text), Array.from(vectors[index]!, (value) => Math.round(value * 1e5) / 1e5)));
    if (slice.length > 64) console.error(`embedded ${start + slice.length}/${missing.length}`);
  }
  unsaved += missing.length;
  if (unsaved >= 2000) saveCache();
  return texts.map((text) => Float32Array.from(cache.get(key(text))!));
}

interface Row { vector: Float32Array; positive: boolean; source: string; weight: number }

/** Weighted logistic regression by full-batch gradient descent (Adam), L2 on the weights. */
function fitSemantic(rows: Row[], epochs = 300, l2 = 1e-4): { weights: Float64Array; bias: number } {
  const dimensions = rows[0]!.vector.length;
  const weights = new Float64Array(dimensions);
  let bias = 0;
  const sources = { positive: new Set(rows.filter((row) => row.positive).map((row) => row.source)).size, negative: new Set(rows.filter((row) => !row.positive).map((row) => row.source)).size };
  const rowWeight = rows.map((row) => row.weight / (row.positive ? sources.positive : sources.negative) / 2);
  const m = new Float64Array(dimensions + 1); const v = new Float64Array(dimensions + 1);
  const rate = 0.05; const beta1 = 0.9; const beta2 = 0.999;
  for (let epoch = 1; epoch <= epochs; epoch++) {
    const gradient = new Float64Array(dimensions + 1);
    rows.forEach((row, index) => {
      let sum = bias;
      for (let d = 0; d < dimensions; d++) sum += weights[d]! * row.vector[d]!;
      const error = (sigmoid(sum) - (row.positive ? 1 : 0)) * rowWeight[index]!;
      for (let d = 0; d < dimensions; d++) gradient[d]! += error * row.vector[d]!;
      gradient[dimensions]! += error;
    });
    for (let d = 0; d <= dimensions; d++) {
      const g = d < dimensions ? gradient[d]! + l2 * weights[d]! : gradient[d]!;
      m[d] = beta1 * m[d]! + (1 - beta1) * g;
      v[d] = beta2 * v[d]! + (1 - beta2) * g * g;
      const step = (rate * (m[d]! / (1 - beta1 ** epoch))) / (Math.sqrt(v[d]! / (1 - beta2 ** epoch)) + 1e-8);
      if (d < dimensions) weights[d] = weights[d]! - step; else bias -= step;
    }
  }
  return { weights, bias };
}

const semanticProbability = (head: { weights: Float64Array; bias: number }, vector: Float32Array) => {
  let sum = head.bias;
  for (let d = 0; d < vector.length; d++) sum += head.weights[d]! * vector[d]!;
  return sigmoid(sum);
};

const random = seededRandom(20261129);
const positives = positiveSentences(random);
const negatives = negativeSentences(random);
const trim = (groups: Map<string, string[]>) => new Map([...groups].map(([source, sentences]) => [source, sentences.slice(0, PER_SOURCE)]));
const positiveTrim = trim(positives); const negativeTrim = trim(negatives);
const lexicalPositive = rowsOf(positives, true); const lexicalNegative = rowsOf(negatives, false);
console.error(`sentences: positives ${[...positiveTrim.values()].flat().length}, negatives ${[...negativeTrim.values()].flat().length}`);

const semanticRows = async (groups: Map<string, string[]>, positive: boolean): Promise<Row[]> => {
  const rows: Row[] = [];
  for (const [source, sentences] of groups) {
    const vectors = await embedAll(sentences);
    vectors.forEach((vector) => rows.push({ vector, positive, source, weight: 1 / sentences.length }));
  }
  return rows;
};
const started = Date.now();
const positiveRows = await semanticRows(positiveTrim, true);
const negativeRows = await semanticRows(negativeTrim, false);
console.error(`training embeddings ${(Date.now() - started) / 1000} s`);

// Sentence-level holdout of the head itself: each negative source scored by a head fitted without it.
const EVALUATED = process.argv.includes('--skip-holdout') ? [] : [...INDIRECT, 'cyberseceval_prompt_injection'];
const report: Record<string, unknown> = {};
const pooled: Array<{ source: string; attack: boolean; lexical: number; semantic: number; mean: number; cosine: number; candidates: number }> = [];
for (const source of EVALUATED) {
  const semanticHead = fitSemantic([...positiveRows, ...negativeRows.filter((row) => row.source !== source)]);
  const lexicalHead = fitLexical([...lexicalPositive, ...lexicalNegative.filter((row) => row.source !== source)]);
  const all = records(source).filter((record) => record.text !== undefined && record.direction === 'retrieved_content');
  const pick = (attack: boolean) => sample(all.filter((record) => (record.label === 'attack') === attack), PER_CLASS, random);
  const items = [...pick(true), ...pick(false)];
  const scored: typeof pooled = [];
  const prepared = items.map((record) => {
    const text = record.text!.slice(0, 16_384);
    return { text, attack: record.label === 'attack', candidates: candidateSentences(text).slice(0, MAX_CANDIDATES) };
  });
  // One batched pass for the candidates of every record, then one for the rest of each text.
  await embedAll(prepared.flatMap((item) => item.candidates.map((candidate) => candidate.text)));
  const chosen = await Promise.all(prepared.map(async (item) => {
    if (item.candidates.length === 0) return null;
    const vectors = await embedAll(item.candidates.map((candidate) => candidate.text));
    let best = -1; let semantic = 0; let lexical = 0; let mean = 0;
    item.candidates.forEach((candidate, index) => {
      const s = semanticProbability(semanticHead, vectors[index]!);
      const l = sigmoid(lexicalLogit(lexicalHead, featuresOf(candidate.text)));
      if (s > semantic || best < 0) [semantic, best] = [s, index];
      lexical = Math.max(lexical, l);
      mean = Math.max(mean, (s + l) / 2);
    });
    const candidate = item.candidates[best]!;
    const rest = `${item.text.slice(0, candidate.start)} ${item.text.slice(candidate.end)}`.trim().slice(0, 2048);
    return { vector: vectors[best]!, semantic, lexical, mean, rest };
  }));
  await embedAll(chosen.flatMap((item) => (item === null || item.rest.length < 20 ? [] : [item.rest])));
  for (const [index, item] of prepared.entries()) {
    const pick = chosen[index];
    if (pick === null || pick === undefined) {
      scored.push({ source, attack: item.attack, lexical: 0, semantic: 0, mean: 0, cosine: 1, candidates: 0 });
      continue;
    }
    const cosine = pick.rest.length < 20 ? 1 : dot(pick.vector, (await embedAll([pick.rest]))[0]!);
    scored.push({ source, attack: item.attack, lexical: pick.lexical, semantic: pick.semantic, mean: pick.mean, cosine, candidates: item.candidates.length });
  }
  pooled.push(...scored);
  const attacks = scored.filter((item) => item.attack); const benign = scored.filter((item) => !item.attack);
  const rate = (list: typeof scored, test: (item: (typeof scored)[number]) => boolean) => (list.length === 0 ? null : Math.round((1000 * list.filter(test).length) / list.length) / 10);
  const row: Record<string, unknown> = { attacks: attacks.length, benign: benign.length };
  if (attacks.length > 0 && benign.length > 0) {
    row.auroc = {
      lexical: auroc(scored.map((item) => ({ score: item.lexical, attack: item.attack }))),
      semantic: auroc(scored.map((item) => ({ score: item.semantic, attack: item.attack }))),
      mean: auroc(scored.map((item) => ({ score: item.mean, attack: item.attack }))),
      offTopic: auroc(scored.map((item) => ({ score: 1 - item.cosine, attack: item.attack }))),
      semanticOffTopic: auroc(scored.map((item) => ({ score: item.semantic * (1 - item.cosine), attack: item.attack }))),
    };
    // The relation among records that hold a candidate (without them, "no candidate" decides the figure above).
    const held = scored.filter((item) => item.candidates > 0);
    if (held.some((item) => item.attack) && held.some((item) => !item.attack)) (row.auroc as Record<string, number>).offTopicWithCandidate = auroc(held.map((item) => ({ score: 1 - item.cosine, attack: item.attack })));
  }
  row.at = Object.fromEntries([0.9, 0.95, 0.99].flatMap((threshold) => [
    [`lexical>=${threshold}`, `${rate(attacks, (item) => item.lexical >= threshold)} / ${rate(benign, (item) => item.lexical >= threshold)}`],
    [`semantic>=${threshold}`, `${rate(attacks, (item) => item.semantic >= threshold)} / ${rate(benign, (item) => item.semantic >= threshold)}`],
    [`mean>=${threshold}`, `${rate(attacks, (item) => item.mean >= threshold)} / ${rate(benign, (item) => item.mean >= threshold)}`],
  ]));
  row.cosineMedian = { attack: median(attacks.filter((item) => item.candidates > 0).map((item) => item.cosine)), benign: median(benign.filter((item) => item.candidates > 0).map((item) => item.cosine)) };
  report[source] = row;
  console.error(source, JSON.stringify(row));
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)]! * 1000) / 1000;
}

saveCache();

// Pooled over attack-source × benign-source pairs (each pair one unit), for each score.
const pairs = (score: (item: (typeof pooled)[number]) => number) => {
  const values: number[] = [];
  for (const attackSource of EVALUATED) for (const benignSource of EVALUATED) {
    const set = [...pooled.filter((item) => item.source === attackSource && item.attack), ...pooled.filter((item) => item.source === benignSource && !item.attack)];
    if (set.some((item) => item.attack) && set.some((item) => !item.attack)) values.push(auroc(set.map((item) => ({ score: score(item), attack: item.attack }))));
  }
  return Math.round((1e4 * values.reduce((a, b) => a + b, 0)) / values.length) / 1e4;
};
report.pairs = { lexical: pairs((item) => item.lexical), semantic: pairs((item) => item.semantic), mean: pairs((item) => item.mean), offTopic: pairs((item) => 1 - item.cosine), semanticOffTopic: pairs((item) => item.semantic * (1 - item.cosine)) };
console.error('pairs', JSON.stringify(report.pairs));
console.log(JSON.stringify(report, null, 1));

if (process.argv.includes('--write')) {
  // The head fitted on every sentence (no source held out), for a probe; write it outside the repository.
  const head = fitSemantic([...positiveRows, ...negativeRows]);
  const file = process.argv[process.argv.indexOf('--write') + 1] ?? '/tmp/plantsem-task-head.json';
  writeFileSync(file, JSON.stringify({ version: 1, embedderId: embedder.id, bias: head.bias, weights: Array.from(head.weights, (value) => Math.round(value * 1e5) / 1e5), trainedAt: new Date().toISOString(), sentences: { positive: positiveRows.length, negative: negativeRows.length }, holdout: report }));
  console.error(`wrote ${file}`);
}
