// Anthropic Messages API: POST /v1/messages, x-api-key + anthropic-version, top-level `system`,
// tool_use / tool_result content blocks, named SSE events.
//
// API version: a setting of the adapter (ANTHROPIC_VERSION, the version the official SDK sends),
// overridable per key with `extra.anthropic_version`. Parameters a version or model refuses are
// mapped, not forwarded: 2026-10-21 removed `temperature` (and top_p/top_k), and models released
// after Claude Opus 4.6 reject any temperature but 1 under older versions too — svc then omits it.
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
  argumentsObject,
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

const PROVIDER = 'anthropic';
/** The default `anthropic-version` (what @anthropic-ai/sdk 1.x sends). */
export const ANTHROPIC_VERSION = '2026-10-21';
/** The first API version without sampling parameters (temperature, top_p, top_k). */
const VERSION_WITHOUT_SAMPLING = '2026-10-21';
/** Model families released after Claude Opus 4.6: temperature other than 1 is refused on every version. */
const NO_TEMPERATURE_MODELS = /^(?:anthropic\.|us\.|eu\.|global\.)?claude-(?:opus-4-[7-9]|(?:opus|sonnet|haiku|fable)-(?:[5-9]|\d{2,}))(?:\D|$)/;

/** Whether `temperature` may be sent for this model under this API version. */
export function acceptsTemperature(model: string, version: string, temperature: number): boolean {
  if (version >= VERSION_WITHOUT_SAMPLING) return false;
  return temperature === 1 || !NO_TEMPERATURE_MODELS.test(model);
}
/** max_tokens is required by the Messages API; used when the request sets none. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

const FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

export function mapFinishReason(raw: string | null | undefined): FinishReason {
  return finishFrom(FINISH_REASONS, raw);
}

/** input_tokens excludes cache reads and writes; promptTokens adds them back. */
export function toUsage(usage: unknown): TokenUsage | null {
  if (!isObject(usage)) return null;
  const input = countAt(usage, 'input_tokens');
  const output = countAt(usage, 'output_tokens');
  if (input === undefined && output === undefined) return null;
  const cacheRead = countAt(usage, 'cache_read_input_tokens') ?? 0;
  const cacheWrite = countAt(usage, 'cache_creation_input_tokens') ?? 0;
  return usageOf((input ?? 0) + cacheRead + cacheWrite, output ?? 0, cacheRead > 0 ? { cached: cacheRead } : {});
}

type Block = JsonObject;

const DATA_URL = /^data:(image\/(?:png|jpeg|gif|webp));base64,([A-Za-z0-9+/=]+)$/;

function imageBlock(url: string): Block {
  const data = DATA_URL.exec(url);
  if (data) return { type: 'image', source: { type: 'base64', media_type: data[1], data: data[2] } };
  return { type: 'image', source: { type: 'url', url } };
}

function blocksOf(message: ChatMessage): Block[] {
  if (message.role === 'tool') {
    return [{ type: 'tool_result', tool_use_id: message.tool_call_id ?? '', content: message.content }];
  }
  const blocks: Block[] = [];
  if (message.content.length > 0) blocks.push({ type: 'text', text: message.content });
  for (const image of message.images ?? []) blocks.push(imageBlock(image.url));
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: argumentsObject(call.arguments) });
  }
  return blocks;
}

export function buildBody(request: CompletionRequest, version: string = ANTHROPIC_VERSION): JsonObject {
  const system = request.messages.filter((message) => message.role === 'system').map((message) => message.content);
  // Consecutive turns of the same role are merged: tool results travel as user turns.
  const messages: { role: 'user' | 'assistant'; content: Block[] }[] = [];
  for (const message of request.messages) {
    if (message.role === 'system') continue;
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const blocks = blocksOf(message);
    if (blocks.length === 0) continue;
    const last = messages.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  }
  const body: JsonObject = { model: request.model, max_tokens: request.max_tokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS };
  if (system.length > 0) body.system = system.join('\n\n');
  body.messages = messages.map((message) =>
    message.content.length === 1 && message.content[0]?.type === 'text' ? { role: message.role, content: message.content[0].text } : message,
  );
  if (request.temperature !== undefined && acceptsTemperature(request.model, version, request.temperature)) body.temperature = request.temperature;
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      input_schema: tool.parameters,
    }));
  }
  if (request.stream) body.stream = true;
  return body;
}

function parseError(status: number, headers: UpstreamHeaders, bodyText: string): UpstreamError {
  const body = tryParseJsonObject(bodyText);
  const type = stringAt(objectAt(body, 'error'), 'type');
  return upstreamErrorFor(PROVIDER, status, headers, type, type === 'overloaded_error' ? { code: 'overloaded' } : undefined);
}

