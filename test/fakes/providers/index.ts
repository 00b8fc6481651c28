/**
 * Fake upstream LLM providers for tests and benchmarks: one node:http server per provider wire
 * protocol, on 127.0.0.1 with an ephemeral port. Each fake VALIDATES what it receives (path,
 * auth header, required fields; for Bedrock the AWS SigV4 signature, re-computed with the known
 * test credentials) and records every request with the problems it found; invalid requests get
 * the provider's own 400/401/403 error shape, so an adapter bug fails a test instead of passing
 * silently. It replies in the provider's real shapes (JSON and streaming) and can be told to fail
 * (status + Retry-After, delay, drop before headers, drop or truncate mid-stream, in-stream error).
 *
 *   const fake = await startFakeProvider('anthropic');
 *   const result = await invokeCompletion('anthropic', request, fakeTarget('anthropic', fake));
 *   fake.setBehaviour({ status: 429, retryAfter: '2' });
 *   await fake.close();
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ProviderTarget } from '../../../src/gateway/contract.ts';
import type { ProviderId } from '../../../src/gateway/registry.ts';
import { anthropicProtocol } from './protocols/anthropic.ts';
import { bedrockProtocol } from './protocols/bedrock.ts';
import type { BedrockProtocol } from './protocols/bedrock.ts';
import { cohereProtocol } from './protocols/cohere.ts';
import { googleProtocol } from './protocols/google.ts';
import { openAiProtocol } from './protocols/openai.ts';
import { DEFAULT_BEHAVIOUR } from './types.ts';
import type { FakeBehaviour, FakeProtocol, ProtocolRequest, RecordedRequest } from './types.ts';

export type { FakeBehaviour, RecordedRequest } from './types.ts';
export { startFastOpenAiFake } from './fast-openai.ts';
export type { FastFake, FastFakeOptions } from './fast-openai.ts';

/** The credentials each fake expects (pass them with fakeTarget). */
export const FAKE_CREDENTIALS = {
  default: 'sk-fake-test-key-0123456789',
  bedrock: { accessKeyId: 'AKIDFAKEEXAMPLE0001', secretAccessKey: 'fakeSecretAccessKey/EXAMPLE+0123456789', region: 'us-east-1' },
  vertex_ai: { project: 'fake-project', location: 'us-central1', accessToken: 'ya29.fake-access-token' },
} as const;

interface Layout {
  protocol: FakeProtocol;
  /** Path appended to the origin to form the target's baseUrl. */
  basePath: string;
}

const MISTRAL_FIELDS = ['model', 'messages', 'max_tokens', 'temperature', 'top_p', 'tools', 'tool_choice', 'stream', 'stop', 'random_seed', 'response_format', 'safe_prompt'] as const;

function layoutFor(providerId: ProviderId, apiKey: string): Layout {
  const openAiLike = (basePath: string, extra: Partial<Parameters<typeof openAiProtocol>[0]> = {}): Layout => ({
    basePath,
    protocol: openAiProtocol({ path: `${basePath}/chat/completions`, auth: 'bearer', apiKey, requireStreamOptions: true, streamUsage: 'usage-chunk', ...extra }),
  });
  switch (providerId) {
    case 'together':
      return openAiLike('/v1', { requireStreamOptions: false, streamUsage: 'finish-chunk' });
    case 'openai':
    case 'xai':
    case 'ollama':
    case 'openai_compatible':
      return openAiLike('/v1');
    case 'groq':
      return openAiLike('/openai/v1', { requireStreamOptions: false, streamUsage: 'x-groq' });
    case 'fireworks':
      return openAiLike('/inference/v1');
    case 'deepseek':
      return openAiLike('');
    case 'openrouter':
      return openAiLike('/api/v1');
    case 'mistral':
      return openAiLike('/v1', { requireStreamOptions: false, streamUsage: 'finish-chunk', allowedFields: MISTRAL_FIELDS });
    case 'azure_openai':
      return { basePath: '', protocol: openAiProtocol({ path: '', auth: 'api-key', apiKey, requireStreamOptions: true, streamUsage: 'usage-chunk', azure: true }) };
    case 'anthropic':
      return { basePath: '', protocol: anthropicProtocol(apiKey) };
    case 'gemini':
      return { basePath: '/v1beta', protocol: googleProtocol({ flavour: 'gemini', apiKey }) };
    case 'vertex_ai':
      return {
        basePath: '',
        protocol: googleProtocol({ flavour: 'vertex', apiKey: FAKE_CREDENTIALS.vertex_ai.accessToken, project: FAKE_CREDENTIALS.vertex_ai.project, location: FAKE_CREDENTIALS.vertex_ai.location }),
      };
    case 'bedrock':
      return { basePath: '', protocol: bedrockProtocol(FAKE_CREDENTIALS.bedrock) };
    case 'cohere':
      return { basePath: '', protocol: cohereProtocol(apiKey) };
    case 'mock':
    case 'mock_backup':
      throw new Error('the built-in mock providers answer in process: no fake upstream');
  }
}

