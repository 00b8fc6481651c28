import type { ProviderAdapter } from '../contract.ts';
import { createOpenAiChatAdapter } from './shared/openai-chat.ts';

// Ollama's OpenAI-compatible endpoint (/v1/chat/completions). Ollama ignores the key; proxies in
// front of it may check the Bearer token.
export const ollama = createOpenAiChatAdapter({
  id: 'ollama',
  displayName: 'Ollama',
  defaultBaseUrl: 'http://127.0.0.1:11434/v1',
}) satisfies ProviderAdapter;
