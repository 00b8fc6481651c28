import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../contract.ts';
import type { CompletionRequest, ProviderAdapter, ProviderTarget, UpstreamRequest } from '../contract.ts';
import { anthropic } from './anthropic.ts';
import { azure_openai } from './azure-openai.ts';
import { bedrock, parseAwsKey } from './bedrock.ts';
import { cohere } from './cohere.ts';
import { deepseek } from './deepseek.ts';
import { fireworks } from './fireworks.ts';
import { gemini } from './gemini.ts';
import { groq } from './groq.ts';
import { mistral } from './mistral.ts';
import { ollama } from './ollama.ts';
import { openai } from './openai.ts';
import { openai_compatible } from './openai-compatible.ts';
import { openrouter } from './openrouter.ts';
import { together } from './together.ts';
import { vertex_ai } from './vertex-ai.ts';
import { xai } from './xai.ts';

const TOOL = { name: 'get_weather', description: 'Weather', parameters: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', additionalProperties: false, properties: { city: { type: 'string' } } } };

const BASE: CompletionRequest = {
  model: 'model-x',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
    { role: 'tool', tool_call_id: 'call_1', content: '{"c":18}' },
    { role: 'user', content: 'Thanks. And tomorrow?' },
  ],
  max_tokens: 100,
  temperature: 0.5,
  tools: [TOOL],
  stream: false,
};

async function built(adapter: ProviderAdapter, request: CompletionRequest, target: ProviderTarget): Promise<UpstreamRequest & { json: Record<string, unknown> }> {
  const upstream = await adapter.buildRequest(request, target);
  return { ...upstream, json: JSON.parse(upstream.body) as Record<string, unknown> };
}

function thrownCode(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return error instanceof UpstreamError ? `${error.code}/${error.providerCode}` : 'not an UpstreamError';
  }
  return undefined;
}

