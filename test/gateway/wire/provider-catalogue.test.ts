// The one provider list (src/platform/providers.ts) and everything that derives from it: the
// adapter registry, environment variables, the ids keys may be stored for, the price table and
// the provider table of docs/providers.md.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROVIDER_IDS } from '../../../src/accounts/index.ts';
import table from '../../../src/gateway/pricing/price-table.json' with { type: 'json' };
import { providerIds, providers } from '../../../src/gateway/registry.ts';
import { PROVIDER_ENV_VARIABLES } from '../../../src/platform/config.ts';
import { PROVIDER_CATALOGUE } from '../../../src/platform/providers.ts';

const ids = PROVIDER_CATALOGUE.map((entry) => entry.id);
const priced = table.providers as Record<string, { alias_of?: string; self_hosted?: boolean; models?: Record<string, unknown> }>;

describe('the provider catalogue', () => {
  it('is the registry: same ids in the same order, same display names', () => {
    expect([...providerIds]).toEqual(ids);
    for (const entry of PROVIDER_CATALOGUE) expect(providers[entry.id].displayName).toBe(entry.displayName);
  });

  it('gives config its environment variables and accounts the ids a key may be stored for', () => {
    expect(PROVIDER_ENV_VARIABLES).toEqual(Object.fromEntries(PROVIDER_CATALOGUE.filter((entry) => entry.envVariable !== null).map((entry) => [entry.id, entry.envVariable])));
    expect([...PROVIDER_IDS]).toEqual(PROVIDER_CATALOGUE.filter((entry) => entry.orgKeys).map((entry) => entry.id));
    expect(PROVIDER_IDS).not.toContain('mock');
  });

  it('has a price-table entry of the declared kind for every provider, and no other', () => {
    expect(Object.keys(priced).sort()).toEqual([...ids].sort());
    for (const entry of PROVIDER_CATALOGUE) {
      const prices = priced[entry.id]!;
      if (entry.pricing === 'listed') expect(Object.keys(prices.models ?? {}).length, entry.id).toBeGreaterThan(0);
      else if (entry.pricing.startsWith('alias:')) expect(prices.alias_of, entry.id).toBe(entry.pricing.slice('alias:'.length));
      else if (entry.pricing === 'self_hosted' || entry.pricing === 'free') expect(prices.self_hosted, entry.id).toBe(true);
      else expect([Object.keys(prices.models ?? {}).length, prices.self_hosted ?? false], entry.id).toEqual([0, false]);
    }
  });

  it('is the provider table of docs/providers.md, row for row', () => {
    const docs = readFileSync(resolve(import.meta.dirname, '../../../docs/providers.md'), 'utf8');
    const section = docs.slice(docs.indexOf('## Providers'), docs.indexOf('\n## ', docs.indexOf('## Providers') + 1));
    const rows = [...section.matchAll(/^\| `([a-z_]+)` \| ([^|]+) \|/gm)].map((match) => [match[1], match[2]!.trim()]);
    expect(rows.map(([id]) => id)).toEqual(ids);
  });
});
