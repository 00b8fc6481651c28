import type { ProviderAdapter } from '../contract.ts';
import { createOpenAiChatAdapter } from './shared/openai-chat.ts';

// Mistral: OpenAI-shaped chat API that rejects unknown fields; it reports usage in the last
// streamed chunk on its own, so stream_options is not sent.
export const mistral = createOpenAiChatAdapter({
  id: 'mistral',
  displayName: 'Mistral AI',
  defaultBaseUrl: 'https://api.mistral.ai/v1',
  streamUsageOption: false,
}) satisfies ProviderAdapter;
