/**
 * PII redactor quality: recall and precision per entity type on the presidio-research corpora in
 * ../shared/datasets/pii/*.jsonl (read at run time, never copied). A predicted span is a true
 * positive when it overlaps a gold span of the same type; recall counts gold spans overlapped by
 * a prediction of the same type. Run: `npx tsx bench/pii.ts` (prints one JSON line).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { detectPii, PII_TYPES, type PiiType } from '../src/gateway/pii/index.ts';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const PII_DATASET_DIR = resolve(repoRoot, '../shared/datasets/pii');

/** Dataset entity type → svc PII type (types svc does not detect are left out). */
const TYPE_MAP: Readonly<Record<string, PiiType>> = {
  EMAIL_ADDRESS: 'EMAIL',
  PHONE_NUMBER: 'PHONE',
  CREDIT_CARD: 'CARD',
  IBAN_CODE: 'IBAN',
  US_SSN: 'SSN',
  IP_ADDRESS: 'IP',
  PERSON: 'PERSON',
  US_DRIVER_LICENSE: 'DRIVER_LICENSE',
};

interface Entity {
  type: string;
  start: number;
  end: number;
}

export interface PiiBenchRow {
  type: PiiType;
  gold: number;
  predicted: number;
  recall: number | null;
  precision: number | null;
}

export function runPiiBench(directory = PII_DATASET_DIR): { records: number; ms_per_record: number; types: PiiBenchRow[] } | null {
  if (!existsSync(directory)) return null;
  const stats = new Map<PiiType, { gold: number; found: number; predicted: number; correct: number }>();
  for (const type of PII_TYPES) stats.set(type, { gold: 0, found: 0, predicted: 0, correct: 0 });
  let records = 0;
  let elapsed = 0;
  for (const file of readdirSync(directory).filter((name) => name.endsWith('.jsonl'))) {
    for (const line of readFileSync(join(directory, file), 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const record = JSON.parse(line) as { text: string; entities: Entity[] };
      records += 1;
      const started = performance.now();
      const spans = detectPii(record.text);
      elapsed += performance.now() - started;
      const gold = record.entities.map((entity) => ({ ...entity, mapped: TYPE_MAP[entity.type] ?? null }));
      for (const entity of gold) {
        if (entity.mapped === null) continue;
        const row = stats.get(entity.mapped)!;
        row.gold += 1;
        if (spans.some((span) => span.type === entity.mapped && span.start < entity.end && entity.start < span.end)) row.found += 1;
      }
      for (const span of spans) {
        const row = stats.get(span.type)!;
        row.predicted += 1;
        if (gold.some((entity) => entity.mapped === span.type && span.start < entity.end && entity.start < span.end)) row.correct += 1;
      }
    }
  }
  const round = (value: number) => Math.round(value * 1000) / 1000;
  return {
    records,
    ms_per_record: round(elapsed / Math.max(records, 1)),
    types: PII_TYPES.map((type) => {
      const row = stats.get(type)!;
      return {
        type,
        gold: row.gold,
        predicted: row.predicted,
        recall: row.gold === 0 ? null : round(row.found / row.gold),
        precision: row.predicted === 0 ? null : round(row.correct / row.predicted),
      };
    }),
  };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = runPiiBench();
  if (result === null) console.warn(`skipped: ${PII_DATASET_DIR} is absent`);
  console.log(JSON.stringify({ bench: 'pii', result }));
}
