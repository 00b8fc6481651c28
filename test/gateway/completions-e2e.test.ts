/**
 * End to end through the Fastify app, the real provider registry and adapters, against the fake
 * upstream servers on loopback (test/fakes/providers).
 */
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { BudgetLedger, createBudgetStore } from '../../src/gateway/budget.ts';
import { buildApp, type AppInstance } from '../../src/http/build-app.ts';
import { createCache } from '../../src/platform/cache.ts';
import type { Services } from '../../src/services.ts';
import { FAKE_CREDENTIALS, startFakeProvider, type FakeProvider } from '../fakes/providers/index.ts';
import { createTestServices } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';

let services: Services;
let app: AppInstance;
let openai: FakeProvider;
let anthropic: FakeProvider;

beforeAll(async () => {
  services = await createTestServices({
    services: { gateway: { timers: false, retryPolicy: { attemptsPerProvider: 2, baseDelayMs: 5, maxDelayMs: 50, totalBudgetMs: 5_000, attemptTimeoutMs: 2_000 } } },
  });
  app = await buildApp(services.config, services);
  await app.ready();
  [openai, anthropic] = await Promise.all([startFakeProvider('openai'), startFakeProvider('anthropic')]);
});

afterAll(async () => {
  await app?.close();
  await services?.close();
  await Promise.allSettled([openai?.close(), anthropic?.close()]);
});

async function orgWithFakes(providers: Array<[string, FakeProvider]>) {
  const { org, apiKey } = await services.accounts.createOrg({ name: `e2e-${Math.random().toString(36).slice(2, 8)}` });
  for (const [provider, fake] of providers) await services.accounts.providerKeys.set(org.id, provider, FAKE_CREDENTIALS.default, fake.baseUrl);
  return { orgId: org.id as string, headers: { authorization: `Bearer ${apiKey as string}` } };
}

const ask = (content: string, extra: Record<string, unknown> = {}) => ({ provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });

