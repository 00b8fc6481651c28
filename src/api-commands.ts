/**
 * CLI commands that manage an organization's resources through svc's public HTTP API, as any
 * client would (`svc gateway create …`, `svc webhook list …`): the API validates, enforces the
 * key's scope and writes the audit entry, so the CLI adds no second path to any of it. They need
 * a running svc and an API key: `--svc-url` (default SVC_URL, else http://HOST:PORT) and `--key`
 * (default SVC_KEY).
 *
 * --json prints the API's answer as it is (one JSON object); an API error is printed as the
 * API's error envelope on stderr with exit code 1, a refused argument with exit code 2.
 */
import { readFileSync } from 'node:fs';
import type { ParseArgsConfig } from 'node:util';

type Options = Record<string, string | boolean | undefined>;

export interface ApiCall {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
}

interface ApiCommandSpec {
  summary: string;
  options: NonNullable<ParseArgsConfig['options']>;
  call(options: Options): ApiCall;
  /** One line (or a few) for humans, from the API's answer. */
  text(answer: Record<string, unknown>): string;
}

/** A refused argument: printed with code USAGE, exit code 2. */
export class UsageError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

function required(options: Options, name: string): string {
  const value = options[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(name, `--${name} is required`);
  return value.trim();
}

const segment = (options: Options, name: string) => encodeURIComponent(required(options, name));

/**
 * The request body: `--body JSON`, `--file PATH` (JSON), or the fields given as flags; flags
 * override the same fields of a body.
 */
function bodyOf(options: Options, fields: Record<string, unknown>): Record<string, unknown> {
  let base: unknown = {};
  const inline = options.body;
  const file = options.file;
  if (typeof inline === 'string' && typeof file === 'string') throw new UsageError('body', 'give --body or --file, not both');
  const source = typeof inline === 'string' ? inline : typeof file === 'string' ? readText(file) : null;
  if (source !== null) {
    try {
      base = JSON.parse(source);
    } catch {
      throw new UsageError(typeof inline === 'string' ? 'body' : 'file', 'the body is not valid JSON');
    }
    if (base === null || typeof base !== 'object' || Array.isArray(base)) throw new UsageError(typeof inline === 'string' ? 'body' : 'file', 'the body must be a JSON object');
  }
  const defined = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  return { ...(base as Record<string, unknown>), ...defined };
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError('file', `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

function number(options: Options, name: string): number | undefined {
  const value = options[name];
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (typeof value !== 'string' || value.trim() === '' || !Number.isFinite(parsed)) throw new UsageError(name, `--${name} must be a number`);
  return parsed;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));
const body = { body: { type: 'string' }, file: { type: 'string' } } as const;
const byId = { id: { type: 'string' } } as const;

function listOf(key: string, line: (item: Record<string, unknown>) => string) {
  return (answer: Record<string, unknown>) => {
    const items = answer[key];
    if (!Array.isArray(items)) return JSON.stringify(answer);
    return items.length === 0 ? `(no ${key})` : items.map((item) => line(item as Record<string, unknown>)).join('\n');
  };
}

const gatewayLine = (gateway: Record<string, unknown>) => `${text(gateway.id)}  ${text(gateway.name)}  ${text(gateway.mode)}  ${text(gateway.backend_url)}`;
const serverLine = (server: Record<string, unknown>) => `${text(server.id)}  ${text(server.name)}  ${text(server.url)}  endpoint ${text(server.endpoint)}`;
const webhookLine = (webhook: Record<string, unknown>) => `${text(webhook.id)}  ${text(webhook.url)}  ${text(webhook.state)}  ${text(webhook.events)}`;
const done = (what: string) => () => what;
const siemLine = (sink: Record<string, unknown>) =>
  `${text(sink.id)}  ${text(sink.name)}  ${text(sink.kind)}  ${sink.kind === 'hec' ? text(sink.url) : `${text(sink.transport)}://${text(sink.host)}:${text(sink.port)}`}  ${text(sink.format)}  ${text(sink.state)}`;
const thresholdsLine = (answer: Record<string, unknown>) =>
  Object.entries((answer.thresholds ?? {}) as Record<string, unknown>)
    .map(([name, value]) => `${name.replace('_threshold', '')} ${text(value)}`)
    .join('  ');

export const apiCommandSpecs: Record<string, ApiCommandSpec> = {
  'gateway list': { summary: 'list protected API gateways', options: {}, call: () => ({ method: 'GET', path: '/api/v1/gateways' }), text: listOf('gateways', gatewayLine) },
  'gateway get': { summary: '--id ID  one protected gateway', options: byId, call: (o) => ({ method: 'GET', path: `/api/v1/gateways/${segment(o, 'id')}` }), text: gatewayLine },
  'gateway create': {
    summary: '--name N --backend-url URL [--mode monitor|block] [--body JSON | --file F]  protect an API',
    options: { name: { type: 'string' }, 'backend-url': { type: 'string' }, mode: { type: 'string' }, ...body },
    call: (o) => ({ method: 'POST', path: '/api/v1/gateways', body: bodyOf(o, { name: o.name, backend_url: o['backend-url'], mode: o.mode }) }),
    text: (gateway) => `gateway ${text(gateway.id)} created: traffic at /gw/${text(gateway.id)}/…`,
  },
  'gateway update': {
    summary: '--id ID [--name N] [--backend-url URL] [--mode monitor|block] [--body JSON | --file F]  edit a gateway',
    options: { ...byId, name: { type: 'string' }, 'backend-url': { type: 'string' }, mode: { type: 'string' }, ...body },
    call: (o) => ({ method: 'PATCH', path: `/api/v1/gateways/${segment(o, 'id')}`, body: bodyOf(o, { name: o.name, backend_url: o['backend-url'], mode: o.mode }) }),
    text: gatewayLine,
  },
  'gateway delete': { summary: '--id ID  delete a protected gateway', options: byId, call: (o) => ({ method: 'DELETE', path: `/api/v1/gateways/${segment(o, 'id')}` }), text: done('deleted') },

  'mcp-server list': { summary: 'list registered MCP servers', options: {}, call: () => ({ method: 'GET', path: '/api/v1/mcp/servers' }), text: listOf('servers', serverLine) },
  'mcp-server get': { summary: '--id ID  one registered MCP server', options: byId, call: (o) => ({ method: 'GET', path: `/api/v1/mcp/servers/${segment(o, 'id')}` }), text: serverLine },
  'mcp-server create': {
    summary: '--name N --url URL [--body JSON | --file F]  register an MCP server behind the proxy',
    options: { name: { type: 'string' }, url: { type: 'string' }, ...body },
    call: (o) => ({ method: 'POST', path: '/api/v1/mcp/servers', body: bodyOf(o, { name: o.name, url: o.url }) }),
    text: (server) => `MCP server ${text(server.id)} registered: clients connect to ${text(server.endpoint)}`,
  },
  'mcp-server delete': { summary: '--id ID  remove an MCP server registration', options: byId, call: (o) => ({ method: 'DELETE', path: `/api/v1/mcp/servers/${segment(o, 'id')}` }), text: done('deleted') },

  'webhook list': { summary: 'list webhook endpoints', options: {}, call: () => ({ method: 'GET', path: '/api/v1/webhooks' }), text: listOf('webhooks', webhookLine) },
  'webhook get': { summary: '--id ID  one webhook endpoint', options: byId, call: (o) => ({ method: 'GET', path: `/api/v1/webhooks/${segment(o, 'id')}` }), text: webhookLine },
  'webhook create': {
    summary: '--url URL --events E1,E2 [--body JSON | --file F]  subscribe an endpoint (the secret is shown once)',
    options: { url: { type: 'string' }, events: { type: 'string' }, ...body },
    call: (o) => ({
      method: 'POST',
      path: '/api/v1/webhooks',
      body: bodyOf(o, { url: o['url'], events: typeof o.events === 'string' ? o.events.split(',').map((event) => event.trim()).filter((event) => event !== '') : undefined }),
    }),
    text: (webhook) => `webhook ${text(webhook.id)} created; signing secret (shown once): ${text(webhook.secret)}`,
  },
  'webhook enable': {
    summary: '--id ID  re-enable a paused webhook endpoint',
    options: byId,
    call: (o) => ({ method: 'PATCH', path: `/api/v1/webhooks/${segment(o, 'id')}`, body: { state: 'active' } }),
    text: webhookLine,
  },
  'webhook delete': { summary: '--id ID  delete a webhook endpoint', options: byId, call: (o) => ({ method: 'DELETE', path: `/api/v1/webhooks/${segment(o, 'id')}` }), text: done('deleted') },

  'plan usage': {
    summary: 'usage against every quota of the plan in force (findings this month, sensors, trial days left, pillars)',
    options: {},
    call: () => ({ method: 'GET', path: '/api/v1/org/usage' }),
    text: (usage) => {
      const findings = (usage.findings ?? {}) as Record<string, unknown>;
      const sensors = (usage.sensors ?? {}) as Record<string, unknown>;
      return `plan ${text(usage.effective_plan)}  findings ${text(findings.used)}/${text(findings.limit ?? 'unlimited')}  sensors ${text(sensors.used ?? '?')}/${text(sensors.limit ?? 'unlimited')}`;
    },
  },
  'plan set': {
    summary: '--plan community|starter|pro|enterprise  change the plan of the key\'s org (a super_admin session token as --key; no payment processor)',
    options: { plan: { type: 'string' } },
    call: (o) => ({ method: 'PUT', path: '/api/v1/org/plan', body: { plan: required(o, 'plan') } }),
    text: (answer) => `plan ${text(((answer.previous ?? {}) as Record<string, unknown>).effective_plan)} → ${text(((answer.org ?? {}) as Record<string, unknown>).plan)} (${text(answer.change)})`,
  },

  'siem-sink list': { summary: 'list SIEM sinks', options: {}, call: () => ({ method: 'GET', path: '/api/v1/siem/sinks' }), text: listOf('sinks', siemLine) },
  'siem-sink get': { summary: '--id ID  one SIEM sink, its delivery state and lag', options: byId, call: (o) => ({ method: 'GET', path: `/api/v1/siem/sinks/${segment(o, 'id')}` }), text: siemLine },
  'siem-sink create': {
    summary: '--name N --kind syslog|hec [--host H --port P --transport tcp|tls --format cef|json] [--url U --token T] [--body JSON | --file F]  stream findings and audit entries to a SIEM',
    options: { name: { type: 'string' }, kind: { type: 'string' }, host: { type: 'string' }, port: { type: 'string' }, transport: { type: 'string' }, format: { type: 'string' }, url: { type: 'string' }, token: { type: 'string' }, ...body },
    call: (o) => ({
      method: 'POST',
      path: '/api/v1/siem/sinks',
      body: bodyOf(o, { name: o.name, kind: o.kind, host: o.host, port: number(o, 'port'), transport: o.transport, format: o.format, url: o.url, token: o.token }),
    }),
    text: siemLine,
  },
  'siem-sink delete': { summary: '--id ID  delete a SIEM sink', options: byId, call: (o) => ({ method: 'DELETE', path: `/api/v1/siem/sinks/${segment(o, 'id')}` }), text: done('deleted') },

  'thresholds get': { summary: 'the response-policy thresholds in force', options: {}, call: () => ({ method: 'GET', path: '/api/v1/config/thresholds' }), text: thresholdsLine },
  'thresholds set': {
    summary: '[--block N] [--challenge N] [--alert N] [--log N] [--body JSON]  set the response-policy thresholds',
    options: { block: { type: 'string' }, challenge: { type: 'string' }, alert: { type: 'string' }, log: { type: 'string' }, ...body },
    call: (o) => ({
      method: 'POST',
      path: '/api/v1/config/thresholds',
      body: bodyOf(o, { block_threshold: number(o, 'block'), challenge_threshold: number(o, 'challenge'), alert_threshold: number(o, 'alert'), log_threshold: number(o, 'log') }),
    }),
    text: thresholdsLine,
  },

  'verification-policy get': { summary: 'the verification policy in force', options: {}, call: () => ({ method: 'GET', path: '/api/v1/config/verification' }), text: (answer) => JSON.stringify(answer, null, 2) },
  'verification-policy set': {
    summary: '--file F | --body JSON  set the verification policy (docs/verification.md)',
    options: body,
    call: (o) => {
      if (o.body === undefined && o.file === undefined) throw new UsageError('file', 'give the policy with --file or --body');
      return { method: 'PUT', path: '/api/v1/config/verification', body: bodyOf(o, {}) };
    },
    text: (answer) => JSON.stringify(answer, null, 2),
  },
  'verification-policy reset': { summary: 'return to the default verification policy', options: {}, call: () => ({ method: 'DELETE', path: '/api/v1/config/verification' }), text: done('verification policy reset to the default') },
};

/** Options every API command takes besides its own. */
export const API_CONNECTION_OPTIONS = { 'svc-url': { type: 'string' }, key: { type: 'string' } } as const;

export interface ApiAnswer {
  status: number;
  json: Record<string, unknown>;
}

/** Sends one call to svc's API with the key; the answer's JSON (an empty object for a 204). */
export async function sendApiCall(base: string, key: string, call: ApiCall): Promise<ApiAnswer> {
  let url: URL;
  try {
    url = new URL(call.path, base);
  } catch {
    throw new UsageError('svc-url', `--svc-url is not a URL: ${base}`);
  }
  const response = await fetch(url, {
    method: call.method,
    headers: { authorization: `Bearer ${key}`, ...(call.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
    signal: AbortSignal.timeout(60_000),
  });
  const raw = await response.text();
  let json: Record<string, unknown> = {};
  if (raw !== '') {
    try {
      json = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      json = { error: { code: 'UNEXPECTED_ANSWER', message: `svc answered ${response.status} with a body that is not JSON` } };
    }
  }
  return { status: response.status, json };
}
