/**
 * The fidelity harness (test/mcp/fidelity.ts): svc with the reference servers registered as an
 * org admin registers them by default (no tool_categories, default on_held), over Streamable HTTP
 * and over svc's stdio bridge, and the same servers reached directly (Streamable HTTP, or the
 * SDK's stdio client running the same command with the same environment).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { connectWith, differences, everythingSession, filesystemSession, resetFiles, type Step } from './fidelity.ts';
import { serveEverything, serveFilesystem, type Upstream } from './upstreams.ts';

export type FidelityCase = 'everything-http' | 'everything-stdio' | 'filesystem-http' | 'filesystem-stdio';

export interface FidelityHarness {
  readonly context: TestContext;
  readonly adminKey: string;
  readonly base: string;
  /** The endpoint (/mcp/{id}) each case's server is registered at. */
  readonly endpoints: Readonly<Record<FidelityCase, string>>;
  /** Runs a case's session directly, then through svc (X-Session-ID `session`). */
  run(which: FidelityCase, session?: string): Promise<{ direct: Step[]; proxied: Step[] }>;
  close(): Promise<void>;
}

function modulePath(specifier: string): string {
  return new URL(import.meta.resolve(specifier)).pathname;
}

export async function fidelityHarness(): Promise<FidelityHarness> {
  const scratch = mkdtempSync(join(tmpdir(), 'svc-mcp-fidelity-'));
  const root = join(scratch, 'files');
  const env = getDefaultEnvironment();
  const commands = {
    everything: { command: process.execPath, args: [modulePath('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'], env, cwd: null, orgs: null },
    filesystem: { command: process.execPath, args: [modulePath('@modelcontextprotocol/server-filesystem/dist/index.js'), root], env, cwd: null, orgs: null },
  };
  const context = await createTestApp({ services: { mcp: { stdioServers: commands } } });
  const upstreams: Upstream[] = [];
  try {
    await context.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(context.app.server.address() as AddressInfo).port}`;
    const { apiKey: adminKey } = await context.createOrg({ plan: 'enterprise' });
    const everything = await serveEverything();
    upstreams.push(everything);
    // resetFiles (fidelity.ts) creates the directory before each session; the server needs it at start.
    resetFiles(root);
    const filesystem = await serveFilesystem(root);
    upstreams.push(filesystem);
    const register = async (name: string, payload: Record<string, unknown>) => {
      const response = await context.app.inject({ method: 'POST', url: '/api/v1/mcp/servers', headers: { authorization: `Bearer ${adminKey}` }, payload: { name, ...payload } });
      if (response.statusCode !== 201) throw new Error(`registration failed: ${response.body}`);
      return (response.json() as { endpoint: string }).endpoint;
    };
    const endpoints: Record<FidelityCase, string> = {
      'everything-http': await register('everything', { url: everything.url }),
      'everything-stdio': await register('everything-stdio', { stdio: 'everything' }),
      'filesystem-http': await register('filesystem', { url: filesystem.url }),
      'filesystem-stdio': await register('filesystem-stdio', { stdio: 'filesystem' }),
    };
    const direct: Record<FidelityCase, () => StdioClientTransport | StreamableHTTPClientTransport> = {
      'everything-http': () => new StreamableHTTPClientTransport(new URL(everything.url)),
      'everything-stdio': () => new StdioClientTransport({ command: commands.everything.command, args: commands.everything.args, env, stderr: 'ignore' }),
      'filesystem-http': () => new StreamableHTTPClientTransport(new URL(filesystem.url)),
      'filesystem-stdio': () => new StdioClientTransport({ command: commands.filesystem.command, args: commands.filesystem.args, env, stderr: 'ignore' }),
    };
    const session = (which: FidelityCase, transport: () => StdioClientTransport | StreamableHTTPClientTransport) =>
      which.startsWith('everything') ? everythingSession(connectWith(transport)) : filesystemSession(connectWith(transport), root);
    return {
      context,
      adminKey,
      base,
      endpoints,
      async run(which, sessionId = `fidelity-${which}`) {
        const directSteps = await session(which, direct[which]);
        const proxied = () => new StreamableHTTPClientTransport(new URL(endpoints[which], base), { requestInit: { headers: { authorization: `Bearer ${adminKey}`, 'x-session-id': sessionId } } });
        return { direct: directSteps, proxied: await session(which, proxied) };
      },
      async close() {
        for (const upstream of upstreams) await upstream.close().catch(() => undefined);
        context.app.server.closeAllConnections();
        await context.close();
        rmSync(scratch, { recursive: true, force: true });
      },
    };
  } catch (error) {
    for (const upstream of upstreams) await upstream.close().catch(() => undefined);
    await context.close();
    rmSync(scratch, { recursive: true, force: true });
    throw error;
  }
}

/** Every case, one after the other (`npx tsx test/mcp/fidelity-run.ts` prints the steps that differ). */
export async function runAll(): Promise<Record<FidelityCase, { direct: Step[]; proxied: Step[] }>> {
  const harness = await fidelityHarness();
  try {
    const out = {} as Record<FidelityCase, { direct: Step[]; proxied: Step[] }>;
    for (const which of ['everything-http', 'everything-stdio', 'filesystem-http', 'filesystem-stdio'] as const) out[which] = await harness.run(which);
    return out;
  } finally {
    await harness.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const results = await runAll();
  for (const [name, { direct, proxied }] of Object.entries(results)) {
    const diff = differences(direct, proxied);
    process.stdout.write(`${name}: ${direct.length - diff.length}/${direct.length} steps identical\n`);
    for (const item of diff) process.stdout.write(`  ${item.step}\n    direct:  ${JSON.stringify(item.direct).slice(0, 700)}\n    proxied: ${JSON.stringify(item.proxied).slice(0, 700)}\n`);
  }
  process.exit(0);
}
