/**
 * Scripted official-SDK sessions (docs/mcp.md "Fidelity"): the same steps against an MCP server
 * directly and through svc, each step's outcome recorded (its result, or the error the client
 * got), so that a test can compare the two sessions step by step.
 *
 * What differs between any two sessions of the same server, also between two direct ones, is
 * normalised before comparing, and nothing else: UUIDs (session ids, elicitation ids), clock
 * times and dates the server prints, the temporary directory's name, and base64 blobs that
 * encode such a time. Everything else is compared as the client received it.
 *
 * `npx tsx test/mcp/fidelity-run.ts` runs every session both ways and prints the steps that differ.
 */
import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

export interface Step {
  readonly step: string;
  readonly outcome: unknown;
}

/** A client as an agent host builds one: sampling, form and URL elicitation, roots. */
export function fidelityClient(): Client {
  const client = new Client({ name: 'fidelity', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } });
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
    model: 'local-test-model',
    role: 'assistant',
    content: { type: 'text', text: `Answered: ${JSON.stringify(request.params.messages.at(-1)?.content ?? null).slice(0, 80)}` },
    stopReason: 'endTurn',
  }));
  client.setRequestHandler(ElicitRequestSchema, async (request) =>
    request.params.mode === 'url' ? { action: 'accept' } : { action: 'accept', content: { name: 'Ada Lovelace', check: true, email: 'ada@example.com', integer: 42 } },
  );
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///srv/project', name: 'project' }] }));
  return client;
}

/** A client without roots (server-filesystem would replace its allowed directories with them). */
export function plainClient(): Client {
  return new Client({ name: 'fidelity', version: '1.0.0' }, { capabilities: {} });
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const ISO_TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}:\d{2})?/g;
const DATE_TEXT = /\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{1,2} \d{4} \d{2}:\d{2}:\d{2} GMT[+-]\d{4}(?: \([A-Za-z ]{1,60}\))?/g;
const CLOCK = /\b\d{1,2}:\d{2}:\d{2}(?: [AP]M)?\b/g;

/** Replaces what differs between any two sessions of one server (see the file's comment). */
export function normalise(value: unknown, root?: string): unknown {
  if (typeof value === 'string') {
    let text = root === undefined ? value : value.split(root).join('<root>');
    text = text.replace(ISO_TIME, '<time>').replace(DATE_TEXT, '<time>').replace(CLOCK, '<time>').replace(UUID, '<uuid>');
    return text;
  }
  if (Array.isArray(value)) return value.map((item) => normalise(item, root));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === 'blob' && typeof item === 'string') {
      // A text blob that prints a time (server-everything's dynamic resources).
      const decoded = Buffer.from(item, 'base64').toString('utf8');
      out[key] = /^[\x20-\x7e\n]*$/.test(decoded) ? `base64:${String(normalise(decoded, root))}` : item;
    } else out[key] = normalise(item, root);
  }
  return out;
}

async function outcome(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return { ok: await run() };
  } catch (error) {
    if (error instanceof McpError) return { error: { code: error.code, message: error.message, data: error.data ?? null } };
    return { error: { thrown: error instanceof Error ? error.message : String(error) } };
  }
}

/** A small PNG (1×1), for server-filesystem's read_media_file. */
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const FIXED_TIME = new Date('2026-01-02T03:04:05Z');

/** The files server-filesystem's session starts from (the same before each run). */
export function resetFiles(root: string): void {
  rmSync(root, { recursive: true, force: true });
  mkdirSync(join(root, 'docs'), { recursive: true });
  const files: Record<string, string | Buffer> = {
    'notes.txt': 'Meeting notes\nBudget review at 10.\nShip the release on Friday.\n',
    'todo.md': '# Todo\n- write the report\n- call the bank\n',
    'docs/readme.md': '# Project\nThis folder holds the project documents.\n',
    'pixel.png': Buffer.from(PIXEL, 'base64'),
  };
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(join(root, name), content);
    utimesSync(join(root, name), FIXED_TIME, FIXED_TIME);
  }
}

/**
 * server-everything's session: initialize, ping, every listed tool (including those that make the
 * server ask the client for sampling, elicitation and roots), a tool it does not have, resources,
 * templates, subscriptions, prompts, completion and logging; the echo and the data: argument are
 * repeated to make the session long (the escalation the issue saw came after ~15 calls).
 */
