/**
 * Issue #14 item 9: on the embedded default (PGlite, in-memory cache) the day's gateway budget
 * usage lived only in process memory, so a restart gave every org its full budget again. Two
 * app lifetimes on one PGlite data directory, with a completion against the fake OpenAI.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/http/build-app.ts';
import { createServices } from '../../src/services.ts';
import { FAKE_CREDENTIALS, startFakeProvider, type FakeProvider } from '../fakes/providers/index.ts';
import { memoryLog, testConfig } from '../helpers/app.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'svc-budget-restart-'));
let fake: FakeProvider | undefined;

afterAll(async () => {
  await fake?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function lifetime() {
  const config = testConfig({ DATABASE_URL: `pglite:${join(dataDir, 'pglite')}`, REDIS_URL: 'memory:', DATA_DIR: dataDir });
  const services = await createServices(config, { logDestination: memoryLog().destination, defaultMetrics: false, gateway: { timers: false } });
  const app = await buildApp(config, services);
  await app.ready();
  return {
    services,
    app,
    async close() {
      await app.close();
      await services.close();
    },
  };
}

describe('embedded budget usage across a restart', () => {
  it('keeps the tokens an org spent today after svc restarts on the same data directory', async () => {
    fake = await startFakeProvider('openai');
    const first = await lifetime();
    const { org, apiKey } = await first.services.accounts.createOrg({ name: 'budget-restart' });
    await first.services.accounts.providerKeys.set(org.id, 'openai', FAKE_CREDENTIALS.default, fake.baseUrl);
    const headers = { authorization: `Bearer ${apiKey}` };
    const complete = (app: typeof first.app) =>
      app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: { provider: 'openai', model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'hello' }] } });
    const budget = async (app: typeof first.app) => (await app.inject({ method: 'GET', url: '/api/v1/gateway/budget', headers })).json() as { tokens_used: number };

    expect((await complete(first.app)).statusCode).toBe(200);
    await first.services.gateway.settled();
    const spent = (await budget(first.app)).tokens_used;
    expect(spent).toBe(18); // the fake's usage: 12 prompt + 6 completion tokens
    await first.close();

    const second = await lifetime();
    try {
      expect((await budget(second.app)).tokens_used).toBe(spent);
      // Spending continues from the restored total.
      expect((await complete(second.app)).statusCode).toBe(200);
      await second.services.gateway.settled();
      expect((await budget(second.app)).tokens_used).toBe(2 * spent);
    } finally {
      await second.close();
    }
  }, 400_000);
});
