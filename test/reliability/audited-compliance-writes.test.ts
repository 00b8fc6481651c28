/**
 * A compliance call that changes something (a grievance submitted, a model registered, an AI
 * opt-out recorded, an unlearning request) is stored with its success entry in one transaction.
 * When the entry cannot be appended nothing is stored, the client is answered 503 with
 * Retry-After, and the call is chained as refused (the onSend hook, as for any refused call); sent
 * again it is stored once with one success entry. Before, the change was committed and the hook's
 * failed append was only logged: a grievance (with its legal due dates) existed that the chain did
 * not show, and the client was answered 201.
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { call } from '../compliance/helpers.ts';
import { databaseOutage, expectUnavailable, failAppends, lockConflict } from './audited-writes.ts';

let context: TestContext;
let org: { orgId: string; apiKey: string };
beforeAll(async () => {
  context = await createTestApp({ services: { gateway: { timers: false } } });
  org = await context.createOrg({ plan: 'enterprise' });
}, 60_000);
afterAll(async () => context.close());
afterEach(() => vi.restoreAllMocks());

/** The outcomes and statuses of the org's entries of `action` whose request id is `requestId`. */
async function entriesOf(action: string, requestId: string): Promise<Array<{ outcome: string; status: unknown }>> {
  const { rows } = await context.services.db.withOrg(org.orgId, (tx) =>
    tx.query<{ outcome: string; details: { status: unknown; request_id: string } }>('SELECT outcome, details FROM audit_log WHERE org_id = $1 AND action = $2 ORDER BY seq', [org.orgId, action]),
  );
  return rows.filter((row) => row.details.request_id === requestId).map((row) => ({ outcome: row.outcome, status: row.details.status }));
}

/** The 503 answer of `send` in the shape expectUnavailable reads. */
const unavailable = (answer: { status: number; headers: Record<string, unknown>; body: { error: { code: string } } }) =>
  expectUnavailable({ statusCode: answer.status, headers: answer.headers, json: () => answer.body });

describe('compliance changes and their audit entries are stored together or not at all', () => {
  it.each([
    ['an outage', databaseOutage, 1],
    ['a lock conflict that persists', lockConflict, 1_000],
  ] as const)('stores no grievance when its success entry meets %s, chains the refusal, and the retry stores one grievance with one entry', async (_what, failure, times) => {
    const description = `grievance ${randomUUID()}`;
    const grievances = async () =>
      (await context.services.db.withOrg(org.orgId, (tx) => tx.query<{ id: string }>('SELECT id::text FROM compliance_grievances WHERE description = $1', [description]))).rows.map((row) => row.id);
    failAppends(context.services.audit, 'compliance.grievance.submit', times, failure);
    const refused = await call(context, org.apiKey, 'POST', '/api/v1/compliance/grievance', { category: 'other', description });
    unavailable(refused);
    // Before: 201, the grievance stored and its entry lost (the hook's failure only logged).
    expect(await grievances()).toEqual([]);
    vi.restoreAllMocks();
    // The refusal is chained by the onSend hook when the chain takes it (after a single outage); a
    // conflict that persists refuses that append too (logged).
    expect(await entriesOf('compliance.grievance.submit', refused.requestId)).toEqual(times === 1 ? [{ outcome: 'refused', status: 503 }] : []);

    const again = await call(context, org.apiKey, 'POST', '/api/v1/compliance/grievance', { category: 'other', description });
    expect(again.status).toBe(201);
    expect(await grievances()).toEqual([again.body.id]);
    expect(await entriesOf('compliance.grievance.submit', again.requestId)).toEqual([{ outcome: 'success', status: 201 }]);
  });

  it('registers no model, records no opt-out and queues no unlearning request when their entries meet an outage', async () => {
    const name = `model-${randomUUID().slice(0, 8)}`;
    failAppends(context.services.audit, 'compliance.model_catalog.register', 1);
    unavailable(await call(context, org.apiKey, 'POST', '/api/v1/ai/model-catalog', { name, provider: 'example', parameters: 1_000_000 }));
    expect((await context.services.compliance.models.list(org.orgId)).map((model) => model.name)).not.toContain(name);

    const subject = `subject-${randomUUID().slice(0, 8)}`;
    failAppends(context.services.audit, 'privacy.ai_opt_out.record', 1);
    unavailable(await call(context, org.apiKey, 'POST', '/api/v1/privacy/ai-opt-out', { subject_id: subject }));
    expect((await call(context, org.apiKey, 'GET', `/api/v1/privacy/ai-opt-out/${subject}`)).body.opted_out).toBe(false);
    vi.restoreAllMocks();
    const recorded = await call(context, org.apiKey, 'POST', '/api/v1/privacy/ai-opt-out', { subject_id: subject });
    expect(recorded.status).toBe(201);
    expect(await entriesOf('privacy.ai_opt_out.record', recorded.requestId)).toEqual([{ outcome: 'success', status: 201 }]);

    const unlearn = `subject-${randomUUID().slice(0, 8)}`;
    failAppends(context.services.audit, 'compliance.unlearning.request', 1);
    unavailable(await call(context, org.apiKey, 'POST', '/api/v1/ai/unlearning/request', { subject_id: unlearn }));
    const requests = await context.services.db.withOrg(org.orgId, (tx) => tx.query('SELECT id FROM compliance_unlearning WHERE subject_id = $1', [unlearn]));
    expect(requests.rows).toEqual([]);
  });

  it('chains one entry for a call that fails after its write committed (the success stored with the write, no second refusal)', async () => {
    const subject = `subject-${randomUUID().slice(0, 8)}`;
    const hashed = createHash('sha256').update(subject).digest('hex');
    const realSet = context.services.cache.set.bind(context.services.cache);
    // The opt-out is committed with its entry; caching it afterwards fails (the cache is down).
    vi.spyOn(context.services.cache, 'set').mockImplementation(async (key: string, value: string, ttlMs?: number) => {
      if (key.endsWith(hashed)) throw new Error('cache unavailable');
      return realSet(key, value, ttlMs);
    });
    const failed = await call(context, org.apiKey, 'POST', '/api/v1/privacy/ai-opt-out', { subject_id: subject });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    vi.restoreAllMocks();
    // Before: two entries for the one call, its success (201, with the write) and a refusal.
    expect(await entriesOf('privacy.ai_opt_out.record', failed.requestId)).toEqual([{ outcome: 'success', status: 201 }]);
    // A refused call with no write is still chained once, as refused.
    const refused = await call(context, org.apiKey, 'POST', '/api/v1/ai/model-catalog', { name: `model-${randomUUID().slice(0, 8)}`, provider: 'example' });
    expect(refused.status).toBe(400);
    expect(await entriesOf('compliance.model_catalog.register', refused.requestId)).toEqual([{ outcome: 'refused', status: 400 }]);
  });
});
