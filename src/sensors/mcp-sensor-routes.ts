/**
 * The MCP sensor (`svc sensor --class mcp`): a process with no database and no cache connection
 * that serves /mcp/{id} for its org's registered MCP servers with the MCP pillar's own core — the
 * same proxy, pinning, inspector and role authorization `svc serve` runs (src/mcp) — given
 * in-memory stores (src/mcp/memory-store.ts), a memory cache and the collector's configuration
 * (src/sensors/collector/mcp-context.ts): servers and upstream URLs, pinned definitions and
 * approvals, key hashes with their roles, detection thresholds.
 *
 * Per-session state (expiry, the upstream session's binding, requests awaiting answers) stays in
 * this process: an MCP session is served by the sensor that opened it. What the proxy would audit
 * becomes a signed finding (tool calls refused, results quarantined, definitions held or flagged,
 * name collisions, invisible characters removed); the atomic facts of compound chains are sent to
 * the collector, which correlates them over 5 minutes (docs/sensors.md, "MCP sensor").
 *
 * Security posture: a client presents an svc API key of the org (Authorization: Bearer or
 * X-API-Key); its SHA-256 is looked up among the hashes the collector sent and compared in
 * constant time, and no key is ever held or logged. Upstream URLs are checked against SSRF when a
 * configuration is applied and again at connect time (the proxy's guarded agent); private targets
 * only when both the collector's context and the sensor's --allow-private-targets allow them. Origin and Host
 * are validated as svc serve does with its defaults (loopback origins only).
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { createDetection, DEFAULT_THRESHOLDS, type Thresholds } from '../detection/index.ts';
import {
  checkOrigin,
  createInspector,
  createMemoryStore,
  createPinning,
  createProxy,
  SESSION_TTL_MS,
  type CallAudit,
  type ChainCorrelator,
  type DefinitionRecord,
  type McpFinding,
  type McpServerRecord,
  type ProxyCaller,
} from '../mcp/index.ts';
import { createCache } from '../platform/cache.ts';
import { safeEqual, sha256Hex } from '../platform/crypto.ts';
import { SvcError } from '../platform/errors.ts';
import type { EventBus } from '../platform/events.ts';
import type { Logger } from '../platform/logger.ts';
import { writeFileAtomic } from './certificates.ts';
import { sensorErrorHandler } from './sensor-error-routes.ts';
import { assertPublicUrl } from '../platform/ssrf.ts';
import type { McpContextKey, McpSensorContext } from './collector/mcp-context.ts';
import type { SensorAgent } from './sensor/agent.ts';
import type { FindingData, Severity } from './wire.ts';
import { entryBound } from '../platform/lru.ts';

export interface McpSensorOptions {
  readonly logger: Logger;
  /** The agent's emit (the agent is started after this sensor is built: it applies its context). */
  readonly emit: SensorAgent['emit'];
  /** Whether the collector paused this sensor (it keeps enforcing, and reports nothing). */
  readonly paused: () => boolean;
  readonly sensorId: () => string;
  /**
   * --allow-private-targets: upstreams on private or loopback addresses of the sensor's own
   * network may be reached. The collector's ALLOW_PRIVATE_TARGETS (in the context) must say so
   * too: the collector's operator does not decide what the sensor's network exposes.
   */
  readonly allowPrivateTargets: boolean;
  /**
   * Where the holds made here that the collector has not confirmed yet are kept (DATA_DIR's
   * held-mcp.json), so that a restart does not serve a held definition again; null: memory only.
   */
  readonly holdsFile?: string | null;
}

/** A definition held here, kept until the collector's context carries it (or settles it otherwise). */
interface LocalHold {
  readonly org_id: string;
  readonly server_id: string;
  readonly record: DefinitionRecord;
}

interface Applied {
  readonly context: McpSensorContext;
  readonly servers: ReadonlyMap<string, McpServerRecord>;
  readonly keys: ReadonlyMap<string, McpContextKey>;
}

interface SessionState {
  expiresAt: number;
  expired: boolean;
  readonly serverId: string;
  mcpSessionId: string | null;
  readonly role: string;
}

const MAX_SESSIONS = 100_000;
const MAX_DEFINITION_CHARS = 32_768;
const SILENT_EVENTS: EventBus = { emit: async () => undefined, subscribe: () => () => undefined };
const text = (value: unknown, max: number): string => String(value ?? '').slice(0, max) || '-';

