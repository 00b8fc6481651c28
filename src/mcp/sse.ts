/**
 * Incremental server-sent-events relay: parses an upstream event stream as it arrives, hands
 * each event's data to an asynchronous transform, and writes the events out in order with their
 * id, event name and retry fields unchanged. Nothing is held beyond the upstream chunk being
 * relayed (its complete events go out together, in one write), so progress notifications and
 * long streams flow through as they come. Events that carry only an
 * id (the SDK's resumption priming event) are relayed as they are.
 */
import { Readable } from 'node:stream';
import { shutdownErrorPayload } from '../platform/streams.ts';

export interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comments?: string[];
}

/** Largest single event accepted, all its lines counted (a flood cannot grow memory without bound). */
const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/** An upstream event larger than the parser accepts: the stream fails with this (code SSE_EVENT_TOO_LARGE). */
/** The last event of a stream that shutdown ends: `error` with SERVICE_UNAVAILABLE, reason shutting_down. */
export function shutdownEvent(requestId: string): SseEvent {
  return { event: 'error', data: JSON.stringify(shutdownErrorPayload(requestId)) };
}

export class SseEventTooLargeError extends Error {
  readonly code = 'SSE_EVENT_TOO_LARGE';
  constructor(limit: number) {
    super(`SSE event larger than ${limit} characters`);
    this.name = 'SseEventTooLargeError';
  }
}

export function serializeEvent(event: SseEvent): string {
  let out = '';
  for (const comment of event.comments ?? []) out += `:${comment}\n`;
  if (event.event !== undefined) out += `event: ${event.event}\n`;
  if (event.id !== undefined) out += `id: ${event.id}\n`;
  if (event.retry !== undefined) out += `retry: ${event.retry}\n`;
  if (event.data !== undefined) for (const line of event.data.split('\n')) out += `data: ${line}\n`;
  return `${out}\n`;
}

/**
 * Splits a text stream into SSE events (WHATWG field parsing; CR, LF and CRLF line ends). Each
 * chunk is scanned once (the unfinished line is kept as parts, not rescanned), and the event
 * being parsed, every line of it and the unfinished line counted, is capped at `maxEventChars`.
 */
export class SseParser {
  readonly #maxEventChars: number;
  /** The unfinished line, in the chunks it came in. */
  #partial: string[] = [];
  #partialChars = 0;
  /** Characters of the lines of the event being parsed. */
  #eventChars = 0;
  #event: SseEvent = {};
  #hasFields = false;
  #pendingCr = false;

  constructor(options: { maxEventChars?: number } = {}) {
    this.#maxEventChars = options.maxEventChars ?? MAX_EVENT_CHARS;
  }

  feed(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let chunk = text;
    if (this.#pendingCr && chunk.startsWith('\n')) chunk = chunk.slice(1);
    this.#pendingCr = false;
    let start = 0;
    for (let index = 0; index < chunk.length; index++) {
      const char = chunk.charCodeAt(index);
      if (char !== 10 && char !== 13) continue;
      let line = chunk.slice(start, index);
      if (this.#partial.length > 0) {
        line = this.#partial.join('') + line;
        this.#partial = [];
        this.#partialChars = 0;
      }
      if (char === 13) {
        if (index + 1 < chunk.length) {
          if (chunk.charCodeAt(index + 1) === 10) index++;
        } else {
          this.#pendingCr = true;
        }
      }
      start = index + 1;
      this.#eventChars += line.length + 1;
      if (this.#eventChars > this.#maxEventChars) throw new SseEventTooLargeError(this.#maxEventChars);
      this.#line(line, events);
    }
    if (start < chunk.length) {
      const rest = chunk.slice(start);
      this.#partial.push(rest);
      this.#partialChars += rest.length;
      if (this.#eventChars + this.#partialChars > this.#maxEventChars) throw new SseEventTooLargeError(this.#maxEventChars);
    }
    return events;
  }

  #line(line: string, events: SseEvent[]): void {
    if (line === '') {
      if (this.#hasFields) events.push(this.#event);
      this.#event = {};
      this.#hasFields = false;
      this.#eventChars = 0;
      return;
    }
    this.#hasFields = true;
    const colon = line.indexOf(':');
    if (colon === 0) {
      (this.#event.comments ??= []).push(line.slice(1));
      return;
    }
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.#event.data = this.#event.data === undefined ? value : `${this.#event.data}\n${value}`;
    else if (field === 'id') this.#event.id = value;
    else if (field === 'event') this.#event.event = value;
    else if (field === 'retry') this.#event.retry = value;
  }
}

/**
 * Relays `source` (upstream body chunks) to the returned stream, transforming each event's data.
 * `prefix` events are written first (answers svc produced itself for part of a batch). The output
 * is a plain Readable the relay pushes into (no intermediate Transform): a chunk's events reach
 * the client's socket in the same tick they are ready, and the relay waits only when the client
 * reads slower than the upstream writes (backpressure) or when the client is gone (it stops).
 */
export function relayEvents(
  source: AsyncIterable<Uint8Array | string>,
  transform: (data: string) => Promise<string>,
  options: {
    prefix?: readonly SseEvent[];
    onEnd?: () => void;
    /**
     * Called when the source fails (upstream gone, an event over the size limit, shutdown): the
     * event or events returned are written last and the stream ends cleanly (an empty list: a
     * clean end alone); null destroys it.
     */
    finalEvent?: (error: unknown) => SseEvent | readonly SseEvent[] | null;
  } = {},
): Readable {
  /** Resumes the relay once the reader wants more (or is gone). */
  let resume: (() => void) | null = null;
  const wake = () => {
    const next = resume;
    resume = null;
    next?.();
  };
  const output = new Readable({ read: wake });
  output.once('close', wake);
  const decoder = new TextDecoder();
  const parser = new SseParser();
  /** Pushes text out; resolves at once unless the reader's buffer is full. */
  const write = (text: string): Promise<void> | undefined => {
    if (output.destroyed || output.push(text)) return undefined;
    return new Promise<void>((resolve) => {
      resume = resolve;
    });
  };
  void (async () => {
    for (const event of options.prefix ?? []) await write(serializeEvent(event));
    for await (const chunk of source) {
      if (output.destroyed) break;
      const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      // The events of one chunk go out in one write (one socket write, one read for the client).
      let out = '';
      for (const event of parser.feed(text)) {
        const data = event.data === undefined || event.data === '' ? event.data : await transform(event.data);
        out += serializeEvent(data === event.data ? event : { ...event, data });
      }
      if (out !== '') {
        const full = write(out);
        if (full !== undefined) await full;
      }
    }
    if (!output.destroyed) output.push(null);
  })()
    .catch((error: unknown) => {
      const last = output.destroyed ? null : (options.finalEvent?.(error) ?? null);
      if (last !== null) {
        const events: readonly SseEvent[] = Array.isArray(last) ? last : [last as SseEvent];
        if (events.length > 0) output.push(events.map(serializeEvent).join(''));
        output.push(null);
      } else output.destroy(error instanceof Error ? error : new Error(String(error)));
    })
    .finally(() => options.onEnd?.());
  return output;
}
