/**
 * The adapters' stream parsers convert one upstream read's events together (streamEvents, issue #39
 * item 2, speed-stream9 round) where they used to resume an async generator per event. These tests
 * keep the generators they replaced, verbatim, as references and feed both the same upstream bytes
 * cut at every boundary (inside multi-byte UTF-8 characters and inside event-stream frames): the
 * client must see the same events, the same failure (code and provider code), and the upstream
 * body must be read and closed at the same points.
 */
import { EventStreamCodec } from '@smithy/eventstream-codec';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeEvent } from '../../../test/fakes/providers/protocols/bedrock.ts';
import { UpstreamError, type StreamEvent, type TokenUsage } from '../contract.ts';
import type { AwsEventMessage } from '../streaming/aws-event-stream.ts';
import { sseBatches } from '../streaming/sse.ts';
import * as anthropicModule from './anthropic.ts';
import * as bedrockModule from './bedrock.ts';
import * as cohereModule from './cohere.ts';
import { gemini } from './gemini.ts';
import { countAt, isObject, objectAt, parseJsonObject, stringAt, truncatedStream } from './shared/common.ts';
import * as geminiContent from './shared/gemini-content.ts';

type Parser = (body: AsyncIterable<Uint8Array>) => AsyncIterable<StreamEvent>;

// ---- The generators the converters replaced (base 7e09538), kept as references. ----

async function* anthropicReference(body: AsyncIterable<Uint8Array>): AsyncGenerator<StreamEvent> {
  const PROVIDER = 'anthropic';
  const { mapFinishReason, toUsage } = anthropicModule;
  let usage: TokenUsage | null = null;
  let model: string | undefined;
  let rawFinishReason: string | null = null;
  let inputUsage: unknown;
  const toolIndexByBlock = new Map<number, number>();
  for await (const events of sseBatches(body, PROVIDER)) {
    for (const event of events) {
      if (event.event === 'ping' || event.data.length === 0) continue;
      const data = parseJsonObject(PROVIDER, event.data);
      const type = event.event ?? stringAt(data, 'type');
      switch (type) {
        case 'message_start': {
          const message = objectAt(data, 'message');
          model = stringAt(message, 'model');
          inputUsage = message?.usage;
          usage = toUsage(inputUsage);
          break;
        }
        case 'content_block_start': {
          const block = objectAt(data, 'content_block');
          if (stringAt(block, 'type') === 'tool_use') {
            const index = toolIndexByBlock.size;
            toolIndexByBlock.set(countAt(data, 'index') ?? 0, index);
            yield { type: 'tool_call_delta', index, id: stringAt(block, 'id') ?? `toolu_${index}`, name: stringAt(block, 'name') ?? '', argumentsDelta: '' };
          }
          break;
        }
        case 'content_block_delta': {
          const delta = objectAt(data, 'delta');
          const deltaType = stringAt(delta, 'type');
          if (deltaType === 'text_delta') {
            const text = stringAt(delta, 'text') ?? '';
            if (text.length > 0) yield { type: 'delta', text };
          } else if (deltaType === 'input_json_delta') {
            const index = toolIndexByBlock.get(countAt(data, 'index') ?? 0) ?? 0;
            yield { type: 'tool_call_delta', index, argumentsDelta: stringAt(delta, 'partial_json') ?? '' };
          }
          break;
        }
        case 'message_delta': {
          rawFinishReason = stringAt(objectAt(data, 'delta'), 'stop_reason') ?? rawFinishReason;
          const merged = isObject(data.usage) ? { ...(isObject(inputUsage) ? inputUsage : {}), ...data.usage } : inputUsage;
          usage = toUsage(merged) ?? usage;
          break;
        }
        case 'message_stop':
          yield { type: 'done', finishReason: mapFinishReason(rawFinishReason), rawFinishReason, usage, ...(model === undefined ? {} : { model }) };
          return;
        case 'error': {
          const errorType = stringAt(objectAt(data, 'error'), 'type') ?? 'stream_error';
          throw new UpstreamError({ provider: PROVIDER, status: null, code: errorType === 'overloaded_error' ? 'overloaded' : 'server', providerCode: errorType });
        }
        default:
          break;
      }
    }
  }
  throw truncatedStream(PROVIDER);
}

