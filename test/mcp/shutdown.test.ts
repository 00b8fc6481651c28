/**
 * Shutdown with an MCP session its client never ended: the client closed its transport without
 * DELETE (a crashed agent, a laptop lid), leaving svc's session and its upstream streams open.
 * Closing svc must not wait on it: an SSE stream still open is ended by shutdown (bounded by
 * STREAM_SHUTDOWN_GRACE_MS), the upstream agents are closed with the MCP step (docs/mcp.md).
 */
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createTestApp } from '../helpers/app.ts';
import { serveScripted } from './upstreams.ts';

describe('closing svc while an MCP session is left open by its client', () => {
  for (const clientCloses of [true, false]) {
    it(`closes the app and its services without waiting on the abandoned session (client ${clientCloses ? 'closed its transport' : 'still connected'})`, async () => {
      const upstream = await serveScripted(() => [{ definition: { name: 'add', description: 'Adds two numbers.', inputSchema: { type: 'object', properties: {} } }, result: () => 'sum' }]);
      const context = await createTestApp();
      try {
        await context.app.listen({ port: 0, host: '127.0.0.1' });
        const base = `http://127.0.0.1:${(context.app.server.address() as AddressInfo).port}`;
        const { apiKey } = await context.createOrg();
        const created = await context.app.inject({ method: 'POST', url: '/api/v1/mcp/servers', headers: { authorization: `Bearer ${apiKey}` }, payload: { name: 'calculator', url: upstream.url } });
        expect(created.statusCode).toBe(201);
        const client = new Client({ name: 'abandoning', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(`/mcp/${(created.json() as { id: string }).id}`, base), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }));
        expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['add']);
        // Gone without DELETE: svc's session, and its streams to the upstream, stay open.
        if (clientCloses) await client.close();

        const started = Date.now();
        await context.close();
        const elapsed = Date.now() - started;
        // Open streams are ended (at most STREAM_SHUTDOWN_GRACE_MS, 5 s) and every close step is
        // bounded (10 s); nothing waits on the session. A hang, not a slow machine, would pass 20 s.
        expect(elapsed).toBeLessThan(20_000);
      } finally {
        await Promise.race([upstream.close(), new Promise((resolve) => setTimeout(resolve, 5_000))]);
      }
    }, 120_000);
  }
});
