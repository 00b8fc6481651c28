/**
 * SDK-differential suite: for every provider with an official JS SDK, the same logical request
 * (system + user message, max tokens, temperature, one tool; stream off and on) is sent once by
 * the SDK and once by svc's adapter (through the registry's invoke entry points) to a loopback
 * capture server, and the two HTTP requests are diffed field by field: method, path, query, the
 * auth and version headers, and every body field with its placement. OpenAI-compatible vendors
 * without their own SDK are compared with the OpenAI SDK at their base URL. Bedrock's SigV4
 * signatures are verified by recomputing them with @smithy/signature-v4, not compared by value.
 *
 * Every difference left must be listed in INTENDED_DIFFERENCES (./intended-differences.ts) with
 * its reason, and each of those is listed in docs/providers.md (checked below).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import { GoogleGenAI } from '@google/genai';
import { Mistral } from '@mistralai/mistralai';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { CohereClientV2 } from 'cohere-ai';
import Groq from 'groq-sdk';
import { Ollama } from 'ollama';
import OpenAI, { AzureOpenAI } from 'openai';
import Together from 'together-ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompletionRequest, ProviderTarget } from '../../../src/gateway/contract.ts';
import { closeUpstreamConnections } from '../../../src/gateway/http-client.ts';
import { invokeCompletion, invokeStream, providers } from '../../../src/gateway/registry.ts';
import type { RemoteProviderId } from '../../../src/gateway/registry.ts';
import { verifySigV4 } from '../../fakes/providers/protocols/bedrock.ts';
import { startCaptureServer } from './capture-server.ts';
import type { CaptureServer, CapturedRequest } from './capture-server.ts';
import { INTENDED_DIFFERENCES } from './intended-differences.ts';
import type { Difference } from './intended-differences.ts';
import { REPLIES } from './replies.ts';
import type { Protocol } from './replies.ts';

const KEY = 'sk-wire-test-0123456789';
const AWS = { accessKeyId: 'AKIDWIRETEST00000001', secretAccessKey: 'wireTestSecretAccessKey/0123456789+abcd' };
const VERTEX = { project: 'wire-project', location: 'us-central1', token: 'ya29.wire-token' };
const SYSTEM = 'You are terse.';
const USER = 'Weather in Paris?';
const MAX_TOKENS = 256;
const TEMPERATURE = 0.3;
const TOOL = {
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string', description: 'City name' } }, required: ['city'] },
};
const openAiTool = { type: 'function' as const, function: TOOL };
const openAiMessages = [
  { role: 'system' as const, content: SYSTEM },
  { role: 'user' as const, content: USER },
];

interface Case {
  provider: RemoteProviderId;
  model: string;
  /** The SDK the provider is compared with. */
  sdk: string;
  protocol: Protocol;
  target: (origin: string) => ProviderTarget;
  /** Auth and version headers compared by value (lower case). */
  headers: string[];
  send: (origin: string, stream: boolean) => Promise<void>;
}

async function drain(iterable: AsyncIterable<unknown>): Promise<void> {
  for await (const _chunk of iterable) {
    // consume
  }
}

/** The OpenAI SDK at a vendor's base URL, with the output-limit field the vendor documents. */
function openAiSdk(baseUrl: (origin: string) => string, limitField: 'max_tokens' | 'max_completion_tokens', extraOptions: Record<string, unknown> = {}) {
  return async (origin: string, stream: boolean) => {
    const client = new OpenAI({ apiKey: KEY, baseURL: baseUrl(origin), maxRetries: 0, ...extraOptions });
    const body = { model: 'm', messages: openAiMessages, [limitField]: MAX_TOKENS, temperature: TEMPERATURE, tools: [openAiTool] } as OpenAI.ChatCompletionCreateParamsNonStreaming;
    if (stream) await drain(await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }));
    else await client.chat.completions.create(body);
  };
}