async function* cohereReference(body: AsyncIterable<Uint8Array>): AsyncGenerator<StreamEvent> {
  const PROVIDER = 'cohere';
  const { mapFinishReason, toUsage } = cohereModule;
  let toolIndex = -1;
  for await (const events of sseBatches(body, PROVIDER)) {
    for (const event of events) {
      const dataText = event.data.trim();
      if (dataText.length === 0 || dataText === '[DONE]') continue;
      const data = parseJsonObject(PROVIDER, dataText);
      const type = stringAt(data, 'type') ?? event.event;
      const message = objectAt(objectAt(data, 'delta'), 'message');
      switch (type) {
        case 'content-delta': {
          const text = stringAt(objectAt(message, 'content'), 'text') ?? '';
          if (text.length > 0) yield { type: 'delta', text };
          break;
        }
        case 'tool-call-start': {
          toolIndex += 1;
          const call = objectAt(message, 'tool_calls');
          const fn = objectAt(call, 'function');
          yield { type: 'tool_call_delta', index: toolIndex, id: stringAt(call, 'id') ?? `call_${toolIndex}`, name: stringAt(fn, 'name') ?? '', argumentsDelta: stringAt(fn, 'arguments') ?? '' };
          break;
        }
        case 'tool-call-delta': {
          const fn = objectAt(objectAt(message, 'tool_calls'), 'function');
          yield { type: 'tool_call_delta', index: Math.max(toolIndex, 0), argumentsDelta: stringAt(fn, 'arguments') ?? '' };
          break;
        }
        case 'message-end': {
          const delta = objectAt(data, 'delta');
          const rawFinishReason = stringAt(delta, 'finish_reason') ?? null;
          if (isObject(delta?.error) || rawFinishReason === 'ERROR') {
            throw new UpstreamError({ provider: PROVIDER, status: null, code: 'server', providerCode: 'stream_error' });
          }
          yield { type: 'done', finishReason: mapFinishReason(rawFinishReason), rawFinishReason, usage: toUsage(delta?.usage) };
          return;
        }
        default:
          break;
      }
    }
  }
  throw truncatedStream(PROVIDER);
}

async function* geminiReference(body: AsyncIterable<Uint8Array>): AsyncGenerator<StreamEvent> {
  const provider = 'gemini';
  const { mapFinishReason, toUsage, readCandidate } = geminiContent;
  let rawFinishReason: string | null = null;
  let usage: TokenUsage | null = null;
  let model: string | undefined;
  let toolCount = 0;
  for await (const events of sseBatches(body, provider)) {
    for (const event of events) {
      if (event.data.trim().length === 0) continue;
      const chunk = parseJsonObject(provider, event.data);
      if (isObject(chunk.error)) {
        throw new UpstreamError({ provider, status: null, code: 'server', providerCode: stringAt(chunk.error, 'status') ?? 'stream_error' });
      }
      model ??= stringAt(chunk, 'modelVersion');
      usage = toUsage(chunk.usageMetadata) ?? usage;
      const candidate = readCandidate(provider, chunk, toolCount);
      if (candidate.text.length > 0) yield { type: 'delta', text: candidate.text };
      for (const call of candidate.toolCalls) {
        yield {
          type: 'tool_call_delta',
          index: toolCount,
          id: call.id,
          name: call.name,
          argumentsDelta: call.arguments,
          ...(call.thought_signature === undefined ? {} : { thoughtSignature: call.thought_signature }),
        };
        toolCount += 1;
      }
      if (candidate.rawFinishReason !== null) rawFinishReason = candidate.rawFinishReason;
    }
  }
  if (rawFinishReason === null) throw truncatedStream(provider);
  yield { type: 'done', finishReason: mapFinishReason(rawFinishReason, toolCount > 0), rawFinishReason, usage, ...(model === undefined ? {} : { model }) };
}

