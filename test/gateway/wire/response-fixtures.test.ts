// Responses, usage and errors as each provider's API reference documents them, fed to svc's
// adapters: reasoning/thinking parts (never returned as content), refusals, tool calls, cached and
// reasoning usage, every documented finish reason and the documented error bodies.
import { describe, expect, it } from 'vitest';
import type { ProviderAdapter, StreamEvent } from '../../../src/gateway/contract.ts';
import { anthropic } from '../../../src/gateway/providers/anthropic.ts';
import { bedrock } from '../../../src/gateway/providers/bedrock.ts';
import { cohere } from '../../../src/gateway/providers/cohere.ts';
import { deepseek } from '../../../src/gateway/providers/deepseek.ts';
import { gemini } from '../../../src/gateway/providers/gemini.ts';
import { mistral } from '../../../src/gateway/providers/mistral.ts';
import { openai } from '../../../src/gateway/providers/openai.ts';

const sse = (data: unknown, event?: string) => `${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`;

async function streamed(adapter: ProviderAdapter, text: string): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of adapter.parseStream((async function* () { yield Buffer.from(text); })(), 'm')) events.push(event);
  return events;
}
const deltas = (events: StreamEvent[]) => events.flatMap((event) => (event.type === 'delta' ? [event.text] : [])).join('');

const openAiBody = (message: Record<string, unknown>, finish: string, usage: Record<string, unknown> = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }) =>
  JSON.stringify({ id: 'c', object: 'chat.completion', model: 'gpt-5', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }], usage });

describe('OpenAI Chat Completions', () => {
  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['tool_calls', 'tool_calls'],
    ['function_call', 'tool_calls'],
    ['content_filter', 'content_filter'],
  ])('maps finish_reason %s to %s', (raw, expected) => {
    expect(openai.parseResponse(200, {}, openAiBody({ content: 'x' }, raw)).finishReason).toBe(expected);
  });

  it('reads cached and reasoning tokens from the usage details', () => {
    const usage = { prompt_tokens: 2006, completion_tokens: 300, total_tokens: 2306, prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 256, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 } };
    expect(openai.parseResponse(200, {}, openAiBody({ content: 'x' }, 'stop', usage)).usage).toEqual({ promptTokens: 2006, completionTokens: 300, totalTokens: 2306, cachedPromptTokens: 1920, reasoningTokens: 256 });
  });

  it('returns tool calls with their arguments text', () => {
    const result = openai.parseResponse(200, {}, openAiBody({ content: null, tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }, 'tool_calls'));
    expect(result).toMatchObject({ content: '', finishReason: 'tool_calls', toolCalls: [{ id: 'call_abc', name: 'get_weather', arguments: '{"city":"Paris"}' }] });
  });

  it('reads DeepSeek cache hits and leaves its reasoning_content out of the content', () => {
    const body = JSON.stringify({ id: 'c', model: 'deepseek-reasoner', choices: [{ index: 0, message: { role: 'assistant', reasoning_content: 'hidden chain', content: 'Answer.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150, prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 36, completion_tokens_details: { reasoning_tokens: 40 } } });
    expect(deepseek.parseResponse(200, {}, body)).toMatchObject({ content: 'Answer.', usage: { cachedPromptTokens: 64, reasoningTokens: 40 } });
  });

  it.each([
    [400, { error: { message: 'Invalid value', type: 'invalid_request_error', param: 'messages', code: null } }, 'bad_request', false],
    [401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }, 'auth', false],
    [403, { error: { message: 'Country not supported', type: 'invalid_request_error', code: 'unsupported_country_region_territory' } }, 'auth', false],
    [404, { error: { message: 'The model does not exist', type: 'invalid_request_error', code: 'model_not_found' } }, 'not_found', false],
    [429, { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }, 'rate_limited', true],
    [429, { error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' } }, 'quota_exceeded', false],
    [500, { error: { message: 'The server had an error', type: 'server_error', code: null } }, 'server', true],
    [503, { error: { message: 'The engine is currently overloaded', type: 'server_error', code: null } }, 'overloaded', true],
  ] as const)('maps the documented %i error body to %s', (status, body, code, retryable) => {
    expect(openai.parseError(status, { 'retry-after-ms': '250' }, JSON.stringify(body))).toMatchObject({ code, retryable, status });
  });

  it('maps DeepSeek 402 Insufficient Balance to quota_exceeded', () => {
    expect(deepseek.parseError(402, {}, JSON.stringify({ error: { message: 'Insufficient Balance', type: 'unknown_error', code: 'invalid_request_error' } }))).toMatchObject({ code: 'quota_exceeded', retryable: false });
  });
});

describe('Mistral', () => {
  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['model_length', 'length'],
    ['tool_calls', 'tool_calls'],
    ['error', 'error'],
  ])('maps finish_reason %s to %s', (raw, expected) => {
    expect(mistral.parseResponse(200, {}, openAiBody({ content: 'x' }, raw)).finishReason).toBe(expected);
  });

  it('maps the 422 validation error body to bad_request', () => {
    const body = { object: 'error', message: { detail: [{ type: 'extra_forbidden', loc: ['body', 'name'], msg: 'Extra inputs are not permitted' }] }, type: 'invalid_request_error', code: null };
    expect(mistral.parseError(422, {}, JSON.stringify(body))).toMatchObject({ code: 'bad_request', retryable: false });
  });
});

const anthropicMessage = (content: unknown[], stop: string, usage: Record<string, unknown> = { input_tokens: 10, output_tokens: 5 }) =>
  JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content, stop_reason: stop, stop_sequence: null, usage });

