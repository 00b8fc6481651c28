/**
 * T3 signal part: evasion evidence as a score contribution. Pure. Obfuscation is not an attack
 * by itself (base64 in an API body is normal), so each signal is weak unless it is the kind
 * of obfuscation only attackers use (Unicode tag characters) or it hid a T1 match.
 */
import { adversarialSuffix, isWhitespace, suffixProfile } from '../ml/gibberish.ts';
import { codeProse } from '../code-prose.ts';
import type { Normalized } from '../normalize/index.ts';
import { noisyOr } from '../score.ts';
import type { Finding, InspectKind } from '../types.ts';

export interface SignalResult {
  readonly score: number;
  readonly findings: readonly Finding[];
}

/**
 * Longest run of tokens repeating a cycle of at most MAX_FLOOD_PERIOD whitespace-separated tokens
 * (context flooding: "ö ö ö …", ") ] } ) ] } …"); a long token made of one repeated chunk
 * ("abcabcabc…", at least 10 repetitions) counts as that many tokens.
 */
export function longestTokenRun(text: string): number {
  // Each token as offsets into the text (no string per token), with its FNV-1a hash to compare
  // tokens quickly; a table rule or number stands for the unique `\u0000${index}` it replaced.
  let count = 0;
  let best = 0;
  // Runs of non-whitespace, as /\S+/g finds them.
  for (let index = 0; index < text.length; ) {
    if (isWhitespace(text.charCodeAt(index))) {
      index += 1;
      continue;
    }
    const start = index;
    let hash = 0x811c9dc5;
    let tableOrNumber = true;
    while (index < text.length) {
      const code = text.charCodeAt(index);
      if (isWhitespace(code)) break;
      hash = Math.imul(hash ^ code, 0x01000193);
      if (tableOrNumber && !isTableOrNumberCode(code)) tableOrNumber = false;
      index += 1;
    }
    if (count === tokens.starts.length) growTokens();
    tokens.starts[count] = start;
    tokens.ends[count] = index;
    tokens.hashes[count] = hash;
    // Numbers and table rules ("0 0 0", "| --- |") repeat in data; they break a run instead.
    tokens.table[count] = tableOrNumber ? 1 : 0;
    count += 1;
    if (index - start >= 40 && !tableOrNumber) best = Math.max(best, repeatedChunks(text, start, index));
    else best = Math.max(best, 1);
  }
  for (let period = 1; period <= MAX_FLOOD_PERIOD; period += 1) {
    let run = 0;
    for (let index = period; index < count; index += 1) {
      run = sameToken(text, index, index - period) ? run + 1 : 0;
      if (run + period > best) best = run + period;
    }
  }
  return best;
}

const MAX_FLOOD_PERIOD = 4;

/** Token offsets, hashes and table flags, reused from one call to the next. */
const tokens = { starts: new Int32Array(512), ends: new Int32Array(512), hashes: new Int32Array(512), table: new Uint8Array(512) };

function growTokens(): void {
  const size = tokens.starts.length * 2;
  const grow = <T extends Int32Array | Uint8Array>(old: T, into: T): T => {
    into.set(old);
    return into;
  };
  tokens.starts = grow(tokens.starts, new Int32Array(size));
  tokens.ends = grow(tokens.ends, new Int32Array(size));
  tokens.hashes = grow(tokens.hashes, new Int32Array(size));
  tokens.table = grow(tokens.table, new Uint8Array(size));
}

/** The characters of /^[\d.,;:|+\-=*#~_]+$/. */
function isTableOrNumberCode(code: number): boolean {
  return (code >= 48 && code <= 57) || code === 46 || code === 44 || code === 59 || code === 58 || code === 124 || code === 43 || code === 45 || code === 61 || code === 42 || code === 35 || code === 126 || code === 95;
}

