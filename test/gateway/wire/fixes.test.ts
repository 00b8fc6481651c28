// Regression tests of the wire defects found by comparing svc with the providers' official SDKs
// (issue #19, items 1–9). Each fixture is written from the provider's API reference.
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../../src/gateway/contract.ts';
import type { CompletionRequest, ProviderAdapter, StreamEvent } from '../../../src/gateway/contract.ts';
import { anthropic } from '../../../src/gateway/providers/anthropic.ts';
import { azure_openai } from '../../../src/gateway/providers/azure-openai.ts';
import { bedrock } from '../../../src/gateway/providers/bedrock.ts';
import { gemini } from '../../../src/gateway/providers/gemini.ts';
import { groq } from '../../../src/gateway/providers/groq.ts';
import { mistral } from '../../../src/gateway/providers/mistral.ts';
import { openai } from '../../../src/gateway/providers/openai.ts';
import { vertex_ai } from '../../../src/gateway/providers/vertex-ai.ts';
import { decideRetry, DEFAULT_RETRY_POLICY } from '../../../src/gateway/retry.ts';

const request: CompletionRequest = {
  model: 'model-x',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Weather in Paris?' },
  ],
  max_tokens: 100,
  temperature: 0.5,
  stream: false,
};

function body(...chunks: string[]): AsyncIterable<Uint8Array> {
  return (async function* () {
    for (const chunk of chunks) yield Buffer.from(chunk);
  })();
}

async function events(adapter: ProviderAdapter, ...chunks: string[]): Promise<StreamEvent[]> {
  const collected: StreamEvent[] = [];
  for await (const event of adapter.parseStream(body(...chunks), 'model-x')) collected.push(event);
  return collected;
}

const sse = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
const text = (list: StreamEvent[]) => list.flatMap((event) => (event.type === 'delta' ? [event.text] : [])).join('');
const done = (list: StreamEvent[]) => list.at(-1) as Extract<StreamEvent, { type: 'done' }>;
const json = async (adapter: ProviderAdapter, completion: CompletionRequest, target: Parameters<ProviderAdapter['buildRequest']>[1]) =>
  JSON.parse((await adapter.buildRequest(completion, target)).body) as Record<string, unknown>;

/** The value at a path of property names and indexes, or undefined. */
function dig(value: unknown, ...path: Array<string | number>): unknown {
  let current = value;
  for (const step of path) current = typeof current === 'object' && current !== null ? (current as Record<string | number, unknown>)[step] : undefined;
  return current;
}

