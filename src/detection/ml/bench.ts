/**
 * Latency of the ML tiers on this machine: embedder load, T2 reference-set load, single-input
 * embedding (cache misses), T2 score and T3 classify, as p50/p99 milliseconds. Inputs are our own
 * seed phrases with a varying suffix, so every embedding is a cache miss.
 */
import { loadavg } from 'node:os';
import { createEmbedder } from './embedder.ts';
import { createT2 } from './t2.ts';
import { loadT3Classifier } from './t3.ts';
import { loadSeedPhrases } from './vectors.ts';

function percentiles(samples: number[]): { p50: number; p99: number; n: number } {
  const sorted = [...samples].sort((left, right) => left - right);
  const pick = (quantile: number) => sorted[Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))] ?? 0;
  return { p50: Math.round(pick(0.5) * 100) / 100, p99: Math.round(pick(0.99) * 100) / 100, n: sorted.length };
}

export async function runMlBench(options: { iterations?: number } = {}): Promise<object> {
  const iterations = options.iterations ?? 60;
  let started = performance.now();
  const embedder = await createEmbedder();
  const loadMs = performance.now() - started;
  const t2 = createT2(embedder);
  started = performance.now();
  await t2.ready();
  const t2ReadyMs = performance.now() - started;
  started = performance.now();
  const t3 = loadT3Classifier();
  const t3LoadMs = performance.now() - started;

  const seeds = loadSeedPhrases();
  const text = (index: number) => `${seeds[index % seeds.length]?.text ?? ''} (${index} ${Math.random().toString(36).slice(2, 8)})`;
  await embedder.embed([text(-1)]); // warm the graph
  const embed: number[] = [];
  const t2Times: number[] = [];
  const t3Times: number[] = [];
  const t3NoEmbedding: number[] = [];
  for (let index = 0; index < iterations; index += 1) {
    let at = performance.now();
    const [embedding] = await embedder.embed([text(index)]);
    embed.push(performance.now() - at);
    at = performance.now();
    await t2.score(text(index + iterations));
    t2Times.push(performance.now() - at);
    at = performance.now();
    t3.classify(text(index), embedding);
    t3Times.push(performance.now() - at);
    at = performance.now();
    t3.classify(text(index));
    t3NoEmbedding.push(performance.now() - at);
  }
  const long = 'This paragraph is part of a long retrieved document about logistics and shipping schedules. '.repeat(40);
  const t2Long: number[] = [];
  for (let index = 0; index < Math.min(20, iterations); index += 1) {
    const at = performance.now();
    await t2.score(`Document ${index} ${Math.random().toString(36).slice(2, 8)}. ${long}`);
    t2Long.push(performance.now() - at);
  }
  return {
    embedder: embedder.id,
    load_ms: Math.round(loadMs),
    t2_reference_set: { source: t2.source, ready_ms: Math.round(t2ReadyMs * 10) / 10 },
    t3_load_ms: Math.round(t3LoadMs * 10) / 10,
    embed_single_ms: percentiles(embed),
    t2_score_ms: percentiles(t2Times),
    t2_score_long_3600_chars_ms: percentiles(t2Long),
    t3_classify_with_embedding_ms: percentiles(t3Times),
    t3_classify_ngrams_only_ms: percentiles(t3NoEmbedding),
    rss_mb: Math.round(process.memoryUsage().rss / 1e6),
    load_average_1m: Math.round(loadavg()[0] ?? 0),
  };
}
