/**
 * Grounding layer: does the response say only what the sources support?
 *
 * Tier 1 (always, when sources are given; pure, ~0.1–2 ms): the response is split into claims
 * (sentences, list items); each claim is aligned to the source sentence that shares most of its
 * content words, and scored from four signals — numbers (and clock times) the sources do not
 * hold, capitalized names the sources never mention, a negation that disagrees with the aligned
 * source sentence, and the share of content words with no support anywhere in the sources (or
 * the question). Tier 2 (a local model) and tier 3 (the configured LLM judge, for claims in the
 * uncertain band only, with a timeout that fails open) are optional hooks run by verify.ts; by
 * default only tier 1 runs — no model is loaded and nothing leaves the process.
 *
 * Fails open: grounding is advisory evidence; an internal error yields verdict `error` and does
 * not turn `passed` false.
 */
import { clockTimes, contentTokens, stemOf, US_STATES, allWords, NEGATIONS, numberMentions, numberSupported, splitClaims, type Span, type Token } from './text.ts';
import type { Finding, LayerResult, SourceInput, VerifyInput } from './types.ts';

export interface GroundingPolicy {
  /** Claim score at or above which a claim is flagged (0–1). */
  threshold: number;
}

export const DEFAULT_GROUNDING: GroundingPolicy = { threshold: 0.5 };

interface SourceSentence {
  stems: Set<string>;
  negated: boolean;
}

export interface SourceIndex {
  stems: Set<string>;
  numbers: Set<number>;
  numberList: number[];
  times: Set<number>;
  sentences: SourceSentence[];
  /** Stems → sentence indexes (alignment without scanning every sentence). */
  postings: Map<string, number[]>;
}

export function sourceText(source: SourceInput): string {
  if (typeof source === 'string') return source;
  return [source.title, source.content].filter((part): part is string => typeof part === 'string').join('\n');
}

/** Indexes sources (and the question: what it asks is not a fabrication). */
export function indexSources(sources: readonly SourceInput[], question: string | null = null): SourceIndex {
  const index: SourceIndex = { stems: new Set(), numbers: new Set(), numberList: [], times: new Set(), sentences: [], postings: new Map() };
  const texts = sources.map(sourceText);
  if (question) texts.push(question);
  for (const text of texts) {
    const times = clockTimes(text);
    for (const time of times) index.times.add(time.value);
    for (const number of numberMentions(text, times)) index.numbers.add(number.value);
    // Time parts count as numbers too ("open 9 to 5" against "9:0-17:0").
    for (const time of times) {
      index.numbers.add(Math.floor(time.value / 60));
      index.numbers.add(Math.floor(time.value / 60) % 12 || 12);
    }
    // State abbreviations stand for their names ("CA" → california) and back.
    for (const match of text.matchAll(/\b[A-Z]{2}\b/g)) {
      const name = US_STATES[match[0]];
      if (name !== undefined) for (const word of name.split(' ')) index.stems.add(stemOf(word));
    }
    for (const [code, name] of Object.entries(US_STATES)) if (text.toLowerCase().includes(name)) index.stems.add(code.toLowerCase());
    for (const sentence of splitClaims(text)) {
      const stems = new Set(contentTokens(sentence.text).map((token) => token.stem));
      const id = index.sentences.length;
      index.sentences.push({ stems, negated: isNegated(sentence.text) });
      for (const stem of stems) {
        index.stems.add(stem);
        const list = index.postings.get(stem);
        if (list === undefined) index.postings.set(stem, [id]);
        else if (list[list.length - 1] !== id) list.push(id);
      }
    }
  }
  index.numberList = [...index.numbers];
  return index;
}

function isNegated(text: string): boolean {
  let count = 0;
  for (const word of allWords(text)) if (NEGATIONS.has(word)) count += 1;
  return count % 2 === 1;
}

export interface ClaimAssessment extends Span {
  score: number;
  /** Unsupported share of the claim's content words. */
  unsupportedShare: number;
  findings: Finding[];
}

const P_NUMBER = 0.65;
const P_TIME = 0.6;
const P_NAME = 0.4;
const P_NEGATION = 0.5;

