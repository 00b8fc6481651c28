/**
 * Inputs longer than the normalization bound (64 KiB), of any kind: the first window goes through the
 * whole cascade; the rest, up to a configured maximum, is cut into further 64 KiB windows
 * (overlapping by 1 KiB, so a payload on a boundary is seen whole in one of them) that are
 * normalized and matched against the catalogue (T1 only). Cost is linear in the scanned length
 * (measured in docs/detection.md, "Long bodies"); beyond the maximum nothing is scanned and the
 * evidence says so.
 */
import type { CompiledCatalogue } from './catalogue/index.ts';
import { MAX_SCAN_LENGTH, normalize } from './normalize/index.ts';
import { scanVariants } from './tiers/t1.ts';
import type { Evidence, Finding, InspectKind } from './types.ts';

/** Default maximum of a scan text that is scanned at all (256 KiB). */
export const DEFAULT_SCAN_MAX = 262_144;
const OVERLAP = 1024;

export function scanBeyondFirstWindow(catalogue: CompiledCatalogue, kind: InspectKind, text: string, maxChars: number): { findings: Finding[]; evidence: Evidence[] } {
  const findings = new Map<string, Finding>();
  const evidence: Evidence[] = [];
  if (text.length <= MAX_SCAN_LENGTH) return { findings: [], evidence };
  const limit = Math.min(text.length, maxChars);
  let windows = 0;
  for (let start = MAX_SCAN_LENGTH - OVERLAP; start < limit; start += MAX_SCAN_LENGTH - OVERLAP) {
    const window = text.slice(start, Math.min(limit, start + MAX_SCAN_LENGTH));
    windows++;
    for (const finding of scanVariants(catalogue, kind, normalize(window, { kind }).variants).findings) {
      if (!findings.has(finding.id)) findings.set(finding.id, { ...finding, variant: `window:${windows}` });
    }
  }
  evidence.push({ transform: 'long-body', detail: `${windows} further window(s) scanned up to ${limit} of ${text.length} characters` });
  if (text.length > limit) evidence.push({ transform: 'long-body-truncated', detail: `characters beyond ${limit} not scanned` });
  return { findings: [...findings.values()], evidence };
}