export interface FakeProviderOptions {
  /** Expected key for Bearer / x-api-key / api-key providers. Default FAKE_CREDENTIALS.default. */
  apiKey?: string;
  behaviour?: Partial<FakeBehaviour>;
}

export interface FakeProvider {
  providerId: ProviderId;
  /** The base URL to put in the target (origin + the provider's base path). */
  baseUrl: string;
  /** http://127.0.0.1:<port> */
  origin: string;
  requests: RecordedRequest[];
  /** Merges into the current behaviour. */
  setBehaviour(behaviour: Partial<FakeBehaviour>): void;
  /** Back to the default behaviour, and forgets recorded requests. */
  reset(): void;
  /** TCP connections accepted so far (keep-alive reuse shows as a small number). */
  connectionCount(): number;
  close(): Promise<void>;
}

/** The target that reaches this fake with the credentials it expects. */
export function fakeTarget(providerId: ProviderId, fake: Pick<FakeProvider, 'baseUrl'>, apiKey: string = FAKE_CREDENTIALS.default): ProviderTarget {
  if (providerId === 'bedrock') {
    const { accessKeyId, secretAccessKey, region } = FAKE_CREDENTIALS.bedrock;
    return { apiKey: `${accessKeyId}:${secretAccessKey}`, baseUrl: fake.baseUrl, extra: { region } };
  }
  if (providerId === 'vertex_ai') {
    const { project, location, accessToken } = FAKE_CREDENTIALS.vertex_ai;
    return { apiKey: `${project}:${location}:${accessToken}`, baseUrl: fake.baseUrl };
  }
  return { apiKey, baseUrl: fake.baseUrl };
}

const MAX_BODY_BYTES = 10 * 1024 * 1024;
const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error('fake: body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function flatHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

export async function startFakeProvider(providerId: ProviderId, options: FakeProviderOptions = {}): Promise<FakeProvider> {
  const layout = layoutFor(providerId, options.apiKey ?? FAKE_CREDENTIALS.default);
  let behaviour: FakeBehaviour = { ...DEFAULT_BEHAVIOUR, ...options.behaviour };
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const rawBody = await readBody(request);
    const target = new URL(request.url ?? '/', 'http://fake.invalid');
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      body = undefined;
    }
    const protocolRequest: ProtocolRequest = { method: request.method ?? '', path: target.pathname, query: target.searchParams, headers: flatHeaders(request), rawBody, body };
    const validation = layout.protocol.validate(protocolRequest);
    if (providerId === 'bedrock') {
      const signatureProblems = await (layout.protocol as BedrockProtocol).verify(protocolRequest, target.search);
      if (signatureProblems.length > 0) {
        validation.problems.push(...signatureProblems);
        validation.authFailed = true;
      }
    }
    requests.push({ method: protocolRequest.method, url: request.url ?? '', headers: protocolRequest.headers, rawBody, body, problems: validation.problems, stream: validation.stream });
    const current = behaviour;
    if (current.dropBeforeHeaders) {
      request.socket.destroy();
      return;
    }
    if (current.delayMs > 0) await sleep(current.delayMs);
    const failing = current.status !== null && (current.failCount === null || current.failCount > 0);
    if (failing && current.failCount !== null) behaviour = { ...behaviour, failCount: current.failCount - 1 };
    if (failing || validation.problems.length > 0) {
      const status = failing ? (current.status as number) : validation.authFailed ? (providerId === 'bedrock' ? 403 : 401) : 400;
      const reply = layout.protocol.error(status, current);
      response.writeHead(status, { ...reply.headers, ...(failing && current.retryAfter !== null ? { 'retry-after': current.retryAfter } : {}) });
      response.end(reply.body);
      return;
    }
    if (!validation.stream) {
      const json = JSON.stringify(layout.protocol.json(validation, protocolRequest, current));
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
      response.end(json);
      return;
    }
    const stream = layout.protocol.stream(validation, protocolRequest, current);
    response.writeHead(200, { 'content-type': stream.contentType, 'cache-control': 'no-cache' });
    response.flushHeaders();
    for (let index = 0; index < stream.chunks.length; index += 1) {
      if (current.dropAfterChunks === index) {
        response.socket?.destroy();
        return;
      }
      if (current.truncateAfterChunks === index) {
        response.end();
        return;
      }
      if (current.inStreamError && index === 1) {
        response.end(stream.errorChunk);
        return;
      }
      response.write(stream.chunks[index]);
      if (current.chunkDelayMs > 0) await sleep(current.chunkDelayMs);
    }
    response.end();
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
      else response.socket?.destroy();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    providerId,
    origin,
    baseUrl: origin + layout.basePath,
    requests,
    setBehaviour(next) {
      behaviour = { ...behaviour, ...next };
    },
    reset() {
      behaviour = { ...DEFAULT_BEHAVIOUR, ...options.behaviour };
      requests.length = 0;
    },
    connectionCount: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
