/**
 * Item 6 of issue #14: every refused request used to send a webhook (1,363 × 429 → 1,363
 * deliveries). rate_limit.exceeded is now coalesced per scope and identifier per window.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';

let context: TestContext;

beforeAll(async () => {
  context = await createTestApp();
});
afterAll(async () => {
  await context.close();
});

async function settle(): Promise<void> {
  // Listeners run after the response; give them a moment (no polling on a fixed count).
  await new Promise((resolve) => setTimeout(resolve, 300));
}

describe('rate_limit.exceeded webhooks', () => {
  it('sends one rate_limit.exceeded event per key per window however many requests are refused', async () => {
    const org = await context.createOrg({ plan: 'community' });
    await context.services.webhooks.create(org.orgId, { url: 'http://127.0.0.1:9/hook', events: ['rate_limit.exceeded'] });
    const call = () => context.app.inject({ method: 'GET', url: '/api/v1/whoami', headers: { 'x-api-key': org.apiKey }, remoteAddress: '198.51.100.41' });
    expect((await call()).statusCode).toBe(200);
    const responses = await Promise.all(Array.from({ length: 60 }, call));
    const refused = responses.filter((response) => response.statusCode === 429).length;
    expect(refused).toBeGreaterThan(5);
    const deliveries = async () =>
      (await context.services.db.withOrg(org.orgId, (tx) => tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE event = 'rate_limit.exceeded'`))).rows[0]?.n ?? 0;
    // The first delivery row is written by a listener after the responses: wait for it, then give any others the same moment.
    await waitFor(async () => ((await deliveries()) > 0 ? true : undefined));
    await settle();
    expect(await deliveries()).toBe(1);
    const payload = await context.services.db.withOrg(org.orgId, (tx) => tx.query<{ payload: string }>(`SELECT payload FROM webhook_deliveries WHERE event = 'rate_limit.exceeded'`));
    expect(JSON.parse(payload.rows[0]!.payload).data).toMatchObject({ coalesced: true, scope: 'per_key' });
  });

  it('writes no delivery rows for an org without a subscribed endpoint', async () => {
    const org = await context.createOrg({ plan: 'community' });
    const call = () => context.app.inject({ method: 'GET', url: '/api/v1/whoami', headers: { 'x-api-key': org.apiKey }, remoteAddress: '198.51.100.42' });
    expect((await call()).statusCode).toBe(200);
    await Promise.all(Array.from({ length: 40 }, call));
    await settle();
    const rows = await context.services.db.withOrg(org.orgId, (tx) => tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries`));
    expect(rows.rows[0]?.n).toBe(0);
  });
});
