/**
 * The runner: layers in order of cost (integrity → structural → constraint → grounding), each
 * timed and guarded (an exception becomes verdict `error`; whether that fails the response
 * depends on the layer's declared failure mode), then one decision: `passed`, and the strongest
 * configured action among the failed layers (block > retry > redact > annotate). A layer whose
 * failure blocks stops the run: the later, costlier layers are `skipped`.
 */
import { sha256Hex, integrityLayer } from './integrity.ts';
import { assessClaims, groundingResult, indexSources, responseShare, taskOf, type ClaimAssessment } from './grounding.ts';
import { structuralLayer } from './structural.ts';
import { constraintLayer } from './constraint.ts';
import type { GroundingModel } from './local-model.ts';
import type { ResolvedPolicy } from './policy.ts';
import { LAYER_NAMES, type Action, type Finding, type LayerName, type LayerResult, type SourceInput, type ToolInput, type Verification, type VerifyInput } from './types.ts';

/** Optional grounding tiers (see grounding.ts). Both absent by default. */
export interface GroundingTiers {
  /**
   * Tier 2: a local model (local-model.ts, VERIFICATION_GROUNDING_MODEL_DIR) scoring (claim,
   * sources) 0–1, higher = not supported; asked about the uncertain band only, each claim within
   * the model's `timeoutMs` (fails open, and says so).
   */
  localModel?: GroundingModel;
  /** Tier 3: the configured LLM judge; true = supported, false = not, null = cannot tell. */
  judge?: (claim: string, sources: readonly string[], signal: AbortSignal) => Promise<boolean | null>;
}

const ORDER: readonly LayerName[] = ['integrity', 'structural', 'constraint', 'grounding'];
const STRENGTH: Record<Action, number> = { annotate: 1, redact: 2, retry: 3, block: 4 };

function skipped(fails: 'open' | 'closed', reason?: string): LayerResult {
  return { verdict: 'skipped', score: 0, findings: [], ms: 0, fails, ...(reason === undefined ? {} : { info: { reason } }) };
}

const FAILS: Record<LayerName, 'open' | 'closed'> = { integrity: 'closed', grounding: 'open', structural: 'closed', constraint: 'closed' };

export async function runVerification(input: VerifyInput, policy: ResolvedPolicy, tiers: GroundingTiers = {}): Promise<Verification> {
  const layers = {} as Record<LayerName, LayerResult>;
  let stopped = false;
  // One clock reading per layer: a layer's end is the next one's start.
  let started = performance.now();
  for (const name of ORDER) {
    if (stopped) {
      layers[name] = skipped(FAILS[name], 'blocked_by_earlier_layer');
      continue;
    }
    let result: LayerResult;
    try {
      result = name === 'grounding' ? await grounding(input, policy, tiers) : runSync(name, input, policy);
    } catch {
      result = { verdict: 'error', score: 0, findings: [], ms: 0, fails: FAILS[name], info: { error: 'layer_failed' } };
    }
    const ended = performance.now();
    result.ms = Math.round((ended - started) * 1000) / 1000;
    started = ended;
    layers[name] = result;
    if (failed(result) && policy.actions[name] === 'block') stopped = true;
  }
  // The integrity layer hashed this same content: its hash is reused rather than computed twice.
  const hashed = layers.integrity.info?.content_sha256;
  return decide(layers, policy, input.content, typeof hashed === 'string' ? hashed : undefined);
}

function runSync(name: Exclude<LayerName, 'grounding'>, input: VerifyInput, policy: ResolvedPolicy): LayerResult {
  if (name === 'integrity') return integrityLayer(input, policy.integrity);
  return withSkippedRules(name === 'structural' ? structuralLayer(input, policy.structural) : constraintLayer(input, policy), name, policy);
}

/** Names the policy's inactive rules of this layer (skipped, never compiled) in the layer's `info.skipped_rules`. */
export function withSkippedRules(result: LayerResult, name: 'structural' | 'constraint', policy: ResolvedPolicy): LayerResult {
  if (policy.compiled.inactive.length === 0) return result;
  const skippedRules = policy.compiled.inactive.filter((rule) => rule.layer === name).map((rule) => ({ rule: rule.rule, reason: rule.inactive_reason }));
  if (skippedRules.length > 0) result.info = { ...result.info, skipped_rules: skippedRules };
  return result;
}

export function failed(result: LayerResult): boolean {
  return result.verdict === 'fail' || (result.verdict === 'error' && result.fails === 'closed');
}

