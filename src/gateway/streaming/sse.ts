/**
 * Server-sent events from an upstream byte stream, via eventsource-parser, handed on one batch per
 * upstream read: the events that read completed, as soon as it arrived (no buffering beyond
 * that). A provider's parser loops over a batch synchronously, so an async step is paid per read,
 * not per event (a fast upstream's whole answer often arrives in one read). Bounded: an event
 * larger than MAX_EVENT_BYTES is an invalid upstream response, so a hostile upstream cannot make
 * us accumulate unbounded memory.
 *
 * The bytes are decoded by Node's StringDecoder (native, a few hundred ns per stream), not
 * TextDecoder (an ICU converter made per stream and a JavaScript wrapper per read: ~3× the CPU,
 * issue #39, speed-stream6 round). The text is the same: invalid sequences become U+FFFD as with
 * TextDecoder, and a byte-order mark at the stream's start is dropped here as TextDecoder drops
 * it; only when an invalid sequence straddles two reads may its U+FFFD come one read later or
 * earlier, never a line break, so the events and the batches they arrive in are the same
 * (src/gateway/streaming/streaming.test.ts compares both on random bytes).
 */
import { StringDecoder } from 'node:string_decoder';
import { createParser } from 'eventsource-parser';
import { UpstreamError } from '../contract.ts';

export interface SseEvent {
  /** The `event:` field, or undefined for unnamed events. */
  event: string | undefined;
  data: string;
}

const MAX_EVENT_BYTES = 4 * 1024 * 1024;

/** The events of each upstream read, in order (a read that completes none yields nothing). */
export async function* sseBatches(body: AsyncIterable<Uint8Array>, provider: string): AsyncGenerator<SseEvent[]> {
  const decoder = new StringDecoder('utf8');
  /** No text decoded yet: a leading byte-order mark is still to be dropped. */
  let atStart = true;
  const decoded = (text: string): string => {
    if (!atStart || text.length === 0) return text;
    atStart = false;
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  };
  let batch: SseEvent[] = [];
  let buffered = 0;
  const parser = createParser({
    onEvent(event) {
      batch.push({ event: event.event, data: event.data });
    },
  });
  for await (const chunk of body) {
    const text = decoded(decoder.write(chunk));
    buffered += text.length;
    parser.feed(text);
    if (batch.length > 0) buffered = 0;
    if (buffered > MAX_EVENT_BYTES) {
      throw new UpstreamError({ provider, status: null, code: 'invalid_response', retryable: false, providerCode: 'sse_event_too_large' });
    }
    if (batch.length > 0) {
      const events = batch;
      batch = [];
      yield events;
    }
  }
  parser.feed(decoded(decoder.end()));
  // A trailing event without its blank line is incomplete: eventsource-parser drops it, as the
  // SSE specification says; the provider parser then decides whether the stream ended cleanly.
  if (batch.length > 0) yield batch;
}