/** Severity, decision and score of what the proxy would audit; null for what is no finding. */
function classify(entry: CallAudit): { kind: string; severity: Severity; decision: FindingData['decision']; score: number } | null {
  const details = entry.details;
  switch (entry.action) {
    case 'mcp.tool_call':
      if (entry.outcome === 'denied') return { kind: 'tool_call', severity: 'medium', decision: 'block', score: 0.6 };
      if (entry.outcome === 'blocked') return { kind: details.decision === 'held' ? 'tool_call' : 'prompt', severity: 'high', decision: 'block', score: typeof details.score === 'number' ? details.score : 0.8 };
      if (entry.outcome === 'quarantined') return { kind: 'tool_output', severity: 'high', decision: 'block', score: 0.9 };
      // An allowed call whose arguments or result still carried findings (alert band, unlisted tool).
      return Array.isArray(details.findings) && details.findings.length > 0 ? { kind: 'tool_call', severity: 'low', decision: 'log', score: 0.3 } : null;
    case 'mcp.quarantine':
      return { kind: 'tool_output', severity: 'high', decision: 'block', score: 0.9 };
    case 'mcp.tool_poisoning':
      return details.held === true ? { kind: 'tool_definition', severity: 'high', decision: 'block', score: 0.8 } : { kind: 'tool_definition', severity: 'medium', decision: 'alert', score: 0.6 };
    case 'mcp.name_collision':
      return { kind: 'tool_definition', severity: 'low', decision: 'log', score: 0.3 };
    case 'mcp.sanitized':
      return { kind: 'tool_output', severity: 'low', decision: 'log', score: 0.2 };
    case 'mcp.compound':
      return { kind: 'compound', severity: 'medium', decision: 'alert', score: 0.6 };
    default:
      return null;
  }
}

/** The pattern ids a finding names: what the proxy decided, then the detection findings. */
function patternsOf(entry: CallAudit): FindingData['patterns'] {
  const details = entry.details;
  const own =
    entry.action === 'mcp.tool_call' && entry.outcome === 'denied' ? [{ id: 'mcp.tool-forbidden', name: 'Tool not allowed for the caller’s role', confidence: 1 }]
    : entry.action === 'mcp.tool_call' && details.decision === 'held' ? [{ id: 'mcp.tool-held', name: 'Tool held for review', confidence: 1 }]
    : entry.action === 'mcp.tool_poisoning' ? [{ id: 'tool_poisoning', name: `Definition ${text(details.reason, 64)}`, confidence: 0.7 }]
    : entry.action === 'mcp.name_collision' ? [{ id: 'mcp.name-collision', name: 'Name exposed by several servers', confidence: 0.5 }]
    : entry.action === 'mcp.sanitized' ? [{ id: 'mcp.invisible-characters', name: 'Invisible characters removed', confidence: 0.5 }]
    : [];
  const found = Array.isArray(details.findings) ? (details.findings as McpFinding[]) : [];
  const seen = new Set<string>();
  return [...own, ...found.map((finding) => ({ id: text(finding.id, 128), name: text(finding.name, 256), confidence: Math.min(1, Math.max(0, Number(finding.confidence) || 0)) }))]
    .filter((pattern) => !seen.has(pattern.id) && seen.add(pattern.id))
    .slice(0, 64);
}

