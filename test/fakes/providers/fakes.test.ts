import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { bedrock } from '../../../src/gateway/providers/bedrock.ts';
import { FAKE_CREDENTIALS, fakeTarget, startFakeProvider, startFastOpenAiFake } from './index.ts';
import type { FakeProvider } from './index.ts';

const CHAT = { model: 'anthropic.claude-3-haiku-20240307-v1:0', messages: [{ role: 'user' as const, content: 'hi' }], stream: false };

describe('the Bedrock fake', () => {
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFakeProvider('bedrock');
  });
  afterAll(async () => {
    await fake.close();
  });

  async function send(mutate: (upstream: { url: string; headers: Record<string, string>; body: string }) => void, region: string = FAKE_CREDENTIALS.bedrock.region) {
    const upstream = await bedrock.buildRequest(CHAT, { ...fakeTarget('bedrock', fake), extra: { region } });
    mutate(upstream);
    const response = await request(upstream.url, { method: 'POST', headers: upstream.headers, body: upstream.body });
    await response.body.text();
    return { status: response.statusCode, problems: fake.requests.at(-1)?.problems ?? [] };
  }

  it('accepts a correctly signed request', async () => {
    expect(await send(() => undefined)).toEqual({ status: 200, problems: [] });
  });

  it('rejects a body changed after signing', async () => {
    const result = await send((upstream) => {
      upstream.body = upstream.body.replace('hi', 'ho');
    });
    expect(result.status).toBe(403);
    expect(result.problems.length).toBeGreaterThan(0);
  });

  it('rejects a signature made for another region or with a tampered signature', async () => {
    expect((await send(() => undefined, 'eu-west-1')).status).toBe(403);
    const tampered = await send((upstream) => {
      upstream.headers.authorization = (upstream.headers.authorization ?? '').replace(/Signature=([0-9a-f])/, (_, digit: string) => `Signature=${digit === '0' ? '1' : '0'}`);
    });
    expect(tampered.status).toBe(403);
  });

  it('rejects an unsigned request', async () => {
    expect((await send((upstream) => delete upstream.headers.authorization)).status).toBe(403);
  });
});

describe('the other fakes validate the wire contract', () => {
  it('the Gemini fake rejects a key sent in the URL instead of the header', async () => {
    const fake = await startFakeProvider('gemini');
    const response = await request(`${fake.baseUrl}/models/gemini-2.5-flash:generateContent?key=${FAKE_CREDENTIALS.default}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    await response.body.text();
    expect(response.statusCode).toBe(401);
    expect(fake.requests[0]?.problems).toContain('API key sent in the URL');
    await fake.close();
  });

  it('the Anthropic fake rejects a system role inside messages and a missing max_tokens', async () => {
    const fake = await startFakeProvider('anthropic');
    const response = await request(`${fake.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': FAKE_CREDENTIALS.default, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude', messages: [{ role: 'system', content: 'x' }, { role: 'user', content: 'hi' }] }),
    });
    const body = JSON.parse(await response.body.text()) as { error: { type: string } };
    expect(response.statusCode).toBe(400);
    expect(body.error.type).toBe('invalid_request_error');
    expect(fake.requests[0]?.problems).toEqual(expect.arrayContaining(['max_tokens missing', 'message role must be user or assistant']));
    await fake.close();
  });

  it('the Mistral fake rejects fields Mistral does not know', async () => {
    const fake = await startFakeProvider('mistral');
    const response = await request(`${fake.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${FAKE_CREDENTIALS.default}` },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } }),
    });
    await response.body.text();
    expect(response.statusCode).toBe(400);
    await fake.close();
  });

  it('the fast OpenAI fake answers JSON and SSE ending with [DONE]', async () => {
    const fake = await startFastOpenAiFake({ streamChunks: 3 });
    const json = await request(`${fake.baseUrl}/chat/completions`, { method: 'POST', body: '{"model":"m","messages":[]}' });
    expect((JSON.parse(await json.body.text()) as { object: string }).object).toBe('chat.completion');
    const stream = await request(`${fake.baseUrl}/chat/completions`, { method: 'POST', body: '{"model":"m","stream":true,"messages":[]}' });
    expect(stream.headers['content-type']).toBe('text/event-stream');
    expect((await stream.body.text()).trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(fake.requestCount()).toBe(2);
    await fake.close();
  });
});
