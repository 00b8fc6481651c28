// The shared base of every adapter that speaks OpenAI's Chat Completions wire protocol
// (POST …/chat/completions, SSE chunks ending with `data: [DONE]`). Vendors differ only in the
// settings below; their files are a few lines each.
import { UpstreamError } from '../../contract.ts';
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
  UpstreamErrorCode,
  UpstreamHeaders,
  UpstreamRequest,
} from '../../contract.ts';
import { sseBatches, streamEvents, type SseEvent, type StreamConverter } from '../../streaming/sse.ts';
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
} from './common.ts';

export interface OpenAiChatSettings {
  id: string;
  displayName: string;
  defaultBaseUrl: string | null;
  /** Send `stream_options: { include_usage: true }` (usage in the last chunk). Default true. */
  streamUsageOption?: boolean;
  /** Name of the output-limit field. Default 'max_tokens'. */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** URL for a target; default `${baseUrl}/chat/completions`. */
  url?: (request: CompletionRequest, target: ProviderTarget, baseUrl: string) => string;
  /** Auth headers; default `Authorization: Bearer <key>`. */
  authHeaders?: (target: ProviderTarget) => Record<string, string>;
  /** Omit `model` from the body (Azure routes by deployment in the URL). */
  omitModel?: boolean;
  /** Send the optional participant `name` of messages. Default true (Mistral rejects it). */
  sendName?: boolean;
  /** Which images the vendor takes (see ProviderAdapter.images). Default 'url'. */
  images?: 'url' | 'inline' | 'none';
  /** Vendor-specific error codes, consulted before the shared status mapping. */
  errorCode?: (status: number, providerCode: string | undefined) => UpstreamErrorCode | undefined;
}

export const OPENAI_FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  stop: 'stop',
  length: 'length',
  model_length: 'length',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  content_filter: 'content_filter',
  error: 'error',
};

export function mapFinishReason(raw: string | null | undefined): FinishReason {
  return finishFrom(OPENAI_FINISH_REASONS, raw);
}

/** OpenAI usage incl. prompt_tokens_details.cached_tokens, completion_tokens_details.reasoning_tokens, DeepSeek prompt_cache_hit_tokens. */
export function toUsage(usage: unknown): TokenUsage | null {
  if (!isObject(usage)) return null;
  const prompt = countAt(usage, 'prompt_tokens');
  const completion = countAt(usage, 'completion_tokens');
  if (prompt === undefined && completion === undefined) return null;
  const cached = countAt(objectAt(usage, 'prompt_tokens_details'), 'cached_tokens') ?? countAt(usage, 'prompt_cache_hit_tokens');
  const reasoning = countAt(objectAt(usage, 'completion_tokens_details'), 'reasoning_tokens');
  const extra: { total?: number; cached?: number; reasoning?: number } = {};
  const total = countAt(usage, 'total_tokens');
  if (total !== undefined) extra.total = total;
  if (cached !== undefined) extra.cached = cached;
  if (reasoning !== undefined) extra.reasoning = reasoning;
  return usageOf(prompt ?? 0, completion ?? 0, extra);
}

/** Text, or OpenAI content parts when the message carries images. */
export function openAiContent(message: ChatMessage): string | Record<string, unknown>[] {
  if (!message.images || message.images.length === 0) return message.content;
  const parts: Record<string, unknown>[] = message.content.length > 0 ? [{ type: 'text', text: message.content }] : [];
  for (const image of message.images) parts.push({ type: 'image_url', image_url: image.detail === undefined ? { url: image.url } : { url: image.url, detail: image.detail } });
  return parts;
}

function toWireMessage(message: ChatMessage, sendName: boolean): Record<string, unknown> {
  const wire: Record<string, unknown> = { role: message.role, content: openAiContent(message) };
  if (sendName && message.name !== undefined && message.role !== 'tool') wire.name = message.name;
  if (message.role === 'tool' && message.tool_call_id !== undefined) wire.tool_call_id = message.tool_call_id;
  if (message.role === 'assistant' && message.tool_calls && message.tool_calls.length > 0) {
    wire.tool_calls = message.tool_calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
  }
  return wire;
}

