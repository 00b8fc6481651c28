/**
 * The T2 reference vector set: curated injection phrasings (seeds/seed-injections.json) and benign
 * hard negatives (seeds/seed-benign.json), embedded once by `scripts/train-t2-vectors.ts` and
 * stored as int8-quantised vectors in weights/t2-vectors.json, so startup does not re-embed them.
 *
 * The stored file records the embedder id and a hash of the seed texts; when either differs from
 * the running embedder or the current seed files, the set is rebuilt lazily on first use instead
 * (correct but slower start), so a stale file can never silently score against the wrong model.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sha256Hex } from '../../platform/crypto.ts';
import type { Embedder } from './embedder.ts';
import { normalise } from './embedder.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
export const SEED_INJECTIONS_FILE = path.join(here, 'seeds', 'seed-injections.json');
export const SEED_BENIGN_FILE = path.join(here, 'seeds', 'seed-benign.json');
export const T2_VECTORS_FILE = path.join(here, 'weights', 't2-vectors.json');

export interface SeedPhrase {
  id: string;
  category: string;
  text: string;
}

export interface ReferenceVector {
  id: string;
  /** Attack family (instruction_override, prompt_extraction, …) or 'benign'. */
  category: string;
  vector: Float32Array;
}

export interface VectorSet {
  embedderId: string;
  seedHash: string;
  dimensions: number;
  entries: ReferenceVector[];
}

interface StoredVectorSet {
  embedderId: string;
  seedHash: string;
  dimensions: number;
  quantization: 'int8';
  entries: Array<{ id: string; category: string; scale: number; data: string }>;
}

export function loadSeedPhrases(): SeedPhrase[] {
  const attacks = JSON.parse(readFileSync(SEED_INJECTIONS_FILE, 'utf8')) as SeedPhrase[];
  const benign = JSON.parse(readFileSync(SEED_BENIGN_FILE, 'utf8')) as SeedPhrase[];
  return [...attacks, ...benign];
}

export function seedHash(seeds: SeedPhrase[]): string {
  return sha256Hex(JSON.stringify(seeds.map((seed) => [seed.id, seed.category, seed.text]))).slice(0, 16);
}

export async function buildVectorSet(embedder: Embedder, seeds: SeedPhrase[] = loadSeedPhrases()): Promise<VectorSet> {
  const vectors = await embedder.embed(seeds.map((seed) => seed.text));
  return {
    embedderId: embedder.id,
    seedHash: seedHash(seeds),
    dimensions: embedder.dimensions,
    entries: seeds.map((seed, index) => ({ id: seed.id, category: seed.category, vector: vectors[index] as Float32Array })),
  };
}

/** int8 per-vector scaling: 4x smaller than float32, cosine error below 0.002 at 512-d. */
export function serialiseVectorSet(set: VectorSet): string {
  const stored: StoredVectorSet = {
    embedderId: set.embedderId,
    seedHash: set.seedHash,
    dimensions: set.dimensions,
    quantization: 'int8',
    entries: set.entries.map((entry) => {
      let max = 0;
      for (const value of entry.vector) max = Math.max(max, Math.abs(value));
      const scale = max === 0 ? 1 : max / 127;
      const bytes = new Int8Array(entry.vector.length);
      entry.vector.forEach((value, index) => (bytes[index] = Math.round(value / scale)));
      return { id: entry.id, category: entry.category, scale, data: Buffer.from(bytes.buffer).toString('base64') };
    }),
  };
  return JSON.stringify(stored) + '\n';
}

export function parseVectorSet(text: string): VectorSet {
  const stored = JSON.parse(text) as StoredVectorSet;
  return {
    embedderId: stored.embedderId,
    seedHash: stored.seedHash,
    dimensions: stored.dimensions,
    entries: stored.entries.map((entry) => {
      const bytes = Buffer.from(entry.data, 'base64');
      const vector = new Float32Array(bytes.length);
      for (let index = 0; index < bytes.length; index += 1) vector[index] = bytes.readInt8(index) * entry.scale;
      return { id: entry.id, category: entry.category, vector: normalise(vector) };
    }),
  };
}

/** The stored set when it matches this embedder and the current seeds, else null. */
export function loadStoredVectorSet(embedderId: string, file = T2_VECTORS_FILE): VectorSet | null {
  if (!existsSync(file)) return null;
  const set = parseVectorSet(readFileSync(file, 'utf8'));
  if (set.embedderId !== embedderId || set.seedHash !== seedHash(loadSeedPhrases())) return null;
  return set;
}
