// Fake of the Amazon Bedrock Converse API: POST /model/{modelId}/converse | /converse-stream.
// Verifies the AWS SigV4 signature by re-signing the received request with @smithy/signature-v4
// and the known test credentials (and the body hash, so a tampered body fails), then answers
// Converse JSON or an application/vnd.amazon.eventstream binary stream.
import { createHash } from 'node:crypto';
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { isRecord, wordChunks } from '../types.ts';
import type { FakeBehaviour, FakeProtocol, ProtocolRequest, Validation } from '../types.ts';

const STOP: Record<FakeBehaviour['finish'], string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use' };
const ERROR_TYPES: Record<number, string> = {
  400: 'ValidationException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
};

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const codec = new EventStreamCodec((bytes) => decoder.decode(bytes), (text) => encoder.encode(text));

export function encodeEvent(eventType: string, payload: unknown, messageType: 'event' | 'exception' = 'event'): Uint8Array {
  const typeHeader = messageType === 'event' ? ':event-type' : ':exception-type';
  return codec.encode({
    headers: {
      [typeHeader]: { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: messageType },
    },
    body: encoder.encode(JSON.stringify(payload)),
  });
}

export interface BedrockFakeSettings {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

function parseAmzDate(value: string): Date | null {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!match) return null;
  return new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]), Number(match[4]), Number(match[5]), Number(match[6])));
}

/** Re-signs the received request; returns the problems found (empty when the signature is valid). */
export async function verifySigV4(request: ProtocolRequest, rawQuery: string, settings: BedrockFakeSettings): Promise<string[]> {
  const authorization = request.headers.authorization ?? '';
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(authorization);
  if (!match) return ['authorization is not an AWS SigV4 header'];
  const [, accessKeyId, , region, service, signedHeaderList] = match as unknown as string[];
  const problems: string[] = [];
  if (accessKeyId !== settings.accessKeyId) problems.push('unknown access key id');
  if (region !== settings.region) problems.push(`signed for region ${region}`);
  if (service !== 'bedrock') problems.push(`signed for service ${service}`);
  const date = parseAmzDate(request.headers['x-amz-date'] ?? '');
  if (!date) return [...problems, 'x-amz-date missing'];
  if (Math.abs(date.getTime() - Date.now()) > 15 * 60_000) problems.push('x-amz-date outside 15 minutes');
  const contentHash = request.headers['x-amz-content-sha256'];
  if (contentHash !== undefined && contentHash !== createHash('sha256').update(request.rawBody).digest('hex')) problems.push('body hash mismatch');
  const headers: Record<string, string> = {};
  for (const name of (signedHeaderList ?? '').split(';')) {
    const value = request.headers[name];
    if (value === undefined) problems.push(`signed header ${name} missing`);
    else headers[name] = value;
  }
  const host = request.headers.host ?? '';
  const colon = host.lastIndexOf(':');
  const query: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(rawQuery)) query[key] = value;
  const signer = new SignatureV4({
    credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey, ...(request.headers['x-amz-security-token'] ? { sessionToken: request.headers['x-amz-security-token'] } : {}) },
    region: settings.region,
    service: 'bedrock',
    sha256: Sha256,
  });
  const expected = await signer.sign(
    new HttpRequest({
      method: request.method,
      protocol: 'http:',
      hostname: colon > 0 ? host.slice(0, colon) : host,
      ...(colon > 0 ? { port: Number(host.slice(colon + 1)) } : {}),
      path: request.path,
      query,
      headers,
      body: request.rawBody,
    }),
    { signingDate: date },
  );
  if (expected.headers.authorization !== authorization) problems.push('signature does not match');
  return problems;
}

function usage(behaviour: FakeBehaviour) {
  const cached = behaviour.usage.cached ?? 0;
  return {
    inputTokens: behaviour.usage.prompt - cached,
    outputTokens: behaviour.usage.completion,
    totalTokens: behaviour.usage.prompt + behaviour.usage.completion,
    ...(cached > 0 ? { cacheReadInputTokens: cached, cacheWriteInputTokens: 0 } : {}),
  };
}

export interface BedrockProtocol extends FakeProtocol {
  verify(request: ProtocolRequest, rawQuery: string): Promise<string[]>;
}

export function bedrockProtocol(settings: BedrockFakeSettings): BedrockProtocol {
  return {
    verify: (request, rawQuery) => verifySigV4(request, rawQuery, settings),
    validate(request: ProtocolRequest): Validation {
      const problems: string[] = [];
      const match = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(request.path);
      if (request.method !== 'POST' || !match) problems.push(`route ${request.method} ${request.path}`);
      const model = decodeURIComponent(match?.[1] ?? '');
      const stream = match?.[2] === 'converse-stream';
      const body = request.body;
      if (!isRecord(body)) return { problems: [...problems, 'body is not a JSON object'], authFailed: false, stream, model };
      const messages = Array.isArray(body.messages) ? body.messages : [];
      if (messages.length === 0) problems.push('messages missing');
      for (const message of messages) {
        if (!isRecord(message) || (message.role !== 'user' && message.role !== 'assistant') || !Array.isArray(message.content)) problems.push('bad message');
      }
      if (body.system !== undefined && !Array.isArray(body.system)) problems.push('system must be a list of blocks');
      if (body.inferenceConfig !== undefined && !isRecord(body.inferenceConfig)) problems.push('bad inferenceConfig');
      if (body.model !== undefined) problems.push('model must not be in the body');
      return { problems, authFailed: false, stream, model };
    },
    error(status: number) {
      const type = ERROR_TYPES[status] ?? (status >= 500 ? 'InternalServerException' : 'ValidationException');
      return {
        headers: { 'content-type': 'application/json', 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': 'fake-request' },
        body: JSON.stringify({ message: 'fake upstream error' }),
      };
    },
    json(_validation, _request, behaviour) {
      const content: unknown[] = [];
      if (behaviour.toolCall) content.push({ toolUse: { toolUseId: behaviour.toolCall.id ?? 'tooluse_fake_1', name: behaviour.toolCall.name, input: JSON.parse(behaviour.toolCall.arguments) } });
      else content.push({ text: behaviour.content });
      return {
        output: { message: { role: 'assistant', content } },
        stopReason: behaviour.toolCall ? 'tool_use' : STOP[behaviour.finish],
        usage: usage(behaviour),
        metrics: { latencyMs: 42 },
      };
    },
    stream(_validation, _request, behaviour) {
      const chunks: Uint8Array[] = [encodeEvent('messageStart', { role: 'assistant', p: 'abcd' })];
      if (behaviour.toolCall) {
        const args = behaviour.toolCall.arguments;
        const half = Math.floor(args.length / 2);
        chunks.push(
          encodeEvent('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: behaviour.toolCall.id ?? 'tooluse_fake_1', name: behaviour.toolCall.name } } }),
          encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: args.slice(0, half) } } }),
          encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: args.slice(half) } } }),
        );
      } else {
        for (const word of wordChunks(behaviour.content)) chunks.push(encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: word } }));
      }
      chunks.push(encodeEvent('contentBlockStop', { contentBlockIndex: 0 }));
      const terminalFrom = chunks.length;
      chunks.push(
        encodeEvent('messageStop', { stopReason: behaviour.toolCall ? 'tool_use' : STOP[behaviour.finish] }),
        encodeEvent('metadata', { usage: usage(behaviour), metrics: { latencyMs: 42 } }),
      );
      return { contentType: 'application/vnd.amazon.eventstream', chunks, terminalFrom, errorChunk: encodeEvent('throttlingException', { message: 'slow down' }, 'exception') };
    },
  };
}
