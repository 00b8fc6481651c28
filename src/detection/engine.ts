/**
 * The detection engine: normalization → cascade (pure tiers) → fragments and session
 * escalation (cache) → response policy (per-org thresholds) → Threat decision, plus the
 * asynchronous threat_events record. Posture: never forwards anything; fails safe per tier
 * (see pipeline.ts); the only awaited I/O on the request path is the cache (session counter,
 * fragments) and a per-replica-cached threshold read.
 */
import type { Cache } from '../platform/cache.ts';
import type { Database } from '../platform/db/index.ts';
import type { Logger } from '../platform/logger.ts';
import type { Metrics } from '../platform/metrics.ts';
import { analysisKey, createAnalysisCache, type Analysis, type AnalysisCache } from './analysis-cache.ts';
import { compileCatalogue, type CatalogueEntry, type CompiledCatalogue } from './catalogue/index.ts';
import { createEventWriter, type EventWriter, type ThreatEventRow } from './events.ts';
import type { Outbox } from '../platform/outbox.ts';
import { explain } from './explain.ts';
import { conversationReferenceCount } from './extraction.ts';
import { BAND_ADDRESS_WEIGHT, bandConversationScore, bandRecitalScore, bandTaskProbability, bandTaskScore, gradedThreatScore, loadGradedWeights, readsTaskEvidence, type GradedWeights } from './graded-score.ts';
import { hasFewerWords, proseOf } from './ml/t3.ts';
import { readsAsEnglish, readsAsOtherLanguage } from './ml/semantic-head.ts';
import { httpScanText } from './http-text.ts';
import { taskEvidence } from './indirect.ts';
import { DEFAULT_SCAN_MAX, scanBeyondFirstWindow } from './long-body.ts';
import { MAX_SCAN_LENGTH, normalize } from './normalize/index.ts';
import { createPipeline, DEFAULT_PIPELINE_POLICY, type Pipeline, type PipelinePolicy, type TierDefinition } from './pipeline.ts';
import { decide, escalate, escalationTier, HIJACKING_CATEGORIES, isAllowed, THREAT_SIGNAL_FLOOR } from './policy.ts';
import { combineFindings, noisyOr, round } from './score.ts';
import { createSessionStore, type SessionStore } from './session.ts';
import { createThresholdStore, type ThresholdStore } from './thresholds.ts';
import { runT1, scanVariants } from './tiers/t1.ts';
import { evasionSignals, type SignalResult } from './tiers/t3-signals.ts';
import { adjustForKind, documentationOnly, kindFindings, kindAnalysisContext, kindText } from './kind-detectors.ts';
import { codeProse } from './code-prose.ts';
import { assistantAddressCount, instructionRecitalStrength, isAssistantAddressHint } from './recital.ts';
import type { Finding, HttpRequestShape, InspectKind, ThreatDecision, TierName, ToolDefinitionShape, Verdict } from './types.ts';

/** T2 as the ML capability provides it (structural, so tests can pass a fake). */
export interface T2Like {
  score(text: string): Promise<{ score: number; nearestId: string; nearestCategory: string; embedding?: Float32Array }>;
}
export interface T3ClassifierLike {
  readonly id: string;
  classify(text: string, embedding?: Float32Array): { attackProbability: number };
}
export interface T4Like {
  classify(text: string): Promise<{ outcome: 'attack' | 'benign' | 'timeout' | 'error'; confidence: number; category?: string }>;
}
/** The semantic tier (ml/semantic.ts) as the engine uses it: a probability per text, off the event loop. */
export interface SemanticLike {
  readonly thresholds: { readonly strong: number; readonly weak: number; readonly benign: number };
  score(text: string, kind: 'prompt' | 'tool_output' | 'llm_output'): Promise<
    { readonly status: 'scored'; readonly probability: number; readonly windows: number; readonly window: string } | { readonly status: 'skipped' | 'saturated' | 'timeout' | 'error'; readonly detail: string }
  >;
}
/** The local model tier (ml/model-tier.ts) as the engine uses it: an operator's ONNX classifier, off the event loop. */
export interface ModelLike {
  readonly id: string;
  /** Attack probability at or above which the model's reading is a finding. */
  readonly threshold: number;
  /** Inspect kinds the model reads. */
  readonly kinds: ReadonlySet<string>;
  score(text: string, kind: string): Promise<
    { readonly status: 'scored'; readonly probability: number; readonly label: string; readonly windows: number } | { readonly status: 'skipped' | 'saturated' | 'timeout' | 'error'; readonly detail: string }
  >;
}
/** T5: behavioural baselines, given the request metadata; returns a 0..1 anomaly score. */
export type BehaviourTier = (request: InspectRequest) => Promise<{ score: number; findings: readonly Finding[] }>;

