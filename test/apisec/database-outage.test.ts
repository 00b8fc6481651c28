/**
 * Protected gateways while svc's database is down (issue #33, item 4): a gateway this process has
 * read is served from its last known configuration (its mode, its org's thresholds), beyond the
 * 5 s its record is normally cached; a gateway it has never seen is refused with 503
 * SERVICE_UNAVAILABLE. The database is made to refuse every statement as a stopped server does
 * (ECONNREFUSED); test/faults/gateways.test.ts stops a real PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { startBackend, type Backend } from './backend.ts';

let context: TestContext;
let backend: Backend;
let apiKey: string;

beforeAll(async () => {
  backend = await startBackend();
  context = await createTestApp();
  ({ apiKey } = await context.createOrg({ plan: 'enterprise' }));
}, 60_000);

afterAll(async () => {
  await context?.close();
  await backend?.close();
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** Every statement fails as against a stopped server, until the mocks are restored. */
function stopDatabase(): void {
  const refused = () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
  const { db } = context.services;
  vi.spyOn(db, 'query').mockImplementation(refused);
  vi.spyOn(db, 'withOrg').mockImplementation(refused);
  vi.spyOn(db, 'transaction').mockImplementation(refused);
}

/** Moves the clock past the gateway cache's 5 s (the record must come from the stale fallback). */
function later(ms: number): void {
  const now = Date.now();
  vi.spyOn(Date, 'now').mockImplementation(() => now + ms);
}

const gw = (id: string, path: string) => context.app.inject({ method: 'GET', url: `/gw/${id}${path}` });

describe('protected gateways during a database outage', () => {
  it('keep serving from the last known configuration: benign requests forwarded, attacks blocked, no 5xx', async () => {
    const created = await context.app.inject({ method: 'POST', url: '/api/v1/gateways', headers: { authorization: `Bearer ${apiKey}` }, payload: { name: 'outage', backend_url: backend.url, mode: 'block' } });
    expect(created.statusCode).toBe(201);
    const id = (created.json() as { id: string }).id;
    expect((await gw(id, '/items')).statusCode).toBe(200);
    stopDatabase();
    later(60_000);
    const statuses: number[] = [];
    for (let index = 0; index < 10; index++) statuses.push((await gw(id, '/items')).statusCode);
    const attack = await gw(id, `/items?id=${encodeURIComponent("1' UNION SELECT username, password FROM users--")}`);
    expect(statuses).toEqual(Array<number>(10).fill(200));
    expect(attack.statusCode).toBe(403);
    expect(attack.json()).toMatchObject({ error: { code: 'THREAT_BLOCKED' } });
  });

  it("keep the org's own thresholds, not the defaults", async () => {
    const { apiKey: key } = await context.createOrg({ plan: 'enterprise' });
    const headers = { authorization: `Bearer ${key}` };
    // Nothing below a score of 1 is acted on (an org that only watches).
    expect((await context.app.inject({ method: 'POST', url: '/api/v1/config/thresholds', headers, payload: { log_threshold: 0.997, alert_threshold: 0.998, challenge_threshold: 0.999, block_threshold: 1 } })).statusCode).toBe(200);
    const created = await context.app.inject({ method: 'POST', url: '/api/v1/gateways', headers, payload: { name: 'watching', backend_url: backend.url, mode: 'block' } });
    const id = (created.json() as { id: string }).id;
    const attack = `/items?id=${encodeURIComponent("1' UNION SELECT username, password FROM users--")}`;
    expect((await gw(id, attack)).statusCode).toBe(200);
    stopDatabase();
    later(60_000);
    expect((await gw(id, attack)).statusCode).toBe(200);
  });

  it('refuse a gateway this process never read with 503 SERVICE_UNAVAILABLE', async () => {
    const id = randomUUID();
    const { orgId } = await context.createOrg();
    await context.services.db.withOrg(orgId, (tx) =>
      tx.query(`INSERT INTO apisec_gateways (id, org_id, name, backend_url, mode, settings) VALUES ($1, $2, 'unseen', $3, 'monitor', '{}')`, [id, orgId, backend.url]),
    );
    stopDatabase();
    const answer = await gw(id, '/items');
    expect(answer.statusCode).toBe(503);
    expect(answer.json()).toMatchObject({ error: { code: 'SERVICE_UNAVAILABLE', dependency: 'database' } });
  });

  it('stop serving a configuration last read more than 24 hours before', async () => {
    const created = await context.app.inject({ method: 'POST', url: '/api/v1/gateways', headers: { authorization: `Bearer ${apiKey}` }, payload: { name: 'old', backend_url: backend.url, mode: 'monitor' } });
    const id = (created.json() as { id: string }).id;
    expect((await gw(id, '/items')).statusCode).toBe(200);
    stopDatabase();
    later(24 * 60 * 60_000 + 1_000);
    expect((await gw(id, '/items')).statusCode).toBe(503);
  });
});
