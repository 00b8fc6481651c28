/**
 * Stream relaying: the one module that takes a streamed completion from its upstream to the
 * client. It opens the stream through the attempts (failover ends with the first upstream
 * event; until then a failure is a normal error answer), takes the response over, relays every
 * event as the service's own server-sent events, and settles the stream exactly once however it
 * ends (done, upstream failure, client gone, response filter or verification stop).
 *
 * Posture: after the first byte reached the client a failure is an explicit error event, never a
 * silent truncation, and upstream error text never reaches it (catalogue codes only). The
 * response filter (detection's llm_output check) sees the accumulated answer as it grows; PII
 * placeholders are restored across chunk boundaries when the org opted in; the verifier may
 * hold text back, release it, or stop the stream.
 *
 * Writes go to the raw Node response once per upstream read: what the events of one read produce
 * is written together, before the next read is awaited (and before anything that waits), never
 * held longer; no compression; TCP_NODELAY is left on, Node's default. Back-pressure: when the
 * socket buffer is full the writer waits for 'drain' before taking the next upstream chunk.
 *
 * Chunk shapes of svc's own format (`svcStreamEncoder`; documented in docs/gateway.md; the
 * compatible surfaces bring their own encoders, compat/):
 *   delta   { request_id, index, delta }
 *   tool    { request_id, index, tool_call: { index, id?, name?, arguments_delta, thought_signature? } }
 *   final   { request_id, provider, model, finish_reason, usage, cost_usd, latency_ms, verification, response_filter, done: true }
 *   error   { request_id, error: { code, message } }  — then the stream ends without [DONE]
 *           (shutdown: SERVICE_UNAVAILABLE with details.reason 'shutting_down', platform/streams.ts)
 *   end     data: [DONE]
 */
import type { ServerResponse } from 'node:http';
import type { ResponseGuard } from '../detection/index.ts';
import { ERRORS, SvcError, type ErrorCode } from '../platform/errors.ts';
import { isShuttingDown, shutdownErrorPayload } from '../platform/streams.ts';
import type { PreparedCompletion } from './admission.ts';
import { failureToError, type Attempts, type AttemptSuccess, type FirstEvent } from './attempts.ts';
import type { ClientCancel } from './cancel.ts';
import { UpstreamError, type FinishReason, type StreamEvent, type TokenUsage } from './contract.ts';
import { createStreamRestorer } from './pii/index.ts';
import type { ReadyEventIterator } from './streaming/sse.ts';
import { estimateUsage, responseFilter, toPublicUsage, type CompletionEnvelope, type Settlement } from './settlement.ts';
import type { CompletionBody } from './schemas.ts';
import type { CompletionVerifier, StreamVerifier, VerifierStop } from './verifier.ts';

export const SSE_DONE = 'data: [DONE]\n\n';

