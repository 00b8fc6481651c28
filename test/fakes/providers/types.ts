// Shared types of the fake upstream providers (test doubles that speak each real wire protocol).

/** What the fake did with one received request. */
export interface RecordedRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  /** Lower-case header names. */
  headers: Record<string, string>;
  rawBody: string;
  /** The parsed JSON body, or undefined when it was not JSON. */
  body: unknown;
  /** Violations of the provider's wire contract found by the fake; empty when valid. */
  problems: string[];
  /** Whether the client asked for a stream (per the protocol's own signal). */
  stream: boolean;
}

export interface FakeUsage {
  prompt: number;
  completion: number;
  cached?: number;
  reasoning?: number;
}

/** How the fake answers. Every field is optional; setBehaviour merges. */
export interface FakeBehaviour {
  /** Reply text (streamed split into word chunks). Default "Hello from the fake upstream." */
  content: string;
  /** Reply with a tool call instead of stopping. */
  toolCall: { id?: string; name: string; arguments: string } | null;
  /** Normalized finish the fake reports in its own vocabulary. */
  finish: 'stop' | 'length' | 'tool_calls';
  usage: FakeUsage;
  /** Model the upstream reports (default: the requested one). */
  model: string | null;
  /** Answer every request with this HTTP error status (provider-shaped error body). */
  status: number | null;
  /** Only the next N requests fail with `status` (then `status` is ignored); null = all. */
  failCount: number | null;
  /** Retry-After header value sent with errors. */
  retryAfter: string | null;
  /** Wait this long before the response headers. */
  delayMs: number;
  /** Wait this long between stream chunks. */
  chunkDelayMs: number;
  /** Destroy the socket after writing this many stream chunks (mid-stream drop). */
  dropAfterChunks: number | null;
  /** End the response cleanly after this many chunks, without the terminal event (truncation). */
  truncateAfterChunks: number | null;
  /** Destroy the socket before any response byte. */
  dropBeforeHeaders: boolean;
  /** Send the provider's in-stream error event after the first chunk. */
  inStreamError: boolean;
}

export const DEFAULT_BEHAVIOUR: FakeBehaviour = {
  content: 'Hello from the fake upstream.',
  toolCall: null,
  finish: 'stop',
  usage: { prompt: 12, completion: 6 },
  model: null,
  status: null,
  failCount: null,
  retryAfter: null,
  delayMs: 0,
  chunkDelayMs: 0,
  dropAfterChunks: null,
  truncateAfterChunks: null,
  dropBeforeHeaders: false,
  inStreamError: false,
};

/** The context a protocol gets to validate and answer one request. */
export interface ProtocolRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  rawBody: string;
  body: unknown;
}

export interface Validation {
  problems: string[];
  /** True when the problem is the credential (answer 401 instead of 400). */
  authFailed: boolean;
  stream: boolean;
  model: string;
}

export interface ErrorReply {
  headers: Record<string, string>;
  body: string;
}

export interface StreamReply {
  contentType: string;
  chunks: (string | Uint8Array)[];
  /** The chunk count before the terminal event(s) (used by truncateAfterChunks). */
  terminalFrom: number;
  /** A provider-shaped in-stream error chunk. */
  errorChunk: string | Uint8Array;
}

export interface FakeProtocol {
  validate(request: ProtocolRequest): Validation;
  error(status: number, behaviour: FakeBehaviour): ErrorReply;
  json(validation: Validation, request: ProtocolRequest, behaviour: FakeBehaviour): unknown;
  stream(validation: Validation, request: ProtocolRequest, behaviour: FakeBehaviour): StreamReply;
}

/** Splits text into word-sized chunks, keeping spaces (so concatenation restores it). */
export function wordChunks(text: string): string[] {
  const chunks: string[] = [];
  let current = '';
  for (const character of text) {
    current += character;
    if (character === ' ') {
      chunks.push(current);
      current = '';
    }
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function sse(data: unknown, event?: string): string {
  return `${event === undefined ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}
