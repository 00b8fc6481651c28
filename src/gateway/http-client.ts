/**
 * The gateway's outbound HTTP: one shared undici Agent, which keeps one keep-alive connection
 * pool per upstream origin (no new TCP/TLS connection per request; global fetch is not used —
 * it costs ~0.5 ms more per call). Every transport failure becomes an UpstreamError.
 *
 * Security posture: this module sends customer keys to upstreams, so it never logs requests, and
 * errors carry only the URL without its query string. Redirects are not followed (a redirect is
 * an upstream answer like any other; following it could forward the key elsewhere). Response
 * bodies are size-capped. SSRF screening of user-supplied base URLs is done where the key is
 * stored and by the gateway core before calling here; calls with `publicOnly` also go through an
 * agent whose connector refuses private addresses at connect time (DNS rebinding).
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { LRUCache } from 'lru-cache';
import { Agent, errors as undiciErrors, util as undiciUtil } from 'undici';
import type { Dispatcher } from 'undici';
import { guardedConnector } from '../platform/ssrf.ts';
import type { AbortHook } from './cancel.ts';
import { UpstreamError } from './contract.ts';
import type { UpstreamErrorCode, UpstreamHeaders, UpstreamRequest } from './contract.ts';
import { entryBound } from '../platform/lru.ts';

/** Largest upstream response body accepted (JSON or a whole stream). */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

let agent: Agent = createAgent(false);
/** For base URLs an org supplied: every address connected to must be public (DNS rebinding). */
let guardedAgent: Agent = createAgent(true);

function createAgent(guarded: boolean): Agent {
  return new Agent({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    connections: 256,
    maxResponseSize: MAX_RESPONSE_BYTES,
    connect: guarded ? guardedConnector({ allowPrivate: false }, { timeout: 10_000 }) : { timeout: 10_000 },
  });
}

/** The shared dispatcher (exposed for metrics and tests). */
export function upstreamDispatcher(): Dispatcher {
  return agent;
}

/** Closes all pooled connections (server shutdown, test teardown); later calls get a fresh agent. */
export async function closeUpstreamConnections(): Promise<void> {
  const old = [agent, guardedAgent];
  agent = createAgent(false);
  guardedAgent = createAgent(true);
  await Promise.all(old.map((dispatcher) => dispatcher.close()));
}

export interface SendOptions {
  provider: string;
  /** An AbortSignal or the route's ClientCancel (undici accepts any object with addEventListener). */
  signal?: AbortHook;
  /** Deadline until the response headers arrive. */
  headersTimeoutMs: number;
  /** Longest silence allowed while reading the body. */
  bodyTimeoutMs: number;
  /** The host was supplied by an org: refuse private addresses at connect time. */
  publicOnly?: boolean;
}

/** Maps any transport-level failure to an UpstreamError (pass-through for UpstreamError). */
export function toUpstreamError(error: unknown, provider: string, url: string): UpstreamError {
  if (error instanceof UpstreamError) return error.withUrl(url);
  let code: UpstreamErrorCode = 'network';
  let providerCode = 'connection_failed';
  if (error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError || error instanceof undiciErrors.ConnectTimeoutError) {
    code = 'timeout';
    providerCode = 'timeout';
  } else if (error instanceof undiciErrors.ResponseExceededMaxSizeError) {
    code = 'invalid_response';
    providerCode = 'response_too_large';
  } else if ((error as NodeJS.ErrnoException | null)?.code === 'ETARGETFORBIDDEN') {
    // The connect-time SSRF guard refused the address the host resolved to: not worth retrying.
    return new UpstreamError({ provider, status: null, code: 'network', retryable: false, url, providerCode: 'target_forbidden', cause: error });
  } else if (error instanceof undiciErrors.RequestAbortedError || (error instanceof Error && error.name === 'AbortError')) {
    providerCode = 'aborted';
  } else if (error instanceof undiciErrors.SocketError || error instanceof undiciErrors.ResponseContentLengthMismatchError) {
    providerCode = 'connection_lost';
  }
  const retryable = code !== 'invalid_response' && providerCode !== 'aborted';
  return new UpstreamError({ provider, status: null, code, retryable, url, providerCode, cause: error });
}

