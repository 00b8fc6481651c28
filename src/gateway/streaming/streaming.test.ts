import { createParser } from 'eventsource-parser';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeEvent } from '../../../test/fakes/providers/protocols/bedrock.ts';
import { UpstreamError, type StreamEvent } from '../contract.ts';
import { awsEventMessages } from './aws-event-stream.ts';
import { sseBatches, streamEvents, type SseEvent } from './sse.ts';

async function* pieces(bytes: Uint8Array, cuts: number[]): AsyncGenerator<Uint8Array> {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  let start = 0;
  for (const point of points) {
    if (point > start) yield bytes.subarray(start, point);
    start = Math.max(start, point);
  }
  if (start < bytes.length) yield bytes.subarray(start);
}

async function all<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** The events of an SSE byte stream, in order, whatever the batches. */
async function sseEvents(body: AsyncIterable<Uint8Array>, provider: string): Promise<SseEvent[]> {
  return (await all(sseBatches(body, provider))).flat();
}

const SSE_TEXT = 'event: message_start\ndata: {"a":"héllo 👋"}\n\n: comment\n\ndata: {"b":"line"}\r\n\r\nevent: x\ndata: one\ndata: two\n\n';
const SSE_EXPECTED = [
  { event: 'message_start', data: '{"a":"héllo 👋"}' },
  { event: undefined, data: '{"b":"line"}' },
  { event: 'x', data: 'one\ntwo' },
];

describe('sseBatches', () => {
  it('yields the same events whatever the chunk boundaries, including inside multi-byte characters', async () => {
    const bytes = new TextEncoder().encode(SSE_TEXT);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { maxLength: 12 }), async (cuts) => {
        expect(await sseEvents(pieces(bytes, cuts), 'test')).toEqual(SSE_EXPECTED);
      }),
      { numRuns: 200 },
    );
  });

  it('hands on the events one read completes together, and each as soon as its read arrived', async () => {
    const bytes = new TextEncoder().encode(SSE_TEXT);
    // The first read ends inside the second event; the second holds the rest.
    const cut = SSE_TEXT.indexOf('{"b"') + 3;
    const batches = await all(sseBatches(pieces(bytes, [new TextEncoder().encode(SSE_TEXT.slice(0, cut)).length]), 'test'));
    expect(batches).toEqual([SSE_EXPECTED.slice(0, 1), SSE_EXPECTED.slice(1)]);
  });

  it('hands on the same events in the same batches as a TextDecoder would, whatever the bytes: byte-order marks, invalid sequences and characters cut between reads', async () => {
    // The reference: WHATWG TextDecoder (U+FFFD for invalid bytes, a leading BOM dropped) feeding
    // the same parser, batched per read as sseBatches does: the decoding sseBatches used before.
    const reference = (reads: Uint8Array[]): SseEvent[][] => {
      const decoder = new TextDecoder();
      const batches: SseEvent[][] = [];
      let batch: SseEvent[] = [];
      const parser = createParser({ onEvent: (event) => batch.push({ event: event.event, data: event.data }) });
      const flush = () => {
        if (batch.length > 0) batches.push(batch);
        batch = [];
      };
      for (const read of reads) {
        parser.feed(decoder.decode(read, { stream: true }));
        flush();
      }
      parser.feed(decoder.decode());
      flush();
      return batches;
    };
    const encode = (text: string) => [...new TextEncoder().encode(text)];
    // Pieces of an SSE stream: framing, text, multi-byte characters, a BOM, and invalid or cut sequences.
    const piece = fc.constantFrom(
      encode('data: '),
      encode('event: x\n'),
      encode('\n'),
      encode('\r\n'),
      encode('\n\n'),
      encode('{"a":"b"}'),
      encode('é'),
      encode('€'),
      encode('👋'),
      [0xef, 0xbb, 0xbf],
      [0x80],
      [0xc3],
      [0xe2, 0x82],
      [0xf0, 0x9f],
      [0xff],
      [0xed, 0xa0, 0x80],
      [0xc0, 0xaf],
      [0xf4, 0x90, 0x80, 0x80],
    );
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(piece, { maxLength: 40 }), fc.array(fc.nat(), { maxLength: 12 }), async (bom, parts, cuts) => {
        const bytes = new Uint8Array([...(bom ? [0xef, 0xbb, 0xbf] : []), ...encode('data: '), ...parts.flat(), ...encode('\n\n')]);
        const reads: Uint8Array[] = [];
        for await (const read of pieces(bytes, cuts)) reads.push(read);
        expect(await all(sseBatches(pieces(bytes, cuts), 'test'))).toStrictEqual(reference(reads));
      }),
      { numRuns: 2_000 },
    );
  });

  it('drops a final event that lacks its terminating blank line', async () => {
    const bytes = new TextEncoder().encode('data: complete\n\ndata: cut');
    expect(await sseEvents(pieces(bytes, []), 'test')).toEqual([{ event: undefined, data: 'complete' }]);
  });

  it('refuses an event larger than the bound', async () => {
    async function* huge(): AsyncGenerator<Uint8Array> {
      const block = new TextEncoder().encode('x'.repeat(1024 * 1024));
      yield new TextEncoder().encode('data: ');
      for (let index = 0; index < 6; index += 1) yield block;
    }
    await expect(sseEvents(huge(), 'test')).rejects.toMatchObject({ code: 'invalid_response', providerCode: 'sse_event_too_large' });
  });
});