function openAiCompatible(provider: RemoteProviderId, basePath: string, limitField: 'max_tokens' | 'max_completion_tokens' = 'max_tokens'): Case {
  return {
    provider,
    model: 'm',
    sdk: 'openai',
    protocol: 'openai',
    target: (origin) => ({ apiKey: KEY, baseUrl: `${origin}${basePath}` }),
    headers: ['authorization', 'content-type'],
    send: openAiSdk((origin) => `${origin}${basePath}`, limitField),
  };
}

const CASES: Case[] = [
  openAiCompatible('openai', '/v1', 'max_completion_tokens'),
  {
    provider: 'azure_openai',
    model: 'my-deployment',
    sdk: 'openai (AzureOpenAI)',
    protocol: 'openai',
    target: (origin) => ({ apiKey: KEY, baseUrl: origin }),
    headers: ['api-key', 'authorization', 'content-type'],
    send: async (origin, stream) => {
      const client = new AzureOpenAI({ apiKey: KEY, endpoint: origin, apiVersion: '2024-10-21', deployment: 'my-deployment', maxRetries: 0 });
      const body = { model: 'my-deployment', messages: openAiMessages, max_completion_tokens: MAX_TOKENS, temperature: TEMPERATURE, tools: [openAiTool] };
      if (stream) await drain(await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }));
      else await client.chat.completions.create(body);
    },
  },
  {
    ...openAiCompatible('azure_openai', '/openai/v1', 'max_completion_tokens'),
    model: 'my-deployment',
    sdk: 'openai (Azure v1 API)',
    headers: ['api-key', 'authorization', 'content-type'],
    send: async (origin, stream) => {
      const client = new OpenAI({ apiKey: KEY, baseURL: `${origin}/openai/v1`, maxRetries: 0 });
      const body = { model: 'my-deployment', messages: openAiMessages, max_completion_tokens: MAX_TOKENS, temperature: TEMPERATURE, tools: [openAiTool] };
      if (stream) await drain(await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }));
      else await client.chat.completions.create(body);
    },
  },
  {
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    sdk: '@anthropic-ai/sdk',
    protocol: 'anthropic',
    target: (origin) => ({ apiKey: KEY, baseUrl: origin }),
    headers: ['x-api-key', 'anthropic-version', 'authorization', 'content-type'],
    send: async (origin, stream) => {
      const client = new Anthropic({ apiKey: KEY, baseURL: origin, maxRetries: 0 });
      const body = {
        model: 'claude-sonnet-4-5',
        max_tokens: MAX_TOKENS,
        system: SYSTEM,
        messages: [{ role: 'user' as const, content: USER }],
        temperature: TEMPERATURE,
        tools: [{ name: TOOL.name, description: TOOL.description, input_schema: TOOL.parameters as Anthropic.Tool.InputSchema }],
      };
      if (stream) await drain(await client.messages.create({ ...body, stream: true }));
      else await client.messages.create(body);
    },
  },
  ...(['gemini', 'vertex_ai'] as const).map(
    (provider): Case => ({
      provider,
      model: 'gemini-2.5-flash',
      sdk: '@google/genai',
      protocol: 'google',
      target: (origin) =>
        provider === 'gemini' ? { apiKey: KEY, baseUrl: `${origin}/v1beta` } : { apiKey: `${VERTEX.project}:${VERTEX.location}:${VERTEX.token}`, baseUrl: origin },
      headers: ['x-goog-api-key', 'authorization', 'content-type'],
      send: async (origin, stream) => {
        const client =
          provider === 'gemini'
            ? new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: origin } })
            : new GoogleGenAI({
                vertexai: true,
                project: VERTEX.project,
                location: VERTEX.location,
                httpOptions: { baseUrl: origin },
                googleAuthOptions: { authClient: { getRequestHeaders: async () => new Headers({ authorization: `Bearer ${VERTEX.token}` }) } as never },
              });
        const params = {
          model: 'gemini-2.5-flash',
          contents: [{ role: 'user', parts: [{ text: USER }] }],
          config: {
            systemInstruction: SYSTEM,
            maxOutputTokens: MAX_TOKENS,
            temperature: TEMPERATURE,
            tools: [{ functionDeclarations: [{ name: TOOL.name, description: TOOL.description, parameters: TOOL.parameters as never }] }],
          },
        };
        if (stream) await drain(await client.models.generateContentStream(params));
        else await client.models.generateContent(params);
      },
    }),
  ),
  {
    provider: 'bedrock',
    model: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
    sdk: '@aws-sdk/client-bedrock-runtime',
    protocol: 'bedrock',
    target: (origin) => ({ apiKey: `${AWS.accessKeyId}:${AWS.secretAccessKey}`, baseUrl: origin }),
    headers: ['content-type'],
    send: async (origin, stream) => {
      // The SDK's default handler speaks HTTP/2 (h2 over TLS to AWS); the loopback capture is HTTP/1.1.
      const client = new BedrockRuntimeClient({ region: 'us-east-1', endpoint: origin, credentials: AWS, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
      const input = {
        modelId: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
        system: [{ text: SYSTEM }],
        messages: [{ role: 'user' as const, content: [{ text: USER }] }],
        inferenceConfig: { maxTokens: MAX_TOKENS, temperature: TEMPERATURE },
        toolConfig: { tools: [{ toolSpec: { name: TOOL.name, description: TOOL.description, inputSchema: { json: TOOL.parameters as never } } }] },
      };
      if (stream) {
        const output = await client.send(new ConverseStreamCommand(input));
        if (output.stream) await drain(output.stream);
      } else await client.send(new ConverseCommand(input));
      client.destroy();
    },
  },
  {
    provider: 'mistral',
    model: 'mistral-large-latest',
    sdk: '@mistralai/mistralai',
    protocol: 'openai',
    target: (origin) => ({ apiKey: KEY, baseUrl: `${origin}/v1` }),
    headers: ['authorization', 'content-type'],
    send: async (origin, stream) => {
      const client = new Mistral({ apiKey: KEY, serverURL: origin });
      const body = { model: 'mistral-large-latest', messages: openAiMessages, maxTokens: MAX_TOKENS, temperature: TEMPERATURE, tools: [openAiTool] };
      if (stream) await drain(await client.chat.stream(body));
      else await client.chat.complete(body);
    },
  },
  {
    provider: 'cohere',
    model: 'command-a-03-2025',
    sdk: 'cohere-ai',
    protocol: 'cohere',
    target: (origin) => ({ apiKey: KEY, baseUrl: origin }),
    headers: ['authorization', 'content-type'],
    send: async (origin, stream) => {
      const client = new CohereClientV2({ token: KEY, environment: origin });
      const body = { model: 'command-a-03-2025', messages: openAiMessages, maxTokens: MAX_TOKENS, temperature: TEMPERATURE, tools: [openAiTool] };
      if (stream) await drain(await client.chatStream(body));
      else await client.chat(body);
    },
  },
  {
    ...openAiCompatible('groq', '/openai/v1', 'max_completion_tokens'),
    model: 'llama-3.3-70b-versatile',
    sdk: 'groq-sdk',
    send: async (origin, stream) => {
      const client = new Groq({ apiKey: KEY, baseURL: origin, maxRetries: 0 });
      const body = { model: 'llama-3.3-70b-versatile', messages: openAiMessages, max_completion_tokens: MAX_TOKENS, temperature: TEMPERATURE, tools: [openAiTool] };
      if (stream) await drain(await client.chat.completions.create({ ...body, stream: true }));
      else await client.chat.completions.create(body);
    },
  },
  {
    ...openAiCompatible('together', '/v1'),
    sdk: 'together-ai',
    send: async (origin, stream) => {
      const client = new Together({ apiKey: KEY, baseURL: `${origin}/v1`, maxRetries: 0 });
      const body = { model: 'm', messages: openAiMessages, max_tokens: MAX_TOKENS, temperature: TEMPERATURE, tools: [openAiTool] };
      if (stream) await drain(await client.chat.completions.create({ ...body, stream: true }));
      else await client.chat.completions.create(body);
    },
  },
  openAiCompatible('fireworks', '/inference/v1'),
  openAiCompatible('deepseek', ''),
  openAiCompatible('xai', '/v1'),
  openAiCompatible('openrouter', '/api/v1'),
  openAiCompatible('ollama', '/v1'),
  openAiCompatible('openai_compatible', '/v1'),
];

// ------------------------------------------------------------------------------- diffing

function flatten(value: unknown, path: string, into: Map<string, string>): void {
  if (Array.isArray(value) && value.length > 0) value.forEach((item, index) => flatten(item, `${path}[${index}]`, into));
  else if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length > 0) {
    for (const [key, inner] of Object.entries(value)) flatten(inner, path === '' ? key : `${path}.${key}`, into);
  } else into.set(path, JSON.stringify(value));
}

