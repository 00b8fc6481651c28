/**
 * Server-sent events from an upstream byte stream, via eventsource-parser. Yields each event as
 * soon as its terminating blank line arrives (no buffering beyond that). Bounded: an event larger
 * than MAX_EVENT_BYTES is an invalid upstream response, so a hostile upstream cannot make us
 * accumulate unbounded memory.
 */
import { createParser } from 'eventsource-parser';
import { UpstreamError } from '../contract.ts';

export interface SseEvent {
  /** The `event:` field, or undefined for unnamed events. */
  event: string | undefined;
  data: string;
}

const MAX_EVENT_BYTES = 4 * 1024 * 1024;

export async function* sseEvents(body: AsyncIterable<Uint8Array>, provider: string): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const pending: SseEvent[] = [];
  let buffered = 0;
  const parser = createParser({
    onEvent(event) {
      pending.push({ event: event.event, data: event.data });
    },
  });
  for await (const chunk of body) {
    const text = decoder.decode(chunk, { stream: true });
    buffered += text.length;
    parser.feed(text);
    if (pending.length > 0) buffered = 0;
    if (buffered > MAX_EVENT_BYTES) {
      throw new UpstreamError({ provider, status: null, code: 'invalid_response', retryable: false, providerCode: 'sse_event_too_large' });
    }
    while (pending.length > 0) yield pending.shift() as SseEvent;
  }
  parser.feed(decoder.decode());
  // A trailing event without its blank line is incomplete: eventsource-parser drops it, as the
  // SSE specification says; the provider parser then decides whether the stream ended cleanly.
  while (pending.length > 0) yield pending.shift() as SseEvent;
}
