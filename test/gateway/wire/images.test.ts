// Images from OpenAI-style image_url parts, as each provider's API takes them.
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../../src/gateway/contract.ts';
import type { CompletionRequest, ProviderAdapter } from '../../../src/gateway/contract.ts';
import { anthropic } from '../../../src/gateway/providers/anthropic.ts';
import { bedrock } from '../../../src/gateway/providers/bedrock.ts';
import { cohere } from '../../../src/gateway/providers/cohere.ts';
import { gemini } from '../../../src/gateway/providers/gemini.ts';
import { openai } from '../../../src/gateway/providers/openai.ts';

const PNG = 'data:image/png;base64,iVBORw0KGgo=';
const request = (url: string): CompletionRequest => ({ model: 'm', messages: [{ role: 'user', content: 'What is this?', images: [{ url, detail: 'low' }] }], stream: false });
async function firstMessage(adapter: ProviderAdapter, url: string, key: 'messages' | 'contents' = 'messages'): Promise<Record<string, unknown>> {
  const body = JSON.parse((await adapter.buildRequest(request(url), { apiKey: adapter === bedrock ? 'AKID:SECRET' : 'k' })).body) as Record<string, Array<Record<string, unknown>>>;
  return body[key]?.[0] ?? {};
}

describe('images', () => {
  it('go to OpenAI as image_url parts after the text, detail kept', async () => {
    expect(await firstMessage(openai, 'https://example.com/a.png')).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } }],
    });
  });

  it('go to Cohere v2 as image_url parts', async () => {
    expect((await firstMessage(cohere, PNG)).content).toEqual([{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: PNG, detail: 'low' } }]);
  });

  it('go to Anthropic as image blocks with a base64 or URL source', async () => {
    expect((await firstMessage(anthropic, PNG)).content).toEqual([{ type: 'text', text: 'What is this?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }]);
    expect((await firstMessage(anthropic, 'https://example.com/a.png')).content).toEqual([{ type: 'text', text: 'What is this?' }, { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }]);
  });

  it('go to Gemini as inlineData and to Bedrock as image bytes', async () => {
    expect((await firstMessage(gemini, PNG, 'contents')).parts).toEqual([{ text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }]);
    expect((await firstMessage(bedrock, PNG)).content).toEqual([{ text: 'What is this?' }, { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } }]);
  });

  it.each([
    ['gemini', gemini],
    ['bedrock', bedrock],
  ] as const)('are refused by %s as a remote URL, before any call', async (_id, adapter) => {
    const error = await Promise.resolve()
      .then(() => adapter.buildRequest(request('https://example.com/a.png'), { apiKey: 'AKID:SECRET' }))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ code: 'bad_request', retryable: false, providerCode: 'image_url_not_supported' });
  });
});
