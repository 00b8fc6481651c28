/**
 * Concurrent deletes and revocations (issue #33, item 2): of 20 identical requests sent at once,
 * exactly one succeeds and writes one audit entry; the others get 404 (409 for a key that is
 * already revoked). Runs on whatever DATABASE_URL says: PGlite embedded, PostgreSQL in CI (where
 * the requests really run in parallel transactions).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';

let context: TestContext;
let orgId: string;
let apiKey: string;

const CONCURRENCY = 20;

beforeAll(async () => {
  context = await createTestApp();
  ({ orgId, apiKey } = await context.createOrg({ plan: 'enterprise' }));
}, 60_000);

afterAll(async () => {
  await context?.close();
});

const call = (method: 'DELETE' | 'POST', url: string, payload?: unknown) =>
  context.app.inject({ method, url, headers: { authorization: `Bearer ${apiKey}` }, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });

async function auditCount(action: string, target: string): Promise<number> {
  const result = await context.services.db.withOrg(orgId, (tx) => tx.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log WHERE action = $1 AND target = $2', [action, target]));
  return result.rows[0]?.n ?? 0;
}

/** Sends the same request CONCURRENCY times at once; the statuses, sorted, and the error codes. */
async function race(method: 'DELETE', url: string): Promise<{ statuses: number[]; codes: string[] }> {
  const answers = await Promise.all(Array.from({ length: CONCURRENCY }, () => call(method, url)));
  return {
    statuses: answers.map((answer) => answer.statusCode).sort((left, right) => left - right),
    codes: answers.filter((answer) => answer.statusCode >= 400).map((answer) => (answer.json() as { error: { code: string } }).error.code),
  };
}

const loser = (status: number) => Array<number>(CONCURRENCY - 1).fill(status);

describe('concurrent deletes have exactly one winner', () => {
  it('deletes a webhook once: one 204 and one webhook.delete audit entry, every other request 404', async () => {
    const created = await call('POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['threat.blocked'] });
    expect(created.statusCode).toBe(201);
    const id = (created.json() as { id: string }).id;
    const { statuses, codes } = await race('DELETE', `/api/v1/webhooks/${id}`);
    expect(statuses).toEqual([204, ...loser(404)]);
    expect(new Set(codes)).toEqual(new Set(['NOT_FOUND']));
    expect(await auditCount('webhook.delete', id)).toBe(1);
  });

  it('deletes a protected gateway once: one 204 and one gateway.delete audit entry, every other request 404', async () => {
    const created = await call('POST', '/api/v1/gateways', { name: 'raced', backend_url: 'http://127.0.0.1:9', health_check: null });
    expect(created.statusCode).toBe(201);
    const id = (created.json() as { id: string }).id;
    const { statuses, codes } = await race('DELETE', `/api/v1/gateways/${id}`);
    expect(statuses).toEqual([204, ...loser(404)]);
    expect(new Set(codes)).toEqual(new Set(['NOT_FOUND']));
    expect(await auditCount('gateway.delete', id)).toBe(1);
  });

  it('revokes an API key once: one 200 and one api_key.revoked entry; every other revocation, and a later one, 409 already_revoked', async () => {
    const created = await call('POST', '/api/v1/keys', { scope: 'read' });
    expect(created.statusCode).toBe(201);
    const id = (created.json() as { key_id: string }).key_id;
    const { statuses, codes } = await race('DELETE', `/api/v1/keys/${id}`);
    expect(statuses).toEqual([200, ...loser(409)]);
    expect(new Set(codes)).toEqual(new Set(['CONFLICT']));
    const again = await call('DELETE', `/api/v1/keys/${id}`);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ error: { code: 'CONFLICT', reason: 'already_revoked' } });
    expect(await auditCount('api_key.revoked', id)).toBe(1);
    const unknown = await call('DELETE', '/api/v1/keys/00000000-0000-4000-8000-000000000000');
    expect(unknown.statusCode).toBe(404);
  });
});
