/**
 * A browser MCP client (the MCP Inspector on a loopback origin) through svc: CORS must let its
 * fetch read the session id and the negotiated protocol version, and send the DELETE that ends
 * the session. Without them the client cannot keep a session at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { serveEverything, type Upstream } from './upstreams.ts';

let context: TestContext;
let everything: Upstream;
let adminKey: string;
const ORIGIN = 'http://localhost:6274';

beforeAll(async () => {
  context = await createTestApp();
  ({ apiKey: adminKey } = await context.createOrg());
  everything = await serveEverything();
}, 120_000);

afterAll(async () => {
  await everything?.close();
  await context?.close();
});

describe('a browser MCP client on a loopback origin', () => {
  it('may read Mcp-Session-Id and MCP-Protocol-Version, and may DELETE its session', async () => {
    const registered = await context.app.inject({ method: 'POST', url: '/api/v1/mcp/servers', headers: { authorization: `Bearer ${adminKey}` }, payload: { name: 'everything-browser', url: everything.url } });
    expect(registered.statusCode).toBe(201);
    const endpoint = registered.json().endpoint as string;
    const preflight = await context.app.inject({ method: 'OPTIONS', url: endpoint, headers: { origin: ORIGIN, 'access-control-request-method': 'DELETE', 'access-control-request-headers': 'authorization, mcp-session-id' } });
    expect(preflight.statusCode).toBe(204);
    expect(String(preflight.headers['access-control-allow-methods']).split(/,\s*/)).toContain('DELETE');
    const initialize = await context.app.inject({
      method: 'POST',
      url: endpoint,
      headers: { origin: ORIGIN, authorization: `Bearer ${adminKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'inspector', version: '1.0.0' } } },
    });
    expect(initialize.statusCode).toBe(200);
    expect(initialize.headers['mcp-session-id']).toEqual(expect.any(String));
    const exposed = String(initialize.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(['mcp-session-id', 'mcp-protocol-version', 'x-request-id']));
  });
});
