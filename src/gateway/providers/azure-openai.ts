// Azure OpenAI: /openai/deployments/{deployment}/chat/completions?api-version=…, `api-key` header.
// The resource URL is the target's baseUrl (no public default); see contract.ts ProviderTarget.
import type { CompletionRequest, ProviderAdapter, ProviderTarget } from '../contract.ts';
import { createOpenAiChatAdapter } from './shared/openai-chat.ts';

export const AZURE_DEFAULT_API_VERSION = '2024-10-21';

export function azureUrl(request: CompletionRequest, target: ProviderTarget, baseUrl: string): string {
  const parsed = new URL(baseUrl);
  const apiVersion = target.extra?.api_version ?? parsed.searchParams.get('api-version') ?? AZURE_DEFAULT_API_VERSION;
  const deployment = target.extra?.deployment ?? request.model;
  let path = parsed.pathname;
  while (path.endsWith('/')) path = path.slice(0, -1);
  if (path.endsWith('/openai')) path = path.slice(0, -'/openai'.length);
  return `${parsed.origin}${path}/openai/deployments/${encodeURIComponent(deployment)}/chat/completions?api-version=${encodeURIComponent(apiVersion)}`;
}

export const azure_openai = createOpenAiChatAdapter({
  id: 'azure_openai',
  displayName: 'Azure OpenAI',
  defaultBaseUrl: null,
  omitModel: true,
  url: azureUrl,
  authHeaders: (target) => ({ 'api-key': target.apiKey }),
}) satisfies ProviderAdapter;
