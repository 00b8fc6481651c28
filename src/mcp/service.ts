/**
 * The MCP security capability's core, built once from explicit dependencies: the servers
 * registry, the proxy, pinned definitions and their approval, quarantine and release, sessions
 * (30-minute expiry, heartbeat) and the session audit. No Fastify here; routes.ts adapts it.
 */
import { LRUCache } from 'lru-cache';
import type { AuditEntryInput, AuditLog, AuditRecord } from '../audit/index.ts';
import type { DetectionEngine } from '../detection/index.ts';
import type { Cache } from '../platform/cache.ts';
import type { Database } from '../platform/db/index.ts';
import { isDatabaseOutage } from '../platform/db/failures.ts';
import { SvcError } from '../platform/errors.ts';
import type { EventBus } from '../platform/events.ts';
import type { Logger } from '../platform/logger.ts';
import type { Outbox } from '../platform/outbox.ts';
import { createChainCorrelator } from './chains.ts';
import { TOOL_CATEGORIES } from './definitions.ts';
import { createInspector } from './inspection.ts';
import { createPinning } from './pinning.ts';
import { createProxy, type CallAudit, type ProxyCaller, type ProxyRequest, type ProxyResponse } from './proxy.ts';
import { createStore, type DefinitionKind, type DefinitionRecord, type McpServerRecord, type QuarantineRecord, type SessionRecord } from './store.ts';

/** Spec: an MCP session expires after 30 minutes without a heartbeat. */
export const SESSION_TTL_MS = 30 * 60_000;
/** Session activity is written at most this often per session and replica. */
const SESSION_WRITE_EVERY_MS = 10_000;
/** Sessions tracked per replica (the rest are read from the store when they come back). */
const MAX_SESSIONS = 100_000;
/** How long audit entries gather before they are appended (one chain transaction per batch). */
const AUDIT_GATHER_MS = 100;
const MCP_AUDIT_OUTBOX_KIND = 'mcp_audit_entry';

export interface McpDeps {
  readonly db: Database;
  readonly cache: Cache;
  readonly events: EventBus;
  readonly logger: Logger;
  readonly audit: AuditLog;
  /** Where audit entries go while the database is unavailable (platform/outbox.ts). */
  readonly outbox?: Outbox;
  readonly detection: DetectionEngine;
  /** SSRF check of a user-supplied URL (throws VALIDATION_FAILED / TARGET_FORBIDDEN). */
  readonly checkTarget: (url: string, field?: string) => Promise<URL>;
  readonly allowPrivateTargets: boolean;
  readonly enabled: boolean;
  readonly sessionTtlMs?: number;
  /** Clock for session expiry (tests move it). */
  readonly now?: () => number;
}

export interface ServerInput {
  readonly name: string;
  readonly url: string;
  readonly tool_categories?: Record<string, string>;
  readonly on_held?: 'hide' | 'block';
}

export interface McpServerView extends McpServerRecord {
  /** Where MCP clients connect (Streamable HTTP), with their svc API key. */
  readonly endpoint: string;
}

