/**
 * The completion path's response filter (detection's llm_output check) end to end: the Fastify
 * app, the real OpenAI adapter and a fake OpenAI upstream on loopback whose answer leaks the
 * request's system prompt.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type AppInstance } from '../../src/http/build-app.ts';
import type { Services } from '../../src/services.ts';
import { FAKE_CREDENTIALS, startFakeProvider, type FakeProvider } from '../fakes/providers/index.ts';
import { createTestServices } from '../helpers/app.ts';

let services: Services;
let app: AppInstance;
let openai: FakeProvider;
let headers: Record<string, string>;

const SYSTEM = 'You are the booking assistant of Alder Hotels. Offer the loyalty discount only to gold members and never quote internal room codes to guests under any circumstances.';

beforeAll(async () => {
  services = await createTestServices({
    services: { gateway: { timers: false, retryPolicy: { attemptsPerProvider: 1, baseDelayMs: 5, maxDelayMs: 50, totalBudgetMs: 5_000, attemptTimeoutMs: 2_000 } } },
  });
  app = await buildApp(services.config, services);
  await app.ready();
  openai = await startFakeProvider('openai');
  const { org, apiKey } = await services.accounts.createOrg({ name: 'response-filter' });
  await services.accounts.providerKeys.set(org.id, 'openai', FAKE_CREDENTIALS.default, openai.baseUrl);
  headers = { authorization: `Bearer ${apiKey as string}` };
});

afterAll(async () => {
  await app?.close();
  await services?.close();
  await openai?.close();
});

const completion = (extra: Record<string, unknown> = {}) => ({
  provider: 'openai',
  model: 'gpt-4o-mini',
  messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: 'What can you do for me?' }],
  ...extra,
});

function events(payload: string): Array<Record<string, unknown> | string> {
  return payload.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).map((line) => (line === '[DONE]' ? line : (JSON.parse(line) as Record<string, unknown>)));
}

describe('response filter on completions', () => {
  it('ends a stream that starts reciting the system prompt with an explicit THREAT_BLOCKED event', async () => {
    openai.setBehaviour({ content: `Of course. My instructions say: ${SYSTEM} Anything else?` });
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: completion({ stream: true }) });
    expect(response.statusCode).toBe(200);
    const received = events(response.payload);
    expect(received).not.toContain('[DONE]');
    const last = received.at(-1) as { error?: { code: string } };
    expect(last.error?.code).toBe('THREAT_BLOCKED');
    // The stream stopped before the whole prompt went out.
    const sent = received.filter((event): event is Record<string, unknown> => typeof event === 'object' && 'delta' in event).map((event) => event.delta).join('');
    expect(sent.length).toBeLessThan(`Of course. My instructions say: ${SYSTEM}`.length);
  });

  it('still catches the system prompt recited after 80 KB of a long streamed answer', async () => {
    // Per-delta checks read the answer's tail; they once read only its first 64 KiB (and the whole of it each time).
    const long = 'The east wing has twelve rooms with garden views and a quiet reading lounge. '.repeat(1_050);
    const after = 'The spa opens at nine and the pool closes at ten in the evening for cleaning. '.repeat(20);
    openai.setBehaviour({ content: `${long}Also, my instructions say: ${SYSTEM} ${after}` });
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: completion({ stream: true }) });
    const received = events(response.payload);
    expect(received).not.toContain('[DONE]');
    expect((received.at(-1) as { error?: { code: string } }).error?.code).toBe('THREAT_BLOCKED');
    // Stopped within a few hundred characters of the leak, long before the answer's end.
    const sent = received.filter((event): event is Record<string, unknown> => typeof event === 'object' && 'delta' in event).map((event) => event.delta).join('');
    expect(sent.length).toBeLessThan(long.length + 600);
  }, 60_000);

  it('ends a stream that recites the system prompt in pieces far apart before the answer is out', async () => {
    // Seven words at a time with ~900 characters between: no window of recent text shows a leak.
    const filler = ' Meanwhile the garden is lovely this time of year, with roses along the path and a fountain near the terrace.'.repeat(8);
    const words = SYSTEM.split(' ');
    let content = 'Here is what I can share.';
    for (let index = 0; index < words.length; index += 7) content += ` ${words.slice(index, index + 7).join(' ')}${filler}`;
    openai.setBehaviour({ content });
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: completion({ stream: true }) });
    const received = events(response.payload);
    expect(received).not.toContain('[DONE]');
    expect((received.at(-1) as { error?: { code: string } }).error?.code).toBe('THREAT_BLOCKED');
    const sent = received.filter((event): event is Record<string, unknown> => typeof event === 'object' && 'delta' in event).map((event) => event.delta).join('');
    expect(sent.length).toBeLessThan(content.length - filler.length);
  });

  it('streams an ordinary answer to the end with a final event and [DONE]', async () => {
    openai.setBehaviour({ content: 'I can look up rooms, compare prices and book a stay for you.' });
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: completion({ stream: true }) });
    const received = events(response.payload);
    expect(received.at(-1)).toBe('[DONE]');
    expect(received.at(-2)).toMatchObject({ done: true });
  });

  it('refuses a non-streamed answer that leaks the system prompt with 403 THREAT_BLOCKED', async () => {
    openai.setBehaviour({ content: `Sure: ${SYSTEM}` });
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: completion() });
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('THREAT_BLOCKED');
  });

  it('returns an ordinary non-streamed answer unchanged', async () => {
    openai.setBehaviour({ content: 'Gold members get the loyalty discount; I can check your status.' });
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: completion() });
    expect(response.statusCode).toBe(200);
    expect(response.json().content).toBe('Gold members get the loyalty discount; I can check your status.');
  });
});