export interface DetectionDeps {
  readonly cache?: Cache;
  readonly db?: Database;
  readonly logger?: Logger;
  /** Where threat events go while the database is unavailable. */
  readonly outbox?: Outbox;
  readonly metrics?: Pick<Metrics, 'threats' | 'threatScore' | 'sessionEscalations'>;
  readonly t2?: T2Like;
  /** The semantic tier (runs as T2 when no similarity T2 is given; issue #32). */
  readonly semantic?: SemanticLike;
  readonly t3Classifier?: T3ClassifierLike;
  /** The local model tier (DETECTION_MODEL_DIR; runs inside T3 beside the built-in classifier). */
  readonly model?: ModelLike;
  readonly t4?: T4Like;
  readonly t5?: BehaviourTier;
  readonly policy?: Partial<Omit<PipelinePolicy, 'thresholds'>>;
  /** Per-org thresholds from elsewhere than the database (a sensor holds the collector's); default: detection_thresholds. */
  readonly thresholds?: ThresholdStore;
  /** Longest scan text scanned at all, of any kind (the first 64 KiB go through every tier, the rest through T1 in windows); default 256 KiB. */
  readonly scanMax?: number;
  /** false: analyse every request afresh (benchmarks of the tiers themselves). Default: cache repeated content. */
  readonly analysisCache?: boolean;
  /**
   * Classifier probability at or above which a classifier-only finding may pass Alert on its own
   * (default CLASSIFIER_CONFIDENT); set by the holdout sweep (scripts/train-t3.ts), not in service.
   */
  readonly classifierConfident?: number;
  /**
   * Fewest words for an unconfident classifier-only finding to count (default CLASSIFIER_MIN_WORDS);
   * 0 turns the rule off. For the holdout sweep.
   */
  readonly classifierMinWords?: number;
  /**
   * The findings-per-month quota (accounts): whether a finding of this decision is stored. Blocks
   * and challenges always are; log- and alert-band findings are not once the org's month is used up.
   */
  readonly findingsQuota?: { admit(orgId: string, decision: string): boolean };
  /** Called with the tier label when a session factor > 1 applies (if metrics are absent). */
  readonly onEscalation?: (tier: string) => void;
  /**
   * The graded threat score below the log threshold (graded-score.ts): the shipped fit by
   * default, another fit, or false for the decision score alone (what the fit is fitted on).
   */
  readonly gradedScore?: GradedWeights | false;
}

export interface InspectRequest {
  readonly kind: InspectKind;
  /** Text for prompt/tool_output; for http, a raw parameter value or request text. */
  readonly content?: string;
  readonly request?: HttpRequestShape;
  /** `tool_definition`: the tool as `tools/list` returns it (its model-visible text is scanned). */
  readonly tool?: ToolDefinitionShape;
  /** `llm_output`: the request's system prompt (or its system messages), to detect it leaking. */
  readonly systemPrompt?: string;
  readonly messages?: readonly { readonly role: string; readonly content: string }[];
  /** `llm_output`: configured secrets/canaries that must never appear in output (never logged). */
  readonly secrets?: readonly string[];
  readonly sessionId?: string;
  readonly orgId?: string;
  readonly requestId?: string;
  readonly pillar?: string;
  readonly gatewayId?: string;
  readonly sourceIp?: string;
  /** Write a threat_events row for decisions >= log (default true when orgId and a db are present). */
  readonly record?: boolean;
  /** Longest text scanned at all for this request (the engine's `scanMax` otherwise); the MCP proxy scans whole tool results. */
  readonly scanMax?: number;
  /**
   * false: the session's request count does not multiply this request's score (default true).
   * For text the caller did not write, such as an MCP tool result: an agent makes many calls per
   * session, and a server's answers do not make the session more suspect by their number.
   */
  readonly escalate?: boolean;
}

