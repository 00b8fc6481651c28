/**
 * Per-replica cache of the content-only part of an inspection: normalization and the tier
 * cascade, which depend on nothing but the kind, the text (plus header names for HTTP; a model
 * answer's system prompt and secrets, as a digest) and the thresholds in force. Session
 * escalation, fragments, the decision, metrics and threat events are still computed for every
 * request. Repeated content (a system prompt sent with every call,
 * a retried request, a templated prompt, the same tool output read by many agents) is analysed
 * once.
 *
 * Bounded: at most MAX_ENTRIES entries of at most MAX_TEXT characters each, and at most
 * MAX_TOTAL_CHARS characters of keys and normalized variants together (≈ 16 MB), least recently
 * used first out (lru-cache); entries expire after TTL_MS. Not used when a tier
 * depends on more than the content (T5 behaviour reads the caller's IP and endpoint), and a
 * result in which any tier errored or failed open is never stored (the next request retries).
 */
import { LRUCache } from 'lru-cache';
import type { Normalized } from './normalize/index.ts';
import type { PipelineResult } from './pipeline.ts';

export const ANALYSIS_CACHE = { MAX_ENTRIES: 2_000, MAX_TEXT: 8_192, MAX_TOTAL_CHARS: 8_000_000, TTL_MS: 10 * 60_000 } as const;

export interface Analysis {
  readonly normalized: Normalized;
  readonly result: PipelineResult;
}

export interface AnalysisCache {
  get(key: string, now?: number): Analysis | undefined;
  set(key: string, analysis: Analysis, now?: number): void;
  readonly size: number;
}

/**
 * The cache key, or null when the text is too long to be worth keeping. `context` is what else the
 * analysis reads (a model answer's system prompt and secrets, a tool's name and description, as a
 * digest: kindAnalysisContext). The header names are prefixed with their length: a name may hold
 * the separator (the inspect API takes any string as a header name), and without the length a
 * header named "host\0\0x" with the text T would have the key of a header named "host" with the
 * text "x\0\0" + T.
 */
export function analysisKey(kind: string, text: string, thresholdsKey: string, headerNames?: readonly string[], context = ''): string | null {
  if (text.length > ANALYSIS_CACHE.MAX_TEXT) return null;
  const names = headerNames === undefined ? '' : headerNames.join(',');
  return `${kind}\u0000${thresholdsKey}\u0000${names.length}:${names}\u0000${context}\u0000${text}`;
}

export function createAnalysisCache(options: { maxEntries?: number; maxTotalChars?: number; ttlMs?: number } = {}): AnalysisCache {
  const maxEntries = options.maxEntries ?? ANALYSIS_CACHE.MAX_ENTRIES;
  const maxTotalChars = options.maxTotalChars ?? ANALYSIS_CACHE.MAX_TOTAL_CHARS;
  const ttlMs = options.ttlMs ?? ANALYSIS_CACHE.TTL_MS;
  // Bounded by count and by characters (an entry's size is its key plus its normalized variants);
  // an entry larger than the whole budget is not stored. Expiry is the entry's own timestamp, so
  // callers may pass their clock.
  const entries = new LRUCache<string, { analysis: Analysis; expiresAt: number; chars: number }>({
    max: maxEntries,
    maxSize: maxTotalChars,
    sizeCalculation: (entry) => entry.chars,
  });
  return {
    get(key, now = Date.now()) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      if (entry.expiresAt <= now) {
        entries.delete(key);
        return undefined;
      }
      return entry.analysis;
    },
    set(key, analysis, now = Date.now()) {
      // A tier that could not answer (failed open, or said so with a tier-unavailable finding beside
      // others' findings) may answer the same content next time.
      if (analysis.result.failedOpen.length > 0 || analysis.result.reports.some((report) => report.outcome === 'error') || analysis.result.findings.some((finding) => finding.category === 'tier-unavailable')) return;
      let chars = key.length;
      for (const variant of analysis.normalized.variants) chars += variant.text.length;
      if (chars > maxTotalChars) return;
      entries.set(key, { analysis, expiresAt: now + ttlMs, chars });
    },
    get size() {
      return entries.size;
    },
  };
}
