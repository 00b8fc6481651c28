// The shared base of Google's generateContent wire protocol, spoken by both the Gemini API
// (gemini.ts) and Vertex AI (vertex-ai.ts): contents/parts, systemInstruction, functionDeclarations,
// candidates + usageMetadata, and `alt=sse` streaming where every event is a full response chunk.
import { UpstreamError } from '../../contract.ts';
import type {
  CompletionRequest,
  CompletionResult,
  FinishReason,
  StreamEvent,
  TokenUsage,
  ToolCall,
  UpstreamHeaders,
} from '../../contract.ts';
import { sseBatches, streamEvents, type SseEvent, type StreamConverter } from '../../streaming/sse.ts';
import {
  argumentsObject,
  arrayAt,
  countAt,
  invalidResponse,
  finishFrom,
  isObject,
  objectAt,
  parseJsonObject,
  stringAt,
  truncatedStream,
  tryParseJsonObject,
  upstreamErrorFor,
  usageOf,
} from './common.ts';
import type { JsonObject } from './common.ts';

const FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
  MALFORMED_FUNCTION_CALL: 'error',
  UNEXPECTED_TOOL_CALL: 'error',
};

export function mapFinishReason(raw: string | null | undefined, hasToolCalls = false): FinishReason {
  const mapped = finishFrom(FINISH_REASONS, raw);
  return mapped === 'stop' && hasToolCalls ? 'tool_calls' : mapped;
}

/** candidatesTokenCount excludes thoughts; completionTokens adds thoughtsTokenCount back. */
export function toUsage(metadata: unknown): TokenUsage | null {
  if (!isObject(metadata)) return null;
  const prompt = countAt(metadata, 'promptTokenCount');
  const candidates = countAt(metadata, 'candidatesTokenCount') ?? 0;
  const thoughts = countAt(metadata, 'thoughtsTokenCount');
  const cached = countAt(metadata, 'cachedContentTokenCount');
  if (prompt === undefined && candidates === 0 && thoughts === undefined) return null;
  const extra: { total?: number; cached?: number; reasoning?: number } = {};
  const total = countAt(metadata, 'totalTokenCount');
  if (total !== undefined) extra.total = total;
  if (cached !== undefined) extra.cached = cached;
  if (thoughts !== undefined) extra.reasoning = thoughts;
  return usageOf(prompt ?? 0, candidates + (thoughts ?? 0), extra);
}

/** Schema.type is an enum (STRING, OBJECT…); @google/genai sends the upper-case names. */
const schemaType = (type: unknown): unknown => (typeof type === 'string' ? type.toUpperCase() : type);

const isNullSchema = (value: unknown): boolean => isObject(value) && value.type === 'null' && Object.keys(value).length === 1;

/**
 * Gemini's schema dialect is an OpenAPI 3.0 subset: drop the JSON-Schema-only keys it rejects,
 * send `type` as the enum's upper-case name and express null the OpenAPI way, as @google/genai does: `type: ["string", "null"]` becomes
 * `type: "string", nullable: true` (Schema.type takes one value), and a `null` branch of
 * `anyOf` becomes `nullable: true` (a single remaining branch is inlined).
 */
export function toGeminiSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toGeminiSchema);
  if (!isObject(schema)) return schema;
  const result: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$schema' || key === 'additionalProperties' || key === '$id' || key === '$defs') continue;
    if (key === 'type' && (typeof value === 'string' || Array.isArray(value))) {
      const types = (Array.isArray(value) ? value : [value]).filter((type) => type !== 'null');
      if (types.length < (Array.isArray(value) ? value.length : 1)) result.nullable = true;
      if (types.length === 1) result.type = schemaType(types[0]);
      else if (types.length > 1) result.anyOf = types.map((type) => ({ type: schemaType(type) }));
      continue;
    }
    if (key === 'anyOf' && Array.isArray(value)) {
      const branches = value.filter((branch) => !isNullSchema(branch));
      if (branches.length < value.length) result.nullable = true;
      if (branches.length === 1) Object.assign(result, toGeminiSchema(branches[0]) as JsonObject);
      else result.anyOf = branches.map(toGeminiSchema);
      continue;
    }
    result[key] = toGeminiSchema(value);
  }
  return result;
}

