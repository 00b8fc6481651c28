/**
 * The stream relay as it was before it took one upstream read's events together (base 07306fb),
 * kept verbatim as the reference that src/gateway/relay-batched.test.ts compares the relay with,
 * and that bench/stream-relay-before-after.ts measures it against. Not used by the service.
 */
import type { ServerResponse } from 'node:http';
import type { ResponseGuard } from '../../src/detection/index.ts';
import type { PreparedCompletion } from '../../src/gateway/admission.ts';
import { failureToError } from '../../src/gateway/attempts.ts';
import type { ClientCancel } from '../../src/gateway/cancel.ts';
import { UpstreamError } from '../../src/gateway/contract.ts';
import { svcStreamEncoder, type OpenedStream, type StreamTarget } from '../../src/gateway/relay.ts';
import { responseFilter, toPublicUsage } from '../../src/gateway/settlement.ts';
import type { StreamVerifier, VerifierStop } from '../../src/gateway/verifier.ts';
import { ERRORS, SvcError } from '../../src/platform/errors.ts';
import { isShuttingDown, shutdownErrorPayload } from '../../src/platform/streams.ts';

class SseWriterReference {
  private closed = false;

  constructor(private readonly raw: ServerResponse) {
    raw.once('close', () => {
      this.closed = true;
    });
  }

  get isClosed(): boolean {
    return this.closed || this.raw.destroyed;
  }

  start(headers: Record<string, string | number | string[]>, first: string): Promise<void> | null {
    headers['content-type'] = 'text/event-stream; charset=utf-8';
    headers['cache-control'] = 'no-cache, no-transform';
    headers['x-accel-buffering'] = 'no';
    this.raw.writeHead(200, headers);
    return this.write(first);
  }

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

export async function pipeReference(prepared: PreparedCompletion, opened: OpenedStream, target: StreamTarget, cancel: ClientCancel, guard: ResponseGuard | null, verifying: StreamVerifier | null): Promise<void> {
  const writer = new SseWriterReference(target.raw);
  const encoder = target.encoder ?? svcStreamEncoder(prepared.caller.requestId);
  let content = '';
  let started = false;
  const send = (text: string): Promise<void> | null => {
    if (started) return writer.write(text);
    started = true;
    return writer.start(target.headers, text);
  };
  let event = opened.first;
  const stopForVerification = async (stop: VerifierStop): Promise<void> => {
    cancel.abort();
    await opened.rest.return?.().catch(() => undefined);
    opened.finish({ kind: 'aborted', content });
    await send(encoder.error({ code: stop.code, message: ERRORS[stop.code].message, verification: stop.verification }, true));
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
        if (text !== '' || !started) {
          const full = send(encoder.delta(text));
          if (full !== null) await full;
        }
      } else if (event.type === 'tool_call_delta') {
        const full = send(encoder.toolCall(event));
        if (full !== null) await full;
      } else {
        let rest = opened.restore.flush();
        let verification: Record<string, unknown> | null = null;
        if (verifying !== null) {
          const flushed = verifying.push(rest);
          if (flushed.stop !== null) return await stopForVerification(flushed.stop);
          const ended = await verifying.end({ finishReason: event.finishReason, provider: opened.provider, model: event.model ?? opened.model });
          if (ended.stop !== null) return await stopForVerification(ended.stop);
          rest = flushed.release + ended.release;
          verification = ended.verification;
        }
        if (rest !== '') await send(encoder.delta(rest));
        const filtered = guard === null ? responseFilter(prepared) : await guard.finish(content, responseFilter(prepared));
        const settled = opened.finish({ kind: 'done', event, content });
        const usage = settled?.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
        await send(
          encoder.end({
            provider: opened.provider,
            model: event.model ?? opened.model,
            finishReason: event.finishReason,
            usage: toPublicUsage(usage),
            costUsd: settled === null ? 0 : settled.costUsd,
            latencyMs: Math.round((performance.now() - prepared.startedAt) * 1000) / 1000,
            verification,
            responseFilter: filtered,
          }),
        );
        writer.end();
        return;
      }
      const next = await opened.rest.next();
      if (next.done === true) throw new UpstreamError({ provider: opened.provider, status: null, code: 'network', providerCode: 'stream_ended_without_done' });
      event = next.value;
    }
  } catch (error) {
    if (cancel.aborted && isShuttingDown(cancel.reason) && !writer.isClosed) {
      await opened.rest.return?.().catch(() => undefined);
      opened.finish({ kind: 'aborted', content });
      const { error: shutdown } = shutdownErrorPayload(prepared.caller.requestId);
      await send(encoder.error(shutdown, false));
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
      await opened.rest.return?.().catch(() => undefined);
      opened.finish({ kind: 'aborted', content });
      await send(encoder.error({ code: error.code, message: error.message }, false));
      writer.end();
      return;
    }
    opened.finish({ kind: 'error', error, content });
    const mapped = failureToError(error instanceof UpstreamError ? error : new UpstreamError({ provider: opened.provider, status: null, code: 'server', retryable: false, cause: error }), 1, 0);
    const ended = verifying === null ? null : await verifying.end({ finishReason: 'error', cut: true, provider: opened.provider, model: opened.model }).catch(() => null);
    if (ended !== null && ended.stop === null && ended.release !== '') await send(encoder.delta(ended.release));
    await send(encoder.error(ended === null ? { code: mapped.code, message: mapped.message } : { code: mapped.code, message: mapped.message, verification: ended.verification }, false));
    writer.end();
  }
}
