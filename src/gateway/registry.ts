/**
 * The provider registry — one line per provider; `ProviderId` derives from it — and the two entry
 * points the gateway core calls: `invokeCompletion` and `invokeStream`.
 *
 * Invariants: every failure surfaces as an `UpstreamError` (never a raw undici/JSON error);
 * `invokeStream` resolves only after the upstream answered 2xx headers, so the caller can still
 * fail over to another provider when it rejects; once resolved, the iterable ends with a `done`
 * event or throws (no silent truncation). Stopping the iteration early (break / return()) or
 * aborting `options.signal` closes the upstream request.
 */
import { anthropic } from './providers/anthropic.ts';
import { azure_openai } from './providers/azure-openai.ts';
import { bedrock } from './providers/bedrock.ts';
import { cohere } from './providers/cohere.ts';
import { deepseek } from './providers/deepseek.ts';
import { fireworks } from './providers/fireworks.ts';
import { gemini } from './providers/gemini.ts';
import { groq } from './providers/groq.ts';
import { mistral } from './providers/mistral.ts';
import { mock, mock_backup } from './providers/mock.ts';
import { ollama } from './providers/ollama.ts';
import { openai } from './providers/openai.ts';
import { openai_compatible } from './providers/openai-compatible.ts';
import { openrouter } from './providers/openrouter.ts';
import { together } from './providers/together.ts';
import { vertex_ai } from './providers/vertex-ai.ts';
import { xai } from './providers/xai.ts';
import type { CatalogueProviderId } from '../platform/providers.ts';
import { UpstreamError } from './contract.ts';
import type { CompletionRequest, CompletionResult, InvokeOptions, ProviderAdapter, ProviderTarget, StreamEvent, UpstreamRequest } from './contract.ts';
import { fetchText, openStream, toUpstreamError } from './http-client.ts';
import type { StreamBody } from './http-client.ts';
import type { ReadyEventIterator } from './streaming/sse.ts';

export const providers = {
  openai,
  azure_openai,
  anthropic,
  gemini,
  vertex_ai,
  bedrock,
  mistral,
  cohere,
  groq,
  together,
  fireworks,
  deepseek,
  xai,
  openrouter,
  ollama,
  openai_compatible,
  mock,
  mock_backup,
} as const satisfies Record<CatalogueProviderId, ProviderAdapter>;

export type ProviderId = keyof typeof providers;

/** All provider ids, in registry order. */
export const providerIds: readonly ProviderId[] = Object.freeze(Object.keys(providers) as ProviderId[]);

/** Providers reached over HTTP (all but the built-in mocks). */
export type RemoteProviderId = Exclude<ProviderId, 'mock' | 'mock_backup'>;
export const remoteProviderIds: readonly RemoteProviderId[] = Object.freeze(providerIds.filter((id): id is RemoteProviderId => id !== 'mock' && id !== 'mock_backup'));

export function isProviderId(value: string): value is ProviderId {
  return Object.hasOwn(providers, value);
}

export function getAdapter(id: ProviderId): ProviderAdapter {
  return providers[id];
}

const DEFAULT_TIMEOUT_MS = 60_000;
/** A finished stream's unread rest (trailing events, the terminator) is drained up to this, so the connection is reused; past it the request is closed. */
const LEFTOVER_DRAIN_BYTES = 64 * 1024;

/** Refuses, before any byte is sent, images the provider cannot take (see ProviderAdapter.images). */
function checkImages(adapter: ProviderAdapter, request: CompletionRequest): void {
  if (adapter.images !== 'none') return;
  if (request.messages.some((message) => message.images !== undefined && message.images.length > 0)) {
    throw new UpstreamError({ provider: adapter.id, status: null, code: 'bad_request', retryable: false, providerCode: 'images_not_supported' });
  }
}

async function build(adapter: ProviderAdapter, request: CompletionRequest, target: ProviderTarget): Promise<UpstreamRequest> {
  checkImages(adapter, request);
  try {
    const built = adapter.buildRequest(request, target);
    return built instanceof Promise ? await built : built;
  } catch (error) {
    if (error instanceof UpstreamError) throw error;
    throw new UpstreamError({ provider: adapter.id, status: null, code: 'bad_request', retryable: false, providerCode: 'request_build_failed', cause: error });
  }
}


async function errorFromResponse(adapter: ProviderAdapter, response: StreamBody, url: string): Promise<UpstreamError> {
  let text = '';
  try {
    text = await response.text();
  } catch {
    // The status is what matters; a body cut short still maps by status.
  }
  return adapter.parseError(response.status, response.headers, text).withUrl(url);
}

/**
 * Calls `providerId` for a non-streamed completion (request.stream is forced to false).
 * Rejects with UpstreamError: HTTP errors mapped by the adapter, 'timeout' after
 * options.timeoutMs (default 60 s) for the whole call, 'network' on transport failures or abort.
 */
