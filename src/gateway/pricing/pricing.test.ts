import { describe, expect, it } from 'vitest';
import { providerIds } from '../registry.ts';
import table from './price-table.json' with { type: 'json' };
import { PRICE_TABLE_VERSION, costUsd, estimateCost, priceFor } from './pricing.ts';

describe('the price table', () => {
  it('has a source and an as_of date for every provider id, and a version', () => {
    expect(PRICE_TABLE_VERSION).toMatch(/^\d{4}-\d{2}-\d{2}\.\d+$/);
    const providers = table.providers as Record<string, { source?: string; as_of?: string }>;
    for (const id of providerIds) {
      expect(providers[id]?.source, id).toBeTruthy();
      expect(providers[id]?.as_of, id).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
  });

  it('lists non-negative per-token prices no larger than $1e-3 per token', () => {
    for (const [provider, entry] of Object.entries(table.providers as Record<string, { models?: Record<string, Record<string, number>> }>)) {
      for (const [model, price] of Object.entries(entry.models ?? {})) {
        for (const field of ['input', 'cached_input', 'output', 'reasoning']) {
          const value = price[field];
          expect(typeof value === 'number' && value >= 0 && value < 1e-3, `${provider}/${model}/${field}`).toBe(true);
        }
      }
    }
  });
});

describe('priceFor', () => {
  it('finds exact ids and dated snapshots of a listed family, choosing the longest family', () => {
    expect(priceFor('openai', 'gpt-4o').matchedModel).toBe('gpt-4o');
    expect(priceFor('openai', 'gpt-4o-mini-2024-07-18').matchedModel).toBe('gpt-4o-mini');
    expect(priceFor('anthropic', 'claude-sonnet-4-5-20250929').matchedModel).toBe('claude-sonnet-4-5');
    expect(priceFor('cohere', 'command-r-plus-08-2024').matchedModel).toBe('command-r-plus');
    expect(priceFor('cohere', 'command-r7b-12-2024').matchedModel).toBe('command-r7b');
    expect(priceFor('mistral', 'mistral-large-latest').matchedModel).toBe('mistral-large');
    expect(priceFor('gemini', 'models/gemini-2.5-flash-lite-preview-06-17').matchedModel).toBe('gemini-2.5-flash-lite');
    expect(priceFor('bedrock', 'us.anthropic.claude-3-5-haiku-20241022-v1:0').matchedModel).toBe('anthropic.claude-3-5-haiku-20241022-v1:0');
  });

  it('uses the OpenAI table for Azure and the Gemini table for Vertex', () => {
    expect(priceFor('azure_openai', 'gpt-4o-2024-08-06').price).toEqual(priceFor('openai', 'gpt-4o').price);
    expect(priceFor('vertex_ai', 'gemini-2.5-pro').estimated).toBe(false);
  });

  it('flags an unknown model and prices it at the provider maximum, never below a listed model', () => {
    const unknown = priceFor('anthropic', 'claude-future-9');
    expect(unknown.estimated).toBe(true);
    expect(unknown.basis).toBe('unknown_model');
    expect(unknown.price.output).toBeGreaterThanOrEqual(priceFor('anthropic', 'claude-opus-4-1').price.output);
  });

  it('prices self-hosted Ollama at zero and an unpriced endpoint at the flagged default', () => {
    expect(priceFor('ollama', 'llama3.2')).toMatchObject({ estimated: false, basis: 'self_hosted', price: { input: 0, output: 0 } });
    expect(priceFor('openai_compatible', 'x')).toMatchObject({ estimated: true, basis: 'unknown_provider' });
    expect(priceFor('nonexistent', 'x').basis).toBe('unknown_provider');
  });
});

describe('costUsd', () => {
  it('charges cached prompt tokens at the cached price and reasoning tokens at the reasoning price', () => {
    // gpt-4o: $2.50/M input, $1.25/M cached, $10/M output.
    expect(costUsd('openai', 'gpt-4o', { promptTokens: 1_000_000, completionTokens: 0, totalTokens: 1_000_000 })).toBeCloseTo(2.5, 10);
    expect(costUsd('openai', 'gpt-4o', { promptTokens: 1_000_000, completionTokens: 0, totalTokens: 1_000_000, cachedPromptTokens: 1_000_000 })).toBeCloseTo(1.25, 10);
    expect(costUsd('openai', 'gpt-4o', { promptTokens: 1000, completionTokens: 500, totalTokens: 1500, cachedPromptTokens: 400, reasoningTokens: 100 })).toBeCloseTo(
      600 * 2.5e-6 + 400 * 1.25e-6 + 400 * 1e-5 + 100 * 1e-5,
      12,
    );
  });

  it('never counts more cached or reasoning tokens than the totals they are part of', () => {
    const capped = costUsd('openai', 'gpt-4o', { promptTokens: 10, completionTokens: 10, totalTokens: 20, cachedPromptTokens: 50, reasoningTokens: 50 });
    expect(capped).toBeCloseTo(10 * 1.25e-6 + 10 * 1e-5, 12);
  });

  it('reports whether the cost is an estimate', () => {
    expect(estimateCost('groq', 'llama-3.3-70b-versatile', { promptTokens: 1, completionTokens: 1, totalTokens: 2 }).estimated).toBe(false);
    expect(estimateCost('groq', 'brand-new-model', { promptTokens: 1, completionTokens: 1, totalTokens: 2 }).estimated).toBe(true);
  });
});