describe('completions against fake upstreams', () => {
  it('sends a valid OpenAI request with PII redacted and returns the svc envelope', async () => {
    openai.reset();
    const { headers } = await orgWithFakes([['openai', openai]]);
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('Contact bob@example.org or 555-867-5309 please', { max_tokens: 50 }) });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ provider: 'openai', content: 'Hello from the fake upstream.', finish_reason: 'stop', usage: { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 } });
    // gpt-4o-mini at the price table's listed rates: 12 prompt + 6 completion tokens.
    expect(response.json().cost_usd).toBeGreaterThan(0);
    expect(response.json().cost_usd).toBeLessThan(0.001);
    const tokens = await services.metrics.registry.getSingleMetricAsString('svc_ai_tokens_total');
    expect(tokens).toMatch(/svc_ai_tokens_total\{model="gpt-4o-mini",provider="openai"\} \d+/);
    const cost = await services.metrics.registry.getSingleMetricAsString('svc_ai_cost_usd_total');
    expect(Number(/svc_ai_cost_usd_total\{model="gpt-4o-mini",provider="openai"\} ([\d.e-]+)/.exec(cost)?.[1])).toBeGreaterThanOrEqual(response.json().cost_usd);
    const received = openai.requests.at(-1)!;
    expect(received.problems).toEqual([]);
    const sent = JSON.stringify(received.body);
    expect(sent).not.toContain('bob@example.org');
    expect(sent).not.toContain('867-5309');
    expect(sent).toContain('[EMAIL_1]');
    expect(sent).toContain('[PHONE_1]');
  });

  it('streams the fake upstream answer as svc chunks ending in [DONE]', async () => {
    openai.reset();
    const { headers } = await orgWithFakes([['openai', openai]]);
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('hi', { stream: true }) });
    expect(response.statusCode).toBe(200);
    const lines = response.payload.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6));
    expect(lines.at(-1)).toBe('[DONE]');
    const chunks = lines.slice(0, -1).map((line) => JSON.parse(line));
    expect(chunks.filter((chunk) => 'delta' in chunk).map((chunk) => chunk.delta).join('')).toBe('Hello from the fake upstream.');
    expect(chunks.at(-1)).toMatchObject({ done: true, usage: { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 } });
    expect(openai.requests.at(-1)!.problems).toEqual([]);
  });

  it('keeps answering without a client-visible error when one provider is killed mid-run', async () => {
    const primary = await startFakeProvider('openai');
    anthropic.reset();
    const { headers } = await orgWithFakes([
      ['openai', primary],
      ['anthropic', anthropic],
    ]);
    const put = await app.inject({ method: 'PUT', url: '/api/v1/gateway/routing', headers, payload: { strategy: 'failover', providers: ['openai', 'anthropic'], health_check_interval_s: 10 } });
    expect(put.statusCode).toBe(200);
    const statuses: number[] = [];
    const served: string[] = [];
    for (let index = 0; index < 24; index += 1) {
      if (index === 8) await primary.close(); // the primary dies mid-run
      const stream = index % 3 === 0;
      const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: { provider: 'auto', model: 'fast', messages: [{ role: 'user', content: `q${index}` }], stream } });
      statuses.push(response.statusCode);
      if (stream) {
        const lines = response.payload.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6));
        expect(lines.at(-1)).toBe('[DONE]');
        served.push(JSON.parse(lines.at(-2)!).provider);
      } else served.push(response.json().provider);
    }
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(served.slice(0, 8).every((provider) => provider === 'openai')).toBe(true);
    expect(served.slice(8).every((provider) => provider === 'anthropic')).toBe(true);
    expect(anthropic.requests.every((received) => received.problems.length === 0)).toBe(true);
  });

  it("shows an org the breakers of public providers and of its own base URLs, not another org's hosts", async () => {
    const mine = await orgWithFakes([['anthropic', anthropic]]);
    const other = await orgWithFakes([['openai', openai]]);
    await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers: mine.headers, payload: { ...ask('hi'), provider: 'anthropic', model: 'claude-3-5-haiku-latest' } });
    await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers: other.headers, payload: ask('hi') });
    const health = await app.inject({ method: 'GET', url: '/api/v1/gateway/providers/health', headers: mine.headers });
    const ids = health.json().providers.map((entry: { gateway_id: string }) => entry.gateway_id);
    expect(ids).toContain(`anthropic@${new URL(anthropic.baseUrl).host}`);
    expect(ids).not.toContain(`openai@${new URL(openai.baseUrl).host}`);
  });

  it('fails over when the upstream answers 500 before any byte of a stream', async () => {
    const broken = await startFakeProvider('openai', { behaviour: { status: 500 } });
    anthropic.reset();
    const { headers } = await orgWithFakes([
      ['openai', broken],
      ['anthropic', anthropic],
    ]);
    await app.inject({ method: 'PUT', url: '/api/v1/gateway/routing', headers, payload: { strategy: 'failover', providers: ['openai', 'anthropic'] } });
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('hi', { stream: true }) });
    const lines = response.payload.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6));
    expect(lines.at(-1)).toBe('[DONE]');
    expect(JSON.parse(lines.at(-2)!).provider).toBe('anthropic');
    expect(broken.requests.length).toBe(2); // first attempt + one retry, then failover
    await broken.close();
  });

  it('ends a stream dropped mid-way by the upstream with an explicit error event', async () => {
    openai.reset();
    openai.setBehaviour({ dropAfterChunks: 3, chunkDelayMs: 20 });
    const { headers } = await orgWithFakes([['openai', openai]]);
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('hi', { stream: true }) });
    const lines = response.payload.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6));
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(lines[0]!).delta).toBeTypeOf('string'); // bytes reached the client before the drop
    expect(lines).not.toContain('[DONE]');
    expect(JSON.parse(lines.at(-1)!).error.code).toMatch(/^UPSTREAM_/);
    openai.reset();
  });

  it('aborts the upstream and settles the reservation to what was streamed when the client disconnects', async () => {
    openai.reset();
    openai.setBehaviour({ content: Array.from({ length: 40 }, (_, index) => `w${index}`).join(' '), chunkDelayMs: 50 });
    const { headers } = await orgWithFakes([['openai', openai]]);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const body = JSON.stringify(ask('hi', { stream: true, max_tokens: 500 }));
    await new Promise<void>((resolve, reject) => {
      const client = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/api/v1/gateway/completions', headers: { ...headers, 'content-type': 'application/json' } }, (response) => {
        response.once('data', () => {
          client.destroy(); // the client goes away after the first chunk
          resolve();
        });
      });
      client.on('error', () => undefined);
      client.once('error', reject);
      client.end(body);
    });
    // The 500-token reservation is settled after the disconnect is noticed: wait until it is gone,
    // then it was replaced by an estimate of what was streamed before the disconnect.
    const used = async () => (await app.inject({ method: 'GET', url: '/api/v1/gateway/budget', headers })).json().tokens_used as number;
    const settled = await waitFor(async () => {
      const tokens = await used();
      return tokens < 500 ? tokens : undefined;
    });
    expect(settled).toBeGreaterThan(0);
    expect(settled).toBeLessThan(100);
    // What reached the upstream was a valid streaming request.
    expect(openai.requests.at(-1)!.problems).toEqual([]);
    openai.reset();
  });

  it('charges an estimate when the upstream reports absurd, missing or self-contradicting usage', async () => {
    // An OpenAI-compatible upstream (the org's own base URL) whose usage object the test picks.
    let usage: unknown = null;
    const upstream = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        const body: Record<string, unknown> = { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(400) }, finish_reason: 'stop' }] };
        if (usage !== undefined) body.usage = usage;
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
      for (const [name, reported] of [
        ['1e300 tokens', { prompt_tokens: 1e300, completion_tokens: 1e300, total_tokens: 1e300 }],
        ['no usage', undefined],
        ['negative counts', { prompt_tokens: -5_000, completion_tokens: -10_000, total_tokens: -15_000 }],
      ] as const) {
        usage = reported;
        const { org, apiKey } = await services.accounts.createOrg({ name: `usage-${Math.random().toString(36).slice(2, 8)}` });
        await services.accounts.providerKeys.set(org.id, 'openai', FAKE_CREDENTIALS.default, baseUrl);
        const headers = { authorization: `Bearer ${apiKey as string}` };
        const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('Summarise the meeting notes, please.') });
        expect(response.statusCode, name).toBe(200);
        // The 400-character answer is about 100 tokens: charged as an estimate, never 0 and never 1e300.
        const { usage: reportedUsage } = response.json() as { usage: { completion_tokens: number; total_tokens: number } };
        expect(reportedUsage.completion_tokens, name).toBe(100);
        await services.gateway.settled();
        const budget = (await app.inject({ method: 'GET', url: '/api/v1/gateway/budget', headers })).json() as { tokens_used: number };
        expect(budget.tokens_used, name).toBe(reportedUsage.total_tokens);
        // The org can go on: its budget was not exhausted by the upstream's claim.
        expect((await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('And the action items?') })).statusCode, name).toBe(200);
      }
      // A total below the sum of its parts is not believed.
      usage = { prompt_tokens: 3_000, completion_tokens: 3_000, total_tokens: 0 };
      const { org, apiKey } = await services.accounts.createOrg({ name: `usage-${Math.random().toString(36).slice(2, 8)}` });
      await services.accounts.providerKeys.set(org.id, 'openai', FAKE_CREDENTIALS.default, baseUrl);
      const headers = { authorization: `Bearer ${apiKey as string}` };
      const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('hi') });
      expect(response.json().usage.total_tokens).toBe(6_000);
      await services.gateway.settled();
      expect((await app.inject({ method: 'GET', url: '/api/v1/gateway/budget', headers })).json().tokens_used).toBe(6_000);
    } finally {
      upstream.closeAllConnections();
      await new Promise((resolve) => upstream.close(resolve));
    }
  });

  it('persists every org\'s budget usage when the database refuses one org\'s row', async () => {
    const { orgId } = await orgWithFakes([]);
    const cache = createCache({ kind: 'memory' }, 'persist-test:');
    const ledger = new BudgetLedger(cache, Date.now, createBudgetStore(services.db));
    // An org id with no org (deleted meanwhile): its row breaks the foreign key.
    for (const org of [orgId, randomUUID()]) {
      const reserved = await ledger.reserve(org, 10_000, 10, null, 0);
      if (!reserved.ok) throw new Error('reservation refused');
      await ledger.settle(reserved.reservation, 25, 0);
    }
    await expect(ledger.persist()).rejects.toBeDefined();
    const today = new Date().toISOString().slice(0, 10);
    const rows = await createBudgetStore(services.db).load([today]);
    expect(rows.find((row) => row.orgId === orgId)?.tokens).toBe(25);
    await cache.close();
  });
});
