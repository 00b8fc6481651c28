/**
 * Anthropic Messages on svc's gateway (`POST /v1/messages`): the request translated to svc's
 * completion body, svc's envelope translated to a `message`, a stream written as Anthropic's
 * event sequence (message_start, content_block_start / _delta / _stop per block, message_delta,
 * message_stop) and errors in Anthropic's `{ type: "error", error: { type, message } }` shape.
 * Screening, PII, budgets, verification and evidence are the gateway's: nothing here decides.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ERRORS, SvcError } from '../../platform/errors.ts';
import type { StreamEncoder } from '../relay.ts';
import { LIMITS, type CompletionBody } from '../schemas.ts';
import type { CompletionEnvelope } from '../settlement.ts';
import type { ModelChoice } from './models.ts';
import { copySvcFields, SVC_FIELDS } from './svc-fields.ts';

const TextBlockSchema = Type.Object({ type: Type.Literal('text'), text: Type.String({ maxLength: LIMITS.contentChars }) });
const ImageBlockSchema = Type.Object({
  type: Type.Literal('image'),
  source: Type.Union([
    Type.Object({ type: Type.Literal('base64'), media_type: Type.String({ pattern: '^image/[a-z0-9.+-]{1,32}$' }), data: Type.String({ maxLength: LIMITS.bodyBytes }) }),
    Type.Object({ type: Type.Literal('url'), url: Type.String({ minLength: 1, maxLength: LIMITS.bodyBytes }) }),
  ]),
});
const ToolUseBlockSchema = Type.Object({
  type: Type.Literal('tool_use'),
  id: Type.String({ minLength: 1, maxLength: 256 }),
  name: Type.String({ minLength: 1, maxLength: 128 }),
  input: Type.Record(Type.String(), Type.Unknown()),
});
const ToolResultBlockSchema = Type.Object({
  type: Type.Literal('tool_result'),
  tool_use_id: Type.String({ minLength: 1, maxLength: 256 }),
  content: Type.Optional(Type.Union([Type.String({ maxLength: LIMITS.contentChars }), Type.Array(TextBlockSchema, { maxItems: LIMITS.contentParts })])),
  is_error: Type.Optional(Type.Boolean()),
});
const BlockSchema = Type.Union([TextBlockSchema, ImageBlockSchema, ToolUseBlockSchema, ToolResultBlockSchema]);

const AnthropicMessageSchema = Type.Object({
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
  content: Type.Union([Type.String({ maxLength: LIMITS.contentChars }), Type.Array(BlockSchema, { minItems: 1, maxItems: LIMITS.contentParts })]),
});

/** The request body (unknown fields are ignored; docs/gateway.md lists what is used). */
export const MessagesRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    max_tokens: Type.Integer({ minimum: 1, maximum: LIMITS.maxTokens }),
    messages: Type.Array(AnthropicMessageSchema, { minItems: 1, maxItems: LIMITS.messages }),
    system: Type.Optional(Type.Union([Type.String({ maxLength: LIMITS.contentChars }), Type.Array(TextBlockSchema, { maxItems: LIMITS.contentParts })])),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    stream: Type.Optional(Type.Boolean()),
    tools: Type.Optional(
      Type.Array(
        Type.Object({
          name: Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' }),
          description: Type.Optional(Type.String({ maxLength: 8_192 })),
          input_schema: Type.Record(Type.String(), Type.Unknown()),
        }),
        { maxItems: LIMITS.tools },
      ),
    ),
    tool_choice: Type.Optional(Type.Object({ type: Type.Union([Type.Literal('auto'), Type.Literal('none'), Type.Literal('any'), Type.Literal('tool')]), name: Type.Optional(Type.String()) })),
    ...SVC_FIELDS,
  },
  { additionalProperties: true },
);
export type MessagesRequest = Static<typeof MessagesRequestSchema>;

const closed = { additionalProperties: false } as const;
const TextOut = Type.Object({ type: Type.Literal('text'), text: Type.String() }, closed);
const ToolUseOut = Type.Object({ type: Type.Literal('tool_use'), id: Type.String(), name: Type.String(), input: Type.Record(Type.String(), Type.Unknown()) }, closed);
const UsageOut = Type.Object({ input_tokens: Type.Integer(), output_tokens: Type.Integer() }, closed);

/** The JSON answer (documented in /openapi.json; its stream's events are MessageStreamEventSchema). */
export const MessageResponseSchema = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal('message'),
    role: Type.Literal('assistant'),
    model: Type.String(),
    content: Type.Array(Type.Union([TextOut, ToolUseOut])),
    stop_reason: Type.String(),
    stop_sequence: Type.Null(),
    usage: UsageOut,
  },
  closed,
);

