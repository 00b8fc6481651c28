import type { ProviderAdapter } from '../contract.ts';
import { createOpenAiChatAdapter } from './shared/openai-chat.ts';

// Fireworks AI: OpenAI-compatible chat completions under /inference/v1.
export const fireworks = createOpenAiChatAdapter({
  id: 'fireworks',
  displayName: 'Fireworks AI',
  defaultBaseUrl: 'https://api.fireworks.ai/inference/v1',
}) satisfies ProviderAdapter;