/** Scores every claim of the content against the index (pure). */
export function assessClaims(content: string, index: SourceIndex): ClaimAssessment[] {
  const claims: ClaimAssessment[] = [];
  for (const claim of splitClaims(content)) {
    const findings: Finding[] = [];
    let keep = 1;
    const tokens = contentTokens(claim.text, claim.start);
    const unsupported: Token[] = tokens.filter((token) => !index.stems.has(token.stem));
    const times = clockTimes(claim.text);
    for (const time of times) {
      if (!index.times.has(time.value)) {
        findings.push({ start: claim.start + time.start, end: claim.start + time.end, reason: 'time_not_in_sources', detail: time.raw });
        keep *= 1 - P_TIME;
      }
    }
    for (const number of numberMentions(claim.text, times)) {
      if (!numberSupported(number.value, index.numbers, index.numberList)) {
        findings.push({ start: claim.start + number.start, end: claim.start + number.end, reason: 'number_not_in_sources', detail: number.raw });
        keep *= 1 - P_NUMBER;
      }
    }
    for (const token of unsupported) {
      if (token.capitalized) {
        findings.push({ start: token.start, end: token.end, reason: 'name_not_in_sources', detail: token.raw });
        keep *= 1 - P_NAME;
      }
    }
    // Negation: the best-aligned source sentence says the opposite.
    const aligned = align(tokens, index);
    if (aligned !== null && aligned.overlap >= 0.8 && tokens.length >= 3 && aligned.sentence.negated !== isNegated(claim.text)) {
      findings.push({ start: claim.start, end: claim.end, reason: 'negation_disagrees_with_source' });
      keep *= 1 - P_NEGATION;
    }
    const share = tokens.length === 0 ? 0 : unsupported.length / tokens.length;
    // Content words with no support: weight grows with the share and the count.
    const words = Math.min(1, share * 1.1) * Math.min(1, unsupported.length / 3);
    if (words >= 0.25) {
      const first = unsupported[0]!;
      const last = unsupported[unsupported.length - 1]!;
      findings.push({ start: first.start, end: last.end, reason: 'content_not_in_sources', detail: unsupported.slice(0, 6).map((token) => token.raw).join(' ') });
    }
    keep *= 1 - words * 0.8;
    claims.push({ ...claim, score: round(1 - keep), unsupportedShare: share, findings });
  }
  return claims;
}

function align(tokens: readonly Token[], index: SourceIndex): { sentence: SourceSentence; overlap: number } | null {
  if (tokens.length === 0) return null;
  const counts = new Map<number, number>();
  for (const token of new Set(tokens.map((item) => item.stem))) {
    for (const id of index.postings.get(token) ?? []) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  let best = -1;
  let bestCount = 0;
  for (const [id, count] of counts) if (count > bestCount) [best, bestCount] = [id, count];
  if (best < 0) return null;
  return { sentence: index.sentences[best]!, overlap: bestCount / new Set(tokens.map((item) => item.stem)).size };
}

/** The grounding layer over its input (tier 1 only; verify.ts adds the optional tiers). */
export function groundingLayer(input: VerifyInput, policy: GroundingPolicy): LayerResult {
  if (input.sources === undefined || input.sources.length === 0) return { verdict: 'skipped', score: 0, findings: [], ms: 0, fails: 'open' };
  const index = indexSources(input.sources, input.question ?? null);
  const claims = assessClaims(input.content, index);
  return groundingResult(claims, responseShare(input.content, index), policy.threshold, { tiers: ['lexical'], claims: claims.length });
}

/** Share of the response's content words with no support anywhere in the sources. */
export function responseShare(content: string, index: SourceIndex): number {
  const tokens = contentTokens(content);
  if (tokens.length === 0) return 0;
  let missing = 0;
  for (const token of tokens) if (!index.stems.has(token.stem)) missing += 1;
  return missing / tokens.length;
}

/**
 * The layer result: score = 1 − (1 − worst claim) × (1 − unsupported share of the whole
 * response); claims at or above the threshold contribute their findings.
 */
export function groundingResult(claims: readonly ClaimAssessment[], share: number, threshold: number, info: Record<string, unknown>): LayerResult {
  let worst = 0;
  const findings: Finding[] = [];
  for (const claim of claims) {
    worst = Math.max(worst, claim.score);
    if (claim.score >= threshold) findings.push(...(claim.findings.length > 0 ? claim.findings : [{ start: claim.start, end: claim.end, reason: 'claim_not_supported' }]));
  }
  const score = round(1 - (1 - worst) * (1 - share));
  if (findings.length === 0 && score >= threshold) {
    // Diffuse: no single claim crosses the line but the response as a whole is unsupported.
    const top = claims.reduce<ClaimAssessment | null>((best, claim) => (best === null || claim.score > best.score ? claim : best), null);
    if (top !== null) findings.push({ start: top.start, end: top.end, reason: 'response_mostly_unsupported' });
  }
  return { verdict: score >= threshold ? 'fail' : 'pass', score, findings, ms: 0, fails: 'open', info };
}

/** The lexical-overlap baseline the benchmark compares with: share of response words absent from the sources. */
export function lexicalOverlapScore(content: string, sources: readonly SourceInput[]): number {
  const known = new Set<string>();
  for (const source of sources) for (const word of sourceText(source).toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) known.add(word);
  const words = content.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  if (words.length === 0) return 0;
  let missing = 0;
  for (const word of words) if (!known.has(word)) missing += 1;
  return missing / words.length;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