export async function invokeCompletion(
  providerId: ProviderId,
  request: CompletionRequest,
  target: ProviderTarget,
  options: InvokeOptions = {},
): Promise<CompletionResult> {
  const adapter: ProviderAdapter = providers[providerId];
  if (adapter.local) return adapter.local.complete(request.stream ? { ...request, stream: false } : request);
  const upstream = await build(adapter, request.stream ? { ...request, stream: false } : request, target);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  try {
    // The transport's own timers (undici: headers within timeoutMs, then no body silence longer
    // than timeoutMs) bound the call; no per-call timer or AbortController on the hot path.
    const response = await fetchText(upstream, { provider: providerId, signal: options.signal, headersTimeoutMs: timeoutMs, bodyTimeoutMs: timeoutMs, publicOnly: options.publicOnly === true });
    if (response.status < 200 || response.status > 299) throw adapter.parseError(response.status, response.headers, response.text).withUrl(upstream.url);
    return adapter.parseResponse(response.status, response.headers, response.text, request.model);
  } catch (error) {
    throw toUpstreamError(error, providerId, upstream.url);
  }
}

/**
 * Starts a streamed completion on `providerId` (request.stream is forced to true). Resolves once
 * the upstream answered 2xx headers within options.timeoutMs; rejects with UpstreamError before
 * that (failover is still possible). The iterable then yields StreamEvents and ends with `done`,
 * or throws UpstreamError ('network' with providerCode 'stream_truncated' or 'connection_lost',
 * 'timeout' after options.idleTimeoutMs of silence, or the provider's in-stream error).
 * Consume it or call its return(): an unconsumed stream holds its connection until the idle timeout.
 */
export async function invokeStream(
  providerId: ProviderId,
  request: CompletionRequest,
  target: ProviderTarget,
  options: InvokeOptions = {},
): Promise<AsyncIterable<StreamEvent>> {
  const adapter: ProviderAdapter = providers[providerId];
  if (adapter.local) return adapter.local.stream(request.stream ? request : { ...request, stream: true });
  const upstream = await build(adapter, request.stream ? request : { ...request, stream: true }, target);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let body: StreamBody;
  try {
    body = await openStream(upstream, {
      provider: providerId,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      publicOnly: options.publicOnly === true,
      headersTimeoutMs: timeoutMs,
      bodyTimeoutMs: (options.idleTimeoutMs ?? DEFAULT_TIMEOUT_MS) + 1_000,
    });
    if (body.status < 200 || body.status > 299) throw await errorFromResponse(adapter, body, upstream.url);
  } catch (error) {
    throw toUpstreamError(error, providerId, upstream.url);
  }
  // The idle clock runs on the UPSTREAM only: while the adapter waits for a chunk, not while a
  // slow client is still taking the previous one. A stream nobody starts reading within the idle
  // timeout is destroyed. Leaving the adapter's loop does not destroy the body (`release` decides).
  let idle = false;
  body.watchIdle(options.idleTimeoutMs ?? DEFAULT_TIMEOUT_MS, () => {
    idle = true;
  });
  let released = false;
  /**
   * Stops the idle clock and lets the body go: a completed stream leaves the connection reusable
   * (the few remaining bytes are read, in the background), anything else closes it so the
   * upstream stops generating. Done before the `done` event is handed on: a consumer has no reason
   * to ask for more after it (the relay does not), and the async generator this replaced, left
   * suspended there, never reached its `finally`: the idle timer refreshed itself every idle
   * timeout, holding the body, for every stream served.
   */
  const release = (finished: boolean) => {
    if (released) return;
    released = true;
    body.stopIdle();
    if (finished) body.dump({ limit: LEFTOVER_DRAIN_BYTES }).catch(() => undefined);
    else body.destroy();
  };
  const events: ReadyEventIterator = adapter.parseStream(body, request.model)[Symbol.asyncIterator]();
  let ended = false;
  const over = (): IteratorResult<StreamEvent> => ({ done: true, value: undefined });
  const failed = (error: unknown): never => {
    ended = true;
    release(false);
    if (idle) throw new UpstreamError({ provider: providerId, status: null, code: 'timeout', url: upstream.url, providerCode: 'stream_idle_timeout', cause: error });
    throw toUpstreamError(error, providerId, upstream.url);
  };
  // A plain iterator over the adapter's events rather than a second async generator around them:
  // one promise step per event instead of a generator's three (a stream's events pass here one by one).
  const handOn = (event: StreamEvent): StreamEvent => {
    if (event.type === 'done') {
      ended = true;
      release(true);
    }
    return event;
  };
  const iterator: AsyncIterableIterator<StreamEvent> & ReadyEventIterator = {
    [Symbol.asyncIterator]: () => iterator,
    // The events the adapter already converted from the same upstream read, without a promise step each.
    nextReady: () => {
      if (ended) return undefined;
      const event = events.nextReady?.();
      return event === undefined ? undefined : handOn(event);
    },
    next: () => {
      if (ended) return Promise.resolve(over());
      return events.next().then((result) => {
        if (result.done === true) {
          ended = true;
          release(false);
        } else if (result.value.type === 'done') {
          ended = true;
          release(true);
        }
        return result;
      }, failed);
    },
    return: async () => {
      if (!ended) {
        ended = true;
        release(false);
        await events.return?.().catch(() => undefined);
      }
      return over();
    },
  };
  return iterator;
}
