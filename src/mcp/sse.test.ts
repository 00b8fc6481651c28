import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { isShuttingDown, shutdownErrorPayload, ShuttingDownError } from '../platform/streams.ts';
import { relayEvents, serializeEvent, SseParser } from './sse.ts';

const codeOf = (error: unknown) => (error as { code?: string } | null)?.code;

describe('SSE parser', () => {
  it('parses events split at any byte, with CRLF, CR and LF line ends', () => {
    const stream = 'id: 1\r\nevent: message\r\ndata: {"a":1}\r\n\r\nid: 2\rdata: x\rdata: y\r\rid: 3\ndata: z\n\n';
    for (let cut = 1; cut < stream.length; cut++) {
      const parser = new SseParser();
      const events = [...parser.feed(stream.slice(0, cut)), ...parser.feed(stream.slice(cut))];
      expect(events).toEqual([
        { id: '1', event: 'message', data: '{"a":1}' },
        { id: '2', data: 'x\ny' },
        { id: '3', data: 'z' },
      ]);
    }
  });

  it('keeps an event that carries only an id (the resumption priming event) and comments', () => {
    const parser = new SseParser();
    expect(parser.feed(': keep-alive\n\nid: abc\ndata: \n\n')).toEqual([{ comments: [' keep-alive'] }, { id: 'abc', data: '' }]);
  });

  it('fails on an event whose repeated data lines without a blank line exceed the event cap', () => {
    const parser = new SseParser({ maxEventChars: 1_000 });
    let caught: unknown;
    try {
      for (let index = 0; index < 200; index++) parser.feed('data: 0123456789\n');
    } catch (error) {
      caught = error;
    }
    expect(codeOf(caught)).toBe('SSE_EVENT_TOO_LARGE');
  });

  it('accepts any number of events under the cap when each ends with a blank line', () => {
    const parser = new SseParser({ maxEventChars: 1_000 });
    let count = 0;
    for (let index = 0; index < 500; index++) count += parser.feed('data: 0123456789\ndata: abc\n\n').length;
    expect(count).toBe(500);
  });

  it('fails on a single unfinished line that grows past the event cap chunk by chunk', () => {
    const parser = new SseParser({ maxEventChars: 1_000 });
    expect(() => {
      for (let index = 0; index < 200; index++) parser.feed('data: 0123456789');
    }).toThrow(expect.objectContaining({ code: 'SSE_EVENT_TOO_LARGE' }));
  });

  it('parses a long data line that arrives in many small chunks exactly', () => {
    const parser = new SseParser();
    const payload = 'x'.repeat(50_000);
    const stream = `id: 7\ndata: ${payload}\n\n`;
    const events = [];
    for (let offset = 0; offset < stream.length; offset += 7) events.push(...parser.feed(stream.slice(offset, offset + 7)));
    expect(events).toEqual([{ id: '7', data: payload }]);
  });

  it('serializes what it parsed back to an equivalent event', () => {
    const event = { id: '9', event: 'message', data: 'line 1\nline 2', retry: '1000' };
    expect(new SseParser().feed(serializeEvent(event))).toEqual([event]);
  });
});

describe('event relay', () => {
  it('transforms data in order and passes ids through', async () => {
    const source = Readable.from(['id: 1\ndata: a\n\n', 'id: 2\nda', 'ta: b\n\n']);
    const out = relayEvents(source, async (data) => data.toUpperCase(), { prefix: [{ event: 'message', data: 'first' }] });
    let text = '';
    for await (const chunk of out) text += String(chunk);
    expect(text).toBe('event: message\ndata: first\n\nid: 1\ndata: A\n\nid: 2\ndata: B\n\n');
  });

  it('fails the relayed stream when an upstream event exceeds the cap', async () => {
    async function* flood() {
      yield 'id: 1\ndata: ok\n\n';
      for (let index = 0; index < 20_000; index++) yield `data: ${'y'.repeat(1_000)}\n`;
    }
    const out = relayEvents(flood(), async (data) => data);
    let caught: unknown;
    try {
      for await (const chunk of out) void chunk;
    } catch (error) {
      caught = error;
    }
    expect(codeOf(caught)).toBe('SSE_EVENT_TOO_LARGE');
  });
});

describe('event relay backpressure', () => {
  it('reads no further from the upstream while the client does not read, and delivers everything once it does', async () => {
    let produced = 0;
    async function* upstream() {
      for (let index = 0; index < 2_000; index++) {
        produced++;
        yield `id: ${index}\ndata: ${'z'.repeat(1_000)}\n\n`;
      }
    }
    const out = relayEvents(upstream(), async (data) => data);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Nothing read yet: the relay stopped after filling the reader's buffer, far short of 2,000 events.
    expect(produced).toBeLessThan(100);
    const ids: string[] = [];
    const parser = new SseParser();
    for await (const chunk of out) for (const event of parser.feed(String(chunk))) ids.push(event.id!);
    expect(ids).toHaveLength(2_000);
    expect(ids.at(-1)).toBe('1999');
  });

  it('stops reading the upstream when the client is gone', async () => {
    let finished = false;
    let produced = 0;
    async function* upstream() {
      try {
        for (let index = 0; index < 2_000; index++) {
          produced++;
          yield `data: ${'z'.repeat(1_000)}\n\n`;
        }
      } finally {
        finished = true;
      }
    }
    const out = relayEvents(upstream(), async (data) => data);
    await new Promise((resolve) => setTimeout(resolve, 20));
    out.destroy();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(finished).toBe(true);
    expect(produced).toBeLessThan(100);
  });
});

describe('SSE relay at shutdown', () => {
  async function* upstream(signal: AbortSignal): AsyncGenerator<string> {
    yield 'id: 1\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n';
    // An upstream that never ends by itself: only the abort stops it (as undici's body does).
    await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
  }

  const read = (stream: Readable) =>
    new Promise<{ text: string; error: unknown }>((resolve) => {
      let text = '';
      stream.on('data', (chunk: Buffer | string) => (text += chunk.toString()));
      stream.once('end', () => resolve({ text, error: null }));
      stream.once('error', (error) => resolve({ text, error }));
    });

  it('ends a stream aborted by shutdown with a final error event instead of destroying it', async () => {
    const controller = new AbortController();
    const output = relayEvents(upstream(controller.signal), async (data) => data, {
      finalEvent: (error) => (isShuttingDown(error) ? { event: 'error', data: JSON.stringify(shutdownErrorPayload('req-1')) } : null),
    });
    const reading = read(output);
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort(new ShuttingDownError());
    const { text, error } = await reading;
    expect(error).toBeNull();
    const last = new SseParser().feed(text).at(-1)!;
    expect(last.event).toBe('error');
    expect(JSON.parse(last.data!)).toMatchObject({ request_id: 'req-1', error: { code: 'SERVICE_UNAVAILABLE', details: { reason: 'shutting_down' } } });
  });

  it('still fails the stream when the upstream fails for any other reason', async () => {
    const controller = new AbortController();
    const output = relayEvents(upstream(controller.signal), async (data) => data, {
      finalEvent: (error) => (isShuttingDown(error) ? { event: 'error', data: '{}' } : null),
    });
    const reading = read(output);
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort(new Error('client went away'));
    expect((await reading).error).toBeInstanceOf(Error);
  });
});
