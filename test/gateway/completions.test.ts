import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTestServices } from '../helpers/app.ts';
import { buildApp, type AppInstance } from '../../src/http/build-app.ts';
import type { Services } from '../../src/services.ts';
import { scriptedInvokers } from './scripted-invokers.ts';
import type { GatewayService } from '../../src/gateway/index.ts';
import { createGateway } from '../../src/gateway/index.ts';
import { assertPublicUrl } from '../../src/platform/ssrf.ts';

const script = scriptedInvokers();
const events: Array<{ orgId: string; event: string; data: Record<string, unknown> }> = [];
let services: Services;
let app: AppInstance;
let gateway: GatewayService;

beforeAll(async () => {
  services = await createTestServices({
    services: {
      gateway: {
        invokers: script.invokers,
        timers: false,
        retryPolicy: { attemptsPerProvider: 2, baseDelayMs: 1, maxDelayMs: 20, totalBudgetMs: 2_000, attemptTimeoutMs: 1_000 },
        breakerPolicy: { windowMs: 10_000, minRequests: 4, failureRateThreshold: 0.5, openMs: 2_000, halfOpenMaxProbes: 1, halfOpenSuccesses: 1 },
        costUsd: (_provider, _model, usage) => usage.promptTokens * 0.000001 + usage.completionTokens * 0.000002,
      },
    },
  });
  services.events.subscribe((event) => void events.push({ orgId: event.orgId, event: event.event, data: event.data }));
  app = await buildApp(services.config, services);
  await app.ready();
  gateway = services.gateway;
});

afterAll(async () => {
  await app?.close();
  await services?.close();
});

beforeEach(() => {
  script.calls.length = 0;
  events.length = 0;
});

async function newOrg(options: { plan?: 'community' | 'starter' | 'pro' | 'enterprise'; providers?: string[] } = {}) {
  const { org, apiKey } = await services.accounts.createOrg({ name: `gw-${Math.random().toString(36).slice(2, 8)}`, ...(options.plan ? { plan: options.plan } : {}) });
  for (const provider of options.providers ?? ['openai']) await services.accounts.providerKeys.set(org.id, provider, `sk-${provider}-key-000000000000`, null);
  return { orgId: org.id as string, apiKey: apiKey as string };
}

function complete(apiKey: string, body: unknown) {
  return app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers: { authorization: `Bearer ${apiKey}` }, payload: body as Record<string, unknown> });
}

const hello = { provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] };

