/**
 * Cache of recheck's 'safe' verdicts for the ReDoS tests (the catalogue's and the PII patterns'), kept in
 * test/detection/redos-verdicts.json (committed). The key is SHA-256 over the exact regular
 * expression source, its flags, recheck's version and the analysis options, so only an
 * identical expression analysed by the same analyser the same way reuses a verdict: a new or
 * changed pattern is analysed again. Only 'safe' is cached ('vulnerable' fails the test anyway;
 * 'unknown' is analysed each time). New verdicts are written when SVC_REDOS_CACHE_WRITE=1 (the
 * command in docs/decisions.md, "ReDoS test time"); otherwise a run only reads the file.
 *
 * A refresh may give each uncached expression more time than a test run's 4 s
 * (SVC_REDOS_REFRESH_TIMEOUT_MS, default 10 minutes): the timeout bounds how long the seeded
 * analysis runs, not what it finds, so a 'safe' reached with more time is the verdict of the
 * same analysis and is stored under the same key. Some expressions need 15–160 s on a loaded
 * machine; a test run would analyse them every time and, cut off at 4 s, learn nothing
 * ('unknown' passes). Run a refresh at a raised priority on a busy machine: recall validation
 * starts a Node process and times it within recallTimeout, so a machine too loaded to start one
 * in a second calls a linear expression vulnerable.
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

/** Whether this run writes new verdicts (SVC_REDOS_CACHE_WRITE=1). */
export const REFRESHING = process.env.SVC_REDOS_CACHE_WRITE === '1';

/** The options to analyse an uncached expression with: `options` itself, or with a refresh's longer timeout (see above). The key stays that of `options`. */
export function analysisOptions<Options extends { timeout: number }>(options: Options): Omit<Options, 'timeout'> & { timeout: number } {
  return REFRESHING ? { ...options, timeout: Number(process.env.SVC_REDOS_REFRESH_TIMEOUT_MS ?? 600_000) } : options;
}

/**
 * A refresh's first pass over expressions without a verdict: each analysed with the refresh's
 * budget, its key added to `known` and to `fresh` when found safe (the test's own pass then skips
 * it). Nothing happens outside a refresh.
 */
export async function settleUncached(expressions: readonly string[], flags: string, options: { timeout: number }, known: Set<string>, fresh: string[]): Promise<void> {
  if (!REFRESHING) return;
  for (const expression of new Set(expressions)) {
    const key = verdictKey(expression, flags, options);
    if (known.has(key)) continue;
    if ((await check(expression, flags, analysisOptions(options))).status !== 'safe') continue;
    known.add(key);
    fresh.push(key);
  }
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
  if (!REFRESHING) return;
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
    const diagnostics = await check(regex.source, flags, analysisOptions(RECHECK_OPTIONS));
    if (diagnostics.status === 'vulnerable') vulnerable.push(regex.source.slice(0, 80));
    else if (diagnostics.status === 'safe') fresh.push(key);
  }
  if (fresh.length > 0) saveVerdicts(verdicts, fresh);
  return vulnerable;
}