/** The frame-at-a-time decoder the batched one replaced. */
async function* awsEventMessagesReference(body: AsyncIterable<Uint8Array>, provider: string): AsyncGenerator<AwsEventMessage> {
  const utf8Decoder = new TextDecoder();
  const utf8Encoder = new TextEncoder();
  const codec = new EventStreamCodec(
    (bytes) => utf8Decoder.decode(bytes),
    (text) => utf8Encoder.encode(text),
  );
  const headerString = (headers: Record<string, { type: string; value: unknown }>, name: string): string | undefined => {
    const header = headers[name];
    return header && header.type === 'string' && typeof header.value === 'string' ? header.value : undefined;
  };
  let buffer: Uint8Array = new Uint8Array(0);
  const fail = (code: string, cause?: unknown) => new UpstreamError({ provider, status: null, code: 'invalid_response', retryable: false, providerCode: code, cause });
  for await (const chunk of body) {
    if (buffer.length === 0) {
      buffer = chunk;
    } else {
      const joined = new Uint8Array(buffer.length + chunk.length);
      joined.set(buffer, 0);
      joined.set(chunk, buffer.length);
      buffer = joined;
    }
    while (buffer.length >= 4) {
      const total = new DataView(buffer.buffer, buffer.byteOffset, 4).getUint32(0, false);
      if (total < 16 || total > 16 * 1024 * 1024) throw fail('eventstream_bad_length');
      if (buffer.length < total) break;
      const frame = buffer.subarray(0, total);
      buffer = buffer.subarray(total);
      let message;
      try {
        message = codec.decode(frame);
      } catch (error) {
        throw fail('eventstream_bad_frame', error);
      }
      const headers = message.headers as Record<string, { type: string; value: unknown }>;
      const messageType = headerString(headers, ':message-type') ?? 'event';
      const type = headerString(headers, ':event-type') ?? headerString(headers, ':exception-type') ?? headerString(headers, ':error-code') ?? '';
      yield { messageType, type, payload: utf8Decoder.decode(message.body) };
    }
  }
  if (buffer.length > 0) throw new UpstreamError({ provider, status: null, code: 'network', providerCode: 'stream_truncated' });
}

const STREAM_EXCEPTIONS: Readonly<Record<string, 'rate_limited' | 'overloaded' | 'server' | 'bad_request'>> = {
  throttlingException: 'rate_limited',
  serviceUnavailableException: 'overloaded',
  internalServerException: 'server',
  modelStreamErrorException: 'server',
  validationException: 'bad_request',
};

async function* bedrockReference(body: AsyncIterable<Uint8Array>): AsyncGenerator<StreamEvent> {
  const PROVIDER = 'bedrock';
  const { mapFinishReason, toUsage } = bedrockModule;
  let rawFinishReason: string | null = null;
  let stopped = false;
  const toolIndexByBlock = new Map<number, number>();
  for await (const message of awsEventMessagesReference(body, PROVIDER)) {
    if (message.messageType !== 'event') {
      const code = STREAM_EXCEPTIONS[message.type] ?? 'server';
      throw new UpstreamError({ provider: PROVIDER, status: null, code, providerCode: message.type || 'stream_exception' });
    }
    const data = parseJsonObject(PROVIDER, message.payload.length > 0 ? message.payload : '{}');
    switch (message.type) {
      case 'contentBlockStart': {
        const toolUse = objectAt(objectAt(data, 'start'), 'toolUse');
        if (toolUse) {
          const index = toolIndexByBlock.size;
          toolIndexByBlock.set(countAt(data, 'contentBlockIndex') ?? 0, index);
          yield { type: 'tool_call_delta', index, id: stringAt(toolUse, 'toolUseId') ?? `tooluse_${index}`, name: stringAt(toolUse, 'name') ?? '', argumentsDelta: '' };
        }
        break;
      }
      case 'contentBlockDelta': {
        const delta = objectAt(data, 'delta');
        const text = stringAt(delta, 'text');
        if (text !== undefined && text.length > 0) yield { type: 'delta', text };
        const toolUse = objectAt(delta, 'toolUse');
        if (toolUse) {
          const index = toolIndexByBlock.get(countAt(data, 'contentBlockIndex') ?? 0) ?? 0;
          yield { type: 'tool_call_delta', index, argumentsDelta: stringAt(toolUse, 'input') ?? '' };
        }
        break;
      }
      case 'messageStop':
        rawFinishReason = stringAt(data, 'stopReason') ?? null;
        stopped = true;
        break;
      case 'metadata':
        yield { type: 'done', finishReason: mapFinishReason(rawFinishReason), rawFinishReason, usage: toUsage(data.usage) };
        return;
      default:
        break;
    }
  }
  if (!stopped) throw truncatedStream(PROVIDER);
  yield { type: 'done', finishReason: mapFinishReason(rawFinishReason), rawFinishReason, usage: null };
}