describe('POST /api/v1/gateway/completions', () => {
  it('answers 502 NO_PROVIDERS when the org has no upstream key for the provider', async () => {
    const { apiKey } = await newOrg({ providers: [] });
    const response = await complete(apiKey, hello);
    expect(response.statusCode).toBe(502);
    expect(response.json().error.code).toBe('NO_PROVIDERS');
    expect(script.calls).toHaveLength(0);
  });

  it('returns the service envelope with usage, cost and the AI transparency headers', async () => {
    const { apiKey } = await newOrg();
    const response = await complete(apiKey, hello);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({
      provider: 'openai',
      model: 'gpt-4o-mini',
      content: 'echo: hello',
      finish_reason: 'stop',
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      verification: expect.objectContaining({ passed: true, action: 'none' }),
      response_filter: null,
    });
    expect(body.request_id).toBe(response.headers['x-request-id']);
    expect(body.cost_usd).toBeCloseTo(0.00002, 10);
    expect(typeof body.latency_ms).toBe('number');
    expect(response.headers['x-ai-generated']).toBe('true');
    expect(response.headers['x-ai-risk-class']).toBe('limited_risk');
    expect(response.headers['x-ccpa-automated-decision']).toBe('false');
  });

  it.each([
    [{ ...hello, messages: [] }, 'body.messages'],
    [{ ...hello, messages: [{ role: 'wizard', content: 'x' }] }, 'body.messages.0.role'],
    [{ ...hello, max_tokens: 0 }, 'body.max_tokens'],
    [{ ...hello, max_tokens: 1_000_000 }, 'body.max_tokens'],
    [{ ...hello, temperature: 3 }, 'body.temperature'],
    [{ provider: 'openai', messages: hello.messages }, 'body.model'],
    [{ ...hello, provider: 'skynet' }, 'body.provider'],
    [{ ...hello, stream: 'yes' }, 'body.stream'],
  ])('rejects an invalid body with 400 VALIDATION_FAILED naming the field (%#)', async (body, field) => {
    const { apiKey } = await newOrg();
    const response = await complete(apiKey, body);
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('VALIDATION_FAILED');
    expect(String(response.json().error.field)).toContain(field);
  });

  it('rejects a body above 1 MiB with 413 BODY_TOO_LARGE', async () => {
    const { apiKey } = await newOrg();
    const response = await complete(apiKey, { ...hello, messages: [{ role: 'user', content: 'x'.repeat(1_100_000) }] });
    expect(response.statusCode).toBe(413);
    expect(response.json().error.code).toBe('BODY_TOO_LARGE');
  });

  it('rejects a read-scope key with 403 SCOPE_INSUFFICIENT', async () => {
    const { orgId } = await newOrg();
    const { apiKey } = await services.accounts.createKey(orgId, { scope: 'read', keyClass: 'live' });
    const response = await complete(apiKey, hello);
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('SCOPE_INSUFFICIENT');
  });

  it('redacts PII before the request leaves and reports it in response_filter', async () => {
    const { apiKey } = await newOrg();
    const response = await complete(apiKey, { ...hello, messages: [{ role: 'user', content: 'Mail jane.doe@example.com, card 4111 1111 1111 1111' }] });
    expect(response.statusCode).toBe(200);
    const sent = script.calls[0]!.request.messages[0]!.content;
    expect(sent).toBe('Mail [EMAIL_1], card [CARD_1]');
    expect(response.json().response_filter).toEqual({ pii: { mode: 'redact', redacted: { EMAIL: 1, CARD: 1 }, total: 2, restored: false } });
  });

  it('restores placeholders in the response when the org opted in', async () => {
    const { apiKey } = await newOrg();
    await app.inject({ method: 'PUT', url: '/api/v1/gateway/pii', headers: { authorization: `Bearer ${apiKey}` }, payload: { mode: 'redact', restore_in_response: true } });
    const response = await complete(apiKey, { ...hello, messages: [{ role: 'user', content: 'write to jane.doe@example.com' }] });
    expect(script.calls[0]!.request.messages[0]!.content).toBe('write to [EMAIL_1]');
    expect(response.json().content).toBe('echo: write to jane.doe@example.com');
  });

  it('blocks a request containing PII with 422 PII_BLOCKED in block mode, without calling upstream', async () => {
    const { apiKey } = await newOrg();
    const set = await app.inject({ method: 'PUT', url: '/api/v1/gateway/pii', headers: { authorization: `Bearer ${apiKey}` }, payload: { mode: 'block' } });
    expect(set.statusCode).toBe(200);
    const response = await complete(apiKey, { ...hello, messages: [{ role: 'user', content: 'my SSN is 123-45-6789' }] });
    expect(response.statusCode).toBe(422);
    expect(response.json().error.code).toBe('PII_BLOCKED');
    expect(response.json().error.pii_types).toEqual(['SSN']);
    expect(script.calls).toHaveLength(0);
  });

  it('retries a 429 on the same provider and then succeeds', async () => {
    const { apiKey } = await newOrg();
    script.set('openai', [{ kind: 'fail', code: 'rate_limited', status: 429, retryAfterMs: 5 }, { kind: 'ok' }]);
    const response = await complete(apiKey, hello);
    expect(response.statusCode).toBe(200);
    expect(script.calls.map((call) => call.provider)).toEqual(['openai', 'openai']);
    script.set('openai', { kind: 'ok' });
  });

  it('fails over to the next configured provider with the equivalent model', async () => {
    const { apiKey } = await newOrg({ providers: ['openai', 'anthropic'] });
    const put = await app.inject({
      method: 'PUT',
      url: '/api/v1/gateway/routing',
      headers: { authorization: `Bearer ${apiKey}` },
      payload: { strategy: 'failover', providers: ['openai', 'anthropic'], health_check_interval_s: 30 },
    });
    expect(put.statusCode).toBe(200);
    script.set('openai', { kind: 'fail', code: 'server', status: 500 });
    const response = await complete(apiKey, hello);
    expect(response.statusCode).toBe(200);
    expect(response.json().provider).toBe('anthropic');
    expect(script.calls.at(-1)!.request.model).toBe('claude-3-5-haiku-latest');
    script.set('openai', { kind: 'ok' });
  });

  it('maps an upstream auth failure with no other provider to 502 UPSTREAM_AUTH_FAILED without retrying', async () => {
    const { apiKey } = await newOrg();
    script.set('openai', { kind: 'fail', code: 'auth', status: 401 });
    const response = await complete(apiKey, hello);
    expect(response.statusCode).toBe(502);
    expect(response.json().error.code).toBe('UPSTREAM_AUTH_FAILED');
    expect(script.calls).toHaveLength(1);
    script.set('openai', { kind: 'ok' });
  });

  it('does not count test-class keys against the daily budget', async () => {
    const { orgId, apiKey: adminKey } = await newOrg();
    const { apiKey } = await services.accounts.createKey(orgId, { scope: 'write', keyClass: 'test' });
    expect((await complete(apiKey, hello)).statusCode).toBe(200);
    const budget = await app.inject({ method: 'GET', url: '/api/v1/gateway/budget', headers: { authorization: `Bearer ${adminKey}` } });
    expect(budget.json().tokens_used).toBe(0);
    expect((await complete(adminKey, hello)).statusCode).toBe(200);
    await vi.waitFor(async () => {
      const after = await app.inject({ method: 'GET', url: '/api/v1/gateway/budget', headers: { authorization: `Bearer ${adminKey}` } });
      expect(after.json().tokens_used).toBe(15);
    });
  });
});

