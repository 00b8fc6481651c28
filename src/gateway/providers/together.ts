import type { ProviderAdapter } from '../contract.ts';
import { createOpenAiChatAdapter } from './shared/openai-chat.ts';

// Together AI: OpenAI-compatible chat completions (api.together.ai, the together-ai SDK's default host).
export const together = createOpenAiChatAdapter({
  id: 'together',
  displayName: 'Together AI',
  defaultBaseUrl: 'https://api.together.ai/v1',
  // Usage arrives in the last chunk; the together-ai SDK sends no stream_options.
  streamUsageOption: false,
}) satisfies ProviderAdapter;
