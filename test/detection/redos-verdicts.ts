/**
 * Cache of recheck's 'safe' verdicts for the ReDoS tests (the catalogue's and the PII patterns'), kept in
 * test/detection/redos-verdicts.json (committed). The key is SHA-256 over the exact regular
 * expression source, its flags, recheck's version and the analysis options, so only an
 * identical expression analysed by the same analyser the same way reuses a verdict: a new or
 * changed pattern is analysed again. Only 'safe' is cached ('vulnerable' fails the test anyway;
 * 'unknown' is analysed each time). New verdicts are written when SVC_REDOS_CACHE_WRITE=1 (the
 * command in docs/reliability.md); otherwise a run only reads the file.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { check } from 'recheck';

import { REDOS_CHECK_OPTIONS } from '../../src/detection/index.ts';

/** The options svc's own ReDoS check runs with (src/detection/catalogue/redos.ts), so verdicts are of the same analysis. */
export const RECHECK_OPTIONS = REDOS_CHECK_OPTIONS;
const FILE = resolve(import.meta.dirname, 'redos-verdicts.json');
const RECHECK_VERSION = (createRequire(import.meta.url)('recheck/package.json') as { version: string }).version;

export function verdictKey(source: string, flags: string, options: object): string {
  return createHash('sha256').update(JSON.stringify([source, flags, RECHECK_VERSION, options])).digest('hex');
}

export function loadVerdicts(): Set<string> {
  try {
    const parsed = JSON.parse(readFileSync(FILE, 'utf8')) as { safe?: unknown };
    return new Set(Array.isArray(parsed.safe) ? parsed.safe.filter((key): key is string => typeof key === 'string') : []);
  } catch {
    return new Set();
  }
}

export function saveVerdicts(known: ReadonlySet<string>, fresh: readonly string[]): void {
  if (process.env.SVC_REDOS_CACHE_WRITE !== '1') return;
  const safe = [...new Set([...known, ...fresh])].sort();
  writeFileSync(FILE, `${JSON.stringify({ about: 'recheck safe verdicts by sha256([source, flags, recheck version, options]); see redos-verdicts.ts', safe }, null, 1)}\n`);
}

/**
 * The sources (cut to 80 characters) of the given regular expressions that recheck finds
 * vulnerable, each analysed with its own flags (less `g`) unless a 'safe' verdict is cached; new
 * 'safe' verdicts are saved as saveVerdicts says.
 */
export async function vulnerableExpressions(regexes: readonly RegExp[]): Promise<string[]> {
  const verdicts = loadVerdicts();
  const fresh: string[] = [];
  const vulnerable: string[] = [];
  for (const regex of regexes) {
    const flags = regex.flags.replace('g', '');
    const key = verdictKey(regex.source, flags, RECHECK_OPTIONS);
    if (verdicts.has(key)) continue;
    const diagnostics = await check(regex.source, flags, RECHECK_OPTIONS);
    if (diagnostics.status === 'vulnerable') vulnerable.push(regex.source.slice(0, 80));
    else if (diagnostics.status === 'safe') fresh.push(key);
  }
  if (fresh.length > 0) saveVerdicts(verdicts, fresh);
  return vulnerable;
}
