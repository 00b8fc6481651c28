// Amazon Bedrock Converse API: POST /model/{modelId}/converse and /converse-stream, signed with
// AWS SigV4 by @smithy/signature-v4 (service "bedrock"), or a Bedrock API key as Bearer token.
// Stored key: "ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]" (see contract.ts ProviderTarget).
// Streams are AWS binary event streams: contentBlockDelta / messageStop / metadata events.
import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { UpstreamError } from '../contract.ts';
import type {
  CompletionRequest,
  CompletionResult,
  FinishReason,
  ProviderAdapter,
  ProviderTarget,
  StreamEvent,
  TokenUsage,
  ToolCall,
  UpstreamHeaders,
  UpstreamRequest,
} from '../contract.ts';
import { awsEventBatches, type AwsEventMessage } from '../streaming/aws-event-stream.ts';
import { streamEvents, type StreamConverter } from '../streaming/sse.ts';
import {
  argumentsObject,
  arrayAt,
  countAt,
  finishFrom,
  headerValue,
  invalidResponse,
  isObject,
  objectAt,
  parseJsonObject,
  stringAt,
  truncatedStream,
  tryParseJsonObject,
  upstreamErrorFor,
  usageOf,
} from './shared/common.ts';
import type { JsonObject } from './shared/common.ts';

const PROVIDER = 'bedrock';
const DEFAULT_REGION = 'us-east-1';
const REGION = /^[a-z]{2}(-[a-z]+){1,3}-\d{1,2}$/;

const FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

export function mapFinishReason(raw: string | null | undefined): FinishReason {
  return finishFrom(FINISH_REASONS, raw);
}

/** inputTokens excludes cache reads/writes (as Anthropic); promptTokens adds them back. */
export function toUsage(usage: unknown): TokenUsage | null {
  if (!isObject(usage)) return null;
  const input = countAt(usage, 'inputTokens');
  const output = countAt(usage, 'outputTokens');
  if (input === undefined && output === undefined) return null;
  const cacheRead = countAt(usage, 'cacheReadInputTokens') ?? 0;
  const cacheWrite = countAt(usage, 'cacheWriteInputTokens') ?? 0;
  const extra: { total?: number; cached?: number } = {};
  const total = countAt(usage, 'totalTokens');
  if (total !== undefined) extra.total = total;
  if (cacheRead > 0) extra.cached = cacheRead;
  return usageOf((input ?? 0) + cacheRead + cacheWrite, output ?? 0, extra);
}

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** "ID:SECRET[:SESSION_TOKEN]" → credentials; a key without a colon → null (Bedrock API key, Bearer). */
export function parseAwsKey(apiKey: string): AwsCredentials | null {
  const first = apiKey.indexOf(':');
  if (first < 0) return null;
  const second = apiKey.indexOf(':', first + 1);
  const accessKeyId = apiKey.slice(0, first);
  const secretAccessKey = second < 0 ? apiKey.slice(first + 1) : apiKey.slice(first + 1, second);
  const sessionToken = second < 0 ? undefined : apiKey.slice(second + 1);
  if (accessKeyId.length === 0 || secretAccessKey.length === 0) {
    throw new UpstreamError({ provider: PROVIDER, status: null, code: 'auth', retryable: false, providerCode: 'bedrock_key_format' });
  }
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
}

export function bedrockRegion(target: ProviderTarget): string {
  const fromExtra = target.extra?.region;
  if (fromExtra !== undefined && REGION.test(fromExtra)) return fromExtra;
  if (target.baseUrl) {
    const host = new URL(target.baseUrl).hostname;
    const match = /^bedrock-runtime(?:-fips)?\.([a-z0-9-]{1,32})\.amazonaws\.com$/.exec(host);
    if (match?.[1] && REGION.test(match[1])) return match[1];
  }
  return DEFAULT_REGION;
}

/** Claude models released after Opus 4.6 refuse a temperature other than 1 (also on Bedrock): omitted, not forwarded. */
const CLAUDE_WITHOUT_TEMPERATURE = /(?:^|\.)anthropic\.claude-(?:opus-4-[7-9]|(?:opus|sonnet|haiku|fable)-(?:[5-9]|\d{2,}))(?:\D|$)/;

const DATA_URL = /^data:image\/(png|jpeg|gif|webp);base64,([A-Za-z0-9+/=]+)$/;

