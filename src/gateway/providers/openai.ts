import type { ProviderAdapter } from '../contract.ts';
import { createOpenAiChatAdapter } from './shared/openai-chat.ts';

// OpenAI Chat Completions. max_completion_tokens: max_tokens is rejected by reasoning models.
export const openai = createOpenAiChatAdapter({
  id: 'openai',
  displayName: 'OpenAI',
  defaultBaseUrl: 'https://api.openai.com/v1',
  maxTokensField: 'max_completion_tokens',
}) satisfies ProviderAdapter;
