/**
 * Targets and ALLOW_PRIVATE_TARGETS (issue #33, item 5). With the flag off: every field that
 * takes a URL refuses IPv6 forms that hide a private address (the rest of 64:ff9b::/32, Teredo
 * embedding a private IPv4); and a target saved while the flag was on (here: written to the store
 * directly, as it was then) is refused at use, also when its host is an IP literal: a gateway's
 * traffic, its health checks and an MCP server's calls never reach it.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { startBackend, type Backend } from '../apisec/backend.ts';

let strict: TestContext;
let apiKey: string;
let orgId: string;
let backend: Backend;
let mcpUpstream: Server;
let mcpRequests = 0;

beforeAll(async () => {
  backend = await startBackend();
  mcpUpstream = createServer((incoming, outgoing) => {
    mcpRequests++;
    incoming.resume();
    outgoing.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}');
  });
  await new Promise<void>((resolve) => mcpUpstream.listen(0, '127.0.0.1', resolve));
  strict = await createTestApp({ env: { ALLOW_PRIVATE_TARGETS: 'false' } });
  ({ apiKey, orgId } = await strict.createOrg({ plan: 'enterprise' }));
}, 60_000);

afterAll(async () => {
  await strict?.close();
  await backend?.close();
  mcpUpstream?.closeAllConnections();
  await new Promise((resolve) => mcpUpstream?.close(resolve));
});

const call = (method: 'POST' | 'PATCH' | 'PUT', url: string, payload: Record<string, unknown>) =>
  strict.app.inject({ method, url, headers: { authorization: `Bearer ${apiKey}` }, payload });

describe('URLs that hide a private address in IPv6', () => {
  const hidden = [
    'http://[64:ff9b:2::a00:1]/', // 64:ff9b::/32 outside both NAT64 prefixes
    'http://[64:ff9b:0:1::808:808]/',
    'https://[64:ff9b:1::7f00:1]/', // NAT64 local use
    'http://[64:ff9b::a9fe:a9fe]/latest/meta-data/', // NAT64 well-known prefix, metadata
    'http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/', // Teredo, client 10.0.0.1
    'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]:8080/', // Teredo, client 127.0.0.1
    'http://[2001:0:4136:e378:8000:63bf:5601:5601]/', // Teredo, client 169.254.169.254
    'http://[2001:0:a00:1:8000:63bf:f7f7:f7f7]/', // Teredo, server 10.0.0.1
    'http://[4000::1]/', // outside global unicast
  ];

  it('are refused with 403 TARGET_FORBIDDEN in every field that takes a URL', async () => {
    const webhook = await call('POST', '/api/v1/webhooks', { url: 'http://93.184.216.34/hook', events: ['threat.blocked'] });
    expect(webhook.statusCode).toBe(201);
    const gateway = await call('POST', '/api/v1/gateways', { name: 'public', backend_url: 'http://93.184.216.34', health_check: null });
    expect(gateway.statusCode).toBe(201);
    const fields: Array<[string, (url: string) => Promise<{ statusCode: number; json(): unknown }>]> = [
      ['webhook url', (url) => call('POST', '/api/v1/webhooks', { url, events: ['threat.blocked'] })],
      ['webhook url (update)', (url) => call('PATCH', `/api/v1/webhooks/${(webhook.json() as { id: string }).id}`, { url })],
      ['gateway backend_url', (url) => call('POST', '/api/v1/gateways', { name: 'hidden', backend_url: url.replace(/\/[^\]/]*$/, ''), health_check: null })],
      ['gateway backend_url (update)', (url) => call('PATCH', `/api/v1/gateways/${(gateway.json() as { id: string }).id}`, { backend_url: url.replace(/\/[^\]/]*$/, '') })],
      ['MCP server url', (url) => call('POST', '/api/v1/mcp/servers', { name: `hidden-${randomUUID().slice(0, 8)}`, url, transport: 'streamable_http' })],
      ['provider base_url', (url) => call('PUT', '/api/v1/providers/openai/key', { key: 'sk-test-0123456789abcdef', base_url: url })],
    ];
    const accepted: string[] = [];
    for (const url of hidden) {
      for (const [field, send] of fields) {
        const answer = await send(url);
        if (answer.statusCode !== 403 || (answer.json() as { error: { code: string } }).error.code !== 'TARGET_FORBIDDEN') accepted.push(`${field} ${url}: ${answer.statusCode}`);
      }
    }
    expect(accepted).toEqual([]);
  });
});

describe('targets saved while ALLOW_PRIVATE_TARGETS was on', () => {
  it('are refused at use once it is off: gateway traffic and health checks to an IP-literal backend never reach it', async () => {
    const gateway = await strict.services.apisec.store.create(orgId, {
      name: 'saved while allowed',
      backendUrl: backend.url,
      mode: 'monitor',
      hostname: null,
      pathPrefix: null,
      openapi: null,
      settings: { rateLimit: null, botPolicy: { human: 'allow', automation: 'allow', bot: 'allow', scraper: 'log', scanner: 'block' }, healthCheck: { path: '/health', intervalSeconds: 10, timeoutMs: 1_000, unhealthyAfter: 3 }, timeoutMs: 5_000, blockDetails: 'hidden' },
    });
    expect(new URL(backend.url).hostname).toBe('127.0.0.1');
    const before = backend.received.length;
    const answer = await strict.app.inject({ method: 'GET', url: `/gw/${gateway.id}/items` });
    expect(answer.statusCode).toBe(502);
    expect(answer.json()).toMatchObject({ error: { code: 'BACKEND_UNREACHABLE', cause: 'ETARGETFORBIDDEN' } });
    const state = await strict.services.apisec.health.check(gateway);
    expect(state.lastStatus).toBeNull();
    expect(backend.received.length).toBe(before);
  });

  it('are refused at use once it is off: an MCP server on an IP literal is never called', async () => {
    const port = (mcpUpstream.address() as { port: number }).port;
    const id = randomUUID();
    await strict.services.db.withOrg(orgId, (tx) =>
      tx.query(`INSERT INTO mcp_servers (id, org_id, name, url, transport, tool_categories, on_held) VALUES ($1, $2, 'saved while allowed', $3, 'streamable_http', '{}', 'hide')`, [id, orgId, `http://127.0.0.1:${port}/mcp`]),
    );
    const answer = await strict.app.inject({
      method: 'POST',
      url: `/mcp/${id}`,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } },
    });
    expect(answer.statusCode).toBe(403);
    expect(mcpRequests).toBe(0);
  });
});
