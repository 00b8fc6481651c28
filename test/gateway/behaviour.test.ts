/**
 * T5 behavioural baselines on the AI gateway (docs/gateway.md "Behavioural baselines"): each
 * completion is observed in the profile of its API key (or of the end user the body names); once
 * the profile has enough history, a completion far from it — here a prompt twenty times the key's
 * usual size — carries a t5 finding in its threat decision and alerts, while an ordinary one does
 * not, and a key without history gets no finding at all. With PostgreSQL + Redis, two svc
 * instances share the baselines: what one learned, the other judges by.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type AppInstance } from '../../src/http/build-app.ts';
import type { SvcEvent } from '../../src/platform/events.ts';
import type { Services } from '../../src/services.ts';
import { FAKE_CREDENTIALS, startFakeProvider, type FakeProvider } from '../fakes/providers/index.ts';
import { createTestServices, memoryLog, usingPostgres, usingRedis } from '../helpers/app.ts';

const shared = usingPostgres && usingRedis;
if (!shared) console.warn('[svc tests] SKIPPED test/gateway/behaviour.test.ts "two svc instances": needs PostgreSQL + Redis (set DATABASE_URL and REDIS_URL; CI does)');

/** Ordinary requests of one key: short questions of 150–300 characters. */
const TOPICS = ['the migration of arctic terns', 'how sourdough starters work', 'the history of the printing press', 'why the sky is blue at noon', 'how to prune an apple tree', 'the rules of cricket'];
function ordinaryPrompt(index: number): string {
  const base = `Please write a short, friendly explanation of ${TOPICS[index % TOPICS.length]} for a curious twelve-year-old reader.`;
  return `${base} Keep it under ${100 + (index % 7) * 25} words and end with one question they could explore next.`.slice(0, 150 + ((index * 37) % 150));
}
/** About twenty times the usual: an ordinary long document to summarise. */
const LONG_PROMPT = `Summarise these meeting notes in five bullet points. ${Array.from({ length: 60 }, (_, index) => `Item ${index + 1}: the team reviewed the delivery schedule for the spring catalogue and agreed on next steps.`).join(' ')}`;

interface Instance {
  services: Services;
  app: AppInstance;
  events: SvcEvent[];
  lines: string[];
}

async function instance(env: Record<string, string> = {}): Promise<Instance> {
  const log = memoryLog();
  const services = await createTestServices({ env: { LOG_LEVEL: 'info', ...env }, logDestination: log.destination, services: { gateway: { timers: false } } });
  const app = await buildApp(services.config, services);
  await app.ready();
  const events: SvcEvent[] = [];
  services.events.subscribe((event) => void events.push(event));
  return { services, app, events, lines: log.lines };
}

async function close(target: Instance | undefined): Promise<void> {
  await target?.app.close();
  await target?.services.close();
}

let openai: FakeProvider;

beforeAll(async () => {
  openai = await startFakeProvider('openai');
});

afterAll(async () => {
  await openai?.close();
});

async function org(target: Instance) {
  const { org: created, apiKey } = await target.services.accounts.createOrg({ name: `t5-${Math.random().toString(36).slice(2, 8)}` });
  await target.services.accounts.providerKeys.set(created.id, 'openai', FAKE_CREDENTIALS.default, openai.baseUrl);
  return { orgId: created.id, headers: { authorization: `Bearer ${apiKey}` } };
}

const complete = (target: Instance, headers: Record<string, string>, content: string, extra: Record<string, unknown> = {}) =>
  target.app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: { provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra } });

async function learn(target: Instance, headers: Record<string, string>, count: number, extra: Record<string, unknown> = {}): Promise<void> {
  for (let index = 0; index < count; index += 1) expect((await complete(target, headers, ordinaryPrompt(index), extra)).statusCode).toBe(200);
}

