import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { relayEvents, serializeEvent, SseParser } from './sse.ts';

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
});
