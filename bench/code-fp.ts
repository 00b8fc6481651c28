/**
 * `npm run bench -- code-fp` (or `npx tsx bench/code-fp.ts [--chunks N] [--seed S] [--spans]`):
 * ordinary source code inspected by the engine as served (`createDetection({})`), the text a coding
 * agent reads through the MCP proxy (`tool_output`) and a developer pastes into a chat (`prompt`,
 * "Can you review this code?" + the chunk). None of it is addressed to a model, so every refusal
 * (challenge or block) is a false positive and every alert a ranking cost.
 *
 * The code is read at run time from files already on the machine that nobody on the team wrote:
 * this checkout's node_modules (`.js/.mjs/.cjs` and `.ts`) and the system's Python library
 * (`/usr/lib/python3*`). Files with a line over 400 characters or a mean line over 80 (minified or
 * bundled) are skipped. A seeded draw takes chunks of 20–80 lines, at most 3 per package, the
 * same number per language. Nothing is copied into the repository.
 *
 * Attack side (so that a change cannot buy the benign figure by going blind to code): the same
 * chunks with one attack sentence planted as a comment line at a seeded line (`//` or `#`, the
 * neighbouring line's indentation). The sentences are drawn (seeded) at run time from the
 * development corpora in ../shared/datasets: the indirect sources' injected instructions
 * (AgentDojo's injected texts, InjecAgent's attacker instructions) and the direct-instruction
 * sources (giskard, garak misc, promptmap, Tensor Trust hijacking, CyberSecEval direct), 40–240
 * characters, whitespace collapsed to one line. Without the datasets the attack side is skipped
 * with a notice; without any code files the whole bench is. "where the clean chunk passed" counts
 * only the chunks whose clean form was allowed: there the refusal is the planted sentence's doing,
 * so it is the figure a change to benign code must not lower.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { createDetection, type ThreatDecision } from '../src/detection/index.ts';
import { repoRoot, seededRandom as random } from './lib.ts';

type Language = 'javascript' | 'typescript' | 'python';
type Kind = 'tool_output' | 'prompt';
interface Chunk { language: Language; package: string; file: string; start: number; lines: string[] }
interface Rate { texts: number; refused: number; alert: number; refused_pct: number; alert_pct: number }
interface Tally { texts: number; refused: number; alert: number }

const DATASETS = path.resolve(repoRoot, '../shared/datasets/prompt_injection');
const PROMPT_PREFIX = 'Can you review this code?\n\n';
const PER_PACKAGE = 3;
const MIN_LINES = 20;
const MAX_LINES = 80;

function shuffle<T>(items: T[], next: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

function walk(directory: string, accept: (name: string) => boolean, out: string[], depth = 0): void {
  if (depth > 12) return;
  let entries;
  try {
    entries = readdirSync(directory, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) walk(full, accept, out, depth + 1);
    else if (entry.isFile() && accept(entry.name)) out.push(full);
  }
}

function languageOf(file: string): Language | undefined {
  if (/\.(?:m|c)?js$/.test(file)) return 'javascript';
  if (/\.(?:m|c)?ts$/.test(file)) return 'typescript';
  if (file.endsWith('.py')) return 'python';
  return undefined;
}

/** The package a file belongs to: node_modules/<name> or node_modules/@scope/<name> (the innermost), or the top-level module under the Python library. */
function packageOf(file: string): string {
  const parts = file.split(path.sep);
  const nm = parts.lastIndexOf('node_modules');
  if (nm >= 0) return parts[nm + 1]?.startsWith('@') === true ? `${parts[nm + 1]}/${parts[nm + 2]}` : parts[nm + 1] ?? file;
  const lib = parts.findIndex((part) => /^python3(?:\.\d+)?$/.test(part));
  if (lib < 0) return file;
  const rest = parts.slice(lib + 1).filter((part) => part !== 'dist-packages' && part !== 'site-packages');
  return `py:${rest[0] ?? file}`;
}

function candidateFiles(): Record<Language, string[]> {
  const files: string[] = [];
  const nodeModules = path.join(repoRoot, 'node_modules');
  if (existsSync(nodeModules)) walk(nodeModules, (name) => /\.(?:m|c)?[jt]s$/.test(name) && !name.includes('.min.'), files);
  for (const entry of existsSync('/usr/lib') ? readdirSync('/usr/lib') : []) {
    if (/^python3(?:\.\d+)?$/.test(entry)) walk(path.join('/usr/lib', entry), (name) => name.endsWith('.py'), files);
  }
  const byLanguage: Record<Language, string[]> = { javascript: [], typescript: [], python: [] };
  for (const file of files.sort()) {
    const language = languageOf(file);
    if (language !== undefined) byLanguage[language].push(file);
  }
  return byLanguage;
}