describe('SSRF screening at call time', () => {
  it('refuses an org base URL that points at a private address when private targets are not allowed', async () => {
    const { orgId } = await newOrg({ providers: [] });
    await services.accounts.providerKeys.set(orgId, 'openai', 'sk-openai-key-000000000000', 'http://127.0.0.1:9/v1');
    const strict = createGateway({
      db: services.db,
      cache: services.cache,
      logger: services.logger,
      metrics: services.metrics,
      envKeys: services.config.providerEnvKeys,
      orgKeys: services.accounts.providerKeys,
      events: services.events,
      invokers: script.invokers,
      timers: false,
      checkTarget: (url) => assertPublicUrl(url, { allowPrivate: false }),
    });
    const caller = { orgId, plan: 'starter', keyClass: 'live' as const, requestId: 'r' };
    await expect(strict.prepare({ provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }, caller)).rejects.toMatchObject({ code: 'TARGET_FORBIDDEN' });
    expect(script.calls).toHaveLength(0);
    strict.close();
  });
});

describe('streaming', () => {
  function dataLines(payload: string): string[] {
    return payload
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => line.slice(6));
  }

  it('streams svc chunks, a final event with usage and cost, then [DONE]', async () => {
    const { apiKey } = await newOrg();
    const response = await complete(apiKey, { ...hello, stream: true });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/event-stream');
    expect(response.headers['x-ai-generated']).toBe('true');
    // The head carries the headers set before the take-over and the stream's own, each once.
    expect(response.headers['cache-control']).toBe('no-cache, no-transform');
    expect(response.headers['x-accel-buffering']).toBe('no');
    expect(response.headers['x-svc-provider-used']).toBe('openai');
    expect(response.headers['x-ratelimit-limit']).toBeDefined();
    expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const lines = dataLines(response.payload);
    expect(lines.at(-1)).toBe('[DONE]');
    const chunks = lines.slice(0, -1).map((line) => JSON.parse(line));
    const deltas = chunks.filter((chunk) => 'delta' in chunk);
    expect(deltas.map((chunk) => chunk.delta).join('')).toBe('echo: hello');
    expect(deltas.map((chunk) => chunk.index)).toEqual(deltas.map((_, index) => index));
    const final = chunks.at(-1);
    expect(final).toMatchObject({ done: true, provider: 'openai', finish_reason: 'stop', usage: { prompt_tokens: 10 } });
    expect(typeof final.cost_usd).toBe('number');
    expect(final.request_id).toBe(response.headers['x-request-id']);
  });

  it('ends a stream that breaks after the first byte with an explicit error event and no [DONE]', async () => {
    const { apiKey } = await newOrg({ providers: ['openai', 'anthropic'] });
    script.set('openai', { kind: 'stream-break-after', chunks: ['partial ', 'answer'] });
    const response = await complete(apiKey, { ...hello, stream: true });
    const lines = dataLines(response.payload);
    expect(lines).not.toContain('[DONE]');
    const last = JSON.parse(lines.at(-1)!);
    expect(last.error.code).toBe('UPSTREAM_ERROR');
    expect(script.calls).toHaveLength(1); // no failover once bytes reached the client
    script.set('openai', { kind: 'ok' });
  });

  it('fails over before the first byte of a stream', async () => {
    const { apiKey } = await newOrg({ providers: ['openai', 'anthropic'] });
    await app.inject({ method: 'PUT', url: '/api/v1/gateway/routing', headers: { authorization: `Bearer ${apiKey}` }, payload: { strategy: 'failover', providers: ['openai', 'anthropic'] } });
    script.set('openai', { kind: 'stream-break-after', chunks: [] });
    const response = await complete(apiKey, { ...hello, stream: true });
    const lines = dataLines(response.payload);
    expect(lines.at(-1)).toBe('[DONE]');
    expect(JSON.parse(lines.at(-2)!).provider).toBe('anthropic');
    script.set('openai', { kind: 'ok' });
  });
});

