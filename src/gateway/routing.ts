/**
 * Routing: which providers (and which model at each) a completion is tried on, in order.
 *
 * The org's routing configuration (spec "Routing configuration": strategy, providers,
 * health_check_interval_s) orders its providers:
 * - round_robin: rotates the start of the list on every request, over providers whose breaker
 *   admits traffic (the others go to the end, tried only as a last resort);
 * - least-latency: ascending mean latency over a moving window of the last observed calls
 *   (providers with no observation yet come first, so they get measured);
 * - cost-optimized: ascending estimated price of the equivalent model (unknown price last);
 * - failover: the configured order.
 * An explicit `provider` in the request is always tried first; the configured providers then
 * serve as failover, but only when the requested model belongs to an equivalence class (a
 * model id means nothing at another provider otherwise). `provider: "auto"` routes over the
 * configured providers alone. `model` may also name a class ("frontier", "fast", "reasoning"),
 * which every provider in MODEL_CLASSES translates to its own model.
 *
 * Everything here is pure; the service supplies health, latency and price lookups.
 */

export const ROUTING_STRATEGIES = ['round_robin', 'least-latency', 'cost-optimized', 'failover'] as const;
export type RoutingStrategy = (typeof ROUTING_STRATEGIES)[number];

export interface RoutingConfig {
  strategy: RoutingStrategy;
  providers: string[];
  health_check_interval_s: number;
}

export const DEFAULT_HEALTH_CHECK_INTERVAL_S = 30;

export type ModelClass = 'frontier' | 'fast' | 'reasoning';
export const MODEL_CLASS_NAMES: readonly ModelClass[] = ['frontier', 'fast', 'reasoning'];

/**
 * Model equivalence map: for each class, the model that plays that role at each provider. The
 * first listed id per provider and class is the one routing sends; other ids are aliases that
 * also identify the class (so "gpt-4.1" from a client maps to frontier as well).
 */
export const MODEL_CLASSES: Readonly<Record<ModelClass, Readonly<Record<string, readonly string[]>>>> = {
  frontier: {
    openai: ['gpt-4o', 'gpt-4.1', 'gpt-5', 'gpt-4o-2024-08-06'],
    anthropic: ['claude-sonnet-4-5', 'claude-sonnet-4-0', 'claude-3-7-sonnet-latest', 'claude-3-5-sonnet-latest'],
    gemini: ['gemini-2.5-pro', 'gemini-1.5-pro'],
    vertex_ai: ['gemini-2.5-pro'],
    bedrock: ['anthropic.claude-3-5-sonnet-20241022-v2:0'],
    mistral: ['mistral-large-latest'],
    cohere: ['command-a-03-2025', 'command-r-plus'],
    groq: ['llama-3.3-70b-versatile'],
    together: ['meta-llama/Llama-3.3-70B-Instruct-Turbo'],
    fireworks: ['accounts/fireworks/models/llama-v3p3-70b-instruct'],
    deepseek: ['deepseek-chat'],
    xai: ['grok-4', 'grok-3'],
    openrouter: ['openai/gpt-4o'],
    mock: ['mock-large'],
    mock_backup: ['mock-large'],
  },
  fast: {
    openai: ['gpt-4o-mini', 'gpt-4.1-mini', 'gpt-4.1-nano', 'gpt-5-mini'],
    anthropic: ['claude-3-5-haiku-latest', 'claude-haiku-4-5'],
    gemini: ['gemini-2.5-flash', 'gemini-2.0-flash', 'gemini-1.5-flash'],
    vertex_ai: ['gemini-2.5-flash'],
    bedrock: ['anthropic.claude-3-5-haiku-20241022-v1:0'],
    mistral: ['mistral-small-latest'],
    cohere: ['command-r7b-12-2024', 'command-r'],
    groq: ['llama-3.1-8b-instant'],
    together: ['meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo'],
    fireworks: ['accounts/fireworks/models/llama-v3p1-8b-instruct'],
    xai: ['grok-3-mini'],
    openrouter: ['openai/gpt-4o-mini'],
    mock: ['mock-small'],
    mock_backup: ['mock-small'],
  },
  reasoning: {
    openai: ['o4-mini', 'o3-mini', 'o3', 'o1'],
    anthropic: ['claude-opus-4-1', 'claude-opus-4-0'],
    gemini: ['gemini-2.5-pro'],
    deepseek: ['deepseek-reasoner'],
    mistral: ['magistral-medium-latest'],
    together: ['deepseek-ai/DeepSeek-R1'],
    fireworks: ['accounts/fireworks/models/deepseek-r1'],
    xai: ['grok-4'],
    openrouter: ['openai/o4-mini'],
    mock: ['mock-reasoning'],
    mock_backup: ['mock-reasoning'],
  },
};