describe('awsEventMessages', () => {
  const frames = [encodeEvent('messageStart', { role: 'assistant' }), encodeEvent('contentBlockDelta', { delta: { text: 'hé 👋' } }), encodeEvent('metadata', { usage: {} })];
  const joined = new Uint8Array(frames.reduce((sum, frame) => sum + frame.length, 0));
  let offset = 0;
  for (const frame of frames) {
    joined.set(frame, offset);
    offset += frame.length;
  }

  it('decodes the same messages whatever the chunk boundaries', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { maxLength: 12 }), async (cuts) => {
        const messages = await all(awsEventMessages(pieces(joined, cuts), 'bedrock'));
        expect(messages.map((message) => message.type)).toEqual(['messageStart', 'contentBlockDelta', 'metadata']);
        expect(JSON.parse(messages[1]?.payload ?? '')).toEqual({ delta: { text: 'hé 👋' } });
      }),
      { numRuns: 200 },
    );
  });

  it('rejects a frame whose checksum does not match', async () => {
    const corrupted = new Uint8Array(frames[1] as Uint8Array);
    const position = corrupted.length - 6;
    corrupted[position] = (corrupted[position] ?? 0) ^ 0xff;
    const error = await all(awsEventMessages(pieces(corrupted, []), 'bedrock')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).providerCode).toBe('eventstream_bad_frame');
  });

  it('reports a stream cut inside a frame as truncated', async () => {
    const cut = joined.subarray(0, joined.length - 5);
    await expect(all(awsEventMessages(pieces(cut, []), 'bedrock'))).rejects.toMatchObject({ code: 'network', providerCode: 'stream_truncated' });
  });
});

