/**
 * The provider registry: one line per provider (the ProviderId type derives from it) and the two
 * entry points the gateway core calls. PROVISIONAL: adapters are being filled in; an adapter not
 * yet implemented throws UpstreamError('server') when used.
 */
import { UpstreamError } from './contract.ts';
import type { CompletionRequest, CompletionResult, InvokeOptions, ProviderAdapter, ProviderTarget, StreamEvent } from './contract.ts';

function pending(id: string): ProviderAdapter {
  const fail = (): never => {
    throw new UpstreamError({ provider: id, status: null, code: 'server', retryable: false, providerCode: 'adapter_pending' });
  };
  return { id, displayName: id, defaultBaseUrl: null, streamFormat: 'sse', buildRequest: fail, parseResponse: fail, parseError: fail, parseStream: fail };
}

export const providers = {
  openai: pending('openai'),
  azure_openai: pending('azure_openai'),
  anthropic: pending('anthropic'),
  gemini: pending('gemini'),
  vertex_ai: pending('vertex_ai'),
  bedrock: pending('bedrock'),
  mistral: pending('mistral'),
  cohere: pending('cohere'),
  groq: pending('groq'),
  together: pending('together'),
  fireworks: pending('fireworks'),
  deepseek: pending('deepseek'),
  xai: pending('xai'),
  openrouter: pending('openrouter'),
  ollama: pending('ollama'),
  openai_compatible: pending('openai_compatible'),
} as const satisfies Record<string, ProviderAdapter>;

export type ProviderId = keyof typeof providers;

export const providerIds = Object.keys(providers) as ProviderId[];

export function isProviderId(value: string): value is ProviderId {
  return Object.hasOwn(providers, value);
}

export function getAdapter(id: ProviderId): ProviderAdapter {
  return providers[id];
}

/** Calls the provider and returns the mapped result; throws UpstreamError on any failure. */
export async function invokeCompletion(
  _providerId: ProviderId,
  _request: CompletionRequest,
  _target: ProviderTarget,
  _options: InvokeOptions = {},
): Promise<CompletionResult> {
  throw new UpstreamError({ provider: _providerId, status: null, code: 'server', retryable: false, providerCode: 'adapter_pending' });
}

/**
 * Starts a streamed call. Resolves once the upstream answered 2xx headers (failover is still
 * possible before then); rejects with UpstreamError otherwise. The iterable follows StreamEvent's rule.
 */
export async function invokeStream(
  _providerId: ProviderId,
  _request: CompletionRequest,
  _target: ProviderTarget,
  _options: InvokeOptions = {},
): Promise<AsyncIterable<StreamEvent>> {
  throw new UpstreamError({ provider: _providerId, status: null, code: 'server', retryable: false, providerCode: 'adapter_pending' });
}
