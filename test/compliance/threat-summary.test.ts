/**
 * GET /api/v1/threats/summary: the overview's charts. Counts of an org's findings per UTC hour or
 * day, by decision and by pillar, every bucket of the range present (zeros included), another
 * org's findings never counted, and a clear 400 for a range it will not answer.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { call } from './helpers.ts';

let context: TestContext;
let orgId: string;
let readKey: string;
let otherOrgId: string;

async function finding(org: string, at: string, decision: string, pillar: string): Promise<void> {
  await context.services.db.withOrg(org, (tx) =>
    tx.query(`INSERT INTO threat_events (id, org_id, request_id, occurred_at, pillar, kind, threat_score, decision) VALUES ($1, $2, $3, $4::timestamptz, $5, 'prompt', 0.9, $6)`, [
      randomUUID(),
      org,
      randomUUID(),
      at,
      pillar,
      decision,
    ]),
  );
}

beforeAll(async () => {
  context = await createTestApp();
  ({ orgId } = await context.createOrg());
  ({ orgId: otherOrgId } = await context.createOrg());
  readKey = (await context.services.accounts.createKey(orgId, { scope: 'read', keyClass: 'live' })).apiKey;
  await finding(orgId, '2026-11-20T10:05:00Z', 'block', 'ai_gateway');
  await finding(orgId, '2026-11-20T10:55:00Z', 'alert', 'api_security');
  await finding(orgId, '2026-11-20T12:30:00Z', 'block', 'ai_gateway');
  await finding(orgId, '2026-11-21T01:00:00Z', 'log', 'mcp');
  await finding(otherOrgId, '2026-11-20T10:10:00Z', 'block', 'ai_gateway');
}, 60_000);

afterAll(async () => {
  await context?.close();
});

describe('GET /api/v1/threats/summary', () => {
  it('counts a read-scope caller\'s findings per hour by decision and pillar, with every hour of the range present', async () => {
    const answer = await call(context, readKey, 'GET', '/api/v1/threats/summary?from=2026-11-20T09:00:00Z&to=2026-11-20T14:00:00Z&bucket=hour');
    expect(answer.status).toBe(200);
    expect(answer.body.buckets.map((bucket: { start: string }) => bucket.start)).toEqual([
      '2026-11-20T09:00:00.000Z',
      '2026-11-20T10:00:00.000Z',
      '2026-11-20T11:00:00.000Z',
      '2026-11-20T12:00:00.000Z',
      '2026-11-20T13:00:00.000Z',
      '2026-11-20T14:00:00.000Z',
    ]);
    const [nine, ten, eleven, twelve] = answer.body.buckets;
    expect(nine).toEqual({ start: '2026-11-20T09:00:00.000Z', total: 0, by_decision: { log: 0, alert: 0, challenge: 0, block: 0 }, by_pillar: {} });
    // The other org's block at 10:10 is not counted.
    expect(ten).toEqual({ start: '2026-11-20T10:00:00.000Z', total: 2, by_decision: { log: 0, alert: 1, challenge: 0, block: 1 }, by_pillar: { ai_gateway: 1, api_security: 1 } });
    expect(eleven.total).toBe(0);
    expect(twelve.by_decision.block).toBe(1);
    expect(answer.body.totals).toEqual({ total: 3, by_decision: { log: 0, alert: 1, challenge: 0, block: 2 }, by_pillar: { ai_gateway: 2, api_security: 1 } });
  });

  it('counts per UTC day', async () => {
    const answer = await call(context, readKey, 'GET', '/api/v1/threats/summary?from=2026-11-19T00:00:00Z&to=2026-11-22T00:00:00Z&bucket=day');
    expect(answer.status).toBe(200);
    expect(answer.body.buckets.map((bucket: { total: number }) => bucket.total)).toEqual([0, 3, 1, 0]);
    expect(answer.body.buckets[2].by_pillar).toEqual({ mcp: 1 });
  });

  it('refuses a range that ends before it starts, or wider than the bucket allows, with VALIDATION_FAILED', async () => {
    const reversed = await call(context, readKey, 'GET', '/api/v1/threats/summary?from=2026-11-21T00:00:00Z&to=2026-11-20T00:00:00Z');
    expect(reversed.status).toBe(400);
    expect(reversed.body.error.code).toBe('VALIDATION_FAILED');
    const tooWide = await call(context, readKey, 'GET', '/api/v1/threats/summary?from=2026-01-01T00:00:00Z&to=2026-11-20T00:00:00Z&bucket=hour');
    expect(tooWide.status).toBe(400);
    expect(tooWide.body.error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'from', limit: 168 });
    const badBucket = await call(context, readKey, 'GET', '/api/v1/threats/summary?bucket=week');
    expect(badBucket.status).toBe(400);
    expect(badBucket.body.error.code).toBe('VALIDATION_FAILED');
  });

  it('needs a credential', async () => {
    const answer = await call(context, null, 'GET', '/api/v1/threats/summary');
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe('AUTH_MISSING');
  });
});
