import type { ProviderAdapter } from '../contract.ts';
import { createOpenAiChatAdapter } from './shared/openai-chat.ts';

// Groq: OpenAI-compatible; streamed usage also arrives as x_groq.usage (handled by the base).
// `max_completion_tokens` (Groq deprecated `max_tokens`). 498 is Groq's "capacity exceeded"
// (flex tier): temporary, retried with backoff like an overload.
export const groq = createOpenAiChatAdapter({
  id: 'groq',
  displayName: 'Groq',
  defaultBaseUrl: 'https://api.groq.com/openai/v1',
  maxTokensField: 'max_completion_tokens',
  // Usage arrives as x_groq.usage in the last chunk; groq-sdk sends no stream_options.
  streamUsageOption: false,
  errorCode: (status) => (status === 498 ? 'overloaded' : undefined),
}) satisfies ProviderAdapter;
