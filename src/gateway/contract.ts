/**
 * The provider contract of the AI gateway: the one shape every upstream LLM provider is adapted
 * to, and the error every upstream failure becomes.
 *
 * Security posture: adapters turn customer-owned upstream keys into HTTP requests, so a key must
 * never leave this layer except in the outbound request's auth header (or inside an AWS SigV4
 * signature). `UpstreamError` never carries the key, the request body or the upstream's free-text
 * error message (upstreams echo prompts and sometimes partial keys in it); its message is safe to
 * log but is still not meant to be shown to clients as is — the gateway maps it to its own
 * catalogue codes. Upstream JSON is untrusted input: adapters check the fields they read at the
 * boundary and turn anything malformed into `UpstreamError('invalid_response')`, never into a
 * partially filled result. A stream ends either with a `done` event or by throwing; a silent
 * truncation is impossible by construction (see `StreamEvent`).
 *
 * Layering (imports point one way): contract ← providers/<id>.ts ← registry.ts (adapter map and
 * the `invokeCompletion` / `invokeStream` entry points) → http-client.ts (pooled undici agent).
 * Adapters never import each other; the OpenAI-compatible vendors share `providers/shared/`.
 */
import type { AbortHook } from './cancel.ts';

// `ProviderId` (the registry's keys) lives in registry.ts: contract.ts imports nothing from the
// files that import it, so the contract ← adapters ← registry layering has no cycle, types included.

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

export type MessageRole = 'system' | 'user' | 'assistant' | 'tool';

/** A tool call the model asked for (in a result) or made earlier (in an assistant message). */
export interface ToolCall {
  /** Upstream-assigned id; tool messages answer it through `tool_call_id`. */
  id: string;
  name: string;
  /** The arguments as the JSON text the model produced (not parsed: models emit invalid JSON). */
  arguments: string;
  /**
   * Gemini 3's opaque `thoughtSignature` of the functionCall part, when the upstream sent one.
   * Clients replay it unchanged with the assistant turn (Gemini 3 rejects a replayed call without
   * it); other providers ignore it.
   */
  thought_signature?: string;
}

/**
 * An image of a user message (from an OpenAI-style `image_url` content part): an https URL or a
 * `data:image/…;base64,…` URL. Adapters that take images map it; the others refuse the request
 * (`UpstreamError('bad_request')`, providerCode 'images_not_supported'); adapters that take only
 * inline bytes (Gemini, Vertex, Bedrock) refuse a remote URL ('image_url_not_supported').
 */
export interface ImageInput {
  url: string;
  /** OpenAI's detail hint ('auto' | 'low' | 'high'); forwarded where the provider has one. */
  detail?: string;
}

export interface ChatMessage {
  role: MessageRole;
  /** The text (an OpenAI-style `content` array's text parts joined with "\n"). */
  content: string;
  /** Images of a user message, after its text (from `image_url` content parts). */
  images?: ImageInput[];
  /** Optional participant name (OpenAI-style); ignored by providers that have no such field. */
  name?: string;
  /** For role 'tool': the id of the tool call this message answers. */
  tool_call_id?: string;
  /** For role 'assistant': tool calls made in that turn (needed to replay tool conversations). */
  tool_calls?: ToolCall[];
}

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/**
 * The normalized completion request: what svc received, after validation and PII redaction.
 * Field names follow the public API (snake_case) so the gateway core can pass its body through.
 * `model` is the model id at the provider (for azure_openai: the deployment name, see below).
 */
export interface CompletionRequest {
  model: string;
  messages: ChatMessage[];
  max_tokens?: number;
  temperature?: number;
  tools?: ToolDefinition[];
  stream: boolean;
}

/**
 * Where and with which credential to call a provider. Built by the gateway core from the org's
 * stored provider key (`accounts.providerKeys.get` → { key, baseUrl }) or the environment key.
 *
 * `apiKey` encodings (the stored key is one string; extra credentials ride inside it):
 * - most providers: the API key / token as the provider issues it.
 * - azure_openai: the resource `api-key`. `baseUrl` is required (https://<resource>.openai.azure.com);
 *   the deployment is `extra.deployment` or else the request's `model`; the api-version is
 *   `extra.api_version`, else an `api-version` query parameter on baseUrl, else 2024-10-21.
 * - bedrock: "ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]" → AWS SigV4 signing; a key without
 *   a colon is taken as a Bedrock API key (bearer token). Region: `extra.region`, else parsed from
 *   baseUrl (bedrock-runtime.<region>.amazonaws.com), else us-east-1.
 * - vertex_ai: "PROJECT_ID:LOCATION:ACCESS_TOKEN" (OAuth2 access token, sent as Bearer), or just
 *   the access token when baseUrl already names the project and location
 *   (…/v1/projects/<project>/locations/<location>). `extra.project` / `extra.location` override.
 * - ollama: any string (Ollama ignores auth; sent as Bearer for proxies that check it).
 */
