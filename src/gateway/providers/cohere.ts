// Cohere Chat API v2: POST /v2/chat, Bearer key, system role inside messages, OpenAI-like tool
// calls, SSE events message-start / content-delta / tool-call-* / message-end.
import { UpstreamError } from '../contract.ts';
import type {
  ChatMessage,
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
import { sseBatches, streamEvents, type SseEvent, type StreamConverter } from '../streaming/sse.ts';
import {
  arrayAt,
  countAt,
  finishFrom,
  invalidResponse,
  isObject,
  joinUrl,
  objectAt,
  parseJsonObject,
  stringAt,
  truncatedStream,
  tryParseJsonObject,
  upstreamErrorFor,
  usageOf,
} from './shared/common.ts';
import type { JsonObject } from './shared/common.ts';

const PROVIDER = 'cohere';
const DEFAULT_BASE_URL = 'https://api.cohere.com';

const FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  COMPLETE: 'stop',
  STOP_SEQUENCE: 'stop',
  MAX_TOKENS: 'length',
  TOOL_CALL: 'tool_calls',
  ERROR: 'error',
  TIMEOUT: 'error',
};

export function mapFinishReason(raw: string | null | undefined): FinishReason {
  return finishFrom(FINISH_REASONS, raw);
}

/** usage.tokens are the model's counts; billed_units is the fallback; cached_tokens when reported. */
export function toUsage(usage: unknown): TokenUsage | null {
  const counts = objectAt(usage, 'tokens') ?? objectAt(usage, 'billed_units');
  const input = countAt(counts, 'input_tokens');
  const output = countAt(counts, 'output_tokens');
  if (input === undefined && output === undefined) return null;
  const cached = countAt(usage, 'cached_tokens');
  return usageOf(input ?? 0, output ?? 0, cached !== undefined && cached > 0 ? { cached } : {});
}

function toWireMessage(message: ChatMessage): JsonObject {
  if (message.role === 'tool') {
    return { role: 'tool', tool_call_id: message.tool_call_id ?? '', content: message.content };
  }
  const wire: JsonObject = { role: message.role, content: message.content };
  if (message.images && message.images.length > 0) {
    const parts: JsonObject[] = message.content.length > 0 ? [{ type: 'text', text: message.content }] : [];
    for (const image of message.images) parts.push({ type: 'image_url', image_url: image.detail === undefined ? { url: image.url } : { url: image.url, detail: image.detail } });
    wire.content = parts;
  }
  if (message.role === 'assistant' && message.tool_calls && message.tool_calls.length > 0) {
    wire.tool_calls = message.tool_calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
  }
  return wire;
}

export function buildBody(request: CompletionRequest): JsonObject {
  const body: JsonObject = { model: request.model, messages: request.messages.map(toWireMessage) };
  if (request.max_tokens !== undefined) body.max_tokens = request.max_tokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, ...(tool.description === undefined ? {} : { description: tool.description }), parameters: tool.parameters },
    }));
  }
  body.stream = request.stream;
  return body;
}

function parseError(status: number, headers: UpstreamHeaders, bodyText: string): UpstreamError {
  const body = tryParseJsonObject(bodyText);
  // Cohere answers 498 for an invalid token and 499 for a client-cancelled request.
  const override = status === 498 ? { code: 'auth' as const } : undefined;
  return upstreamErrorFor(PROVIDER, status, headers, stringAt(body, 'code') ?? stringAt(body, 'type'), override);
}

function parseResponse(status: number, headers: UpstreamHeaders, bodyText: string, requestedModel?: string): CompletionResult {
  if (status < 200 || status > 299) throw parseError(status, headers, bodyText);
  const body = parseJsonObject(PROVIDER, bodyText);
  const message = objectAt(body, 'message');
  if (!message) throw invalidResponse(PROVIDER);
  let text = '';
  for (const block of arrayAt(message, 'content') ?? []) {
    if (stringAt(block, 'type') === 'text') text += stringAt(block, 'text') ?? '';
  }
  const toolCalls: ToolCall[] = [];
  for (const call of arrayAt(message, 'tool_calls') ?? []) {
    const fn = objectAt(call, 'function');
    toolCalls.push({ id: stringAt(call, 'id') ?? `call_${toolCalls.length}`, name: stringAt(fn, 'name') ?? '', arguments: stringAt(fn, 'arguments') ?? '{}' });
  }
  const rawFinishReason = stringAt(body, 'finish_reason') ?? null;
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

function parseStream(body: AsyncIterable<Uint8Array>): AsyncIterableIterator<StreamEvent> {
  return streamEvents(sseBatches(body, PROVIDER), new CohereEvents());
}

/** One stream's v2 chat events as stream events, a read's events converted together (streamEvents). */
class CohereEvents implements StreamConverter {
  private toolIndex = -1;

  step(event: SseEvent, out: StreamEvent[]): boolean {
    const dataText = event.data.trim();
    if (dataText.length === 0 || dataText === '[DONE]') return false;
    const data = parseJsonObject(PROVIDER, dataText);
    const type = stringAt(data, 'type') ?? event.event;
    const message = objectAt(objectAt(data, 'delta'), 'message');
    switch (type) {
      case 'content-delta': {
        const text = stringAt(objectAt(message, 'content'), 'text') ?? '';
        if (text.length > 0) out.push({ type: 'delta', text });
        return false;
      }
      case 'tool-call-start': {
        const toolIndex = ++this.toolIndex;
        const call = objectAt(message, 'tool_calls');
        const fn = objectAt(call, 'function');
        out.push({ type: 'tool_call_delta', index: toolIndex, id: stringAt(call, 'id') ?? `call_${toolIndex}`, name: stringAt(fn, 'name') ?? '', argumentsDelta: stringAt(fn, 'arguments') ?? '' });
        return false;
      }
      case 'tool-call-delta': {
        const fn = objectAt(objectAt(message, 'tool_calls'), 'function');
        out.push({ type: 'tool_call_delta', index: Math.max(this.toolIndex, 0), argumentsDelta: stringAt(fn, 'arguments') ?? '' });
        return false;
      }
      case 'message-end': {
        const delta = objectAt(data, 'delta');
        const rawFinishReason = stringAt(delta, 'finish_reason') ?? null;
        if (isObject(delta?.error) || rawFinishReason === 'ERROR') {
          throw new UpstreamError({ provider: PROVIDER, status: null, code: 'server', providerCode: 'stream_error' });
        }
        out.push({ type: 'done', finishReason: mapFinishReason(rawFinishReason), rawFinishReason, usage: toUsage(delta?.usage) });
        return true;
      }
      default:
        return false;
    }
  }

  end(): StreamEvent {
    throw truncatedStream(PROVIDER);
  }
}

export const cohere = {
  id: PROVIDER,
  displayName: 'Cohere',
  defaultBaseUrl: DEFAULT_BASE_URL,
  streamFormat: 'sse',
  images: 'url',
  buildRequest(request: CompletionRequest, target: ProviderTarget): UpstreamRequest {
    return {
      url: joinUrl(target.baseUrl ?? DEFAULT_BASE_URL, '/v2/chat'),
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: request.stream ? 'text/event-stream' : 'application/json',
        authorization: `Bearer ${target.apiKey}`,
      },
      body: JSON.stringify(buildBody(request)),
    };
  },
  parseResponse,
  parseError,
  parseStream,
} satisfies ProviderAdapter;