/** Whether token `a` equals token `b` as the strings the run compares (a table rule or number is `\u0000${its index}`). */
function sameToken(text: string, a: number, b: number): boolean {
  const tableA = tokens.table[a] === 1;
  const tableB = tokens.table[b] === 1;
  if (tableA && tableB) return false;
  if (tableA || tableB) {
    const [table, other] = tableA ? [a, b] : [b, a];
    const stand = `\u0000${table}`;
    const start = tokens.starts[other]!;
    return tokens.ends[other]! - start === stand.length && text.startsWith(stand, start);
  }
  if (tokens.hashes[a] !== tokens.hashes[b]) return false;
  const startA = tokens.starts[a]!;
  const startB = tokens.starts[b]!;
  const length = tokens.ends[a]! - startA;
  if (tokens.ends[b]! - startB !== length) return false;
  for (let offset = 0; offset < length; offset += 1) if (text.charCodeAt(startA + offset) !== text.charCodeAt(startB + offset)) return false;
  return true;
}

/** How many times text[start, end) (40 units or more, not a table rule or number) repeats its shortest leading chunk (1 when it does not). */
function repeatedChunks(text: string, start: number, end: number): number {
  const length = end - start;
  for (let period = 1; period <= 20; period += 1) {
    let index = start + period;
    while (index < end && text.charCodeAt(index) === text.charCodeAt(index - period)) index += 1;
    if (index === end) return Math.floor(length / period);
  }
  return 1;
}

/** A run this long is context flooding; no benign prompt or tool description in the corpora has 30. */
export const FLOOD_RUN = 40;

const STRENGTH = { none: 0, weak: 1, strong: 2 } as const;

/**
 * The adversarial-suffix evidence of a text. Source code is read twice, as written and by its prose
 * (comments, strings, lines that are not code; code-prose.ts), and the weaker reading counts: the
 * noise of identifiers and brackets cut off mid-block is in the code, that of a regular expression
 * or a path is in its strings, and an optimiser's suffix is in both — appended to the code as a
 * line of its own or written in a comment at its end.
 */
export function suffixStrength(text: string): 'strong' | 'weak' | 'none' {
  const whole = adversarialSuffix(suffixProfile(text));
  if (whole === 'none') return whole;
  const prose = codeProse(text)?.prose;
  if (prose === undefined) return whole;
  const read = adversarialSuffix(suffixProfile(prose));
  return STRENGTH[read] < STRENGTH[whole] ? read : whole;
}

function signal(id: string, name: string, confidence: number): Finding {
  return { id: `signal.${id}`, name, category: 'evasion', confidence, tier: 't3' };
}

/**
 * `raw` is the inspected text before normalization (case preserved: mid-word capitals are part of
 * the adversarial-suffix evidence); without it the canonical variant is used.
 */
export function evasionSignals(kind: InspectKind, normalized: Normalized, t1Findings: readonly Finding[], raw?: string): SignalResult {
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
    // Optimisation-attack suffixes (GCG and the like): token noise with unbalanced brackets at the
    // end of a prompt. Strong enough to challenge on its own for prompts; tool output (truncated
    // JSON or code) can end that way legitimately, so there it stays a weak signal.
    // In source code the tail read is that of its prose (comments, strings, lines that are not
    // code; code-prose.ts): identifiers and brackets cut off mid-block are not an optimiser's
    // noise, and a suffix appended to code as a line of its own, or written in a comment, is read.
    const text = raw ?? normalized.variants[0]?.text ?? '';
    const suffix = suffixStrength(text);
    if (longestTokenRun(raw ?? normalized.variants[0]?.text ?? '') >= FLOOD_RUN) findings.push(signal('token-flood', 'Repeated tokens flooding the context', kind === 'prompt' ? 0.55 : 0.3));
    if (suffix === 'strong') findings.push(signal('adversarial-suffix', 'Token noise typical of adversarial suffixes', kind === 'prompt' ? 0.65 : 0.35));
    else if (suffix === 'weak') findings.push(signal('adversarial-suffix', 'Token noise typical of adversarial suffixes', 0.35));
  }
  return { score: noisyOr(findings.map((finding) => finding.confidence)), findings };
}
