/**
 * PII redactor quality: recall and precision per entity type on the presidio-research corpora in
 * ../shared/datasets/pii/*.jsonl (read at run time, never copied). A predicted span is a true
 * positive when it overlaps a gold span of the same type; recall counts gold spans overlapped by
 * a prediction of the same type (so a span that includes or omits a title still counts: the figure
 * measures misses, not boundary disagreements). Per set and pooled; PERSON spans per 1,000 benign
 * prompts (../shared/datasets/prompt_injection); µs per KB with and without name detection.
 * Run: `npx tsx bench/pii.ts [--quick|--quality-only|--speed-only]` or `npm run bench -- pii` (one JSON line).
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
  ZIP_CODE: 'POSTCODE',
  DOMAIN_NAME: 'URL', // presidio's DOMAIN_NAME spans are web addresses with their scheme
};

/**
 * Presidio has no date-of-birth type: a gold DATE_TIME span is a DOB when a birth word stands in
 * the 60 characters before it ("born on …", "your date of birth. It's …"), and any DOB prediction
 * on a gold DATE_TIME span is correct.
 */
const BIRTH_WORD = /\b(?:born|birth|birthday|dob)\b/i;
/**
 * Presidio marks postcodes inside a postal address only as part of the ADDRESS / STREET_ADDRESS
 * span (its ZIP_CODE spans are the separate ones): a POSTCODE prediction inside a gold address is
 * a true postcode, counted correct (and reported apart as `postcode_in_address`).
 */
const ADDRESS_TYPES = new Set(['ADDRESS', 'STREET_ADDRESS']);

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

interface Tally { gold: number; found: number; predicted: number; correct: number }

const round = (value: number) => Math.round(value * 1000) / 1000;

function rows(stats: ReadonlyMap<PiiType, Tally>): PiiBenchRow[] {
  return PII_TYPES.map((type) => {
    const row = stats.get(type)!;
    return {
      type,
      gold: row.gold,
      predicted: row.predicted,
      recall: row.gold === 0 ? null : round(row.found / row.gold),
      precision: row.predicted === 0 ? null : round(row.correct / row.predicted),
    };
  });
}

function emptyStats(): Map<PiiType, Tally> {
  const stats = new Map<PiiType, Tally>();
  for (const type of PII_TYPES) stats.set(type, { gold: 0, found: 0, predicted: 0, correct: 0 });
  return stats;
}

/** The benign prompt corpora a PERSON false positive is counted on (user-visible redaction of ordinary words). */
export const BENIGN_PROMPT_SOURCES = ['alpaca_seed_tasks', 'awesome_chatgpt_prompts', 'gpteacher_roleplay', 'gpteacher_toolformer', 'xstest_safe_prompts', 'cyberseceval_frr_borderline'];
const PROMPT_DIR = resolve(repoRoot, '../shared/datasets/prompt_injection');
/** Benign data-bearing corpora (agent traces, tool outputs, code): where identifiers other than PII abound. */
const BENIGN_DATA_SOURCES = ['tau_bench_agent_traces', 'injecagent_tool_responses', 'alpaca_eval_instructions_and_outputs', 'code_alpaca_2k'];

export interface PiiBenchResult {
  records: number;
  ms_per_record: number;
  /** Pooled over every set. */
  types: PiiBenchRow[];
  /** The same rows for each presidio set (only types with gold spans or predictions). */
  sets: Record<string, PiiBenchRow[]>;
  /** POSTCODE predictions inside a gold postal address (counted correct). */
  postcode_in_address: number;
  /** Records with no gold span at all, and how many of them got a PHONE. */
  pii_free_texts: { records: number; with_phone: number };
  /** Spans of the structured types (all but PERSON) per benign prompt corpus: identifiers found in ordinary prompts, agent traces and tool outputs. */
  benign_other: Record<string, { records: number; spans: Partial<Record<PiiType, number>> }>;
  /** PERSON spans found on benign prompts (names of real or fictional people are counted too: read the sample). */
  benign_person: Record<string, { records: number; person_spans: number; per_1000_records: number }>;
}

