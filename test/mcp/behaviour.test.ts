/**
 * T5 behavioural baselines on the MCP proxy (docs/mcp.md "Behavioural baselines"): every
 * tools/call is observed in the profile of the caller's role on that server, with the official
 * SDK client against the reference server-everything. Once the role has a history, a call far
 * from it — arguments twenty times their usual size, a tool the role never called, a transition
 * its sessions never made — carries t5 findings in the call's audit entry and alerts (never
 * refuses), while an ordinary call carries none, and a role without history gets no finding.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { SvcEvent } from '../../src/platform/events.ts';
import { createTestApp, usingPostgres, usingRedis, type TestContext } from '../helpers/app.ts';
import { serveEverything, type Upstream } from './upstreams.ts';

const shared = usingPostgres && usingRedis;
if (!shared) console.warn('[svc tests] SKIPPED test/mcp/behaviour.test.ts "two svc instances": needs PostgreSQL + Redis (set DATABASE_URL and REDIS_URL; CI does)');

const sleep = (ms: number) => new Promise((resolveWait) => setTimeout(resolveWait, ms));
/** Closing a client can wait on a stream the server keeps open: each cleanup step gets 5 s. */
const bounded = (step: () => Promise<unknown>) => Promise.race([step().catch(() => undefined), sleep(5_000)]);

interface AuditEntry {
  action: string;
  target: string;
  findings?: Array<{ id: string; name: string }>;
}

describe('T5 behavioural baselines of MCP tool calls', { timeout: 300_000 }, () => {
  let context: TestContext;
  let upstream: Upstream;
  let base: string;
  const events: SvcEvent[] = [];
  const cleanup: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    context = await createTestApp();
    context.services.events.subscribe((event) => void events.push(event));
    await context.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(context.app.server.address() as AddressInfo).port}`;
    upstream = await serveEverything();
  }, 240_000);

  afterAll(async () => {
    for (const step of cleanup.reverse()) await bounded(step);
    await bounded(async () => upstream?.close());
    context?.app.server.closeAllConnections();
    await context?.close();
  }, 120_000);

  async function connectTo(apiKey: string, name: string, sessionId: string): Promise<Client> {
    const response = await context.app.inject({ method: 'POST', url: '/api/v1/mcp/servers', headers: { authorization: `Bearer ${apiKey}` }, payload: { name, url: upstream.url } });
    expect(response.statusCode).toBe(201);
    const client = new Client({ name: 't5-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}${response.json().endpoint}`), { requestInit: { headers: { authorization: `Bearer ${apiKey}`, 'x-session-id': sessionId } } }));
    cleanup.push(() => client.close());
    await client.listTools();
    return client;
  }

  /** The tool-call audit entries of a session, oldest first. */
  async function calls(apiKey: string, sessionId: string): Promise<AuditEntry[]> {
    await context.services.mcp.flush();
    const response = await context.app.inject({ method: 'GET', url: `/api/v1/mcp/audit?session_id=${sessionId}`, headers: { authorization: `Bearer ${apiKey}` } });
    return (response.json().entries as AuditEntry[]).filter((entry) => entry.action === 'mcp.tool_call');
  }
  const t5Of = (entry: AuditEntry | undefined) => (entry?.findings ?? []).map((finding) => finding.id).filter((id) => id.startsWith('t5.'));
  const alerts = (orgId: string) => events.filter((event) => event.orgId === orgId && event.event === 'threat.alert' && (event.data.pattern_ids as string[]).some((id) => id.startsWith('t5.')));

  const echo = (client: Client, index: number) => client.callTool({ name: 'echo', arguments: { message: `status check ${index} for the nightly report` } });
  const LARGE = `Please echo this back. ${'The delivery schedule for the spring catalogue was reviewed and agreed. '.repeat(30)}`;

  it('flags arguments twenty times their usual size, then a tool the role never called; ordinary calls carry no finding', async () => {
    // Five hundred calls in well under a minute: an enterprise org, whose plan sets no per-minute limit, so the rate limiter cannot stand in for the baseline under test.
    const { orgId, apiKey } = await context.createOrg({ plan: 'enterprise' });
    const session = 't5-mcp-learn';
    const client = await connectTo(apiKey, 't5-everything', session);
    for (let index = 0; index < 60; index += 1) await echo(client, index);

    await echo(client, 60);
    const large = await client.callTool({ name: 'echo', arguments: { message: LARGE } });
    expect(large.isError).not.toBe(true);
    let entries = await calls(apiKey, session);
    expect(t5Of(entries.at(-2))).toEqual([]);
    expect(t5Of(entries.at(-1))).toContain('t5.size');
    expect(entries.at(-1)?.findings?.find((finding) => finding.id === 't5.size')?.name).toContain('argument_chars');
    expect(alerts(orgId).flatMap((event) => event.data.pattern_ids as string[])).toContain('t5.size');

    // A long habit of one tool: a tool the role never called is new to its baseline (and so is the transition to it).
    for (let index = 61; index < 520; index += 1) await echo(client, index);
    await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    entries = await calls(apiKey, session);
    expect(t5Of(entries.at(-2))).toEqual([]);
    expect(t5Of(entries.at(-1)).sort()).toEqual(['t5.new_value', 't5.sequence']);
  });

  it('gives no finding to a role without history on the server, however large its arguments', async () => {
    const { apiKey } = await context.createOrg({ plan: 'enterprise' });
    const session = 't5-mcp-cold';
    const client = await connectTo(apiKey, 't5-cold', session);
    for (let index = 0; index < 5; index += 1) await echo(client, index);
    await client.callTool({ name: 'echo', arguments: { message: LARGE } });
    await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    const entries = await calls(apiKey, session);
    expect(entries).toHaveLength(7);
    expect(entries.flatMap(t5Of)).toEqual([]);
  });
});

