/**
 * Incremental server-sent-events relay: parses an upstream event stream as it arrives, hands
 * each event's data to an asynchronous transform, and writes the events out in order with their
 * id, event name and retry fields unchanged. Nothing is buffered beyond the event being parsed,
 * so progress notifications and long streams flow through as they come. Events that carry only an
 * id (the SDK's resumption priming event) are relayed as they are.
 */
import { PassThrough, type Readable } from 'node:stream';

export interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comments?: string[];
}

/** Largest single event accepted (a line-less flood cannot grow memory without bound). */
const MAX_EVENT_CHARS = 16 * 1024 * 1024;

export function serializeEvent(event: SseEvent): string {
  let out = '';
  for (const comment of event.comments ?? []) out += `:${comment}\n`;
  if (event.event !== undefined) out += `event: ${event.event}\n`;
  if (event.id !== undefined) out += `id: ${event.id}\n`;
  if (event.retry !== undefined) out += `retry: ${event.retry}\n`;
  if (event.data !== undefined) for (const line of event.data.split('\n')) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** Splits a text stream into SSE events (WHATWG field parsing; CR, LF and CRLF line ends). */
export class SseParser {
  #buffer = '';
  #event: SseEvent = {};
  #hasFields = false;
  #pendingCr = false;

  feed(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let chunk = text;
    if (this.#pendingCr && chunk.startsWith('\n')) chunk = chunk.slice(1);
    this.#pendingCr = false;
    this.#buffer += chunk;
    if (this.#buffer.length > MAX_EVENT_CHARS) throw new Error('SSE event too large');
    let start = 0;
    for (let index = 0; index < this.#buffer.length; index++) {
      const char = this.#buffer.charCodeAt(index);
      if (char !== 10 && char !== 13) continue;
      const line = this.#buffer.slice(start, index);
      if (char === 13) {
        if (index + 1 < this.#buffer.length) {
          if (this.#buffer.charCodeAt(index + 1) === 10) index++;
        } else {
          this.#pendingCr = true;
        }
      }
      start = index + 1;
      this.#line(line, events);
    }
    this.#buffer = this.#buffer.slice(start);
    return events;
  }

  #line(line: string, events: SseEvent[]): void {
    if (line === '') {
      if (this.#hasFields) events.push(this.#event);
      this.#event = {};
      this.#hasFields = false;
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
 * `prefix` events are written first (answers svc produced itself for part of a batch).
 */
export function relayEvents(
  source: AsyncIterable<Uint8Array | string>,
  transform: (data: string) => Promise<string>,
  options: { prefix?: readonly SseEvent[]; onEnd?: () => void } = {},
): Readable {
  const output = new PassThrough();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  const write = async (text: string) => {
    if (!output.write(text)) await new Promise<void>((resolve) => output.once('drain', resolve));
  };
  void (async () => {
    for (const event of options.prefix ?? []) await write(serializeEvent(event));
    for await (const chunk of source) {
      if (output.destroyed) break;
      const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      for (const event of parser.feed(text)) {
        const data = event.data === undefined || event.data === '' ? event.data : await transform(event.data);
        await write(serializeEvent({ ...event, ...(data === undefined ? {} : { data }) }));
      }
    }
    output.end();
  })()
    .catch((error: unknown) => output.destroy(error instanceof Error ? error : new Error(String(error))))
    .finally(() => options.onEnd?.());
  return output;
}
