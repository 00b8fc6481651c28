/**
 * MCP authorization as the MCP spec describes it for a protected resource: /mcp/{id} publishes
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) naming the org's authorization server, a 401
 * names that metadata in WWW-Authenticate, and an access token that server issued for this
 * endpoint (RFC 8707 resource) opens an official-SDK session — tested against a real OpenID
 * provider (oidc-provider) started by the test. Tokens for another resource, from another
 * issuer, or forged are refused.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { serveScripted, type Upstream } from './upstreams.ts';

let context: TestContext;
let base: string;
let upstream: Upstream;
let idp: Server;
let issuer: string;
let admin: string;
let orgId: string;
let serverId: string;
const CLIENT = { client_id: 'agent', client_secret: 'agent-secret-0123456789abcdef0123456789' };

async function startProvider(): Promise<void> {
  let handler: (request: IncomingMessage, response: ServerResponse) => void = (_request, response) => response.writeHead(503).end();
  idp = createServer((request, response) => handler(request, response));
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'ES256', use: 'sig' };
  const provider = new Provider(issuer, {
    clients: [{ ...CLIENT, grant_types: ['client_credentials'], redirect_uris: [], response_types: [], id_token_signed_response_alg: 'ES256' }],
    jwks: { keys: [jwk] },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined as unknown as string,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => ({ scope: 'mcp', audience: resource, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }),
      },
    },
  });
  handler = provider.callback();
}

async function tokenFor(resource: string): Promise<string> {
  const answer = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${CLIENT.client_id}:${CLIENT.client_secret}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope: 'mcp' }),
  });
  const body = (await answer.json()) as { access_token?: string; error?: string };
  if (body.access_token === undefined) throw new Error(`token endpoint: ${JSON.stringify(body)}`);
  return body.access_token;
}

beforeAll(async () => {
  await startProvider();
  context = await createTestApp();
  await context.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(context.app.server.address() as AddressInfo).port}`;
  upstream = await serveScripted(() => [{ definition: { name: 'lookup', description: 'Looks up a word in the dictionary.', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true, openWorldHint: false } }, result: () => 'a word' }]);
  const org = await context.createOrg();
  admin = org.apiKey;
  orgId = org.orgId;
  const created = await fetch(`${base}/api/v1/mcp/servers`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'dictionary', url: upstream.url }) });
  serverId = ((await created.json()) as { id: string }).id;
}, 120_000);

afterAll(async () => {
  await context?.close();
  await upstream?.close();
  await new Promise((resolve) => idp?.close(resolve));
});

const put = (body: unknown) => fetch(`${base}/api/v1/mcp/authorization`, { method: 'PUT', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('OAuth on the MCP endpoints', () => {
  it('publishes no metadata and no challenge until the org configures an authorization server', async () => {
    expect((await fetch(`${base}/.well-known/oauth-protected-resource/mcp/${serverId}`)).status).toBe(404);
    const refused = await fetch(`${base}/mcp/${serverId}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBeNull();
  });

  it('configures the authorization server by its issuer (keys discovered), audited', async () => {
    const saved = await put({ issuer, role: 'viewer', scopes_supported: ['mcp'] });
    expect(saved.status).toBe(200);
    expect(await saved.json()).toMatchObject({ issuer, jwks_uri: `${issuer}/jwks`, role: 'viewer' });
    const invalid = await put({ issuer: 'ftp://example.test' });
    expect(invalid.status).toBe(400);
    const audit = await fetch(`${base}/api/v1/audit?action=mcp.authorization.set`, { headers: { authorization: `Bearer ${admin}` } });
    expect(JSON.stringify(await audit.json())).toContain(issuer);
  });

  it('publishes RFC 9728 metadata and names it in the 401 challenge', async () => {
    const resource = `${base}/mcp/${serverId}`;
    const metadata = await fetch(`${base}/.well-known/oauth-protected-resource/mcp/${serverId}`);
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toMatchObject({ resource, authorization_servers: [issuer], bearer_methods_supported: ['header'], scopes_supported: ['mcp'] });
    const refused = await fetch(resource, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp/${serverId}"`);
  });

  it("opens an official-SDK session with an access token the org's authorization server issued for this endpoint", async () => {
    const token = await tokenFor(`${base}/mcp/${serverId}`);
    const client = new Client({ name: 'oauth-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`/mcp/${serverId}`, base), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((tool) => tool.name)).toEqual(['lookup']);
      const result = await client.callTool({ name: 'lookup', arguments: {} });
      expect(result.isError).not.toBe(true);
    } finally {
      await client.close();
    }
    // The token opens the MCP endpoint only: svc's own API does not take it.
    expect((await fetch(`${base}/api/v1/whoami`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
  });

  it('refuses a token minted for another resource, a forged one, and any once the configuration is removed', async () => {
    const elsewhere = await tokenFor('https://other.example.test/mcp');
    const call = (token: string) => fetch(`${base}/mcp/${serverId}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) });
    const wrongAudience = await call(elsewhere);
    expect(wrongAudience.status).toBe(401);
    expect(((await wrongAudience.json()) as { error: { code: string } }).error.code).toBe('AUTH_INVALID');
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT({ scope: 'mcp' }).setProtectedHeader({ alg: 'ES256', kid: 'test-key' }).setIssuer(issuer).setAudience(`${base}/mcp/${serverId}`).setSubject('agent').setIssuedAt().setExpirationTime('5m').sign(privateKey);
    expect((await call(forged)).status).toBe(401);

    const valid = await tokenFor(`${base}/mcp/${serverId}`);
    expect((await fetch(`${base}/api/v1/mcp/authorization`, { method: 'DELETE', headers: { authorization: `Bearer ${admin}` } })).status).toBe(204);
    expect((await call(valid)).status).toBe(401);
    expect((await fetch(`${base}/.well-known/oauth-protected-resource/mcp/${serverId}`)).status).toBe(404);
    void orgId;
  });
});