describe('OpenAI-compatible adapters', () => {
  it('sends the OpenAI chat body with Bearer auth, max_completion_tokens and include_usage for streams', async () => {
    const upstream = await built(openai, { ...BASE, stream: true }, { apiKey: 'sk-1' });
    expect(upstream.url).toBe('https://api.openai.com/v1/chat/completions');
    expect(upstream.headers).toMatchObject({ authorization: 'Bearer sk-1', 'content-type': 'application/json', accept: 'text/event-stream' });
    expect(upstream.json).toEqual({
      model: 'model-x',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', content: '{"c":18}', tool_call_id: 'call_1' },
        { role: 'user', content: 'Thanks. And tomorrow?' },
      ],
      max_completion_tokens: 100,
      temperature: 0.5,
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: TOOL.parameters } }],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it.each([
    [together, 'https://api.together.ai/v1/chat/completions'],
    [fireworks, 'https://api.fireworks.ai/inference/v1/chat/completions'],
    [deepseek, 'https://api.deepseek.com/chat/completions'],
    [xai, 'https://api.x.ai/v1/chat/completions'],
    [openrouter, 'https://openrouter.ai/api/v1/chat/completions'],
    [mistral, 'https://api.mistral.ai/v1/chat/completions'],
    [ollama, 'http://127.0.0.1:11434/v1/chat/completions'],
  ] as const)('%# posts to the vendor default endpoint with max_tokens', async (adapter, url) => {
    const upstream = await built(adapter, BASE, { apiKey: 'k' });
    expect(upstream.url).toBe(url);
    expect(upstream.json.max_tokens).toBe(100);
    expect(upstream.json.stream).toBeUndefined(); // omitted when not streaming, as the SDKs do
  });

  it('posts to Groq with max_completion_tokens, which replaced its deprecated max_tokens', async () => {
    const upstream = await built(groq, BASE, { apiKey: 'k' });
    expect(upstream.url).toBe('https://api.groq.com/openai/v1/chat/completions');
    expect(upstream.json.max_completion_tokens).toBe(100);
    expect(upstream.json.max_tokens).toBeUndefined();
  });

  it('does not send stream_options to Mistral, which rejects unknown fields', async () => {
    const upstream = await built(mistral, { ...BASE, stream: true }, { apiKey: 'k' });
    expect(upstream.json.stream_options).toBeUndefined();
  });

  it('requires a base URL for the generic OpenAI-compatible adapter and uses it verbatim', async () => {
    expect(thrownCode(() => openai_compatible.buildRequest(BASE, { apiKey: 'k' }))).toBe('bad_request/base_url_required');
    const upstream = await built(openai_compatible, BASE, { apiKey: 'k', baseUrl: 'https://llm.internal/v1/' });
    expect(upstream.url).toBe('https://llm.internal/v1/chat/completions');
  });

  it('reads cached, reasoning and DeepSeek cache-hit tokens from usage', () => {
    const result = openai.parseResponse(
      200,
      {},
      JSON.stringify({
        model: 'o3-mini',
        choices: [{ message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150, prompt_tokens_details: { cached_tokens: 40 }, completion_tokens_details: { reasoning_tokens: 30 } },
      }),
    );
    expect(result.usage).toEqual({ promptTokens: 100, completionTokens: 50, totalTokens: 150, cachedPromptTokens: 40, reasoningTokens: 30 });
    const hit = deepseek.parseResponse(200, {}, JSON.stringify({ choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 2, prompt_cache_hit_tokens: 8 } }), 'deepseek-chat');
    expect(hit.usage?.cachedPromptTokens).toBe(8);
    expect(hit.model).toBe('deepseek-chat');
  });

  it('rejects a 2xx body that is not a chat completion as invalid_response', () => {
    expect(thrownCode(() => openai.parseResponse(200, {}, '<html>gateway</html>'))).toBe('invalid_response/null');
    expect(thrownCode(() => openai.parseResponse(200, {}, '{"choices":[]}'))).toBe('invalid_response/null');
  });

  it('reads absurd, negative or non-numeric token counts as no usage, and a short total as the sum of its parts', () => {
    const answer = (usage: unknown) => JSON.stringify({ choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }], usage });
    expect(openai.parseResponse(200, {}, answer({ prompt_tokens: 1e300, completion_tokens: 1e300, total_tokens: 1e300 })).usage).toBeNull();
    expect(openai.parseResponse(200, {}, answer({ prompt_tokens: -5, completion_tokens: '7' })).usage).toBeNull();
    expect(openai.parseResponse(200, {}, answer({ prompt_tokens: 3_000, completion_tokens: 3_000, total_tokens: 0 })).usage?.totalTokens).toBe(6_000);
  });

  it('maps a redirect to invalid_response, not to a rejected request', () => {
    const error = openai.parseError(301, { location: 'http://169.254.169.254/' }, '');
    expect(error.code).toBe('invalid_response');
    expect(error.retryable).toBe(false);
  });
});

describe('Azure OpenAI adapter', () => {
  it('routes by deployment and api-version with the api-key header, the deployment also as model (as AzureOpenAI does)', async () => {
    const upstream = await built(azure_openai, BASE, { apiKey: 'az-key', baseUrl: 'https://res.openai.azure.com' });
    expect(upstream.url).toBe('https://res.openai.azure.com/openai/deployments/model-x/chat/completions?api-version=2024-10-21');
    expect(upstream.headers['api-key']).toBe('az-key');
    expect(upstream.headers.authorization).toBeUndefined();
    expect(upstream.json.model).toBe('model-x');
  });

  it('takes the api-version from the base URL query and the deployment from extra', async () => {
    const upstream = await built(azure_openai, BASE, {
      apiKey: 'k',
      baseUrl: 'https://res.openai.azure.com/openai/?api-version=2025-01-01-preview',
      extra: { deployment: 'prod gpt' },
    });
    expect(upstream.url).toBe('https://res.openai.azure.com/openai/deployments/prod%20gpt/chat/completions?api-version=2025-01-01-preview');
  });

  it('requires the resource base URL', () => {
    expect(thrownCode(() => azure_openai.buildRequest(BASE, { apiKey: 'k' }))).toBe('bad_request/base_url_required');
  });
});

