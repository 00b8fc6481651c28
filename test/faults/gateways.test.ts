/**
 * Fault suite (issue #33): protected gateways and deletes on a real PostgreSQL + Redis.
 * - PostgreSQL stopped for 8 s (longer than the 5 s gateway cache) under `/gw` traffic to a
 *   listening svc: every request to a configured gateway is answered as with the database up
 *   (benign 200 from the backend, attacks 403 THREAT_BLOCKED): 0 client errors; every block's
 *   threat event, audit entry and webhook event is written once the database is back.
 * - 20 concurrent DELETEs of one webhook and of one gateway, 20 concurrent revocations of one key:
 *   one winner each, one audit entry each.
 * Counts are printed. Skips with a visible notice where the engines cannot be started.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppInstance } from '../../src/http/build-app.ts';
import type { Services } from '../../src/services.ts';
import { startBackend, type Backend } from '../apisec/backend.ts';
import { faultSupport, type PostgresInstance } from './instances.ts';
import { startFaultSvc, type FaultSvc } from './svc.ts';

const support = faultSupport();
if (!support.ok) process.stdout.write(`[svc fault suite] SKIPPED: ${support.reason}\n`);

let fault: FaultSvc<true>;
let postgres: PostgresInstance;
let services: Services;
let app: AppInstance;
let backend: Backend;
let base: string;
let orgId: string;
let apiKey: string;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  if (!support.ok) return;
  [fault, backend] = await Promise.all([startFaultSvc({ pgBin: support.pgBin, redis: true }), startBackend()]);
  ({ postgres, services, app } = fault);
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const created = await services.accounts.createOrg({ name: 'gateway-faults', plan: 'enterprise' });
  orgId = created.org.id;
  apiKey = created.apiKey;
  await services.webhooks.create(orgId, { url: 'http://127.0.0.1:9/hook', events: ['threat.blocked'] });
}, 120_000);

afterAll(async () => {
  if (!support.ok) return;
  await fault?.close();
  await backend?.close();
});

async function api(method: 'POST' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> | null }> {
  const answer = await request(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await answer.body.text();
  return { status: answer.statusCode, json: text === '' ? null : (JSON.parse(text) as Record<string, unknown>) };
}

const ATTACK = `/items?id=${encodeURIComponent("1' UNION SELECT username, password FROM users--")}`;

describe.skipIf(!support.ok)('protected gateways and deletes on PostgreSQL + Redis', () => {
  it('answers every request to a configured gateway while PostgreSQL is stopped for 8 s, and writes every block\'s evidence afterwards', async () => {
    const gatewayIds: string[] = [];
    for (const name of ['shop', 'orders']) {
      const created = await api('POST', '/api/v1/gateways', { name, backend_url: backend.url, mode: 'block' });
      expect(created.status).toBe(201);
      gatewayIds.push(created.json!.id as string);
    }
    const marker = `gw-outage-${Date.now()}`;
    const answers: Array<{ attack: boolean; id: string; status: number; code: string | null }> = [];
    let sequence = 0;
    const send = async (gatewayId: string, attack: boolean) => {
      const id = `${marker}-${sequence++}`;
      try {
        const answer = await request(`${base}/gw/${gatewayId}${attack ? ATTACK : '/items'}`, { headers: { 'x-request-id': id }, headersTimeout: 20_000 });
        const text = await answer.body.text();
        const code = answer.statusCode >= 400 ? ((JSON.parse(text) as { error?: { code?: string } }).error?.code ?? null) : null;
        answers.push({ attack, id, status: answer.statusCode, code });
      } catch (error) {
        answers.push({ attack, id, status: 0, code: (error as { code?: string }).code ?? 'client error' });
      }
    };
    const burst = () => Promise.all(gatewayIds.flatMap((gatewayId) => [send(gatewayId, false), send(gatewayId, false), send(gatewayId, true)]));
    for (let index = 0; index < 3; index++) await burst();
    postgres.stop();
    const until = Date.now() + 8_000;
    let during = 0;
    while (Date.now() < until) {
      await burst();
      during += 3 * gatewayIds.length;
      await sleep(200);
    }
    postgres.start();
    for (let index = 0; index < 3; index++) await burst();
    await services.detection.flush();
    const wrong = answers.filter((answer) => (answer.attack ? answer.status !== 403 || answer.code !== 'THREAT_BLOCKED' : answer.status !== 200));
    const blocked = answers.filter((answer) => answer.status === 403 && answer.code === 'THREAT_BLOCKED').map((answer) => answer.id);
    const count = async (sql: string) => Number((await services.db.withOrg(orgId, (tx) => tx.query<{ n: number }>(sql, [`${marker}-%`]))).rows[0]?.n ?? 0);
    let found = { threats: 0, audit: 0, webhooks: 0 };
    for (let attempt = 0; attempt < 40; attempt++) {
      await services.outbox.replay().catch(() => 0);
      try {
        found = {
          threats: await count(`SELECT count(*)::int AS n FROM threat_events WHERE request_id LIKE $1`),
          audit: await count(`SELECT count(*)::int AS n FROM audit_log WHERE action = 'threat.blocked' AND target LIKE $1`),
          webhooks: await count(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE event = 'threat.blocked' AND payload::jsonb -> 'data' ->> 'request_id' LIKE $1`),
        };
      } catch {
        // the database is still coming back
      }
      if (found.threats >= blocked.length && found.audit >= blocked.length && found.webhooks >= blocked.length) break;
      await sleep(500);
    }
    const byStatus = new Map<string, number>();
    for (const answer of answers) byStatus.set(`${answer.status}${answer.code === null ? '' : ` ${answer.code}`}`, (byStatus.get(`${answer.status}${answer.code === null ? '' : ` ${answer.code}`}`) ?? 0) + 1);
    process.stdout.write(
      `[svc fault suite] postgres stopped 8 s under /gw traffic: ${answers.length} requests to ${gatewayIds.length} gateways (${during} during the outage): ${[...byStatus].map(([key, value]) => `${value} × ${key}`).join(', ')}; ` +
        `client errors ${wrong.length}; blocked ${blocked.length}, records found threat_events ${found.threats}, audit ${found.audit}, webhook events ${found.webhooks}\n`,
    );
    expect(wrong).toEqual([]);
    expect(found).toEqual({ threats: blocked.length, audit: blocked.length, webhooks: blocked.length });
    expect((await services.audit.verify(orgId)).ok).toBe(true);
  }, 120_000);

  it('gives 20 concurrent deletes of a webhook or gateway and 20 revocations of a key exactly one winner and one audit entry', async () => {
    const auditCount = async (action: string, target: string) =>
      (await services.db.withOrg(orgId, (tx) => tx.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log WHERE action = $1 AND target = $2', [action, target]))).rows[0]?.n ?? 0;
    const race = async (path: string) => {
      const statuses = (await Promise.all(Array.from({ length: 20 }, () => api('DELETE', path)))).map((answer) => answer.status);
      return statuses.sort((left, right) => left - right);
    };
    const webhook = (await api('POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/raced', events: ['threat.blocked'] })).json!.id as string;
    const gateway = (await api('POST', '/api/v1/gateways', { name: 'raced', backend_url: backend.url, health_check: null })).json!.id as string;
    const key = (await api('POST', '/api/v1/keys', { scope: 'read' })).json!.key_id as string;
    const results = {
      webhook: { statuses: await race(`/api/v1/webhooks/${webhook}`), audit: await auditCount('webhook.delete', webhook) },
      gateway: { statuses: await race(`/api/v1/gateways/${gateway}`), audit: await auditCount('gateway.delete', gateway) },
      key: { statuses: await race(`/api/v1/keys/${key}`), audit: 0 },
    };
    const again = await api('DELETE', `/api/v1/keys/${key}`);
    results.key.audit = await auditCount('api_key.revoked', key);
    const summary = (statuses: number[]) => [...new Set(statuses)].map((status) => `${statuses.filter((value) => value === status).length} × ${status}`).join(', ');
    process.stdout.write(
      `[svc fault suite] 20 concurrent deletes: webhook ${summary(results.webhook.statuses)} (${results.webhook.audit} audit entries); gateway ${summary(results.gateway.statuses)} (${results.gateway.audit}); ` +
        `key revoke ${summary(results.key.statuses)}, then ${again.status} (${results.key.audit})\n`,
    );
    expect(results.webhook).toEqual({ statuses: [204, ...Array<number>(19).fill(404)], audit: 1 });
    expect(results.gateway).toEqual({ statuses: [204, ...Array<number>(19).fill(404)], audit: 1 });
    expect(results.key).toEqual({ statuses: [200, ...Array<number>(19).fill(409)], audit: 1 });
    expect(again.status).toBe(409);
  }, 60_000);
});