/** The class of a model id (or class name), or null. Ambiguous ids resolve to the first class listed. */
export function modelClassOf(model: string, provider?: string): ModelClass | null {
  if ((MODEL_CLASS_NAMES as readonly string[]).includes(model)) return model as ModelClass;
  for (const name of MODEL_CLASS_NAMES) {
    const table = MODEL_CLASSES[name];
    if (provider !== undefined && provider !== 'auto') {
      if (table[provider]?.includes(model)) return name;
      continue;
    }
    for (const models of Object.values(table)) if (models.includes(model)) return name;
  }
  if (provider !== undefined && provider !== 'auto') return modelClassOf(model);
  return null;
}

/** The model to send to `provider` for a request that asked for `model` at `requestedProvider`. */
export function equivalentModel(model: string, requestedProvider: string, provider: string): string | null {
  if (provider === requestedProvider && !(MODEL_CLASS_NAMES as readonly string[]).includes(model)) return model;
  const modelClass = modelClassOf(model, requestedProvider);
  if (modelClass === null) return requestedProvider === 'auto' ? model : null;
  return MODEL_CLASSES[modelClass][provider]?.[0] ?? null;
}

export interface RouteCandidate {
  provider: string;
  model: string;
}

export interface RouteInput {
  /** Provider id from the request, or 'auto'. */
  provider: string;
  model: string;
  routing: RoutingConfig | null;
  /** Breaker admits traffic to this provider. */
  isAvailable: (provider: string) => boolean;
  /** Mean observed latency, ms, or null when never observed. */
  latencyOf: (provider: string) => number | null;
  /** Estimated price of a reference request on that model, or null when unknown. */
  priceOf: (provider: string, model: string) => number | null;
  /** Monotonic counter for round_robin (per org). */
  turn: number;
}

/** Ordered candidates; the service skips those without a key or whose breaker rejects. */
export function planRoute(input: RouteInput): RouteCandidate[] {
  const candidates: RouteCandidate[] = [];
  const seen = new Set<string>();
  if (input.provider !== 'auto') addCandidate(candidates, seen, input.provider, equivalentModel(input.model, input.provider, input.provider));
  if (input.routing === null) return candidates;

  const pool: RouteCandidate[] = [];
  for (const provider of input.routing.providers) {
    if (seen.has(provider)) continue;
    const model = equivalentModel(input.model, input.provider, provider);
    if (model !== null) pool.push({ provider, model });
  }
  for (const candidate of orderByStrategy(pool, input)) addCandidate(candidates, seen, candidate.provider, candidate.model);
  return candidates;
}

// Hot-path helpers are module functions, not closures: under tsx (esbuild keepNames) every
// named closure created per request costs an Object.defineProperty.
function addCandidate(candidates: RouteCandidate[], seen: Set<string>, provider: string, model: string | null): void {
  if (model === null || seen.has(provider)) return;
  seen.add(provider);
  candidates.push({ provider, model });
}

function orderByStrategy(pool: RouteCandidate[], input: RouteInput): RouteCandidate[] {
  const healthy = pool.filter((candidate) => input.isAvailable(candidate.provider));
  const unhealthy = pool.filter((candidate) => !input.isAvailable(candidate.provider));
  const strategy = input.routing?.strategy ?? 'failover';
  let ordered: RouteCandidate[];
  switch (strategy) {
    case 'round_robin': {
      const offset = healthy.length === 0 ? 0 : input.turn % healthy.length;
      ordered = [...healthy.slice(offset), ...healthy.slice(0, offset)];
      break;
    }
    case 'least-latency':
      ordered = stableSort(healthy, (candidate) => input.latencyOf(candidate.provider) ?? -1);
      break;
    case 'cost-optimized':
      ordered = stableSort(healthy, (candidate) => input.priceOf(candidate.provider, candidate.model) ?? Number.POSITIVE_INFINITY);
      break;
    case 'failover':
      ordered = healthy;
      break;
  }
  return [...ordered, ...unhealthy];
}

function stableSort<T>(items: T[], key: (item: T) => number): T[] {
  return items
    .map((item, index) => ({ item, index, key: key(item) }))
    .sort((left, right) => left.key - right.key || left.index - right.index)
    .map((entry) => entry.item);
}

/** Moving window of observed latencies per provider (ring buffer; mean over the last `size`). */
export class LatencyWindows {
  private readonly windows = new Map<string, { values: number[]; next: number; sum: number }>();
  constructor(private readonly size = 50) {}

  observe(key: string, latencyMs: number): void {
    let window = this.windows.get(key);
    if (window === undefined) {
      window = { values: [], next: 0, sum: 0 };
      this.windows.set(key, window);
    }
    if (window.values.length < this.size) {
      window.values.push(latencyMs);
      window.sum += latencyMs;
    } else {
      window.sum += latencyMs - (window.values[window.next] ?? 0);
      window.values[window.next] = latencyMs;
      window.next = (window.next + 1) % this.size;
    }
  }

  mean(key: string): number | null {
    const window = this.windows.get(key);
    return window === undefined || window.values.length === 0 ? null : window.sum / window.values.length;
  }
}
