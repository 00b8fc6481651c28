/**
 * The ReDoS check of catalogue patterns: every regular expression T1 runs for a pattern (the
 * pattern, or each part of each gapped sequence) through the recheck analyser, as the
 * catalogue's test runs it over svc's own catalogue and as a sensor runs it over a pattern pack
 * before loading it (sensors/packs.ts). recheck validates its attack string on V8 itself (recall
 * validation), so a pattern is called vulnerable only when its attack really is super-linear on
 * the engine svc runs on; a fixed fuzzing seed keeps the verdicts reproducible.
 */
import { check } from 'recheck';
import { splitPattern, topLevelAlternatives, type CatalogueEntry } from './index.ts';

/** The analysis options (a verdict depends on them; the test's verdict cache is keyed by them). */
export const REDOS_CHECK_OPTIONS = { timeout: 4_000, recallTimeout: 1_000, randomSeed: 42 } as const;
/** The flags the analysis runs with (T1 compiles parts with g and m; g changes nothing here). */
export const REDOS_CHECK_FLAGS = 'm';

/** The regular expressions T1 compiles for a pattern: itself, or each part of each gapped alternative. */
export function regularExpressionsOf(pattern: string): string[] {
  const alternatives = splitPattern(pattern).gaps.length === 0 ? [pattern] : topLevelAlternatives(pattern);
  return alternatives.flatMap((alternative) => splitPattern(alternative).parts);
}

export interface SuperLinearPattern {
  readonly id: string;
  /** The regular expression recheck found vulnerable (a part of the pattern), cut to 200 characters. */
  readonly expression: string;
  readonly complexity: 'polynomial' | 'exponential';
}

/**
 * The entries with a regular expression recheck finds vulnerable. `known(expression)` may answer
 * true for an expression already found safe with these options (a cache); 'unknown' verdicts (the
 * analysis ran out of time) are not vulnerable, as in the catalogue's test. `found(expression)`
 * is told each expression found safe, for such a cache.
 */
export async function superLinearPatterns(
  entries: readonly Pick<CatalogueEntry, 'id' | 'pattern'>[],
  cache: { known?: (expression: string) => boolean; found?: (expression: string) => void } = {},
): Promise<SuperLinearPattern[]> {
  const vulnerable: SuperLinearPattern[] = [];
  for (const entry of entries) {
    for (const expression of regularExpressionsOf(entry.pattern)) {
      if (cache.known?.(expression) === true) continue;
      const diagnostics = await check(expression, REDOS_CHECK_FLAGS, REDOS_CHECK_OPTIONS);
      if (diagnostics.status === 'vulnerable') vulnerable.push({ id: entry.id, expression: expression.slice(0, 200), complexity: diagnostics.complexity.type });
      else if (diagnostics.status === 'safe') cache.found?.(expression);
    }
  }
  return vulnerable;
}
