import type { ProviderAdapter } from '../contract.ts';
import { createOpenAiChatAdapter } from './shared/openai-chat.ts';

// Groq: OpenAI-compatible; streamed usage also arrives as x_groq.usage (handled by the base).
export const groq = createOpenAiChatAdapter({
  id: 'groq',
  displayName: 'Groq',
  defaultBaseUrl: 'https://api.groq.com/openai/v1',
}) satisfies ProviderAdapter;