export function runPiiBench(directory = PII_DATASET_DIR): PiiBenchResult | null {
  if (!existsSync(directory)) return null;
  const pooled = emptyStats();
  const sets: Record<string, PiiBenchRow[]> = {};
  let records = 0;
  let elapsed = 0;
  let postcodeInAddress = 0;
  /** Texts without any gold PII, and those of them with a PHONE prediction. */
  let piiFree = 0;
  let piiFreeWithPhone = 0;
  for (const file of readdirSync(directory).filter((name) => name.endsWith('.jsonl')).sort()) {
    const stats = emptyStats();
    for (const line of readFileSync(join(directory, file), 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const record = JSON.parse(line) as { text: string; entities: Entity[] };
      records += 1;
      const started = performance.now();
      const spans = detectPii(record.text);
      elapsed += performance.now() - started;
      if (record.entities.length === 0) {
        piiFree += 1;
        if (spans.some((span) => span.type === 'PHONE')) piiFreeWithPhone += 1;
      }
      const gold = record.entities.map((entity) => ({
        ...entity,
        mapped: entity.type === 'DATE_TIME' ? (BIRTH_WORD.test(record.text.slice(Math.max(0, entity.start - 60), entity.start)) ? 'DOB' : null) : (TYPE_MAP[entity.type] ?? null),
      }));
      const dates = record.entities.filter((entity) => entity.type === 'DATE_TIME');
      const addresses = record.entities.filter((entity) => ADDRESS_TYPES.has(entity.type));
      for (const tally of [pooled, stats]) {
        for (const entity of gold) {
          if (entity.mapped === null) continue;
          const row = tally.get(entity.mapped)!;
          row.gold += 1;
          if (spans.some((span) => span.type === entity.mapped && span.start < entity.end && entity.start < span.end)) row.found += 1;
        }
        for (const span of spans) {
          const row = tally.get(span.type)!;
          row.predicted += 1;
          const overlapping = (entity: Entity) => span.start < entity.end && entity.start < span.end;
          if (gold.some((entity) => entity.mapped === span.type && overlapping(entity))) row.correct += 1;
          else if (span.type === 'DOB' && dates.some(overlapping)) row.correct += 1;
          else if (span.type === 'POSTCODE' && addresses.some((entity) => entity.start <= span.start && span.end <= entity.end)) {
            row.correct += 1;
            if (tally === pooled) postcodeInAddress += 1;
          }
        }
      }
    }
    sets[file.replace(/\.jsonl$/, '')] = rows(stats).filter((row) => row.gold > 0 || row.predicted > 0);
  }
  const benign: PiiBenchResult['benign_person'] = {};
  for (const source of BENIGN_PROMPT_SOURCES) {
    const path = join(PROMPT_DIR, `${source}.jsonl`);
    if (!existsSync(path)) continue;
    let count = 0;
    let spans = 0;
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const record = JSON.parse(line) as { text: string; label: string };
      if (record.label !== 'benign') continue;
      count += 1;
      spans += detectPii(record.text, PERSON_ONLY).length;
    }
    benign[source] = { records: count, person_spans: spans, per_1000_records: Math.round((spans / Math.max(count, 1)) * 1000) };
  }
  const benignOther: PiiBenchResult['benign_other'] = {};
  for (const source of [...BENIGN_PROMPT_SOURCES, ...BENIGN_DATA_SOURCES]) {
    const path = join(PROMPT_DIR, `${source}.jsonl`);
    if (!existsSync(path)) continue;
    const found: Partial<Record<PiiType, number>> = {};
    let count = 0;
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const record = JSON.parse(line) as { text: string; label: string };
      if (record.label !== 'benign') continue;
      count += 1;
      for (const span of detectPii(record.text, ALL_BUT_PERSON)) found[span.type] = (found[span.type] ?? 0) + 1;
    }
    benignOther[source] = { records: count, spans: found };
  }
  return {
    records,
    ms_per_record: round(elapsed / Math.max(records, 1)),
    types: rows(pooled),
    sets,
    postcode_in_address: postcodeInAddress,
    pii_free_texts: { records: piiFree, with_phone: piiFreeWithPhone },
    benign_person: benign,
    benign_other: benignOther,
  };
}

const PERSON_ONLY: ReadonlySet<PiiType> = new Set<PiiType>(['PERSON']);
const ALL_BUT_PERSON: ReadonlySet<PiiType> = new Set<PiiType>(PII_TYPES.filter((type) => type !== 'PERSON'));

/**
 * Speed: µs per KB of detectPii over the presidio texts and the benign prompts, all types against
 * all types but PERSON (the baseline, measured in the same run, rounds interleaved), so the cost of
 * name detection is the difference. The lexicons are loaded before timing (a one-off at first use).
 */
export function runPiiSpeedBench(rounds = 5): { kb: number; rounds: number; all_types_us_per_kb: number; without_person_us_per_kb: number; person_share: number; lexicon_load_ms: number } | null {
  if (!existsSync(PII_DATASET_DIR)) return null;
  const texts: string[] = [];
  for (const file of readdirSync(PII_DATASET_DIR).filter((name) => name.endsWith('.jsonl'))) {
    for (const line of readFileSync(join(PII_DATASET_DIR, file), 'utf8').split('\n')) if (line.trim() !== '') texts.push((JSON.parse(line) as { text: string }).text);
  }
  for (const source of BENIGN_PROMPT_SOURCES) {
    const path = join(PROMPT_DIR, `${source}.jsonl`);
    if (!existsSync(path)) continue;
    for (const line of readFileSync(path, 'utf8').split('\n')) if (line.trim() !== '') texts.push((JSON.parse(line) as { text: string }).text);
  }
  const kb = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0) / 1024;
  const loadStarted = performance.now();
  detectPii('Ada Lovelace');
  const lexiconLoad = performance.now() - loadStarted;
  const time = (types: ReadonlySet<PiiType> | null) => {
    const started = performance.now();
    for (const text of texts) detectPii(text, types);
    return performance.now() - started;
  };
  time(null);
  time(ALL_BUT_PERSON); // warm both paths
  let all = 0;
  let without = 0;
  for (let round = 0; round < rounds; round += 1) {
    all += time(null);
    without += time(ALL_BUT_PERSON);
  }
  const perKb = (ms: number) => Math.round(((ms * 1000) / rounds / kb) * 10) / 10;
  return {
    kb: Math.round(kb),
    rounds,
    all_types_us_per_kb: perKb(all),
    without_person_us_per_kb: perKb(without),
    person_share: round((all - without) / all),
    lexicon_load_ms: Math.round(lexiconLoad),
  };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = process.argv.includes('--speed-only') ? undefined : runPiiBench();
  if (result === null) console.warn(`skipped: ${PII_DATASET_DIR} is absent`);
  console.log(JSON.stringify({ bench: 'pii', result, speed: process.argv.includes('--quality-only') ? undefined : runPiiSpeedBench(process.argv.includes('--quick') ? 2 : 5) }));
}