export function createMcp(deps: McpDeps) {
  const ttlMs = deps.sessionTtlMs ?? SESSION_TTL_MS;
  const clock = deps.now ?? Date.now;
  const store = createStore(deps.db);
  const inspector = createInspector(deps.detection);
  const pinning = createPinning(store, inspector);
  const chains = createChainCorrelator(deps.cache);
  // Keyed on the client-chosen X-Session-ID: a hard cap, least recently used evicted first (an
  // evicted session that comes back is read again from the store).
  const sessions = new LRUCache<string, { expiresAt: number; writtenAt: number; requests: number }>({ max: MAX_SESSIONS });

  // Audit entries are appended in order per org, off the request path: while one append is in
  // flight, later entries gather and go in the next appendMany (one chain-head lock per batch).
  // flush() waits until every entry is written. While the database is unavailable they go to the
  // evidence outbox and are chained, in order, when it returns (and while anything waits there,
  // new entries queue behind it); an entry the database refuses is written alone, so only it is lost.
  const auditBuffers = new Map<string, CallAudit[]>();
  const auditDrains = new Map<string, Promise<void>>();
  const { outbox } = deps;
  const toInput = (entry: CallAudit): AuditEntryInput => ({ actor: 'mcp-proxy', action: entry.action, target: entry.target, outcome: entry.outcome, details: entry.details });
  const failureCode = (error: unknown): string => {
    const code = (error as { code?: unknown } | null)?.code;
    return typeof code === 'string' ? code.slice(0, 32) : error instanceof Error ? error.name.slice(0, 32) : 'unknown';
  };
  const spool = async (orgId: string, entries: readonly AuditEntryInput[]): Promise<void> => {
    const kept = await outbox!.appendMany(MCP_AUDIT_OUTBOX_KIND, entries.map((entry) => ({ orgId, entry }))).catch(() => entries.map(() => false));
    const lost = kept.filter((flag) => !flag).length;
    if (lost > 0) deps.logger.error({ org_id: orgId, entries: lost }, 'mcp audit entries lost: spool write failed or full');
  };
  /** Each entry alone after a refused batch; rethrows an outage. */
  const appendEach = async (orgId: string, entries: readonly AuditEntryInput[]): Promise<void> => {
    for (const entry of entries) {
      try {
        await deps.audit.append(orgId, entry);
      } catch (error) {
        if (isDatabaseOutage(error)) throw error;
        deps.logger.error({ org_id: orgId, action: entry.action, target: entry.target ?? null, code: failureCode(error) }, 'mcp audit entry rejected');
      }
    }
  };
  const write = async (orgId: string, entries: readonly AuditEntryInput[]): Promise<void> => {
    try {
      await deps.audit.appendMany(orgId, entries);
    } catch (error) {
      if (isDatabaseOutage(error)) throw error;
      await appendEach(orgId, entries);
    }
  };
  // Replayed in spool order, one org and one transaction per call (a repeated call writes nothing twice).
  outbox?.register(
    MCP_AUDIT_OUTBOX_KIND,
    async (records) => {
      const list = records as Array<{ orgId: string; entry: AuditEntryInput }>;
      if (list.length > 0) await write(list[0]!.orgId, list.map((record) => record.entry));
    },
    { group: (record) => (record as { orgId: string }).orgId, batch: 100 },
  );
  const drain = async (orgId: string): Promise<void> => {
    for (;;) {
      const batch = auditBuffers.get(orgId);
      if (batch === undefined || batch.length === 0) break;
      auditBuffers.delete(orgId);
      const entries = batch.map(toInput);
      try {
        if (outbox !== undefined && outbox.pending() > 0) await spool(orgId, entries);
        else await write(orgId, entries);
      } catch (error) {
        if (outbox !== undefined && isDatabaseOutage(error)) await spool(orgId, entries);
        else deps.logger.error({ org_id: orgId, entries: entries.length, code: failureCode(error) }, 'mcp audit append failed');
      }
    }
    auditDrains.delete(orgId);
  };
  const audit = (orgId: string, entry: CallAudit): void => {
    let buffer = auditBuffers.get(orgId);
    if (buffer === undefined) auditBuffers.set(orgId, (buffer = []));
    buffer.push(entry);
    if (auditDrains.has(orgId)) return;
    // A short gathering delay turns a burst of calls into one transaction (embedded PGlite runs
    // queries on the event loop, so fewer, larger appends keep calls moving).
    auditDrains.set(orgId, new Promise<void>((resolve) => setTimeout(resolve, AUDIT_GATHER_MS)).then(() => drain(orgId)));
  };

  const session = async (caller: ProxyCaller, server: McpServerRecord, sessionId: string, mcpSessionId: string | null): Promise<'active' | 'expired'> => {
    const key = `${caller.orgId}:${sessionId}`;
    const now = clock();
    let state = sessions.get(key);
    if (state === undefined) {
      const stored = await store.getSession(caller.orgId, sessionId, now);
      if (stored?.state === 'expired') return 'expired';
      state = { expiresAt: now + ttlMs, writtenAt: 0, requests: 0 };
      sessions.set(key, state);
    } else if (state.expiresAt <= now) {
      sessions.delete(key);
      await store.expireSession(caller.orgId, sessionId);
      return 'expired';
    }
    state.expiresAt = now + ttlMs;
    state.requests++;
    if (now - state.writtenAt >= SESSION_WRITE_EVERY_MS) {
      const requests = state.requests;
      state.requests = 0;
      state.writtenAt = now;
      await store.touchSession(caller.orgId, { id: sessionId, server_id: server.id, mcp_session_id: mcpSessionId, role: caller.role, expiresAt: new Date(now + ttlMs), requests });
    }
    return 'active';
  };

  const proxy = createProxy({ cache: deps.cache, events: deps.events, store, pinning, inspector, chains, allowPrivateTargets: deps.allowPrivateTargets, audit, session });
  const view = (server: McpServerRecord): McpServerView => ({ ...server, endpoint: `/mcp/${server.id}` });
  // The proxy looks its server up on every request: a per-replica cache keeps the database off
  // the hot path (a deletion on another replica takes effect within the TTL).
  const serverCache = new Map<string, { server: McpServerRecord | null; expiresAt: number }>();
  const SERVER_CACHE_MS = 5_000;
  const cachedServer = async (orgId: string, id: string): Promise<McpServerRecord | null> => {
    const key = `${orgId}:${id}`;
    const hit = serverCache.get(key);
    if (hit !== undefined && hit.expiresAt > Date.now()) return hit.server;
    const server = await store.getServer(orgId, id);
    if (serverCache.size > 10_000) serverCache.clear();
    serverCache.set(key, { server, expiresAt: Date.now() + SERVER_CACHE_MS });
    return server;
  };

  return {
    enabled: deps.enabled,
    async createServer(orgId: string, actor: string, input: ServerInput): Promise<McpServerView> {
      await deps.checkTarget(input.url, 'url');
      for (const [tool, category] of Object.entries(input.tool_categories ?? {})) {
        if (!(TOOL_CATEGORIES as readonly string[]).includes(category)) {
          throw new SvcError('VALIDATION_FAILED', { message: `tool_categories.${tool} must be one of ${TOOL_CATEGORIES.join(', ')}`, details: { field: `tool_categories.${tool}`, allowed: TOOL_CATEGORIES } });
        }
      }
      const created = await store.createServer(orgId, { name: input.name, url: input.url, tool_categories: input.tool_categories ?? {}, on_held: input.on_held ?? 'hide' });
      if (created === 'exists') throw new SvcError('CONFLICT', { message: `An MCP server named "${input.name}" already exists.`, details: { field: 'name' } });
      audit(orgId, { action: 'mcp.server.create', outcome: 'success', target: created.id, details: { name: created.name, url: created.url, actor } });
      return view(created);
    },
    async listServers(orgId: string): Promise<McpServerView[]> {
      return (await store.listServers(orgId)).map(view);
    },
    async getServer(orgId: string, id: string): Promise<McpServerView> {
      const server = await cachedServer(orgId, id);
      if (server === null) throw new SvcError('NOT_FOUND', { details: { resource: 'mcp_server', id } });
      return view(server);
    },
    async deleteServer(orgId: string, actor: string, id: string): Promise<void> {
      if (!(await store.deleteServer(orgId, id))) throw new SvcError('NOT_FOUND', { details: { resource: 'mcp_server', id } });
      serverCache.delete(`${orgId}:${id}`);
      pinning.forget(orgId, id);
      audit(orgId, { action: 'mcp.server.delete', outcome: 'success', target: id, details: { actor } });
    },
    async definitions(orgId: string, serverId: string): Promise<DefinitionRecord[]> {
      await this.getServer(orgId, serverId);
      return store.definitions(orgId, serverId);
    },
    async approve(orgId: string, actor: string, serverId: string, kind: DefinitionKind, name: string, hash: string): Promise<DefinitionRecord> {
      await this.getServer(orgId, serverId);
      const approved = await store.approveDefinition(orgId, serverId, kind, name, hash);
      if (approved === null) throw new SvcError('CONFLICT', { message: 'No definition with this pending hash awaits approval.', details: { field: 'hash' } });
      pinning.forget(orgId, serverId);
      audit(orgId, { action: 'mcp.definition.approve', outcome: 'success', target: name, details: { server_id: serverId, kind, definition_hash: hash, actor } });
      return approved;
    },
    async collisions(orgId: string) {
      const servers = new Map((await store.listServers(orgId)).map((server) => [server.id, server.name]));
      return (await store.collisions(orgId)).map((entry) => ({ ...entry, server_names: entry.servers.map((id) => servers.get(id) ?? id) }));
    },
    /** Quarantined results without their content (the original is for admins, by id). */
    async quarantined(orgId: string, state?: 'held' | 'released'): Promise<Omit<QuarantineRecord, 'original'>[]> {
      return (await store.listQuarantine(orgId, state)).map(({ original: _original, ...rest }) => rest);
    },
    async quarantine(orgId: string, id: string): Promise<QuarantineRecord> {
      const record = await store.getQuarantine(orgId, id);
      if (record === null) throw new SvcError('NOT_FOUND', { details: { resource: 'mcp_quarantine', id } });
      return record;
    },
    async release(orgId: string, actor: string, id: string): Promise<QuarantineRecord> {
      const record = await store.releaseQuarantine(orgId, id, actor);
      if (record === null) throw new SvcError('NOT_FOUND', { details: { resource: 'mcp_quarantine', id } });
      audit(orgId, { action: 'mcp.quarantine.release', outcome: 'success', target: id, details: { session_id: record.session_id, server_id: record.server_id, tool: record.tool, actor } });
      return record;
    },
    async heartbeat(orgId: string, id: string): Promise<SessionRecord> {
      const result = await store.heartbeat(orgId, id, ttlMs, clock());
      if (result === null) throw new SvcError('NOT_FOUND', { details: { resource: 'mcp_session', id } });
      if (result === 'expired') {
        sessions.delete(`${orgId}:${id}`);
        throw new SvcError('MCP_SESSION_EXPIRED', { details: { id } });
      }
      const state = sessions.get(`${orgId}:${id}`);
      if (state !== undefined) state.expiresAt = Date.parse(result.expires_at);
      return result;
    },
    async session(orgId: string, id: string): Promise<SessionRecord> {
      const record = await store.getSession(orgId, id, clock());
      if (record === null) throw new SvcError('NOT_FOUND', { details: { resource: 'mcp_session', id } });
      return record;
    },
    /** The MCP audit entries of one session, oldest first (docs/mcp.md "Audit entries"). */
    async sessionAudit(orgId: string, sessionId: string): Promise<AuditRecord[]> {
      await this.flush();
      const records = await deps.audit.list(orgId, { sessionId, limit: 1_000 });
      return records.filter((record) => record.action.startsWith('mcp.')).reverse();
    },
    handle(request: ProxyRequest): Promise<ProxyResponse> {
      return proxy.handle(request);
    },
    /** Upstream sessions with requests awaiting an answer on this replica (bounded; for tests and metrics). */
    pendingSessions(): number {
      return proxy.pendingSessions();
    },
    async flush(): Promise<void> {
      while (auditDrains.size > 0) await Promise.all([...auditDrains.values()]);
    },
    async close(): Promise<void> {
      await this.flush();
      await proxy.close();
    },
  };
}

export type Mcp = ReturnType<typeof createMcp>;
