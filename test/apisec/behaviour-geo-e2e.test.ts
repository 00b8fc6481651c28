/**
 * End to end through a listening svc and a real loopback backend: the T5 behavioural tier
 * (geography and credential-stuffing anomalies reach the threat events of gateway traffic), the
 * failed-logins feed (repeated 401/403 answers of the backend to one client escalate it to a
 * challenge, then to a block; monitor mode only logs), and geo-blocking rules enforced on gateway
 * traffic with geoip-lite's bundled database. Client addresses come from X-Forwarded-For
 * (TRUST_PROXY=true), as behind a load balancer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { solveChallenge } from '../../src/apisec/index.ts';
import { createBehaviourBaseline, type BehaviourBaseline } from '../../src/detection/behaviour/index.ts';
import { buildApp, type AppInstance } from '../../src/http/build-app.ts';
import { createCache } from '../../src/platform/cache.ts';
import type { SvcEvent } from '../../src/platform/events.ts';
import type { Services } from '../../src/services.ts';
import { createTestServices, memoryLog } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';
import { startBackend, type Backend } from './backend.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are read loosely and asserted field by field
type Loose = Record<string, any>;

let services: Services;
let app: AppInstance;
let base: string;
let backend: Backend;
let apiKey: string;
let behaviour: BehaviourBaseline;
const events: SvcEvent[] = [];
const log = memoryLog();

async function api(method: string, path: string, body?: unknown) {
  const answer = await request(`${base}${path}`, {
    method: method as 'GET',
    headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await answer.body.text();
  return { status: answer.statusCode, body: text === '' ? null : (JSON.parse(text) as Loose) };
}

async function createGateway(body: Record<string, unknown>): Promise<string> {
  const created = await api('POST', '/api/v1/gateways', { backend_url: backend.url, health_check: null, block_details: 'full', ...body });
  expect(created.status).toBe(201);
  return created.body!.id as string;
}

const BROWSER = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36', accept: 'application/json', 'accept-language': 'en', 'accept-encoding': 'gzip' };

async function send(path: string, clientIp: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  const answer = await request(`${base}${path}`, {
    method: (options.method ?? 'GET') as 'GET',
    headers: { ...BROWSER, 'x-forwarded-for': clientIp, ...options.headers },
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  const text = await answer.body.text();
  return { status: answer.statusCode, json: () => JSON.parse(text) as Loose };
}

const login = (gateway: string, clientIp: string, username: string, password: string, headers: Record<string, string> = {}) =>
  send(`/gw/${gateway}/login`, clientIp, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ username, password }) });

const CHALLENGE_AFTER = 6;
const BLOCK_AFTER = 10;

const eventsFor = (gateway: string, type: string) => events.filter((event) => event.event === type && event.gatewayId === gateway);
const patternsOf = (event: SvcEvent) => event.data.pattern_ids as string[];
const logLines = (gateway: string) =>
  log.lines.flatMap((chunk) => chunk.split('\n')).filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as Loose).filter((line) => line.gateway_id === gateway);
/** The gateway's request log lines once there are `count` (each is written when its answer ends and held back briefly). */
const loggedLines = (gateway: string, count: number) => waitFor(() => (logLines(gateway).length >= count ? logLines(gateway) : undefined));

beforeAll(async () => {
  backend = await startBackend();
  // The production baseline with one default lowered: 10 login events of history before stuffing
  // is scored (default 20), so the test runs in seconds.
  behaviour = createBehaviourBaseline(createCache({ kind: 'memory' }, 'test:'), { namespace: 'e2e-t5', minLoginEvents: 10 });
  services = await createTestServices({
    logDestination: log.destination,
    env: { LOG_LEVEL: 'info', TRUST_PROXY: 'true', FEATURE_GEO_BLOCKING: 'true' },
    services: { apisec: { challengeDifficulty: 8, verifyCrawlers: false, behaviour, failedAuthPolicy: { windowMs: 60_000, challengeAfter: CHALLENGE_AFTER, blockAfter: BLOCK_AFTER } } },
  });
  services.events.subscribe((event) => void events.push(event));
  app = await buildApp(services.config, services);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  apiKey = (await services.accounts.createOrg({ name: 'apisec-t5-geo' })).apiKey;
}, 180_000);

afterAll(async () => {
  await app?.close();
  await services?.close();
  await backend?.close();
});