/** Converse takes image bytes (`image.source.bytes`, base64 in JSON); a remote URL is refused. */
function imageBlock(url: string): JsonObject {
  const data = DATA_URL.exec(url);
  if (!data) throw new UpstreamError({ provider: PROVIDER, status: null, code: 'bad_request', retryable: false, providerCode: 'image_url_not_supported' });
  return { image: { format: data[1], source: { bytes: data[2] } } };
}

export function buildBody(request: CompletionRequest): JsonObject {
  const system: JsonObject[] = [];
  const messages: { role: 'user' | 'assistant'; content: JsonObject[] }[] = [];
  for (const message of request.messages) {
    if (message.role === 'system') {
      system.push({ text: message.content });
      continue;
    }
    const blocks: JsonObject[] = [];
    if (message.role === 'tool') {
      blocks.push({ toolResult: { toolUseId: message.tool_call_id ?? '', content: [{ text: message.content }] } });
    } else {
      if (message.content.length > 0) blocks.push({ text: message.content });
      for (const image of message.images ?? []) blocks.push(imageBlock(image.url));
      if (message.role === 'assistant') {
        for (const call of message.tool_calls ?? []) blocks.push({ toolUse: { toolUseId: call.id, name: call.name, input: argumentsObject(call.arguments) } });
      }
    }
    if (blocks.length === 0) continue;
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const last = messages.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  }
  const body: JsonObject = { messages };
  if (system.length > 0) body.system = system;
  const inferenceConfig: JsonObject = {};
  if (request.max_tokens !== undefined) inferenceConfig.maxTokens = request.max_tokens;
  if (request.temperature !== undefined && (request.temperature === 1 || !CLAUDE_WITHOUT_TEMPERATURE.test(request.model))) inferenceConfig.temperature = request.temperature;
  if (Object.keys(inferenceConfig).length > 0) body.inferenceConfig = inferenceConfig;
  if (request.tools && request.tools.length > 0) {
    body.toolConfig = {
      tools: request.tools.map((tool) => ({
        toolSpec: { name: tool.name, ...(tool.description === undefined ? {} : { description: tool.description }), inputSchema: { json: tool.parameters } },
      })),
    };
  }
  return body;
}

async function buildRequest(request: CompletionRequest, target: ProviderTarget): Promise<UpstreamRequest> {
  const region = bedrockRegion(target);
  const base = new URL(target.baseUrl ?? `https://bedrock-runtime.${region}.amazonaws.com`);
  let basePath = base.pathname;
  while (basePath.endsWith('/')) basePath = basePath.slice(0, -1);
  const path = `${basePath}/model/${encodeURIComponent(request.model)}/${request.stream ? 'converse-stream' : 'converse'}`;
  const body = JSON.stringify(buildBody(request));
  const headers: Record<string, string> = {
    host: base.host,
    'content-type': 'application/json',
    accept: request.stream ? 'application/vnd.amazon.eventstream' : 'application/json',
  };
  const url = `${base.protocol}//${base.host}${path}`;
  const credentials = parseAwsKey(target.apiKey);
  if (credentials === null) return { url, method: 'POST', headers: { ...headers, authorization: `Bearer ${target.apiKey}` }, body };
  const signer = new SignatureV4({ credentials, region, service: 'bedrock', sha256: Sha256 });
  const signed = await signer.sign(
    new HttpRequest({
      method: 'POST',
      protocol: base.protocol,
      hostname: base.hostname,
      ...(base.port ? { port: Number(base.port) } : {}),
      path,
      headers,
      body,
    }),
  );
  return { url, method: 'POST', headers: signed.headers, body };
}

function parseError(status: number, headers: UpstreamHeaders, bodyText: string): UpstreamError {
  const errorType = headerValue(headers, 'x-amzn-errortype')?.split(':')[0] ?? stringAt(tryParseJsonObject(bodyText), '__type')?.split('#').at(-1);
  // ModelErrorException (424): the model failed to process the request — a model-side failure,
  // retried and failed over like a 5xx, not a rejection of the request.
  const override =
    errorType === 'ThrottlingException'
      ? { code: 'rate_limited' as const }
      : errorType === 'ModelNotReadyException'
        ? { code: 'overloaded' as const }
        : errorType === 'ModelErrorException' || status === 424
          ? { code: 'server' as const }
          : undefined;
  return upstreamErrorFor(PROVIDER, status, headers, errorType, override);
}

