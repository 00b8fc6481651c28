/**
 * Item 9 (and the audit-actor part of 10) of issue #14: smaller holes an attacker or a careless
 * operator found.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPrivateAddress } from '../../src/platform/ssrf.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';

let context: TestContext;
let orgId: string;
let admin: string;

beforeAll(async () => {
  context = await createTestApp({ env: { ALLOW_PRIVATE_TARGETS: 'false' } });
  const org = await context.createOrg({ plan: 'enterprise' });
  orgId = org.orgId;
  admin = org.apiKey;
});
afterAll(async () => {
  await context.close();
});

const call = (key: string, method: 'POST' | 'PUT' | 'GET', url: string, payload?: unknown) =>
  context.app.inject({ method, url, headers: { authorization: `Bearer ${key}` }, ...(payload === undefined ? {} : { payload: payload as object }) });

describe('SSRF', () => {
  it('refuses the NAT64 local-use prefix 64:ff9b:1::/48, which can embed 169.254.169.254', async () => {
    expect(isPrivateAddress('64:ff9b:1::a9fe:a9fe')).toBe(true);
    expect(isPrivateAddress('64:ff9b:1:ffff::808:808')).toBe(true);
    const response = await call(admin, 'POST', '/api/v1/webhooks', { url: 'http://[64:ff9b:1::a9fe:a9fe]/latest', events: ['threat.blocked'] });
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('TARGET_FORBIDDEN');
  });
});

describe('API key classes', () => {
  it('does not let a test-class admin key mint a live admin key', async () => {
    const test = (await context.services.accounts.createKey(orgId, { scope: 'admin', keyClass: 'test' })).apiKey;
    const live = await call(test, 'POST', '/api/v1/keys', { scope: 'admin', class: 'live' });
    expect(live.statusCode).toBe(403);
    expect(live.json().error.code).toBe('KEY_CLASS_FORBIDDEN');
    const implicit = await call(test, 'POST', '/api/v1/keys', { scope: 'admin' });
    expect(implicit.statusCode).toBe(403);
    const sameClass = await call(test, 'POST', '/api/v1/keys', { scope: 'read', class: 'test' });
    expect(sameClass.statusCode).toBe(201);
  });
});

describe('provider keys', () => {
  it('refuses the README placeholder sk-… and similar templates as a provider key', async () => {
    for (const key of ['sk-…', 'sk-...', '<your-openai-key>', 'sk-xxxxxxxx', 'YOUR_API_KEY']) {
      const response = await call(admin, 'PUT', '/api/v1/providers/openai/key', { key });
      expect(response.statusCode, key).toBe(400);
      expect(response.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'key' });
    }
  });

  it('never shows a whole short key in its mask', async () => {
    const response = await call(admin, 'PUT', '/api/v1/providers/mistral/key', { key: 'abcd12345' });
    expect(response.statusCode).toBe(200);
    expect(response.json().key).not.toContain('2345');
    const listed = await call(admin, 'GET', '/api/v1/providers');
    expect(JSON.stringify(listed.json())).not.toContain('2345');
  });
});

describe('audit actors (docs/audit.md)', () => {
  it('records an API key caller as api_key:<id> on every route, as docs/audit.md says', async () => {
    const docs = readFileSync(resolve(import.meta.dirname, '../../docs/audit.md'), 'utf8');
    expect(docs).toContain('`api_key:<key id>`');
    const key = await context.services.accounts.createKey(orgId, { scope: 'admin', keyClass: 'live' });
    const webhook = await context.app.inject({
      method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Bearer ${key.apiKey}` },
      payload: { url: 'https://8.8.8.8/svc', events: ['threat.blocked'] },
    });
    expect(webhook.statusCode).toBe(201);
    const created = await call(key.apiKey, 'POST', '/api/v1/keys', { scope: 'read' });
    expect(created.statusCode).toBe(201);
    const actors = await context.services.db.withOrg(orgId, (tx) =>
      tx.query<{ action: string; actor: string }>(`SELECT action, actor FROM audit_log WHERE action IN ('webhook.create', 'api_key.created') ORDER BY seq DESC LIMIT 2`),
    );
    expect(actors.rows.map((row) => row.actor)).toEqual([`api_key:${key.key.key_id}`, `api_key:${key.key.key_id}`]);
  });

  it('records an API key caller as api_key:<id> on the gateway, geo-rule and MCP routes too (they said key:<id>)', async () => {
    const key = await context.services.accounts.createKey(orgId, { scope: 'admin', keyClass: 'live' });
    const gateway = await call(key.apiKey, 'POST', '/api/v1/gateways', { name: 'actor check', backend_url: 'https://8.8.8.8/api', health_check: null });
    expect(gateway.statusCode).toBe(201);
    const rule = await call(key.apiKey, 'POST', '/api/v1/geo-rules', { rule_name: 'actor check', action: 'block', countries: ['KP'] });
    expect(rule.statusCode).toBe(201);
    const server = await call(key.apiKey, 'POST', '/api/v1/mcp/servers', { name: 'actor-check', url: 'https://8.8.8.8/mcp' });
    expect(server.statusCode).toBe(201);
    await context.services.mcp.flush();
    const entries = await context.services.db.withOrg(orgId, (tx) =>
      tx.query<{ action: string; actor: string; details: { actor?: string } }>(`SELECT action, actor, details FROM audit_log WHERE action IN ('gateway.create', 'geo_rule.create', 'mcp.server.create') ORDER BY seq`),
    );
    const byAction = new Map(entries.rows.map((row) => [row.action, row.action === 'mcp.server.create' ? row.details.actor : row.actor]));
    expect(Object.fromEntries(byAction)).toEqual({ 'gateway.create': `api_key:${key.key.key_id}`, 'geo_rule.create': `api_key:${key.key.key_id}`, 'mcp.server.create': `api_key:${key.key.key_id}` });
  });
});
