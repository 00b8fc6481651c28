/**
 * OpenAI Chat Completions on svc's gateway (`POST /v1/chat/completions`): the request
 * translated to svc's completion body, svc's envelope translated to a `chat.completion`, a stream
 * written as `chat.completion.chunk` events ending with `data: [DONE]`, and errors in OpenAI's
 * `{ error: { message, type, param, code } }` shape. Screening, PII, budgets, verification and
 * evidence are the gateway's (service.ts): nothing here decides, it only translates.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ERRORS, SvcError } from '../../platform/errors.ts';
import { sseLine, SSE_DONE, type StreamEncoder } from '../relay.ts';
import { LIMITS, MessageContentSchema, type CompletionBody } from '../schemas.ts';
import type { CompletionEnvelope } from '../settlement.ts';
import type { ModelChoice } from './models.ts';
import { copySvcFields, SVC_FIELDS } from './svc-fields.ts';

const TOOL_NAME = '^[A-Za-z0-9_.-]{1,64}$';

const OpenAiToolCallSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 256 }),
  type: Type.Optional(Type.Literal('function')),
  function: Type.Object({ name: Type.String({ minLength: 1, maxLength: 128 }), arguments: Type.String({ maxLength: LIMITS.contentChars }) }),
});

const OpenAiMessageSchema = Type.Object({
  role: Type.Union([Type.Literal('system'), Type.Literal('developer'), Type.Literal('user'), Type.Literal('assistant'), Type.Literal('tool')]),
  content: Type.Optional(MessageContentSchema),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  tool_call_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  tool_calls: Type.Optional(Type.Array(OpenAiToolCallSchema, { maxItems: 128 })),
  refusal: Type.Optional(Type.Union([Type.String({ maxLength: LIMITS.contentChars }), Type.Null()])),
});

const OpenAiToolSchema = Type.Object({
  type: Type.Literal('function'),
  function: Type.Object({
    name: Type.String({ pattern: TOOL_NAME }),
    description: Type.Optional(Type.String({ maxLength: 8_192 })),
    parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  }),
});

/** The request body (unknown fields are ignored, as on svc's own endpoint; docs/gateway.md lists what is used). */
export const ChatCompletionRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    messages: Type.Array(OpenAiMessageSchema, { minItems: 1, maxItems: LIMITS.messages }),
    max_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: LIMITS.maxTokens }), Type.Null()])),
    max_completion_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: LIMITS.maxTokens }), Type.Null()])),
    temperature: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 2 }), Type.Null()])),
    n: Type.Optional(Type.Union([Type.Literal(1), Type.Null()])),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    stream_options: Type.Optional(Type.Union([Type.Object({ include_usage: Type.Optional(Type.Boolean()) }), Type.Null()])),
    tools: Type.Optional(Type.Array(OpenAiToolSchema, { maxItems: LIMITS.tools })),
    tool_choice: Type.Optional(
      Type.Union([Type.Literal('none'), Type.Literal('auto'), Type.Literal('required'), Type.Object({ type: Type.Literal('function'), function: Type.Object({ name: Type.String() }) })]),
    ),
    ...SVC_FIELDS,
  },
  { additionalProperties: true },
);
export type ChatCompletionRequest = Static<typeof ChatCompletionRequestSchema>;

const closed = { additionalProperties: false } as const;
const UsageSchema = Type.Object({ prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer() }, closed);

/** The JSON answer (documented in /openapi.json; its stream's chunks are ChatCompletionChunkSchema). */
export const ChatCompletionResponseSchema = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('chat.completion'),
    created: Type.Integer(),
    model: Type.String(),
    choices: Type.Array(
      Type.Object(
        {
          index: Type.Integer(),
          message: Type.Object(
            {
              role: Type.Literal('assistant'),
              content: Type.Union([Type.String(), Type.Null()]),
              refusal: Type.Union([Type.String(), Type.Null()]),
              tool_calls: Type.Optional(
                Type.Array(Type.Object({ id: Type.String(), type: Type.Literal('function'), function: Type.Object({ name: Type.String(), arguments: Type.String() }, closed) }, closed)),
              ),
            },
            closed,
          ),
          logprobs: Type.Null(),
          finish_reason: Type.String(),
        },
        closed,
      ),
    ),
    usage: UsageSchema,
  },
  closed,
);

