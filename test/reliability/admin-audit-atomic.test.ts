/**
 * An admin change and its audit entry are stored together or not at all: the verification policy
 * (set, reset), SIEM sinks, webhooks, API-security gateways and geo rules, and the detection
 * thresholds append their entry in the change's own transaction, tried again whole on a lost lock
 * conflict. Before, the entry was appended after the change's transaction had committed: an outage
 * (or a lock conflict) on the append answered 503 with the change stored and its audit record lost,
 * and the client's retry made the change a second time (a second sink, webhook or gateway).
 *
 * Each case makes the real chain's append of its entry fail as on an outage: the answer is 503
 * SERVICE_UNAVAILABLE with Retry-After, and neither the change nor an entry is stored. The client
 * then sends the request again, and its entry loses one lock conflict on the way: the change and
 * its entry are stored once each.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { databaseOutage, failingAuditAppends, lockConflict } from './failing-stores.ts';

type Org = { orgId: string; apiKey: string };

interface Subject {
  /** The request that makes the change. */
  send(): Promise<LightMyRequestResponse>;
  /** The resource the change is made to, when it exists before it. */
  id?: string;
  /** What a reader of the tables finds of the change. */
  stored(): Promise<unknown>;
}

interface Case {
  name: string;
  /** The audit action the change is recorded under. */
  action: string;
  /** The status of the answer once the change is made. */
  status: number;
  /** Makes what the change needs (with the chain working) and returns the change. */
  setup(org: Org): Promise<Subject>;
  /** What is stored once the change is made (`answer`: the successful answer). */
  changed(answer: LightMyRequestResponse, org: Org): unknown;
  /** The target of the change's audit entry. */
  target(answer: LightMyRequestResponse, subject: Subject): string | null;
}