describe('T5 baselines of MCP calls shared by two svc instances on PostgreSQL + Redis', { timeout: 300_000 }, () => {
  const contexts: TestContext[] = [];
  const cleanup: Array<() => Promise<void>> = [];
  let upstream: Upstream;

  beforeAll(async () => {
    if (!shared) return;
    const prefix = `test:t5-mcp-shared-${Date.now()}:`;
    for (let index = 0; index < 2; index += 1) {
      const context = await createTestApp({ env: { CACHE_PREFIX: prefix } });
      await context.app.listen({ port: 0, host: '127.0.0.1' });
      contexts.push(context);
    }
    upstream = await serveEverything();
  }, 240_000);

  afterAll(async () => {
    for (const step of cleanup.reverse()) await bounded(step);
    await bounded(async () => upstream?.close());
    for (const context of contexts) {
      context.app.server.closeAllConnections();
      await context.close();
    }
  }, 120_000);

  it.skipIf(!shared)('judges a call on one instance by the role\'s baseline learned on the other', async () => {
    const [a, b] = contexts as [TestContext, TestContext];
    const { apiKey } = await a.createOrg({ plan: 'enterprise' });
    const registered = await a.app.inject({ method: 'POST', url: '/api/v1/mcp/servers', headers: { authorization: `Bearer ${apiKey}` }, payload: { name: 't5-shared', url: upstream.url } });
    expect(registered.statusCode).toBe(201);
    const endpoint = registered.json().endpoint as string;
    const connect = async (context: TestContext, sessionId: string) => {
      const client = new Client({ name: 't5-shared', version: '1.0.0' });
      const port = (context.app.server.address() as AddressInfo).port;
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}${endpoint}`), { requestInit: { headers: { authorization: `Bearer ${apiKey}`, 'x-session-id': sessionId } } }));
      cleanup.push(() => client.close());
      await client.listTools();
      return client;
    };
    const onA = await connect(a, 't5-shared-a');
    for (let index = 0; index < 60; index += 1) await onA.callTool({ name: 'echo', arguments: { message: `status check ${index} for the nightly report` } });
    const onB = await connect(b, 't5-shared-b');
    await onB.callTool({ name: 'echo', arguments: { message: 'status check 61 for the nightly report' } });
    await onB.callTool({ name: 'echo', arguments: { message: `Please echo this back. ${'The delivery schedule for the spring catalogue was reviewed and agreed. '.repeat(30)}` } });
    await b.services.mcp.flush();
    const audit = await b.app.inject({ method: 'GET', url: '/api/v1/mcp/audit?session_id=t5-shared-b', headers: { authorization: `Bearer ${apiKey}` } });
    const calls = (audit.json().entries as AuditEntry[]).filter((entry) => entry.action === 'mcp.tool_call');
    const t5 = (entry: AuditEntry | undefined) => (entry?.findings ?? []).map((finding) => finding.id).filter((id) => id.startsWith('t5.'));
    expect(calls).toHaveLength(2);
    expect(t5(calls[0])).toEqual([]);
    expect(t5(calls[1])).toContain('t5.size');
  });
});