describe('1. Mistral reasoning models (magistral) answer with thinking and text parts', () => {
  const thinking = { type: 'thinking', thinking: [{ type: 'text', text: 'The user asks about Paris weather.' }] };

  it('returns the text parts as the content and leaves the thinking out (non-stream)', () => {
    const result = mistral.parseResponse(
      200,
      {},
      JSON.stringify({
        id: 'x',
        object: 'chat.completion',
        model: 'magistral-medium-2509',
        choices: [{ index: 0, message: { role: 'assistant', content: [thinking, { type: 'text', text: 'Mild, 18 °C.' }] }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 12, completion_tokens: 40, total_tokens: 52 },
      }),
    );
    expect(result.content).toBe('Mild, 18 °C.');
    expect(result.finishReason).toBe('stop');
    expect(result.usage?.completionTokens).toBe(40);
  });

  it('streams the text parts of delta content arrays and not the thinking', async () => {
    const list = await events(
      mistral,
      sse({ id: 'x', model: 'magistral-medium-2509', choices: [{ index: 0, delta: { role: 'assistant', content: [thinking] }, finish_reason: null }] }),
      sse({ id: 'x', model: 'magistral-medium-2509', choices: [{ index: 0, delta: { content: [{ type: 'text', text: 'Mild, ' }] }, finish_reason: null }] }),
      sse({ id: 'x', model: 'magistral-medium-2509', choices: [{ index: 0, delta: { content: '18 °C.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 40, total_tokens: 52 } }),
      'data: [DONE]\n\n',
    );
    expect(text(list)).toBe('Mild, 18 °C.');
    expect(done(list)).toMatchObject({ finishReason: 'stop', usage: { promptTokens: 12, completionTokens: 40 } });
  });
});

describe('2. Gemini and Vertex AI tool schemas express null the OpenAPI way', () => {
  const nullable = {
    name: 'lookup',
    parameters: {
      type: 'object',
      properties: {
        unit: { type: ['string', 'null'], enum: ['c', 'f', null] },
        note: { anyOf: [{ type: 'string', description: 'free text' }, { type: 'null' }] },
        either: { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'null' }] },
      },
    },
  };

  it.each([
    ['gemini', gemini, { apiKey: 'k' }],
    ['vertex_ai', vertex_ai, { apiKey: 'p:us-central1:t' }],
  ] as const)('%s gets one type with nullable: true instead of a type array or a null branch', async (_id, adapter, target) => {
    const sent = await json(adapter, { ...request, tools: [nullable] }, target);
    const properties = dig(sent, 'tools', 0, 'functionDeclarations', 0, 'parameters', 'properties');
    expect(dig(properties, 'unit')).toEqual({ type: 'STRING', nullable: true, enum: ['c', 'f', null] });
    expect(dig(properties, 'note')).toEqual({ type: 'STRING', description: 'free text', nullable: true });
    expect(dig(properties, 'either')).toEqual({ anyOf: [{ type: 'STRING' }, { type: 'INTEGER' }], nullable: true });
  });
});

describe('3. Gemini 3 thought signatures ride on the tool call and back', () => {
  const response = {
    candidates: [
      {
        content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnLTE=' }] },
        finishReason: 'STOP',
      },
    ],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: 'gemini-3-pro-preview',
  };

  it('puts the signature of a functionCall part on the tool call (non-stream and stream)', async () => {
    const result = gemini.parseResponse(200, {}, JSON.stringify(response));
    expect(result.toolCalls?.[0]).toMatchObject({ name: 'get_weather', thought_signature: 'c2lnLTE=' });
    const list = await events(gemini, sse(response));
    expect(list[0]).toMatchObject({ type: 'tool_call_delta', name: 'get_weather', thoughtSignature: 'c2lnLTE=' });
  });

  it('sends the signature back beside the replayed functionCall', async () => {
    const replay: CompletionRequest = {
      ...request,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}', thought_signature: 'c2lnLTE=' }] },
        { role: 'tool', tool_call_id: 'call_0', content: '{"c":18}' },
      ],
    };
    const sent = await json(gemini, replay, { apiKey: 'k' });
    expect(dig(sent, 'contents', 1)).toEqual({ role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnLTE=' }] });
  });
});

describe('4. Azure OpenAI', () => {
  it('sends max_completion_tokens, which reasoning deployments require', async () => {
    const sent = await json(azure_openai, request, { apiKey: 'k', baseUrl: 'https://res.openai.azure.com' });
    expect(sent.max_completion_tokens).toBe(100);
    expect(sent.max_tokens).toBeUndefined();
  });

  it('speaks the v1 API when the base URL ends in /openai/v1: no api-version, no doubled path, deployment as model', async () => {
    const built = await azure_openai.buildRequest(request, { apiKey: 'k', baseUrl: 'https://res.openai.azure.com/openai/v1/' });
    expect(built.url).toBe('https://res.openai.azure.com/openai/v1/chat/completions');
    expect(built.headers['api-key']).toBe('k');
    expect(JSON.parse(built.body)).toMatchObject({ model: 'model-x', max_completion_tokens: 100 });
  });
});

describe('5. refusals are surfaced with finish reason content_filter', () => {
  it('returns an OpenAI refusal as the content (non-stream)', () => {
    const result = openai.parseResponse(
      200,
      {},
      JSON.stringify({ id: 'x', model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: "I'm sorry, I can't help with that." }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 } }),
    );
    expect(result).toMatchObject({ content: "I'm sorry, I can't help with that.", finishReason: 'content_filter', rawFinishReason: 'stop' });
  });

  it('streams an OpenAI refusal delta as text and ends with content_filter', async () => {
    const list = await events(
      openai,
      sse({ id: 'x', model: 'gpt-4o', choices: [{ index: 0, delta: { role: 'assistant', content: null, refusal: '' }, finish_reason: null }] }),
      sse({ id: 'x', model: 'gpt-4o', choices: [{ index: 0, delta: { refusal: "I'm sorry" }, finish_reason: null }] }),
      sse({ id: 'x', model: 'gpt-4o', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
      'data: [DONE]\n\n',
    );
    expect(text(list)).toBe("I'm sorry");
    expect(done(list).finishReason).toBe('content_filter');
  });

  it.each([
    ['anthropic', anthropic, JSON.stringify({ id: 'm', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: 'refusal', usage: { input_tokens: 5, output_tokens: 0 } })],
    ['bedrock', bedrock, JSON.stringify({ output: { message: { role: 'assistant', content: [{ text: 'Blocked.' }] } }, stopReason: 'guardrail_intervened', usage: { inputTokens: 5, outputTokens: 2, totalTokens: 7 } })],
    ['gemini', gemini, JSON.stringify({ candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'SAFETY' }], usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } })],
  ] as const)('maps the refusal of %s to content_filter too', (_id, adapter, bodyText) => {
    expect(adapter.parseResponse(200, {}, bodyText, 'm').finishReason).toBe('content_filter');
  });
});

describe('6. an exhausted quota is not a rate limit', () => {
  const quota = JSON.stringify({ error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } });
  const limit = JSON.stringify({ error: { message: 'Rate limit reached for gpt-4o.', type: 'requests', param: null, code: 'rate_limit_exceeded' } });

  it('maps OpenAI 429 insufficient_quota to quota_exceeded, not retryable, so routing fails over at once', () => {
    const error = openai.parseError(429, { 'retry-after': '1' }, quota);
    expect(error).toMatchObject({ code: 'quota_exceeded', retryable: false, providerCode: 'insufficient_quota' });
    expect(decideRetry(error, 1, 0, DEFAULT_RETRY_POLICY)).toEqual({ action: 'failover' });
  });

  it('keeps an ordinary 429 a retryable rate limit', () => {
    expect(openai.parseError(429, {}, limit)).toMatchObject({ code: 'rate_limited', retryable: true });
  });
});