/** `passed`, `action` and the content hash from the layer results (`contentSha256`: the delivered content's, when already known). */
export function decide(layers: Record<LayerName, LayerResult>, policy: ResolvedPolicy, deliveredContent: string, contentSha256?: string): Verification {
  let action: Verification['action'] = 'none';
  for (const name of LAYER_NAMES) {
    if (!failed(layers[name])) continue;
    const configured = policy.actions[name];
    if (action === 'none' || STRENGTH[configured] > STRENGTH[action]) action = configured;
  }
  const ordered = {} as Record<LayerName, LayerResult>;
  for (const name of LAYER_NAMES) ordered[name] = layers[name];
  return { passed: action === 'none', action, layers: ordered, content_sha256: contentSha256 ?? sha256Hex(deliveredContent) };
}

async function grounding(input: VerifyInput, policy: ResolvedPolicy, tiers: GroundingTiers): Promise<LayerResult> {
  if (input.sources === undefined || input.sources.length === 0) return skipped('open', 'no_sources');
  const index = indexSources(input.sources, input.question ?? null);
  const claims = assessClaims(input.content, index);
  const task = taskOf(index, input.question);
  const info: Record<string, unknown> = { tiers: ['lexical'], claims: claims.length, task };
  const [low, high] = policy.grounding.judge.band;
  const inBand = (claim: ClaimAssessment) => claim.score >= low && claim.score < high;
  const sourceTexts = input.sources.map((source) => (typeof source === 'string' ? source : source.content));
  if (tiers.localModel !== undefined) {
    const uncertain = claims.filter(inBand);
    if (uncertain.length > 0) {
      (info.tiers as string[]).push('local_model');
      info.local_model = await modelClaims(uncertain, sourceTexts, tiers.localModel, policy.grounding.threshold);
    }
  }
  // The judge sees what is still uncertain after the local model (all of the band without one).
  const uncertain = claims.filter(inBand);
  if (policy.grounding.judge.enabled && tiers.judge !== undefined && uncertain.length > 0) {
    (info.tiers as string[]).push('llm_judge');
    info.judge = await judgeClaims(uncertain, sourceTexts, tiers.judge, policy.grounding.judge.timeout_ms, policy.grounding.threshold);
  }
  // The per-task calibration is of the lexical tier: once a model or the judge rescored claims, their probabilities decide.
  const lexicalOnly = (info.tiers as string[]).length === 1;
  return groundingResult(claims, responseShare(input.content, index), policy.grounding.threshold, info, lexicalOnly ? task : undefined);
}

/**
 * Asks the local model about the uncertain claims, one at a time, each within the model's
 * budget. Its probability replaces the tier-1 score of the claim (the band is where tier 1
 * cannot tell); a claim it puts at or above the threshold without a tier-1 finding gets
 * `model_not_entailed`. A claim past its budget, or whose scoring failed, keeps its tier-1 score
 * (fails open), and after a timeout the remaining claims are not asked (the runtime is still busy
 * with the abandoned one); `outcome` and the counts say so.
 */
async function modelClaims(claims: ClaimAssessment[], sources: readonly string[], model: GroundingModel, threshold: number) {
  const report = { model: model.id, outcome: 'answered' as 'answered' | 'timed_out' | 'failed', claims: claims.length, scored: 0, timed_out: 0, failed: 0, not_asked: 0, budget_ms: model.timeoutMs };
  for (const [position, claim] of claims.entries()) {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), model.timeoutMs);
    });
    try {
      const probability = await Promise.race([model.score(claim.text, sources, controller.signal), timeout]);
      if (probability === 'timeout') {
        controller.abort();
        report.timed_out += 1;
        report.not_asked = claims.length - position - 1;
        report.outcome = 'timed_out';
        break;
      }
      if (!Number.isFinite(probability)) throw new Error('model score is not a number');
      claim.score = Math.round(Math.min(1, Math.max(0, probability)) * 1000) / 1000;
      if (claim.score >= threshold && claim.findings.length === 0) claim.findings = [{ start: claim.start, end: claim.end, reason: 'model_not_entailed', detail: `p=${claim.score}` }];
      report.scored += 1;
    } catch {
      report.failed += 1;
      if (report.outcome === 'answered') report.outcome = 'failed';
    } finally {
      clearTimeout(timer);
    }
  }
  return report;
}