function describeRequest(request: CapturedRequest, compared: string[]): Map<string, string> {
  const fields = new Map<string, string>();
  fields.set('method', request.method);
  fields.set('path', request.path);
  for (const [name, value] of Object.entries(request.query)) fields.set(`query.${name}`, value);
  for (const name of compared) {
    const value = request.headers[name];
    if (value !== undefined) fields.set(`header.${name}`, (Array.isArray(value) ? value.join(',') : value).split(';')[0]!.trim());
  }
  const text = request.body.toString('utf8');
  if (text.length > 0) flatten(JSON.parse(text), 'body', fields);
  return fields;
}

function diff(sdk: Map<string, string>, svc: Map<string, string>): Difference[] {
  const differences: Difference[] = [];
  for (const [field, value] of sdk) {
    if (!svc.has(field)) differences.push({ field, kind: 'sdk_only', sdk: value });
    else if (svc.get(field) !== value) differences.push({ field, kind: 'value', sdk: value, svc: svc.get(field)! });
  }
  for (const [field, value] of svc) if (!sdk.has(field)) differences.push({ field, kind: 'svc_only', svc: value });
  return differences.sort((left, right) => left.field.localeCompare(right.field));
}

/** SigV4: the signature of a captured request, recomputed with the known credentials and its own date (the fakes' verifier). */
async function sigV4Problems(request: CapturedRequest, query: string): Promise<string[]> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
  const rawBody = request.body.toString('utf8');
  return verifySigV4({ method: request.method, path: request.path, query: new URLSearchParams(query), headers, rawBody, body: JSON.parse(rawBody) as unknown }, query, { ...AWS, region: 'us-east-1' });
}

