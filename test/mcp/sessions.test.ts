/**
 * MCP sessions: X-Session-ID rows per org, the heartbeat endpoint and expiry (a short TTL stands
 * in for the 30 minutes), with the official SDK client through the proxy.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildApp, type AppInstance } from '../../src/http/build-app.ts';
import { createMcp, SESSION_TTL_MS } from '../../src/mcp/index.ts';
import type { Services } from '../../src/services.ts';
import { createTestServices } from '../helpers/app.ts';
import { serveScripted, type Upstream } from './upstreams.ts';

const TTL_MS = 60_000;
/** Moved forward by the expiry test instead of waiting (the machine's speed must not decide). */
let clockOffset = 0;
let services: Services;
let app: AppInstance;
let upstream: Upstream;
let base: string;
let keyA: string;
let keyB: string;
let endpointA: string;
let appB: AppInstance | undefined;

beforeAll(async () => {
  services = await createTestServices({ services: { mcp: { sessionTtlMs: TTL_MS, now: () => Date.now() + clockOffset } } });
  app = await buildApp(services.config, services);
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  upstream = await serveScripted(() => [{ definition: { name: 'echo', description: 'Echoes.', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } }, result: (args) => String(args.message) }]);
  keyA = (await services.accounts.createOrg({ name: 'sessions-a' })).apiKey;
  keyB = (await services.accounts.createOrg({ name: 'sessions-b' })).apiKey;
  const created = await app.inject({ method: 'POST', url: '/api/v1/mcp/servers', headers: { authorization: `Bearer ${keyA}` }, payload: { name: 'echo', url: upstream.url } });
  endpointA = created.json().endpoint;
}, 240_000);

afterAll(async () => {
  await appB?.close();
  await app?.close();
  await services?.close();
  await upstream?.close();
});

async function use(sessionId: string): Promise<Client> {
  const client = new Client({ name: 'sessions', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(endpointA, base), { requestInit: { headers: { authorization: `Bearer ${keyA}`, 'x-session-id': sessionId } } }));
  await client.callTool({ name: 'echo', arguments: { message: 'hi' } });
  return client;
}

const heartbeat = (id: string, key = keyA) => app.inject({ method: 'POST', url: `/api/v1/mcp/sessions/${encodeURIComponent(id)}/heartbeat`, headers: { authorization: `Bearer ${key}` } });

describe('MCP sessions', () => {
  it('expires after 30 minutes by default', () => {
    expect(SESSION_TTL_MS).toBe(30 * 60_000);
  });

  it('answers 404 to a heartbeat for a session that never existed', async () => {
    expect((await heartbeat('never-seen')).json().error.code).toBe('NOT_FOUND');
  });

  it('records a session from traffic and restarts its clock on heartbeat', async () => {
    const client = await use('agent-run-1');
    const before = await app.inject({ method: 'GET', url: '/api/v1/mcp/sessions/agent-run-1', headers: { authorization: `Bearer ${keyA}` } });
    expect(before.json()).toMatchObject({ id: 'agent-run-1', state: 'active', role: 'admin' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const beat = await heartbeat('agent-run-1');
    expect(beat.statusCode).toBe(200);
    expect(Date.parse(beat.json().expires_at)).toBeGreaterThan(Date.parse(before.json().expires_at));
    await client.close();
  });

  it('keeps X-Session-ID per org: another org cannot see or extend the session', async () => {
    const client = await use('shared-name');
    expect((await heartbeat('shared-name', keyB)).json().error.code).toBe('NOT_FOUND');
    await client.close();
  });

  it('keeps a session another replica kept alive, though this replica last saw it a TTL ago', async () => {
    const replicaB = createMcp({ db: services.db, cache: services.cache, events: services.events, logger: services.logger, audit: services.audit, detection: services.detection, checkTarget: (url, field) => services.checkTarget(url, field), allowPrivateTargets: services.config.allowPrivateTargets, enabled: true, sessionTtlMs: TTL_MS, now: () => Date.now() + clockOffset });
    // Replica B's app shares this file's services: it is closed with them (closing an app ends the shared open streams).
    appB = await buildApp(services.config, { ...services, mcp: replicaB });
    const client = await use('two-replicas');
    try {
      clockOffset = TTL_MS - 10_000;
      const beat = await appB.inject({ method: 'POST', url: '/api/v1/mcp/sessions/two-replicas/heartbeat', headers: { authorization: `Bearer ${keyA}` } });
      expect(beat.statusCode).toBe(200);
      // Past the expiry this replica remembers, inside the one the other replica's heartbeat set.
      clockOffset = TTL_MS + 20_000;
      const result = await client.callTool({ name: 'echo', arguments: { message: 'still here' } });
      expect(result.content).toEqual([{ type: 'text', text: 'still here' }]);
      const stored = await app.inject({ method: 'GET', url: '/api/v1/mcp/sessions/two-replicas', headers: { authorization: `Bearer ${keyA}` } });
      expect(stored.json()).toMatchObject({ state: 'active' });
    } finally {
      clockOffset = 0;
      await client.close();
      await replicaB.close();
    }
  });

  it('expires a session left without heartbeat or traffic, refusing both heartbeat and calls', async () => {
    const client = await use('idle-run');
    clockOffset = TTL_MS + 1_000;
    const call = client.callTool({ name: 'echo', arguments: { message: 'late' } });
    await expect(call).rejects.toThrow();
    const beat = await heartbeat('idle-run');
    expect(beat.statusCode).toBe(410);
    expect(beat.json().error.code).toBe('MCP_SESSION_EXPIRED');
    await client.close().catch(() => undefined);
  });
});