describe('an admin change whose audit entry cannot be appended', () => {
  let context: TestContext;
  beforeAll(async () => {
    context = await createTestApp();
  }, 120_000);
  afterAll(async () => context?.close());

  const call = (org: Org, method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
    context.app.inject({ method, url, headers: { authorization: `Bearer ${org.apiKey}` }, ...(payload === undefined ? {} : { payload }) });
  /** Made with the chain working; its id. */
  const made = async (org: Org, url: string, payload: Record<string, unknown>): Promise<string> => {
    const answer = await call(org, 'POST', url, payload);
    expect(answer.statusCode).toBe(201);
    return answer.json().id as string;
  };
  const rows = async <T extends Record<string, unknown>>(org: Org, sql: string, values: unknown[] = []) =>
    (await context.services.db.withOrg(org.orgId, (tx) => tx.query<T>(sql, values))).rows;
  const ids = async (org: Org, sql: string, values: unknown[] = []) => (await rows<{ id: string }>(org, sql, values)).map((row) => row.id);

  const policy = { actions: { constraint: 'block' }, constraint: { banned_phrases: ['bluebird'] } };
  const sink = { name: 'atomic', kind: 'syslog', host: '127.0.0.1', port: 9, streams: ['findings'], enabled: false };
  const webhook = { url: 'http://127.0.0.1:9/atomic', events: ['threat.blocked'] };
  const gateway = { name: 'atomic', backend_url: 'http://127.0.0.1:9', mode: 'monitor' };
  const geoRule = { rule_name: 'atomic', action: 'block', countries: ['KP'] };
  const createdId = (answer: LightMyRequestResponse) => answer.json().id as string;
  const subjectId = (_answer: LightMyRequestResponse, subject: { id?: string }) => subject.id!;

  const cases: Case[] = [
    {
      name: 'PUT /api/v1/config/verification',
      action: 'verification.policy.set',
      status: 200,
      setup: async (org) => ({
        send: () => call(org, 'PUT', '/api/v1/config/verification', policy),
        stored: async () => (await rows<{ policy: unknown }>(org, 'SELECT policy FROM verification_policies')).map((row) => row.policy),
      }),
      changed: () => [policy],
      target: () => null,
    },
    {
      name: 'DELETE /api/v1/config/verification',
      action: 'verification.policy.reset',
      status: 204,
      setup: async (org) => {
        expect((await call(org, 'PUT', '/api/v1/config/verification', policy)).statusCode).toBe(200);
        return {
          send: () => call(org, 'DELETE', '/api/v1/config/verification'),
          stored: async () => (await rows<{ policy: unknown }>(org, 'SELECT policy FROM verification_policies')).map((row) => row.policy),
        };
      },
      changed: () => [],
      target: () => null,
    },
    {
      name: 'POST /api/v1/siem/sinks',
      action: 'siem.sink.created',
      status: 201,
      setup: async (org) => ({
        send: () => call(org, 'POST', '/api/v1/siem/sinks', sink),
        stored: () => ids(org, 'SELECT id::text FROM siem_sinks'),
      }),
      changed: (answer) => [createdId(answer)],
      target: createdId,
    },
    {
      name: 'PATCH /api/v1/siem/sinks/{id}',
      action: 'siem.sink.updated',
      status: 200,
      setup: async (org) => {
        const id = await made(org, '/api/v1/siem/sinks', sink);
        return { id, send: () => call(org, 'PATCH', `/api/v1/siem/sinks/${id}`, { name: 'renamed' }), stored: async () => rows(org, 'SELECT name FROM siem_sinks') };
      },
      changed: () => [{ name: 'renamed' }],
      target: subjectId,
    },
    {
      name: 'DELETE /api/v1/siem/sinks/{id}',
      action: 'siem.sink.deleted',
      status: 204,
      setup: async (org) => {
        const id = await made(org, '/api/v1/siem/sinks', sink);
        return { id, send: () => call(org, 'DELETE', `/api/v1/siem/sinks/${id}`), stored: () => ids(org, 'SELECT id::text FROM siem_sinks') };
      },
      changed: () => [],
      target: subjectId,
    },
    {
      name: 'POST /api/v1/webhooks',
      action: 'webhook.create',
      status: 201,
      setup: async (org) => ({
        send: () => call(org, 'POST', '/api/v1/webhooks', webhook),
        stored: () => ids(org, 'SELECT id::text FROM webhook_endpoints'),
      }),
      changed: (answer) => [createdId(answer)],
      target: createdId,
    },
    {
      name: 'PATCH /api/v1/webhooks/{id}',
      action: 'webhook.update',
      status: 200,
      setup: async (org) => {
        const id = await made(org, '/api/v1/webhooks', webhook);
        return { id, send: () => call(org, 'PATCH', `/api/v1/webhooks/${id}`, { description: 'changed' }), stored: async () => rows(org, 'SELECT description FROM webhook_endpoints') };
      },
      changed: () => [{ description: 'changed' }],
      target: subjectId,
    },
    {
      name: 'DELETE /api/v1/webhooks/{id}',
      action: 'webhook.delete',
      status: 204,
      setup: async (org) => {
        const id = await made(org, '/api/v1/webhooks', webhook);
        return { id, send: () => call(org, 'DELETE', `/api/v1/webhooks/${id}`), stored: () => ids(org, 'SELECT id::text FROM webhook_endpoints') };
      },
      changed: () => [],
      target: subjectId,
    },
    {
      name: 'POST /api/v1/gateways',
      action: 'gateway.create',
      status: 201,
      setup: async (org) => ({
        send: () => call(org, 'POST', '/api/v1/gateways', gateway),
        stored: () => ids(org, 'SELECT id::text FROM apisec_gateways'),
      }),
      changed: (answer) => [createdId(answer)],
      target: createdId,
    },
    {
      name: 'PATCH /api/v1/gateways/{id}',
      action: 'gateway.update',
      status: 200,
      setup: async (org) => {
        const id = await made(org, '/api/v1/gateways', gateway);
        return { id, send: () => call(org, 'PATCH', `/api/v1/gateways/${id}`, { name: 'renamed' }), stored: async () => rows(org, 'SELECT name FROM apisec_gateways') };
      },
      changed: () => [{ name: 'renamed' }],
      target: subjectId,
    },
    {
      name: 'DELETE /api/v1/gateways/{id}',
      action: 'gateway.delete',
      status: 204,
      setup: async (org) => {
        const id = await made(org, '/api/v1/gateways', gateway);
        return { id, send: () => call(org, 'DELETE', `/api/v1/gateways/${id}`), stored: () => ids(org, 'SELECT id::text FROM apisec_gateways') };
      },
      changed: () => [],
      target: subjectId,
    },
    {
      name: 'POST /api/v1/geo-rules',
      action: 'geo_rule.create',
      status: 201,
      setup: async (org) => ({
        send: () => call(org, 'POST', '/api/v1/geo-rules', geoRule),
        stored: () => ids(org, 'SELECT id::text FROM apisec_geo_rules'),
      }),
      changed: (answer) => [createdId(answer)],
      target: createdId,
    },
    {
      name: 'DELETE /api/v1/geo-rules/{id}',
      action: 'geo_rule.delete',
      status: 204,
      setup: async (org) => {
        const id = await made(org, '/api/v1/geo-rules', geoRule);
        return { id, send: () => call(org, 'DELETE', `/api/v1/geo-rules/${id}`), stored: () => ids(org, 'SELECT id::text FROM apisec_geo_rules') };
      },
      changed: () => [],
      target: subjectId,
    },
    {
      name: 'POST /api/v1/config/thresholds',
      action: 'config.thresholds.set',
      status: 200,
      setup: async (org) => ({
        send: () => call(org, 'POST', '/api/v1/config/thresholds', { block_threshold: 0.75 }),
        stored: async () => rows(org, 'SELECT block_threshold FROM detection_thresholds'),
      }),
      changed: () => [{ block_threshold: 0.75 }],
      target: () => null,
    },
  ];

  it.each(cases)('$name: answers 503 with neither the change nor its entry stored, and the request sent again stores both once', async (example) => {
    const org = await context.createOrg({ plan: 'enterprise' });
    const subject = await example.setup(org);
    const entries = async () => (await context.services.audit.list(org.orgId, { action: example.action })).map((record) => record.target);
    const before = await subject.stored();

    const outage = failingAuditAppends(context.services.audit, { action: example.action, failures: 1, failure: databaseOutage });
    const refused = await subject.send().finally(() => outage.restore());
    expect(refused.statusCode).toBe(503);
    expect(refused.json().error.code).toBe('SERVICE_UNAVAILABLE');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Before: the change was stored (committed before the append) without its audit entry.
    expect(await subject.stored()).toEqual(before);
    expect(await entries()).toEqual([]);

    // Sent again; the entry loses one lock conflict, and the change with it is tried again whole.
    const conflict = failingAuditAppends(context.services.audit, { action: example.action, failures: 1, failure: lockConflict });
    const again = await subject.send().finally(() => conflict.restore());
    expect(again.statusCode).toBe(example.status);
    expect(await subject.stored()).toEqual(example.changed(again, org));
    expect(await entries()).toEqual([example.target(again, subject)]);
  });
});
