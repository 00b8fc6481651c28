/**
 * A webhook PATCH locks its endpoint's row FOR NO KEY UPDATE, not FOR UPDATE (review-rel39). Every
 * delivery the fan-out inserts for the endpoint, and every attempt the deliverer records, checks
 * its foreign key with FOR KEY SHARE on that row, which FOR UPDATE blocks. A PATCH whose audit
 * entry waited for the org's chain head (another audited write holding it) then held every event
 * of the org that the endpoint subscribes to, each on a pooled connection, until the other write
 * committed. PostgreSQL only: PGlite runs one transaction at a time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/services.ts';
import { createTestServices, ownPostgresDatabase, usingPostgres } from '../helpers/app.ts';
import { createTestOrg } from '../audit/database.ts';
import { holdAuditChainHead, testEntry, waitForChainHeadWaiter } from '../support/audit-chain-head.ts';

let services: Services;
let database: Awaited<ReturnType<typeof ownPostgresDatabase>>;

beforeAll(async () => {
  if (!usingPostgres) return;
  database = await ownPostgresDatabase();
  services = await createTestServices({ ...(database === undefined ? {} : { env: { DATABASE_URL: database.url } }) });
}, 120_000);

afterAll(async () => {
  await services?.close();
  await database?.drop();
});

describe('a webhook PATCH waiting for the audit chain head', () => {
  it.skipIf(!usingPostgres)('does not hold back the fan-out of events to the endpoint it changes', async () => {
    const { db, audit, webhooks } = services;
    const orgId = await createTestOrg(db);
    const { id } = await webhooks.create(orgId, { url: 'http://127.0.0.1:9/hook', events: ['threat.blocked'] });

    // Another audited write has taken the org's chain head and not yet committed.
    const head = await holdAuditChainHead(services, orgId, 'test.holding');
    try {
      // The PATCH locks the endpoint, writes, and waits for the head with its audit entry.
      const patched = webhooks.update(orgId, id, { description: 'renamed' }, (tx) => audit.append(orgId, testEntry('webhook.update'), { tx }));
      await waitForChainHeadWaiter(db);
      // An event of the org meanwhile: its delivery row references the endpoint.
      const emitted = webhooks.emit(orgId, 'threat.blocked', { request_id: 'req-fanout', threat_score: 0.95, decision: 'block' }).then((result) => result.deliveries.length);
      const outcome = await Promise.race([emitted, new Promise<'held'>((resolve) => setTimeout(() => resolve('held'), 3_000))]);
      // Before: 'held' (the delivery's foreign key check waited for the PATCH, which waited for the head).
      expect(outcome).toBe(1);
      head.release();
      await Promise.all([head.appended, patched, emitted]);
    } finally {
      head.release();
    }
    expect((await webhooks.get(orgId, id)).description).toBe('renamed');
    expect((await audit.list(orgId, { action: 'webhook.update' })).length).toBe(1);
  });
});