describe('failed logins through the proxy', () => {
  it('challenges a client after repeated 401s from the backend, lets a solved challenge through, then blocks it', async () => {
    const gateway = await createGateway({ name: 'login (block)', mode: 'block' });
    const attacker = '203.0.113.10';
    for (let attempt = 0; attempt < CHALLENGE_AFTER; attempt += 1) expect((await login(gateway, attacker, 'alice', `guess-${attempt}`)).status).toBe(401);

    const challenged = await login(gateway, attacker, 'alice', 'challenged');
    expect(challenged.status).toBe(403);
    expect(challenged.json().error.code).toBe('CHALLENGE_REQUIRED');
    // Another client of the same gateway is not affected.
    expect((await login(gateway, '203.0.113.11', 'bob', 'correct horse')).status).toBe(200);

    const { token, verify_url: verifyUrl } = challenged.json().error.challenge as { token: string; verify_url: string };
    const cleared = await send(verifyUrl, attacker, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token, nonce: solveChallenge(token, 8) }) });
    expect(cleared.status).toBe(200);
    const clearance = { 'x-svc-clearance': cleared.json().clearance as string };
    // The challenged attempt never reached the backend; with the clearance the client goes on until the block threshold.
    for (let attempt = CHALLENGE_AFTER; attempt < BLOCK_AFTER; attempt += 1) expect((await login(gateway, attacker, 'alice', `guess-${attempt}`, clearance)).status).toBe(401);

    const blocked = await login(gateway, attacker, 'alice', 'blocked', clearance);
    expect(blocked.status).toBe(403);
    expect(blocked.json().error.code).toBe('THREAT_BLOCKED');
    expect(blocked.json().error.decision.patterns_matched[0].id).toBe('t5.failed_auth');
    // Refused at svc: the backend saw BLOCK_AFTER wrong passwords from this client, no more.
    const fromAttacker = backend.received.filter((entry) => entry.url === '/login' && String(entry.headers['x-forwarded-for']).split(',')[0] === attacker);
    expect(fromAttacker).toHaveLength(BLOCK_AFTER);
    expect(eventsFor(gateway, 'threat.blocked').some((event) => patternsOf(event).includes('t5.failed_auth'))).toBe(true);
  });

  it('only logs the escalation on a monitor-mode gateway', async () => {
    const gateway = await createGateway({ name: 'login (monitor)', mode: 'monitor' });
    const attacker = '203.0.113.20';
    for (let attempt = 0; attempt <= BLOCK_AFTER; attempt += 1) expect((await login(gateway, attacker, 'carol', `guess-${attempt}`)).status).toBe(401);
    const lines = (await loggedLines(gateway, BLOCK_AFTER + 1)).filter((line) => line.decision !== undefined);
    expect(lines).toHaveLength(BLOCK_AFTER + 1);
    expect(lines[0]!.decision).not.toBe('block');
    expect(lines[lines.length - 1]!.decision).toBe('block');
  });

  it('does not count successful logins', async () => {
    const gateway = await createGateway({ name: 'login (busy user)', mode: 'block' });
    for (let attempt = 0; attempt < 12; attempt += 1) expect((await login(gateway, '203.0.113.30', 'dave', 'correct horse')).status).toBe(200);
  });
});

