/**
 * The one list of upstream LLM providers. Everything else derives from it: the adapter registry
 * (`gateway/registry.ts` must have exactly these ids — the type checker enforces it), the
 * environment variables of `config.ts`, the ids `accounts` stores keys for, the price table
 * (`gateway/pricing/price-table.json`, kept in step by a test) and the provider table of
 * `docs/providers.md` (kept in step by a test). It lives in platform because config and accounts
 * sit below the gateway capability and must not import it.
 *
 * Adding a provider: one entry here, then the compiler and the tests name what is missing.
 */
export interface ProviderInfo {
  readonly id: string;
  readonly displayName: string;
  /** Environment variable carrying the deployment's key, or null (no environment key). */
  readonly envVariable: string | null;
  /** Whether orgs may store a key (and base URL) for it through the API. */
  readonly orgKeys: boolean;
  /**
   * How its cost is priced: 'listed' (its own table in price-table.json), 'alias:<id>' (another
   * provider's table), 'self_hosted' (cost 0), 'unpriced' (no table: cost_usd null), 'free' (mock).
   */
  readonly pricing: 'listed' | `alias:${string}` | 'self_hosted' | 'unpriced' | 'free';
  /** Built into svc (no upstream account): only available when GATEWAY_MOCK_PROVIDER is on. */
  readonly builtIn: boolean;
}

export const PROVIDER_CATALOGUE = [
  { id: 'openai', displayName: 'OpenAI', envVariable: 'OPENAI_API_KEY', orgKeys: true, pricing: 'listed', builtIn: false },
  { id: 'azure_openai', displayName: 'Azure OpenAI', envVariable: 'AZURE_OPENAI_API_KEY', orgKeys: true, pricing: 'alias:openai', builtIn: false },
  { id: 'anthropic', displayName: 'Anthropic', envVariable: 'ANTHROPIC_API_KEY', orgKeys: true, pricing: 'listed', builtIn: false },
  { id: 'gemini', displayName: 'Google Gemini', envVariable: 'GEMINI_API_KEY', orgKeys: true, pricing: 'listed', builtIn: false },
  { id: 'vertex_ai', displayName: 'Google Vertex AI', envVariable: 'VERTEX_AI_API_KEY', orgKeys: true, pricing: 'alias:gemini', builtIn: false },
  { id: 'bedrock', displayName: 'Amazon Bedrock', envVariable: 'BEDROCK_API_KEY', orgKeys: true, pricing: 'listed', builtIn: false },
  { id: 'mistral', displayName: 'Mistral AI', envVariable: 'MISTRAL_API_KEY', orgKeys: true, pricing: 'listed', builtIn: false },
  { id: 'cohere', displayName: 'Cohere', envVariable: 'COHERE_API_KEY', orgKeys: true, pricing: 'listed', builtIn: false },
  { id: 'groq', displayName: 'Groq', envVariable: 'GROQ_API_KEY', orgKeys: true, pricing: 'listed', builtIn: false },
  { id: 'together', displayName: 'Together AI', envVariable: 'TOGETHER_API_KEY', orgKeys: true, pricing: 'listed', builtIn: false },
  { id: 'fireworks', displayName: 'Fireworks AI', envVariable: 'FIREWORKS_API_KEY', orgKeys: true, pricing: 'listed', builtIn: false },
  { id: 'deepseek', displayName: 'DeepSeek', envVariable: 'DEEPSEEK_API_KEY', orgKeys: true, pricing: 'listed', builtIn: false },
  { id: 'xai', displayName: 'xAI', envVariable: 'XAI_API_KEY', orgKeys: true, pricing: 'listed', builtIn: false },
  { id: 'openrouter', displayName: 'OpenRouter', envVariable: 'OPENROUTER_API_KEY', orgKeys: true, pricing: 'listed', builtIn: false },
  { id: 'ollama', displayName: 'Ollama', envVariable: 'OLLAMA_API_KEY', orgKeys: true, pricing: 'self_hosted', builtIn: false },
  { id: 'openai_compatible', displayName: 'OpenAI-compatible endpoint', envVariable: null, orgKeys: true, pricing: 'unpriced', builtIn: false },
  { id: 'mock', displayName: 'Built-in mock', envVariable: null, orgKeys: false, pricing: 'free', builtIn: true },
  { id: 'mock_backup', displayName: 'Built-in mock (failover target)', envVariable: null, orgKeys: false, pricing: 'free', builtIn: true },
] as const satisfies readonly ProviderInfo[];

export type CatalogueProviderId = (typeof PROVIDER_CATALOGUE)[number]['id'];

/** Provider ids built into svc (the mock providers). */
export const BUILT_IN_PROVIDER_IDS: readonly string[] = PROVIDER_CATALOGUE.filter((entry) => entry.builtIn).map((entry) => entry.id);
