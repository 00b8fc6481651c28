/**
 * Concurrent creates and renames that meet a uniqueness or a parent row (rel-41): of requests
 * sent at once, the ones that lose the race get a 4xx with a stable code, never a 500, and no
 * record is written for them. On PGlite the transactions run one at a time, so the race cannot
 * happen there; on PostgreSQL (DATABASE_URL) they run in parallel and these cases failed with
 * 500 INTERNAL before the fixes.
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

const call = (method: 'DELETE' | 'POST' | 'PATCH' | 'GET', url: string, payload?: unknown) =>
  context.app.inject({ method, url, headers: { authorization: `Bearer ${apiKey}` }, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });

const codeOf = (answer: { statusCode: number; json(): unknown }) => (answer.statusCode >= 400 ? (answer.json() as { error: { code: string } }).error.code : 'ok');

async function count(sql: string, values: unknown[]): Promise<number> {
  const result = await context.services.db.withOrg(orgId, (tx) => tx.query<{ n: number }>(sql, values));
  return result.rows[0]?.n ?? 0;
}

describe('concurrent creates that meet a unique name or a parent being deleted', () => {
  it('registers an MCP server name once: one 201, every other request 409 CONFLICT, one row and one audit entry', async () => {
    const answers = await Promise.all(Array.from({ length: CONCURRENCY }, () => call('POST', '/api/v1/mcp/servers', { name: 'raced', url: 'http://127.0.0.1:9/mcp' })));
    const statuses = answers.map((answer) => answer.statusCode).sort((left, right) => left - right);
    expect(statuses).toEqual([201, ...Array<number>(CONCURRENCY - 1).fill(409)]);
    expect(new Set(answers.filter((answer) => answer.statusCode !== 201).map(codeOf))).toEqual(new Set(['CONFLICT']));
    expect(await count("SELECT count(*)::int AS n FROM mcp_servers WHERE name = 'raced'", [])).toBe(1);
    await context.services.mcp.flush();
    expect(await count("SELECT count(*)::int AS n FROM audit_log WHERE action = 'mcp.server.create' AND details->>'name' = 'raced'", [])).toBe(1);
  });

  it('renames MCP servers to one free name at once: one 200, the others 409 CONFLICT, their names kept', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 8; index += 1) {
      const created = await call('POST', '/api/v1/mcp/servers', { name: `rename-${index}`, url: 'http://127.0.0.1:9/mcp' });
      expect(created.statusCode).toBe(201);
      ids.push((created.json() as { id: string }).id);
    }
    const answers = await Promise.all(ids.map((id) => call('PATCH', `/api/v1/mcp/servers/${id}`, { name: 'renamed-once' })));
    const statuses = answers.map((answer) => answer.statusCode).sort((left, right) => left - right);
    expect(statuses).toEqual([200, ...Array<number>(ids.length - 1).fill(409)]);
    expect(new Set(answers.filter((answer) => answer.statusCode !== 200).map(codeOf))).toEqual(new Set(['CONFLICT']));
    expect(await count("SELECT count(*)::int AS n FROM mcp_servers WHERE name LIKE 'rename-%'", [])).toBe(ids.length - 1);
  });

  it('adds geo rules to a gateway while it is deleted: each 201 or 404 NOT_FOUND, never 500, and no rule outlives the gateway', async () => {
    for (let round = 0; round < 3; round += 1) {
      const gateway = await call('POST', '/api/v1/gateways', { name: `geo-raced-${round}`, backend_url: 'http://127.0.0.1:9', health_check: null });
      expect(gateway.statusCode).toBe(201);
      const gatewayId = (gateway.json() as { id: string }).id;
      const rule = (index: number) => call('POST', '/api/v1/geo-rules', { rule_name: `raced-${round}-${index}`, action: 'block', countries: ['fr'], gateway_id: gatewayId });
      const [removed, ...added] = await Promise.all([call('DELETE', `/api/v1/gateways/${gatewayId}`), ...Array.from({ length: CONCURRENCY - 1 }, (_, index) => rule(index))]);
      expect(removed!.statusCode).toBe(204);
      const outcomes = added.map((answer) => `${answer.statusCode} ${codeOf(answer)}`);
      expect(outcomes.filter((outcome) => outcome !== '201 ok' && outcome !== '404 NOT_FOUND')).toEqual([]);
      expect(await count('SELECT count(*)::int AS n FROM apisec_geo_rules WHERE gateway_id = $1', [gatewayId])).toBe(0);
    }
  });
});