describe('T5 behavioural baselines through the proxy', () => {
  // Behaviour is weak evidence: it scores and names its anomaly (t5.<kind>) in the request log
  // line and the threat events, and never refuses a request on its own.
  it('names a request from a country the endpoint has never seen as a geo anomaly, and forwards it', async () => {
    const gateway = await createGateway({ name: 'geo baseline', mode: 'block' });
    // History: 1,000 requests from British addresses (geoip-lite: 81.2.69.0/24 is GB) seeded into
    // the endpoint's baseline, as days of traffic would leave it (an unseen country's smoothed share
    // must fall below ~0.1 % before it reaches z = 3), then 40 more through the proxy.
    for (let index = 0; index < 1_000; index += 1) await behaviour.observe({ endpoint: `${gateway} GET /items`, ip: `81.2.69.${index % 200}` });
    const history = 40;
    for (let index = 0; index < history; index += 1) expect((await send(`/gw/${gateway}/items`, `81.2.69.${100 + index}`)).status).toBe(200);
    expect((await send(`/gw/${gateway}/items`, '175.45.176.1')).status).toBe(200);
    const lines = await loggedLines(gateway, history + 1);
    expect(lines).toHaveLength(history + 1);
    expect(lines.slice(0, history).filter((line) => line.pattern === 't5.geo')).toHaveLength(0);
    expect(lines[history]).toMatchObject({ status: 200, pattern: 't5.geo' });
    expect(lines[history]!.threat_score).toBeGreaterThan(0);
  });

  it('names one client cycling through many usernames as credential stuffing', async () => {
    const gateway = await createGateway({ name: 'stuffing baseline', mode: 'block' });
    // Normal traffic: each client logs in as itself.
    for (let index = 0; index < 15; index += 1) expect((await login(gateway, `198.51.100.${index + 1}`, `user${index}`, 'correct horse')).status).toBe(200);
    // One client tries a leaked password against many accounts (it works, so the failed-login escalation stays out of it).
    for (let index = 0; index < 12; index += 1) expect((await login(gateway, '198.51.100.200', `victim${index}`, 'correct horse')).status).toBe(200);
    const lines = await loggedLines(gateway, 27);
    expect(lines).toHaveLength(27);
    expect(lines.slice(0, 15).filter((line) => line.pattern === 't5.credential_stuffing')).toHaveLength(0);
    expect(lines.slice(15).filter((line) => line.pattern === 't5.credential_stuffing').length).toBeGreaterThan(0);
  });

  it('feeds failed logins into the credential-stuffing baseline', async () => {
    const gateway = await createGateway({ name: 'failures baseline', mode: 'monitor' });
    for (let index = 0; index < 15; index += 1) expect((await login(gateway, `192.0.2.${index + 1}`, `member${index}`, 'correct horse')).status).toBe(200);
    // The same account, wrong passwords: one username, so only the failures can stand out (below
    // the escalation threshold, so the log line names the T5 anomaly, not the escalation).
    for (let attempt = 0; attempt < CHALLENGE_AFTER; attempt += 1) await login(gateway, '192.0.2.200', 'member0', `wrong-${attempt}`);
    const lines = await loggedLines(gateway, 15 + CHALLENGE_AFTER);
    expect(lines.slice(0, 15).filter((line) => line.pattern === 't5.credential_stuffing')).toHaveLength(0);
    expect(lines.slice(15).filter((line) => line.pattern === 't5.credential_stuffing').length).toBeGreaterThan(0);
  });
});

describe('geo-blocking rules through the proxy', () => {
  it('answers requests from a blocked country with the rule status and GEO_BLOCKED, and forwards the others', async () => {
    const gateway = await createGateway({ name: 'geo rules', mode: 'block' });
    const other = await createGateway({ name: 'geo rules elsewhere', mode: 'block' });
    const rule = await api('POST', '/api/v1/geo-rules', { rule_name: 'embargo', action: 'block', countries: ['KP'], response_code: 451, gateway_id: gateway });
    expect(rule.status).toBe(201);
    expect(rule.body!.enforced).toBe(true);

    const refused = await send(`/gw/${gateway}/items`, '175.45.176.1');
    expect(refused.status).toBe(451);
    expect(refused.json().error.code).toBe('GEO_BLOCKED');
    expect((await send(`/gw/${gateway}/items`, '81.2.69.142')).status).toBe(200);
    // The rule names one gateway: the org's other gateway still serves that country.
    expect((await send(`/gw/${other}/items`, '175.45.176.1')).status).toBe(200);
    // IPv6 addresses are looked up too.
    const germany = await api('POST', '/api/v1/geo-rules', { rule_name: 'de', action: 'block', countries: ['DE'], gateway_id: gateway });
    expect((await send(`/gw/${gateway}/items`, '2a02:2e0:3fe:1001:302::')).status).toBe(403);

    expect((await api('DELETE', `/api/v1/geo-rules/${rule.body!.id as string}`)).status).toBe(204);
    expect((await api('DELETE', `/api/v1/geo-rules/${germany.body!.id as string}`)).status).toBe(204);
    expect((await send(`/gw/${gateway}/items`, '175.45.176.1')).status).toBe(200);
  });

  it('applies an org-wide rule to every gateway of the org', async () => {
    const first = await createGateway({ name: 'org-wide 1', mode: 'monitor' });
    const second = await createGateway({ name: 'org-wide 2', mode: 'block' });
    const rule = await api('POST', '/api/v1/geo-rules', { rule_name: 'everywhere', action: 'block', countries: ['US'] });
    expect((await send(`/gw/${first}/items`, '8.8.8.8')).status).toBe(403);
    expect((await send(`/gw/${second}/items`, '8.8.8.8')).json().error.code).toBe('GEO_BLOCKED');
    expect((await api('DELETE', `/api/v1/geo-rules/${rule.body!.id as string}`)).status).toBe(204);
  });
});
