import { createHook } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_CREDENTIALS, fakeTarget, startFakeProvider } from '../../test/fakes/providers/index.ts';
import type { FakeProvider } from '../../test/fakes/providers/index.ts';
import { UpstreamError } from './contract.ts';
import type { CompletionRequest, StreamEvent } from './contract.ts';
import { closeUpstreamConnections } from './http-client.ts';
import { invokeCompletion, invokeStream, isProviderId, providerIds, providers, remoteProviderIds } from './registry.ts';
import type { RemoteProviderId as ProviderId } from './registry.ts';
import { ClientCancel } from './cancel.ts';

const MODELS: Record<ProviderId, string> = {
  openai: 'gpt-4o-mini',
  azure_openai: 'my-gpt4o-deployment',
  anthropic: 'claude-sonnet-4-5',
  gemini: 'gemini-2.5-flash',
  vertex_ai: 'gemini-2.5-pro',
  bedrock: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
  mistral: 'mistral-large-latest',
  cohere: 'command-r-plus-08-2024',
  groq: 'llama-3.3-70b-versatile',
  together: 'meta-llama/Llama-3.3-70B-Instruct-Turbo',
  fireworks: 'accounts/fireworks/models/llama-v3p1-8b-instruct',
  deepseek: 'deepseek-chat',
  xai: 'grok-3-mini',
  openrouter: 'anthropic/claude-3.5-haiku',
  ollama: 'llama3.2',
  openai_compatible: 'local-model',
};

function requestFor(providerId: ProviderId, overrides: Partial<CompletionRequest> = {}): CompletionRequest {
  return {
    model: MODELS[providerId],
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Say hello.' },
    ],
    max_tokens: 64,
    temperature: 0.2,
    stream: false,
    ...overrides,
  };
}

async function collect(iterable: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

async function upstreamErrorOf(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof UpstreamError) return error;
    throw error;
  }
  throw new Error('expected an UpstreamError');
}

const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('the registry', () => {
  it('lists the 16 provider ids and each adapter is registered under its own id', () => {
    expect(remoteProviderIds).toHaveLength(16);
    for (const id of providerIds) expect(providers[id].id).toBe(id);
    expect(isProviderId('anthropic')).toBe(true);
    expect(isProviderId('toString')).toBe(false);
  });
});

