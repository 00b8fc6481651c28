import type { ProviderAdapter } from '../contract.ts';
import { createOpenAiChatAdapter } from './shared/openai-chat.ts';

// Any server speaking OpenAI Chat Completions (vLLM, LM Studio, LiteLLM, llama.cpp server…).
// No default base URL: the target must carry one (e.g. https://host/v1).
export const openai_compatible = createOpenAiChatAdapter({
  id: 'openai_compatible',
  displayName: 'OpenAI-compatible endpoint',
  defaultBaseUrl: null,
}) satisfies ProviderAdapter;
