/**
 * Runs the official MCP conformance suite (@modelcontextprotocol/conformance, server scenarios)
 * against an upstream directly and through svc's MCP proxy (both at once), and returns both
 * summaries. The suite cannot send an API key, so a loopback shim in front of svc adds
 * `Authorization: Bearer <key>` and pipes everything else through untouched (headers, `Host`
 * included, and bodies streamed).
 *
 * The upstream is the conformance fixture (test/mcp/fixtures/conformance-server.ts) unless given.
 * `npx tsx test/mcp/conformance.ts` prints the comparison as JSON (docs/mcp.md has the table);
 * `--everything` runs it against server-everything from npm instead, and
 * `--url http://127.0.0.1:<port>/mcp` against a server already running there (the suite's own
 * reference server, started from the suite's git repository: docs/mcp.md "Conformance");
 * `--any-origin` runs svc with its Origin check off (MCP_ALLOWED_ORIGINS=*).
 */
import { spawn } from 'node:child_process';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildApp } from '../../src/http/build-app.ts';
import { createTestServices } from '../helpers/app.ts';
import { serveConformance } from './fixtures/conformance-server.ts';
import { serveEverything, type Upstream } from './upstreams.ts';

export type Summary = Record<string, { passed: number; failed: number }>;

const CLI = fileURLToPath(import.meta.resolve('@modelcontextprotocol/conformance/dist/index.js'));

export async function runSuite(url: string): Promise<Summary> {
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'server', '--url', url], { stdio: ['ignore', 'pipe', 'pipe'], cwd: fileURLToPath(new URL('.', import.meta.url)) });
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
    child.once('error', reject);
    child.once('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
  });
  const summary: Summary = {};
  for (const match of output.matchAll(/^[✓✗] ([\w-]+): (\d+) passed, (\d+) failed$/gmu)) {
    summary[match[1]!] = { passed: Number(match[2]), failed: Number(match[3]) };
  }
  if (Object.keys(summary).length === 0) throw new Error(`conformance suite printed no summary:\n${output.slice(-2_000)}`);
  return summary;
}

/** Starts svc with the upstream registered (the conformance fixture unless given) and the key-adding shim; runs the suite both ways at once. */
export async function compareDirectAndProxied(given?: Upstream, options: { env?: Record<string, string> } = {}): Promise<{ direct: Summary; proxied: Summary }> {
  const upstream = given ?? (await serveConformance());
  const services = await createTestServices(options.env === undefined ? {} : { env: options.env });
  const app = await buildApp(services.config, services);
  const shim = createServer();
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const svcPort = (app.server.address() as AddressInfo).port;
    const { apiKey } = await services.accounts.createOrg({ name: 'conformance', plan: 'enterprise' });
    const created = await app.inject({ method: 'POST', url: '/api/v1/mcp/servers', headers: { authorization: `Bearer ${apiKey}` }, payload: { name: 'conformance', url: upstream.url } });
    const endpoint = (created.json() as { endpoint: string }).endpoint;
    shim.on('request', (incoming, outgoing) => {
      const headers = { ...incoming.headers, authorization: `Bearer ${apiKey}` };
      const forward = httpRequest({ host: '127.0.0.1', port: svcPort, method: incoming.method, path: endpoint, headers }, (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      });
      forward.once('error', () => outgoing.destroy());
      outgoing.once('close', () => forward.destroy());
      incoming.pipe(forward);
    });
    await new Promise<void>((resolve) => shim.listen(0, '127.0.0.1', resolve));
    const shimUrl = `http://127.0.0.1:${(shim.address() as AddressInfo).port}/mcp`;
    const [direct, proxied] = await Promise.all([runSuite(upstream.url), runSuite(shimUrl)]);
    return { direct, proxied };
  } finally {
    shim.closeAllConnections();
    await new Promise<void>((resolve) => shim.close(() => resolve()));
    await app.close();
    await services.close();
    if (given === undefined) await upstream.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const at = process.argv.indexOf('--url');
  const url = at >= 0 ? process.argv[at + 1] : undefined;
  const everything = process.argv.includes('--everything') ? await serveEverything() : undefined;
  try {
    // --any-origin: svc with its Origin check off (MCP_ALLOWED_ORIGINS=*), the posture of an upstream that validates none.
    const env = process.argv.includes('--any-origin') ? { MCP_ALLOWED_ORIGINS: '*' } : undefined;
    const result = await compareDirectAndProxied(url !== undefined ? { url, close: async () => undefined } : everything, env === undefined ? {} : { env });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await everything?.close();
  }
}
