import type { ProviderAdapter } from '../contract.ts';
import { createOpenAiChatAdapter } from './shared/openai-chat.ts';

// Together AI: OpenAI-compatible chat completions.
export const together = createOpenAiChatAdapter({
  id: 'together',
  displayName: 'Together AI',
  defaultBaseUrl: 'https://api.together.xyz/v1',
}) satisfies ProviderAdapter;
