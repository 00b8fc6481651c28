import type { ProviderAdapter } from '../contract.ts';
import { createOpenAiChatAdapter } from './shared/openai-chat.ts';

// DeepSeek: OpenAI-compatible; cache hits reported as usage.prompt_cache_hit_tokens (handled by the base).
export const deepseek = createOpenAiChatAdapter({
  id: 'deepseek',
  displayName: 'DeepSeek',
  defaultBaseUrl: 'https://api.deepseek.com',
  // DeepSeek's chat API takes text only.
  images: 'none',
}) satisfies ProviderAdapter;