function parseResponse(status: number, headers: UpstreamHeaders, bodyText: string, requestedModel?: string): CompletionResult {
  if (status < 200 || status > 299) throw parseError(status, headers, bodyText);
  const body = parseJsonObject(PROVIDER, bodyText);
  const content = arrayAt(body, 'content');
  if (!content) throw invalidResponse(PROVIDER);
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const block of content) {
    const type = stringAt(block, 'type');
    if (type === 'text') {
      // A text block whose text is not a string is not the documented shape.
      const blockText = (block as Record<string, unknown>).text;
      if (typeof blockText !== 'string') throw invalidResponse(PROVIDER);
      text += blockText;
    }
    else if (type === 'tool_use') {
      toolCalls.push({ id: stringAt(block, 'id') ?? `toolu_${toolCalls.length}`, name: stringAt(block, 'name') ?? '', arguments: JSON.stringify(objectAt(block, 'input') ?? {}) });
    }
  }
  const rawFinishReason = stringAt(body, 'stop_reason') ?? null;
  const result: CompletionResult = {
    content: text,
    finishReason: mapFinishReason(rawFinishReason),
    rawFinishReason,
    usage: toUsage(body.usage),
    model: stringAt(body, 'model') ?? requestedModel ?? '',
  };
  if (toolCalls.length > 0) result.toolCalls = toolCalls;
  return result;
}

function parseStream(body: AsyncIterable<Uint8Array>): AsyncIterableIterator<StreamEvent> {
  return streamEvents(sseBatches(body, PROVIDER), new AnthropicEvents());
}

/** One stream's Messages events as stream events, a read's events converted together (streamEvents). */
class AnthropicEvents implements StreamConverter {
  private usage: TokenUsage | null = null;
  private model: string | undefined;
  private rawFinishReason: string | null = null;
  private inputUsage: unknown;
  private readonly toolIndexByBlock = new Map<number, number>();

  step(event: SseEvent, out: StreamEvent[]): boolean {
    if (event.event === 'ping' || event.data.length === 0) return false;
    const data = parseJsonObject(PROVIDER, event.data);
    const type = event.event ?? stringAt(data, 'type');
    switch (type) {
      case 'message_start': {
        const message = objectAt(data, 'message');
        this.model = stringAt(message, 'model');
        this.inputUsage = message?.usage;
        this.usage = toUsage(this.inputUsage);
        return false;
      }
      case 'content_block_start': {
        const block = objectAt(data, 'content_block');
        if (stringAt(block, 'type') === 'tool_use') {
          const index = this.toolIndexByBlock.size;
          this.toolIndexByBlock.set(countAt(data, 'index') ?? 0, index);
          out.push({ type: 'tool_call_delta', index, id: stringAt(block, 'id') ?? `toolu_${index}`, name: stringAt(block, 'name') ?? '', argumentsDelta: '' });
        }
        return false;
      }
      case 'content_block_delta': {
        const delta = objectAt(data, 'delta');
        const deltaType = stringAt(delta, 'type');
        if (deltaType === 'text_delta') {
          const text = stringAt(delta, 'text') ?? '';
          if (text.length > 0) out.push({ type: 'delta', text });
        } else if (deltaType === 'input_json_delta') {
          const index = this.toolIndexByBlock.get(countAt(data, 'index') ?? 0) ?? 0;
          out.push({ type: 'tool_call_delta', index, argumentsDelta: stringAt(delta, 'partial_json') ?? '' });
        }
        return false;
      }
      case 'message_delta': {
        this.rawFinishReason = stringAt(objectAt(data, 'delta'), 'stop_reason') ?? this.rawFinishReason;
        // message_delta usage is cumulative; input fields may be absent there, keep message_start's.
        const inputUsage = this.inputUsage;
        const merged = isObject(data.usage) ? { ...(isObject(inputUsage) ? inputUsage : {}), ...data.usage } : inputUsage;
        this.usage = toUsage(merged) ?? this.usage;
        return false;
      }
      case 'message_stop': {
        const { rawFinishReason, usage, model } = this;
        out.push({ type: 'done', finishReason: mapFinishReason(rawFinishReason), rawFinishReason, usage, ...(model === undefined ? {} : { model }) });
        return true;
      }
      case 'error': {
        const errorType = stringAt(objectAt(data, 'error'), 'type') ?? 'stream_error';
        throw new UpstreamError({ provider: PROVIDER, status: null, code: errorType === 'overloaded_error' ? 'overloaded' : 'server', providerCode: errorType });
      }
      default:
        return false;
    }
  }

  end(): StreamEvent {
    throw truncatedStream(PROVIDER);
  }
}

export const anthropic = {
  id: 'anthropic',
  displayName: 'Anthropic',
  defaultBaseUrl: 'https://api.anthropic.com',
  streamFormat: 'sse',
  images: 'url',
  buildRequest(request: CompletionRequest, target: ProviderTarget): UpstreamRequest {
    const version = target.extra?.anthropic_version ?? ANTHROPIC_VERSION;
    return {
      url: joinUrl(target.baseUrl ?? 'https://api.anthropic.com', '/v1/messages'),
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: request.stream ? 'text/event-stream' : 'application/json',
        'x-api-key': target.apiKey,
        'anthropic-version': version,
      },
      body: JSON.stringify(buildBody(request, version)),
    };
  },
  parseResponse,
  parseError,
  parseStream,
} satisfies ProviderAdapter;
