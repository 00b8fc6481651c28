/**
 * Shapes shared by the verification layers. A layer is a pure function
 * `(input, policy) => LayerResult`; the runner (verify.ts) orders them by cost, times them and
 * turns their verdicts into one `Verification` and one action.
 */

export const LAYER_NAMES = ['integrity', 'grounding', 'structural', 'constraint'] as const;
export type LayerName = (typeof LAYER_NAMES)[number];

export type Verdict = 'pass' | 'fail' | 'skipped' | 'error';
export type Action = 'annotate' | 'redact' | 'block' | 'retry';
export const ACTIONS: readonly Action[] = ['annotate', 'redact', 'block', 'retry'];

/** A span of the verified content (UTF-16 offsets, end exclusive) and why it was flagged. */
export interface Finding {
  start: number;
  end: number;
  /** Stable machine reason, e.g. `number_not_in_sources`, `banned_phrase`, `invalid_json`. */
  reason: string;
  /** Optional human detail (the number, the phrase, the schema path). Never secret text. */
  detail?: string;
}

export interface LayerResult {
  verdict: Verdict;
  /** 0–1, higher = more likely a problem. */
  score: number;
  findings: Finding[];
  /** Wall time of the layer in milliseconds (filled by the runner). */
  ms: number;
  /** What an `error` verdict means for `passed`: open = ignored, closed = counts as a failure. */
  fails: 'open' | 'closed';
  /** Layer-specific facts (hash, refusal, tiers run …). */
  info?: Record<string, unknown>;
}

/** A grounding source as the gateway accepts it (string or `{ content, id?, title?, url? }`). */
export type SourceInput = string | { content: string; id?: string; title?: string; url?: string; [key: string]: unknown };

/** A tool the request declared (svc's flat shape or OpenAI's wrapped shape). */
export type ToolInput =
  | { name: string; description?: string; parameters?: Record<string, unknown> }
  | { type: 'function'; function: { name: string; description?: string; parameters?: Record<string, unknown> } };

export interface ToolCallOutput {
  id: string;
  name: string;
  arguments: string;
}

/** What the layers look at: the request's relevant parts and the response. */
export interface VerifyInput {
  content: string;
  finishReason: string | null;
  /** The stream ended without its terminal event (cut). */
  cut?: boolean;
  toolCalls?: readonly ToolCallOutput[];
  sources?: readonly SourceInput[];
  question?: string | null;
  /** System messages of the request (system-prompt-leak check). */
  systemPrompts?: readonly string[];
  tools?: readonly ToolInput[];
  /** JSON Schema the content must satisfy (request `response_schema` or the guard's `schema`). */
  schema?: Record<string, unknown> | null;
  /** The request asked for JSON output (`response_format: { type: "json_object" }`). */
  expectJson?: boolean;
}

export interface Verification {
  passed: boolean;
  /** `none` when passed; else the strongest action among the failed layers. */
  action: 'none' | Action;
  layers: Record<LayerName, LayerResult>;
  /** SHA-256 (hex) of the content as delivered to the client. */
  content_sha256: string;
  /** Present when the request was answered again by another provider. */
  retry?: { from_provider: string; to_provider: string | null; first: { passed: boolean; failed_layers: LayerName[] } };
  /** Streaming only: the hold-back window used. */
  hold_back_chars?: number;
}
