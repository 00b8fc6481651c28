/**
 * Audited admin updates decide on the stored state read in their own transaction (rel-39). An
 * update that read the current values in a transaction of its own, then wrote and appended its
 * audit entry in the next, could decide on and record a state another writer had replaced between
 * the two: a threshold change overwrote a concurrent one with the values it had read, and a
 * webhook PATCH asking for `active` left the endpoint paused when the deliverer paused it
 * meanwhile. Here the other writer is made to commit right after the update's first read of the
 * row (both engines). A plan change and an audit append of the same org racing each other on
 * PostgreSQL must not deadlock (the org row's lock against the record's foreign key check).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Queryable } from '../../src/platform/db/index.ts';
import { createTestApp, usingPostgres, type TestContext } from '../helpers/app.ts';
import { holdAuditChainHead, testEntry, waitForChainHeadWaiter } from '../support/audit-chain-head.ts';

/**
 * Runs `between` once, after the first transaction (of `org`) that ran a statement matching
 * `read` has ended: the moment another writer commits between a read of its own and the write.
 */
function afterFirstRead(db: Database, org: string, read: RegExp, between: () => Promise<void>): { restore(): void; ran(): boolean } {
  const realWithOrg = db.withOrg.bind(db);
  let done = false;
  db.withOrg = async <T>(orgId: string, work: (tx: Queryable) => Promise<T>): Promise<T> => {
    let matched = false;
    const result = await realWithOrg(orgId, (tx) =>
      work(
        new Proxy(tx, {
          get(target, key) {
            if (key !== 'query') return Reflect.get(target, key, target) as unknown;
            return (sql: string, values?: readonly unknown[]) => {
              if (read.test(sql)) matched = true;
              return target.query(sql, values);
            };
          },
        }),
      ),
    );
    if (matched && !done && orgId === org) {
      done = true;
      await between();
    }
    return result;
  };
  return { restore: () => void (db.withOrg = realWithOrg), ran: () => done };
}

