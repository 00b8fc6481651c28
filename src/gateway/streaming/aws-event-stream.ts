/**
 * AWS event stream (application/vnd.amazon.eventstream) framing for Bedrock ConverseStream.
 * Frames are split by their 4-byte total-length prelude and decoded (prelude and message CRC32
 * checked) by @smithy/eventstream-codec — the codec is not hand-rolled. Frame size is bounded.
 */
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { UpstreamError } from '../contract.ts';

export interface AwsEventMessage {
  /** ':message-type' header: 'event' | 'exception' | 'error'. */
  messageType: string;
  /** ':event-type' (events) or ':exception-type' / ':error-code' (failures). */
  type: string;
  /** The payload bytes decoded as UTF-8 (JSON for Bedrock). */
  payload: string;
}

const MAX_FRAME_BYTES = 16 * 1024 * 1024;
const MIN_FRAME_BYTES = 16;
const utf8Decoder = new TextDecoder();
const utf8Encoder = new TextEncoder();
const codec = new EventStreamCodec(
  (bytes) => utf8Decoder.decode(bytes),
  (text) => utf8Encoder.encode(text),
);

function headerString(headers: Record<string, { type: string; value: unknown }>, name: string): string | undefined {
  const header = headers[name];
  return header && header.type === 'string' && typeof header.value === 'string' ? header.value : undefined;
}

export async function* awsEventMessages(body: AsyncIterable<Uint8Array>, provider: string): AsyncGenerator<AwsEventMessage> {
  let buffer: Uint8Array = new Uint8Array(0);
  const fail = (code: string, cause?: unknown) =>
    new UpstreamError({ provider, status: null, code: 'invalid_response', retryable: false, providerCode: code, cause });
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
      if (total < MIN_FRAME_BYTES || total > MAX_FRAME_BYTES) throw fail('eventstream_bad_length');
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
      const type =
        headerString(headers, ':event-type') ?? headerString(headers, ':exception-type') ?? headerString(headers, ':error-code') ?? '';
      yield { messageType, type, payload: utf8Decoder.decode(message.body) };
    }
  }
  if (buffer.length > 0) throw new UpstreamError({ provider, status: null, code: 'network', providerCode: 'stream_truncated' });
}