export function buildOpenAiChatBody(request: CompletionRequest, settings: Pick<OpenAiChatSettings, 'streamUsageOption' | 'maxTokensField' | 'omitModel' | 'sendName'>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (!settings.omitModel) body.model = request.model;
  const sendName = settings.sendName ?? true;
  body.messages = request.messages.map((message) => toWireMessage(message, sendName));
  if (request.max_tokens !== undefined) body[settings.maxTokensField ?? 'max_tokens'] = request.max_tokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, ...(tool.description === undefined ? {} : { description: tool.description }), parameters: tool.parameters },
    }));
  }
  // As the official SDKs do: `stream` only when streaming (false is the default everywhere).
  if (request.stream) body.stream = true;
  if (request.stream && (settings.streamUsageOption ?? true)) body.stream_options = { include_usage: true };
  return body;
}

function toolCallsOf(message: unknown): ToolCall[] | undefined {
  const calls = arrayAt(message, 'tool_calls');
  if (!calls || calls.length === 0) return undefined;
  const result: ToolCall[] = [];
  for (const call of calls) {
    const fn = objectAt(call, 'function');
    const name = stringAt(fn, 'name');
    if (name === undefined) continue;
    const args = fn?.arguments;
    result.push({ id: stringAt(call, 'id') ?? `call_${result.length}`, name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) });
  }
  return result.length > 0 ? result : undefined;
}

/** Out of credit rather than rate limited: OpenAI's 429 `insufficient_quota`, a 402 (DeepSeek "Insufficient Balance"). */
function quotaCode(status: number, providerCode: string | undefined): UpstreamErrorCode | undefined {
  if (status === 402 || providerCode === 'insufficient_quota') return 'quota_exceeded';
  return undefined;
}

export function parseOpenAiError(
  provider: string,
  status: number,
  headers: UpstreamHeaders,
  bodyText: string,
  errorCode?: (status: number, providerCode: string | undefined) => UpstreamErrorCode | undefined,
): UpstreamError {
  const body = tryParseJsonObject(bodyText);
  const error = objectAt(body, 'error');
  // `code` is the specific reason (insufficient_quota) where `type` is the family (insufficient_quota / rate_limit_error…).
  const providerCode = stringAt(error, 'code') ?? stringAt(error, 'type') ?? stringAt(body, 'code') ?? undefined;
  const typeCode = stringAt(error, 'type');
  const code = errorCode?.(status, providerCode) ?? quotaCode(status, providerCode) ?? quotaCode(status, typeCode);
  return upstreamErrorFor(provider, status, headers, providerCode, code === undefined ? undefined : { code });
}

/**
 * `message.content` as text: a string, or (Mistral's reasoning models) an array of parts whose
 * `text` parts are the answer and whose `thinking` parts are the hidden reasoning (not returned).
 * Anything else is not the documented shape.
 */
function contentText(provider: string, content: unknown): string | undefined {
  if (content === null || content === undefined) return undefined;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalidResponse(provider);
  let text = '';
  for (const part of content) {
    if (typeof part === 'string') text += part;
    else if (isObject(part) && part.type === 'text' && typeof part.text === 'string') text += part.text;
  }
  return text;
}

export function parseOpenAiResponse(provider: string, bodyText: string, requestedModel: string | undefined): CompletionResult {
  const body = parseJsonObject(provider, bodyText);
  const choice = arrayAt(body, 'choices')?.[0];
  const message = objectAt(choice, 'message');
  if (!message) throw invalidResponse(provider);
  const refusal = stringAt(message, 'refusal');
  const content = contentText(provider, message.content);
  const rawFinishReason = stringAt(choice, 'finish_reason') ?? null;
  const result: CompletionResult = {
    // A refusal comes with content null: the refusal text is the answer, finish content_filter.
    content: refusal !== undefined && refusal.length > 0 && !content ? refusal : (content ?? ''),
    finishReason: refusal !== undefined && refusal.length > 0 ? 'content_filter' : mapFinishReason(rawFinishReason),
    rawFinishReason,
    usage: toUsage(body.usage),
    model: stringAt(body, 'model') || requestedModel || '',
  };
  const toolCalls = toolCallsOf(message);
  if (toolCalls) result.toolCalls = toolCalls;
  return result;
}

export function parseOpenAiStream(provider: string, body: AsyncIterable<Uint8Array>): AsyncIterableIterator<StreamEvent> {
  return streamEvents(sseBatches(body, provider), new OpenAiChunks(provider));
}

/** One stream's Chat Completions chunks as stream events, a read's events converted together (streamEvents). */
class OpenAiChunks implements StreamConverter {
  private rawFinishReason: string | null = null;
  private refused = false;
  private usage: TokenUsage | null = null;
  private model: string | undefined;

  constructor(private readonly provider: string) {}