const splitCache = new LRUCache<string, { origin: string; path: string } | false>(entryBound(1_000));

/** splitUrl, remembered: a gateway calls few distinct URLs (one per provider, model and base URL). */
function splitUrlCached(url: string): { origin: string; path: string } | null {
  let split = splitCache.get(url);
  if (split === undefined) {
    split = splitUrl(url) ?? false;
    splitCache.set(url, split);
  }
  return split === false ? null : split;
}

/** Splits http(s)://host[:port]/path?query into origin and path; null for anything unusual (userinfo, no scheme). */
export function splitUrl(url: string): { origin: string; path: string } | null {
  const schemeEnd = url.startsWith('https://') ? 8 : url.startsWith('http://') ? 7 : -1;
  if (schemeEnd < 0) return null;
  const slash = url.indexOf('/', schemeEnd);
  const authority = slash < 0 ? url.slice(schemeEnd) : url.slice(schemeEnd, slash);
  if (authority === '' || /[@?#\\\s]/.test(authority)) return null;
  const path = slash < 0 ? '/' : url.slice(slash);
  if (path.includes('#')) return null;
  return { origin: url.slice(0, slash < 0 ? url.length : slash), path };
}

/**
 * The headers with the active trace context added (W3C traceparent), when a span is active
 * (OpenTelemetry on, platform/telemetry.ts); otherwise the same object, at no cost.
 */
function traced<H extends Record<string, unknown>>(headers: H): H {
  if (trace.getSpan(context.active()) === undefined) return headers;
  const carrier = { ...headers } as Record<string, unknown>;
  propagation.inject(context.active(), carrier);
  return carrier as H;
}

/**
 * What both upstream handlers share: the caller's signal aborts the request (the handler itself is
 * the signal's listener: no closure per call), and the request's abort is kept for later.
 */
abstract class AbortableHandler {
  protected abortRequest: ((reason?: Error) => void) | null = null;

  constructor(protected readonly signal: AbortHook | undefined) {}

  /** The signal's 'abort' listener. */
  handleEvent(): void {
    this.abortRequest?.(new undiciErrors.RequestAbortedError());
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.abortRequest = abort;
    if (this.signal === undefined) return;
    if (this.signal.aborted) abort(new undiciErrors.RequestAbortedError());
    else this.signal.addEventListener('abort', this, { once: true });
  }
}

/** Queued body bytes above which the upstream is paused until the reader catches up (back-pressure). */
const STREAM_HIGH_WATER_BYTES = 64 * 1024;

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true as const, value: undefined });

/**
 * A streamed upstream answer read straight from the dispatcher's callbacks (the streamed
 * counterpart of TextCollector): the chunks of each upstream read are queued as they arrive and
 * handed to one reader, a pending read is answered by the next chunk directly. No Node stream,
 * async iterator over it or 'readable' events per read: a stream's body used to cost a Readable,
 * its async iterator, a wrapper for the idle clock and their promise steps per read (issue #39
 * item 2). Bounded: at STREAM_HIGH_WATER_BYTES queued, the upstream is paused until the reader
 * catches up; the agent's maxResponseSize caps the whole answer.
 *
 * The idle clock (`watchIdle`) runs on the UPSTREAM only: it restarts when the reader starts
 * waiting and does not count the time a slow reader spends between chunks.
 */
export class StreamBody extends AbortableHandler implements Dispatcher.DispatchHandler, AsyncIterable<Uint8Array> {
  status = 0;
  headers: UpstreamHeaders = {};
  private resumeRequest: (() => void) | null = null;
  private paused = false;
  private readonly queue: Buffer[] = [];
  private queued = 0;
  private opened = false;
  private complete = false;
  private failure: Error | null = null;
  private reader: { resolve: (result: IteratorResult<Uint8Array>) => void; reject: (error: unknown) => void } | null = null;
  /** dump(): what is left is dropped as it arrives, up to this many bytes. */
  private dropLimit = -1;
  private dropped = 0;
  private onSettled: (() => void) | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  private started = false;