export const OpenAiErrorSchema = Type.Object(
  {
    error: Type.Object(
      { message: Type.String(), type: Type.String(), param: Type.Union([Type.String(), Type.Null()]), code: Type.Union([Type.String(), Type.Null()]) },
      { additionalProperties: false, description: "`code`: svc's catalogue code in lower case (docs/errors.md); the same code in upper case is in X-SVC-Error-Code." },
    ),
  },
  closed,
);

/** One `data:` line of a streamed chat completion: a chunk, or the error event after the first byte. */
export const ChatCompletionChunkSchema = Type.Union(
  [
    Type.Object(
      {
        id: Type.String(),
        object: Type.Literal('chat.completion.chunk'),
        created: Type.Integer(),
        model: Type.String(),
        choices: Type.Array(
          Type.Object(
            {
              index: Type.Integer(),
              delta: Type.Object(
                {
                  role: Type.Optional(Type.Literal('assistant')),
                  content: Type.Optional(Type.String()),
                  tool_calls: Type.Optional(
                    Type.Array(
                      Type.Object(
                        {
                          index: Type.Integer(),
                          id: Type.Optional(Type.String()),
                          type: Type.Optional(Type.Literal('function')),
                          function: Type.Object({ name: Type.Optional(Type.String()), arguments: Type.String() }, closed),
                        },
                        closed,
                      ),
                    ),
                  ),
                },
                closed,
              ),
              logprobs: Type.Null(),
              finish_reason: Type.Union([Type.String(), Type.Null()]),
            },
            closed,
          ),
        ),
        usage: Type.Optional(Type.Union([UsageSchema, Type.Null()])),
      },
      closed,
    ),
    OpenAiErrorSchema,
  ],
  { description: 'One `data:` line of a streamed chat completion (a chat.completion.chunk, or an error after the first byte); the stream ends with `data: [DONE]`.' },
);

export const ModelSchema = Type.Object({ id: Type.String(), object: Type.Literal('model'), created: Type.Integer(), owned_by: Type.String() }, closed);
export const ModelListSchema = Type.Object({ object: Type.Literal('list'), data: Type.Array(ModelSchema) }, closed);

function invalid(field: string, reason: string, message: string): SvcError {
  return new SvcError('VALIDATION_FAILED', { message, details: { field, reason } });
}

/** The OpenAI request as svc's completion body, for the provider and model chosen (models.ts). */
export function chatToCompletionBody(request: ChatCompletionRequest, choice: ModelChoice): CompletionBody {
  if (request.tool_choice !== undefined && request.tool_choice !== 'auto' && request.tool_choice !== 'none') {
    throw invalid('body.tool_choice', 'unsupported', 'tool_choice may be "auto" or "none" through svc; the gateway does not force a tool call');
  }
  const messages: CompletionBody['messages'] = request.messages.map((message, index) => {
    const content = message.content ?? (message.role === 'assistant' ? (message.refusal ?? null) : null);
    if (content === null && !(message.role === 'assistant' && message.tool_calls !== undefined && message.tool_calls.length > 0)) {
      throw invalid(`body.messages.${index}.content`, 'required', `messages[${index}] has no content`);
    }
    if (message.role === 'tool' && message.tool_call_id === undefined) throw invalid(`body.messages.${index}.tool_call_id`, 'required', `messages[${index}] (role "tool") needs tool_call_id`);
    const converted: CompletionBody['messages'][number] = { role: message.role === 'developer' ? 'system' : message.role, content };
    if (message.name !== undefined) converted.name = message.name;
    if (message.tool_call_id !== undefined) converted.tool_call_id = message.tool_call_id;
    if (message.tool_calls !== undefined && message.tool_calls.length > 0) {
      converted.tool_calls = message.tool_calls.map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments }));
    }
    return converted;
  });
  const body: CompletionBody = { provider: choice.provider, model: choice.model, messages, stream: request.stream === true };
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (maxTokens !== undefined && maxTokens !== null) body.max_tokens = maxTokens;
  if (request.temperature !== undefined && request.temperature !== null) body.temperature = request.temperature;
  if (request.tools !== undefined && request.tools.length > 0 && request.tool_choice !== 'none') {
    body.tools = request.tools.map(({ function: tool }) => {
      const flat: { name: string; description?: string; parameters?: Record<string, unknown> } = { name: tool.name };
      if (tool.description !== undefined) flat.description = tool.description;
      if (tool.parameters !== undefined) flat.parameters = tool.parameters;
      return flat;
    });
  }
  // OpenAI's end-user id (not in the schema: any value OpenAI accepts passes): the T5 baseline's subject.
  const endUser = (request as { user?: unknown }).user;
  if (typeof endUser === 'string' && endUser !== '') body.user = endUser.slice(0, 256);
  copySvcFields(request, body);
  return body;
}

