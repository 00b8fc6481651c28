/**
 * Upstream credentials for a completion: the org's own (BYOK) provider key first, then the
 * deployment's per-provider environment key (OPENAI_API_KEY, …). Keys are returned to the
 * caller only to build the outbound request; they are never logged or put in errors.
 */
import { LRUCache } from 'lru-cache';
import type { ProviderTarget } from './contract.ts';
import { entryBound } from '../platform/lru.ts';

export interface ProviderKeySource {
  get(orgId: string, provider: string): Promise<{ key: string; baseUrl: string | null } | null>;
}

export async function resolveTarget(
  orgKeys: ProviderKeySource,
  envKeys: Readonly<Record<string, string>>,
  orgId: string,
  provider: string,
): Promise<ProviderTarget | null> {
  const stored = await orgKeys.get(orgId, provider);
  if (stored !== null) return stored.baseUrl === null ? { apiKey: stored.key } : { apiKey: stored.key, baseUrl: stored.baseUrl };
  const fromEnv = envKeys[provider];
  return fromEnv === undefined ? null : { apiKey: fromEnv };
}

const hostsByBaseUrl = new LRUCache<string, string | false>(entryBound(10_000));

/** Breaker / latency / health key: the provider id, or provider@host when a custom base URL is used. */
export function targetKey(provider: string, target: ProviderTarget): string {
  if (target.baseUrl === undefined) return provider;
  let host = hostsByBaseUrl.get(target.baseUrl);
  if (host === undefined) {
    try {
      host = new URL(target.baseUrl).host;
    } catch {
      host = false;
    }
    hostsByBaseUrl.set(target.baseUrl, host);
  }
  return host === false ? provider : `${provider}@${host}`;
}