describe.each(remoteProviderIds)('provider %s against its fake upstream', (providerId) => {
  let fake: FakeProvider;

  beforeAll(async () => {
    fake = await startFakeProvider(providerId);
  });
  afterAll(async () => {
    await fake.close();
  });

  function target() {
    return fakeTarget(providerId, fake);
  }

  function lastRequestProblems(): string[] {
    return fake.requests.at(-1)?.problems ?? ['no request received'];
  }

  it('returns content, finish reason, usage and model of a non-streamed completion', async () => {
    fake.reset();
    fake.setBehaviour({ content: 'Hi there, friend.', usage: { prompt: 20, completion: 7 } });
    const result = await invokeCompletion(providerId, requestFor(providerId), target());
    expect(lastRequestProblems()).toEqual([]);
    expect(result.content).toBe('Hi there, friend.');
    expect(result.finishReason).toBe('stop');
    expect(result.usage?.promptTokens).toBe(20);
    expect(result.usage?.completionTokens).toBe(7);
    expect(result.usage?.totalTokens).toBe(27);
    expect(result.model).toBe(MODELS[providerId]);
  });

  it('maps a max-tokens stop to the length finish reason', async () => {
    fake.reset();
    fake.setBehaviour({ finish: 'length' });
    const result = await invokeCompletion(providerId, requestFor(providerId), target());
    expect(result.finishReason).toBe('length');
  });

  it('streams deltas that concatenate to the content and ends with one done event carrying usage', async () => {
    fake.reset();
    fake.setBehaviour({ content: 'one two three four', usage: { prompt: 11, completion: 4 } });
    const events = await collect(await invokeStream(providerId, requestFor(providerId, { stream: true }), target()));
    expect(lastRequestProblems()).toEqual([]);
    expect(fake.requests.at(-1)?.stream).toBe(true);
    const text = events.flatMap((event) => (event.type === 'delta' ? [event.text] : [])).join('');
    expect(text).toBe('one two three four');
    expect(events.filter((event) => event.type === 'delta').length).toBeGreaterThan(1);
    const last = events.at(-1);
    expect(last?.type).toBe('done');
    if (last?.type !== 'done') return;
    expect(last.finishReason).toBe('stop');
    expect(last.usage).toMatchObject({ promptTokens: 11, completionTokens: 4, totalTokens: 15 });
    if (last.model !== undefined) expect(last.model).toBe(MODELS[providerId]);
  });

  it('returns the tool call the model asked for, non-streamed and streamed', async () => {
    fake.reset();
    fake.setBehaviour({ toolCall: { id: 'call_abc', name: 'get_weather', arguments: '{"city":"Paris"}' }, finish: 'tool_calls' });
    const request = requestFor(providerId, { tools: [WEATHER_TOOL] });
    const result = await invokeCompletion(providerId, request, target());
    expect(lastRequestProblems()).toEqual([]);
    expect(result.finishReason).toBe('tool_calls');
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls?.[0]?.name).toBe('get_weather');
    expect(JSON.parse(result.toolCalls?.[0]?.arguments ?? '')).toEqual({ city: 'Paris' });

    const events = await collect(await invokeStream(providerId, { ...request, stream: true }, target()));
    expect(lastRequestProblems()).toEqual([]);
    const deltas = events.filter((event) => event.type === 'tool_call_delta');
    expect(deltas[0]).toMatchObject({ index: 0, name: 'get_weather' });
    const args = deltas.map((event) => (event.type === 'tool_call_delta' ? event.argumentsDelta : '')).join('');
    expect(JSON.parse(args)).toEqual({ city: 'Paris' });
    expect(events.at(-1)).toMatchObject({ type: 'done', finishReason: 'tool_calls' });
  });

  it('replays a tool conversation (assistant tool call, then tool result) in a shape the upstream accepts', async () => {
    fake.reset();
    const request = requestFor(providerId, {
      tools: [WEATHER_TOOL],
      messages: [
        { role: 'system', content: 'Use tools.' },
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temperature_c":18}' },
      ],
    });
    const result = await invokeCompletion(providerId, request, target());
    expect(lastRequestProblems()).toEqual([]);
    expect(result.content.length).toBeGreaterThan(0);
  });

  it('maps 429 with Retry-After to a retryable rate_limited error with retryAfterMs', async () => {
    fake.reset();
    fake.setBehaviour({ status: 429, retryAfter: '2' });
    const error = await upstreamErrorOf(invokeCompletion(providerId, requestFor(providerId), target()));
    expect(error.code).toBe('rate_limited');
    expect(error.status).toBe(429);
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBe(2000);
    expect(error.provider).toBe(providerId);
  });

  it('maps 400 to a non-retryable bad_request error', async () => {
    fake.reset();
    fake.setBehaviour({ status: 400 });
    const error = await upstreamErrorOf(invokeCompletion(providerId, requestFor(providerId), target()));
    expect(error.code).toBe('bad_request');
    expect(error.retryable).toBe(false);
  });

  it('maps 500 to a retryable server error, also when the stream was requested', async () => {
    fake.reset();
    fake.setBehaviour({ status: 500 });
    const error = await upstreamErrorOf(invokeCompletion(providerId, requestFor(providerId), target()));
    expect(error.code).toBe('server');
    expect(error.retryable).toBe(true);
    const streamError = await upstreamErrorOf(invokeStream(providerId, requestFor(providerId, { stream: true }), target()));
    expect(streamError.code).toBe('server');
    expect(streamError.retryable).toBe(true);
  });

  it('maps a wrong credential to a non-retryable auth error that does not carry the key', async () => {
    fake.reset();
    const wrong =
      providerId === 'bedrock'
        ? { ...target(), apiKey: `${FAKE_CREDENTIALS.bedrock.accessKeyId}:wrong-secret` }
        : providerId === 'vertex_ai'
          ? { ...target(), apiKey: 'fake-project:us-central1:wrong-token' }
          : { ...target(), apiKey: 'sk-wrong-key-999' };
    const error = await upstreamErrorOf(invokeCompletion(providerId, requestFor(providerId), wrong));
    expect(error.code).toBe('auth');
    expect(error.retryable).toBe(false);
    const serialized = JSON.stringify({ message: error.message, url: error.url, providerCode: error.providerCode });
    expect(serialized).not.toContain('wrong');
  });

  it('throws a network error when the connection drops mid-stream, never a silent truncation', async () => {
    fake.reset();
    fake.setBehaviour({ content: 'a b c d e f', dropAfterChunks: 3 });
    const stream = await invokeStream(providerId, requestFor(providerId, { stream: true }), target());
    const seen: StreamEvent[] = [];
    const error = await upstreamErrorOf(
      (async () => {
        for await (const event of stream) seen.push(event);
      })(),
    );
    expect(error.code).toBe('network');
    expect(seen.some((event) => event.type === 'done')).toBe(false);
  });

  it('throws when the upstream ends the stream cleanly but before its terminal event', async () => {
    fake.reset();
    fake.setBehaviour({ content: 'a b c d e f', truncateAfterChunks: 3 });
    const stream = await invokeStream(providerId, requestFor(providerId, { stream: true }), target());
    const error = await upstreamErrorOf(collect(stream));
    expect(error.code).toBe('network');
    expect(error.providerCode).toBe('stream_truncated');
  });

  it('throws the in-stream error event the provider sends instead of finishing', async () => {
    fake.reset();
    fake.setBehaviour({ inStreamError: true });
    const stream = await invokeStream(providerId, requestFor(providerId, { stream: true }), target());
    const error = await upstreamErrorOf(collect(stream));
    expect(error).toBeInstanceOf(UpstreamError);
  });
});