describe('Anthropic adapter', () => {
  it('sends x-api-key, anthropic-version, a top-level system and tool blocks in alternating turns', async () => {
    const upstream = await built(anthropic, BASE, { apiKey: 'sk-ant', extra: { anthropic_version: '2023-06-01' } });
    expect(upstream.url).toBe('https://api.anthropic.com/v1/messages');
    expect(upstream.headers).toMatchObject({ 'x-api-key': 'sk-ant', 'anthropic-version': '2023-06-01' });
    expect(upstream.headers.authorization).toBeUndefined();
    expect(upstream.json).toEqual({
      model: 'model-x',
      max_tokens: 100,
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: '{"c":18}' },
            { type: 'text', text: 'Thanks. And tomorrow?' },
          ],
        },
      ],
      temperature: 0.5,
      tools: [{ name: 'get_weather', description: 'Weather', input_schema: TOOL.parameters }],
    });
  });

  it('fills the required max_tokens when the request has none and sets stream only when streaming', async () => {
    const upstream = await built(anthropic, { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true }, { apiKey: 'k' });
    expect(upstream.json.max_tokens).toBe(4096);
    expect(upstream.json.stream).toBe(true);
  });

  it('counts cache reads into prompt tokens and reports them as cached', () => {
    const result = anthropic.parseResponse(
      200,
      {},
      JSON.stringify({ model: 'claude', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 10, cache_read_input_tokens: 90, cache_creation_input_tokens: 0, output_tokens: 5 } }),
    );
    expect(result.usage).toEqual({ promptTokens: 100, completionTokens: 5, totalTokens: 105, cachedPromptTokens: 90 });
  });

  it('rejects a text block whose text is not a string as invalid_response', () => {
    const body = (text: unknown) => JSON.stringify({ content: [{ type: 'text', text }], stop_reason: 'end_turn', usage: { input_tokens: 5, output_tokens: 1 } });
    expect(thrownCode(() => anthropic.parseResponse(200, {}, body(42)))).toBe('invalid_response/null');
    expect(thrownCode(() => anthropic.parseResponse(200, {}, body(['a', 'b'])))).toBe('invalid_response/null');
    expect(anthropic.parseResponse(200, {}, body('fine')).content).toBe('fine');
  });

  it('maps 529 overloaded_error to a retryable overloaded error', () => {
    const error = anthropic.parseError(529, {}, JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
    expect(error.code).toBe('overloaded');
    expect(error.retryable).toBe(true);
    expect(error.providerCode).toBe('overloaded_error');
  });
});