export const AnthropicErrorSchema = Type.Object(
  {
    type: Type.Literal('error'),
    error: Type.Object({ type: Type.String(), message: Type.String() }, closed),
    request_id: Type.String(),
  },
  { additionalProperties: false, description: "svc's catalogue code is in the X-SVC-Error-Code header." },
);

/** One event of a streamed message (the JSON of its `data:` line; the `event:` line names its type). */
export const MessageStreamEventSchema = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('message_start'),
        message: Type.Object(
          {
            id: Type.String(),
            type: Type.Literal('message'),
            role: Type.Literal('assistant'),
            model: Type.String(),
            content: Type.Array(Type.Unknown(), { maxItems: 0 }),
            stop_reason: Type.Null(),
            stop_sequence: Type.Null(),
            usage: UsageOut,
          },
          closed,
        ),
      },
      closed,
    ),
    Type.Object({ type: Type.Literal('content_block_start'), index: Type.Integer(), content_block: Type.Union([TextOut, ToolUseOut]) }, closed),
    Type.Object(
      {
        type: Type.Literal('content_block_delta'),
        index: Type.Integer(),
        delta: Type.Union([
          Type.Object({ type: Type.Literal('text_delta'), text: Type.String() }, closed),
          Type.Object({ type: Type.Literal('input_json_delta'), partial_json: Type.String() }, closed),
        ]),
      },
      closed,
    ),
    Type.Object({ type: Type.Literal('content_block_stop'), index: Type.Integer() }, closed),
    Type.Object({ type: Type.Literal('message_delta'), delta: Type.Object({ stop_reason: Type.String(), stop_sequence: Type.Null() }, closed), usage: UsageOut }, closed),
    Type.Object({ type: Type.Literal('message_stop') }, closed),
    Type.Object({ type: Type.Literal('error'), error: Type.Object({ type: Type.String(), message: Type.String() }, closed) }, closed),
  ],
  { description: 'One event of a streamed message: message_start, content_block_start / _delta / _stop per block, message_delta, message_stop; or an error after the first byte.' },
);

type BodyMessage = CompletionBody['messages'][number];
type Part = Exclude<BodyMessage['content'], string | null>[number];

function invalid(field: string, reason: string, message: string): SvcError {
  return new SvcError('VALIDATION_FAILED', { message, details: { field, reason } });
}

const blockText = (content: string | Array<{ text: string }> | undefined): string => (content === undefined ? '' : typeof content === 'string' ? content : content.map((block) => block.text).join('\n'));

/** The Anthropic request as svc's completion body, for the provider and model chosen (models.ts). */
export function messagesToCompletionBody(request: MessagesRequest, choice: ModelChoice): CompletionBody {
  const choiceType = request.tool_choice?.type;
  if (choiceType === 'any' || choiceType === 'tool') throw invalid('body.tool_choice', 'unsupported', 'tool_choice may be "auto" or "none" through svc; the gateway does not force a tool call');
  const messages: BodyMessage[] = [];
  const system = blockText(request.system);
  if (system !== '') messages.push({ role: 'system', content: system });
  request.messages.forEach((message, index) => {
    if (typeof message.content === 'string') {
      messages.push({ role: message.role, content: message.content });
      return;
    }
    const parts: Part[] = [];
    const toolCalls: NonNullable<BodyMessage['tool_calls']> = [];
    message.content.forEach((block, blockIndex) => {
      const field = `body.messages.${index}.content.${blockIndex}`;
      if (block.type === 'text') parts.push({ type: 'text', text: block.text });
      else if (block.type === 'image') {
        if (message.role !== 'user') throw invalid(field, 'image_not_allowed', 'images are accepted in user messages only');
        parts.push({ type: 'image_url', image_url: { url: block.source.type === 'base64' ? `data:${block.source.media_type};base64,${block.source.data}` : block.source.url } });
      } else if (block.type === 'tool_use') {
        if (message.role !== 'assistant') throw invalid(field, 'tool_use_not_allowed', 'tool_use blocks belong to assistant messages');
        toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input) });
      } else {
        if (message.role !== 'user') throw invalid(field, 'tool_result_not_allowed', 'tool_result blocks belong to user messages');
        // Tool results answer the previous assistant turn's calls: they come before the user's own text.
        messages.push({ role: 'tool', tool_call_id: block.tool_use_id, content: block.is_error === true ? `[tool error] ${blockText(block.content)}` : blockText(block.content) });
      }
    });
    if (message.role === 'assistant') {
      const text = parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
      const assistant: BodyMessage = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text };
      if (toolCalls.length > 0) assistant.tool_calls = toolCalls;
      messages.push(assistant);
    } else if (parts.length > 0) messages.push({ role: 'user', content: parts });
  });
  const body: CompletionBody = { provider: choice.provider, model: choice.model, messages, max_tokens: request.max_tokens, stream: request.stream === true };
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.tools !== undefined && request.tools.length > 0 && choiceType !== 'none') {
    body.tools = request.tools.map((tool) => (tool.description === undefined ? { name: tool.name, parameters: tool.input_schema } : { name: tool.name, description: tool.description, parameters: tool.input_schema }));
  }
  // Anthropic's end-user id (not in the schema: any value Anthropic accepts passes): the T5 baseline's subject.
  const metadata = (request as { metadata?: unknown }).metadata;
  const endUser = typeof metadata === 'object' && metadata !== null ? (metadata as { user_id?: unknown }).user_id : undefined;
  if (typeof endUser === 'string' && endUser !== '') body.user = endUser.slice(0, 256);
  copySvcFields(request, body);
  return body;
}