/** svc's finish reasons in OpenAI's vocabulary ('error' and 'other' have no OpenAI word: 'stop'). */
function finishReason(reason: string): string {
  return reason === 'length' || reason === 'tool_calls' || reason === 'content_filter' ? reason : 'stop';
}

/** svc's envelope as a `chat.completion`. */
export function envelopeToChatCompletion(envelope: CompletionEnvelope): Static<typeof ChatCompletionResponseSchema> {
  const toolCalls = envelope.tool_calls?.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } }));
  const hasTools = toolCalls !== undefined && toolCalls.length > 0;
  const message: Static<typeof ChatCompletionResponseSchema>['choices'][number]['message'] = {
    role: 'assistant',
    content: hasTools && envelope.content === '' ? null : envelope.content,
    refusal: null,
  };
  if (hasTools) message.tool_calls = toolCalls;
  return {
    id: `chatcmpl-${envelope.request_id}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: envelope.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(envelope.finish_reason) }],
    usage: envelope.usage,
  };
}

/** OpenAI's error object for svc's error (code: svc's catalogue code in lower case; see compat/errors.ts). */
export function openAiError(status: number, code: string, message: string, param: string | null): Static<typeof OpenAiErrorSchema> {
  return { error: { message, type: openAiErrorType(status), param, code } };
}

function openAiErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 402) return 'insufficient_quota';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

/**
 * A stream as `chat.completion.chunk` events: the first carries the assistant role, each text
 * or tool-call fragment one chunk, then the finish chunk, the usage chunk (with
 * `stream_options.include_usage`; every chunk then carries `usage: null` before it) and
 * `data: [DONE]`. A failure after the first byte is `data: {"error": {…}}` (what the official
 * SDKs raise as an APIError), with no [DONE] unless verification stopped the stream.
 */
export function openAiStreamEncoder(requestId: string, model: string, includeUsage: boolean): StreamEncoder {
  const base = { id: `chatcmpl-${requestId}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
  let started = false;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): string => {
    const payload: Record<string, unknown> = { ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] };
    if (includeUsage) payload.usage = null;
    return sseLine(payload);
  };
  const opening = (): string => {
    if (started) return '';
    started = true;
    return chunk({ role: 'assistant', content: '' });
  };
  return {
    delta: (text) => opening() + (text === '' ? '' : chunk({ content: text })),
    toolCall(fragment) {
      const call: Record<string, unknown> = { index: fragment.index };
      if (fragment.id !== undefined) call.id = fragment.id;
      if (fragment.id !== undefined || fragment.name !== undefined) call.type = 'function';
      call.function = fragment.name === undefined ? { arguments: fragment.argumentsDelta } : { name: fragment.name, arguments: fragment.argumentsDelta };
      return opening() + chunk({ tool_calls: [call] });
    },
    end(summary) {
      let text = opening() + chunk({}, finishReason(summary.finishReason));
      if (includeUsage) text += sseLine({ ...base, choices: [], usage: summary.usage });
      return text + SSE_DONE;
    },
    error(failure, terminated) {
      return opening() + sseLine(openAiError(ERRORS[failure.code].status, failure.code.toLowerCase(), failure.message, null)) + (terminated ? SSE_DONE : '');
    },
  };
}
