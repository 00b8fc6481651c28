/**
 * Embeds the curated T2 seed phrases and writes src/detection/ml/weights/t2-vectors.json.
 *
 *   npx tsx scripts/train-t2-vectors.ts             # build the vector file, print timings
 *   npx tsx scripts/train-t2-vectors.ts --evaluate  # also score the ../shared corpora (whole text)
 *
 * Only our own phrasings are stored (as int8 vectors with ids); no dataset record goes into the
 * repository. --evaluate prints, per source, the share of records whose T2 score passes 0.5.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createEmbedder } from '../src/detection/ml/embedder.ts';
import { nearest, t2Score } from '../src/detection/ml/t2.ts';
import { T2_VECTORS_FILE, buildVectorSet, loadSeedPhrases, parseVectorSet, serialiseVectorSet } from '../src/detection/ml/vectors.ts';
import { embedCorpus, embeddingOf, loadCorpus } from './train-t3.ts';

const embedder = await createEmbedder();
const seeds = loadSeedPhrases();
let started = performance.now();
const set = await buildVectorSet(embedder, seeds);
const embedMs = performance.now() - started;
mkdirSync(path.dirname(T2_VECTORS_FILE), { recursive: true });
writeFileSync(T2_VECTORS_FILE, serialiseVectorSet(set));
started = performance.now();
const reloaded = parseVectorSet(readFileSync(T2_VECTORS_FILE, 'utf8'));
const loadMs = performance.now() - started;
let worst = 1;
set.entries.forEach((entry, index) => {
  const other = reloaded.entries[index];
  if (other === undefined) return;
  let sum = 0;
  for (let position = 0; position < entry.vector.length; position += 1) sum += (entry.vector[position] as number) * (other.vector[position] as number);
  worst = Math.min(worst, sum);
});
process.stdout.write(
  JSON.stringify({ seeds: seeds.length, embed_all_ms: Math.round(embedMs), load_stored_ms: Math.round(loadMs * 10) / 10, worst_quantised_cosine: worst }) + '\n',
);

if (process.argv.includes('--evaluate')) {
  const samples = await loadCorpus();
  const vectors = await embedCorpus(samples);
  const bySource = new Map<string, { attack: number; attackHit: number; benign: number; benignHit: number }>();
  const thresholds = [0.3, 0.5, 0.7];
  const pooled = thresholds.map(() => ({ tp: 0, fp: 0, p: 0, n: 0 }));
  for (const sample of samples) {
    const found = nearest(embeddingOf(vectors, sample.text), set.entries);
    const score = t2Score(found.attack.similarity, found.benign);
    const row = bySource.get(sample.source) ?? { attack: 0, attackHit: 0, benign: 0, benignHit: 0 };
    if (sample.attack) {
      row.attack += 1;
      if (score >= 0.5) row.attackHit += 1;
    } else {
      row.benign += 1;
      if (score >= 0.5) row.benignHit += 1;
    }
    bySource.set(sample.source, row);
    thresholds.forEach((threshold, index) => {
      const bucket = pooled[index] as { tp: number; fp: number; p: number; n: number };
      if (sample.attack) {
        bucket.p += 1;
        if (score >= threshold) bucket.tp += 1;
      } else {
        bucket.n += 1;
        if (score >= threshold) bucket.fp += 1;
      }
    });
  }
  for (const [source, row] of [...bySource].sort()) {
    process.stdout.write(
      `${source.padEnd(40)} attack ${row.attack ? ((100 * row.attackHit) / row.attack).toFixed(1) : '-'}% of ${row.attack}  benign flagged ${row.benign ? ((100 * row.benignHit) / row.benign).toFixed(1) : '-'}% of ${row.benign}\n`,
    );
  }
  thresholds.forEach((threshold, index) => {
    const bucket = pooled[index] as { tp: number; fp: number; p: number; n: number };
    process.stdout.write(`score>=${threshold}: recall ${((100 * bucket.tp) / bucket.p).toFixed(1)}%  fpr ${((100 * bucket.fp) / bucket.n).toFixed(1)}%\n`);
  });
}
