/**
 * T3 signal part: evasion evidence as a score contribution. Pure. Obfuscation is not an attack
 * by itself (base64 in an API body is normal), so each signal is weak unless it is the kind
 * of obfuscation only attackers use (Unicode tag characters) or it hid a T1 match.
 */
import type { Normalized } from '../normalize/index.ts';
import { noisyOr } from '../score.ts';
import type { Finding, InspectKind } from '../types.ts';

export interface SignalResult {
  readonly score: number;
  readonly findings: readonly Finding[];
}

const GIBBERISH_TOKEN = /[a-z][^a-z0-9\s'’.,!?:;"-][a-z]|[{}[\]|\\^~]{1}[a-z]{0,20}[{}[\]|\\^~]/i;

/** Share of whitespace-separated tokens that look like adversarial-suffix noise (GCG-style). */
export function gibberishRatio(text: string): { ratio: number; tokens: number } {
  const tokens = text.slice(0, 4096).split(/\s+/).filter((token) => token.length > 0);
  if (tokens.length < 8) return { ratio: 0, tokens: tokens.length };
  let odd = 0;
  for (const token of tokens) if (GIBBERISH_TOKEN.test(token)) odd++;
  return { ratio: odd / tokens.length, tokens: tokens.length };
}

function signal(id: string, name: string, confidence: number): Finding {
  return { id: `signal.${id}`, name, category: 'evasion', confidence, tier: 't3' };
}

export function evasionSignals(kind: InspectKind, normalized: Normalized, t1Findings: readonly Finding[]): SignalResult {
  const s = normalized.signals;
  const findings: Finding[] = [];
  const natural = kind !== 'http';
  if (s.tagCharacters > 0) findings.push(signal('tag-characters', 'Hidden text in Unicode tag characters', 0.6));
  if (natural && s.bidi > 0) findings.push(signal('bidi-controls', 'Bidirectional control characters', 0.2));
  if (s.zeroWidth >= 3) findings.push(signal('zero-width', 'Zero-width characters inside text', natural ? 0.2 : 0.3));
  if (natural && s.mixedScriptWords > 0) findings.push(signal('homoglyphs', 'Words mixing Latin and lookalike letters', 0.3));
  // On HTTP one layer of URL/HTML encoding is the transport's, not obfuscation.
  const ordinary = natural ? new Set(['canonical', 'unwrapped']) : new Set(['canonical', 'decoded:url', 'decoded:html', 'decoded:url+html', 'canonical+sql-uncommented']);
  const hidden = t1Findings.filter((finding) => finding.variant !== undefined && !ordinary.has(finding.variant));
  if (hidden.length > 0) findings.push(signal('obfuscated-match', 'Pattern visible only after decoding or de-obfuscation', 0.3));
  if (s.decodeLayers >= 2) findings.push(signal('nested-encoding', 'Nested encoding layers', natural ? 0.2 : 0.3));
  if (natural && s.decodeKinds.includes('base64')) findings.push(signal('base64', 'Base64 payload in natural-language input', 0.15));
  if (natural && s.splitRuns > 0) findings.push(signal('char-split', 'Character-split words', 0.15));
  if (natural && s.entropy.highEntropyTokens > 0 && s.entropy.maxToken > 4.8) findings.push(signal('entropy', 'High-entropy token in natural-language input', 0.1));
  if (natural) {
    const canonical = normalized.variants[0]?.text ?? '';
    const gibberish = gibberishRatio(canonical);
    if (gibberish.ratio >= 0.25) findings.push(signal('adversarial-suffix', 'Token noise typical of adversarial suffixes', 0.35));
  }
  return { score: noisyOr(findings.map((finding) => finding.confidence)), findings };
}
