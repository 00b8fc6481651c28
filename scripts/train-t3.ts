/**
 * Trains the T3 intent classifier (logistic regression over USE-lite embeddings + hashed n-grams)
 * and writes src/detection/ml/weights/t3.json.
 *
 *   npx tsx scripts/train-t3.ts            # source-wise evaluation, random held-out split, final fit
 *   npx tsx scripts/train-t3.ts --embed-only   # only fill the embedding cache
 *
 * Training data is read at run time from ../shared/datasets (never copied into the repository);
 * embeddings of the corpus are cached under the OS temp directory so re-runs take seconds.
 */
import { createReadStream, existsSync, readFileSync, readdirSync, writeFileSync, mkdirSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createEmbedder, MAX_EMBED_CHARS } from '../src/detection/ml/embedder.ts';
import { sha256Hex } from '../src/platform/crypto.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const datasets = path.resolve(repoRoot, '../shared/datasets');

export interface Sample {
  text: string;
  attack: boolean;
  source: string;
  category: string;
}

export async function loadCorpus(): Promise<Sample[]> {
  if (!existsSync(datasets)) throw new Error(`datasets not found at ${datasets}`);
  const samples: Sample[] = [];
  const add = (file: string, map: (record: Record<string, unknown>) => Sample | null) => {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const sample = map(JSON.parse(line) as Record<string, unknown>);
      if (sample !== null && sample.text.trim() !== '') samples.push(sample);
    }
  };
  for (const name of readdirSync(path.join(datasets, 'prompt_injection')).filter((file) => file.endsWith('.jsonl'))) {
    add(path.join(datasets, 'prompt_injection', name), (record) => ({
      text: String(record.text ?? ''),
      attack: record.label === 'attack',
      source: `pi/${name.replace('.jsonl', '')}`,
      category: String(record.category ?? ''),
    }));
  }
  for (const name of readdirSync(path.join(datasets, 'mcp')).filter((file) => file.endsWith('.jsonl'))) {
    add(path.join(datasets, 'mcp', name), (record) => ({
      text: String(record.text ?? ''),
      attack: record.label === 'attack',
      source: `mcp/${name.replace('.jsonl', '')}`,
      category: String(record.category ?? ''),
    }));
  }
  // Synthetic everyday sentences (names, addresses, dates): benign for injection purposes.
  for (const name of readdirSync(path.join(datasets, 'pii')).filter((file) => file.endsWith('.jsonl'))) {
    add(path.join(datasets, 'pii', name), (record) => ({
      text: String(record.text ?? ''),
      attack: false,
      source: `pii/${name.replace('.jsonl', '')}`,
      category: 'everyday',
    }));
  }
  const seen = new Set<string>();
  return samples.filter((sample) => {
    const key = `${sample.attack}:${sample.text}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Embeds every sample once per embedder id; vectors are cached in the OS temp directory. */
export async function embedCorpus(samples: Sample[]): Promise<Map<string, Float32Array>> {
  const embedder = await createEmbedder({ cacheEntries: 16 });
  const cacheDir = path.join(tmpdir(), 'svc-ml-cache');
  mkdirSync(cacheDir, { recursive: true });
  const cacheFile = path.join(cacheDir, `${embedder.id}.jsonl`);
  const vectors = new Map<string, Float32Array>();
  if (existsSync(cacheFile)) {
    const lines = createInterface({ input: createReadStream(cacheFile) });
    for await (const line of lines) {
      if (line === '') continue;
      const [key, encoded] = line.split(' ');
      if (key === undefined || encoded === undefined) continue;
      const bytes = Buffer.from(encoded, 'base64');
      vectors.set(key, new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4).slice());
    }
  }
  const todo = [...new Set(samples.map((sample) => sample.text.slice(0, MAX_EMBED_CHARS)))].filter((text) => !vectors.has(sha256Hex(text)));
  // Short texts first: faster feedback, and similar lengths batch well.
  todo.sort((a, b) => a.length - b.length);
  const started = Date.now();
  for (let start = 0; start < todo.length; start += 16) {
    const batch = todo.slice(start, start + 16);
    const embedded = await embedder.embed(batch);
    const lines: string[] = [];
    batch.forEach((text, index) => {
      const vector = embedded[index] as Float32Array;
      const key = sha256Hex(text);
      vectors.set(key, vector);
      lines.push(`${key} ${Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64')}`);
    });
    appendFileSync(cacheFile, lines.join('\n') + '\n');
    if ((start / 16) % 50 === 0) process.stderr.write(`embedded ${start + batch.length}/${todo.length} in ${Math.round((Date.now() - started) / 1000)} s\n`);
  }
  return vectors;
}

export function embeddingOf(vectors: Map<string, Float32Array>, text: string): Float32Array {
  const vector = vectors.get(sha256Hex(text.slice(0, MAX_EMBED_CHARS)));
  if (vector === undefined) throw new Error('missing embedding');
  return vector;
}

async function main(): Promise<void> {
  const samples = await loadCorpus();
  process.stderr.write(`${samples.length} samples\n`);
  await embedCorpus(samples);
  if (process.argv.includes('--embed-only')) return;
  void writeFileSync;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  await main();
}
