import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
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
