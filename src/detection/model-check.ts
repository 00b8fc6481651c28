/**
 * `svc model check DIR`: loads a local detection model as the service would (ml/model.ts) and
 * measures it: its labels, the ones read as an attack under the label map, its size, its load
 * time and its latency on one thread — a short prompt, and a text that fills one window of the
 * model's length (the cost of every long input, per window). Throws DetectionModelError.
 */
import { loadTextClassifier, parseLabelList } from './ml/model.ts';

export interface ModelCheckReport {
  readonly ok: true;
  readonly dir: string;
  readonly graph: string;
  readonly bytes: number;
  readonly labels: readonly string[];
  readonly attack_labels: readonly string[];
  readonly max_tokens: number;
  readonly load_ms: number;
  readonly latency_ms: { readonly short_p50: number; readonly short_p95: number; readonly window_p50: number; readonly window_p95: number; readonly runs: number };
}

const SHORT = 'Please summarise the attached meeting notes in three bullet points for the team.';
const FILLER = 'The delivery schedule for the northern warehouse moves to Tuesday, and invoices follow the same week. ';
const RUNS = 10;

function percentile(values: number[], share: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  return Math.round((sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? 0) * 10) / 10;
}

export async function checkModel(dir: string, labels?: string): Promise<ModelCheckReport> {
  const started = performance.now();
  const classifier = await loadTextClassifier(dir, { attackLabels: labels === undefined ? null : parseLabelList(labels) });
  const loadMs = Math.round(performance.now() - started);
  try {
    // About one word-piece per four characters: enough text to fill one window, not two.
    const window = FILLER.repeat(Math.ceil((classifier.maxTokens * 3) / FILLER.length)).slice(0, classifier.maxTokens * 3);
    const time = async (text: string) => {
      await classifier.classify(`${text} `);
      const samples: number[] = [];
      for (let run = 0; run < RUNS; run += 1) {
        const begin = performance.now();
        await classifier.classify(text);
        samples.push(performance.now() - begin);
      }
      return samples;
    };
    const short = await time(SHORT);
    const full = await time(window);
    return {
      ok: true,
      dir: classifier.files.dir,
      graph: classifier.files.graph,
      bytes: classifier.files.bytes,
      labels: classifier.labels,
      attack_labels: classifier.attackLabels,
      max_tokens: classifier.maxTokens,
      load_ms: loadMs,
      latency_ms: { short_p50: percentile(short, 0.5), short_p95: percentile(short, 0.95), window_p50: percentile(full, 0.5), window_p95: percentile(full, 0.95), runs: RUNS },
    };
  } finally {
    await classifier.close();
  }
}
