/**
 * Request and response schemas of the gateway endpoints (TypeBox: one source for validation,
 * types and OpenAPI). Limits are decided here and documented in docs/gateway.md:
 * body ≤ 1 MiB (413 BODY_TOO_LARGE), 1–256 messages, content ≤ 256 KiB characters per message
 * (or ≤ 64 content parts, each text ≤ 256 KiB characters),
 * max_tokens 1–128 000, temperature 0–2, ≤ 128 tools, ≤ 64 sources.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ROUTING_STRATEGIES } from './routing.ts';
import { VerificationSchema } from './verification-schema.ts';

export const LIMITS = {
  bodyBytes: 1_048_576,
  messages: 256,
  contentChars: 262_144,
  maxTokens: 128_000,
  tools: 128,
  sources: 64,
  contentParts: 64,
} as const;

const ToolCallSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 256 }),
  name: Type.String({ minLength: 1, maxLength: 128 }),
  arguments: Type.String({ maxLength: LIMITS.contentChars }),
  /** Gemini 3 thought signature, returned with the call; replay it unchanged (see docs/gateway.md). */
  thought_signature: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.contentChars })),
});

const TextPartSchema = Type.Object({ type: Type.Literal('text'), text: Type.String({ maxLength: LIMITS.contentChars }) });
const ImageUrlSchema = Type.Object({
  url: Type.String({ minLength: 1, maxLength: LIMITS.bodyBytes }),
  detail: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('low'), Type.Literal('high')])),
});
const ImagePartSchema = Type.Object({ type: Type.Literal('image_url'), image_url: Type.Union([ImageUrlSchema, Type.String({ minLength: 1, maxLength: LIMITS.bodyBytes })]) });

/** OpenAI-style content: a string, null (assistant turn with tool calls only) or text / image_url parts (see content.ts). */
export const MessageContentSchema = Type.Union([
  Type.String({ maxLength: LIMITS.contentChars }),
  Type.Null(),
  Type.Array(Type.Union([TextPartSchema, ImagePartSchema]), { maxItems: LIMITS.contentParts }),
]);

export const MessageSchema = Type.Object({
  role: Type.Union([Type.Literal('system'), Type.Literal('user'), Type.Literal('assistant'), Type.Literal('tool')]),
  content: MessageContentSchema,
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  tool_call_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  tool_calls: Type.Optional(Type.Array(ToolCallSchema, { maxItems: 128 })),
});

/** A tool: svc's flat shape, or OpenAI's { type: "function", function: { … } } wrapper. */
const FlatToolSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]{1,64}$' }),
  description: Type.Optional(Type.String({ maxLength: 8_192 })),
  parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
const WrappedToolSchema = Type.Object({ type: Type.Literal('function'), function: FlatToolSchema });
export const ToolSchema = Type.Union([FlatToolSchema, WrappedToolSchema]);

export const SourceSchema = Type.Union([
  Type.String({ maxLength: LIMITS.contentChars }),
  Type.Object(
    {
      id: Type.Optional(Type.String({ maxLength: 256 })),
      title: Type.Optional(Type.String({ maxLength: 1_024 })),
      url: Type.Optional(Type.String({ maxLength: 2_048 })),
      content: Type.String({ maxLength: LIMITS.contentChars }),
    },
    { additionalProperties: true },
  ),
]);

export const CompletionRequestSchema = Type.Object(
  {
    provider: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    model: Type.String({ minLength: 1, maxLength: 256 }),
    messages: Type.Array(MessageSchema, { minItems: 1, maxItems: LIMITS.messages }),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.maxTokens })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    stream: Type.Optional(Type.Boolean()),
    tools: Type.Optional(Type.Array(ToolSchema, { maxItems: LIMITS.tools })),
    conversation_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    user: Type.Optional(Type.String({ maxLength: 256, description: 'Your id of the end user behind the request (as OpenAI\'s `user`): the T5 behavioural baseline of completions learns per end user when given, else per API key; empty means none (docs/gateway.md).' })),
    sources: Type.Optional(Type.Array(SourceSchema, { maxItems: LIMITS.sources })),
    /** JSON Schema the answer must satisfy (verification's structural layer; docs/verification.md). */
    response_schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: true },
);
export type CompletionBody = Static<typeof CompletionRequestSchema>;

export const UsageSchema = Type.Object({
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_tokens: Type.Integer(),
});

export const CompletionResponseSchema = Type.Object({
  request_id: Type.String(),
  provider: Type.String(),
  model: Type.String(),
  content: Type.String(),
  finish_reason: Type.String(),
  usage: UsageSchema,
  /** null when the model has no listed price (see docs/gateway.md, "Cost"). */
  cost_usd: Type.Union([Type.Number(), Type.Null()]),
  latency_ms: Type.Number(),
  verification: Type.Union([Type.Null(), VerificationSchema]),
  response_filter: Type.Union([Type.Null(), Type.Record(Type.String(), Type.Unknown())]),
  tool_calls: Type.Optional(Type.Array(ToolCallSchema)),
});

export const RoutingConfigSchema = Type.Object(
  {
    strategy: Type.Union(ROUTING_STRATEGIES.map((name) => Type.Literal(name))),
    providers: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 16, uniqueItems: true }),
    health_check_interval_s: Type.Optional(Type.Integer({ minimum: 5, maximum: 3_600 })),
  },
  { additionalProperties: false },
);
export type RoutingConfigBody = Static<typeof RoutingConfigSchema>;

export const PiiSettingsSchema = Type.Object(
  {
    mode: Type.Union([Type.Literal('off'), Type.Literal('redact'), Type.Literal('block')]),
    restore_in_response: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type PiiSettingsBody = Static<typeof PiiSettingsSchema>;

export const BudgetSettingsSchema = Type.Object(
  {
    /** Daily USD cap; null removes it. */
    daily_usd_cap: Type.Union([Type.Null(), Type.Number({ minimum: 0, maximum: 10_000_000 })]),
  },
  { additionalProperties: false },
);
export type BudgetSettingsBody = Static<typeof BudgetSettingsSchema>;