// ---- Upstream answers. ----

const encoder = new TextEncoder();
const sse = (events: readonly (readonly [string | null, unknown])[], tail = ''): Uint8Array =>
  encoder.encode(events.map(([name, data]) => `${name === null ? '' : `event: ${name}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`).join('') + tail);
const concat = (parts: readonly Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
};
/** A frame whose message checksum no longer matches (its payload's last byte flipped). */
const corrupted = (frame: Uint8Array): Uint8Array => {
  const copy = new Uint8Array(frame);
  const position = copy.length - 6;
  copy[position] = (copy[position] ?? 0) ^ 0xff;
  return copy;
};
/** Text in which a cut falls inside two-, three- and four-byte characters. */
const WORDS = ['Grüße ', 'aus ', '東京 ', '👋🏽 ', 'née ', 'ok'];

const anthropicStart: [string, unknown] = ['message_start', { type: 'message_start', message: { model: 'claude-x', usage: { input_tokens: 9, output_tokens: 1 } } }];
const anthropicText = WORDS.map((text, index): [string, unknown] => ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: index === 2 ? '' : text } }]);
const anthropicTool: [string, unknown][] = [
  ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":' } }],
  ['ping', { type: 'ping' }],
  ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"Zürich"}' } }],
];
const anthropicEnd: [string, unknown][] = [
  ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 12 } }],
  ['message_stop', { type: 'message_stop' }],
];

const cohereText = WORDS.map((text): [string, unknown] => ['content-delta', { type: 'content-delta', delta: { message: { content: { text } } } }]);
const cohereTool: [string, unknown][] = [
  ['tool-call-start', { type: 'tool-call-start', delta: { message: { tool_calls: { id: 'c1', function: { name: 'get_weather', arguments: '' } } } } }],
  ['tool-call-delta', { type: 'tool-call-delta', delta: { message: { tool_calls: { function: { arguments: '{"city":"Zürich"}' } } } } }],
];
const cohereEnd: [string, unknown] = ['message-end', { type: 'message-end', delta: { finish_reason: 'TOOL_CALL', usage: { billed_units: { input_tokens: 5, output_tokens: 7 }, tokens: { input_tokens: 5, output_tokens: 7 } } } }];

const geminiText = WORDS.map((text, index): [null, unknown] => [null, { candidates: [{ content: { parts: [{ text }] } }], modelVersion: index === 0 ? 'gemini-x' : 'other', ...(index === 3 ? { usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2 } } : {}) }]);
const geminiTool: [null, unknown] = [null, { candidates: [{ content: { parts: [{ functionCall: { name: 'get_weather', args: { city: 'Zürich' } }, thoughtSignature: 'sig' }, { functionCall: { name: 'f2', args: {} } }] } }] }];
const geminiEnd: [null, unknown] = [null, { candidates: [{ content: { parts: [{ text: ' fin' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 9, totalTokenCount: 13 } }];

const bedrockText = WORDS.map((text) => encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text } }));
const bedrockTool = [
  encodeEvent('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 't1', name: 'get_weather' } } }),
  encodeEvent('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"city":"Zürich"}' } } }),
];
const bedrockStop = encodeEvent('messageStop', { stopReason: 'tool_use' });
const bedrockMetadata = encodeEvent('metadata', { usage: { inputTokens: 3, outputTokens: 8, totalTokens: 11 } });

interface Case {
  name: string;
  bytes: Uint8Array;
}
interface Adapter {
  name: string;
  before: Parser;
  after: Parser;
  cases: Case[];
}

const ADAPTERS: Adapter[] = [
  {
    name: 'Anthropic',
    before: anthropicReference,
    after: anthropicModule.anthropic.parseStream,
    cases: [
      { name: 'text and a tool call to message_stop', bytes: sse([anthropicStart, ...anthropicText, ...anthropicTool, ...anthropicEnd], ': after the end\n\nevent: error\ndata: {"type":"error"}\n\n') },
      { name: 'an overloaded error mid-answer', bytes: sse([anthropicStart, ...anthropicText.slice(0, 3), ['error', { type: 'error', error: { type: 'overloaded_error' } }], ...anthropicText.slice(3)]) },
      { name: 'an invalid chunk mid-answer', bytes: sse([anthropicStart, ...anthropicText.slice(0, 4), ['content_block_delta', '{"type":'], ...anthropicEnd]) },
      { name: 'a stream cut before message_stop', bytes: sse([anthropicStart, ...anthropicText, anthropicEnd[0]!], 'event: message_stop\ndata: {"type":"message_stop"}') },
    ],
  },
  {
    name: 'Cohere',
    before: cohereReference,
    after: cohereModule.cohere.parseStream,
    cases: [
      { name: 'text and a tool call to message-end', bytes: sse([[null, { type: 'message-start' }], ...cohereText, ...cohereTool, cohereEnd], 'data: [DONE]\n\n') },
      { name: 'a message-end with an error', bytes: sse([...cohereText.slice(0, 2), ['message-end', { type: 'message-end', delta: { finish_reason: 'ERROR' } }], ...cohereText.slice(2)]) },
      { name: 'an invalid chunk mid-answer', bytes: sse([...cohereText.slice(0, 5), [null, '{"type":"content-'], cohereEnd]) },
      { name: 'a stream cut before message-end', bytes: sse([...cohereText, ...cohereTool]) },
    ],
  },
  {
    name: 'Gemini',
    before: geminiReference,
    after: gemini.parseStream,
    cases: [
      { name: 'text and tool calls to a finishReason', bytes: sse([...geminiText, [null, { candidates: [{ content: { parts: [] }, finishReason: 'MAX_TOKENS' }] }], geminiTool, geminiEnd], '\n\n') },
      { name: 'an error chunk mid-answer', bytes: sse([...geminiText.slice(0, 3), [null, { error: { code: 503, status: 'UNAVAILABLE' } }], geminiEnd]) },
      { name: 'an invalid chunk mid-answer', bytes: sse([...geminiText.slice(0, 4), [null, '{"candidates":['], geminiEnd]) },
      { name: 'a stream cut before any finishReason', bytes: sse([...geminiText, geminiTool]) },
    ],
  },
  {
    name: 'Bedrock',
    before: bedrockReference,
    after: bedrockModule.bedrock.parseStream,
    cases: [
      { name: 'text and a tool call to metadata, a corrupt frame after it', bytes: concat([encodeEvent('messageStart', { role: 'assistant' }), ...bedrockText, ...bedrockTool, bedrockStop, bedrockMetadata, corrupted(bedrockText[0]!)]) },
      { name: 'messageStop and the stream closed without metadata', bytes: concat([...bedrockText, bedrockStop]) },
      { name: 'a throttling exception mid-answer', bytes: concat([...bedrockText.slice(0, 3), encodeEvent('throttlingException', { message: 'slow down' }, 'exception'), ...bedrockText.slice(3), bedrockStop, bedrockMetadata]) },
      { name: 'a corrupt frame mid-answer', bytes: concat([...bedrockText.slice(0, 4), corrupted(bedrockTool[1]!), bedrockStop, bedrockMetadata]) },
      { name: 'an impossible frame length mid-answer', bytes: concat([...bedrockText.slice(0, 2), new Uint8Array([0, 0, 0, 5, 1, 2, 3, 4, 5, 6, 7, 8]), bedrockStop]) },
      { name: 'a stream cut inside a frame', bytes: concat([...bedrockText, bedrockStop, bedrockMetadata.subarray(0, bedrockMetadata.length - 7)]) },
      { name: 'a stream cut before messageStop', bytes: concat([...bedrockText, ...bedrockTool]) },
    ],
  },
];

// ---- What the client sees. ----

/** The upstream body as reads of `bytes` cut at `cuts`; every read and the close go to `log`. */
function upstream(bytes: Uint8Array, cuts: readonly number[], log: string[]): AsyncIterable<Uint8Array> {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].filter((cut) => cut > 0 && cut < bytes.length).sort((a, b) => a - b);
  const reads: Uint8Array[] = [];
  let start = 0;
  for (const point of [...points, bytes.length]) {
    reads.push(bytes.subarray(start, point));
    start = point;
  }
  return {
    [Symbol.asyncIterator]() {
      let index = 0;
      return {
        next: async () => {
          log.push(`read ${index}`);
          // A copy per read, as a socket hands over fresh buffers.
          return index < reads.length ? { done: false, value: new Uint8Array(reads[index++]!) } : { done: true, value: undefined };
        },
        return: async () => {
          log.push('closed');
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/** The client's view: each event, then the end or the failure's code, with the upstream's reads and close interleaved. Stops after `take` events. */
async function seen(parse: Parser, bytes: Uint8Array, cuts: readonly number[], take = Number.POSITIVE_INFINITY): Promise<string[]> {
  const log: string[] = [];
  const iterator = parse(upstream(bytes, cuts, log))[Symbol.asyncIterator]();
  try {
    for (let count = 0; ; count++) {
      if (count >= take) {
        await iterator.return?.();
        log.push('left');
        return log;
      }
      const next = await iterator.next();
      if (next.done === true) {
        log.push('over');
        return log;
      }
      log.push(JSON.stringify(next.value));
    }
  } catch (error) {
    log.push(error instanceof UpstreamError ? `threw ${error.provider} ${error.code} ${error.providerCode} ${error.status} ${error.retryable}` : `threw ${String(error)}`);
    return log;
  }
}

describe.each(ADAPTERS)('$name stream parser, batched per upstream read', ({ before, after, cases }) => {
  it.each(cases)('hands the client what the per-event generator did for $name, cut at every byte boundary', async ({ bytes }) => {
    const whole = await seen(after, bytes, []);
    expect(whole).toStrictEqual(await seen(before, bytes, []));
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(await seen(after, bytes, [cut]), `cut at byte ${cut}`).toStrictEqual(await seen(before, bytes, [cut]));
    }
    const everyByte = Array.from({ length: bytes.length }, (_, index) => index);
    expect(await seen(after, bytes, everyByte)).toStrictEqual(await seen(before, bytes, everyByte));
  });

  it('hands the client the same events, failures, reads and close for random cuts, also when the client leaves early', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: cases.length - 1 }), fc.array(fc.nat(), { maxLength: 12 }), fc.option(fc.nat(20), { nil: undefined }), async (which, cuts, take) => {
        const { bytes } = cases[which]!;
        expect(await seen(after, bytes, cuts, take)).toStrictEqual(await seen(before, bytes, cuts, take));
      }),
      { numRuns: 300 },
    );
  });
});

describe('batched stream parsers', () => {
  it('are not async generators any more (the per-event resume is gone)', () => {
    const body = upstream(new Uint8Array(0), [], []);
    for (const { after } of ADAPTERS) expect(Object.prototype.toString.call(after(body))).not.toBe('[object AsyncGenerator]');
  });
});