function parseResponse(status: number, headers: UpstreamHeaders, bodyText: string, requestedModel?: string): CompletionResult {
  if (status < 200 || status > 299) throw parseError(status, headers, bodyText);
  const body = parseJsonObject(PROVIDER, bodyText);
  const content = arrayAt(objectAt(objectAt(body, 'output'), 'message'), 'content');
  if (!content) throw invalidResponse(PROVIDER);
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const block of content) {
    if (!isObject(block)) continue;
    if (typeof block.text === 'string') text += block.text;
    const toolUse = objectAt(block, 'toolUse');
    if (toolUse) toolCalls.push({ id: stringAt(toolUse, 'toolUseId') ?? `tooluse_${toolCalls.length}`, name: stringAt(toolUse, 'name') ?? '', arguments: JSON.stringify(toolUse.input ?? {}) });
  }
  const rawFinishReason = stringAt(body, 'stopReason') ?? null;
  const result: CompletionResult = {
    content: text,
    finishReason: mapFinishReason(rawFinishReason),
    rawFinishReason,
    usage: toUsage(body.usage),
    model: requestedModel ?? '',
  };
  if (toolCalls.length > 0) result.toolCalls = toolCalls;
  return result;
}

const STREAM_EXCEPTIONS: Readonly<Record<string, 'rate_limited' | 'overloaded' | 'server' | 'bad_request'>> = {
  throttlingException: 'rate_limited',
  serviceUnavailableException: 'overloaded',
  internalServerException: 'server',
  modelStreamErrorException: 'server',
  validationException: 'bad_request',
};

function parseStream(body: AsyncIterable<Uint8Array>): AsyncIterableIterator<StreamEvent> {
  return streamEvents(awsEventBatches(body, PROVIDER), new ConverseStreamEvents());
}

/** One ConverseStream's event-stream messages as stream events, a read's frames converted together (streamEvents). */
class ConverseStreamEvents implements StreamConverter<AwsEventMessage> {
  private rawFinishReason: string | null = null;
  private stopped = false;
  private readonly toolIndexByBlock = new Map<number, number>();

  step(message: AwsEventMessage, out: StreamEvent[]): boolean {
    if (message.messageType !== 'event') {
      const code = STREAM_EXCEPTIONS[message.type] ?? 'server';
      throw new UpstreamError({ provider: PROVIDER, status: null, code, providerCode: message.type || 'stream_exception' });
    }
    const data = parseJsonObject(PROVIDER, message.payload.length > 0 ? message.payload : '{}');
    switch (message.type) {
      case 'contentBlockStart': {
        const toolUse = objectAt(objectAt(data, 'start'), 'toolUse');
        if (toolUse) {
          const index = this.toolIndexByBlock.size;
          this.toolIndexByBlock.set(countAt(data, 'contentBlockIndex') ?? 0, index);
          out.push({ type: 'tool_call_delta', index, id: stringAt(toolUse, 'toolUseId') ?? `tooluse_${index}`, name: stringAt(toolUse, 'name') ?? '', argumentsDelta: '' });
        }
        return false;
      }
      case 'contentBlockDelta': {
        const delta = objectAt(data, 'delta');
        const text = stringAt(delta, 'text');
        if (text !== undefined && text.length > 0) out.push({ type: 'delta', text });
        const toolUse = objectAt(delta, 'toolUse');
        if (toolUse) {
          const index = this.toolIndexByBlock.get(countAt(data, 'contentBlockIndex') ?? 0) ?? 0;
          out.push({ type: 'tool_call_delta', index, argumentsDelta: stringAt(toolUse, 'input') ?? '' });
        }
        return false;
      }
      case 'messageStop':
        this.rawFinishReason = stringAt(data, 'stopReason') ?? null;
        this.stopped = true;
        return false;
      case 'metadata': {
        const rawFinishReason = this.rawFinishReason;
        out.push({ type: 'done', finishReason: mapFinishReason(rawFinishReason), rawFinishReason, usage: toUsage(data.usage) });
        return true;
      }
      default:
        return false;
    }
  }

  end(): StreamEvent {
    if (!this.stopped) throw truncatedStream(PROVIDER);
    const rawFinishReason = this.rawFinishReason;
    return { type: 'done', finishReason: mapFinishReason(rawFinishReason), rawFinishReason, usage: null };
  }
}

export const bedrock = {
  id: PROVIDER,
  displayName: 'Amazon Bedrock',
  defaultBaseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com',
  streamFormat: 'aws-eventstream',
  images: 'inline',
  buildRequest,
  parseResponse,
  parseError,
  parseStream,
} satisfies ProviderAdapter;