describe('Gemini and Vertex AI adapters', () => {
  it('sends x-goog-api-key (never ?key=), systemInstruction, model-role turns and functionResponse by name', async () => {
    const upstream = await built(gemini, BASE, { apiKey: 'AIza-key' });
    expect(upstream.url).toBe('https://generativelanguage.googleapis.com/v1beta/models/model-x:generateContent');
    expect(upstream.headers['x-goog-api-key']).toBe('AIza-key');
    expect(upstream.json).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { c: 18 } } }, { text: 'Thanks. And tomorrow?' }] },
      ],
      systemInstruction: { role: 'user', parts: [{ text: 'Be brief.' }] },
      generationConfig: { maxOutputTokens: 100, temperature: 0.5 },
      tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } } } }] }],
    });
  });

  it('streams through :streamGenerateContent?alt=sse', async () => {
    const upstream = await built(gemini, { ...BASE, stream: true }, { apiKey: 'k' });
    expect(upstream.url).toBe('https://generativelanguage.googleapis.com/v1beta/models/model-x:streamGenerateContent?alt=sse');
  });

  it('builds the Vertex URL from a PROJECT:LOCATION:TOKEN key and sends the token as Bearer', async () => {
    const upstream = await built(vertex_ai, BASE, { apiKey: 'my-proj:europe-west4:ya29.token' });
    expect(upstream.url).toBe('https://europe-west4-aiplatform.googleapis.com/v1/projects/my-proj/locations/europe-west4/publishers/google/models/model-x:generateContent');
    expect(upstream.headers.authorization).toBe('Bearer ya29.token');
    const global = await built(vertex_ai, BASE, { apiKey: 'p:global:t' });
    expect(global.url.startsWith('https://aiplatform.googleapis.com/v1/projects/p/locations/global/')).toBe(true);
  });

  it('accepts a bare Vertex token when the base URL names project and location, and refuses one without', async () => {
    const upstream = await built(vertex_ai, BASE, { apiKey: 'ya29.token', baseUrl: 'https://us-central1-aiplatform.googleapis.com/v1/projects/p1/locations/us-central1' });
    expect(upstream.url).toBe('https://us-central1-aiplatform.googleapis.com/v1/projects/p1/locations/us-central1/publishers/google/models/model-x:generateContent');
    expect(thrownCode(() => vertex_ai.buildRequest(BASE, { apiKey: 'ya29.token' }))).toBe('bad_request/vertex_project_required');
  });

  it('rejects an answer with no candidate and no block reason, or a part whose text is not a string, as invalid_response', () => {
    expect(thrownCode(() => gemini.parseResponse(200, {}, JSON.stringify({ candidates: [] })))).toBe('invalid_response/null');
    expect(thrownCode(() => gemini.parseResponse(200, {}, JSON.stringify({ candidates: [{ content: { parts: [{ text: { a: 1 } }] }, finishReason: 'STOP' }] })))).toBe('invalid_response/null');
    // A prompt the provider blocked is an answer with a reason, not a malformed one.
    expect(gemini.parseResponse(200, {}, JSON.stringify({ promptFeedback: { blockReason: 'SAFETY' } })).finishReason).toBe('content_filter');
  });

  it('adds thought tokens to completion tokens, reports cached ones and drops thought parts from content', () => {
    const result = gemini.parseResponse(
      200,
      {},
      JSON.stringify({
        candidates: [{ content: { role: 'model', parts: [{ text: 'hmm', thought: true }, { text: 'answer' }] }, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 50, candidatesTokenCount: 10, thoughtsTokenCount: 20, cachedContentTokenCount: 30, totalTokenCount: 80 },
        modelVersion: 'gemini-2.5-flash',
      }),
    );
    expect(result.content).toBe('answer');
    expect(result.usage).toEqual({ promptTokens: 50, completionTokens: 30, totalTokens: 80, cachedPromptTokens: 30, reasoningTokens: 20 });
  });

  it('maps a blocked prompt to content_filter and RetryInfo to retryAfterMs', () => {
    const blocked = gemini.parseResponse(200, {}, JSON.stringify({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 5 } }));
    expect(blocked.finishReason).toBe('content_filter');
    const error = gemini.parseError(429, {}, JSON.stringify({ error: { code: 429, status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' }] } }));
    expect(error.code).toBe('rate_limited');
    expect(error.retryAfterMs).toBe(7000);
  });
});

describe('Bedrock adapter', () => {
  it('signs the Converse request with SigV4 for service bedrock in the target region', async () => {
    const upstream = await built(bedrock, BASE, { apiKey: 'AKIDEXAMPLE:secret', extra: { region: 'eu-west-1' }, baseUrl: undefined } as ProviderTarget);
    expect(upstream.url).toBe('https://bedrock-runtime.eu-west-1.amazonaws.com/model/model-x/converse');
    expect(upstream.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/bedrock\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$/);
    expect(upstream.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    expect(upstream.headers['x-amz-security-token']).toBeUndefined();
  });

  it('URL-encodes model ids with colons, uses converse-stream for streams and carries the session token', async () => {
    const upstream = await built(bedrock, { ...BASE, model: 'anthropic.claude-3-5-sonnet-20240620-v1:0', stream: true }, { apiKey: 'AKID:secret:session-token' });
    expect(upstream.url).toBe('https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream');
    expect(upstream.headers['x-amz-security-token']).toBe('session-token');
  });

  it('takes the region from a bedrock-runtime base URL and sends a colon-free key as a Bedrock API key', async () => {
    const upstream = await built(bedrock, BASE, { apiKey: 'ABSKbedrockapikey', baseUrl: 'https://bedrock-runtime.ap-southeast-2.amazonaws.com' });
    expect(upstream.headers.authorization).toBe('Bearer ABSKbedrockapikey');
    expect(upstream.url).toBe('https://bedrock-runtime.ap-southeast-2.amazonaws.com/model/model-x/converse');
  });

  it('maps messages to Converse blocks with system blocks, inferenceConfig and toolConfig', async () => {
    const upstream = await built(bedrock, BASE, { apiKey: 'A:B' });
    expect(upstream.json).toEqual({
      messages: [
        { role: 'user', content: [{ text: 'Weather in Paris?' }] },
        { role: 'assistant', content: [{ toolUse: { toolUseId: 'call_1', name: 'get_weather', input: { city: 'Paris' } } }] },
        { role: 'user', content: [{ toolResult: { toolUseId: 'call_1', content: [{ text: '{"c":18}' }] } }, { text: 'Thanks. And tomorrow?' }] },
      ],
      system: [{ text: 'Be brief.' }],
      inferenceConfig: { maxTokens: 100, temperature: 0.5 },
      toolConfig: { tools: [{ toolSpec: { name: 'get_weather', description: 'Weather', inputSchema: { json: TOOL.parameters } } }] },
    });
  });

  it('parses the stored key format and refuses an empty secret', () => {
    expect(parseAwsKey('ID:SECRET')).toEqual({ accessKeyId: 'ID', secretAccessKey: 'SECRET' });
    expect(parseAwsKey('ID:SECRET:TOKEN')).toEqual({ accessKeyId: 'ID', secretAccessKey: 'SECRET', sessionToken: 'TOKEN' });
    expect(parseAwsKey('bearer-only')).toBeNull();
    expect(thrownCode(() => parseAwsKey('ID:'))).toBe('auth/bedrock_key_format');
  });

  it('maps ThrottlingException to rate_limited from the x-amzn-errortype header', () => {
    const error = bedrock.parseError(429, { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/' }, '{"message":"slow"}');
    expect(error.code).toBe('rate_limited');
    expect(error.providerCode).toBe('ThrottlingException');
  });
});

describe('Cohere adapter', () => {
  it('posts the v2 chat body with the system role kept in messages', async () => {
    const upstream = await built(cohere, BASE, { apiKey: 'co-key' });
    expect(upstream.url).toBe('https://api.cohere.com/v2/chat');
    expect(upstream.headers.authorization).toBe('Bearer co-key');
    expect(upstream.json).toEqual({
      model: 'model-x',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"c":18}' },
        { role: 'user', content: 'Thanks. And tomorrow?' },
      ],
      max_tokens: 100,
      temperature: 0.5,
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: TOOL.parameters } }],
      stream: false,
    });
  });

  it('maps 498 invalid token to auth', () => {
    expect(cohere.parseError(498, {}, '{"message":"invalid api token"}').code).toBe('auth');
  });
});

describe('message names', () => {
  it('passes the participant name to OpenAI but not to Mistral, which forbids unknown fields', async () => {
    const request: CompletionRequest = { model: 'm', messages: [{ role: 'user', content: 'hi', name: 'alice' }], stream: false };
    expect((await built(openai, request, { apiKey: 'k' })).json.messages).toEqual([{ role: 'user', content: 'hi', name: 'alice' }]);
    expect((await built(mistral, request, { apiKey: 'k' })).json.messages).toEqual([{ role: 'user', content: 'hi' }]);
  });
});
