/**
 * The MCP authorization server settings and the CLI's operator changes (org created, plan, API
 * key created or revoked, role, provider key) are stored with their audit entries in one
 * transaction: when the entry cannot be appended nothing is stored (the API answers 503 with
 * Retry-After; the CLI fails with the database's error), and the change made again is stored
 * once with one entry. Before, the change was committed and its entry then lost.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCommand } from '../../src/commands.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { chained, databaseOutage, expectUnavailable, failAppends, lockConflict } from './audited-writes.ts';

let context: TestContext;
beforeAll(async () => {
  context = await createTestApp();
}, 60_000);
afterAll(async () => context.close());
afterEach(() => vi.restoreAllMocks());

describe('MCP authorization settings and their audit entries are stored together or not at all', () => {
  it('saves no authorization server when the mcp.authorization.set entry meets an outage, and the retry saves it with one entry', async () => {
    const org = await context.createOrg();
    const headers = { authorization: `Bearer ${org.apiKey}` };
    const issuer = 'http://127.0.0.1:9/issuer';
    const put = () => context.app.inject({ method: 'PUT', url: '/api/v1/mcp/authorization', headers, payload: { issuer, jwks_uri: 'http://127.0.0.1:9/jwks' } });
    const stored = async () => (await context.app.inject({ method: 'GET', url: '/api/v1/mcp/authorization', headers })).statusCode;
    failAppends(context.services.audit, 'mcp.authorization.set', 1);
    expectUnavailable(await put());
    // Before: the settings were saved (and governed the MCP endpoints) with no entry.
    expect(await stored()).toBe(404);
    vi.restoreAllMocks();

    expect((await put()).statusCode).toBe(200);
    expect(await stored()).toBe(200);
    expect(await chained(context, org.orgId, 'mcp.authorization.set')).toEqual([issuer]);

    failAppends(context.services.audit, 'mcp.authorization.delete', 1_000, lockConflict);
    expectUnavailable(await context.app.inject({ method: 'DELETE', url: '/api/v1/mcp/authorization', headers }));
    expect(await stored()).toBe(200);
  });
});

describe("the CLI's changes and their audit entries are stored together or not at all", () => {
  it.each([
    ['an outage', databaseOutage, 1],
    ['a lock conflict that persists', lockConflict, 1_000],
  ] as const)('creates no API key when its api_key.created entry meets %s, and the command run again creates one with one entry', async (_what, failure, times) => {
    const org = await context.createOrg();
    const name = `cli-${randomUUID().slice(0, 8)}`;
    const named = async () => (await context.services.accounts.listKeys(org.orgId)).filter((key) => key.name === name);
    failAppends(context.services.audit, 'api_key.created', times, failure);
    await expect(runCommand(context.services, 'key create', { org: org.orgId, scope: 'read', name })).rejects.toMatchObject({ code: (failure() as Error & { code: string }).code });
    // Before: the key was stored (and usable) with no entry.
    expect(await named()).toEqual([]);
    vi.restoreAllMocks();

    const created = await runCommand(context.services, 'key create', { org: org.orgId, scope: 'read', name });
    const keyId = (created.json as { key_id: string }).key_id;
    expect((await named()).map((key) => key.key_id)).toEqual([keyId]);
    expect(await chained(context, org.orgId, 'api_key.created')).toEqual([keyId]);
  });

  it('leaves a key active, the plan unchanged and no org created when their CLI entries meet an outage', async () => {
    const org = await context.createOrg({ plan: 'starter' });
    const [initial] = await context.services.accounts.listKeys(org.orgId);
    failAppends(context.services.audit, 'api_key.revoked', 1);
    await expect(runCommand(context.services, 'key revoke', { org: org.orgId, key: initial!.key_id })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect((await context.services.accounts.listKeys(org.orgId))[0]?.revoked_at).toBeNull();

    failAppends(context.services.audit, 'org.plan_changed', 1);
    await expect(runCommand(context.services, 'org plan', { org: org.orgId, plan: 'pro' })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect((await context.services.accounts.getOrg(org.orgId))?.plan).toBe('starter');

    const name = `cli-org-${randomUUID().slice(0, 8)}`;
    failAppends(context.services.audit, 'org.created', 1);
    await expect(runCommand(context.services, 'org create', { name })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect((await context.services.accounts.listOrgs()).filter((listed) => listed.name === name)).toEqual([]);
    vi.restoreAllMocks();
    const created = await runCommand(context.services, 'org create', { name });
    const orgId = (created.json as { org_id: string }).org_id;
    expect(await chained(context, orgId, 'org.created')).toEqual([orgId]);
  });
});