describe('Anthropic Messages', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
  ])('maps stop_reason %s to %s', (raw, expected) => {
    expect(anthropic.parseResponse(200, {}, anthropicMessage([{ type: 'text', text: 'x' }], raw)).finishReason).toBe(expected);
  });

  it('leaves thinking and redacted_thinking blocks out, returns text and tool_use, and adds cache reads and writes to the prompt', () => {
    const result = anthropic.parseResponse(
      200,
      {},
      anthropicMessage(
        [
          { type: 'thinking', thinking: 'Let me check the weather tool.', signature: 'EqQB' },
          { type: 'redacted_thinking', data: 'EmwKAhgB' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
        'tool_use',
        { input_tokens: 50, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 80 },
      ),
    );
    expect(result).toMatchObject({ content: 'Checking.', finishReason: 'tool_calls', toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] });
    expect(result.usage).toEqual({ promptTokens: 2150, completionTokens: 80, totalTokens: 2230, cachedPromptTokens: 2000 });
  });

  it('streams text deltas and not thinking deltas', async () => {
    const events = await streamed(
      anthropic,
      sse({ type: 'message_start', message: { id: 'm', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], usage: { input_tokens: 10, output_tokens: 1 } } }, 'message_start') +
        sse({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }, 'content_block_start') +
        sse({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } }, 'content_block_delta') +
        sse({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQB' } }, 'content_block_delta') +
        sse({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }, 'content_block_start') +
        sse({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Sunny.' } }, 'content_block_delta') +
        sse({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 30 } }, 'message_delta') +
        sse({ type: 'message_stop' }, 'message_stop'),
    );
    expect(deltas(events)).toBe('Sunny.');
    expect(events.at(-1)).toMatchObject({ type: 'done', finishReason: 'stop', usage: { promptTokens: 10, completionTokens: 30 } });
  });

  it.each([
    [400, 'invalid_request_error', 'bad_request', false],
    [401, 'authentication_error', 'auth', false],
    [403, 'permission_error', 'auth', false],
    [404, 'not_found_error', 'not_found', false],
    [413, 'request_too_large', 'bad_request', false],
    [429, 'rate_limit_error', 'rate_limited', true],
    [500, 'api_error', 'server', true],
    [529, 'overloaded_error', 'overloaded', true],
  ] as const)('maps the documented %i %s error to %s', (status, type, code, retryable) => {
    const error = anthropic.parseError(status, { 'retry-after': '3' }, JSON.stringify({ type: 'error', error: { type, message: 'x' }, request_id: 'req_1' }));
    expect(error).toMatchObject({ code, retryable, providerCode: type });
  });
});

