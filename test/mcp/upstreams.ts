/**
 * Real MCP upstreams for the proxy's tests, on 127.0.0.1 with a kernel-chosen port: the
 * reference server-everything from npm, server-filesystem from npm (stdio, bridged to Streamable
 * HTTP with the SDK's own transports), and small servers written for the tests with the official
 * SDK whose tool definitions and results the test controls (poisoned, rug-pulled, injected).
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
// server-everything has no exports map: its factory is imported from its published file.
import { createServer as createEverything } from '@modelcontextprotocol/server-everything/dist/server/index.js';

export interface Upstream {
  url: string;
  close(): Promise<void>;
}

type Connectable = { connect(transport: StreamableHTTPServerTransport): Promise<void>; close(): Promise<void> };

/** Serves one MCP server instance per session over Streamable HTTP (with resumability). */
export async function serveStreamable(
  factory: () => Connectable,
  options: { stateless?: boolean; /** Answers the request itself (true) before the MCP transport sees it, e.g. to refuse it. */ guard?: (request: IncomingMessage, response: ServerResponse) => boolean } = {},
): Promise<Upstream> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const servers: Connectable[] = [];
  const http = createHttpServer(async (request: IncomingMessage, response: ServerResponse) => {
    try {
      if (options.guard?.(request, response) === true) return;
      const sessionId = request.headers['mcp-session-id'];
      if (typeof sessionId === 'string') {
        const transport = transports.get(sessionId);
        if (transport === undefined) {
          response.writeHead(404).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
          return;
        }
        await transport.handleRequest(request, response);
        return;
      }
      const server = factory();
      servers.push(server);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: options.stateless ? undefined : () => randomUUID(),
        eventStore: new InMemoryEventStore(),
        onsessioninitialized: (id) => void transports.set(id, transport),
      });
      await server.connect(transport);
      await transport.handleRequest(request, response);
    } catch (error) {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    }
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async close() {
      for (const transport of transports.values()) await transport.close().catch(() => undefined);
      for (const server of servers) await server.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** The npm reference server-everything. */
export function serveEverything(): Promise<Upstream> {
  return serveStreamable(() => {
    const { server } = createEverything();
    return server;
  });
}

/** server-filesystem from npm over stdio, bridged message for message to Streamable HTTP. */
export async function serveFilesystem(root: string): Promise<Upstream> {
  const bridges: StdioClientTransport[] = [];
  const upstream = await serveStreamable(() => {
    const stdio = new StdioClientTransport({ command: process.execPath, args: [require_resolve('@modelcontextprotocol/server-filesystem/dist/index.js'), root], stderr: 'ignore' });
    bridges.push(stdio);
    let http: StreamableHTTPServerTransport | null = null;
    return {
      async connect(transport) {
        http = transport;
        stdio.onmessage = (message: JSONRPCMessage) => void http?.send(message, 'id' in message && !('method' in message) ? { relatedRequestId: message.id } : undefined);
        transport.onmessage = (message: JSONRPCMessage) => void stdio.send(message);
        await stdio.start();
        await transport.start();
      },
      async close() {
        await stdio.close();
      },
    };
  });
  return { url: upstream.url, close: async () => { await upstream.close(); for (const bridge of bridges) await bridge.close().catch(() => undefined); } };
}

function require_resolve(specifier: string): string {
  return new URL(import.meta.resolve(specifier)).pathname;
}

export interface ScriptedTool {
  definition: Tool;
  /** The result content text (or a function of the arguments). */
  result: (args: Record<string, unknown>) => string;
}

/**
 * Serves one MCP server instance per connection over the legacy HTTP+SSE transport (protocol
 * revision 2024-11-05) with the SDK's own SSEServerTransport, as server-everything's `sse` mode
 * does (GET /sse, POST /message?sessionId=…), on 127.0.0.1 with a kernel-chosen port.
 */
export async function serveSse(factory: () => { connect(transport: SSEServerTransport): Promise<void>; close(): Promise<void> }): Promise<Upstream> {
  const transports = new Map<string, SSEServerTransport>();
  const servers: Array<{ close(): Promise<void> }> = [];
  const http = createHttpServer(async (request: IncomingMessage, response: ServerResponse) => {
    try {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      if (request.method === 'GET' && url.pathname === '/sse') {
        const transport = new SSEServerTransport('/message', response);
        transports.set(transport.sessionId, transport);
        response.once('close', () => transports.delete(transport.sessionId));
        const server = factory();
        servers.push(server);
        await server.connect(transport);
        return;
      }
      const transport = request.method === 'POST' && url.pathname === '/message' ? transports.get(url.searchParams.get('sessionId') ?? '') : undefined;
      if (transport === undefined) {
        response.writeHead(404).end('unknown session');
        return;
      }
      await transport.handlePostMessage(request, response);
    } catch (error) {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    }
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/sse`,
    async close() {
      for (const server of servers) await server.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** The npm reference server-everything over the legacy HTTP+SSE transport. */
export function serveEverythingSse(): Promise<Upstream> {
  return serveSse(() => createEverything().server);
}

/** The command that runs server-everything from npm over stdio (its default mode). */
export function everythingStdioCommand(): { command: string; args: string[]; env: Record<string, string>; cwd: null; orgs: null } {
  return { command: process.execPath, args: [require_resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'], env: {}, cwd: null, orgs: null };
}

/** The command that runs test/mcp/fixtures/stdio-scripted.ts over stdio with the tools in `file`. */
export function scriptedStdioCommand(file: string): { command: string; args: string[]; env: Record<string, string>; cwd: null; orgs: null } {
  return { command: process.execPath, args: ['--import', 'tsx', new URL('./fixtures/stdio-scripted.ts', import.meta.url).pathname, file], env: {}, cwd: null, orgs: null };
}

/** A test server whose tools (definitions and results) the test can change between calls, over the legacy HTTP+SSE transport. */
export function serveScriptedSse(tools: () => ScriptedTool[]): Promise<Upstream> {
  return serveSse(() => scriptedServer(tools));
}

function scriptedServer(tools: () => ScriptedTool[], instructions?: string): Server {
  const server = new Server({ name: 'scripted', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } }, ...(instructions === undefined ? {} : { instructions }) });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools().map((tool) => tool.definition) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = tools().find((candidate) => candidate.definition.name === request.params.name);
    if (tool === undefined) return { content: [{ type: 'text', text: 'no such tool' }], isError: true };
    return { content: [{ type: 'text', text: tool.result(request.params.arguments ?? {}) }] };
  });
  return server;
}

/** A test server whose tools (definitions and results) the test can change between calls. */
export async function serveScripted(tools: () => ScriptedTool[], instructions?: string): Promise<Upstream> {
  return serveStreamable(() => {
    const server = new Server({ name: 'scripted', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } }, ...(instructions === undefined ? {} : { instructions }) });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools().map((tool) => tool.definition) }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const tool = tools().find((candidate) => candidate.definition.name === request.params.name);
      if (tool === undefined) return { content: [{ type: 'text', text: 'no such tool' }], isError: true };
      return { content: [{ type: 'text', text: tool.result(request.params.arguments ?? {}) }] };
    });
    return server;
  });
}

/** The stable code of svc's refusal of a tool call (`_meta["svc/refusal"].code` of its isError result), if it is one. */
export function refusalCode(result: unknown): string | undefined {
  const meta = (result as { _meta?: Record<string, unknown> } | null)?._meta;
  const refusal = meta?.['svc/refusal'] as { code?: unknown } | undefined;
  return typeof refusal?.code === 'string' ? refusal.code : undefined;
}
