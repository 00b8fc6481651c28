/**
 * Origin and Host validation on the MCP endpoints (DNS-rebinding protection; docs/mcp.md "Origin
 * and Host validation"): a request whose Origin is neither loopback, nor listed, nor its own
 * origin under a listed host is refused with 403 before it reaches the upstream; clients that send
 * no Origin (the SDK client, curl) are never refused by it. Real HTTP on loopback, the official
 * SDK client, the conformance fixture as the upstream.
 */
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { conformanceServer } from './fixtures/conformance-server.ts';
import { serveStreamable, type Upstream } from './upstreams.ts';

interface Target {
  context: TestContext;
  port: number;
  key: string;
  endpoint: string;
}

let upstream: Upstream;
let upstreamRequests = 0;
let loose: Target;
let strict: Target;

async function start(env: Record<string, string> = {}): Promise<Target> {
  const context = await createTestApp({ env });
  await context.app.listen({ port: 0, host: '127.0.0.1' });
  const { apiKey } = await context.createOrg({ plan: 'enterprise' });
  const created = await context.app.inject({ method: 'POST', url: '/api/v1/mcp/servers', headers: { authorization: `Bearer ${apiKey}` }, payload: { name: 'fixture', url: upstream.url } });
  expect(created.statusCode).toBe(201);
  return { context, port: (context.app.server.address() as AddressInfo).port, key: apiKey, endpoint: (created.json() as { endpoint: string }).endpoint };
}

const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'origin-test', version: '1.0.0' } } });

/** One raw HTTP request to svc on loopback with the given Host/Origin (fetch may not set Host). */
function send(target: Target, headers: Record<string, string>, options: { method?: string; path?: string } = {}): Promise<{ status: number; code: string | undefined }> {
  return new Promise((resolve, reject) => {
    const method = options.method ?? 'POST';
    const outgoing = httpRequest(
      {
        host: '127.0.0.1',
        port: target.port,
        method,
        path: options.path ?? target.endpoint,
        headers: { authorization: `Bearer ${target.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (answer) => {
        let text = '';
        const status = answer.statusCode ?? 0;
        // An SSE answer stays open: the status is enough.
        if ((answer.headers['content-type'] ?? '').includes('text/event-stream')) {
          answer.destroy();
          resolve({ status, code: undefined });
          return;
        }
        answer.on('data', (chunk: Buffer) => (text += chunk.toString()));
        answer.on('end', () => {
          let code: string | undefined;
          try {
            code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code as string | undefined;
          } catch {
            code = undefined;
          }
          resolve({ status, code: typeof code === 'string' ? code : undefined });
        });
      },
    );
    outgoing.once('error', reject);
    outgoing.end(method === 'POST' ? INITIALIZE : undefined);
  });
}

beforeAll(async () => {
  upstream = await serveStreamable(conformanceServer, {
    guard: () => {
      upstreamRequests += 1;
      return false;
    },
  });
  [loose, strict] = await Promise.all([
    start(),
    start({ MCP_ALLOWED_ORIGINS: 'https://app.example.com', ALLOWED_ORIGINS: 'https://console.example.com', MCP_ALLOWED_HOSTS: 'mcp.example.com,127.0.0.1' }),
  ]);
}, 240_000);

afterAll(async () => {
  for (const target of [loose, strict]) {
    target?.context.app.server.closeAllConnections();
    await target?.context.close();
  }
  await upstream?.close();
});

describe('Origin validation on the MCP endpoint (defaults)', () => {
  it('serves an SDK client, which sends no Origin, whatever the Host', async () => {
    const client = new Client({ name: 'sdk', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${loose.port}${loose.endpoint}`), { requestInit: { headers: { authorization: `Bearer ${loose.key}` } } }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('test_simple_text');
    } finally {
      await client.close();
    }
    expect(await send(loose, { host: 'mcp.example.com' })).toEqual({ status: 200, code: undefined });
  });

  it('refuses a rebound request (foreign Host and matching foreign Origin) with 403 MCP_ORIGIN_REFUSED before it reaches the upstream', async () => {
    const before = upstreamRequests;
    expect(await send(loose, { host: 'evil.example.com', origin: 'http://evil.example.com' })).toEqual({ status: 403, code: 'MCP_ORIGIN_REFUSED' });
    expect(await send(loose, { origin: 'https://evil.example.com' })).toEqual({ status: 403, code: 'MCP_ORIGIN_REFUSED' });
    expect(await send(loose, { origin: 'null' })).toEqual({ status: 403, code: 'MCP_ORIGIN_REFUSED' });
    expect(upstreamRequests).toBe(before);
  });

  it('refuses a foreign Origin on the SSE stream (GET) and the legacy transport endpoints too', async () => {
    expect(await send(loose, { origin: 'https://evil.example.com' }, { method: 'GET' })).toEqual({ status: 403, code: 'MCP_ORIGIN_REFUSED' });
    expect(await send(loose, { origin: 'https://evil.example.com' }, { method: 'GET', path: `${loose.endpoint}/sse` })).toEqual({ status: 403, code: 'MCP_ORIGIN_REFUSED' });
    expect(await send(loose, { origin: 'https://evil.example.com' }, { path: `${loose.endpoint}/messages?sessionId=x` })).toEqual({ status: 403, code: 'MCP_ORIGIN_REFUSED' });
  });

  it('accepts a page served from the user’s own machine (loopback Origin, any port)', async () => {
    expect(await send(loose, { host: `127.0.0.1:${loose.port}`, origin: `http://127.0.0.1:${loose.port}` })).toEqual({ status: 200, code: undefined });
    expect(await send(loose, { origin: 'http://localhost:6274' })).toEqual({ status: 200, code: undefined });
    expect(await send(loose, { origin: 'http://[::1]:3000' })).toEqual({ status: 200, code: undefined });
  });

  it('does not trust a same-origin request when the host is not known (a rebinding page is same-origin)', async () => {
    expect(await send(loose, { host: 'mcp.example.com', origin: 'https://mcp.example.com' })).toEqual({ status: 403, code: 'MCP_ORIGIN_REFUSED' });
  });
});