describe('7. the Anthropic API version is a setting and refused parameters are mapped', () => {
  it('sends the current version by default and omits temperature, which it removed', async () => {
    const built = await anthropic.buildRequest({ ...request, model: 'claude-sonnet-4-5' }, { apiKey: 'k' });
    expect(built.headers['anthropic-version']).toBe('2026-10-21');
    expect(JSON.parse(built.body).temperature).toBeUndefined();
  });

  it('honours a per-key version and keeps temperature where that version and model accept it', async () => {
    const older = { apiKey: 'k', extra: { anthropic_version: '2023-06-01' } };
    const built = await anthropic.buildRequest({ ...request, model: 'claude-sonnet-4-5' }, older);
    expect(built.headers['anthropic-version']).toBe('2023-06-01');
    expect(JSON.parse(built.body).temperature).toBe(0.5);
    expect((await json(anthropic, { ...request, model: 'claude-opus-4-7' }, older)).temperature).toBeUndefined();
    expect((await json(anthropic, { ...request, model: 'claude-sonnet-5' }, older)).temperature).toBeUndefined();
  });

  it('omits temperature for the same Claude models on Bedrock, which refuse it there too', async () => {
    const target = { apiKey: 'AKID:SECRET' };
    expect(dig(await json(bedrock, { ...request, model: 'us.anthropic.claude-opus-4-7-v1:0' }, target), 'inferenceConfig', 'temperature')).toBeUndefined();
    expect(dig(await json(bedrock, { ...request, model: 'anthropic.claude-sonnet-4-5-20250929-v1:0' }, target), 'inferenceConfig', 'temperature')).toBe(0.5);
  });
});

describe('8. Groq', () => {
  it('sends max_completion_tokens instead of the deprecated max_tokens', async () => {
    const sent = await json(groq, request, { apiKey: 'k' });
    expect(sent.max_completion_tokens).toBe(100);
    expect(sent.max_tokens).toBeUndefined();
  });

  it('retries 498 capacity_exceeded with backoff instead of rejecting the request', () => {
    const error = groq.parseError(498, {}, JSON.stringify({ error: { message: 'Capacity exceeded', type: 'capacity_exceeded', code: 'capacity_exceeded' } }));
    expect(error).toMatchObject({ code: 'overloaded', retryable: true });
  });
});

describe('9. Bedrock ModelErrorException', () => {
  it('is a retryable model-side failure, not a rejected request', () => {
    const error = bedrock.parseError(424, { 'x-amzn-errortype': 'ModelErrorException:http://internal.amazon.com/coral/com.amazon.bedrock/' }, JSON.stringify({ message: 'The model failed to process the request.' }));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ code: 'server', retryable: true, providerCode: 'ModelErrorException' });
  });
});
