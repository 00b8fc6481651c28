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
import { UpstreamError, type StreamEvent } from '../contract.ts';

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

/**
 * How one provider's upstream events become stream events (one object per stream: `streamEvents`).
 * The events are SSE events for most providers, decoded event-stream messages for Bedrock.
 */
export interface StreamConverter<E = SseEvent> {
  /** Turns one upstream event into stream events pushed onto `out`; true once the stream is complete (nothing after it is read). May throw (an invalid chunk). */
  step(event: E, out: StreamEvent[]): boolean;
  /** The last event when the upstream closed without completing; throws when that is a cut stream. */
  end(): StreamEvent;
}

/**
 * A stream's event iterator that can also hand over, without an async step, the events it already
 * holds: those converted from the upstream read its last `next()` took (what the relay takes
 * together, src/gateway/relay.ts). `nextReady()` returns the event `next()` would resolve with at
 * once, or undefined when `next()` has to wait for the upstream, end, or fail; it never reads,
 * closes or fails itself.
 */
export interface ReadyEventIterator extends AsyncIterator<StreamEvent> {
  nextReady?(): StreamEvent | undefined;
}

/**
 * A provider's stream events from its SSE batches, one batch converted at a time (`converter`).
 * What the adapters' async generators did event by event, without their cost per event: a
 * generator's `yield` awaits the value and resumes the generator on every `next()`, where the
 * events of one upstream read are all there at once (issue #39 item 2, speed-stream8 round; every
 * adapter since speed-stream9). A
 * class, not closures: a stream makes one object, not a dozen functions.
 *
 * The same sequence as the generator: events in order; a failure converting an event (an invalid
 * chunk, an upstream error event) is thrown after the events before it were taken, and ends the
 * stream; the next upstream read is started only once the previous one's events were all taken.
 * `return()` (the consumer leaving) closes the batches as a generator's `for await` did, and so
 * does asking again after the completing event; a step's failure closes them too; batches never
 * read are never opened or closed (src/gateway/streaming/streaming.test.ts compares the two).
 */
export function streamEvents<E>(batches: AsyncIterable<E[]>, converter: StreamConverter<E>): AsyncIterableIterator<StreamEvent> & ReadyEventIterator {
  return new ConvertedEvents(batches, converter);
}

class ConvertedEvents<E> implements AsyncIterableIterator<StreamEvent>, ReadyEventIterator {
  /** Taken at the first read, as a generator's `for await` did. */
  private source: AsyncIterator<E[]> | null = null;
  private queue: StreamEvent[] = [];
  private taken = 0;
  private failure: { error: unknown } | null = null;
  /** open: more reads to come; complete: the completing event was converted (the batches are still to be closed); closed: nothing more. */
  private state: 'open' | 'complete' | 'closed' = 'open';

  constructor(
    private readonly batches: AsyncIterable<E[]>,
    private readonly converter: StreamConverter<E>,
  ) {}

  [Symbol.asyncIterator](): AsyncIterableIterator<StreamEvent> {
    return this;
  }

  /** An event of the read already converted costs no async step of its own. */
  next(): Promise<IteratorResult<StreamEvent>> {
    return this.taken < this.queue.length ? Promise.resolve({ done: false, value: this.queue[this.taken++]! }) : this.pull();
  }

  nextReady(): StreamEvent | undefined {
    return this.taken < this.queue.length ? this.queue[this.taken++] : undefined;
  }

  async return(): Promise<IteratorResult<StreamEvent>> {
    this.queue = [];
    this.failure = null;
    if (this.state !== 'closed') {
      this.state = 'closed';
      await this.close();
    }
    return { done: true, value: undefined };
  }

  private async close(): Promise<void> {
    await this.source?.return?.().catch(() => undefined);
  }

  private async pull(): Promise<IteratorResult<StreamEvent>> {
    for (;;) {
      if (this.taken < this.queue.length) return { done: false, value: this.queue[this.taken++]! };
      if (this.failure !== null) {
        const { error } = this.failure;
        this.failure = null;
        const wasOpen = this.state === 'open';
        this.state = 'closed';
        if (wasOpen) await this.close();
        throw error;
      }
      if (this.state === 'closed') return { done: true, value: undefined };
      if (this.state === 'complete') {
        this.state = 'closed';
        await this.close();
        return { done: true, value: undefined };
      }
      let next: IteratorResult<E[]>;
      try {
        next = await (this.source ??= this.batches[Symbol.asyncIterator]()).next();
      } catch (error) {
        this.state = 'closed';
        throw error;
      }
      this.queue = [];
      this.taken = 0;
      if (next.done === true) {
        this.state = 'closed';
        try {
          this.queue.push(this.converter.end());
        } catch (error) {
          this.failure = { error };
        }
        continue;
      }
      for (const event of next.value) {
        try {
          if (this.converter.step(event, this.queue)) {
            this.state = 'complete';
            break;
          }
        } catch (error) {
          this.failure = { error };
          break;
        }
      }
    }
  }
}