/** A chunk of 20–80 lines from a file that is neither minified nor bundled into long lines; undefined when the file does not qualify. */
function chunkOf(file: string, language: Language, next: () => number): Chunk | undefined {
  let text: string;
  try {
    if (statSync(file).size > 2_000_000) return undefined;
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const lines = text.split('\n');
  if (lines.length < MIN_LINES + 5) return undefined;
  let total = 0;
  for (const line of lines) {
    if (line.length > 400) return undefined;
    total += line.length;
  }
  if (total / lines.length > 80) return undefined;
  const length = Math.min(lines.length, MIN_LINES + Math.floor(next() * (MAX_LINES - MIN_LINES + 1)));
  const start = Math.floor(next() * (lines.length - length + 1));
  const chunk = lines.slice(start, start + length);
  // A chunk of mostly blank lines says nothing about code.
  if (chunk.filter((line) => line.trim().length > 0).length < MIN_LINES / 2) return undefined;
  return { language, package: packageOf(file), file, start: start + 1, lines: chunk };
}

export function drawChunks(count: number, seed: number): Chunk[] {
  const byLanguage = candidateFiles();
  const next = random(seed);
  const languages = (Object.keys(byLanguage) as Language[]).filter((language) => byLanguage[language].length > 0);
  const chunks: Chunk[] = [];
  languages.forEach((language, index) => {
    const quota = Math.floor(count / languages.length) + (index < count % languages.length ? 1 : 0);
    const perPackage = new Map<string, number>();
    let taken = 0;
    for (const file of shuffle([...byLanguage[language]], next)) {
      if (taken >= quota) break;
      const name = packageOf(file);
      if ((perPackage.get(name) ?? 0) >= PER_PACKAGE) continue;
      const chunk = chunkOf(file, language, next);
      if (chunk === undefined) continue;
      perPackage.set(name, (perPackage.get(name) ?? 0) + 1);
      chunks.push(chunk);
      taken++;
    }
  });
  return chunks;
}

function jsonl(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8').split('\n').filter((line) => line.length > 0).map((line) => JSON.parse(line) as Record<string, unknown>);
}

const DIRECT_SOURCES = ['giskard_prompt_injections', 'garak_misc', 'promptmap_rules', 'tensortrust_hijacking', 'cyberseceval_prompt_injection'];

/** Attack sentences, one line each, 40–240 characters, read from the development corpora at run time. */
export function attackSentences(): Array<{ group: 'indirect' | 'instruction'; text: string }> | undefined {
  if (!existsSync(DATASETS)) return undefined;
  const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
  const fits = (text: string) => text.length >= 40 && text.length <= 240;
  const seen = new Set<string>();
  const out: Array<{ group: 'indirect' | 'instruction'; text: string }> = [];
  const add = (group: 'indirect' | 'instruction', raw: unknown) => {
    if (typeof raw !== 'string') return;
    const text = oneLine(raw);
    if (!fits(text) || seen.has(text)) return;
    seen.add(text);
    out.push({ group, text });
  };
  for (const record of jsonl(path.join(DATASETS, 'agentdojo_tool_outputs.jsonl'))) if (record.label === 'attack') add('indirect', record.injected_text);
  for (const record of jsonl(path.join(DATASETS, 'injecagent_tool_responses.jsonl'))) if (record.label === 'attack') add('indirect', record.attacker_instruction);
  for (const source of DIRECT_SOURCES) {
    for (const record of jsonl(path.join(DATASETS, `${source}.jsonl`))) if (record.label === 'attack' && record.direction === undefined) add('instruction', record.text);
  }
  return out;
}

/** The chunk with `sentence` as a comment line before line `at`, indented like that line. */
export function plant(chunk: Chunk, sentence: string, at: number): string {
  const marker = chunk.language === 'python' ? '#' : '//';
  const neighbour = chunk.lines[at] ?? '';
  const indent = /^[ \t]*/.exec(neighbour)?.[0] ?? '';
  return [...chunk.lines.slice(0, at), `${indent}${marker} ${sentence}`, ...chunk.lines.slice(at)].join('\n');
}

function rate(tally: Tally): Rate {
  const pct = (n: number) => (tally.texts === 0 ? 0 : Math.round((n / tally.texts) * 10000) / 100);
  return { ...tally, refused_pct: pct(tally.refused), alert_pct: pct(tally.alert) };
}

function count(table: Record<string, Tally>, key: string, decision: ThreatDecision): void {
  const tally = (table[key] ??= { texts: 0, refused: 0, alert: 0 });
  tally.texts++;
  if (!decision.allowed) tally.refused++;
  if (decision.decision !== 'allow' && decision.decision !== 'log') tally.alert++;
}

function top(counts: Record<string, number>, n = 12): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, n));
}

