/**
 * The sensor collector chains findings' audit entries in groups (one appendMany per org at a time)
 * and has no outbox. A lock conflict (SQLSTATE 40P01 / 40001) rolls such a group back whole and
 * says nothing about the entries: the collector must try the group again (a few times, with a
 * short backoff), and if the conflict persists answer the sensor 503 SERVICE_UNAVAILABLE, so that
 * the sensor keeps its findings in its spool and sends them again. Before, the group was written
 * one entry at a time and an entry that lost a second conflict was logged as refused by the chain
 * and lost, while its finding was answered "accepted".
 *
 * The single entries (enrolment token, configuration, spool-drop heartbeat, revocation) are appended
 * in their write's transaction: a conflict is tried again whole, and one that persists, or an
 * outage, answers 503 with neither the write nor its entry stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntryInput, AuditLog } from '../../src/audit/index.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { createEnrolmentToken, TestSensor } from '../sensors/sensor-client.ts';
import { conflictingAudit, databaseOutage } from './failing-stores.ts';

describe('a lock conflict on the collector audit group', () => {
  let context: TestContext;
  let org: { orgId: string; apiKey: string };
  let sensor: TestSensor;
  // The collector's audit chain: the stand-in in force now (swapped per test).
  let standIn = conflictingAudit({});
  const audit = {
    // The stand-in writes nothing to the database: a failure it throws inside a caller's
    // transaction (options.tx) rolls back what that transaction wrote, as the real chain's would.
    appendMany: (orgId: string, entries: readonly AuditEntryInput[]) => standIn.audit.appendMany(orgId, entries),
    append: (orgId: string, entry: AuditEntryInput) => standIn.audit.append(orgId, entry),
  } as unknown as AuditLog;

  beforeAll(async () => {
    context = await createTestApp({ services: { collector: { audit } } });
    org = await context.createOrg({ plan: 'pro' });
    sensor = new TestSensor(context.app, 'edge-conflict', 'gateway');
    expect((await sensor.enrol(await createEnrolmentToken(context.app, org.apiKey))).statusCode).toBe(201);
  }, 120_000);
  afterAll(async () => context.close());

  /** How many times each finding's audit entry was chained, by idempotency key. */
  const chainedFindings = (chained: readonly AuditEntryInput[]) => {
    const counts: Record<string, number> = {};
    for (const entry of chained) {
      if (entry.action !== 'sensor.finding') continue;
      const key = String(entry.details?.idempotency_key);
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return counts;
  };

  it.each([1, 2])('chains every finding of a batch exactly once after %i lock conflicts, and answers each accepted', async (conflicts) => {
    standIn = conflictingAudit({ conflicts });
    const keys = [0, 1, 2].map((index) => `batch${conflicts}-${index}-0000`);
    const answer = await sensor.sendBatch(keys.map((key, index) => sensor.finding({ idempotencyKey: key, data: { request_id: `req-b${conflicts}-${index}` } })));
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ accepted: 3, duplicate: 0, rejected: 0 });
    // Before: with 2 conflicts the first entry, written alone, lost the second one and was dropped.
    expect(chainedFindings(standIn.chained)).toEqual(Object.fromEntries(keys.map((key) => [key, 1])));
    expect(standIn.chained.map((entry) => entry.action)).not.toContain('audit.entry_rejected');
  });

  it('chains every finding sent at the same time exactly once after 2 lock conflicts', async () => {
    standIn = conflictingAudit({ conflicts: 2 });
    const keys = [0, 1, 2, 3, 4].map((index) => `together-${index}-0000`);
    const answers = await Promise.all(keys.map((key, index) => sensor.send(sensor.finding({ idempotencyKey: key, data: { request_id: `req-t-${index}` } }))));
    expect(answers.map((answer) => answer.statusCode)).toEqual([202, 202, 202, 202, 202]);
    expect(chainedFindings(standIn.chained)).toEqual(Object.fromEntries(keys.map((key) => [key, 1])));
  });

  it('still chains around an entry the chain refuses, and tries again an entry that loses a lock conflict when written alone', async () => {
    // The group is refused (r-1's entry cannot be stored): written alone, r-0 goes in, r-1 is refused, r-2 loses a conflict once.
    standIn = conflictingAudit({ loneConflict: 'req-lone-2', refuse: (entry) => entry.target === 'req-lone-1' });
    const keys = [0, 1, 2].map((index) => `lone-${index}-00000`);
    const answer = await sensor.sendBatch(keys.map((key, index) => sensor.finding({ idempotencyKey: key, data: { request_id: `req-lone-${index}` } })));
    expect(answer.json()).toMatchObject({ accepted: 3, rejected: 0 });
    // Before: r-2's entry was logged as refused and lost.
    expect(chainedFindings(standIn.chained)).toEqual({ [keys[0]!]: 1, [keys[2]!]: 1 });
  });

  const createToken = (name: string) => context.app.inject({ method: 'POST', url: '/api/v1/sensors/enrolment-tokens', headers: { authorization: `Bearer ${org.apiKey}` }, payload: { name } });
  /** The ids of the org's stored enrolment tokens named `name`. */
  const storedTokens = async (name: string) =>
    (await context.services.db.withOrg(org.orgId, (tx) => tx.query<{ id: string }>('SELECT id::text FROM sensor_enrolment_tokens WHERE org_id = $1 AND name = $2', [org.orgId, name]))).rows.map((row) => row.id);

  it('creates one enrolment token and one audit entry when the entry loses a lock conflict once (the token and its entry are one transaction, tried again whole)', async () => {
    standIn = conflictingAudit({ conflicts: 1 });
    const answer = await createToken('conflict-once');
    // Before: 503, with the token stored and its audit entry lost; the client's retry made a second token.
    expect(answer.statusCode).toBe(201);
    expect(await storedTokens('conflict-once')).toEqual([answer.json().id]);
    expect(standIn.chained.map((entry) => [entry.action, entry.target])).toEqual([['sensor.enrolment_token.created', answer.json().id]]);
  });

  it.each([
    ['a lock conflict that persists', 'refused-conflict', () => conflictingAudit({ conflicts: 1_000 })],
    ['an outage', 'refused-outage', () => conflictingAudit({ conflicts: 1, failure: databaseOutage })],
  ])('answers SERVICE_UNAVAILABLE with no enrolment token stored when its audit entry meets %s, and the request sent again creates one', async (_what, name, make) => {
    standIn = make();
    const refused = await createToken(name);
    expect(refused.statusCode).toBe(503);
    expect(refused.json().error.code).toBe('SERVICE_UNAVAILABLE');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Before: the token was stored without its audit entry.
    expect(await storedTokens(name)).toEqual([]);
    expect(standIn.chained).toEqual([]);

    standIn = conflictingAudit({});
    const again = await createToken(name);
    expect(again.statusCode).toBe(201);
    expect(await storedTokens(name)).toEqual([again.json().id]);
    expect(standIn.chained.map((entry) => [entry.action, entry.target])).toEqual([['sensor.enrolment_token.created', again.json().id]]);
  });

  it('leaves a sensor configuration unchanged, with no audit entry, when the entry keeps losing lock conflicts', async () => {
    const configOf = async () => (await context.app.inject({ method: 'GET', url: `/api/v1/sensors/${sensor.id}`, headers: { authorization: `Bearer ${org.apiKey}` } })).json();
    const before = await configOf();
    standIn = conflictingAudit({ conflicts: 1_000 });
    const refused = await context.app.inject({ method: 'PATCH', url: `/api/v1/sensors/${sensor.id}/config`, headers: { authorization: `Bearer ${org.apiKey}` }, payload: { paused: true } });
    expect(refused.statusCode).toBe(503);
    // Before: the change was stored (config_version bumped) without its audit entry.
    expect(await configOf()).toEqual(before);
    expect(standIn.chained).toEqual([]);
  });

  it('stores neither a spool-drop heartbeat nor its audit entry when the entry keeps losing lock conflicts', async () => {
    const heartbeatOf = async () => (await context.app.inject({ method: 'GET', url: `/api/v1/sensors/${sensor.id}`, headers: { authorization: `Bearer ${org.apiKey}` } })).json().last_heartbeat_at;
    const before = await heartbeatOf();
    standIn = conflictingAudit({ conflicts: 1_000 });
    const refused = await sensor.signed('POST', '/sensors/heartbeat', { load: 0, queue_depth: 0, last_finding_at: null, spool: { depth: 5, dropped: { low: 3 } } });
    expect(refused.statusCode).toBe(503);
    expect(refused.json().error.code).toBe('SERVICE_UNAVAILABLE');
    // Before: the heartbeat was stored without its sensor.spool_dropped entry.
    expect(await heartbeatOf()).toBe(before);
    expect(standIn.chained).toEqual([]);
  });

  it('revokes a sensor with its audit entry or not at all when the entry keeps losing lock conflicts, and once when the admin sends it again', async () => {
    standIn = conflictingAudit({});
    const other = new TestSensor(context.app, 'edge-revoke', 'gateway');
    expect((await other.enrol(await createEnrolmentToken(context.app, org.apiKey))).statusCode).toBe(201);
    const revoke = () => context.app.inject({ method: 'DELETE', url: `/api/v1/sensors/${other.id}`, headers: { authorization: `Bearer ${org.apiKey}` } });
    const revokedAt = async () => (await context.services.db.withOrg(org.orgId, (tx) => tx.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM sensors WHERE id = $1', [other.id]))).rows[0]?.revoked_at;
    standIn = conflictingAudit({ conflicts: 1_000 });
    const refused = await revoke();
    expect(refused.statusCode).toBe(503);
    // Before: the sensor was revoked without its sensor.revoked entry.
    expect(await revokedAt()).toBeNull();
    expect(standIn.chained).toEqual([]);
    standIn = conflictingAudit({});
    expect((await revoke()).statusCode).toBeLessThan(300);
    expect(await revokedAt()).not.toBeNull();
    expect(standIn.chained.map((entry) => [entry.action, entry.target])).toEqual([['sensor.revoked', other.id]]);
  });

  it('answers SERVICE_UNAVAILABLE to a finding whose audit group keeps losing lock conflicts, and chains it once when the sensor sends it again', async () => {
    standIn = conflictingAudit({ conflicts: 1_000 });
    const signed = sensor.finding({ idempotencyKey: 'persist-00001', data: { request_id: 'req-persist' } });
    const refused = await sensor.send(signed);
    // Before: answered 202 accepted with no audit entry chained (each entry logged as refused).
    expect(refused.statusCode).toBe(503);
    expect(refused.json().error.code).toBe('SERVICE_UNAVAILABLE');
    expect(standIn.chained).toEqual([]);
    // A batch gets the same answer for the whole request (the sensor spools every finding of it).
    const batch = await sensor.sendBatch([sensor.finding({ idempotencyKey: 'persist-00002', data: { request_id: 'req-persist-2' } })]);
    expect(batch.statusCode).toBe(503);
    expect(batch.json().error.code).toBe('SERVICE_UNAVAILABLE');

    // The conflicts end; the sensor's resend is stored (not called a duplicate of what was not stored).
    standIn = conflictingAudit({});
    const resent = await sensor.send(signed);
    expect(resent.statusCode).toBe(202);
    expect(resent.json().status).toBe('accepted');
    expect((await sensor.send(signed)).json().status).toBe('duplicate');
    expect(chainedFindings(standIn.chained)).toEqual({ 'persist-00001': 1 });
    await context.services.detection.flush();
    const rows = await context.services.db.withOrg(org.orgId, (tx) => tx.query('SELECT id FROM threat_events WHERE request_id = $1', ['req-persist']));
    expect(rows.rows).toHaveLength(1);
  });
});