const geminiBody = (parts: unknown[], finishReason: string, usageMetadata: Record<string, unknown> = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }) =>
  JSON.stringify({ candidates: [{ content: { role: 'model', parts }, finishReason, index: 0 }], usageMetadata, modelVersion: 'gemini-2.5-pro' });

describe('Gemini generateContent', () => {
  it.each([
    ['STOP', 'stop'],
    ['MAX_TOKENS', 'length'],
    ['SAFETY', 'content_filter'],
    ['RECITATION', 'content_filter'],
    ['BLOCKLIST', 'content_filter'],
    ['PROHIBITED_CONTENT', 'content_filter'],
    ['SPII', 'content_filter'],
    ['IMAGE_SAFETY', 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', 'error'],
    ['UNEXPECTED_TOOL_CALL', 'error'],
    ['LANGUAGE', 'other'],
    ['OTHER', 'other'],
    ['FINISH_REASON_UNSPECIFIED', 'other'],
  ])('maps finishReason %s to %s', (raw, expected) => {
    expect(gemini.parseResponse(200, {}, geminiBody([{ text: 'x' }], raw)).finishReason).toBe(expected);
  });

  it('leaves thought parts out and counts thoughts as reasoning tokens, cached content as cached', () => {
    const result = gemini.parseResponse(
      200,
      {},
      geminiBody([{ text: 'Thinking about Paris…', thought: true }, { text: 'Sunny.' }], 'STOP', { promptTokenCount: 1000, cachedContentTokenCount: 800, candidatesTokenCount: 20, thoughtsTokenCount: 120, totalTokenCount: 1140 }),
    );
    expect(result.content).toBe('Sunny.');
    expect(result.usage).toEqual({ promptTokens: 1000, completionTokens: 140, totalTokens: 1140, cachedPromptTokens: 800, reasoningTokens: 120 });
  });

  it('reports a blocked prompt (promptFeedback, no candidates) as content_filter', () => {
    const result = gemini.parseResponse(200, {}, JSON.stringify({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } }));
    expect(result).toMatchObject({ content: '', finishReason: 'content_filter' });
  });

  it.each([
    [400, 'INVALID_ARGUMENT', 'bad_request', false],
    [400, 'FAILED_PRECONDITION', 'bad_request', false],
    [403, 'PERMISSION_DENIED', 'auth', false],
    [404, 'NOT_FOUND', 'not_found', false],
    [429, 'RESOURCE_EXHAUSTED', 'rate_limited', true],
    [500, 'INTERNAL', 'server', true],
    [503, 'UNAVAILABLE', 'overloaded', true],
    [504, 'DEADLINE_EXCEEDED', 'server', true],
  ] as const)('maps the documented %i %s error to %s', (status, rpcStatus, code, retryable) => {
    const body = { error: { code: status, message: 'x', status: rpcStatus, details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' }] } };
    expect(gemini.parseError(status, {}, JSON.stringify(body))).toMatchObject({ code, retryable, providerCode: rpcStatus, retryAfterMs: 7000 });
  });
});

const converse = (content: unknown[], stopReason: string, usage: Record<string, unknown> = { inputTokens: 10, outputTokens: 5, totalTokens: 15 }) =>
  JSON.stringify({ output: { message: { role: 'assistant', content } }, stopReason, usage, metrics: { latencyMs: 100 } });

describe('Bedrock Converse', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['guardrail_intervened', 'content_filter'],
    ['content_filtered', 'content_filter'],
  ])('maps stopReason %s to %s', (raw, expected) => {
    expect(bedrock.parseResponse(200, {}, converse([{ text: 'x' }], raw), 'm').finishReason).toBe(expected);
  });

  it('leaves reasoningContent out, returns toolUse, and adds cache reads and writes to the prompt', () => {
    const result = bedrock.parseResponse(
      200,
      {},
      converse(
        [{ reasoningContent: { reasoningText: { text: 'hidden', signature: 's' } } }, { text: 'Checking.' }, { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } }],
        'tool_use',
        { inputTokens: 40, outputTokens: 60, totalTokens: 2100, cacheReadInputTokens: 1500, cacheWriteInputTokens: 500 },
      ),
      'm',
    );
    expect(result).toMatchObject({ content: 'Checking.', toolCalls: [{ id: 'tooluse_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] });
    expect(result.usage).toMatchObject({ promptTokens: 2040, completionTokens: 60, cachedPromptTokens: 1500 });
  });

  it.each([
    [400, 'ValidationException', 'bad_request', false],
    [403, 'AccessDeniedException', 'auth', false],
    [404, 'ResourceNotFoundException', 'not_found', false],
    [408, 'ModelTimeoutException', 'timeout', true],
    [424, 'ModelErrorException', 'server', true],
    [429, 'ThrottlingException', 'rate_limited', true],
    [429, 'ModelNotReadyException', 'overloaded', true],
    [500, 'InternalServerException', 'server', true],
    [503, 'ServiceUnavailableException', 'overloaded', true],
  ] as const)('maps the documented %i %s to %s', (status, type, code, retryable) => {
    expect(bedrock.parseError(status, { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` }, JSON.stringify({ message: 'x' }))).toMatchObject({ code, retryable, providerCode: type });
  });
});

const cohereBody = (content: unknown[], finish: string, usage: Record<string, unknown> = { billed_units: { input_tokens: 10, output_tokens: 5 }, tokens: { input_tokens: 12, output_tokens: 5 } }) =>
  JSON.stringify({ id: 'c', finish_reason: finish, message: { role: 'assistant', content }, usage });

describe('Cohere Chat v2', () => {
  it.each([
    ['COMPLETE', 'stop'],
    ['STOP_SEQUENCE', 'stop'],
    ['MAX_TOKENS', 'length'],
    ['TOOL_CALL', 'tool_calls'],
    ['ERROR', 'error'],
    ['TIMEOUT', 'error'],
  ])('maps finish_reason %s to %s', (raw, expected) => {
    expect(cohere.parseResponse(200, {}, cohereBody([{ type: 'text', text: 'x' }], raw), 'm').finishReason).toBe(expected);
  });

  it('leaves thinking content out and reads tokens and cached tokens', () => {
    const result = cohere.parseResponse(200, {}, cohereBody([{ type: 'thinking', thinking: 'hidden' }, { type: 'text', text: 'Sunny.' }], 'COMPLETE', { billed_units: { input_tokens: 10, output_tokens: 5 }, tokens: { input_tokens: 300, output_tokens: 40 }, cached_tokens: 256 }), 'm');
    expect(result.content).toBe('Sunny.');
    expect(result.usage).toMatchObject({ promptTokens: 300, completionTokens: 40, cachedPromptTokens: 256 });
  });

  it.each([
    [400, 'bad_request', false],
    [401, 'auth', false],
    [404, 'not_found', false],
    [429, 'rate_limited', true],
    [498, 'auth', false],
    [500, 'server', true],
    [503, 'overloaded', true],
  ] as const)('maps the documented %i error body to %s', (status, code, retryable) => {
    expect(cohere.parseError(status, {}, JSON.stringify({ id: 'e', message: 'x' }))).toMatchObject({ code, retryable });
  });
});