/** The request log line of a request (its threat fields). */
function logLine(target: Instance, requestId: string): { decision?: string; pattern?: string | null } {
  target.services.requestLog.flush();
  const line = target.lines
    .flatMap((text) => text.split('\n').filter((entry) => entry.trim() !== ''))
    .map((text) => JSON.parse(text) as Record<string, unknown>)
    .find((entry) => entry.request_id === requestId && 'decision' in entry);
  expect(line).toBeDefined();
  return line as { decision?: string; pattern?: string | null };
}

const alertsOf = (target: Instance, requestId: string) => target.events.filter((event) => event.event === 'threat.alert' && event.data.request_id === requestId);

describe('T5 behavioural baselines of AI-gateway completions', { timeout: 180_000 }, () => {
  let one: Instance;

  beforeAll(async () => {
    one = await instance();
  }, 120_000);

  afterAll(async () => {
    await close(one);
  });

  it('alerts on a prompt twenty times the key’s usual size with a t5.size finding, and passes an ordinary one without', async () => {
    const { headers } = await org(one);
    await learn(one, headers, 60);

    const normal = await complete(one, headers, ordinaryPrompt(3));
    expect(normal.statusCode).toBe(200);
    const normalId = String(normal.headers['x-request-id']);
    expect(logLine(one, normalId).pattern ?? '').not.toMatch(/^t5\./);
    expect(alertsOf(one, normalId)).toEqual([]);

    const large = await complete(one, headers, LONG_PROMPT);
    // Behaviour alone alerts, never refuses.
    expect(large.statusCode).toBe(200);
    const largeId = String(large.headers['x-request-id']);
    expect(logLine(one, largeId)).toMatchObject({ decision: 'alert', pattern: 't5.size' });
    const [alert] = alertsOf(one, largeId);
    expect(alert?.data.pattern_ids).toContain('t5.size');
  });

  it('gives no finding to a key without history, however large its first prompt', async () => {
    const { headers } = await org(one);
    await learn(one, headers, 5);
    const large = await complete(one, headers, LONG_PROMPT);
    expect(large.statusCode).toBe(200);
    const id = String(large.headers['x-request-id']);
    expect(logLine(one, id).pattern ?? '').not.toMatch(/^t5\./);
    expect(alertsOf(one, id)).toEqual([]);
  });

  it('learns per end user when the body names one: another user of the same key starts cold', async () => {
    const { headers } = await org(one);
    await learn(one, headers, 60, { user: 'user-alice' });
    const bob = await complete(one, headers, LONG_PROMPT, { user: 'user-bob' });
    expect(alertsOf(one, String(bob.headers['x-request-id']))).toEqual([]);
    const alice = await complete(one, headers, LONG_PROMPT, { user: 'user-alice' });
    expect(alertsOf(one, String(alice.headers['x-request-id']))[0]?.data.pattern_ids).toContain('t5.size');
  });
});

describe('T5 baselines of completions shared by two svc instances on PostgreSQL + Redis', { timeout: 180_000 }, () => {
  let first: Instance | undefined;
  let second: Instance | undefined;

  beforeAll(async () => {
    if (!shared) return;
    const prefix = `test:t5-shared-${Date.now()}:`;
    first = await instance({ CACHE_PREFIX: prefix });
    second = await instance({ CACHE_PREFIX: prefix });
  }, 120_000);

  afterAll(async () => {
    await close(first);
    await close(second);
  });

  it.skipIf(!shared)('judges on one instance by the baseline learned on the other', async () => {
    const a = first!;
    const b = second!;
    const { headers } = await org(a);
    await learn(a, headers, 60);
    const normal = await complete(b, headers, ordinaryPrompt(4));
    expect(alertsOf(b, String(normal.headers['x-request-id']))).toEqual([]);
    const large = await complete(b, headers, LONG_PROMPT);
    expect(large.statusCode).toBe(200);
    expect(alertsOf(b, String(large.headers['x-request-id']))[0]?.data.pattern_ids).toContain('t5.size');
  });
});
