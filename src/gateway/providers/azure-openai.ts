// Azure OpenAI, two API surfaces chosen by the base URL:
// - v1 API (base URL ending in /openai/v1): POST {base}/chat/completions, deployment name as the
//   body's `model`, no api-version (Azure's GA "v1" surface, OpenAI-SDK compatible);
// - classic: /openai/deployments/{deployment}/chat/completions?api-version=…; the deployment is
//   also sent as the body's `model`, as the AzureOpenAI client of the openai SDK does (Azure routes
//   by the path and ignores it).
// `api-key` header on both; `max_completion_tokens` (reasoning deployments — o-series, gpt-5 —
// refuse `max_tokens`; the others accept both since api-version 2024-10-21).
// The resource URL is the target's baseUrl (no public default); see contract.ts ProviderTarget.
import type { CompletionRequest, ProviderAdapter, ProviderTarget } from '../contract.ts';
import { createOpenAiChatAdapter } from './shared/openai-chat.ts';

export const AZURE_DEFAULT_API_VERSION = '2024-10-21';

/** True when the base URL names Azure's v1 API (…/openai/v1). */
export function isAzureV1(baseUrl: string): boolean {
  let path = new URL(baseUrl).pathname;
  while (path.endsWith('/')) path = path.slice(0, -1);
  return path.endsWith('/openai/v1');
}

export function azureUrl(request: CompletionRequest, target: ProviderTarget, baseUrl: string): string {
  const parsed = new URL(baseUrl);
  let path = parsed.pathname;
  while (path.endsWith('/')) path = path.slice(0, -1);
  if (path.endsWith('/openai/v1')) return `${parsed.origin}${path}/chat/completions`;
  const apiVersion = target.extra?.api_version ?? parsed.searchParams.get('api-version') ?? AZURE_DEFAULT_API_VERSION;
  const deployment = target.extra?.deployment ?? request.model;
  if (path.endsWith('/openai')) path = path.slice(0, -'/openai'.length);
  return `${parsed.origin}${path}/openai/deployments/${encodeURIComponent(deployment)}/chat/completions?api-version=${encodeURIComponent(apiVersion)}`;
}

const common = {
  id: 'azure_openai',
  displayName: 'Azure OpenAI',
  defaultBaseUrl: null,
  maxTokensField: 'max_completion_tokens',
  url: azureUrl,
  authHeaders: (target: ProviderTarget) => ({ 'api-key': target.apiKey }),
} as const;

const base = createOpenAiChatAdapter(common);

export const azure_openai = {
  ...base,
  buildRequest(request: CompletionRequest, target: ProviderTarget) {
    const deployment = target.extra?.deployment;
    return base.buildRequest(deployment === undefined ? request : { ...request, model: deployment }, target);
  },
} satisfies ProviderAdapter;