/** The credential scope and signed header list of a SigV4 authorization header. */
function sigV4Shape(request: CapturedRequest): { scope: string; signedHeaders: string[] } {
  const match = /Credential=[^/]+\/\d{8}\/([^,]+), ?SignedHeaders=([^,]+),/.exec(String(request.headers.authorization ?? ''));
  return { scope: match?.[1] ?? '', signedHeaders: (match?.[2] ?? '').split(';') };
}

// ------------------------------------------------------------------------------- the suite

let capture: CaptureServer;

beforeAll(async () => {
  capture = await startCaptureServer();
});

afterAll(async () => {
  await closeUpstreamConnections?.();
  await capture?.close();
});

function logicalRequest(model: string, stream: boolean): CompletionRequest {
  return {
    model,
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: USER },
    ],
    max_tokens: MAX_TOKENS,
    temperature: TEMPERATURE,
    tools: [TOOL],
    stream,
  };
}

async function sendBoth(entry: Case, stream: boolean): Promise<{ sdk: CapturedRequest; svc: CapturedRequest }> {
  capture.reply(REPLIES[entry.protocol][stream ? 'stream' : 'json']);
  capture.take();
  await entry.send(capture.origin, stream);
  const sdkRequests = capture.take();
  const request = logicalRequest(entry.model, stream);
  const target = entry.target(capture.origin);
  if (stream) {
    for await (const _event of await invokeStream(entry.provider, request, target)) {
      // consume
    }
  } else await invokeCompletion(entry.provider, request, target);
  const svcRequests = capture.take();
  expect(sdkRequests).toHaveLength(1);
  expect(svcRequests).toHaveLength(1);
  return { sdk: sdkRequests[0]!, svc: svcRequests[0]! };
}

