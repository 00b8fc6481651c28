/**
 * T1: the pattern catalogue matched on every normalized variant. Pure and synchronous. A cheap
 * literal prefilter (String.includes of each pattern's keywords) decides which regular
 * expressions run at all, so the common clean input costs a few substring scans. Input is
 * bounded by normalization (64 KB); every pattern is linear-time (checked by a test).
 */
import type { CompiledCatalogue } from '../catalogue/index.ts';
import type { Normalized } from '../normalize/index.ts';
import type { Finding, InspectKind, Verdict } from '../types.ts';
import { combineFindings } from '../score.ts';

export interface T1Result {
  readonly score: number;
  readonly findings: readonly Finding[];
}

export function scanVariants(catalogue: CompiledCatalogue, kind: InspectKind, variants: Normalized['variants']): T1Result {
  const findings = new Map<string, Finding>();
  for (const pattern of catalogue.forKind(kind)) {
    for (const variant of variants) {
      if (!pattern.entry.keywords.some((keyword) => variant.text.includes(keyword))) continue;
      if (pattern.regex.test(variant.text)) {
        findings.set(pattern.entry.id, {
          id: pattern.entry.id,
          name: pattern.entry.name,
          category: pattern.entry.category,
          confidence: pattern.entry.weight,
          tier: 't1',
          variant: variant.name,
        });
        break;
      }
    }
  }
  const list = [...findings.values()];
  return { score: combineFindings(list), findings: list };
}

/** The T1 tier: fails closed (an erroring pattern engine must not wave traffic through). */
export function runT1(catalogue: CompiledCatalogue, kind: InspectKind, normalized: Normalized): Verdict {
  const result = scanVariants(catalogue, kind, normalized.variants);
  return {
    outcome: result.findings.length > 0 ? 'match' : 'clean',
    score: result.score,
    findings: result.findings,
    failMode: 'closed',
  };
}
