import type { ProviderAdapter } from '../contract.ts';
import { createOpenAiChatAdapter } from './shared/openai-chat.ts';

// Mistral: OpenAI-shaped chat API that rejects unknown fields (extra_forbidden, 422): no
// stream_options (usage arrives in the last streamed chunk anyway), no message `name`.
export const mistral = createOpenAiChatAdapter({
  id: 'mistral',
  displayName: 'Mistral AI',
  defaultBaseUrl: 'https://api.mistral.ai/v1',
  streamUsageOption: false,
  sendName: false,
}) satisfies ProviderAdapter;