export async function everythingSession(connect: (client: Client) => Promise<void>): Promise<Step[]> {
  const client = fidelityClient();
  const steps: Step[] = [];
  const step = async (name: string, run: () => Promise<unknown>) => void steps.push({ step: name, outcome: normalise(await outcome(run)) });
  await step('initialize', async () => {
    await connect(client);
    return { server: client.getServerVersion(), capabilities: client.getServerCapabilities(), instructions: client.getInstructions() ?? null };
  });
  try {
    await step('ping', () => client.ping());
    // The conditional tools (sampling, elicitation, roots) are registered when the server has
    // handled notifications/initialized, which a client does not wait for: wait until they are
    // listed (unrecorded), so that a slow machine does not make one session list fewer tools.
    for (let tries = 0; tries < 50; tries++) {
      if ((await client.listTools()).tools.some((tool) => tool.name === 'get-roots-list')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await step('tools/list', async () => (await client.listTools()).tools);
    const call = (name: string, args: Record<string, unknown> = {}) => step(`tools/call ${name}`, () => client.callTool({ name, arguments: args }));
    await call('echo', { message: 'hello through svc' });
    await call('get-sum', { a: 2, b: 3 });
    await call('get-env');
    await call('get-tiny-image');
    await call('get-annotated-message', { messageType: 'error', includeImage: false });
    await call('get-resource-links', { count: 2 });
    await call('get-resource-reference', { resourceType: 'Text', resourceId: 1 });
    await call('get-structured-content', { location: 'New York' });
    const dataUri = `data:text/plain;base64,${Buffer.from('The quick brown fox jumps over the lazy dog. '.repeat(8)).toString('base64')}`;
    await call('gzip-file-as-resource', { name: 'fox.txt.gz', data: dataUri, outputType: 'resource' });
    await call('trigger-long-running-operation', { duration: 1, steps: 2 });
    await call('trigger-sampling-request', { prompt: 'What is 2 + 2?', maxTokens: 20 });
    await call('trigger-elicitation-request');
    await call('trigger-url-elicitation', { url: 'https://example.com/authorize', message: 'Please sign in.', elicitationId: 'fixed-elicitation' });
    await call('get-roots-list');
    await call('toggle-simulated-logging');
    await call('toggle-simulated-logging');
    await call('no-such-tool', { x: 1 });
    await step('resources/list', async () => (await client.listResources()).resources);
    await step('resources/templates/list', async () => (await client.listResourceTemplates()).resourceTemplates);
    await step('resources/read text', () => client.readResource({ uri: 'demo://resource/dynamic/text/1' }));
    await step('resources/read blob', () => client.readResource({ uri: 'demo://resource/dynamic/blob/2' }));
    await step('resources/subscribe', () => client.subscribeResource({ uri: 'demo://resource/dynamic/text/1' }));
    await step('resources/unsubscribe', () => client.unsubscribeResource({ uri: 'demo://resource/dynamic/text/1' }));
    await step('prompts/list', async () => (await client.listPrompts()).prompts);
    await step('prompts/get simple-prompt', () => client.getPrompt({ name: 'simple-prompt' }));
    await step('prompts/get args-prompt', () => client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris', state: 'Île-de-France' } }));
    await step('prompts/get resource-prompt', () => client.getPrompt({ name: 'resource-prompt', arguments: { resourceType: 'Text', resourceId: '3' } }));
    await step('completion/complete', () => client.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'En' } }));
    await step('logging/setLevel', () => client.setLoggingLevel('warning'));
    for (let index = 0; index < 12; index++) await call('echo', { message: `repeat ${index}` });
    await call('gzip-file-as-resource', { name: 'fox-again.txt.gz', data: dataUri, outputType: 'resource' });
  } finally {
    await client.close().catch(() => undefined);
  }
  return steps;
}

/**
 * server-filesystem's session over `root` (reset first): every read tool, the write tools (an
 * admin key may use them), a path outside the allowed directory (the server's own refusal) and a
 * tool it does not have.
 */
export async function filesystemSession(connect: (client: Client) => Promise<void>, root: string): Promise<Step[]> {
  resetFiles(root);
  const client = plainClient();
  const steps: Step[] = [];
  const step = async (name: string, run: () => Promise<unknown>) => void steps.push({ step: name, outcome: normalise(await outcome(run), root) });
  await step('initialize', async () => {
    await connect(client);
    return { server: client.getServerVersion(), capabilities: client.getServerCapabilities(), instructions: client.getInstructions() ?? null };
  });
  try {
    await step('tools/list', async () => (await client.listTools()).tools);
    const call = (name: string, args: Record<string, unknown> = {}) => step(`tools/call ${name}`, () => client.callTool({ name, arguments: args }));
    await call('list_allowed_directories');
    await call('list_directory', { path: root });
    await call('list_directory_with_sizes', { path: root, sortBy: 'name' });
    await call('directory_tree', { path: root });
    await call('read_text_file', { path: join(root, 'notes.txt') });
    await call('read_text_file', { path: join(root, 'notes.txt'), head: 1 });
    await call('read_multiple_files', { paths: [join(root, 'notes.txt'), join(root, 'todo.md')] });
    await call('read_media_file', { path: join(root, 'pixel.png') });
    await call('search_files', { path: root, pattern: '**/*.md' });
    await call('write_file', { path: join(root, 'report.txt'), content: 'Quarterly report: revenue up 4 %.\n' });
    await call('edit_file', { path: join(root, 'todo.md'), edits: [{ oldText: '- call the bank', newText: '- call the bank (done)' }], dryRun: true });
    await call('edit_file', { path: join(root, 'todo.md'), edits: [{ oldText: '- call the bank', newText: '- call the bank (done)' }] });
    await call('create_directory', { path: join(root, 'archive') });
    await call('move_file', { source: join(root, 'report.txt'), destination: join(root, 'archive', 'report.txt') });
    await call('read_text_file', { path: join(root, 'archive', 'report.txt') });
    await call('read_text_file', { path: '/etc/hostname' });
    await call('list_directory', { path: '/' });
    await call('no_such_tool', { path: root });
  } finally {
    await client.close().catch(() => undefined);
  }
  return steps;
}

/** The steps whose outcomes differ (by position and name). */
export function differences(direct: readonly Step[], proxied: readonly Step[]): Array<{ step: string; direct: unknown; proxied: unknown }> {
  const out: Array<{ step: string; direct: unknown; proxied: unknown }> = [];
  for (let index = 0; index < Math.max(direct.length, proxied.length); index++) {
    const a = direct[index];
    const b = proxied[index];
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ step: a?.step ?? b?.step ?? String(index), direct: a?.outcome, proxied: b?.outcome });
  }
  return out;
}

export type Connector = (client: Client) => Promise<void>;
export const connectWith = (transport: () => Transport): Connector => (client) => client.connect(transport());