describe('Origin and Host validation (MCP_ALLOWED_ORIGINS, ALLOWED_ORIGINS, MCP_ALLOWED_HOSTS)', () => {
  it('accepts the listed origins, those of ALLOWED_ORIGINS, and same-origin requests under a listed host', async () => {
    expect(await send(strict, { host: 'mcp.example.com', origin: 'https://app.example.com' })).toEqual({ status: 200, code: undefined });
    expect(await send(strict, { host: 'mcp.example.com', origin: 'https://console.example.com' })).toEqual({ status: 200, code: undefined });
    expect(await send(strict, { host: 'mcp.example.com', origin: 'https://mcp.example.com' })).toEqual({ status: 200, code: undefined });
    expect(await send(strict, { host: 'mcp.example.com:443', origin: 'https://mcp.example.com' })).toEqual({ status: 200, code: undefined });
  });

  it('refuses an origin that is not listed, even under a listed host', async () => {
    expect(await send(strict, { host: 'mcp.example.com', origin: 'https://app.example.com.evil.example' })).toEqual({ status: 403, code: 'MCP_ORIGIN_REFUSED' });
    expect(await send(strict, { host: 'mcp.example.com', origin: 'http://app.example.com' })).toEqual({ status: 403, code: 'MCP_ORIGIN_REFUSED' });
  });

  it('refuses a Host that is not listed with 403 MCP_HOST_REFUSED, with or without an Origin', async () => {
    const before = upstreamRequests;
    expect(await send(strict, { host: 'evil.example.com' })).toEqual({ status: 403, code: 'MCP_HOST_REFUSED' });
    expect(await send(strict, { host: 'evil.example.com', origin: 'https://app.example.com' })).toEqual({ status: 403, code: 'MCP_HOST_REFUSED' });
    expect(upstreamRequests).toBe(before);
    expect(await send(strict, { host: `127.0.0.1:${strict.port}` })).toEqual({ status: 200, code: undefined });
  });

  it('leaves the rest of the API alone: the Host list applies to the MCP endpoints only', async () => {
    const response = await strict.context.app.inject({ method: 'GET', url: '/api/v1/mcp/servers', headers: { authorization: `Bearer ${strict.key}`, host: 'evil.example.com', origin: 'https://evil.example.com' } });
    expect(response.statusCode).toBe(200);
  });
});

describe('MCP_ALLOWED_ORIGINS and MCP_ALLOWED_HOSTS (operator configuration)', () => {
  it('stops startup on an entry that is not an origin or a host name, naming the variable', () => {
    const problems = (env: Record<string, string>): string[] => {
      try {
        loadConfig({ SECRET_KEY: 'k'.repeat(40), ...env });
        return [];
      } catch (error) {
        return error instanceof ConfigError ? [...error.problems] : ['not a ConfigError'];
      }
    };
    expect(problems({ MCP_ALLOWED_ORIGINS: 'https://app.example.com/path' })).toEqual([expect.stringContaining('MCP_ALLOWED_ORIGINS')]);
    expect(problems({ MCP_ALLOWED_ORIGINS: 'app.example.com' })).toEqual([expect.stringContaining('MCP_ALLOWED_ORIGINS')]);
    expect(problems({ MCP_ALLOWED_HOSTS: 'https://mcp.example.com' })).toEqual([expect.stringContaining('MCP_ALLOWED_HOSTS')]);
    expect(problems({ MCP_ALLOWED_HOSTS: 'mcp.example.com:8443' })).toEqual([expect.stringContaining('MCP_ALLOWED_HOSTS')]);
    const config = loadConfig({ SECRET_KEY: 'k'.repeat(40), MCP_ALLOWED_ORIGINS: 'HTTPS://App.Example.com:443, *', ALLOWED_ORIGINS: '*', MCP_ALLOWED_HOSTS: 'MCP.Example.com' });
    expect(config.mcpAllowedOrigins).toEqual(['https://app.example.com', '*']);
    expect(config.mcpAllowedHosts).toEqual(['mcp.example.com']);
  });
});