describe('transport behaviour', () => {
  let fake: FakeProvider;

  beforeAll(async () => {
    await closeUpstreamConnections();
    fake = await startFakeProvider('openai');
  });
  afterAll(async () => {
    await fake.close();
  });

  it('reuses one pooled keep-alive connection for sequential calls, streamed or not', async () => {
    fake.reset();
    const round = async () => {
      await invokeCompletion('openai', requestFor('openai'), fakeTarget('openai', fake));
      await collect(await invokeStream('openai', requestFor('openai', { stream: true }), fakeTarget('openai', fake)));
    };
    await round();
    const warm = fake.connectionCount();
    expect(warm).toBeLessThanOrEqual(2);
    for (let index = 0; index < 10; index += 1) await round();
    expect(fake.requests).toHaveLength(22);
    expect(fake.connectionCount()).toBe(warm);
  });

  it('times out with a retryable timeout error when the upstream is slower than timeoutMs', async () => {
    fake.reset();
    // The transport's timers have about one second of resolution (undici's timer wheel).
    fake.setBehaviour({ delayMs: 4_000 });
    const started = Date.now();
    const error = await upstreamErrorOf(invokeCompletion('openai', requestFor('openai'), fakeTarget('openai', fake), { timeoutMs: 1_000 }));
    expect(error.code).toBe('timeout');
    expect(error.retryable).toBe(true);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('gives up a non-streamed call at once when the caller aborts while the upstream is still working', async () => {
    fake.reset();
    fake.setBehaviour({ delayMs: 4_000 });
    const controller = new AbortController();
    const started = Date.now();
    const pending = upstreamErrorOf(invokeCompletion('openai', requestFor('openai'), fakeTarget('openai', fake), { signal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    const error = await pending;
    expect(error.providerCode).toBe('aborted');
    expect(error.retryable).toBe(false);
    expect(Date.now() - started).toBeLessThan(2_000);
    // The route's cheap ClientCancel works the same way.
    fake.reset();
    fake.setBehaviour({ delayMs: 4_000 });
    const cancel = new ClientCancel();
    const viaCancel = upstreamErrorOf(invokeCompletion('openai', requestFor('openai'), fakeTarget('openai', fake), { signal: cancel }));
    setTimeout(() => cancel.abort(new Error('client disconnected')), 100);
    expect((await viaCancel).providerCode).toBe('aborted');
    expect(Date.now() - started).toBeLessThan(3_000);
    // An already aborted signal never sends anything.
    fake.reset();
    const early = await upstreamErrorOf(invokeCompletion('openai', requestFor('openai'), fakeTarget('openai', fake), { signal: AbortSignal.abort() }));
    expect(early.providerCode).toBe('aborted');
    expect(fake.requests).toHaveLength(0);
  });

  it('reads a JSON answer that arrives in many small chunks and keeps multi-byte characters whole', async () => {
    fake.reset();
    const content = 'naïve café — 日本語 '.repeat(30_000);
    fake.setBehaviour({ content });
    const result = await invokeCompletion('openai', requestFor('openai'), fakeTarget('openai', fake));
    expect(result.content).toBe(content);
  });

  it('rejects invokeStream before any event when the upstream drops the connection before headers', async () => {
    fake.reset();
    fake.setBehaviour({ dropBeforeHeaders: true });
    const error = await upstreamErrorOf(invokeStream('openai', requestFor('openai', { stream: true }), fakeTarget('openai', fake)));
    expect(error.code).toBe('network');
    expect(error.retryable).toBe(true);
  });

  it('refuses at connect time a host name that resolves to a private address when the call is public-only (DNS rebinding)', async () => {
    fake.reset();
    const viaName = { ...fakeTarget('openai', fake), baseUrl: fake.baseUrl.replace('127.0.0.1', 'localhost') };
    const error = await upstreamErrorOf(invokeCompletion('openai', requestFor('openai'), viaName, { publicOnly: true }));
    expect(error.providerCode).toBe('target_forbidden');
    expect(error.retryable).toBe(false);
    expect(fake.requests).toHaveLength(0);
    // The same call without the guard (operator-configured or ALLOW_PRIVATE_TARGETS) goes through.
    await invokeCompletion('openai', requestFor('openai'), viaName);
    expect(fake.requests).toHaveLength(1);
  });

  it('fails with a network error when nothing listens at the base URL', async () => {
    const error = await upstreamErrorOf(invokeCompletion('openai', requestFor('openai'), { apiKey: 'k', baseUrl: 'http://127.0.0.1:1/v1' }));
    expect(error.code).toBe('network');
    expect(error.url).toBe('http://127.0.0.1:1/v1/chat/completions');
  });

  it('aborts the upstream stream when the caller aborts after the first chunk', async () => {
    fake.reset();
    fake.setBehaviour({ content: 'a b c d e f g h', chunkDelayMs: 50 });
    const controller = new AbortController();
    const stream = await invokeStream('openai', requestFor('openai', { stream: true }), fakeTarget('openai', fake), { signal: controller.signal });
    const error = await upstreamErrorOf(
      (async () => {
        for await (const event of stream) if (event.type === 'delta') controller.abort();
      })(),
    );
    expect(error.retryable).toBe(false);
  });

  it('stops the idle clock of a stream read up to its done event, without the consumer asking for more', async () => {
    fake.reset();
    fake.setBehaviour({ content: 'a b c' });
    // The stream's idle timer, told apart from every other timer by its unusual period.
    const idleTimeoutMs = 43_210;
    const running = new Set<number>();
    const hook = createHook({
      init(id, type, _trigger, resource) {
        if (type === 'Timeout' && (resource as { _idleTimeout?: number })._idleTimeout === idleTimeoutMs) running.add(id);
      },
      destroy(id) {
        running.delete(id);
      },
    }).enable();
    try {
      for (let index = 0; index < 3; index += 1) {
        const stream = (await invokeStream('openai', requestFor('openai', { stream: true }), fakeTarget('openai', fake), { idleTimeoutMs }))[Symbol.asyncIterator]();
        // As the relay reads a stream: up to its done event, then no further call.
        for (let next = await stream.next(); next.done !== true && next.value.type !== 'done'; next = await stream.next());
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(running.size).toBe(0);
    } finally {
      hook.disable();
    }
  });

  it('throws a timeout when the stream stays silent longer than idleTimeoutMs', async () => {
    fake.reset();
    fake.setBehaviour({ content: 'a b c', chunkDelayMs: 400 });
    const stream = await invokeStream('openai', requestFor('openai', { stream: true }), fakeTarget('openai', fake), { idleTimeoutMs: 100 });
    const error = await upstreamErrorOf(collect(stream));
    expect(error.code).toBe('timeout');
  });
});

describe('idle timeout and slow consumers', () => {
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFakeProvider('openai');
  });
  afterAll(async () => {
    await fake.close();
  });

  it('delivers a long stream whole, in order, to a consumer that falls behind the upstream (the upstream is paused and resumed)', async () => {
    fake.reset();
    // ~3,000 deltas, several hundred KB of events: far past the body's 64 KiB queue while the consumer waits.
    const words = Array.from({ length: 3_000 }, (_, index) => `word${index}`);
    fake.setBehaviour({ content: words.join(' ') });
    const stream = await invokeStream('openai', requestFor('openai', { stream: true }), fakeTarget('openai', fake), { idleTimeoutMs: 5_000 });
    let text = '';
    let first = true;
    for await (const event of stream) {
      if (event.type !== 'delta') continue;
      text += event.text;
      if (first) {
        first = false;
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    }
    expect(text).toBe(words.join(' '));
  });

  it('does not count the time a slow consumer spends between chunks against the upstream idle timeout', async () => {
    fake.reset();
    fake.setBehaviour({ content: 'a b c' });
    const stream = await invokeStream('openai', requestFor('openai', { stream: true }), fakeTarget('openai', fake), { idleTimeoutMs: 100 });
    const events: StreamEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(events.at(-1)?.type).toBe('done');
  });
});