const DATA_URL = /^data:([a-z]+\/[A-Za-z0-9.+-]+);base64,([A-Za-z0-9+/=]+)$/;

/** Gemini takes image bytes inline (`inlineData`); a remote URL is refused before any call. */
function inlineImage(provider: string, url: string): JsonObject {
  const data = DATA_URL.exec(url);
  if (!data) throw new UpstreamError({ provider, status: null, code: 'bad_request', retryable: false, providerCode: 'image_url_not_supported' });
  return { inlineData: { mimeType: data[1], data: data[2] } };
}

export function buildGenerateContentBody(request: CompletionRequest, provider = 'gemini'): JsonObject {
  const toolNames = new Map<string, string>();
  const contents: { role: 'user' | 'model'; parts: JsonObject[] }[] = [];
  const system: JsonObject[] = [];
  for (const message of request.messages) {
    if (message.role === 'system') {
      system.push({ text: message.content });
      continue;
    }
    const parts: JsonObject[] = [];
    let role: 'user' | 'model' = 'user';
    if (message.role === 'assistant') {
      role = 'model';
      if (message.content.length > 0) parts.push({ text: message.content });
      for (const call of message.tool_calls ?? []) {
        toolNames.set(call.id, call.name);
        // Gemini 3 requires the call's thought signature back, as a sibling of functionCall.
        const part: JsonObject = { functionCall: { name: call.name, args: argumentsObject(call.arguments) } };
        if (call.thought_signature !== undefined) part.thoughtSignature = call.thought_signature;
        parts.push(part);
      }
    } else if (message.role === 'tool') {
      const name = (message.tool_call_id === undefined ? undefined : toolNames.get(message.tool_call_id)) ?? message.name ?? 'tool';
      const parsed = argumentsObject(message.content);
      parts.push({ functionResponse: { name, response: Object.keys(parsed).length > 0 ? parsed : { content: message.content } } });
    } else {
      if (message.content.length > 0 || !message.images) parts.push({ text: message.content });
      for (const image of message.images ?? []) parts.push(inlineImage(provider, image.url));
    }
    if (parts.length === 0) continue;
    const last = contents.at(-1);
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  }
  const body: JsonObject = { contents };
  // role "user", as @google/genai sends a system instruction (the API ignores the role there).
  if (system.length > 0) body.systemInstruction = { role: 'user', parts: system };
  const generationConfig: JsonObject = {};
  if (request.max_tokens !== undefined) generationConfig.maxOutputTokens = request.max_tokens;
  if (request.temperature !== undefined) generationConfig.temperature = request.temperature;
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  if (request.tools && request.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: request.tools.map((tool) => ({
          name: tool.name,
          ...(tool.description === undefined ? {} : { description: tool.description }),
          parameters: toGeminiSchema(tool.parameters),
        })),
      },
    ];
  }
  return body;
}

/** google.rpc.Status errors; RetryInfo.retryDelay ("30s") backs up a missing Retry-After header. */
export function parseGoogleError(provider: string, status: number, headers: UpstreamHeaders, bodyText: string): UpstreamError {
  const body = tryParseJsonObject(bodyText);
  const error = objectAt(body, 'error');
  let retryDelay: number | null = null;
  for (const detail of arrayAt(error, 'details') ?? []) {
    const delay = stringAt(detail, 'retryDelay');
    if (delay !== undefined && /^\d{1,6}(\.\d{1,9})?s$/.test(delay)) retryDelay = Math.ceil(Number(delay.slice(0, -1)) * 1000);
  }
  return upstreamErrorFor(provider, status, headers, stringAt(error, 'status'), { retryAfterMs: retryDelay });
}

interface CandidateParts {
  text: string;
  toolCalls: ToolCall[];
  rawFinishReason: string | null;
}

