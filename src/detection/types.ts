/**
 * Shared types of the detection engine: what is inspected, what each tier answers, and the
 * decision the engine returns. Tiers are pure functions over these values; I/O (cache, DB,
 * network) lives in the engine edge (session, fragments, thresholds, events).
 */

/**
 * What is being inspected. `tool_output`: MCP tool results, the gateway's tool messages and RAG
 * sources (retrieved data, scanned for planted instructions); `tool_definition`: an MCP tool's
 * model-visible metadata (poisoning, malicious capability); `llm_output`: a model's answer (leaks
 * of the system prompt or configured secrets, planted instructions carried on).
 */
export type InspectKind = 'prompt' | 'tool_output' | 'http' | 'tool_definition' | 'llm_output';
export const INSPECT_KINDS: readonly InspectKind[] = ['prompt', 'tool_output', 'http', 'tool_definition', 'llm_output'];

/** An MCP tool definition as `tools/list` returns it (model-visible metadata only). */
export interface ToolDefinitionShape {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
  readonly annotations?: unknown;
}

/** Offsets (UTF-16 code units, end exclusive) into the inspected content. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** An HTTP request as the API-security pillar sees it. All parts optional; values are raw text. */
export interface HttpRequestShape {
  readonly method?: string;
  readonly path?: string;
  /** Either a raw query string ("a=1&b=2") or parsed values. */
  readonly query?: string | Readonly<Record<string, string | readonly string[]>>;
  readonly headers?: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** Raw body text, or a parsed JSON value (re-serialized for scanning). */
  readonly body?: unknown;
}

/** Input of one inspection after the edge has resolved session and org context. */
export interface ScanInput {
  readonly kind: InspectKind;
  /** The text to scan (for `http`, the scan text assembled from the request parts). */
  readonly text: string;
  /** Header names of an HTTP request, lower-cased (auth-bypass header checks). */
  readonly headerNames?: readonly string[];
}

/** The tier names the pipeline knows; the list is closed (unknown names fail at construction). */
export const TIER_NAMES = ['t1', 't2', 't3', 't4', 't5'] as const;
export type TierName = (typeof TIER_NAMES)[number];

/** One reason a tier gave: a catalogue pattern, a signal or a model output. */
export interface Finding {
  /** Stable id: catalogue pattern id (e.g. "pi.ignore-previous"), or "signal.<name>", "ml.<name>". */
  readonly id: string;
  readonly name: string;
  readonly category: string;
  /** Confidence 0..1 that this finding alone indicates an attack. */
  readonly confidence: number;
  readonly tier: TierName;
  /** Which normalized variant matched (e.g. "canonical", "decoded:base64", "fragments"). */
  readonly variant?: string;
  /** Where in the inspected content (raw offsets) the finding lies, when the detector knows it. */
  readonly span?: Span;
}

/** A normalization step that fired (evidence for explainability). */
export interface Evidence {
  readonly transform: string;
  readonly detail: string;
}

export type FailMode = 'open' | 'closed';

/**
 * Answer of one tier. `error` is explicit: an erroring tier is never silently clean; the
 * pipeline applies the tier's fail mode (open: ignore and say so; closed: treat as block-worthy).
 */
export type Verdict =
  | { readonly outcome: 'clean'; readonly score: number; readonly findings: readonly Finding[]; readonly failMode: FailMode }
  | { readonly outcome: 'match'; readonly score: number; readonly findings: readonly Finding[]; readonly failMode: FailMode }
  | {
      readonly outcome: 'error';
      readonly score: number;
      readonly findings: readonly Finding[];
      readonly failMode: FailMode;
      readonly error: string;
    }
  | {
      readonly outcome: 'skipped';
      readonly score: number;
      readonly findings: readonly Finding[];
      readonly failMode: FailMode;
      readonly reason: string;
    };

export type VerdictOutcome = Verdict['outcome'];

/** Response-policy actions, lowest first. */
export const DECISIONS = ['allow', 'log', 'alert', 'challenge', 'block'] as const;
export type Decision = (typeof DECISIONS)[number];

/** Lower bounds of each band (score >= bound → at least that action). */
export interface Thresholds {
  readonly log: number;
  readonly alert: number;
  readonly challenge: number;
  readonly block: number;
}

export interface TierReport {
  readonly tier: TierName;
  readonly outcome: VerdictOutcome;
  readonly score: number;
  readonly latency_ms: number;
  readonly detail?: string;
}

/** The spec's Threat decision plus svc's extra explainability fields (snake_case on the wire). */
export interface ThreatDecision {
  readonly allowed: boolean;
  readonly threat_score: number;
  readonly decision: Decision;
  readonly explanation: string;
  readonly patterns_matched: readonly { readonly id: string; readonly name: string; readonly confidence: number; readonly span?: Span }[];
  readonly session_escalation_factor: number;
  readonly session_request_count: number;
  /** Extra: score before the session factor. */
  readonly base_score: number;
  /**
   * Extra: the score the response policy acted on. Equal to threat_score at and above the
   * challenge threshold; below the log threshold threat_score grades the evidence and stays under
   * it, and a logged or alerted tool output's or model answer's threat_score lies between this
   * score and its band's top (graded-score.ts). Absent in decisions made elsewhere than the engine.
   */
  readonly decision_score?: number;
  readonly kind: InspectKind;
  readonly categories: readonly string[];
  readonly tiers: readonly TierReport[];
  readonly evidence: readonly Evidence[];
  readonly thresholds: Thresholds;
  readonly latency_ms: number;
}