  constructor(
    private readonly open: { resolve: (body: StreamBody) => void; reject: (error: unknown) => void },
    signal: AbortHook | undefined,
  ) {
    super(signal);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    this.status = statusCode;
    this.headers = undiciUtil.parseHeaders(rawHeaders) as UpstreamHeaders;
    this.resumeRequest = resume;
    this.opened = true;
    this.open.resolve(this);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.dropLimit >= 0) {
      this.dropped += chunk.length;
      if (this.dropped > this.dropLimit) this.destroy();
      return true;
    }
    const reader = this.reader;
    if (reader !== null) {
      this.reader = null;
      reader.resolve({ done: false, value: chunk });
      return true;
    }
    this.queue.push(chunk);
    this.queued += chunk.length;
    if (this.queued < STREAM_HIGH_WATER_BYTES) return true;
    this.paused = true;
    return false;
  }

  onComplete(): void {
    if (this.complete || this.failure !== null) return;
    this.complete = true;
    this.settle();
    const reader = this.reader;
    this.reader = null;
    reader?.resolve(DONE);
  }

  onError(error: Error): void {
    if (this.complete || this.failure !== null) return;
    this.failure = error;
    this.settle();
    if (!this.opened) {
      this.open.reject(error);
      return;
    }
    const reader = this.reader;
    this.reader = null;
    reader?.reject(error);
  }

  /** The request ended (completed or failed): no listener, no clock left behind. */
  private settle(): void {
    this.signal?.removeEventListener('abort', this);
    this.stopIdle();
    if (this.failure !== null) this.queue.length = 0;
    const settled = this.onSettled;
    this.onSettled = null;
    settled?.();
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return this;
  }

  /** The next chunk; leaving a `for await` over the body does not close it (the caller decides: dump or destroy). */
  next(): Promise<IteratorResult<Uint8Array>> {
    this.started = true;
    const chunk = this.queue.shift();
    if (chunk !== undefined) {
      this.queued -= chunk.length;
      if (this.paused && this.queued < STREAM_HIGH_WATER_BYTES) {
        this.paused = false;
        this.resumeRequest?.();
      }
      return Promise.resolve({ done: false, value: chunk });
    }
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.complete) return Promise.resolve(DONE);
    this.idleTimer?.refresh();
    return new Promise((resolve, reject) => {
      this.reader = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<Uint8Array>> {
    return Promise.resolve(DONE);
  }

  /**
   * Destroys the body after `idleTimeoutMs` of upstream silence while a reader waits (or before
   * the first read), calling `onIdle` first; reads then fail with the destroy's error.
   */
  watchIdle(idleTimeoutMs: number, onIdle: () => void): void {
    if (this.complete || this.failure !== null) return;
    const timer = setTimeout(() => {
      if (this.started && this.reader === null) {
        timer.refresh();
        return;
      }
      onIdle();
      this.destroy(new Error('upstream stream idle timeout'));
    }, idleTimeoutMs);
    timer.unref();
    this.idleTimer = timer;
  }

  stopIdle(): void {
    if (this.idleTimer === null) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  /** The whole (rest of the) body as UTF-8 text (an error answer's body). */
  async text(): Promise<string> {
    const chunks: Buffer[] = [];
    for (let next = await this.next(); next.done !== true; next = await this.next()) chunks.push(next.value as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  /**
   * Drops what is left of the answer as it arrives, so the connection stays reusable; past
   * `limit` bytes the request is closed instead. Resolves when the request ended.
   */
  dump(options: { limit: number }): Promise<void> {
    this.stopIdle();
    if (this.complete || this.failure !== null) return Promise.resolve();
    this.dropLimit = options.limit;
    this.dropped = this.queued;
    this.queue.length = 0;
    this.queued = 0;
    if (this.dropped > this.dropLimit) {
      this.destroy();
      return Promise.resolve();
    }
    // Listening before the resume: undici may read the rest, and complete, inside resumeRequest().
    const ended = new Promise<void>((resolve) => {
      this.onSettled = resolve;
    });
    if (this.paused) {
      this.paused = false;
      this.resumeRequest?.();
    }
    return ended;
  }

  /** Closes the request (the upstream stops generating); a waiting or later read fails with `error`. */
  destroy(error: Error = new undiciErrors.RequestAbortedError()): void {
    if (this.complete || this.failure !== null) return;
    const abort = this.abortRequest;
    this.onError(error);
    abort?.(error);
  }
}

/**
 * Opens one streamed upstream request on the pooled agent; resolves on response headers with the
 * body to read (StreamBody). Rejects with UpstreamError.
 */
export function openStream(request: UpstreamRequest, options: SendOptions): Promise<StreamBody> {
  return dispatchUpstream<StreamBody>(request, options, (resolve, reject) => new StreamBody({ resolve, reject }, options.signal));
}

/**
 * Dispatches one upstream request on the pooled agent (the SSRF-guarded one for an org's host) to
 * the handler `handlerOf` makes; settles as the handler does, rejecting with UpstreamError.
 */
async function dispatchUpstream<T>(
  request: UpstreamRequest,
  options: SendOptions,
  handlerOf: (resolve: (value: T) => void, reject: (error: unknown) => void) => Dispatcher.DispatchHandler,
): Promise<T> {
  try {
    let split = splitUrlCached(request.url);
    if (split === null) {
      const url = new URL(request.url);
      split = { origin: url.origin, path: `${url.pathname}${url.search}` };
    }
    const dispatcher = options.publicOnly === true ? guardedAgent : agent;
    return await new Promise<T>((resolve, reject) => {
      dispatcher.dispatch(
        {
          origin: split.origin,
          path: split.path,
          method: request.method,
          headers: traced(request.headers),
          body: request.body,
          headersTimeout: options.headersTimeoutMs,
          bodyTimeout: options.bodyTimeoutMs,
        },
        handlerOf(resolve, reject),
      );
    });
  } catch (error) {
    throw toUpstreamError(error, options.provider, request.url);
  }
}

/** A whole (non-streamed) upstream answer. */
export interface UpstreamText {
  status: number;
  headers: UpstreamHeaders;
  text: string;
}

/**
 * Collects one upstream answer for fetchText straight from the dispatcher's callbacks: no body
 * stream, no per-call AbortController. The caller's signal, if any, aborts the request.
 */
class TextCollector extends AbortableHandler implements Dispatcher.DispatchHandler {
  private status = 0;
  private rawHeaders: Buffer[] = [];
  private readonly chunks: Buffer[] = [];
  private done = false;

  constructor(
    private readonly resolve: (value: UpstreamText) => void,
    private readonly reject: (error: unknown) => void,
    signal: AbortHook | undefined,
  ) {
    super(signal);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.status = statusCode;
    this.rawHeaders = rawHeaders;
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (this.finish()) return;
    const text = this.chunks.length === 1 ? this.chunks[0]!.toString('utf8') : Buffer.concat(this.chunks).toString('utf8');
    this.resolve({ status: this.status, headers: undiciUtil.parseHeaders(this.rawHeaders) as UpstreamHeaders, text });
  }

  onError(error: Error): void {
    if (this.finish()) return;
    this.reject(error);
  }

  /** True when the call already settled. */
  private finish(): boolean {
    if (this.done) return true;
    this.done = true;
    this.signal?.removeEventListener('abort', this);
    return false;
  }
}

/**
 * Sends one upstream request on the pooled agent and reads the whole answer (status, headers,
 * UTF-8 text; at most MAX_RESPONSE_BYTES). The non-streamed completion path: cheaper than
 * a body stream plus its text(). Rejects with UpstreamError.
 */
export function fetchText(request: UpstreamRequest, options: SendOptions): Promise<UpstreamText> {
  return dispatchUpstream<UpstreamText>(request, options, (resolve, reject) => new TextCollector(resolve, reject, options.signal));
}
