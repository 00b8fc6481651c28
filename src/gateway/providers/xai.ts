import type { ProviderAdapter } from '../contract.ts';
import { createOpenAiChatAdapter } from './shared/openai-chat.ts';

// xAI (Grok): OpenAI-compatible chat completions.
export const xai = createOpenAiChatAdapter({
  id: 'xai',
  displayName: 'xAI',
  defaultBaseUrl: 'https://api.x.ai/v1',
}) satisfies ProviderAdapter;