describe('audited updates decide on the state stored when they write', () => {
  let context: TestContext;
  beforeAll(async () => {
    context = await createTestApp();
  }, 120_000);
  afterAll(async () => context?.close());

  const call = (apiKey: string, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: Record<string, unknown>) =>
    context.app.inject({ method, url, headers: { authorization: `Bearer ${apiKey}` }, ...(payload === undefined ? {} : { payload }) });

  it('keeps a threshold change committed while another one is in flight, and records what each stored', async () => {
    const org = await context.createOrg();
    // Another admin raises the block threshold between this request's read and its write.
    const race = afterFirstRead(context.services.db, org.orgId, /FROM detection_thresholds/, async () => {
      const other = await call(org.apiKey, 'POST', '/api/v1/config/thresholds', { block_threshold: 0.9 });
      expect(other.statusCode).toBe(200);
    });
    let answer;
    try {
      answer = await call(org.apiKey, 'POST', '/api/v1/config/thresholds', { log_threshold: 0.15 });
    } finally {
      race.restore();
    }
    expect(race.ran()).toBe(true);
    expect(answer.statusCode).toBe(200);
    const stored = (await call(org.apiKey, 'GET', '/api/v1/config/thresholds')).json().thresholds;
    // Before: block_threshold back at 0.7, the other admin's change undone with a 200 and an entry saying 0.9.
    expect(stored).toEqual({ log_threshold: 0.15, alert_threshold: 0.4, challenge_threshold: 0.6, block_threshold: 0.9 });
    const entries = await context.services.audit.list(org.orgId, { action: 'config.thresholds.set' });
    expect(entries).toHaveLength(2);
    const last = [...entries].sort((a, b) => b.seq - a.seq)[0]!;
    expect(last.details).toMatchObject(stored);
  });

  it('re-enables an endpoint the deliverer paused while the PATCH asking for active was in flight', async () => {
    const org = await context.createOrg();
    const created = await call(org.apiKey, 'POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/failing', events: ['threat.blocked'] });
    expect(created.statusCode).toBe(201);
    const endpointId = created.json().id as string;
    const deliveryId = randomUUID();
    const { db } = context.services;
    // The deliverer's circuit break (repeated failures) lands after the PATCH has read the endpoint
    // active, and holds the retry it was about to make.
    const race = afterFirstRead(db, org.orgId, /FROM webhook_endpoints WHERE id = \$1/, async () => {
      await db.withOrg(org.orgId, async (tx) => {
        await tx.query(`UPDATE webhook_endpoints SET state = 'paused', paused_at = now(), paused_reason = 'consecutive_failures', consecutive_failures = 3 WHERE id = $1`, [endpointId]);
        await tx.query(`INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event, payload, state, attempts) VALUES ($1, $2, $3, 'threat.blocked', '{}', 'held', 1)`, [
          deliveryId,
          org.orgId,
          endpointId,
        ]);
      });
    });
    let answer;
    try {
      // The admin fixes the URL and asks for the endpoint to be active.
      answer = await call(org.apiKey, 'PATCH', `/api/v1/webhooks/${endpointId}`, { url: 'http://127.0.0.1:9/fixed', state: 'active' });
    } finally {
      race.restore();
    }
    expect(race.ran()).toBe(true);
    expect(answer.statusCode).toBe(200);
    // Before: 200 with state paused, the endpoint left paused and its retry held for good.
    expect(answer.json()).toMatchObject({ url: 'http://127.0.0.1:9/fixed', state: 'active', consecutive_failures: 0 });
    expect((await call(org.apiKey, 'GET', `/api/v1/webhooks/${endpointId}`)).json()).toMatchObject({ state: 'active' });
    const delivery = (await db.withOrg(org.orgId, (tx) => tx.query<{ state: string }>('SELECT state FROM webhook_deliveries WHERE id = $1', [deliveryId]))).rows[0];
    expect(delivery?.state).not.toBe('held');
    const updates = await context.services.audit.list(org.orgId, { action: 'webhook.update' });
    expect(updates.map((record) => record.details)).toEqual([expect.objectContaining({ state: 'active' })]);
  });

  it('keeps a gateway setting changed while another PATCH of the same gateway is in flight', async () => {
    const org = await context.createOrg({ plan: 'enterprise' });
    const created = await call(org.apiKey, 'POST', '/api/v1/gateways', { name: 'shop', backend_url: 'http://127.0.0.1:9', mode: 'monitor' });
    expect(created.statusCode).toBe(201);
    const id = created.json().id as string;
    // Another admin changes the backend timeout between this PATCH's read and its write.
    const race = afterFirstRead(context.services.db, org.orgId, /FROM apisec_gateways WHERE id = \$1/, async () => {
      const other = await call(org.apiKey, 'PATCH', `/api/v1/gateways/${id}`, { timeout_ms: 4_321 });
      expect(other.statusCode).toBe(200);
    });
    let answer;
    try {
      answer = await call(org.apiKey, 'PATCH', `/api/v1/gateways/${id}`, { name: 'renamed' });
    } finally {
      race.restore();
    }
    expect(race.ran()).toBe(true);
    expect(answer.statusCode).toBe(200);
    // Before: the timeout written back to its old value with the rename, the other PATCH's 200 undone.
    expect((await call(org.apiKey, 'GET', `/api/v1/gateways/${id}`)).json()).toMatchObject({ name: 'renamed', timeout_ms: 4_321 });
    expect(await context.services.audit.list(org.orgId, { action: 'gateway.update' })).toHaveLength(2);
  });

  it.skipIf(!usingPostgres)('lets a plan change and an audit append of the same org wait for each other without a deadlock', async () => {
    const org = await context.createOrg({ plan: 'starter' });
    const { db, audit, accounts } = context.services;
    // An audited write whose entry has taken the chain head and not yet inserted its record.
    const head = await holdAuditChainHead(context.services, org.orgId, 'test.racing');
    let changed;
    try {
      changed = accounts.changePlan(org.orgId, 'pro', (tx) => audit.append(org.orgId, testEntry('org.plan_changed'), { tx }));
      // The plan change waits for the chain head; then the append inserts its record.
      await waitForChainHeadWaiter(db);
    } finally {
      head.release();
    }
    const outcomes = await Promise.allSettled([head.appended, changed]);
    // Before: the org row locked FOR UPDATE blocked the record's foreign key check (FOR KEY SHARE)
    // while the plan change waited for the chain head; PostgreSQL rolled one back with 40P01.
    expect(outcomes.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as { code?: string }).code : 'ok'))).toEqual(['ok', 'ok']);
    expect((await accounts.getOrg(org.orgId))?.plan).toBe('pro');
    const actions = (await audit.list(org.orgId, {})).map((record) => record.action);
    expect(actions).toEqual(expect.arrayContaining(['test.first', 'test.racing', 'org.plan_changed']));
  });
});
