/**
 * Writes the service's own server-sent-event stream to the raw Node response: every payload is
 * one `data: <json>` line plus a blank line, written as soon as it is produced (no buffering,
 * no compression; TCP_NODELAY is left on, Node's default), with back-pressure: when the socket
 * buffer is full the writer waits for 'drain' before taking the next upstream chunk.
 *
 * Chunk shapes (documented in docs/gateway.md):
 *   delta   { request_id, index, delta }
 *   tool    { request_id, index, tool_call: { index, id?, name?, arguments_delta, thought_signature? } }
 *   final   { request_id, provider, model, finish_reason, usage, cost_usd, latency_ms, response_filter, done: true }
 *   error   { request_id, error: { code, message, details? } }  — then the stream ends without [DONE]
 *           (shutdown: SERVICE_UNAVAILABLE with details.reason 'shutting_down', platform/streams.ts)
 *   end     data: [DONE]
 */
import type { ServerResponse } from 'node:http';

export const SSE_DONE = 'data: [DONE]\n\n';

export function sseLine(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

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
   * Sends the status line and headers together with the first payload (one write, one packet),
   * flushed at once. Node corks the socket on a write until the next tick, so without the uncork
   * the first chunk would wait while the rest of an upstream packet's events are processed (with
   * a fast upstream: the whole stream, final accounting included). Later writes made in the same
   * tick still leave together.
   */
  start(headers: Record<string, string | number | string[]>, first: string): Promise<void> {
    this.raw.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    const written = this.write(first);
    this.raw.uncork();
    return written;
  }

  /** Writes text; resolves when the socket can take more. */
  write(text: string): Promise<void> {
    if (this.isClosed || text === '') return Promise.resolve();
    if (this.raw.write(text)) return Promise.resolve();
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
