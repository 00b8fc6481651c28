/**
 * Cost of a completion from the versioned price table in `price-table.json` (data, not code:
 * USD per token for input, cached input, output and reasoning, with `source` and `as_of` per
 * provider and one `version` for the table).
 *
 * Lookup rule, in order: exact model id (case-insensitive) → the longest listed id that the model
 * extends after a separator ('-', '@', ':'), so dated snapshots like gpt-4o-mini-2024-07-18 or
 * claude-sonnet-4-5-20250929 find their family → the FALLBACK, flagged `estimated: true`:
 *  - unknown model of a known provider: that provider's most expensive listed price (a budget is
 *    never under-counted);
 *  - provider without a table (openai_compatible, unknown ids): `fallback.default` ($10/M input,
 *    $30/M output);
 *  - self-hosted providers (ollama): cost 0, not flagged.
 * Aliases: azure_openai uses the OpenAI table (pass the upstream-reported model, e.g.
 * gpt-4o-2024-08-06, not the deployment name), vertex_ai the Gemini table. Gemini/Vertex names may
 * carry "models/" or "publishers/google/models/"; Bedrock cross-region profile prefixes
 * (us./eu./apac./global.) are ignored.
 *
 * Cost = (prompt − cached) × input + cached × cached_input + (completion − reasoning) × output
 *        + reasoning × reasoning. Anthropic cache-write surcharges are not modelled.
 */
import { LRUCache } from 'lru-cache';
import table from './price-table.json' with { type: 'json' };
import type { TokenUsage } from '../contract.ts';
import { entryBound } from '../../platform/lru.ts';

/** USD per token. */
export interface ModelPrice {
  input: number;
  cachedInput: number;
  output: number;
  reasoning: number;
}

export type PriceBasis = 'listed' | 'unknown_model' | 'unknown_provider' | 'self_hosted';

export interface PriceLookup {
  price: ModelPrice;
  /** The table entry used, or null for a fallback. */
  matchedModel: string | null;
  /** True when the price is a fallback estimate, not a listed price. */
  estimated: boolean;
  basis: PriceBasis;
  source: string;
  asOf: string | null;
  tableVersion: string;
}

export interface CostEstimate {
  usd: number;
  estimated: boolean;
  basis: PriceBasis;
  matchedModel: string | null;
  tableVersion: string;
}

interface RawPrice {
  input: number;
  cached_input: number;
  output: number;
  reasoning: number;
}

interface RawProvider {
  source: string;
  as_of: string;
  alias_of?: string;
  self_hosted?: boolean;
  models?: Record<string, RawPrice>;
}

interface ProviderTable {
  source: string;
  asOf: string;
  selfHosted: boolean;
  /** Lower-case id → [original id, price]. */
  models: Map<string, [string, ModelPrice]>;
  highest: ModelPrice | null;
}

export const PRICE_TABLE_VERSION: string = table.version;

function toPrice(raw: RawPrice): ModelPrice {
  return { input: raw.input, cachedInput: raw.cached_input, output: raw.output, reasoning: raw.reasoning };
}

const DEFAULT_PRICE = toPrice(table.fallback.default);
const rawProviders = table.providers as Record<string, RawProvider>;
const tables = new Map<string, ProviderTable>();
for (const [provider, raw] of Object.entries(rawProviders)) {
  const models = raw.alias_of ? (rawProviders[raw.alias_of]?.models ?? {}) : (raw.models ?? {});
  const entries = new Map<string, [string, ModelPrice]>();
  let highest: ModelPrice | null = null;
  for (const [model, price] of Object.entries(models)) {
    const converted = toPrice(price);
    entries.set(model.toLowerCase(), [model, converted]);
    if (highest === null || converted.input + converted.output > highest.input + highest.output) highest = converted;
  }
  tables.set(provider, { source: raw.source, asOf: raw.as_of, selfHosted: raw.self_hosted === true, models: entries, highest });
}

const ZERO: ModelPrice = { input: 0, cachedInput: 0, output: 0, reasoning: 0 };
const PREFIXES = ['publishers/google/models/', 'models/'];
const BEDROCK_PROFILE = /^(us|eu|apac|global|us-gov|jp|au|ca)\./;

function normalize(provider: string, model: string): string {
  let id = model.trim().toLowerCase();
  for (const prefix of PREFIXES) if (id.startsWith(prefix)) id = id.slice(prefix.length);
  if (provider === 'bedrock') id = id.replace(BEDROCK_PROFILE, '');
  return id;
}