export interface ProviderTarget {
  apiKey: string;
  /** Overrides the adapter's default base URL (self-hosted, proxies, Azure resources, tests). */
  baseUrl?: string;
  /** Provider-specific settings: azure deployment/api_version, bedrock region, vertex project/location. */
  extra?: Readonly<Record<string, string>>;
}

/** The HTTP request an adapter wants sent. Headers carry the credential: never log them. */
export interface UpstreamRequest {
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: string;
}

// ---------------------------------------------------------------------------------------------
// Result
// ---------------------------------------------------------------------------------------------

/**
 * Normalized finish reasons. 'stop' = natural end or stop sequence; 'length' = max_tokens hit;
 * 'tool_calls' = the model wants tools run; 'content_filter' = upstream safety filter or a model
 * refusal (OpenAI `refusal`, Anthropic `refusal`, Gemini SAFETY…; the refusal text is the content);
 * 'error' = upstream reported an error finish; 'other' = anything unknown (see rawFinishReason).
 */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error' | 'other';

/** Token counts, integers. promptTokens includes cached ones; completionTokens includes reasoning. */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Prompt tokens served from the provider's prompt cache, when reported. */
  cachedPromptTokens?: number;
  /** Hidden reasoning ("thinking") tokens, when reported; already counted in completionTokens. */
  reasoningTokens?: number;
}

export interface CompletionResult {
  /** The answer text; for a refusal (OpenAI `message.refusal`), the refusal text. */
  content: string;
  finishReason: FinishReason;
  /** The provider's own finish value (e.g. 'end_turn', 'MAX_TOKENS'), or null when absent. */
  rawFinishReason: string | null;
  toolCalls?: ToolCall[];
  /** null when the upstream reported no usable usage (the core estimates then, as for streams). */
  usage: TokenUsage | null;
  /** The model as the upstream reported it (falls back to the requested model). */
  model: string;
}

/**
 * Events of a streamed completion, in order: any number of `delta` / `tool_call_delta`, then
 * exactly one `done`, which is always the last event. If the upstream stream breaks (connection
 * drop, malformed frame, in-stream error event, end without a terminal event) the iterator THROWS
 * an `UpstreamError` instead of yielding `done` — consumers must turn that into an explicit error
 * event for their client.
 */
export type StreamEvent =
  | { type: 'delta'; text: string }
  | {
      type: 'tool_call_delta';
      /** Position of the tool call in this response (stable across its deltas). */
      index: number;
      /** Present on the first delta of a call. */
      id?: string;
      /** Present on the first delta of a call. */
      name?: string;
      /** A fragment of the arguments JSON text; concatenate in order. */
      argumentsDelta: string;
      /** Gemini 3 thought signature of the call (see ToolCall.thought_signature). */
      thoughtSignature?: string;
    }
  | {
      type: 'done';
      finishReason: FinishReason;
      rawFinishReason: string | null;
      /** null when the upstream did not report usage in the stream (the core estimates then). */
      usage: TokenUsage | null;
      /** Model as reported by the upstream stream, when it reported one. */
      model?: string;
    };

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/**
 * 'rate_limited' 429 · 'quota_exceeded' the account is out of credit or quota (OpenAI 429
 * `insufficient_quota`, DeepSeek 402): a billing state, not retryable, but another provider may
 * serve the request · 'auth' 401/403 · 'bad_request' 400/404-model/413/422 (the request itself is
 * wrong: retrying elsewhere with the same body may still work, retrying the same upstream won't) ·
 * 'not_found' 404 · 'overloaded' 503/529 · 'server' other 5xx · 'timeout' deadline or 408 ·
 * 'network' connection refused/reset/dropped mid-stream · 'invalid_response' 2xx that is not the
 * documented shape.
 */
export type UpstreamErrorCode =
  | 'rate_limited'
  | 'quota_exceeded'
  | 'auth'
  | 'bad_request'
  | 'not_found'
  | 'overloaded'
  | 'server'
  | 'timeout'
  | 'network'
  | 'invalid_response';

export interface UpstreamErrorInit {
  provider: string;
  status: number | null;
  code: UpstreamErrorCode;
  retryable?: boolean;
  retryAfterMs?: number | null;
  url?: string | null;
  /** The provider's machine-readable error type/code (e.g. 'insufficient_quota'), sanitized. */
  providerCode?: string | null;
  cause?: unknown;
}

const RETRYABLE_BY_DEFAULT: ReadonlySet<UpstreamErrorCode> = new Set<UpstreamErrorCode>([
  'rate_limited',
  'overloaded',
  'server',
  'timeout',
  'network',
]);

/**
 * A failure talking to an upstream provider. Never carries the key, the request body or the
 * upstream's free-text message; `url` has its query string removed. `retryable` says whether the
 * same request may succeed later (429, 5xx, 529, timeouts, network); `retryAfterMs` is the
 * upstream's Retry-After / retry-after-ms hint, or null.
 */
export class UpstreamError extends Error {
  readonly provider: string;
  readonly status: number | null;
  readonly code: UpstreamErrorCode;
  readonly retryable: boolean;
  readonly retryAfterMs: number | null;
  readonly url: string | null;
  readonly providerCode: string | null;

