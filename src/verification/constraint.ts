/**
 * Constraint layer: the org's rules over the output — maximum length, banned and required
 * phrases (case-insensitive), bounded-time regular expressions that must or must not match (run
 * on at most regexInputLimit(regex) characters, regex-safety.ts; a longer output fails a
 * must-not-match rule closed), allowed URL hosts (other links flagged), no PII or secrets (the
 * gateway's PII detectors), no system-prompt leak (detection's `llm_output` leak detector, spans
 * located here) and refusal detection. Findings name the rule, never the matched secret. Fails
 * closed.
 */
import { detectPii, type PiiType } from '../gateway/index.ts';
import { detectLeak } from '../detection/index.ts';
import { regexInputLimit } from './regex-safety.ts';
import type { ResolvedPolicy } from './policy.ts';
import type { Finding, LayerResult, VerifyInput } from './types.ts';

const SECRET_ONLY: ReadonlySet<PiiType> = new Set<PiiType>(['SECRET']);
const URL = /\bhttps?:\/\/[^\s<>"'`)\]}]+/gi;
const REFUSAL = /\b(?:I['’]?m sorry|I am sorry|I apologi[sz]e|I can(?:not|['’]t) (?:help|assist|provide|comply|do that|share)|I['’]?m (?:not able|unable) to|I am (?:not able|unable) to|I won['’]t be able to|as an AI(?: language model)?,? I)/i;

/**
 * `window` mode (streaming): only rules that a slice of the output can settle — banned phrases,
 * must-not-match, URL hosts, PII/secrets, leak runs; offsets are shifted by `offset`. The
 * whole-output rules (length, required phrases, must-match, refusal) run on the final text.
 */
export function constraintLayer(input: VerifyInput, policy: ResolvedPolicy, mode: { window: boolean; offset: number } = { window: false, offset: 0 }): LayerResult {
  const result = constraintFindings(input, policy, mode.window);
  if (mode.offset !== 0) for (const finding of result.findings) {
    finding.start += mode.offset;
    finding.end += mode.offset;
  }
  return result;
}

function constraintFindings(input: VerifyInput, policy: ResolvedPolicy, window: boolean): LayerResult {
  const rules = policy.constraint;
  const content = input.content;
  const findings: Finding[] = [];
  const end = content.length;
  if (!window && rules.max_chars !== null && end > rules.max_chars) findings.push({ start: rules.max_chars, end, reason: 'too_long', detail: `max_chars ${rules.max_chars}` });
  const needsLower = policy.compiled.bannedLower.length > 0 || policy.compiled.requiredLower.length > 0;
  const lower = needsLower ? content.toLowerCase() : '';
  const sameLength = lower.length === content.length;
  policy.compiled.bannedLower.forEach((phrase, index) => {
    for (let at = lower.indexOf(phrase); at >= 0; at = lower.indexOf(phrase, at + phrase.length)) {
      findings.push({ start: sameLength ? at : 0, end: sameLength ? at + phrase.length : end, reason: 'banned_phrase', detail: `banned_phrases[${index}]` });
    }
  });
  if (!window) policy.compiled.requiredLower.forEach((phrase, index) => {
    if (!lower.includes(phrase)) findings.push({ start: 0, end: 0, reason: 'required_phrase_missing', detail: `required_phrases[${index}]` });
  });
  if (policy.compiled.mustMatch.length > 0 || policy.compiled.mustNotMatch.length > 0) {
    const boundedFor = (regex: RegExp) => {
      const limit = regexInputLimit(regex);
      return { limit, text: content.length > limit ? content.slice(0, limit) : content };
    };
    if (!window) policy.compiled.mustMatch.forEach((regex, index) => {
      if (regex !== null && !regex.test(boundedFor(regex).text)) findings.push({ start: 0, end: 0, reason: 'must_match_failed', detail: `must_match[${index}]` });
    });
    policy.compiled.mustNotMatch.forEach((regex, index) => {
      if (regex === null) return; // inactive rule (policy.compiled.inactive)
      const bounded = boundedFor(regex);
      const match = regex.exec(bounded.text);
      if (match !== null) findings.push({ start: match.index, end: match.index + match[0].length, reason: 'must_not_match_matched', detail: `must_not_match[${index}]` });
      else if (bounded.text.length < content.length) findings.push({ start: bounded.limit, end, reason: 'too_long_for_regex_rules', detail: `must_not_match[${index}]` });
    });
  }
  if (rules.allowed_url_hosts !== null) {
    for (const match of content.matchAll(URL)) {
      const host = hostOf(match[0]);
      if (host === null || !rules.allowed_url_hosts.some((allowed) => host === allowed.toLowerCase() || host.endsWith(`.${allowed.toLowerCase()}`))) {
        findings.push({ start: match.index, end: match.index + match[0].length, reason: 'url_host_not_allowed', detail: host ?? 'unparseable' });
      }
    }
  }
  if (rules.pii !== 'off') {
    for (const span of detectPii(content, rules.pii === 'secrets' ? SECRET_ONLY : null)) {
      if (span.type === 'URL') continue; // links are judged by allowed_url_hosts
      findings.push({ start: span.start, end: span.end, reason: span.type === 'SECRET' ? 'secret_in_output' : 'pii_in_output', detail: span.type });
    }
  }
  if (rules.system_prompt_leak && input.systemPrompts !== undefined) findings.push(...systemPromptLeak(content, input.systemPrompts));
  let refusal = false;
  if (rules.detect_refusal && !window) {
    const match = REFUSAL.exec(content.length > 600 ? content.slice(0, 600) : content);
    if (match !== null) {
      refusal = true;
      if (rules.flag_refusal) findings.push({ start: match.index, end: match.index + match[0].length, reason: 'refusal' });
    }
  }
  return { verdict: findings.length > 0 ? 'fail' : 'pass', score: findings.length > 0 ? 1 : 0, findings, ms: 0, fails: 'closed', info: { refusal } };
}