function match(models: Map<string, [string, ModelPrice]>, id: string): [string, ModelPrice] | undefined {
  const exact = models.get(id);
  if (exact) return exact;
  let best: [string, ModelPrice] | undefined;
  let bestLength = 0;
  for (const [key, entry] of models) {
    if (key.length <= bestLength || id.length <= key.length || !id.startsWith(key)) continue;
    const separator = id[key.length];
    if (separator === '-' || separator === '@' || separator === ':') {
      best = entry;
      bestLength = key.length;
    }
  }
  return best;
}

/** The model ids the price table lists for a provider (its alias's for azure_openai and vertex_ai), in table order. */
export function listedModels(provider: string): string[] {
  return [...(tables.get(provider)?.models.values() ?? [])].map(([model]) => model);
}

const cache = new LRUCache<string, PriceLookup>(entryBound(2048));
// The last lookup, in front of the cache: one completion prices its model several times (route
// order, budget reservation, settlement, the answer's cost), and traffic repeats models.
let last: { provider: string; model: string; lookup: PriceLookup } | null = null;

/** The price of `model` at `provider` (see the module comment for the rule). Pure; memoized. */
export function priceFor(provider: string, model: string): PriceLookup {
  if (last !== null && last.provider === provider && last.model === model) return last.lookup;
  const lookup = lookupPrice(provider, model);
  last = { provider, model, lookup };
  return lookup;
}

function lookupPrice(provider: string, model: string): PriceLookup {
  const key = `${provider}\u0000${model}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const providerTable = tables.get(provider);
  let lookup: PriceLookup;
  if (!providerTable) {
    lookup = { price: DEFAULT_PRICE, matchedModel: null, estimated: true, basis: 'unknown_provider', source: table.fallback.rule, asOf: null, tableVersion: PRICE_TABLE_VERSION };
  } else if (providerTable.selfHosted) {
    lookup = { price: ZERO, matchedModel: null, estimated: false, basis: 'self_hosted', source: providerTable.source, asOf: providerTable.asOf, tableVersion: PRICE_TABLE_VERSION };
  } else {
    const found = match(providerTable.models, normalize(provider, model));
    lookup = found
      ? { price: found[1], matchedModel: found[0], estimated: false, basis: 'listed', source: providerTable.source, asOf: providerTable.asOf, tableVersion: PRICE_TABLE_VERSION }
      : {
          price: providerTable.highest ?? DEFAULT_PRICE,
          matchedModel: null,
          estimated: true,
          basis: providerTable.highest ? 'unknown_model' : 'unknown_provider',
          source: providerTable.highest ? providerTable.source : table.fallback.rule,
          asOf: providerTable.highest ? providerTable.asOf : null,
          tableVersion: PRICE_TABLE_VERSION,
        };
  }
  cache.set(key, lookup);
  return lookup;
}

/** Cost in USD with the basis of the price used (rounded to 1e-10 USD). */
export function estimateCost(provider: string, model: string, usage: TokenUsage): CostEstimate {
  const lookup = priceFor(provider, model);
  const price = lookup.price;
  const cached = Math.min(usage.cachedPromptTokens ?? 0, usage.promptTokens);
  const reasoning = Math.min(usage.reasoningTokens ?? 0, usage.completionTokens);
  const usd =
    (usage.promptTokens - cached) * price.input +
    cached * price.cachedInput +
    (usage.completionTokens - reasoning) * price.output +
    reasoning * price.reasoning;
  return { usd: Math.round(usd * 1e10) / 1e10, estimated: lookup.estimated, basis: lookup.basis, matchedModel: lookup.matchedModel, tableVersion: lookup.tableVersion };
}

/**
 * Cost in USD of one completion at its listed price, or null when the model has no listed price
 * (unknown model or provider without a table): the response then says `cost_usd: null` instead of
 * charging a fallback silently. Self-hosted providers cost 0. Budgets use estimateCost's fallback.
 */
export function costUsd(provider: string, model: string, usage: TokenUsage): number | null {
  const estimate = estimateCost(provider, model, usage);
  return estimate.estimated ? null : estimate.usd;
}

/** USD cost of a call, or null when the price of that model is unknown (`costUsd` is one). */
export type CostFunction = (provider: string, model: string, usage: TokenUsage) => number | null;

/** The price table's fallback estimate (never under-counts a budget) for a model without a listed price. */
export function fallbackCostUsd(provider: string, model: string, usage: TokenUsage): number {
  return estimateCost(provider, model, usage).usd;
}