export async function runCodeFpBench(options: { chunks?: number; seed?: number; spans?: boolean } = {}): Promise<object> {
  const seed = options.seed ?? 20261130;
  const chunks = drawChunks(options.chunks ?? 400, seed);
  if (chunks.length === 0) {
    process.stderr.write('notice: code-fp: no source files found (node_modules, /usr/lib/python3*): skipped\n');
    return { skipped: 'no source files found under node_modules or /usr/lib/python3*' };
  }
  const engine = createDetection({});
  const kinds: Kind[] = ['tool_output', 'prompt'];
  const benign: Record<string, Tally> = {};
  const refusedBy: Record<Kind, Record<string, number>> = { tool_output: {}, prompt: {} };
  const alertBy: Record<Kind, Record<string, number>> = { tool_output: {}, prompt: {} };
  const examples: Array<{ kind: Kind; file: string; lines: string; decision: string; score: number; findings: string[] }> = [];
  // Whether each chunk's clean form was allowed, per kind: a planted attack is credited to the
  // detector only where the code around it passed, not where the code was refused anyway.
  const cleanAllowed: Record<Kind, boolean[]> = { tool_output: [], prompt: [] };
  for (const chunk of chunks) {
    const code = chunk.lines.join('\n');
    for (const kind of kinds) {
      const decision = await engine.inspect({ kind, content: kind === 'prompt' ? PROMPT_PREFIX + code : code });
      cleanAllowed[kind].push(decision.allowed);
      count(benign, `${kind} all`, decision);
      count(benign, `${kind} ${chunk.language}`, decision);
      if (decision.decision === 'allow' || decision.decision === 'log') continue;
      const ids = [...new Set(decision.patterns_matched.map((pattern) => pattern.id))];
      const table = decision.allowed ? alertBy[kind] : refusedBy[kind];
      for (const id of ids) table[id] = (table[id] ?? 0) + 1;
      if (!decision.allowed || options.spans === true) {
        examples.push({
          kind, file: chunk.file, lines: `${chunk.start}-${chunk.start + chunk.lines.length - 1}`, decision: decision.decision, score: decision.threat_score,
          findings: decision.patterns_matched.map((pattern) => {
            const where = pattern.span === undefined ? '' : ` «${(kind === 'prompt' ? PROMPT_PREFIX + code : code).slice(Math.max(0, pattern.span.start - 40), pattern.span.end + 40).replace(/\s+/g, ' ')}»`;
            return `${pattern.id}:${pattern.confidence}${where}`;
          }),
        });
      }
    }
  }
  const sentences = attackSentences();
  let attack: object;
  if (sentences === undefined || sentences.length === 0) {
    process.stderr.write(`notice: code-fp: ${DATASETS} is absent: the attack side (planted comments) is skipped\n`);
    attack = { skipped: `${DATASETS} absent` };
  } else {
    const next = random(seed ^ 0x5eed);
    const planted: Record<string, Tally> = {};
    for (const [index, chunk] of chunks.entries()) {
      const sentence = sentences[Math.floor(next() * sentences.length)]!;
      const at = Math.floor(next() * (chunk.lines.length + 1));
      const code = plant(chunk, sentence.text, at);
      for (const kind of kinds) {
        const decision = await engine.inspect({ kind, content: kind === 'prompt' ? PROMPT_PREFIX + code : code });
        count(planted, `${kind} all`, decision);
        count(planted, `${kind} ${chunk.language}`, decision);
        count(planted, `${kind} ${sentence.group}`, decision);
        if (cleanAllowed[kind][index] === true) count(planted, `${kind} where the clean chunk passed`, decision);
      }
    }
    attack = {
      sentences: { drawn_from: sentences.length, indirect: sentences.filter((s) => s.group === 'indirect').length, instruction: sentences.filter((s) => s.group === 'instruction').length },
      detected: Object.fromEntries(Object.entries(planted).map(([key, tally]) => [key, rate(tally)])),
    };
  }
  const languages: Record<string, number> = {};
  for (const chunk of chunks) languages[chunk.language] = (languages[chunk.language] ?? 0) + 1;
  return {
    chunks: chunks.length, seed, languages, packages: new Set(chunks.map((chunk) => chunk.package)).size,
    benign: Object.fromEntries(Object.entries(benign).map(([key, tally]) => [key, rate(tally)])),
    refused_by: { tool_output: top(refusedBy.tool_output), prompt: top(refusedBy.prompt) },
    alert_only_by: { tool_output: top(alertBy.tool_output), prompt: top(alertBy.prompt) },
    attack,
    examples,
  };
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const args = process.argv.slice(2);
  const value = (flag: string) => {
    const index = args.indexOf(flag);
    return index >= 0 && args[index + 1] !== undefined ? Number(args[index + 1]) : undefined;
  };
  console.log(JSON.stringify(await runCodeFpBench({ chunks: value('--chunks'), seed: value('--seed'), spans: args.includes('--spans') }), null, 1));
}