export function sseLine(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

/** The response a stream is written to, taken over from the HTTP layer, with the headers set so far. */
export interface StreamTarget {
  raw: ServerResponse;
  /** Owned by the relay once handed over: it adds the stream's own headers to this object. */
  headers: Record<string, string | number | string[]>;
  /** The wire format of the events (default: svc's own, `svcStreamEncoder`). */
  encoder?: StreamEncoder;
}

/** Which provider answered, once it is known (before a stream's first byte; after a JSON answer). */
export interface ServedFacts {
  provider: string;
  model: string;
  /** Providers passed over before it (failed, or skipped with an open breaker), in order. */
  passedOver: readonly string[];
  /** Upstream calls made, retries included. */
  attempts: number;
}

/** A tool-call fragment of a stream (see StreamEvent 'tool_call_delta'). */
export interface ToolCallFragment {
  index: number;
  id?: string;
  name?: string;
  argumentsDelta: string;
  thoughtSignature?: string;
}

/** What the last event of a completed stream reports. */
export interface StreamSummary {
  provider: string;
  model: string;
  finishReason: FinishReason;
  usage: CompletionEnvelope['usage'];
  costUsd: number | null;
  latencyMs: number;
  verification: Record<string, unknown> | null;
  responseFilter: Record<string, unknown> | null;
}

/** An error event: a catalogue code and its message, with the verdict when verification stopped the stream. */
export interface StreamFailure {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
  verification?: unknown;
}

/**
 * The wire format of a relayed stream: each method returns the text to write (possibly several
 * events). One encoder per stream (it may keep state, e.g. which content block is open). svc's
 * own format is `svcStreamEncoder`; the compatible surfaces (compat/) bring OpenAI's and
 * Anthropic's. The relay decides what happens; the encoder only says how it is written.
 */
export interface StreamEncoder {
  /** A text delta ('' only for the first event, to get the headers out). */
  delta(text: string): string;
  toolCall(fragment: ToolCallFragment): string;
  /** The completed stream: the final event(s) and the end marker. */
  end(summary: StreamSummary): string;
  /** A failure after the first byte; `terminated`: the end marker follows (verification's stop). */
  error(failure: StreamFailure, terminated: boolean): string;
}

/** svc's own stream format (docs/gateway.md, "Streaming"). */
export function svcStreamEncoder(requestId: string): StreamEncoder {
  let index = 0;
  // A text event's fixed start, serialised once per stream (the bytes JSON.stringify of the whole event gives).
  const deltaHead = `data: {"request_id":${JSON.stringify(requestId)},"index":`;
  return {
    delta: (text) => `${deltaHead}${index++},"delta":${JSON.stringify(text)}}\n\n`,
    toolCall(fragment) {
      const toolCall: Record<string, unknown> = { index: fragment.index, arguments_delta: fragment.argumentsDelta };
      if (fragment.id !== undefined) toolCall.id = fragment.id;
      if (fragment.name !== undefined) toolCall.name = fragment.name;
      if (fragment.thoughtSignature !== undefined) toolCall.thought_signature = fragment.thoughtSignature;
      return sseLine({ request_id: requestId, index: index++, tool_call: toolCall });
    },
    end: (summary) =>
      sseLine({
        request_id: requestId,
        provider: summary.provider,
        model: summary.model,
        finish_reason: summary.finishReason,
        usage: summary.usage,
        cost_usd: summary.costUsd,
        latency_ms: summary.latencyMs,
        verification: summary.verification,
        response_filter: summary.responseFilter,
        done: true,
      }) + SSE_DONE,
    error(failure, terminated) {
      const error: Record<string, unknown> = { code: failure.code, message: failure.message };
      if (failure.details !== undefined) error.details = failure.details;
      if (failure.verification !== undefined) error.verification = failure.verification;
      return sseLine({ request_id: requestId, error }) + (terminated ? SSE_DONE : '');
    },
  };
}

export type StreamEnd = { kind: 'done'; event: Extract<StreamEvent, { type: 'done' }>; content: string } | { kind: 'error'; error: unknown; content: string } | { kind: 'aborted'; content: string };

/** A stream whose first event has arrived: failover is over, the client may now be answered. */
export interface OpenedStream {
  provider: string;
  model: string;
  served: ServedFacts;
  first: StreamEvent;
  rest: AsyncIterator<StreamEvent>;
  /** Call exactly once when the stream ended, failed or was abandoned. */
  finish(outcome: StreamEnd): { usage: TokenUsage; costUsd: number | null } | null;
  /** Restores PII placeholders across chunks (identity when the org did not opt in). */
  restore: { push(delta: string): string; flush(): string };
}

export interface StreamParts {
  attempts: Attempts;
  settlement: Settlement;
}

/**
 * Relays one admitted streamed completion. Throws (nothing sent yet, the HTTP layer answers with
 * a normal error) when no candidate yields a first event or the verifier cannot start; then
 * `owner.takeOver(context)` hands the response over, every outcome is written to the stream and
 * the promise resolves.
 */
export async function relayStream<C>(
  parts: StreamParts,
  prepared: PreparedCompletion,
  cancel: ClientCancel,
  guard: ResponseGuard | null,
  verifier: CompletionVerifier | null,
  body: CompletionBody,
  owner: { takeOver(context: C): StreamTarget; served(context: C, facts: ServedFacts): void },
  context: C,
): Promise<void> {
  const opened = await openStream(parts, prepared, cancel);
  owner.served(context, opened.served);
  // ---- verification hook, streams (issue #18): a hold-back guard between upstream deltas and the client.
  const verifying = verifier === null ? null : await verifier.stream({ orgId: prepared.caller.orgId, requestId: prepared.caller.requestId, body });
  await pipe(prepared, opened, owner.takeOver(context), cancel, guard, verifying);
}

async function openStream(parts: StreamParts, prepared: PreparedCompletion, signal: ClientCancel): Promise<OpenedStream> {
  const { attempts, settlement } = parts;
  let success: AttemptSuccess<FirstEvent>;
  try {
    success = await attempts.stream(prepared, signal);
  } catch (error) {
    await settlement.release(prepared);
    throw error;
  }
  const { candidate, value } = success;
  const restore = prepared.settings.piiRestore && prepared.redaction !== null;
  let finished = false;
  return {
    provider: candidate.provider,
    model: candidate.model,
    served: { provider: candidate.provider, model: candidate.model, passedOver: success.passedOver, attempts: success.attempts },
    first: value.first,
    rest: value.rest,
    restore: restore ? createStreamRestorer(prepared.redaction!.mapping) : { push: (delta) => delta, flush: () => '' },
    finish: (outcome) => {
      if (finished) return null;
      finished = true;
      const now = Date.now();
      if (outcome.kind === 'aborted') {
        // The client left mid-stream; what it was sent still counts (estimated), the rest of the reservation is released.
        attempts.streamEnded(success, 'aborted', now);
        settlement.accountEstimated(prepared, candidate, outcome.content);
        return null;
      }
      if (outcome.kind === 'error') {
        attempts.streamEnded(success, { error: outcome.error }, now);
        // The client received part of a completion: account for the estimated part it got.
        return settlement.accountEstimated(prepared, candidate, outcome.content);
      }
      attempts.succeeded(success, now);
      const usage = outcome.event.usage ?? estimateUsage(prepared.request.messages, outcome.content);
      return { usage, costUsd: settlement.account(prepared, candidate, outcome.event.model ?? candidate.model, usage) };
    },
  };
}

/**
 * Relays an opened stream to the client; failures after the first byte become an error event.
 *
 * One upstream read at a time: the events the provider's parser converted from one read are taken
 * together (`nextReady`, no async step per event), each delta still goes through the response
 * guard, PII restoring, the verifier and the encoder in order, and what they produce is written
 * with one `write` once the read's events are done (or before anything that waits: the verifier's
 * end, the response filter's end, a stop). The client receives the same bytes as when each event
 * was written on its own: a delta the response guard or the verifier stops is never encoded, and
 * what was encoded before it is written before the error event (src/gateway/relay-batched.test.ts
 * compares both on streams cut at every byte).
 *
 * Exported for that test; the gateway reaches it through `relayStream`.
 */
export async function pipe(prepared: PreparedCompletion, opened: OpenedStream, target: StreamTarget, cancel: ClientCancel, guard: ResponseGuard | null, verifying: StreamVerifier | null): Promise<void> {
  const writer = new SseWriter(target.raw);
  const encoder = target.encoder ?? svcStreamEncoder(prepared.caller.requestId);
  const rest: ReadyEventIterator = opened.rest;
  const nextReady = typeof rest.nextReady === 'function' ? rest.nextReady.bind(rest) : null;
  let content = '';
  let started = false;
  /** Events encoded and not yet written: those of the upstream read being relayed. */
  let pending = '';
  /** Writes what is pending; a promise only when the socket is full (back-pressure). */
  const flush = (): Promise<void> | null => {
    if (pending === '') return null;
    const text = pending;
    pending = '';
    if (started) return writer.write(text);
    started = true;
    return writer.start(target.headers, text);
  };
  const drain = async (): Promise<void> => {
    const full = flush();
    if (full !== null) await full;
  };
  let event = opened.first;
  /** Verification ended the stream: upstream cancelled (not the provider's fault), explicit error event with the verdict. */
  const stopForVerification = async (stop: VerifierStop): Promise<void> => {
    await drain();
    cancel.abort();
    await opened.rest.return?.().catch(() => undefined);
    opened.finish({ kind: 'aborted', content });
    pending += encoder.error({ code: stop.code, message: ERRORS[stop.code].message, verification: stop.verification }, true);
    await drain();
    writer.end();
  };
  try {
    for (;;) {
      if (writer.isClosed || cancel.aborted) throw new Error('client disconnected');
      if (event.type === 'delta') {
        content += event.text;
        guard?.push(event.text);
        let text = opened.restore.push(event.text);
        if (verifying !== null) {
          const checked = verifying.push(text);
          if (checked.stop !== null) return await stopForVerification(checked.stop);
          text = checked.release;
        }
        // The first event is written even when empty: it carries the headers out.
        if (text !== '' || (!started && pending === '')) pending += encoder.delta(text);
      } else if (event.type === 'tool_call_delta') {
        pending += encoder.toolCall(event);
      } else {
        let rest = opened.restore.flush();
        let verification: Record<string, unknown> | null = null;
        if (verifying !== null) {
          const flushed = verifying.push(rest);
          if (flushed.stop !== null) return await stopForVerification(flushed.stop);
          await drain();
          const ended = await verifying.end({ finishReason: event.finishReason, provider: opened.provider, model: event.model ?? opened.model });
          if (ended.stop !== null) return await stopForVerification(ended.stop);
          rest = flushed.release + ended.release;
          verification = ended.verification;
        }
        if (rest !== '') pending += encoder.delta(rest);
        let filtered: Record<string, unknown> | null;
        if (guard === null) filtered = responseFilter(prepared);
        else {
          await drain();
          filtered = await guard.finish(content, responseFilter(prepared));
        }
        const settled = opened.finish({ kind: 'done', event, content });
        const usage = settled?.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
        pending += encoder.end({
          provider: opened.provider,
          model: event.model ?? opened.model,
          finishReason: event.finishReason,
          usage: toPublicUsage(usage),
          costUsd: settled === null ? 0 : settled.costUsd,
          latencyMs: Math.round((performance.now() - prepared.startedAt) * 1000) / 1000,
          verification,
          responseFilter: filtered,
        });
        await drain();
        writer.end();
        return;
      }
      const ready = nextReady?.();
      if (ready !== undefined) {
        event = ready;
        continue;
      }
      await drain();
      const next = await opened.rest.next();
      if (next.done === true) throw new UpstreamError({ provider: opened.provider, status: null, code: 'network', providerCode: 'stream_ended_without_done' });
      event = next.value;
    }
  } catch (error) {
    // What was encoded before the failure reaches the client first, as it did event by event.
    await drain();
    if (cancel.aborted && isShuttingDown(cancel.reason) && !writer.isClosed) {
      // The server is stopping: settled like a stream the client left, then a final error event.
      await opened.rest.return?.().catch(() => undefined);
      opened.finish({ kind: 'aborted', content });
      const { error: shutdown } = shutdownErrorPayload(prepared.caller.requestId);
      pending += encoder.error(shutdown, false);
      await drain();
      writer.end();
      return;
    }
    if (writer.isClosed || cancel.aborted) {
      cancel.abort();
      await opened.rest.return?.().catch(() => undefined);
      opened.finish({ kind: 'aborted', content });
      writer.end();
      return;
    }
    if (error instanceof SvcError) {
      // The response filter ended the stream (a leak): the provider did nothing wrong, so the
      // stream is settled like one the client left (no breaker failure), then the error event.
      await opened.rest.return?.().catch(() => undefined);
      opened.finish({ kind: 'aborted', content });
      pending += encoder.error({ code: error.code, message: error.message }, false);
      await drain();
      writer.end();
      return;
    }
    opened.finish({ kind: 'error', error, content });
    const mapped = failureToError(error instanceof UpstreamError ? error : new UpstreamError({ provider: opened.provider, status: null, code: 'server', retryable: false, cause: error }), 1, 0);
    // A cut stream: held-back text is released only if it passes, and the error event carries the verdict.
    const ended = verifying === null ? null : await verifying.end({ finishReason: 'error', cut: true, provider: opened.provider, model: opened.model }).catch(() => null);
    if (ended !== null && ended.stop === null && ended.release !== '') pending += encoder.delta(ended.release);
    pending += encoder.error(ended === null ? { code: mapped.code, message: mapped.message } : { code: mapped.code, message: mapped.message, verification: ended.verification }, false);
    await drain();
    writer.end();
  }
}

/** The service's own server-sent-event stream on the raw Node response (exported for bench/stream-takeover-before-after.ts). */
export class SseWriter {
  private closed = false;

  constructor(private readonly raw: ServerResponse) {
    raw.once('close', () => {
      this.closed = true;
    });
  }

  get isClosed(): boolean {
    return this.closed || this.raw.destroyed;
  }

  /**
   * Sends the status line and headers together with the first payload. Node corks the socket on
   * a write until the end of the tick, so what the events of one upstream read produce (the first
   * event, text the guards released, the final event when the read held the stream's end) leaves
   * in one socket write, once those events were processed; the next read starts the next write.
   * A socket write is the dearest step of a relayed event (on loopback it carries the receiver's
   * TCP work): batched by arrival, a stream costs one per upstream read, not one per event. The
   * first payload used to be flushed at once (an uncork), one more write per stream, for a first
   * event that, behind verification's hold-back, carries no text (`delta: ""`, the headers'
   * carrier; docs/decisions.md, "Streaming round").
   */
  start(headers: Record<string, string | number | string[]>, first: string): Promise<void> | null {
    // The headers were handed over with the response (the take-over's own object): the stream's
    // are set on it, not on a copy (same order and values as a spread: a header already there
    // keeps its place and takes the stream's value).
    headers['content-type'] = 'text/event-stream; charset=utf-8';
    headers['cache-control'] = 'no-cache, no-transform';
    // No Connection header of svc's: Node answers keep-alive, or close (and closes after the
    // stream) when the client asked for it; a fixed `keep-alive` overrode the client's close.
    headers['x-accel-buffering'] = 'no';
    this.raw.writeHead(200, headers);
    return this.write(first);
  }

  /** Writes text; null when the socket can take more at once, else a promise that resolves when it can. */
  write(text: string): Promise<void> | null {
    if (this.isClosed || text === '') return null;
    if (this.raw.write(text)) return null;
    return new Promise((resolve) => {
      const done = () => {
        this.raw.off('drain', done);
        this.raw.off('close', done);
        resolve();
      };
      this.raw.on('drain', done);
      this.raw.on('close', done);
    });
  }

  end(text = ''): void {
    if (this.isClosed) return;
    this.raw.end(text);
  }
}