export function readCandidate(provider: string, chunk: JsonObject, toolOffset: number): CandidateParts {
  const candidate = arrayAt(chunk, 'candidates')?.[0];
  const result: CandidateParts = { text: '', toolCalls: [], rawFinishReason: stringAt(candidate, 'finishReason') ?? null };
  if (candidate === undefined) {
    const blockReason = stringAt(objectAt(chunk, 'promptFeedback'), 'blockReason');
    if (blockReason !== undefined) result.rawFinishReason = blockReason === 'OTHER' ? 'OTHER' : 'PROHIBITED_CONTENT';
    return result;
  }
  if (!isObject(candidate)) throw new UpstreamError({ provider, status: null, code: 'invalid_response', retryable: false });
  for (const part of arrayAt(objectAt(candidate, 'content'), 'parts') ?? []) {
    if (!isObject(part) || part.thought === true) continue;
    if (typeof part.text === 'string') result.text += part.text;
    else if (part.text !== undefined) throw new UpstreamError({ provider, status: null, code: 'invalid_response', retryable: false });
    const call = objectAt(part, 'functionCall');
    if (call) {
      const index = toolOffset + result.toolCalls.length;
      const toolCall: ToolCall = { id: stringAt(call, 'id') ?? `call_${index}`, name: stringAt(call, 'name') ?? '', arguments: JSON.stringify(objectAt(call, 'args') ?? {}) };
      const signature = stringAt(part, 'thoughtSignature');
      if (signature !== undefined) toolCall.thought_signature = signature;
      result.toolCalls.push(toolCall);
    }
  }
  return result;
}

export function parseGenerateContentResponse(provider: string, bodyText: string, requestedModel: string | undefined): CompletionResult {
  const body = parseJsonObject(provider, bodyText);
  // No candidate and no block reason: nothing was answered and nothing says why.
  if ((arrayAt(body, 'candidates') ?? []).length === 0 && stringAt(objectAt(body, 'promptFeedback'), 'blockReason') === undefined) throw invalidResponse(provider);
  const candidate = readCandidate(provider, body, 0);
  const result: CompletionResult = {
    content: candidate.text,
    finishReason: mapFinishReason(candidate.rawFinishReason, candidate.toolCalls.length > 0),
    rawFinishReason: candidate.rawFinishReason,
    usage: toUsage(body.usageMetadata),
    model: stringAt(body, 'modelVersion') ?? requestedModel ?? '',
  };
  if (candidate.toolCalls.length > 0) result.toolCalls = candidate.toolCalls;
  return result;
}

/** `alt=sse`: each event is a GenerateContentResponse; the stream ends by closing after a finishReason. */
export function parseGenerateContentStream(provider: string, body: AsyncIterable<Uint8Array>): AsyncIterableIterator<StreamEvent> {
  return streamEvents(sseBatches(body, provider), new GenerateContentChunks(provider));
}

/** One stream's GenerateContentResponse chunks as stream events, a read's events converted together (streamEvents). */
class GenerateContentChunks implements StreamConverter {
  private rawFinishReason: string | null = null;
  private usage: TokenUsage | null = null;
  private model: string | undefined;
  private toolCount = 0;

  constructor(private readonly provider: string) {}

  step(event: SseEvent, out: StreamEvent[]): boolean {
    const provider = this.provider;
    if (event.data.trim().length === 0) return false;
    const chunk = parseJsonObject(provider, event.data);
    if (isObject(chunk.error)) {
      throw new UpstreamError({ provider, status: null, code: 'server', providerCode: stringAt(chunk.error, 'status') ?? 'stream_error' });
    }
    this.model ??= stringAt(chunk, 'modelVersion');
    this.usage = toUsage(chunk.usageMetadata) ?? this.usage;
    const candidate = readCandidate(provider, chunk, this.toolCount);
    if (candidate.text.length > 0) out.push({ type: 'delta', text: candidate.text });
    for (const call of candidate.toolCalls) {
      out.push({
        type: 'tool_call_delta',
        index: this.toolCount,
        id: call.id,
        name: call.name,
        argumentsDelta: call.arguments,
        ...(call.thought_signature === undefined ? {} : { thoughtSignature: call.thought_signature }),
      });
      this.toolCount += 1;
    }
    if (candidate.rawFinishReason !== null) this.rawFinishReason = candidate.rawFinishReason;
    return false;
  }

  end(): StreamEvent {
    const { rawFinishReason, usage, model } = this;
    if (rawFinishReason === null) throw truncatedStream(this.provider);
    return {
      type: 'done',
      finishReason: mapFinishReason(rawFinishReason, this.toolCount > 0),
      rawFinishReason,
      usage,
      ...(model === undefined ? {} : { model }),
    };
  }
}