  private done(): StreamEvent {
    const finishReason: FinishReason = this.refused ? 'content_filter' : mapFinishReason(this.rawFinishReason);
    return { type: 'done', finishReason, rawFinishReason: this.rawFinishReason, usage: this.usage, ...(this.model === undefined ? {} : { model: this.model }) };
  }

  step(event: SseEvent, out: StreamEvent[]): boolean {
    const provider = this.provider;
    const data = event.data.trim();
    if (data === '[DONE]') {
      out.push(this.done());
      return true;
    }
    if (data.length === 0) return false;
    const chunk = parseJsonObject(provider, data);
    if (isObject(chunk.error)) {
      const error = chunk.error;
      throw new UpstreamError({ provider, status: null, code: 'server', providerCode: stringAt(error, 'code') ?? stringAt(error, 'type') ?? 'stream_error' });
    }
    // Azure's first chunk (prompt filter results) carries model "": keep the first real one.
    if (this.model === undefined) this.model = stringAt(chunk, 'model') || undefined;
    this.usage = toUsage(chunk.usage) ?? toUsage(objectAt(chunk, 'x_groq')?.usage) ?? this.usage;
    const choice = arrayAt(chunk, 'choices')?.[0];
    if (!isObject(choice)) return false;
    const delta = objectAt(choice, 'delta');
    const text = isObject(delta) ? contentText(provider, delta.content) : undefined;
    if (text !== undefined && text.length > 0) out.push({ type: 'delta', text });
    const refusal = stringAt(delta, 'refusal');
    if (refusal !== undefined && refusal.length > 0) {
      this.refused = true;
      out.push({ type: 'delta', text: refusal });
    }
    const calls = arrayAt(delta, 'tool_calls');
    if (calls) {
      for (const call of calls) {
        const fn = objectAt(call, 'function');
        const index = countAt(call, 'index') ?? 0;
        const id = stringAt(call, 'id');
        const name = stringAt(fn, 'name');
        out.push({
          type: 'tool_call_delta',
          index,
          ...(id === undefined ? {} : { id }),
          ...(name === undefined ? {} : { name }),
          argumentsDelta: stringAt(fn, 'arguments') ?? '',
        });
      }
    }
    const finishReason = stringAt(choice, 'finish_reason');
    if (finishReason !== undefined) this.rawFinishReason = finishReason;
    return false;
  }

  end(): StreamEvent {
    // Some compatible servers close without [DONE]; a finish_reason already seen means the answer
    // is complete. Without one the stream was cut: never a silent truncation.
    if (this.rawFinishReason === null) throw truncatedStream(this.provider);
    return this.done();
  }
}

function requireBaseUrl(settings: OpenAiChatSettings, target: ProviderTarget): string {
  const base = target.baseUrl ?? settings.defaultBaseUrl;
  if (!base) throw new UpstreamError({ provider: settings.id, status: null, code: 'bad_request', retryable: false, providerCode: 'base_url_required' });
  return base;
}

export function createOpenAiChatAdapter(settings: OpenAiChatSettings): ProviderAdapter {
  const provider = settings.id;
  return {
    id: settings.id,
    displayName: settings.displayName,
    defaultBaseUrl: settings.defaultBaseUrl,
    streamFormat: 'sse',
    images: settings.images ?? 'url',
    buildRequest(request: CompletionRequest, target: ProviderTarget): UpstreamRequest {
      const base = requireBaseUrl(settings, target);
      const url = settings.url ? settings.url(request, target, base) : joinUrl(base, '/chat/completions');
      const auth = settings.authHeaders ? settings.authHeaders(target) : { authorization: `Bearer ${target.apiKey}` };
      return {
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: request.stream ? 'text/event-stream' : 'application/json', ...auth },
        body: JSON.stringify(buildOpenAiChatBody(request, settings)),
      };
    },
    parseResponse(status: number, headers: UpstreamHeaders, bodyText: string, requestedModel?: string): CompletionResult {
      if (status < 200 || status > 299) throw parseOpenAiError(provider, status, headers, bodyText, settings.errorCode);
      return parseOpenAiResponse(provider, bodyText, requestedModel);
    },
    parseError(status: number, headers: UpstreamHeaders, bodyText: string): UpstreamError {
      return parseOpenAiError(provider, status, headers, bodyText, settings.errorCode);
    },
    parseStream(body: AsyncIterable<Uint8Array>): AsyncIterable<StreamEvent> {
      return parseOpenAiStream(provider, body);
    },
  };
}