/** svc's finish reasons as Anthropic stop reasons. */
function stopReason(reason: string): string {
  switch (reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** Tool arguments as the object Anthropic clients expect (a model's invalid JSON is kept whole under `_raw`). */
function toolInput(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { _raw: text };
  } catch {
    return { _raw: text };
  }
}

/** svc's envelope as an Anthropic `message`. */
export function envelopeToMessage(envelope: CompletionEnvelope): Static<typeof MessageResponseSchema> {
  const content: Static<typeof MessageResponseSchema>['content'] = [];
  if (envelope.content !== '' || envelope.tool_calls === undefined) content.push({ type: 'text', text: envelope.content });
  for (const call of envelope.tool_calls ?? []) content.push({ type: 'tool_use', id: call.id, name: call.name, input: toolInput(call.arguments) });
  return {
    id: `msg_${envelope.request_id}`,
    type: 'message',
    role: 'assistant',
    model: envelope.model,
    content,
    stop_reason: stopReason(envelope.finish_reason),
    stop_sequence: null,
    usage: { input_tokens: envelope.usage.prompt_tokens, output_tokens: envelope.usage.completion_tokens },
  };
}

/** Anthropic's error for svc's error (its `type` by HTTP status; svc's code is in X-SVC-Error-Code). */
export function anthropicError(status: number, message: string, requestId: string): Static<typeof AnthropicErrorSchema> {
  return { type: 'error', error: { type: anthropicErrorType(status), message }, request_id: requestId };
}

function anthropicErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

const event = (type: string, payload: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;

/**
 * A stream as Anthropic's events: message_start first; each run of text one text block and each
 * tool call one tool_use block (content_block_start, _delta — text_delta or input_json_delta —
 * and _stop); then message_delta (stop_reason, usage) and message_stop. A failure after the first
 * byte is an `error` event (what the official SDK raises), with no message_stop.
 */
export function anthropicStreamEncoder(requestId: string, model: string): StreamEncoder {
  let started = false;
  /** The open block: 'text', a tool call's index, or null. */
  let open: { kind: 'text' } | { kind: 'tool'; call: number } | null = null;
  let blocks = 0;
  const opening = (): string => {
    if (started) return '';
    started = true;
    const message = { id: `msg_${requestId}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } };
    return event('message_start', { message });
  };
  const close = (): string => {
    if (open === null) return '';
    open = null;
    return event('content_block_stop', { index: blocks - 1 });
  };
  return {
    delta(text) {
      let out = opening();
      if (text === '') return out;
      if (open?.kind !== 'text') {
        out += close() + event('content_block_start', { index: blocks, content_block: { type: 'text', text: '' } });
        blocks += 1;
        open = { kind: 'text' };
      }
      return out + event('content_block_delta', { index: blocks - 1, delta: { type: 'text_delta', text } });
    },
    toolCall(fragment) {
      let out = opening();
      if (open?.kind !== 'tool' || open.call !== fragment.index) {
        out += close() + event('content_block_start', { index: blocks, content_block: { type: 'tool_use', id: fragment.id ?? `toolu_${requestId}_${fragment.index}`, name: fragment.name ?? '', input: {} } });
        blocks += 1;
        open = { kind: 'tool', call: fragment.index };
      }
      return fragment.argumentsDelta === '' ? out : out + event('content_block_delta', { index: blocks - 1, delta: { type: 'input_json_delta', partial_json: fragment.argumentsDelta } });
    },
    end(summary) {
      return (
        opening() +
        close() +
        event('message_delta', { delta: { stop_reason: stopReason(summary.finishReason), stop_sequence: null }, usage: { input_tokens: summary.usage.prompt_tokens, output_tokens: summary.usage.completion_tokens } }) +
        event('message_stop', {})
      );
    },
    error(failure) {
      return opening() + event('error', { error: { type: anthropicErrorType(ERRORS[failure.code].status), message: failure.message } });
    },
  };
}