  constructor(init: UpstreamErrorInit) {
    const status = init.status === null ? 'no status' : `HTTP ${init.status}`;
    const detail = init.providerCode ? ` [${init.providerCode}]` : '';
    super(`upstream ${init.provider} failed: ${init.code} (${status})${detail}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'UpstreamError';
    this.provider = init.provider;
    this.status = init.status;
    this.code = init.code;
    this.retryable = init.retryable ?? RETRYABLE_BY_DEFAULT.has(init.code);
    this.retryAfterMs = init.retryAfterMs ?? null;
    this.url = init.url ? safeUrl(init.url) : null;
    this.providerCode = init.providerCode ? sanitizeProviderCode(init.providerCode) : null;
  }

  /** A copy with the URL filled in (adapters parse errors without knowing the URL). */
  withUrl(url: string): UpstreamError {
    if (this.url !== null) return this;
    return new UpstreamError({ ...this.toInit(), url });
  }

  toInit(): UpstreamErrorInit {
    return {
      provider: this.provider,
      status: this.status,
      code: this.code,
      retryable: this.retryable,
      retryAfterMs: this.retryAfterMs,
      url: this.url,
      providerCode: this.providerCode,
      cause: this.cause,
    };
  }
}

/** Removes query string, fragment and userinfo (Azure keys and Gemini ?key= may sit there). */
export function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '[unparseable url]';
  }
}

function sanitizeProviderCode(code: string): string | null {
  const trimmed = code.slice(0, 64);
  return /^[A-Za-z0-9_.:-]+$/.test(trimmed) ? trimmed : null;
}

// ---------------------------------------------------------------------------------------------
// Adapter
// ---------------------------------------------------------------------------------------------

/** Response headers as undici gives them (lower-case names). */
export type UpstreamHeaders = Readonly<Record<string, string | string[] | undefined>>;

/**
 * One upstream provider. All methods are pure (no I/O) except that `buildRequest` may be async
 * (AWS SigV4 signing); the HTTP call itself belongs to `registry.invokeCompletion/invokeStream`.
 */
export interface ProviderAdapter {
  /** The ProviderId this adapter is registered under. */
  readonly id: string;
  readonly displayName: string;
  /** Base URL used when the target has none; null when the provider has no public default. */
  readonly defaultBaseUrl: string | null;
  /** 'sse' (text/event-stream) or 'aws-eventstream' (application/vnd.amazon.eventstream). */
  readonly streamFormat: 'sse' | 'aws-eventstream';
  /**
   * Which images the provider takes: 'url' (remote https and data: URLs), 'inline' (data: URLs
   * only; the adapter sends the bytes) or 'none'. The registry refuses a request with images the
   * adapter cannot take before any byte is sent.
   */
  readonly images: 'url' | 'inline' | 'none';
  /** The exact upstream HTTP request for this completion (stream or not per request.stream). */
  buildRequest(request: CompletionRequest, target: ProviderTarget): UpstreamRequest | Promise<UpstreamRequest>;
  /**
   * Maps a complete upstream response. For a non-2xx status it throws `parseError(...)`; for a
   * 2xx that is not the documented shape it throws UpstreamError('invalid_response').
   * `requestedModel` is the fallback when the upstream does not report a model.
   */
  parseResponse(status: number, headers: UpstreamHeaders, bodyText: string, requestedModel?: string): CompletionResult;
  /** Maps a non-2xx upstream answer to an UpstreamError (code, retryability, Retry-After). */
  parseError(status: number, headers: UpstreamHeaders, bodyText: string): UpstreamError;
  /** Maps the body of a 2xx streaming answer to events (see StreamEvent for the end rule). */
  parseStream(body: AsyncIterable<Uint8Array>, requestedModel?: string): AsyncIterable<StreamEvent>;
  /**
   * Only the built-in mock providers: answers in process instead of over HTTP (buildRequest is
   * then never called). Failures are thrown as UpstreamError, exactly like a remote provider's.
   */
  readonly local?: {
    complete(request: CompletionRequest): Promise<CompletionResult>;
    stream(request: CompletionRequest): Promise<AsyncIterable<StreamEvent>>;
  };
}

/** Options of the invoke entry points. */
export interface InvokeOptions {
  /** Aborts the call (client disconnected, overall deadline). Aborting yields UpstreamError('timeout'|'network'). */
  signal?: AbortHook;
  /**
   * Deadline for the response headers (after the connection is made; connecting has its own
   * 10 s limit) and, for invokeCompletion, for any silence while the body is read; invokeStream's
   * body is bounded by idleTimeoutMs. Enforced by the transport's timers, which have about one
   * second of resolution. Default 60 000 ms.
   */
  timeoutMs?: number;
  /** invokeStream: longest silence allowed between two chunks. Default 60 000 ms. */
  idleTimeoutMs?: number;
  /** Refuse private addresses when connecting (an org-supplied base URL without ALLOW_PRIVATE_TARGETS). */
  publicOnly?: boolean;
}
