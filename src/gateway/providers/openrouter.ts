import type { ProviderAdapter } from '../contract.ts';
import { createOpenAiChatAdapter } from './shared/openai-chat.ts';

// OpenRouter: OpenAI-compatible; model ids are vendor/model (e.g. anthropic/claude-sonnet-4).
export const openrouter = createOpenAiChatAdapter({
  id: 'openrouter',
  displayName: 'OpenRouter',
  defaultBaseUrl: 'https://openrouter.ai/api/v1',
}) satisfies ProviderAdapter;
