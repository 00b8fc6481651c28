// What a user of other LLM gateways expects from svc's completion endpoint: OpenAI-style content
// arrays, the built-in mock provider, an unpriced model marked as such, quota failover, and
// Gemini 3 thought signatures carried through the envelope.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { costUsd } from '../../../src/gateway/pricing/pricing.ts';
import { buildApp, type AppInstance } from '../../../src/http/build-app.ts';
import { loadConfig } from '../../../src/platform/config.ts';
import type { Services } from '../../../src/services.ts';
import { createTestServices } from '../../helpers/app.ts';
import { scriptedInvokers } from '../scripted-invokers.ts';

const script = scriptedInvokers();
let scripted: { services: Services; app: AppInstance };
let real: { services: Services; app: AppInstance };

async function start(invokers?: ReturnType<typeof scriptedInvokers>['invokers']) {
  const services = await createTestServices({
    services: {
      gateway: {
        timers: false,
        retryPolicy: { attemptsPerProvider: 2, baseDelayMs: 1, maxDelayMs: 20, totalBudgetMs: 2_000, attemptTimeoutMs: 1_000 },
        ...(invokers === undefined ? {} : { invokers, costUsd: (_provider: string, model: string) => (model === 'unpriced-model' ? null : 0.001) }),
      },
    },
  });
  const app = await buildApp(services.config, services);
  await app.ready();
  return { services, app };
}

// Two apps (scripted upstreams, real adapters): allow for a loaded machine when building them.
beforeAll(async () => {
  scripted = await start(script.invokers);
  real = await start();
}, 180_000);

afterAll(async () => {
  for (const context of [scripted, real]) {
    await context?.app.close();
    await context?.services.close();
  }
});

beforeEach(() => {
  script.calls.length = 0;
});

async function newOrg(context: { services: Services }, providers: string[]) {
  const { org, apiKey } = await context.services.accounts.createOrg({ name: `wire-${Math.random().toString(36).slice(2, 8)}` });
  for (const provider of providers) await context.services.accounts.providerKeys.set(org.id, provider, `sk-${provider}-key-000000000000`, null);
  return { orgId: org.id as string, headers: { authorization: `Bearer ${apiKey as string}` } };
}

const post = (context: { app: AppInstance }, headers: Record<string, string>, payload: Record<string, unknown>) =>
  context.app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload });

function sseData(payload: string): Array<Record<string, unknown>> {
  return payload
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

describe('OpenAI-style content arrays', () => {
  it('accepts text parts (joined with a newline) and null assistant content, and passes images to the provider', async () => {
    const { headers } = await newOrg(scripted, ['openai']);
    const response = await post(scripted, headers, {
      provider: 'openai',
      model: 'gpt-4o-mini',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Describe' }, { type: 'text', text: 'this picture.' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', name: 'look', arguments: '{}' }] },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'a cat' }] },
      ],
    });
    expect(response.statusCode).toBe(200);
    const sent = script.calls[0]!.request.messages;
    expect(sent[0]).toEqual({ role: 'user', content: 'Describe\nthis picture.', images: [{ url: 'https://example.com/cat.png', detail: 'low' }] });
    expect(sent[1]).toMatchObject({ role: 'assistant', content: '' });
    expect(sent[2]).toMatchObject({ role: 'tool', content: 'a cat' });
  });

  it.each([
    [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://10.0.0.1/x.png' } }] }, 'invalid_image_url'],
    [{ role: 'user', content: [{ type: 'image_url', image_url: 'file:///etc/passwd' }] }, 'invalid_image_url'],
    [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://example.com/x.png' } }] }, 'image_not_allowed'],
  ])('refuses a bad image part with 400 VALIDATION_FAILED naming the part (%#)', async (message, reason) => {
    const { headers } = await newOrg(scripted, ['openai']);
    const response = await post(scripted, headers, { provider: 'openai', model: 'gpt-4o-mini', messages: [message] });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'VALIDATION_FAILED', reason });
    expect(response.json().error.field).toMatch(/^body\.messages\[0\]\.content\[0\]\.image_url/);
    expect(script.calls).toHaveLength(0);
  });

  it('refuses an unknown part type with 400 VALIDATION_FAILED', async () => {
    const { headers } = await newOrg(scripted, ['openai']);
    const response = await post(scripted, headers, { provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }] });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('VALIDATION_FAILED');
  });

  it('answers 422 IMAGES_NOT_SUPPORTED, before any upstream call, when the provider takes no images', async () => {
    const { headers } = await newOrg(real, ['deepseek']);
    const image = { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } };
    const response = await post(real, headers, { provider: 'deepseek', model: 'deepseek-chat', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, image] }] });
    expect(response.statusCode).toBe(422);
    expect(response.json().error).toMatchObject({ code: 'IMAGES_NOT_SUPPORTED', provider: 'deepseek', reason: 'images_not_supported' });
  });

  it('answers 422 IMAGES_NOT_SUPPORTED for a remote image URL to a provider that takes inline bytes only', async () => {
    const { headers } = await newOrg(real, ['gemini']);
    const image = { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } };
    const response = await post(real, headers, { provider: 'gemini', model: 'gemini-2.5-flash', messages: [{ role: 'user', content: [image] }] });
    expect(response.statusCode).toBe(422);
    expect(response.json().error).toMatchObject({ code: 'IMAGES_NOT_SUPPORTED', reason: 'image_url_not_supported' });
  });
});

