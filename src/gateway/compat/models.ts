/**
 * Which provider a compatible-surface request goes to (docs/gateway.md, "Compatible surfaces").
 * OpenAI and Anthropic clients name only a model, so svc reads the provider from, in order:
 *   1. the X-SVC-Provider header (a provider id or "auto"); a `<that provider>/` prefix on the
 *      model is dropped;
 *   2. a `provider/model` name whose prefix is a provider id or "auto" (`openai/gpt-4o-mini`,
 *      `openrouter/openai/gpt-4o`: the first segment only);
 *   3. a bare model class name or class member, when the org has routing: "auto" (the org's
 *      routing picks the providers and each one's equivalent model);
 *   4. a bare model the price table or the model classes list: the first provider listing it
 *      that the org can be served by (else the first listing it, which answers NO_PROVIDERS);
 *   5. any other bare model, when the org has routing: "auto" with the model as given;
 *   6. else 404 MODEL_NOT_FOUND.
 * The result is svc's own `provider` and `model` fields: the gateway does the rest as for
 * /api/v1/gateway/completions (routing, failover, keys, NO_PROVIDERS).
 */
import { SvcError } from '../../platform/errors.ts';
import { listedModels, priceFor } from '../pricing/pricing.ts';
import { isProviderId, providerIds } from '../registry.ts';
import { MODEL_CLASS_NAMES, MODEL_CLASSES, modelClassOf } from '../routing.ts';

/** The header that names the provider for a bare model name. */
export const PROVIDER_HEADER = 'x-svc-provider';

/** Price-table aliases: they list another provider's models, so they never claim a bare name. */
const ALIASES: ReadonlySet<string> = new Set(['azure_openai', 'vertex_ai']);

export interface ModelChoice {
  provider: string;
  model: string;
}

export interface ModelContext {
  /** The X-SVC-Provider header, if sent. */
  header: string | undefined;
  /** Whether the org has a routing configuration. */
  hasRouting: boolean;
  /** Providers the org can be served by (GatewayService.servableProviders). */
  servable: () => Promise<readonly string[]>;
}

const isProviderName = (value: string): boolean => value === 'auto' || isProviderId(value);

/** The provider and model for a compatible request's `model` (see the module comment). */
export async function chooseProvider(model: string, context: ModelContext): Promise<ModelChoice> {
  const header = context.header?.trim();
  if (header !== undefined && header !== '') {
    if (!isProviderName(header)) {
      throw new SvcError('VALIDATION_FAILED', { message: `X-SVC-Provider names no provider svc knows: "${header.slice(0, 64)}"`, details: { field: 'headers.x-svc-provider', reason: 'unknown_provider' } });
    }
    return { provider: header, model: model.startsWith(`${header}/`) && model.length > header.length + 1 ? model.slice(header.length + 1) : model };
  }
  const slash = model.indexOf('/');
  if (slash > 0 && slash < model.length - 1 && isProviderName(model.slice(0, slash))) return { provider: model.slice(0, slash), model: model.slice(slash + 1) };
  if (context.hasRouting && modelClassOf(model) !== null) return { provider: 'auto', model };
  const listing = providersListing(model);
  if (listing.length === 1) return { provider: listing[0]!, model };
  if (listing.length > 1) {
    const servable = new Set(await context.servable());
    return { provider: listing.find((provider) => servable.has(provider)) ?? listing[0]!, model };
  }
  if (context.hasRouting) return { provider: 'auto', model };
  throw new SvcError('MODEL_NOT_FOUND', { details: { model: model.slice(0, 256) } });
}

/** Providers whose price table or model classes list `model`, in registry order. */
function providersListing(model: string): string[] {
  return providerIds.filter((provider) => {
    if (ALIASES.has(provider)) return false;
    if (priceFor(provider, model).matchedModel !== null) return true;
    return MODEL_CLASS_NAMES.some((name) => MODEL_CLASSES[name][provider]?.includes(model) === true);
  });
}

/** One entry of GET /v1/models. */
export interface ListedModel {
  id: string;
  owned_by: string;
}

/**
 * What an org can name: `provider/model` for every model the price table or the model classes
 * list at each provider it can be served by, and the class names when it has routing.
 */
export function servableModels(servable: readonly string[], hasRouting: boolean): ListedModel[] {
  const listed: ListedModel[] = [];
  for (const provider of servable) {
    const models = new Set(listedModels(provider));
    for (const name of MODEL_CLASS_NAMES) for (const model of MODEL_CLASSES[name][provider] ?? []) models.add(model);
    for (const model of models) listed.push({ id: `${provider}/${model}`, owned_by: provider });
  }
  if (hasRouting) for (const name of MODEL_CLASS_NAMES) listed.push({ id: name, owned_by: 'svc' });
  return listed;
}
