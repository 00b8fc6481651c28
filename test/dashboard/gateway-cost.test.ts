/**
 * The AI gateway page's cost charts in a real browser: completions sent through the gateway to a
 * local fake provider appear as their model in the cost-by-model and tokens-by-model charts (the
 * canvas's text alternative names every series with its total) and as completions over time on
 * the overview, and axe-core finds no serious violation on either page.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { FAKE_CREDENTIALS, startFakeProvider, type FakeProvider } from '../fakes/providers/index.ts';
import { hasChromium, openPage, seriousViolations, signIn, startHarness, visit, type DashboardHarness } from './browser.ts';

// Unique per run: a real PostgreSQL database may outlive one run of the suite.
const EMAIL = `finops-${randomUUID().slice(0, 8)}@example.com`;
const PASSWORD = 'a long enough password';

let harness: DashboardHarness;
let page: Page;
let problems: string[];
let openai: FakeProvider | undefined;
let orgId: string;
let key: string;

async function complete(model: string): Promise<void> {
  const response = await fetch(`${harness.base}/api/v1/gateway/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ provider: 'openai', model, messages: [{ role: 'user', content: 'Summarise the quarterly report in one line.' }] }),
  });
  expect(response.status).toBe(200);
}

describe.skipIf(!hasChromium)('the AI gateway cost charts', () => {
  beforeAll(async () => {
    harness = await startHarness();
    const { services } = harness.context;
    const { org } = await services.accounts.users.register({ email: EMAIL, password: PASSWORD, orgName: 'Cost test' });
    orgId = org.id;
    key = (await services.accounts.createKey(orgId, { scope: 'admin', keyClass: 'live' })).apiKey;
    openai = await startFakeProvider('openai');
    await services.accounts.providerKeys.set(orgId, 'openai', FAKE_CREDENTIALS.default, openai.baseUrl);
    ({ page, problems } = await openPage(harness));
  }, 120_000);

  afterAll(async () => {
    await openai?.close();
    await harness?.close();
  }, 60_000);

  it('shows an empty state before any completion, then each model sent through the gateway in the cost and token charts', async () => {
    await signIn(page, EMAIL, PASSWORD);
    await visit(page, 'AI gateway');
    await page.getByText('No completions in this period').waitFor();

    await complete('gpt-4o-mini');
    await complete('gpt-4o-mini');
    await complete('gpt-4o');
    await harness.context.services.gateway.settled();

    // Another page and back: the charts load afresh.
    await visit(page, 'Overview');
    await visit(page, 'AI gateway');
    const cost = page.getByRole('img', { name: /^Cost by model over time \(USD\)/ });
    await cost.waitFor();
    const costLabel = (await cost.getAttribute('aria-label')) ?? '';
    expect(costLabel).toMatch(/openai\/gpt-4o-mini: 0\.\d*[1-9]/);
    expect(costLabel).toMatch(/openai\/gpt-4o: 0\.\d*[1-9]/);
    const tokens = (await page.getByRole('img', { name: /^Tokens by model over time/ }).getAttribute('aria-label')) ?? '';
    const mini = Number(/openai\/gpt-4o-mini: (\d+)/.exec(tokens)?.[1]);
    const large = Number(/openai\/gpt-4o: (\d+)/.exec(tokens)?.[1]);
    // Two calls of the same prompt against one: twice the tokens.
    expect(large).toBeGreaterThan(0);
    expect(mini).toBe(2 * large);
    await page.getByText('No cost anomaly in this period').waitFor();

    expect(await seriousViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
  }, 90_000);

  it('counts the completions over time on the overview, and says which requests svc does not count', async () => {
    await visit(page, 'Overview');
    const chart = page.getByRole('img', { name: /^AI-gateway completions over time/ });
    await chart.waitFor();
    await expect(chart.getAttribute('aria-label')).resolves.toMatch(/AI-gateway completions: 3$/);
    await expect(page.getByText('svc keeps no per-organization count of every request over time').isVisible()).resolves.toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
  }, 60_000);

  it('shows the feature flags in force, read-only, on the settings page', async () => {
    await visit(page, 'Settings');
    const table = page.getByRole('table', { name: 'Feature flags in force' });
    await table.waitFor();
    const row = table.getByRole('row').filter({ hasText: 'FEATURE_MCP_SECURITY' });
    await expect(row.innerText()).resolves.toMatch(/mcp security\s+on/);
    await expect(table.getByRole('row').filter({ hasText: 'FEATURE_HIPAA_BAA' }).innerText()).resolves.toMatch(/off/);
    expect(await seriousViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
  }, 60_000);
});