function hostOf(url: string): string | null {
  try {
    return new globalThis.URL(url.replace(/[.,;:!?]+$/, '')).hostname.toLowerCase();
  } catch {
    return null;
  }
}

const LEAK_NGRAM = 5;

/**
 * System-prompt leak: the verdict is detection's leak detector (`detectLeak`, the same check the
 * response filter runs on `llm_output`, the prompts joined as there). It reports no offsets, so
 * the findings are the runs of output words whose word 5-grams occur in the prompts; when the
 * detector sees a leak but no run is found (e.g. the prompt said backwards) the finding covers
 * the whole output.
 */
export function systemPromptLeak(content: string, systemPrompts: readonly string[]): Finding[] {
  if (systemPrompts.length === 0) return [];
  const systemPrompt = systemPrompts.join('\n');
  if (!detectLeak(content, { systemPrompt }).some((finding) => finding.id === 'leak.system-prompt')) return [];
  const promptWords = [...systemPrompt.matchAll(/[\p{L}\p{N}]+/gu)].map((match) => match[0].toLowerCase());
  const grams = new Set<string>();
  for (let index = 0; index + LEAK_NGRAM <= promptWords.length; index += 1) grams.add(promptWords.slice(index, index + LEAK_NGRAM).join(' '));
  const output = [...content.matchAll(/[\p{L}\p{N}]+/gu)].map((match) => ({ text: match[0].toLowerCase(), start: match.index, end: match.index + match[0].length }));
  const covered = new Uint8Array(output.length);
  for (let index = 0; index + LEAK_NGRAM <= output.length; index += 1) {
    if (grams.has(output.slice(index, index + LEAK_NGRAM).map((word) => word.text).join(' '))) covered.fill(1, index, index + LEAK_NGRAM);
  }
  const findings: Finding[] = [];
  for (let index = 0; index < covered.length; index += 1) {
    if (!covered[index]) continue;
    let last = index;
    while (last + 1 < covered.length && covered[last + 1]) last += 1;
    findings.push({ start: output[index]!.start, end: output[last]!.end, reason: 'system_prompt_leak' });
    index = last;
  }
  if (findings.length === 0) findings.push({ start: 0, end: content.length, reason: 'system_prompt_leak' });
  return findings;
}