/** Asks the judge about the uncertain claims; on timeout or error keeps tier-1 scores (fails open) and says so. */
async function judgeClaims(claims: ClaimAssessment[], sources: readonly string[], judge: NonNullable<GroundingTiers['judge']>, timeoutMs: number, threshold: number): Promise<{ outcome: 'answered' | 'timed_out' | 'failed'; claims: number }> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    const answers = await Promise.race([Promise.all(claims.map((claim) => judge(claim.text, sources, controller.signal))), timeout]);
    if (answers === 'timeout') {
      controller.abort();
      return { outcome: 'timed_out', claims: claims.length };
    }
    answers.forEach((supported, index) => {
      const claim = claims[index]!;
      if (supported === true) {
        claim.score = 0;
        claim.findings = [];
      } else if (supported === false) {
        claim.score = Math.max(claim.score, threshold);
        if (claim.findings.length === 0) claim.findings = [{ start: claim.start, end: claim.end, reason: 'judge_unsupported' }];
      }
    });
    return { outcome: 'answered', claims: claims.length };
  } catch {
    return { outcome: 'failed', claims: claims.length };
  } finally {
    clearTimeout(timer);
  }
}

// --------------------------------------------------------------------------- redaction

export const REDACTION = '[redacted]';

/**
 * The content with the spans of redact-action layers replaced: invisible/control characters are
 * removed, other spans become `[redacted]`; zero-width findings (a missing phrase, a cut) have
 * nothing to replace.
 */
export function redactContent(content: string, verification: Verification, policy: ResolvedPolicy): string {
  const spans: Finding[] = [];
  for (const name of LAYER_NAMES) {
    if (policy.actions[name] !== 'redact' || !failed(verification.layers[name])) continue;
    for (const finding of verification.layers[name].findings) if (finding.end > finding.start) spans.push(finding);
  }
  if (spans.length === 0) return content;
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  let output = '';
  let cursor = 0;
  for (const span of spans) {
    if (span.end <= cursor) continue;
    const start = Math.max(span.start, cursor);
    output += content.slice(cursor, start);
    output += REMOVE.has(span.reason) ? '' : REDACTION;
    cursor = span.end;
  }
  return output + content.slice(cursor);
}

const REMOVE = new Set(['invisible_characters', 'bidi_control', 'unicode_tag_characters', 'control_character', 'replacement_character', 'invalid_encoding']);

// --------------------------------------------------------------------------- requests

/** The parts of a completion request the layers read. */
export interface RequestView {
  messages: ReadonlyArray<{ role: string; content: string }>;
  sources?: readonly SourceInput[];
  tools?: readonly ToolInput[];
  response_schema?: Record<string, unknown>;
  response_format?: { type?: string; json_schema?: { schema?: Record<string, unknown> } };
}

export function inputOf(request: RequestView, response: { content: string; finish_reason: string | null; tool_calls?: VerifyInput['toolCalls']; cut?: boolean }): VerifyInput {
  const input: VerifyInput = { content: response.content, finishReason: response.finish_reason };
  if (response.cut === true) input.cut = true;
  if (response.tool_calls !== undefined) input.toolCalls = response.tool_calls;
  if (request.sources !== undefined && request.sources.length > 0) input.sources = request.sources;
  if (request.tools !== undefined) input.tools = request.tools;
  let systemPrompts: string[] | undefined;
  let question: string | null = null;
  for (const message of request.messages) {
    if (message.role === 'system') (systemPrompts ??= []).push(message.content);
    else if (message.role === 'user') question = message.content;
  }
  if (systemPrompts !== undefined) input.systemPrompts = systemPrompts;
  input.question = question;
  const format = request.response_format;
  const schema = request.response_schema ?? format?.json_schema?.schema;
  if (schema !== undefined) input.schema = schema;
  if (format?.type === 'json_object' || format?.type === 'json_schema') input.expectJson = true;
  return input;
}

/** Verifies a non-streamed envelope in place of the gateway's `verification: null` (bench and service). */
export async function verifyEnvelope<T extends { content: string; finish_reason: string; verification: unknown; tool_calls?: VerifyInput['toolCalls'] }>(
  envelope: T,
  request: RequestView,
  policy: ResolvedPolicy,
  tiers: GroundingTiers = {},
): Promise<{ envelope: T; verification: Verification }> {
  const verification = await runVerification(inputOf(request, envelope), policy, tiers);
  if (verification.action === 'redact') {
    envelope.content = redactContent(envelope.content, verification, policy);
    verification.content_sha256 = sha256Hex(envelope.content);
  }
  envelope.verification = verification;
  return { envelope, verification };
}
