/**
 * Editing a registered MCP server (PATCH /api/v1/mcp/servers/{id}): name, target and settings
 * change, pinned definitions stay, and a new URL passes the SSRF check as at registration.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createDetectionEngine } from '../../src/detection/index.ts';
import { createMcp } from '../../src/mcp/index.ts';
import { assertPublicUrl } from '../../src/platform/ssrf.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { refusalCode, serveScripted, type ScriptedTool, type Upstream } from './upstreams.ts';

let context: TestContext;
let base: string;
let adminKey: string;
let orgId: string;
let first: Upstream;
let second: Upstream;
let changed: Upstream;
const clients: Client[] = [];

const tool = (description: string, reply: string): ScriptedTool => ({ definition: { name: 'add_numbers', description, inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } }, result: () => reply });

beforeAll(async () => {
  context = await createTestApp();
  await context.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(context.app.server.address() as AddressInfo).port}`;
  ({ apiKey: adminKey, orgId } = await context.createOrg());
  first = await serveScripted(() => [tool('Adds two numbers.', 'from the first server')]);
  second = await serveScripted(() => [tool('Adds two numbers.', 'from the second server')]);
  changed = await serveScripted(() => [tool('Adds two numbers. Also returns the weather.', 'from a changed server')]);
}, 240_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  for (const upstream of [first, second, changed]) await upstream?.close();
  await context?.close();
}, 120_000);

const request = (method: 'POST' | 'PATCH' | 'GET', url: string, payload?: Record<string, unknown>, key = adminKey) => context.app.inject({ method, url, headers: { authorization: `Bearer ${key}` }, ...(payload === undefined ? {} : { payload }) });

async function connect(endpoint: string, key = adminKey): Promise<Client> {
  const client = new Client({ name: 'registry', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint, base), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  clients.push(client);
  return client;
}

const text = (result: unknown) => JSON.stringify((result as { content: unknown }).content);

describe('editing a registered MCP server', () => {
  it('renames it and changes its settings without losing its pinned definitions', async () => {
    const created = (await request('POST', '/api/v1/mcp/servers', { name: 'calc', url: first.url })).json();
    await (await connect(created.endpoint)).listTools();
    const before = (await request('GET', `/api/v1/mcp/servers/${created.id}/definitions`)).json().definitions;
    expect(before).toHaveLength(1);
    const edited = await request('PATCH', `/api/v1/mcp/servers/${created.id}`, { name: 'calculator', on_held: 'block' });
    expect(edited.statusCode).toBe(200);
    expect(edited.json()).toMatchObject({ id: created.id, name: 'calculator', url: first.url, on_held: 'block', endpoint: created.endpoint });
    expect((await request('GET', `/api/v1/mcp/servers/${created.id}`)).json()).toMatchObject({ name: 'calculator', on_held: 'block' });
    expect((await request('GET', `/api/v1/mcp/servers/${created.id}/definitions`)).json().definitions).toEqual(before);
  });

  it('moves it to a new URL: the same definitions there stay pinned, other ones are held as changed', async () => {
    const created = (await request('POST', '/api/v1/mcp/servers', { name: 'moving', url: first.url })).json();
    const client = await connect(created.endpoint);
    await client.listTools();
    expect(text(await client.callTool({ name: 'add_numbers', arguments: { a: 1, b: 2 } }))).toContain('from the first server');
    expect((await request('PATCH', `/api/v1/mcp/servers/${created.id}`, { url: second.url })).statusCode).toBe(200);
    // The old upstream session is unknown at the new URL: a new client session.
    const moved = await connect(created.endpoint);
    expect((await moved.listTools()).tools.map((item) => item.name)).toEqual(['add_numbers']);
    expect(text(await moved.callTool({ name: 'add_numbers', arguments: { a: 1, b: 2 } }))).toContain('from the second server');
    expect((await request('PATCH', `/api/v1/mcp/servers/${created.id}`, { url: changed.url })).statusCode).toBe(200);
    const rugPulled = await connect(created.endpoint);
    expect((await rugPulled.listTools()).tools).toEqual([]);
    expect(refusalCode(await rugPulled.callTool({ name: 'add_numbers', arguments: { a: 1, b: 2 } }))).toBe('MCP_TOOL_HELD');
    const definition = (await request('GET', `/api/v1/mcp/servers/${created.id}/definitions`)).json().definitions[0];
    expect(definition).toMatchObject({ name: 'add_numbers', pending_reason: 'changed' });
    expect(definition.hash).not.toBeNull();
  });

  it('applies a changed category override to a tool pinned before it, and infers it again when the override goes', async () => {
    const created = (await request('POST', '/api/v1/mcp/servers', { name: 'categories', url: first.url })).json();
    const viewerKey = (await context.services.accounts.createKey(orgId, { scope: 'read', keyClass: 'live' })).apiKey;
    const viewer = await connect(created.endpoint, viewerKey);
    await viewer.listTools();
    expect(refusalCode(await viewer.callTool({ name: 'add_numbers', arguments: { a: 1, b: 2 } }))).toBeUndefined();
    await request('PATCH', `/api/v1/mcp/servers/${created.id}`, { tool_categories: { add_numbers: 'write_files' } });
    expect(refusalCode(await viewer.callTool({ name: 'add_numbers', arguments: { a: 1, b: 2 } }))).toBe('MCP_TOOL_FORBIDDEN');
    // Listed again while the override holds: the pin now stores the override's category.
    await viewer.listTools();
    expect((await request('GET', `/api/v1/mcp/servers/${created.id}/definitions`)).json().definitions[0].category).toBe('write_files');
    await request('PATCH', `/api/v1/mcp/servers/${created.id}`, { tool_categories: {} });
    expect(refusalCode(await viewer.callTool({ name: 'add_numbers', arguments: { a: 1, b: 2 } }))).toBeUndefined();
  });

  it('answers bad edits with a stable error and changes nothing', async () => {
    const created = (await request('POST', '/api/v1/mcp/servers', { name: 'stable', url: first.url })).json();
    await request('POST', '/api/v1/mcp/servers', { name: 'taken', url: first.url });
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ name: 'taken' }, 409, 'CONFLICT'],
      [{}, 400, 'VALIDATION_FAILED'],
      [{ command: '/bin/sh' }, 400, 'VALIDATION_FAILED'],
      [{ stdio: 'files' }, 400, 'VALIDATION_FAILED'],
      [{ tool_categories: { add_numbers: 'root' } }, 400, 'VALIDATION_FAILED'],
    ];
    for (const [payload, status, code] of cases) {
      const response = await request('PATCH', `/api/v1/mcp/servers/${created.id}`, payload);
      expect([response.statusCode, response.json().error.code], JSON.stringify(payload)).toEqual([status, code]);
    }
    expect((await request('PATCH', '/api/v1/mcp/servers/00000000-0000-4000-8000-000000000000', { name: 'x' })).json().error.code).toBe('NOT_FOUND');
    const readKey = (await context.services.accounts.createKey(orgId, { scope: 'read', keyClass: 'live' })).apiKey;
    expect((await request('PATCH', `/api/v1/mcp/servers/${created.id}`, { name: 'mine' }, readKey)).json().error.code).toBe('SCOPE_INSUFFICIENT');
    expect((await request('GET', `/api/v1/mcp/servers/${created.id}`)).json()).toMatchObject({ name: 'stable', url: first.url, on_held: 'hide', tool_categories: {} });
  });

  it('checks a new URL against SSRF as at registration', async () => {
    // The core as a deployment without ALLOW_PRIVATE_TARGETS builds it (same storage, strict SSRF check).
    const strict = createMcp({
      db: context.services.db, cache: context.services.cache, events: context.services.events, logger: context.services.logger,
      audit: context.services.audit, detection: createDetectionEngine(),
      checkTarget: (url, field) => assertPublicUrl(url, { allowPrivate: false, ...(field === undefined ? {} : { field }) }),
      allowPrivateTargets: false, enabled: true,
    });
    try {
      const created = (await request('POST', '/api/v1/mcp/servers', { name: 'ssrf', url: first.url })).json();
      for (const url of ['http://127.0.0.1:9/mcp', 'http://169.254.169.254/latest', 'http://[::1]/mcp', 'http://10.0.0.7/mcp']) {
        await expect(strict.updateServer(orgId, 'test', created.id, { url })).rejects.toMatchObject({ code: 'TARGET_FORBIDDEN' });
      }
      expect((await request('GET', `/api/v1/mcp/servers/${created.id}`)).json().url).toBe(first.url);
    } finally {
      await strict.close();
    }
  });
});
