import { describe, expect, it } from 'vitest';
import { SvcError } from '../../platform/errors.ts';
import { anthropicStreamEncoder, messagesToCompletionBody } from './anthropic.ts';
import { chooseProvider, type ModelContext } from './models.ts';
import { chatToCompletionBody, openAiStreamEncoder } from './openai.ts';

const context = (overrides: Partial<ModelContext> = {}): ModelContext => ({ header: undefined, hasRouting: false, servable: async () => ['openai', 'anthropic', 'mock_backup'], ...overrides });

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as SvcError).code;
  }
  return 'none';
}

describe('which provider a compatible request names', () => {
  it('reads provider/model from the first segment only, so vendors with slashes in their ids work', async () => {
    expect(await chooseProvider('openai/gpt-4o-mini', context())).toEqual({ provider: 'openai', model: 'gpt-4o-mini' });
    expect(await chooseProvider('openrouter/openai/gpt-4o', context())).toEqual({ provider: 'openrouter', model: 'openai/gpt-4o' });
    expect(await chooseProvider('auto/fast', context({ hasRouting: true }))).toEqual({ provider: 'auto', model: 'fast' });
  });

  it('lets X-SVC-Provider win and drops its own prefix from the model', async () => {
    expect(await chooseProvider('meta-llama/Llama-3.3-70B-Instruct-Turbo', context({ header: 'together' }))).toEqual({ provider: 'together', model: 'meta-llama/Llama-3.3-70B-Instruct-Turbo' });
    expect(await chooseProvider('groq/llama-3.1-8b-instant', context({ header: 'groq' }))).toEqual({ provider: 'groq', model: 'llama-3.1-8b-instant' });
    expect(await codeOf(chooseProvider('gpt-4o', context({ header: 'nosuch' })))).toBe('VALIDATION_FAILED');
  });

  it('sends a bare class member through routing when the org has it, else to the provider listing it', async () => {
    expect(await chooseProvider('gpt-4o-mini', context({ hasRouting: true }))).toEqual({ provider: 'auto', model: 'gpt-4o-mini' });
    expect(await chooseProvider('gpt-4o-mini', context())).toEqual({ provider: 'openai', model: 'gpt-4o-mini' });
    expect(await chooseProvider('claude-3-5-haiku-20241022', context())).toEqual({ provider: 'anthropic', model: 'claude-3-5-haiku-20241022' });
  });

  it('prefers, among providers listing a bare model, one the org has a key for', async () => {
    expect(await chooseProvider('mock-small', context())).toEqual({ provider: 'mock_backup', model: 'mock-small' });
    expect(await chooseProvider('mock-small', context({ servable: async () => [] }))).toEqual({ provider: 'mock', model: 'mock-small' });
  });

  it('answers MODEL_NOT_FOUND for a model nothing lists when the org has no routing, and routes it when it has', async () => {
    expect(await codeOf(chooseProvider('no-such-model', context()))).toBe('MODEL_NOT_FOUND');
    expect(await codeOf(chooseProvider('nosuch/model', context()))).toBe('MODEL_NOT_FOUND');
    expect(await chooseProvider('no-such-model', context({ hasRouting: true }))).toEqual({ provider: 'auto', model: 'no-such-model' });
  });
});

describe('Anthropic requests and streams', () => {
  it('puts tool results before the user turn’s own text, and assistant tool_use blocks in tool_calls', () => {
    const body = messagesToCompletionBody(
      {
        model: 'x',
        max_tokens: 10,
        system: [{ type: 'text', text: 'Be brief.' }],
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 't1', name: 'get_weather', input: { city: 'Paris' } }] },
          { role: 'user', content: [{ type: 'text', text: 'And then?' }, { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'sunny' }], is_error: false }] },
        ],
      },
      { provider: 'anthropic', model: 'claude-3-5-haiku-latest' },
    );
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 't1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
      { role: 'tool', tool_call_id: 't1', content: 'sunny' },
      { role: 'user', content: [{ type: 'text', text: 'And then?' }] },
    ]);
  });

  it('refuses a tool_choice that forces a call', () => {
    expect(() => messagesToCompletionBody({ model: 'x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], tool_choice: { type: 'any' } }, { provider: 'anthropic', model: 'x' })).toThrow(SvcError);
  });

  it('closes the text block before a tool_use block opens, and numbers the blocks in order', () => {
    const encoder = anthropicStreamEncoder('r1', 'claude');
    const wire =
      encoder.delta('Let me check.') +
      encoder.toolCall({ index: 0, id: 't1', name: 'get_weather', argumentsDelta: '{"city":' }) +
      encoder.toolCall({ index: 0, argumentsDelta: '"Paris"}' }) +
      encoder.end({ provider: 'anthropic', model: 'claude', finishReason: 'tool_calls', usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 }, costUsd: 0, latencyMs: 1, verification: null, responseFilter: null });
    const events = wire
      .split('\n\n')
      .filter((block) => block !== '')
      .map((block) => JSON.parse(block.split('\n')[1]!.slice(6)) as { type: string; index?: number; delta?: { stop_reason?: string } });
    expect(events.map((event) => `${event.type}${event.index === undefined ? '' : `:${event.index}`}`)).toEqual([
      'message_start',
      'content_block_start:0',
      'content_block_delta:0',
      'content_block_stop:0',
      'content_block_start:1',
      'content_block_delta:1',
      'content_block_delta:1',
      'content_block_stop:1',
      'message_delta',
      'message_stop',
    ]);
    expect(events.at(-2)!.delta!.stop_reason).toBe('tool_use');
  });
});

describe('OpenAI streams', () => {
  it('opens with the assistant role even when the first event is a tool call, and maps finish reasons OpenAI lacks to stop', () => {
    const encoder = openAiStreamEncoder('r1', 'gpt', false);
    const wire =
      encoder.toolCall({ index: 0, id: 'c1', name: 'f', argumentsDelta: '{}' }) +
      encoder.end({ provider: 'openai', model: 'gpt', finishReason: 'other', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, costUsd: 0, latencyMs: 1, verification: null, responseFilter: null });
    const lines = wire.split('\n\n').filter((line) => line !== '');
    expect(lines.at(-1)).toBe('data: [DONE]');
    const chunks = lines.slice(0, -1).map((line) => JSON.parse(line.slice(6)) as { choices: Array<{ delta: Record<string, unknown>; finish_reason: string | null }> });
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    expect(chunks[1]!.choices[0]!.delta).toEqual({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] });
    expect(chunks[2]!.choices[0]!.finish_reason).toBe('stop');
  });
});

describe('the end user a compatible request names (the T5 baseline\'s subject)', () => {
  const choice = { provider: 'openai', model: 'gpt-4o-mini' };

  it('carries OpenAI\'s user and Anthropic\'s metadata.user_id into the completion, and ignores an empty or missing one', () => {
    expect(chatToCompletionBody({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], user: 'user-123' } as Parameters<typeof chatToCompletionBody>[0], choice).user).toBe('user-123');
    expect(chatToCompletionBody({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], user: '' } as Parameters<typeof chatToCompletionBody>[0], choice).user).toBeUndefined();
    const anthropic = { provider: 'anthropic', model: 'claude-sonnet-4-5' };
    expect(messagesToCompletionBody({ model: 'x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], metadata: { user_id: 'user-456' } } as Parameters<typeof messagesToCompletionBody>[0], anthropic).user).toBe('user-456');
    expect(messagesToCompletionBody({ model: 'x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, anthropic).user).toBeUndefined();
  });
});