describe('streamEvents', () => {
  /**
   * What the adapters' async generators did: each upstream event converted when the consumer asks
   * for it, its stream events yielded one by one, the batches closed by the `for await` when the
   * generator returns or throws inside it.
   */
  async function* generatorReference(batches: AsyncIterable<SseEvent[]>, step: (event: SseEvent, out: StreamEvent[]) => boolean, end: () => StreamEvent): AsyncGenerator<StreamEvent> {
    for await (const events of batches) {
      for (const event of events) {
        const out: StreamEvent[] = [];
        const complete = step(event, out);
        for (const item of out) yield item;
        if (complete) return;
      }
    }
    yield end();
  }

  /** Upstream reads as batches of events; every read, close and failure goes to `log`. */
  function upstream(reads: readonly (readonly string[])[], log: string[], failAt: number | null): AsyncIterable<SseEvent[]> {
    return {
      [Symbol.asyncIterator]() {
        let index = 0;
        return {
          next: async () => {
            log.push(`read ${index}`);
            if (index === failAt) throw new UpstreamError({ provider: 'test', status: null, code: 'network' });
            return index < reads.length ? { done: false, value: reads[index++]!.map((data) => ({ event: undefined, data })) } : { done: true, value: undefined };
          },
          return: async () => {
            log.push('closed');
            return { done: true, value: undefined };
          },
        };
      },
    };
  }

  /** An adapter step: "d:x" a delta, "t:x" a tool call and a delta, "skip" nothing, "fail" an invalid chunk, "done" completes. */
  const step = (event: SseEvent, out: StreamEvent[]): boolean => {
    if (event.data === 'done') {
      out.push({ type: 'done', finishReason: 'stop', rawFinishReason: 'stop', usage: null });
      return true;
    }
    if (event.data === 'fail') throw new UpstreamError({ provider: 'test', status: null, code: 'invalid_response', retryable: false });
    if (event.data.startsWith('t:')) out.push({ type: 'tool_call_delta', index: 0, argumentsDelta: event.data.slice(2) }, { type: 'delta', text: event.data.slice(2) });
    else if (event.data.startsWith('d:')) out.push({ type: 'delta', text: event.data.slice(2) });
    return false;
  };

  /** Takes up to `take` events (then returns early), logging each event, the end and a failure's code. */
  async function consume(iterator: AsyncIterator<StreamEvent>, log: string[], take: number): Promise<void> {
    try {
      for (let count = 0; ; count++) {
        if (count === take) {
          await iterator.return?.();
          log.push('left');
          return;
        }
        const next = await iterator.next();
        if (next.done === true) {
          log.push('over');
          // Asking again after the end: still over, nothing read.
          log.push((await iterator.next()).done === true ? 'over' : 'more');
          return;
        }
        log.push(JSON.stringify(next.value));
      }
    } catch (error) {
      log.push(`threw ${error instanceof UpstreamError ? error.code : String(error)}`);
      log.push((await iterator.next()).done === true ? 'over' : 'more');
    }
  }

  it('hands on the events, failures, reads and closes of the generator it replaces, in the same order', async () => {
    const item = fc.constantFrom('d:a', 'd:bc', 't:x', 'skip', 'fail', 'done');
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(item, { maxLength: 5 }), { maxLength: 5 }), fc.option(fc.nat(6)), fc.nat(14), fc.boolean(), async (reads, failAt, take, cut) => {
        const end = (): StreamEvent => {
          if (cut) throw new UpstreamError({ provider: 'test', status: null, code: 'network', providerCode: 'stream_truncated' });
          return { type: 'done', finishReason: 'other', rawFinishReason: null, usage: null };
        };
        const expected: string[] = [];
        await consume(generatorReference(upstream(reads, expected, failAt), step, end), expected, take);
        const actual: string[] = [];
        await consume(streamEvents(upstream(reads, actual, failAt), { step, end }), actual, take);
        expect(actual).toStrictEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('answers the events of a read already converted without waiting for the upstream', async () => {
    const log: string[] = [];
    const iterator = streamEvents(upstream([['d:a', 'd:b', 'd:c'], ['done']], log, null), { step, end: () => ({ type: 'done', finishReason: 'other', rawFinishReason: null, usage: null }) });
    await iterator.next();
    expect(log).toStrictEqual(['read 0']);
    await iterator.next();
    await iterator.next();
    // The second read starts only when the first read's events were all taken.
    expect(log).toStrictEqual(['read 0']);
    expect((await iterator.next()).value).toMatchObject({ type: 'done' });
    expect(log).toStrictEqual(['read 0', 'read 1']);
  });
});