export interface DetectionEngine {
  inspect(request: InspectRequest): Promise<ThreatDecision>;
  readonly thresholds: ThresholdStore;
  readonly tiers: readonly TierName[];
  /** The pattern catalogue in use (a pattern pack may replace it: replaceCatalogue). */
  readonly catalogue: CompiledCatalogue;
  /**
   * Swaps the pattern catalogue while the engine runs (a routine or critical pattern pack). The
   * entries are compiled first: an invalid one throws and the current catalogue stays. Analyses
   * cached under the previous catalogue are no longer used.
   */
  replaceCatalogue(entries: readonly CatalogueEntry[]): void;
  /**
   * Records a threat_events row decided elsewhere (a network sensor's finding, through the
   * collector) with the same writer, journal and batching as the engine's own decisions; resolves
   * once the row is journaled (false without a database). A row whose id is stored already is skipped.
   */
  recordEvent(row: ThreatEventRow): Promise<boolean>;
  /**
   * Runs the cascade once per text kind on an ordinary sentence before traffic arrives, so the
   * first requests after a start do not pay for what the tiers build on first use (0.4–1 s of
   * CPU on a busy machine, which every request queued behind them waited for). Records nothing:
   * no metric, no event, no cache entry, no observation by T5. Resolves to the kinds it ran.
   */
  warm(): Promise<readonly InspectKind[]>;
  /** Waits for buffered threat_events rows to be written. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Maps the T3 classifier probability to a score contribution, following its leave-one-source-out
 * calibration (docs/detection-ml.md): below 0.5 no evidence; 0.5–0.9 uncertain (0.2–0.55: log or
 * alert on its own, a block only together with other evidence); 0.9 and above strong (0.75–1).
 */
export function classifierContribution(probability: number): number {
  if (!(probability >= 0.5)) return 0;
  if (probability < 0.9) return round(0.2 + ((probability - 0.5) / 0.4) * 0.35);
  return round(0.75 + ((Math.min(probability, 1) - 0.9) / 0.1) * 0.25);
}

/**
 * Maps the semantic head's probability to a score contribution, by its whole-source holdout
 * calibration (docs/detection-ml.md, "Semantic tier"): below `weak` nothing; `weak`..`strong`
 * supporting evidence (0.3–0.5: log or alert alone, a block only with a rule finding);
 * `strong` and above 0.7–0.95 (blocks on its own).
 */
export function semanticContribution(probability: number, thresholds: SemanticLike['thresholds']): number {
  if (!(probability >= thresholds.weak)) return 0;
  if (probability < thresholds.strong) return round(0.3 + ((probability - thresholds.weak) / Math.max(1e-6, thresholds.strong - thresholds.weak)) * 0.2);
  return round(0.7 + ((Math.min(probability, 1) - thresholds.strong) / Math.max(1e-6, 1 - thresholds.strong)) * 0.25);
}

/**
 * Maps the local model's attack probability to a score contribution: below the operator's
 * threshold nothing; at it 0.9, rising to 1 — past the default block threshold and counted as a
 * confident finding, so the model's verdict blocks on its own (the operator chose the model and
 * its threshold; docs/detection-ml.md, "Local model tier").
 */
export function modelContribution(probability: number, threshold: number): number {
  if (!(probability >= threshold)) return 0;
  return round(0.9 + ((Math.min(probability, 1) - threshold) / Math.max(1e-6, 1 - threshold)) * 0.1);
}

/**
 * A finding this confident stands on its own: the semantic head's benign reading does not cap
 * it. Below it, findings are weak evidence whose sum must not block a text the semantic head
 * reads as benign ("a block needs confident evidence").
 */
export const CONFIDENT_FINDING = 0.6;
/** The n-gram classifier's contribution counts as confident from here (probability ≥ 0.96). */
const CONFIDENT_CLASSIFIER = 0.9;
const SEMANTIC_KIND_SET: ReadonlySet<InspectKind> = new Set(['prompt', 'tool_output', 'llm_output']);

/** Texts longer than this are judged by local windows when only weak evidence adds up (localRuleScore). */
export const LOCAL_WINDOW_CHARS = 1_536;

/**
 * Weak findings scattered over a long text must not add up to a block: a noisy-or of every weak
 * tell anywhere in 8 KB grows with the length alone (issue #32: 8 KB texts of ordinary tasks were
 * refused at several times the rate of 1 KB ones). The rule evidence of a long text is therefore
 * the highest score of its windows (LOCAL_WINDOW_CHARS, overlapping by half), each scored as its
 * own text: T1, the kind's detectors and the evasion signals. Findings of one window still add up.
 * `enough(best)`: the windows read so far settle the caller's result (a higher best would not
 * change it), so the rest are not scored. Exported for its test (test/detection/local-windows.test.ts),
 * which holds every window's score to a plain reading of this rule.
 */
export function localRuleScore(catalogue: CompiledCatalogue, request: InspectRequest, text: string, enough: (best: number) => boolean = () => false): number {
  const kind = request.kind;
  let best = 0;
  const end = Math.min(text.length, MAX_SCAN_LENGTH);
  const step = LOCAL_WINDOW_CHARS / 2;
  for (let start = 0; start < end; start += step) {
    const window = text.slice(start, Math.min(end, start + LOCAL_WINDOW_CHARS));
    const normalized = normalize(window, { kind });
    const t1 = runT1(catalogue, kind, normalized);
    const findings = adjustForKind(kind, [...t1.findings, ...kindFindings({ ...request, content: window }, window)], window, true);
    const signals = evasionSignals(kind, normalized, findings, window);
    best = Math.max(best, noisyOr([combineFindings(findings), signals.score]));
    // The caller keeps its score once a window reaches it: further windows cannot lower it.
    if (start + LOCAL_WINDOW_CHARS >= end || enough(best)) break;
  }
  return best;
}

/** The most the evasion signals of command documentation may weigh: in the Log band, under the classifier's agreement (0.3). */
const DOCUMENTED_SIGNALS = 0.2;

function documentedSignals(signals: { readonly score: number; readonly findings: readonly Finding[] }): { score: number; findings: Finding[] } {
  return {
    score: Math.min(signals.score, DOCUMENTED_SIGNALS),
    findings: signals.findings.map((finding) => (finding.confidence > DOCUMENTED_SIGNALS ? { ...finding, confidence: DOCUMENTED_SIGNALS } : finding)),
  };
}

const HIJACKING_BLOCK_CONFIDENCE = 0.6;

const DEFAULT_PILLAR: Record<InspectKind, string> = { prompt: 'ai_gateway', tool_output: 'mcp', http: 'api_security', tool_definition: 'mcp', llm_output: 'ai_gateway' };

/**
 * Above this classifier probability the classifier may push a decision past Alert on its own;
 * below it a classifier-only score is capped under Challenge unless another signal agrees
 * (docs/detection.md, "Classifier alone").
 */
export const CLASSIFIER_CONFIDENT = 0.97;
/**
 * The reading of source code by its prose (code-prose.ts) counts from the classifier's high band on
 * (classifierContribution steepens at 0.9) and stays PROSE_READING_MARGIN under CLASSIFIER_CONFIDENT
 * (it never blocks alone): a docstring's steps, an error message's "check … then run …" and a help
 * text's imperatives read apart from their code reach the lower bands as readily as a planted order
 * (docs/detection.md, "Source code read by its prose").
 */
const PROSE_READING_FLOOR = 0.9;
const PROSE_READING_MARGIN = 0.01;
const AGREEMENT_CONFIDENCE = 0.3;

/**
 * Whether a refusal rests on the n-gram intent classifier alone: its finding is there and no other
 * finding reaches AGREEMENT_CONFIDENCE (no rule, kind detector, signal or other tier agrees). Such a
 * prompt is blocked only when the classifier is confident (CLASSIFIER_CONFIDENT), and on its own it
 * refuses benign prompts about as readily as attacks (docs/detection.md, "Extraction, eighth
 * round"), so a blocked prompt that rests on it alone reports the block threshold as its
 * threat_score: inside the block band, under every refusal with corroborating evidence. Ranking
 * only — the decision and decision_score are unchanged.
 */
export function classifierAloneBlock(findings: readonly Finding[], classifierId: string | undefined): boolean {
  if (classifierId === undefined) return false;
  const own = `ml.${classifierId}`;
  return findings.some((finding) => finding.id === own) && !findings.some((finding) => finding.id !== own && finding.confidence >= AGREEMENT_CONFIDENCE);
}
/**
 * Below this many words of prose (proseOf: a JSON text's strings with whitespace, else the text)
 * an unconfident classifier-only finding is dropped. The training corpora hold almost no short
 * benign texts, so on `{"message":"m4"}` or `{"user_identifier":"https://example.com"}` the
 * n-gram head answers from a handful of n-grams with no benign counterweight
 * (docs/detection.md, "Short texts and JSON arguments").
 */
export const CLASSIFIER_MIN_WORDS = 5;
/**
 * Longest prose the rule above may drop a finding on. Words are counted between ASCII
 * separators, so a sentence in a script without spaces (Chinese, Thai) or with other spaces
 * (NBSP, U+3000) is one "word": the length keeps such a sentence from passing as short.
 */
const SHORT_PROSE_CHARS = 48;

export function isShortProse(prose: string, minWords: number): boolean {
  return prose.length < SHORT_PROSE_CHARS && hasFewerWords(prose, minWords);
}

export function createDetectionEngine(deps: DetectionDeps = {}): DetectionEngine {
  let catalogue = compileCatalogue();
  // Part of the analysis-cache key: a replaced catalogue never answers from an older one's analyses.
  let catalogueGeneration = 0;
  const policy: PipelinePolicy = { ...DEFAULT_PIPELINE_POLICY, ...deps.policy };
  const sessions: SessionStore | null = deps.cache === undefined ? null : createSessionStore(deps.cache);
  const thresholds = deps.thresholds ?? createThresholdStore(deps.db);
  const events: EventWriter | null = deps.db === undefined ? null : createEventWriter(deps.db, deps.logger, deps.outbox);

  // Per-inspection scratch shared between T2 and T3 (the embedding), keyed by the normalized object.
  const embeddings = new WeakMap<object, Float32Array>();
  // The semantic head's probability for the text (when the semantic tier scored it).
  const semanticProbability = new WeakMap<object, number>();
  // T3's evasion signals when T1 measured them first (the address hint's guard), read without findings of T1: T3 takes them
  // as they are when none of the findings before it was matched in a decoded or de-obfuscated variant (the one reading of
  // them, `obfuscated-match`), so they are measured once.
  const measuredSignals = new WeakMap<object, SignalResult>();
  // The n-gram classifier's probability for the text (when T3 ran it), for the graded score.
  const classifierProbability = new WeakMap<object, number>();
  const graded: GradedWeights | null = deps.gradedScore === false ? null : (deps.gradedScore ?? loadGradedWeights());
  const rawText = new WeakMap<object, string>();
  // Without a session, a decision's explanation depends only on the analysis (whose cache key
  // includes the thresholds): repeated content reuses the sentence.
  const sessionlessExplanations = new WeakMap<Analysis, string>();
  // Whether an analysis's text reads as English (the graded score's input): its text is part of the
  // analysis's key, so repeated content reads it once.
  const english = new WeakMap<Analysis, boolean>();
  const readsEnglish = (analysis: Analysis, text: string): boolean => {
    let known = english.get(analysis);
    if (known === undefined) english.set(analysis, (known = readsAsEnglish(text)));
    return known;
  };
  // A model answer's readings of speaking about the assistant and its user (recital.ts), read
  // for every allowed answer's graded score: a function of the text alone, so repeated content
  // reads it once, as above.
  const addressCounts = new WeakMap<Analysis, number>();
  const addressCountOf = (analysis: Analysis, text: string): number => {
    let known = addressCounts.get(analysis);
    if (known === undefined) addressCounts.set(analysis, (known = assistantAddressCount(text)));
    return known;
  };
  const requests = new WeakMap<object, InspectRequest>();
  // The texts warm() runs through the cascade: no caller's traffic, so T5 observes none of them.
  const warming = new WeakSet<object>();

  const definitions: TierDefinition[] = [{
    name: 't1', failMode: 'closed', stage: 'always',
    run(context): Verdict {
      const verdict = runT1(catalogue, context.input.kind, context.normalized);
      const request = requests.get(context.normalized);
      const extra = request === undefined ? [] : kindFindings(request, rawText.get(context.normalized) ?? context.input.text);
      // A tool result is adjusted even without findings of its own (command documentation: adjustForKind).
      if (extra.length === 0 && context.input.kind !== 'tool_definition' && context.input.kind !== 'llm_output' && context.input.kind !== 'tool_output') return verdict;
      const raw = rawText.get(context.normalized) ?? context.input.text;
      const findings = adjustForKind(context.input.kind, [...verdict.findings, ...extra], raw);
      if (findings.length === 0) return verdict;
      // The address hint is made only when nothing else is found (det-llm-13); an evasion signal (T3) is a finding too, and
      // beside one the hint would add up into Alert (0.2 with a homoglyph's 0.3): then it is not made (review-33). The
      // signals are measured here, before the pipeline adds the hint's score (which gates T4 and shows in T1's report), and
      // T3 takes them from `measuredSignals` rather than measuring them again (mend-34).
      if (findings.length === 1 && isAssistantAddressHint(findings[0]!)) {
        const signals = evasionSignals(context.input.kind, context.normalized, [], raw);
        measuredSignals.set(context.normalized, signals);
        if (signals.findings.length > 0) return verdict;
      }
      return { outcome: 'match', score: combineFindings(findings), findings, failMode: 'closed' };
    },
  }];
  if (deps.t5 !== undefined) {
    const t5 = deps.t5;
    definitions.push({
      name: 't5', failMode: 'open', stage: 'always',
      async run(context) {
        const request = requests.get(context.normalized);
        if (request === undefined) return { outcome: 'skipped', score: 0, findings: [], failMode: 'open', reason: 'no request metadata' };
        if (warming.has(context.normalized)) return { outcome: 'skipped', score: 0, findings: [], failMode: 'open', reason: 'warming' };
        const result = await t5(request);
        return { outcome: result.score > 0 ? 'match' : 'clean', score: result.score, findings: result.findings, failMode: 'open' };
      },
    });
  }
  if (deps.t2 !== undefined) {
    const t2 = deps.t2;
    definitions.push({
      name: 't2', failMode: 'open', stage: 'uncertain',
      async run(context): Promise<Verdict> {
        if (context.input.kind === 'http') return { outcome: 'skipped', score: 0, findings: [], failMode: 'open', reason: 'not natural language' };
        const result = await t2.score(rawText.get(context.normalized) ?? context.input.text);
        if (result.embedding !== undefined) embeddings.set(context.normalized, result.embedding);
        const finding: Finding = { id: `ml.t2.${result.nearestId}`, name: 'Similar to a known injection', category: result.nearestCategory, confidence: round(result.score), tier: 't2' };
        return result.score >= 0.3 ? { outcome: 'match', score: result.score, findings: [finding], failMode: 'open' } : { outcome: 'clean', score: result.score, findings: [], failMode: 'open' };
      },
    });
  }
  if (deps.t2 === undefined && deps.semantic !== undefined) {
    const semantic = deps.semantic;
    definitions.push({
      name: 't2', failMode: 'open', stage: 'uncertain',
      async run(context): Promise<Verdict> {
        const kind = context.input.kind;
        if (kind !== 'prompt' && kind !== 'tool_output' && kind !== 'llm_output') return { outcome: 'skipped', score: 0, findings: [], failMode: 'open', reason: 'not scored by the semantic head' };
        const result = await semantic.score(rawText.get(context.normalized) ?? context.input.text, kind);
        if (result.status === 'skipped') return { outcome: 'skipped', score: 0, findings: [], failMode: 'open', reason: result.detail };
        if (result.status !== 'scored') {
          // Fail open, and say so: the decision carries a zero-weight finding naming the reason.
          const finding: Finding = { id: `ml.semantic.${result.status}`, name: `Semantic tier not scored (${result.status})`, category: 'tier-unavailable', confidence: 0, tier: 't2' };
          return { outcome: 'error', score: 0, findings: [finding], failMode: 'open', error: result.status };
        }
        semanticProbability.set(context.normalized, result.probability);
        const contribution = semanticContribution(result.probability, semantic.thresholds);
        if (contribution === 0) return { outcome: 'clean', score: 0, findings: [], failMode: 'open' };
        const finding: Finding = { id: 'ml.semantic', name: 'Semantic classifier: instruction or injection', category: 'semantic', confidence: contribution, tier: 't2' };
        return { outcome: 'match', score: contribution, findings: [finding], failMode: 'open' };
      },
    });
  }
  const classifier = deps.t3Classifier;
  const model = deps.model;
  const confidentInEnglish = deps.classifierConfident ?? CLASSIFIER_CONFIDENT;
  const minWords = deps.classifierMinWords ?? CLASSIFIER_MIN_WORDS;
  definitions.push({
    name: 't3', failMode: 'open', stage: 'always',
    async run(context): Promise<Verdict> {
      const raw = rawText.get(context.normalized) ?? context.input.text;
      // Command documentation (a manual page, --help output, a README) with nothing in it that
      // addresses a machine (kind-detectors.ts, documentationOnly): the evasion signals of its
      // option lines, tables and code (split characters, entropy, a suffix of symbols) are
      // reported at most in the Log band and agree with nothing.
      const documentation = documentationOnly(context.input.kind, context.findings, raw);
      const measuredFirst = context.findings.every((finding) => finding.variant === undefined) ? measuredSignals.get(context.normalized) : undefined;
      const measured = measuredFirst ?? evasionSignals(context.input.kind, context.normalized, context.findings, raw);
      const signals = documentation ? documentedSignals(measured) : measured;
      const findings: Finding[] = [...signals.findings];
      const scores = [signals.score];
      if (classifier !== undefined && context.escalate && context.input.kind !== 'http' && context.input.kind !== 'llm_output') {
        // Source code is also read by its prose (comments, docstrings, strings, lines that are not
        // code; code-prose.ts): an instruction planted in code for a model is prose, and it stands
        // out once the identifiers and keywords around it are set aside. The prose reading counts
        // only in the classifier's high band and never makes it confident on its own
        // (PROSE_READING_FLOOR / _MARGIN): a docstring's or a message table's imperatives read apart
        // from their code look like requests too. A prompt that pastes code is the developer's words
        // with the code; its code's prose is read without the words before it (a question about
        // code followed by the code's comments reads like a request followed by instructions).
        let probability = classifier.classify(raw, embeddings.get(context.normalized)).attackProbability;
        const code = context.input.kind === 'tool_output' || context.input.kind === 'prompt' ? codeProse(raw) : undefined;
        const prose = code === undefined ? '' : context.input.kind === 'prompt' ? code.inner : code.prose;
        if (prose.length > 0) {
          const read = classifier.classify(prose).attackProbability;
          if (read >= PROSE_READING_FLOOR) probability = Math.max(probability, Math.min(read, confidentInEnglish - PROSE_READING_MARGIN));
        }
        const classified = raw;
        classifierProbability.set(context.normalized, probability);
        let contribution = classifierContribution(probability);
        // The n-gram head learned its benign side in English: on a text in another language its
        // probability reads the language, not the intent (issue #32: under whole-source holdout it
        // refused 30 % of ordinary prompts in seven languages, each on its own). There it never
        // passes Alert alone; beside another finding it counts as it does in English.
        // Command documentation is made of imperatives the n-gram head reads as requests: with
        // nothing in it that addresses a machine the classifier never reaches Alert alone there.
        const confident = readsAsOtherLanguage(classified) || documentation ? Number.POSITIVE_INFINITY : confidentInEnglish;
        // The classifier alone (no pattern, no other signal) stays under Challenge unless confident.
        // Agreement: another finding of some weight (the weakest hints, such as an imperative in
        // data or a base64 token, do not count).
        const agreed = context.findings.some((finding) => finding.confidence >= AGREEMENT_CONFIDENCE) || signals.findings.some((finding) => finding.confidence >= AGREEMENT_CONFIDENCE);
        const short = minWords > 0 && isShortProse(proseOf(classified), minWords);
        const confidentAgreement = context.findings.some((finding) => finding.confidence >= CONFIDENT_FINDING) || signals.findings.some((finding) => finding.confidence >= CONFIDENT_FINDING);
        if (probability < confident && contribution > 0 && short && !confidentAgreement) {
          // A few words give the n-gram head too little to read, and a weak tell ("Stay in
          // character.") is not agreement enough to block on them (issue #32).
          contribution = 0;
        } else if (!agreed && probability < confident && contribution > 0 && short) {
          // Too little prose for an unconfident classifier to say anything (CLASSIFIER_MIN_WORDS).
          contribution = 0;
        } else if (!agreed && probability < confident) {
          // Cap the contribution so that, combined with the weak evidence already present, the
          // score stays under Challenge (at most Alert).
          // In command documentation with nothing addressed to a machine, under Alert.
          const other = noisyOr([context.runningScore, signals.score]);
          const ceiling = (documentation ? context.policy.thresholds.alert : context.policy.thresholds.challenge) - 0.01;
          contribution = other >= ceiling ? 0 : Math.min(contribution, Math.max(0, Math.floor((1 - (1 - ceiling) / (1 - other)) * 1e4) / 1e4));
        }
        if (contribution > 0) {
          findings.push({ id: `ml.${classifier.id}`, name: 'Intent classifier: injection or jailbreak', category: 'intent', confidence: contribution, tier: 't3' });
          scores.push(contribution);
        }
      }
      if (model !== undefined && context.escalate && model.kinds.has(context.input.kind)) {
        const verdict = await model.score(rawText.get(context.normalized) ?? context.input.text, context.input.kind);
        if (verdict.status === 'scored') {
          const contribution = modelContribution(verdict.probability, model.threshold);
          if (contribution > 0) {
            findings.push({ id: 'ml.model', name: `Local model ${model.id}: ${verdict.label}`, category: 'intent', confidence: contribution, tier: 't3' });
            scores.push(contribution);
          }
        } else if (verdict.status !== 'skipped') {
          // Fail open, and say so: a zero-weight finding names the reason (and the analysis is not cached).
          const finding: Finding = { id: `ml.model.${verdict.status}`, name: `Local model not scored (${verdict.status})`, category: 'tier-unavailable', confidence: 0, tier: 't3' };
          if (findings.length === 0) return { outcome: 'error', score: 0, findings: [finding], failMode: 'open', error: verdict.status };
          findings.push(finding);
        }
      }
      const score = noisyOr(scores);
      return { outcome: findings.length > 0 ? 'match' : 'clean', score, findings, failMode: 'open' };
    },
  });
  if (deps.t4 !== undefined) {
    const t4 = deps.t4;
    definitions.push({
      name: 't4', failMode: 'open', stage: 'last-resort',
      async run(context): Promise<Verdict> {
        const result = await t4.classify(rawText.get(context.normalized) ?? context.input.text);
        if (result.outcome === 'timeout' || result.outcome === 'error') return { outcome: 'error', score: 0, findings: [], failMode: 'open', error: result.outcome };
        if (result.outcome === 'benign') return { outcome: 'clean', score: 0, findings: [], failMode: 'open' };
        return { outcome: 'match', score: result.confidence, findings: [{ id: 'ml.t4', name: 'LLM judge: attack', category: result.category ?? 'intent', confidence: round(result.confidence), tier: 't4' }], failMode: 'open' };
      },
    });
  }
  const pipeline: Pipeline = createPipeline(definitions);
  /**
   * The classifier's probability for the graded score: T3's when it ran; for a model answer (the
   * classifier takes no part in its decision) it is read here, only for the graded score.
   */
  const classifierProbabilityOf = (normalized: object, kind: InspectKind, text: string): number | undefined => {
    const known = classifierProbability.get(normalized);
    if (known !== undefined || kind !== 'llm_output' || classifier === undefined) return known;
    const probability = classifier.classify(text.slice(0, 65_536)).attackProbability;
    classifierProbability.set(normalized, probability);
    return probability;
  };
  // T5 reads the caller's IP and endpoint, so its verdict is not a function of the content alone.
  const analyses: AnalysisCache | null = deps.t5 === undefined && deps.analysisCache !== false ? createAnalysisCache() : null;

  return {
    tiers: pipeline.tiers,
    thresholds,
    get catalogue() {
      return catalogue;
    },
    replaceCatalogue(entries) {
      catalogue = compileCatalogue(entries);
      catalogueGeneration++;
    },
    async inspect(request) {
      const started = performance.now();
      const kind = request.kind;
      let text: string;
      let headerNames: string[] | undefined;
      if (kind === 'http' && request.request !== undefined) ({ text, headerNames } = httpScanText(request.request));
      else text = kindText(request);

      const limits = request.orgId === undefined ? policy.thresholds : await thresholds.get(request.orgId).catch(() => policy.thresholds);
      // Content-only analysis (normalization + cascade) is cached for repeated content (analysis-cache.ts);
      // a model answer's key also holds the digest of its system prompt and secrets (kindAnalysisContext).
      const key = analyses === null ? null : analysisKey(kind, text, `${catalogueGeneration}:${limits.log},${limits.alert},${limits.challenge},${limits.block}`, headerNames, kindAnalysisContext(request));
      let analysis = key === null ? undefined : analyses!.get(key);
      if (analysis === undefined) {
        const normalized = normalize(text, { kind });
        rawText.set(normalized, text.slice(0, 65_536));
        requests.set(normalized, request);
        analysis = { normalized, result: await pipeline.run({ kind, text, ...(headerNames === undefined ? {} : { headerNames }) }, normalized, { ...policy, thresholds: limits }) };
        if (key !== null) {
          analyses!.set(key, analysis);
          // T1 read the request during the run; a cached analysis must not keep it (a model answer's
          // request carries its system prompt and messages, which the cache's size bound does not count).
          requests.delete(normalized);
        }
      }
      const { normalized, result } = analysis;

      let findings: Finding[] = [...result.findings];
      let base = result.score;
      const confidentFinding = (finding: Finding) => finding.confidence >= (finding.tier === 't3' && finding.id.startsWith('ml.') ? CONFIDENT_CLASSIFIER : CONFIDENT_FINDING);
      if (SEMANTIC_KIND_SET.has(kind) && text.length > 2 * LOCAL_WINDOW_CHARS && base >= limits.challenge && !result.immediateBlock && !findings.some(confidentFinding)) {
        // Only weak evidence, spread over a long text: judge it by its windows (localRuleScore),
        // plus what the learned heads said (their scores are already the best window's).
        const learned = findings.filter((finding) => finding.id.startsWith('ml.')).map((finding) => finding.confidence);
        const whole = base;
        base = Math.min(base, noisyOr([localRuleScore(catalogue, request, text, (best) => noisyOr([best, ...learned]) >= whole), ...learned]));
      }
      const semanticP = semanticProbability.get(normalized);
      if (deps.semantic !== undefined && semanticP !== undefined && SEMANTIC_KIND_SET.has(kind) && semanticP < deps.semantic.thresholds.benign && base >= limits.challenge && !result.immediateBlock
        && !findings.some(confidentFinding)) {
        // Weak findings add up (noisy-or), but the semantic head reads the text as benign and no
        // finding is confident on its own: the sum stays under Challenge (issue #32, item 3).
        base = Math.min(base, round(limits.challenge - 0.01));
      }
      let evidence = normalized.evidence;
      if (text.length > MAX_SCAN_LENGTH) {
        // Texts beyond the first window: T1 over further windows up to the request's or the engine's maximum.
        const known = new Set(findings.map((finding) => finding.id));
        const beyond = scanBeyondFirstWindow(catalogue, kind, text, request.scanMax ?? deps.scanMax ?? DEFAULT_SCAN_MAX);
        const added = beyond.findings.filter((finding) => !known.has(finding.id));
        if (added.length > 0) {
          findings = [...findings, ...added];
          base = noisyOr([base, combineFindings(added)]);
        }
        evidence = [...evidence, ...beyond.evidence];
      }
      let requestCount = 1;
      let fragmentMatch = false;
      const inSession = request.sessionId !== undefined && request.sessionId !== '' && sessions !== null;
      if (inSession) {
        const orgId = request.orgId ?? 'anonymous';
        const [count, previous] = await Promise.all([
          sessions.count(orgId, request.sessionId).catch(() => 1),
          sessions.fragments(`${orgId}:${kind}`, request.sessionId, text).catch(() => [] as string[]),
        ]);
        requestCount = count;
        if (previous.length > 0) {
          const known = new Set(findings.map((finding) => finding.id));
          const joined = [...previous, text];
          const variants = [...normalize(joined.join(' '), { kind }).variants, ...normalize(joined.join(''), { kind }).variants];
          const fragmentScan = scanVariants(catalogue, kind, variants);
          let added = fragmentScan.findings.filter((finding) => !known.has(finding.id));
          if (added.length > 0) {
            // Only what is split across the fragments: a finding the earlier fragments show on
            // their own was reported with them, and must not follow every later request of the
            // session (one flagged tool result would quarantine each benign one after it). This
            // second scan runs only when the joined text found something the request alone did not.
            const earlier = [...normalize(previous.join(' '), { kind }).variants, ...normalize(previous.join(''), { kind }).variants];
            const seen = new Set(scanVariants(catalogue, kind, earlier).findings.map((finding) => finding.id));
            added = added.filter((finding) => !seen.has(finding.id)).map((finding) => ({ ...finding, variant: 'fragments' }));
          }
          if (added.length > 0) {
            fragmentMatch = true;
            findings = [...findings, ...added];
            base = noisyOr([base, ...added.map((finding) => finding.confidence)]);
          }
        }
      }
      // A request that asks not to be escalated is still counted in its session, at factor 1.
      const escalation = escalate(base, request.escalate === false ? 1 : requestCount, limits);
      // Spec: the agent-hijacking classes default to block (and alert): a confident finding of
      // one of them raises the score to the block threshold.
      const hijack = findings.some((finding) => HIJACKING_CATEGORIES.has(finding.category) && finding.confidence >= HIJACKING_BLOCK_CONFIDENCE);
      const decisionScore = round(hijack ? Math.max(escalation.score, limits.block) : escalation.score);
      const decision = decide(decisionScore, limits);
      // Within the bands that do not refuse the reported score grades the evidence
      // (graded-score.ts); the decision, and everything that acts on it, is the decision score's.
      const fit = graded === null ? undefined : graded.kinds[kind === 'llm_output' ? 'prompt' : kind];
      const score = fit === undefined || !(graded?.bands ?? ['allow']).includes(decision as 'allow') ? decisionScore
        : gradedThreatScore(fit, {
          probability: classifierProbabilityOf(normalized, kind, text),
          score: decisionScore,
          english: readsEnglish(analysis, text),
          // An allowed tool output's strongest AI-style task and how unrelated it is to its data (ranking only).
          ...(kind === 'tool_output' && readsTaskEvidence(fit) ? { task: taskEvidence(text, { offTopic: (fit?.offTopicTask ?? 0) > 0, weak: true }) } : {}),
          // An allowed model answer that speaks about the assistant and its user (ranking only).
          ...(kind === 'llm_output' ? { assistantAddress: addressCountOf(analysis, text) } : {}),
        }, limits, graded?.bands);
      // Logged or alerted (and not graded by the fit): a tool output's task evidence (the allow
      // band's readings: the strongest task, a direction in another shape, the edge), or a model
      // answer's count of recital-sign classes, orders it within its band, above its decision score
      // and below the band's top (graded-score.ts `bandTaskScore`, `bandRecitalScore`; ranking only).
      // A model answer refused (challenge or block) is ranked the same way inside its band.
      const rankedInBand = (decision === 'log' || decision === 'alert') && !(graded?.bands ?? ['allow']).includes(decision);
      let reported = score;
      // A logged or alerted answer's count also takes its readings of speaking about the assistant
      // and its user (`BAND_ADDRESS_WEIGHT` each; rank10).
      if (kind === 'llm_output' && (rankedInBand || decision === 'challenge' || decision === 'block')) reported = bandRecitalScore(decisionScore, limits, instructionRecitalStrength(text) + (rankedInBand ? BAND_ADDRESS_WEIGHT * addressCountOf(analysis, text) : 0));
      else if (rankedInBand && kind === 'tool_output' && readsTaskEvidence(fit)) reported = bandTaskScore(decisionScore, limits, bandTaskProbability(taskEvidence(text, { offTopic: false, weak: true })));
      // A logged or alerted prompt that speaks of the conversation's own text ("above", "verbatim",
      // "repeat") ranks above the prompts of its decision score that do not (ranking only; det-b3-11).
      else if (rankedInBand && kind === 'prompt') reported = bandConversationScore(decisionScore, limits, conversationReferenceCount(text));
      // A prompt blocked on the intent classifier's reading alone reports the block threshold
      // (ranking only: `classifierAloneBlock`).
      else if (kind === 'prompt' && decision === 'block' && classifierAloneBlock(findings, classifier?.id)) reported = limits.block;
      if (escalation.factor > 1 && base >= THREAT_SIGNAL_FLOOR) {
        const tier = escalationTier(requestCount);
        deps.metrics?.sessionEscalations.inc({ tier });
        deps.onEscalation?.(tier);
      }
      deps.metrics?.threatScore.observe(score);
      if (decision !== 'allow') deps.metrics?.threats.inc({ decision });

      const patterns = findings.map((finding) => ({ id: finding.id, name: finding.name, confidence: finding.confidence, ...(finding.span === undefined ? {} : { span: finding.span }) }));
      let explanation = inSession ? undefined : sessionlessExplanations.get(analysis);
      if (explanation === undefined) {
        explanation = explain({ decision, score, findings, evidence, factor: escalation.factor, requestCount, autoBlocked: escalation.autoBlocked, immediateBlock: result.immediateBlock, failedOpen: result.failedOpen, fragmentMatch, hijack });
        if (!inSession) sessionlessExplanations.set(analysis, explanation);
      }
      const threat: ThreatDecision = {
        allowed: isAllowed(decision),
        threat_score: reported,
        decision,
        explanation,
        patterns_matched: patterns,
        session_escalation_factor: escalation.factor,
        session_request_count: requestCount,
        base_score: round(base),
        decision_score: decisionScore,
        kind,
        categories: [...new Set(findings.map((finding) => finding.category))],
        tiers: result.reports,
        evidence,
        thresholds: limits,
        latency_ms: Math.round((performance.now() - started) * 1000) / 1000,
      };
      if (events !== null && request.orgId !== undefined && request.record !== false && decision !== 'allow' && deps.findingsQuota?.admit(request.orgId, decision) !== false) {
        const durable = events.record({
          orgId: request.orgId,
          requestId: request.requestId ?? 'inspect',
          pillar: request.pillar ?? DEFAULT_PILLAR[kind],
          kind,
          threatScore: score,
          decision,
          patterns,
          sessionId: request.sessionId ?? null,
          gatewayId: request.gatewayId ?? null,
          details: { categories: threat.categories, base_score: threat.base_score, session_request_count: requestCount, session_escalation_factor: escalation.factor },
        });
        // A block is answered only once its threat event is on disk (the journal: a SIGKILL right
        // after the answer cannot lose it); other decisions do not wait for the disk.
        if (decision === 'block') await durable;
      }
      return threat;
    },
    recordEvent: (row) => events?.record(row) ?? Promise.resolve(false),
    async warm() {
      for (const kind of WARM_KINDS) {
        const request: InspectRequest = kind === 'tool_definition' ? { kind, tool: { name: 'get_weather', description: WARM_TEXT } } : { kind, content: WARM_TEXT };
        const text = kindText(request);
        const normalized = normalize(text, { kind });
        rawText.set(normalized, text);
        requests.set(normalized, request);
        warming.add(normalized);
        await pipeline.run({ kind, text }, normalized, policy);
      }
      return WARM_KINDS;
    },
    flush: async () => {
      await events?.flush();
    },
    close: async () => {
      await events?.close();
    },
  };
}

const WARM_KINDS: readonly InspectKind[] = ['prompt', 'tool_output', 'llm_output', 'tool_definition', 'http'];
const WARM_TEXT = 'The weather in the harbour town stays mild this week, with light winds from the west.';