const KEY_OF = (entry: Case) => `${entry.provider} vs ${entry.sdk}`;

describe.each(CASES)('$provider against $sdk', (entry) => {
  it.each([false, true])('sends what the SDK sends, field by field, but for the documented differences (stream %s)', async (stream) => {
    const { sdk, svc } = await sendBoth(entry, stream);
    const differences = diff(describeRequest(sdk, entry.headers), describeRequest(svc, entry.headers));
    if (process.env.WIRE_DEBUG) console.log(`WIRE ${KEY_OF(entry)} stream=${stream} ${JSON.stringify(differences)}`);
    const intended = (INTENDED_DIFFERENCES[KEY_OF(entry)] ?? []).filter((item) => item.stream === undefined || item.stream === stream);
    expect(differences.map(({ field, kind }) => `${kind} ${field}`)).toEqual(intended.map(({ field, kind }) => `${kind} ${field}`).sort((left, right) => left.slice(left.indexOf(' ')).localeCompare(right.slice(right.indexOf(' ')))));
    if (entry.provider === 'bedrock') {
      // Signatures differ by value (time, signed header set): each is verified by recomputation.
      expect(await sigV4Problems(sdk, '')).toEqual([]);
      expect(await sigV4Problems(svc, '')).toEqual([]);
      expect(sigV4Shape(svc).scope).toBe(sigV4Shape(sdk).scope);
      for (const name of ['host', 'x-amz-date', 'x-amz-content-sha256']) {
        if (sigV4Shape(sdk).signedHeaders.includes(name)) expect(sigV4Shape(svc).signedHeaders).toContain(name);
      }
    }
  });
});

describe('the documented differences', () => {
  const docs = readFileSync(resolve(import.meta.dirname, '../../../docs/providers.md'), 'utf8');
  it.each(Object.entries(INTENDED_DIFFERENCES).flatMap(([key, list]) => list.map((item) => [key, item.field] as const)))('lists %s: %s in docs/providers.md', (key, field) => {
    const provider = key.split(' vs ')[0]!;
    const rows = docs.split('\n').filter((line) => line.startsWith(`| \`${provider}\``) && line.includes(`\`${field}\``));
    expect(rows.length).toBeGreaterThan(0);
  });

  it('has a reason for every difference', () => {
    for (const list of Object.values(INTENDED_DIFFERENCES)) for (const item of list) expect(item.reason.length).toBeGreaterThan(10);
  });
});

describe('ollama', () => {
  it('has an SDK that speaks the native /api/chat, while svc speaks the OpenAI-compatible /v1 endpoint (compared with the OpenAI SDK above)', async () => {
    capture.reply({ contentType: 'application/json', body: JSON.stringify({ model: 'llama3.2', created_at: '2026-01-01T00:00:00Z', message: { role: 'assistant', content: 'Sunny.' }, done: true, done_reason: 'stop', prompt_eval_count: 10, eval_count: 2 }) });
    capture.take();
    await new Ollama({ host: capture.origin }).chat({ model: 'llama3.2', messages: openAiMessages, options: { temperature: TEMPERATURE, num_predict: MAX_TOKENS }, tools: [openAiTool], stream: false });
    const [native] = capture.take();
    expect(native).toMatchObject({ method: 'POST', path: '/api/chat' });
    capture.reply(REPLIES.openai.json);
    await invokeCompletion('ollama', logicalRequest('llama3.2', false), { apiKey: KEY, baseUrl: `${capture.origin}/v1` });
    expect(capture.take()[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
  });
});

describe('default base URLs', () => {
  it.each([
    ['openai', new OpenAI({ apiKey: KEY }).baseURL],
    ['groq', `${new Groq({ apiKey: KEY }).baseURL}/openai/v1`],
    ['together', new Together({ apiKey: KEY }).baseURL],
    ['anthropic', new Anthropic({ apiKey: KEY }).baseURL],
  ] as const)('%s defaults to the base URL its SDK uses', (provider, sdkBase) => {
    expect(providers[provider].defaultBaseUrl).toBe(sdkBase);
  });
});