/** Builds the sensor: its HTTP server (not listening) and what applies a configuration. */
export function buildMcpSensor(options: McpSensorOptions) {
  const { logger } = options;
  const cache = createCache({ kind: 'memory' }, 'sensor:');
  let thresholds: Thresholds = DEFAULT_THRESHOLDS;
  const detection = createDetection({ cache, logger, thresholds: { get: async () => thresholds, set: async () => { throw new SvcError('FEATURE_DISABLED', { message: 'Thresholds are set at the collector.' }); } } });
  const inspector = createInspector(detection);
  const store = createMemoryStore();
  const pinning = createPinning(store, inspector, cache);
  const sessions = new LRUCache<string, SessionState>(entryBound(MAX_SESSIONS));
  const inFlight = new Set<Promise<unknown>>();
  let applied: Applied | null = null;

  // Holds made here, by org, server, kind and name, until the collector's context has them: read
  // back at start (a restart while a hold is spooled, or with the collector away, keeps it), and
  // written whenever they change.
  const holdsFile = options.holdsFile ?? null;
  const localHolds = new Map<string, LocalHold>();
  const holdKey = (hold: LocalHold) => JSON.stringify([hold.org_id, hold.server_id, hold.record.kind, hold.record.name]);
  let holdsWritten: Promise<void> = Promise.resolve();
  const saveHolds = (): void => {
    if (holdsFile === null) return;
    const snapshot = JSON.stringify([...localHolds.values()]);
    const empty = localHolds.size === 0;
    holdsWritten = holdsWritten
      .then(() => (empty ? rm(holdsFile, { force: true }) : writeFileAtomic(holdsFile, snapshot)))
      .catch((error: unknown) => logger.error({ err: error }, 'mcp sensor holds not saved'));
  };
  for (const hold of readHolds(holdsFile, logger)) {
    localHolds.set(holdKey(hold), hold);
    store.merge(hold.org_id, hold.server_id, [hold.record]);
  }

  const report = (correlationId: string, data: FindingData, idempotencyKey?: string): void => {
    if (options.paused()) return;
    const sent = options.emit(correlationId, data, idempotencyKey === undefined ? undefined : { idempotencyKey }).catch((error: unknown) => {
      logger.error({ err: error }, 'mcp sensor finding not emitted');
    });
    inFlight.add(sent);
    void sent.finally(() => inFlight.delete(sent));
  };

  const mcpOf = (orgId: string, sessionId: string | null, serverId: string, role: string): NonNullable<FindingData['mcp']> => {
    const state = sessionId === null ? undefined : sessions.get(`${orgId}:${sessionId}`);
    return { server_id: serverId, mcp_session_id: state?.mcpSessionId ?? null, role: text(state?.role ?? role, 32) };
  };

  /** What the proxy would audit, as a finding (and, for a held definition, what the collector stores for approval). */
  const audit = (orgId: string, entry: CallAudit): void => {
    const kind = classify(entry);
    if (kind === null) return;
    const details = entry.details;
    const sessionId = typeof details.session_id === 'string' ? details.session_id.slice(0, 256) : null;
    const serverId = typeof details.server_id === 'string' ? details.server_id : null;
    const requestId = typeof details.request_id === 'string' ? details.request_id.slice(0, 128) : randomUUID();
    const extra: Record<string, unknown> = {};
    const base: FindingData = {
      pillar: 'mcp',
      kind: kind.kind,
      severity: kind.severity,
      threat_score: Math.min(1, Math.max(0, kind.score)),
      decision: kind.decision,
      patterns: patternsOf(entry),
      request_id: requestId,
      session_id: sessionId,
      gateway_id: 'mcp',
      ...(serverId === null ? {} : { mcp: mcpOf(orgId, sessionId, serverId, typeof details.role === 'string' ? details.role : 'viewer') }),
      details: extra,
    };
    Object.assign(extra, { action: entry.action, outcome: entry.outcome, target: entry.target.slice(0, 256) }, pick(details, ['tool', 'category', 'decision', 'definition_hash', 'quarantine_id', 'hop', 'kind', 'reason', 'held', 'policy', 'servers']));
    let idempotencyKey: string | undefined;
    if (entry.action === 'mcp.tool_poisoning' && details.held === true && serverId !== null && typeof details.definition_hash === 'string') {
      const definitionKind = details.kind === 'instructions' ? 'instructions' : 'tool';
      const name = definitionKind === 'instructions' ? '' : entry.target;
      const record = store.definition(orgId, serverId, definitionKind, name);
      const served = record?.pending_hash === details.definition_hash ? record.pending_definition : null;
      if (record !== null && record.pending_hash === details.definition_hash) {
        const hold = { org_id: orgId, server_id: serverId, record };
        localHolds.set(holdKey(hold), hold);
        saveHolds();
      }
      // The definition travels when it fits a finding (64 KiB signed); else the hash alone is stored for approval.
      const definition = served !== null && typeof served === 'object' && JSON.stringify(served).length <= MAX_DEFINITION_CHARS ? served : null;
      const findings = (record?.findings ?? []).slice(0, 32).map((finding) => ({ id: text(finding.id, 128), name: text(finding.name, 256), category: text(finding.category, 64), confidence: Math.min(1, Math.max(0, finding.confidence)) }));
      extra.definition = { kind: definitionKind, name, pending_hash: details.definition_hash, reason: text(details.reason, 64), category: record?.category ?? null, findings, definition };
      // The same hold reported again (another session listing the tool) is one finding at the collector.
      idempotencyKey = createHash('sha256').update(`${options.sensorId()}\u0000definition\u0000${serverId}\u0000${definitionKind}\u0000${name}\u0000${details.definition_hash}`).digest('hex');
    }
    report(sessionId ?? requestId, base, idempotencyKey);
  };

  /** The collector correlates compound chains: this sensor sends the facts of each session. */
  const chains: ChainCorrelator = {
    async observe(orgId, sessionId, observations) {
      const state = sessions.get(`${orgId}:${sessionId}`);
      if (state === undefined || observations.length === 0) return [];
      report(sessionId, {
        pillar: 'mcp',
        kind: 'mcp_facts',
        severity: 'low',
        threat_score: 0,
        decision: 'log',
        patterns: [],
        request_id: randomUUID(),
        session_id: sessionId.slice(0, 256),
        gateway_id: 'mcp',
        mcp: { server_id: state.serverId, mcp_session_id: state.mcpSessionId, role: state.role },
        facts: observations.slice(0, 64).map((observation) => ({
          fact: observation.fact,
          finding: text(observation.finding, 128),
          ...(observation.tool === undefined ? {} : { tool: text(observation.tool, 256) }),
          ...(observation.hop === undefined ? {} : { hop: text(observation.hop, 256) }),
          ...(observation.item === undefined ? {} : { item: text(observation.item, 256) }),
        })),
      });
      return [];
    },
  };

  const session = async (caller: ProxyCaller, server: McpServerRecord, sessionId: string, mcpSessionId: string | null): Promise<'active' | 'expired'> => {
    const key = `${caller.orgId}:${sessionId}`;
    const now = Date.now();
    const state = sessions.get(key);
    if (state !== undefined && (state.expired || state.expiresAt <= now)) {
      state.expired = true;
      return 'expired';
    }
    if (state === undefined) sessions.set(key, { expiresAt: now + SESSION_TTL_MS, expired: false, serverId: server.id, mcpSessionId, role: caller.role });
    else {
      state.expiresAt = now + SESSION_TTL_MS;
      state.mcpSessionId = mcpSessionId ?? state.mcpSessionId;
    }
    return 'active';
  };

  const buildProxy = (allowPrivateTargets: boolean) =>
    createProxy({ cache, events: SILENT_EVENTS, store, pinning, inspector, chains, allowPrivateTargets, stdioServers: {}, audit, session, newSessionId: randomUUID });
  let proxy: ReturnType<typeof buildProxy> | null = null;
  let proxyPrivate = false;

  /** Applies a configuration from the collector (its upstream URLs checked against SSRF first). */
  async function apply(context: McpSensorContext): Promise<void> {
    const servers = new Map<string, McpServerRecord>();
    const allowPrivate = context.allow_private_targets && options.allowPrivateTargets;
    for (const server of context.servers) {
      try {
        await assertPublicUrl(server.url, { allowPrivate, field: 'url' });
      } catch (error) {
        logger.warn({ server_id: server.id, code: (error as { code?: string }).code ?? 'invalid' }, 'mcp server left out: its upstream URL fails the SSRF check here');
        continue;
      }
      servers.set(server.id, { id: server.id, org_id: context.org_id, name: server.name, url: server.url, transport: server.transport, tool_categories: server.tool_categories, on_held: server.on_held, created_at: new Date(0).toISOString() });
      store.merge(context.org_id, server.id, server.definitions);
      await pinning.changed(context.org_id, server.id);
    }
    for (const id of applied?.servers.keys() ?? []) if (!servers.has(id)) store.dropServer(context.org_id, id);
    // A hold made here is forgotten once the collector carries it, approved something else, or
    // no longer configures its server; until then the merge above kept it in force.
    const before = localHolds.size;
    for (const [key, hold] of localHolds) {
      const pending = hold.record.pending_hash;
      const known = context.servers.find((server) => server.id === hold.server_id)?.definitions.some((record) => record.pending_hash === pending) ?? false;
      const current = hold.org_id === context.org_id && servers.has(hold.server_id) ? store.definition(hold.org_id, hold.server_id, hold.record.kind, hold.record.name) : null;
      if (known || current?.pending_hash !== pending) localHolds.delete(key);
    }
    if (localHolds.size !== before) saveHolds();
    thresholds = context.thresholds;
    if (proxy === null || proxyPrivate !== allowPrivate) {
      const previous = proxy;
      proxy = buildProxy(allowPrivate);
      proxyPrivate = allowPrivate;
      if (previous !== null) void previous.close().catch(() => undefined);
    }
    applied = { context, servers, keys: new Map(context.keys.map((key) => [key.key_hash, key])) };
    logger.info({ version: context.version, servers: servers.size, keys: context.keys.length }, 'mcp sensor configuration applied');
  }

  /** The caller a presented key makes, or the refusal. */
  function callerOf(request: FastifyRequest, state: Applied): ProxyCaller {
    const header = request.headers.authorization;
    let presented: string | null = null;
    if (typeof header === 'string' && header.length > 0) presented = /^Bearer[ ]+(\S{1,4096})[ ]*$/i.exec(header)?.[1] ?? '';
    else if (typeof request.headers['x-api-key'] === 'string' && request.headers['x-api-key'].length > 0) presented = request.headers['x-api-key'].trim();
    if (presented === null) throw new SvcError('AUTH_MISSING');
    const hash = sha256Hex(presented);
    const key = state.keys.get(hash);
    if (key === undefined || !safeEqual(key.key_hash, hash)) throw new SvcError('AUTH_INVALID');
    const actor = `key:${key.key_id}`;
    const hop = request.headers['x-agent-hop'];
    return { orgId: state.context.org_id, role: key.role, actor, hop: typeof hop === 'string' && hop !== '' ? hop.slice(0, 128) : actor };
  }

  // Event streams (a session's GET, a streamed answer) end with the process: closing does not wait for them.
  const app = Fastify({ loggerInstance: logger, disableRequestLogging: true, bodyLimit: 4 * 1_048_576, genReqId: () => randomUUID(), forceCloseConnections: true });
  const open = new Set<AbortController>();
  app.setErrorHandler(sensorErrorHandler(logger, 'mcp', 'VALIDATION_FAILED'));
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 4 * 1_048_576 }, (_request, body, done) => done(null, body));

  app.get('/health', async () => ({ status: 'ok', sensor_id: options.sensorId(), class: 'mcp', paused: options.paused(), configured: applied !== null, config_version: applied?.context.version ?? null, servers: applied?.servers.size ?? 0 }));

  const handler = async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const origin = request.headers.origin;
    const refusal = checkOrigin({ allowedOrigins: [], allowedHosts: [] }, request.host, typeof origin === 'string' ? origin : undefined);
    if (refusal !== null) throw new SvcError(refusal.code, { details: refusal.code === 'MCP_ORIGIN_REFUSED' ? { origin: refusal.origin } : { host: refusal.host } });
    const state = applied;
    if (state === null || proxy === null) throw new SvcError('SERVICE_UNAVAILABLE', { message: 'This MCP sensor has no configuration from its collector yet; retry shortly.', details: { reason: 'no_configuration' } });
    const caller = callerOf(request, state);
    if (!state.context.enabled) throw new SvcError('FEATURE_DISABLED', { details: { feature: 'FEATURE_MCP_SECURITY' } });
    const server = state.servers.get(request.params.id);
    if (server === undefined) throw new SvcError('NOT_FOUND', { details: { resource: 'mcp_server', id: request.params.id.slice(0, 64) } });
    const controller = new AbortController();
    open.add(controller);
    reply.raw.once('close', () => {
      open.delete(controller);
      if (!reply.raw.writableFinished) controller.abort();
    });
    const response = await proxy.handle({ method: request.method, server, caller, headers: request.headers, body: Buffer.isBuffer(request.body) ? request.body : null, requestId: request.id, signal: controller.signal });
    reply.status(response.status);
    for (const [name, value] of Object.entries(response.headers)) reply.header(name, value);
    return reply.send(response.body ?? '');
  };
  const route = { schema: { params: { type: 'object', properties: { id: { type: 'string', maxLength: 64 } }, required: ['id'] } } } as const;
  app.post('/mcp/:id', route, handler);
  app.get('/mcp/:id', route, handler);
  app.delete('/mcp/:id', route, handler);

  return {
    app,
    apply,
    detection,
    /** Waits for the findings being emitted, then closes the proxy's upstream connections. */
    async close(): Promise<void> {
      for (const controller of open) controller.abort();
      await app.close();
      await Promise.all([...inFlight]);
      await proxy?.close();
      await cache.close();
      await holdsWritten;
    },
  };
}

/** The holds a previous run of this sensor kept (none when there is no file, or it is unreadable: logged). */
function readHolds(file: string | null, logger: Logger): LocalHold[] {
  if (file === null) return [];
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') logger.error({ err: error }, 'mcp sensor holds unreadable');
    return [];
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (!Array.isArray(parsed)) throw new Error('not a list');
    return parsed.filter((hold): hold is LocalHold => {
      const candidate = hold as Partial<LocalHold> | null;
      return typeof candidate?.org_id === 'string' && typeof candidate.server_id === 'string' && typeof candidate.record?.pending_hash === 'string' && typeof candidate.record.name === 'string' && typeof candidate.record.kind === 'string';
    });
  } catch (error) {
    logger.error({ err: (error as Error).message }, 'mcp sensor holds unreadable: starting without them');
    return [];
  }
}

function pick(source: Readonly<Record<string, unknown>>, names: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of names) {
    const value = source[name];
    if (value === undefined || value === null) continue;
    out[name] = typeof value === 'string' ? value.slice(0, 256) : Array.isArray(value) ? value.slice(0, 16) : value;
  }
  return out;
}

export type McpSensor = ReturnType<typeof buildMcpSensor>;