describe('the built-in mock provider', () => {
  it('answers a completion with no provider account', async () => {
    const { headers } = await newOrg(real, []);
    const response = await post(real, headers, { provider: 'mock', model: 'mock-small', messages: [{ role: 'user', content: 'hello there' }] });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ provider: 'mock', model: 'mock-small', content: 'mock: hello there', finish_reason: 'stop', cost_usd: 0 });
  });

  it('streams deltas, a final event and [DONE]', async () => {
    const { headers } = await newOrg(real, []);
    const response = await post(real, headers, { provider: 'mock', model: 'mock-small', stream: true, messages: [{ role: 'user', content: 'one two three' }] });
    expect(response.statusCode).toBe(200);
    const chunks = sseData(response.payload);
    expect(chunks.filter((chunk) => 'delta' in chunk).map((chunk) => chunk.delta).join('')).toBe('mock: one two three');
    expect(chunks.at(-1)).toMatchObject({ provider: 'mock', finish_reason: 'stop', done: true });
    expect(response.payload.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('fails over from mock to mock_backup when asked to fail', async () => {
    const { headers } = await newOrg(real, []);
    const routing = await real.app.inject({ method: 'PUT', url: '/api/v1/gateway/routing', headers, payload: { strategy: 'failover', providers: ['mock', 'mock_backup'] } });
    expect(routing.statusCode).toBeLessThan(300);
    const response = await post(real, headers, { provider: 'auto', model: 'mock-small', messages: [{ role: 'user', content: 'hi [mock:fail]' }] });
    expect(response.statusCode).toBe(200);
    expect(response.json().provider).toBe('mock_backup');
  });

  it('calls the first tool when asked to', async () => {
    const { headers } = await newOrg(real, []);
    const response = await post(real, headers, { provider: 'mock', model: 'mock-small', tools: [{ name: 'lookup', parameters: { type: 'object' } }], messages: [{ role: 'user', content: '[mock:tool]' }] });
    expect(response.json()).toMatchObject({ finish_reason: 'tool_calls', tool_calls: [{ name: 'lookup', arguments: '{}' }] });
  });

  it('is off in production unless GATEWAY_MOCK_PROVIDER enables it', () => {
    const production = { ENVIRONMENT: 'production', DATABASE_URL: 'pglite:memory', REDIS_URL: 'memory:', SECRET_KEY: 'x'.repeat(40), API_ENCRYPTION_KEY: 'y'.repeat(40) };
    expect(loadConfig(production).mockProvider).toBe(false);
    expect(loadConfig(production).providerEnvKeys.mock).toBeUndefined();
    const enabled = loadConfig({ ...production, GATEWAY_MOCK_PROVIDER: 'true' });
    expect(enabled.mockProvider).toBe(true);
    expect(Object.keys(enabled.providerEnvKeys)).toEqual(expect.arrayContaining(['mock', 'mock_backup']));
  });

  it('cannot be given a stored key through the API', async () => {
    const { headers } = await newOrg(real, []);
    const response = await real.app.inject({ method: 'PUT', url: '/api/v1/providers/mock/key', headers, payload: { key: 'anything-0000000000' } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('VALIDATION_FAILED');
  });
});

describe('cost of a model without a listed price', () => {
  it('is null in the response instead of a silent fallback price', async () => {
    const { headers } = await newOrg(scripted, ['openai']);
    const unpriced = await post(scripted, headers, { provider: 'openai', model: 'unpriced-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(unpriced.json().cost_usd).toBeNull();
    const streamed = await post(scripted, headers, { provider: 'openai', model: 'unpriced-model', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(sseData(streamed.payload).at(-1)).toMatchObject({ done: true, cost_usd: null });
    const priced = await post(scripted, headers, { provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(priced.json().cost_usd).toBe(0.001);
  });

  it('comes from the price table as null for an unlisted model or provider, and 0 for self-hosted ones', () => {
    const usage = { promptTokens: 1000, completionTokens: 1000, totalTokens: 2000 };
    expect(costUsd('openai', 'gpt-4o-mini', usage)).toBeGreaterThan(0);
    expect(costUsd('openai', 'gpt-99-turbo', usage)).toBeNull();
    expect(costUsd('openai_compatible', 'local-model', usage)).toBeNull();
    expect(costUsd('ollama', 'llama3.2', usage)).toBe(0);
  });
});

describe('an exhausted upstream quota', () => {
  it('fails over to the next provider at once, without retrying the exhausted one', async () => {
    const { headers } = await newOrg(scripted, ['openai', 'groq']);
    await scripted.app.inject({ method: 'PUT', url: '/api/v1/gateway/routing', headers, payload: { strategy: 'failover', providers: ['openai', 'groq'] } });
    script.set('openai', { kind: 'fail', code: 'quota_exceeded', status: 429 });
    try {
      const response = await post(scripted, headers, { provider: 'auto', model: 'fast', messages: [{ role: 'user', content: 'hi' }] });
      expect(response.statusCode).toBe(200);
      expect(response.json().provider).toBe('groq');
      expect(script.calls.map((call) => call.provider)).toEqual(['openai', 'groq']);
    } finally {
      script.set('openai', { kind: 'ok' });
    }
  });

  it('answers 402 UPSTREAM_QUOTA_EXCEEDED without Retry-After when no other provider can serve', async () => {
    const { headers } = await newOrg(scripted, ['openai']);
    script.set('openai', { kind: 'fail', code: 'quota_exceeded', status: 429 });
    try {
      const response = await post(scripted, headers, { provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
      expect(response.statusCode).toBe(402);
      expect(response.json().error.code).toBe('UPSTREAM_QUOTA_EXCEEDED');
      expect(response.headers['retry-after']).toBeUndefined();
      expect(script.calls).toHaveLength(1);
    } finally {
      script.set('openai', { kind: 'ok' });
    }
  });
});

describe('Gemini 3 thought signatures in the envelope', () => {
  it('accepts thought_signature on a replayed tool call and hands it to the provider', async () => {
    const { headers } = await newOrg(scripted, ['gemini']);
    const response = await post(scripted, headers, {
      provider: 'gemini',
      model: 'gemini-3-pro-preview',
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', name: 'get_weather', arguments: '{}', thought_signature: 'c2lnLTE=' }] },
        { role: 'tool', tool_call_id: 'call_0', content: '{"c":18}' },
      ],
    });
    expect(response.statusCode).toBe(200);
    expect(script.calls[0]!.request.messages[1]!.tool_calls?.[0]?.thought_signature).toBe('c2lnLTE=');
  });
});