describe('budgets', () => {
  it('never lets concurrent requests overshoot the daily token budget', async () => {
    const { orgId } = await newOrg({ plan: 'community' });
    const caller = { orgId, plan: 'community', keyClass: 'live' as const, requestId: 'r' };
    const body = { provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hi' }], max_tokens: 900 };
    script.set('openai', { kind: 'ok', delayMs: 50 }); // keep every request in flight together
    const outcomes = await Promise.allSettled(
      Array.from({ length: 40 }, async () => {
        const prepared = await gateway.prepare(body, caller);
        return gateway.complete(prepared);
      }),
    );
    const ok = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected') as PromiseRejectedResult[];
    // Each reservation is 900 + 5 tokens; 10 000 / 905 → at most 11 can be in flight at once.
    expect(ok.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((outcome) => (outcome.reason as { code?: string }).code === 'BUDGET_EXHAUSTED')).toBe(true);
    await gateway.settled(); // settlements are applied in batches after the responses
    const usage = await gateway.budget.usage(orgId);
    expect(usage.tokens).toBeLessThanOrEqual(10_000);
    expect(usage.tokens).toBe(ok.length * 15);
    script.set('openai', { kind: 'ok' });
  });

  it('answers 429 BUDGET_EXHAUSTED with Retry-After and emits a warning at 80 percent', async () => {
    const { orgId, apiKey } = await newOrg({ plan: 'community' });
    script.set('openai', { kind: 'ok', promptTokens: 4_000, completionTokens: 4_100 });
    expect((await complete(apiKey, { ...hello, max_tokens: 10 })).statusCode).toBe(200);
    // Settlement finishes after the response is sent (the reservation covered the request meanwhile).
    await vi.waitFor(() => expect(events.some((event) => event.event === 'budget.warning' && event.orgId === orgId)).toBe(true));
    const ratio = await services.metrics.registry.getSingleMetricAsString('svc_token_budget_used_ratio');
    expect(ratio).toContain(`svc_token_budget_used_ratio{org_id="${orgId}"} 0.8`);
    const refused = await complete(apiKey, { ...hello, max_tokens: 2_000 });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe('BUDGET_EXHAUSTED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    script.set('openai', { kind: 'ok' });
  });

  it('enforces the org daily USD cap', async () => {
    const { apiKey } = await newOrg();
    const put = await app.inject({ method: 'PUT', url: '/api/v1/gateway/budget', headers: { authorization: `Bearer ${apiKey}` }, payload: { daily_usd_cap: 0.001 } });
    expect(put.statusCode).toBe(200);
    const refused = await complete(apiKey, { ...hello, max_tokens: 1_000 });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.budget).toBe('daily_usd');
  });
});

describe('circuit breakers', () => {
  it('opens after the failure threshold, skips the provider, probes after openMs and closes again', async () => {
    const { apiKey } = await newOrg({ providers: ['groq'] });
    script.set('groq', { kind: 'fail', code: 'overloaded', status: 503 });
    const request = { provider: 'groq', model: 'llama-3.1-8b-instant', messages: [{ role: 'user', content: 'x' }] };
    for (let index = 0; index < 2; index += 1) expect((await complete(apiKey, request)).statusCode).toBe(503);
    const health = await app.inject({ method: 'GET', url: '/api/v1/gateway/providers/health', headers: { authorization: `Bearer ${apiKey}` } });
    expect(health.json().providers.find((entry: { gateway_id: string }) => entry.gateway_id === 'groq').state).toBe('open');
    const metrics = await services.metrics.registry.getSingleMetricAsString('svc_gateway_health');
    expect(metrics).toContain('svc_gateway_health{gateway_id="groq",kind="ai_provider"} 0');
    expect(events.some((event) => event.event === 'gateway.down' && event.data.gateway_name === 'groq')).toBe(true);

    const before = script.calls.length;
    const skipped = await complete(apiKey, request);
    expect(skipped.statusCode).toBe(503);
    expect(skipped.json().error.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(script.calls.length).toBe(before); // open: not called at all

    // openMs is 2 s, not less: the checks above run while the breaker is open, and a busy machine
    // took longer than 200 ms over them (the skipped call was then the half-open probe).
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    script.set('groq', { kind: 'ok' });
    expect((await complete(apiKey, request)).statusCode).toBe(200); // the half-open probe
    expect(gateway.breakers.get('groq').state(Date.now())).toBe('closed');
  });

  it('moves an open breaker to half-open when an active health check succeeds', async () => {
    const { apiKey } = await newOrg({ providers: ['mistral'] });
    script.set('mistral', { kind: 'fail', code: 'server', status: 500 });
    const request = { provider: 'mistral', model: 'mistral-small-latest', messages: [{ role: 'user', content: 'x' }] };
    for (let index = 0; index < 2; index += 1) await complete(apiKey, request);
    expect(gateway.breakers.get('mistral').state(Date.now())).toBe('open');
    script.set('mistral', { kind: 'ok' });
    expect(await gateway.runHealthChecks()).toBeGreaterThan(0);
    expect(script.calls.at(-1)!.request.max_tokens).toBe(1);
    expect(gateway.breakers.get('mistral').state(Date.now())).toBe('half_open');
  });
});

describe('admin endpoints', () => {
  it('stores the routing configuration per org and rejects unknown providers', async () => {
    const { apiKey } = await newOrg();
    const headers = { authorization: `Bearer ${apiKey}` };
    expect((await app.inject({ method: 'GET', url: '/api/v1/gateway/routing', headers })).statusCode).toBe(404);
    const bad = await app.inject({ method: 'PUT', url: '/api/v1/gateway/routing', headers, payload: { strategy: 'failover', providers: ['nope'] } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('VALIDATION_FAILED');
    const badStrategy = await app.inject({ method: 'PUT', url: '/api/v1/gateway/routing', headers, payload: { strategy: 'random', providers: ['openai'] } });
    expect(badStrategy.json().error.code).toBe('VALIDATION_FAILED');
    await app.inject({ method: 'PUT', url: '/api/v1/gateway/routing', headers, payload: { strategy: 'round_robin', providers: ['openai', 'groq'] } });
    const got = await app.inject({ method: 'GET', url: '/api/v1/gateway/routing', headers });
    expect(got.json()).toEqual({ strategy: 'round_robin', providers: ['openai', 'groq'], health_check_interval_s: 30 });
  });

  it('does not show one org the routing configuration of another', async () => {
    const first = await newOrg();
    const second = await newOrg();
    await app.inject({ method: 'PUT', url: '/api/v1/gateway/routing', headers: { authorization: `Bearer ${first.apiKey}` }, payload: { strategy: 'failover', providers: ['openai'] } });
    expect((await app.inject({ method: 'GET', url: '/api/v1/gateway/routing', headers: { authorization: `Bearer ${second.apiKey}` } })).statusCode).toBe(404);
  });

  it('routes provider "auto" round-robin over the configured providers', async () => {
    const { apiKey } = await newOrg({ providers: ['openai', 'groq'] });
    await app.inject({ method: 'PUT', url: '/api/v1/gateway/routing', headers: { authorization: `Bearer ${apiKey}` }, payload: { strategy: 'round_robin', providers: ['openai', 'groq'] } });
    const used: string[] = [];
    for (let index = 0; index < 4; index += 1) {
      const response = await complete(apiKey, { provider: 'auto', model: 'fast', messages: [{ role: 'user', content: 'x' }] });
      used.push(response.json().provider);
    }
    expect(used.filter((provider) => provider === 'openai')).toHaveLength(2);
    expect(used.filter((provider) => provider === 'groq')).toHaveLength(2);
  });
});
