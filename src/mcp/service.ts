/**
 * The MCP security capability's core, built once from explicit dependencies: the servers
 * registry, the proxy, pinned definitions and their approval, quarantine and release, sessions
 * (30-minute expiry, heartbeat) and the session audit. No Fastify here; routes.ts adapts it.
 */
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { AuditEntryInput, AuditLog, AuditRecord } from '../audit/index.ts';
import type { DetectionEngine, ProfileBaseline } from '../detection/index.ts';
import type { Cache } from '../platform/cache.ts';
import type { Database } from '../platform/db/index.ts';
import { isDatabaseOutage, isRetryableWriteFailure } from '../platform/db/failures.ts';
import { SvcError } from '../platform/errors.ts';
import type { EventBus } from '../platform/events.ts';
import type { Logger } from '../platform/logger.ts';
import type { Metrics } from '../platform/metrics.ts';
import type { JournalEntry, Outbox } from '../platform/outbox.ts';
import { recordedAt } from '../platform/time.ts';
import { createChainCorrelator } from './chains.ts';
import { definitionHash, sha256Jcs, TOOL_CATEGORIES } from './definitions.ts';
import { createInspector } from './inspection.ts';
import type { StdioCommand } from './channels.ts';
import { createLegacySse } from './legacy-sse.ts';
import { createPinning, type PinningOptions } from './pinning.ts';
import { createProxy, type CallAudit, type ProxyCaller, type ProxyRequest, type ProxyResponse } from './proxy.ts';
import { createStore, type McpTransport, type DefinitionKind, type DefinitionRecord, type McpServerRecord, type QuarantineRecord, type SessionRecord } from './store.ts';
import { entryBound } from '../platform/lru.ts';

/** Spec: an MCP session expires after 30 minutes without a heartbeat. */
export const SESSION_TTL_MS = 30 * 60_000;
/** Session activity is written at most this often per session and replica. */
const SESSION_WRITE_EVERY_MS = 10_000;
/** Sessions tracked per replica (the rest are read from the store when they come back). */
const MAX_SESSIONS = 100_000;
/**
 * Audit entries gather this long, or until this many wait, before they are appended (one chain
 * transaction per batch). They are journaled as they are made, so waiting loses nothing, and a
 * read of the chain appends what gathered first (AuditLog.addGatherer).
 */
const AUDIT_GATHER_MS = 1_000;
const AUDIT_GATHER_ENTRIES = 250;
const MCP_AUDIT_OUTBOX_KIND = 'mcp_audit_entry';

/** An outage or a lock conflict stopped an audit write: `entries` (in order) were not written and may be later. */
class Unwritten extends Error {
  readonly entries: readonly AuditEntryInput[];
  constructor(entries: readonly AuditEntryInput[], cause: unknown) {
    super('mcp audit entries not written', { cause });
    this.entries = entries;
  }
}

export interface McpDeps {
  /** svc_mcp_events_total (absent: not counted). */
  readonly metrics?: Pick<Metrics, 'mcpEvents'>;
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
  /** How often replicas look for pin changes made elsewhere (tests shorten it). */
  readonly pinning?: PinningOptions;
  /** The operator's allow-list of stdio server commands (MCP_STDIO_SERVERS); empty = stdio off. */
  readonly stdioServers?: Readonly<Record<string, StdioCommand & { readonly orgs: readonly string[] | null }>>;
  /**
   * Ids of sessions held in this process's memory (bridged channels, legacy SSE streams): in a
   * cluster they name the worker (src/platform/worker-routing.ts). Default: a plain UUID.
   */
  readonly localId?: (base: string) => string;
  /** T5 behavioural baselines of tool calls (detection's subject profiles, per org, server and role; proxy.ts). Absent, MCP has no T5. */
  readonly behaviour?: ProfileBaseline;
}

export interface ServerInput {
  readonly name: string;
  /** Streamable HTTP or legacy SSE endpoint; absent for stdio. */
  readonly url?: string;
  /** Default streamable_http. */
  readonly transport?: McpTransport;
  /** stdio only: the name of an operator-configured command (MCP_STDIO_SERVERS). */
  readonly stdio?: string;
  readonly tool_categories?: Record<string, string>;
  readonly on_held?: 'hide' | 'block';
}

export interface McpServerView extends McpServerRecord {
  /** Where MCP clients connect (Streamable HTTP), with their svc API key. */
  readonly endpoint: string;
}

export function createMcp(deps: McpDeps) {
  const ttlMs = deps.sessionTtlMs ?? SESSION_TTL_MS;
  const stdioServers = deps.stdioServers ?? {};
  const clock = deps.now ?? Date.now;
  const store = createStore(deps.db);
  const inspector = createInspector(deps.detection);
  const pinning = createPinning(store, inspector, deps.cache, deps.pinning ?? {});
  const chains = createChainCorrelator(deps.cache);
  // Keyed on the client-chosen X-Session-ID: a hard cap, least recently used evicted first (an
  // evicted session that comes back is read again from the store).
  const sessions = new LRUCache<string, { expiresAt: number; writtenAt: number; requests: number }>(entryBound(MAX_SESSIONS));

  // Audit entries are appended in order per org, off the request path, one appendMany (one
  // chain-head lock) per gathering: AUDIT_GATHER_MS or AUDIT_GATHER_ENTRIES, whichever comes
  // first; while one append is in flight, later entries gather for the next. flush() and every
  // read of the chain (list, verify) append what waits first. While the database is unavailable they go to the
  // evidence outbox and are chained, in order, when it returns (and while anything waits there,
  // new entries queue behind it); an entry the database refuses is written alone, so only it is lost.
  // Each entry gets its id and is journaled as it is made (platform/outbox.ts): a SIGKILL loses
  // none, and an entry written again after a crash is skipped by the chain (its id is there).
  interface BufferedAudit {
    input: AuditEntryInput;
    journaled: JournalEntry | null;
  }
  const auditBuffers = new Map<string, BufferedAudit[]>();
  const auditDrains = new Map<string, Promise<void>>();
  const auditTimers = new Map<string, NodeJS.Timeout>();
  const { outbox } = deps;
  // An empty target (a tool call whose tool is unknown) is left out: the audit log refuses an empty one.
  // Its id and its time (recordedAt: increasing within the process, as the other evidence writers stamp theirs) are fixed
  // when the call is audited: chained later (spool, journal), the entry keeps both.
  const toInput = (entry: CallAudit): AuditEntryInput => ({ id: randomUUID(), occurredAt: recordedAt(), actor: 'mcp-proxy', action: entry.action, ...(entry.target === '' ? {} : { target: entry.target }), outcome: entry.outcome, details: entry.details });
  const failureCode = (error: unknown): string => {
    const code = (error as { code?: unknown } | null)?.code;
    return typeof code === 'string' ? code.slice(0, 32) : error instanceof Error ? error.name.slice(0, 32) : 'unknown';
  };
  const spool = async (orgId: string, entries: readonly AuditEntryInput[]): Promise<boolean> => {
    const kept = await outbox!.appendMany(MCP_AUDIT_OUTBOX_KIND, entries.map((entry) => ({ orgId, entry }))).catch(() => entries.map(() => false));
    const lost = kept.filter((flag) => !flag).length;
    if (lost > 0) deps.logger.error({ org_id: orgId, entries: lost }, 'mcp audit entries not spooled: spool write failed or full (kept in the journal)');
    return lost === 0;
  };
  // An outage, or (when the outbox can keep the entries) a lock conflict: the transaction rolled back whole and the same
  // entries may be written later, so they are kept rather than refused.
  const retryLater = (error: unknown): boolean => (outbox !== undefined ? isRetryableWriteFailure(error) : isDatabaseOutage(error));
  /**
   * Each entry alone after a refused batch; rethrows an outage or a lock conflict (retryLater) with
   * the entries not yet written, so that only those are kept.
   */
  const appendEach = async (orgId: string, entries: readonly AuditEntryInput[]): Promise<void> => {
    for (const [index, entry] of entries.entries()) {
      try {
        await deps.audit.append(orgId, entry);
      } catch (error) {
        if (retryLater(error)) throw new Unwritten(entries.slice(index), error);
        deps.logger.error({ org_id: orgId, action: entry.action, target: entry.target ?? null, code: failureCode(error) }, 'mcp audit entry rejected');
      }
    }
  };
  const write = async (orgId: string, entries: readonly AuditEntryInput[]): Promise<void> => {
    try {
      await deps.audit.appendMany(orgId, entries);
    } catch (error) {
      if (retryLater(error)) throw new Unwritten(entries, error);
      await appendEach(orgId, entries);
    }
  };
  // Replayed in spool order, one org and one transaction per call (a repeated call writes nothing twice).
  outbox?.register(
    MCP_AUDIT_OUTBOX_KIND,
    async (records) => {
      const list = records as Array<{ orgId: string; entry: AuditEntryInput }>;
      if (list.length === 0) return;
      const orgId = list[0]!.orgId;
      const entries = list.map((record) => record.entry);
      try {
        await deps.audit.appendMany(orgId, entries);
      } catch (error) {
        // An outage or a lock conflict (the transaction rolled back whole): kept for the next replay (review-34b).
        if (isRetryableWriteFailure(error)) throw error;
        // An entry alone that loses a lock conflict keeps the call in the spool (the entries already chained are skipped).
        await appendEach(orgId, entries).catch((stopped: unknown) => {
          throw stopped instanceof Unwritten ? stopped.cause : stopped;
        });
      }
    },
    { group: (record) => (record as { orgId: string }).orgId, batch: 100 },
  );
  /** Appends the org's gathered entries, one transaction per batch, until fewer than a batch wait. */
  const drain = async (orgId: string): Promise<void> => {
    for (;;) {
      const batch = auditBuffers.get(orgId);
      if (batch === undefined || batch.length === 0) return;
      auditBuffers.delete(orgId);
      const entries = batch.map((item) => item.input);
      let settled = true;
      try {
        if (outbox !== undefined && outbox.pending() > 0) settled = await spool(orgId, entries);
        else await write(orgId, entries);
      } catch (error) {
        // An outage or a lock conflict: the entries not yet written wait in the spool, in order (a lock conflict used to
        // fall back to one entry at a time, where a second conflict lost the entry).
        if (outbox !== undefined && error instanceof Unwritten) settled = await spool(orgId, error.entries);
        else {
          const cause = error instanceof Unwritten ? error.cause : error;
          deps.logger.error({ org_id: orgId, entries: entries.length, code: failureCode(cause) }, 'mcp audit append failed');
        }
      }
      if (settled) for (const item of batch) item.journaled?.done();
      // What gathered meanwhile waits for its own gathering time unless it is a batch already.
      if ((auditBuffers.get(orgId)?.length ?? 0) < AUDIT_GATHER_ENTRIES) return;
    }
  };
  /** Starts appending the org's gathered entries now (or returns the append in flight). */
  const drainNow = (orgId: string): Promise<void> => {
    const timer = auditTimers.get(orgId);
    if (timer !== undefined) {
      clearTimeout(timer);
      auditTimers.delete(orgId);
    }
    const running = auditDrains.get(orgId);
    if (running !== undefined) return running;
    const next = drain(orgId).finally(() => {
      auditDrains.delete(orgId);
      if ((auditBuffers.get(orgId)?.length ?? 0) > 0) gather(orgId);
    });
    auditDrains.set(orgId, next);
    return next;
  };
  const gather = (orgId: string): void => {
    if (auditTimers.has(orgId) || auditDrains.has(orgId)) return;
    // Unref'd: the entries are journaled, and close() appends what waits.
    auditTimers.set(orgId, setTimeout(() => void drainNow(orgId), AUDIT_GATHER_MS).unref());
  };
  /**
   * Appends every entry of the org gathered before the call: the append in flight, then the one
   * that takes what was waiting. Two rounds, not "until nothing waits": under a steady stream of
   * calls something always waits, and a read must not wait for the stream to stop.
   */
  const flushOrg = async (orgId: string): Promise<void> => {
    for (let round = 0; round < 2; round++) {
      const running = auditDrains.get(orgId);
      if (running !== undefined) await running;
      else if ((auditBuffers.get(orgId)?.length ?? 0) > 0) await drainNow(orgId);
      else return;
    }
  };
  // Reads of the chain (GET /api/v1/audit, verification, exports) append what gathered first.
  const removeGatherer = deps.audit.addGatherer(flushOrg);
  const audit = (orgId: string, entry: CallAudit): void => {
    deps.metrics?.mcpEvents.inc({ action: entry.action, outcome: entry.outcome });
    let buffer = auditBuffers.get(orgId);
    if (buffer === undefined) auditBuffers.set(orgId, (buffer = []));
    const input = toInput(entry);
    buffer.push({ input, journaled: outbox?.journal(MCP_AUDIT_OUTBOX_KIND, { orgId, entry: input }) ?? null });
    // Gathered by time or by size: a transaction's fixed cost (head lock, id check, commit) is
    // shared by every entry of its batch, and on the embedded engine it runs on svc's thread.
    if (buffer.length >= AUDIT_GATHER_ENTRIES && !auditDrains.has(orgId)) void drainNow(orgId);
    else gather(orgId);
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
      // Another replica (or worker) may have kept the session alive since this one last saw it.
      const stored = await store.getSession(caller.orgId, sessionId, now);
      if (stored === null || stored.state === 'expired') {
        sessions.delete(key);
        await store.expireSession(caller.orgId, sessionId);
        return 'expired';
      }
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

  const localId = deps.localId;
  const newSessionId = localId === undefined ? randomUUID : () => localId(randomUUID());
  const proxy = createProxy({ cache: deps.cache, events: deps.events, store, pinning, inspector, chains, allowPrivateTargets: deps.allowPrivateTargets, stdioServers, audit, session, newSessionId, ...(deps.behaviour === undefined ? {} : { behaviour: deps.behaviour }) });
  const legacy = createLegacySse((request) => proxy.handle(request), newSessionId);
  const view = (server: McpServerRecord): McpServerView => ({ ...server, endpoint: `/mcp/${server.id}` });
  // The proxy looks its server up on every request: a per-replica cache keeps the database off
  // the hot path (a deletion on another replica takes effect within the TTL).
  const serverCache = new LRUCache<string, { server: McpServerRecord | null; expiresAt: number }>(entryBound(10_000));
  const SERVER_CACHE_MS = 5_000;
  const cachedServer = async (orgId: string, id: string): Promise<McpServerRecord | null> => {
    const key = `${orgId}:${id}`;
    const hit = serverCache.get(key);
    if (hit !== undefined && hit.expiresAt > Date.now()) return hit.server;
    const server = await store.getServer(orgId, id);
    serverCache.set(key, { server, expiresAt: Date.now() + SERVER_CACHE_MS });
    return server;
  };

  /** The stored target of a registration (`stdio:<name>` for stdio), validated; throws VALIDATION_FAILED or TARGET_FORBIDDEN. */
  const target = async (orgId: string, transport: McpTransport, url: string | undefined, stdio: string | undefined): Promise<string> => {
    if (transport === 'stdio') {
      // Only a name from the operator's allow-list: an API client never supplies a command.
      const allowed = Object.entries(stdioServers).filter(([, command]) => command.orgs === null || command.orgs.includes(orgId)).map(([name]) => name);
      if (url !== undefined) throw new SvcError('VALIDATION_FAILED', { message: 'url is not used with transport stdio; name an operator-configured server in stdio.', details: { field: 'url' } });
      if (stdio === undefined || !allowed.includes(stdio)) {
        throw new SvcError('VALIDATION_FAILED', {
          message: allowed.length === 0 ? 'No stdio MCP servers are configured for this organization (the operator lists them in MCP_STDIO_SERVERS).' : `stdio must be one of ${allowed.join(', ')}.`,
          details: { field: 'stdio', allowed },
        });
      }
      return `stdio:${stdio}`;
    }
    if (stdio !== undefined) throw new SvcError('VALIDATION_FAILED', { message: 'stdio is only used with transport stdio.', details: { field: 'stdio' } });
    if (url === undefined) throw new SvcError('VALIDATION_FAILED', { message: `url is required with transport ${transport}.`, details: { field: 'url' } });
    await deps.checkTarget(url, 'url');
    return url;
  };
  const checkCategories = (categories: Readonly<Record<string, string>>): void => {
    for (const [tool, category] of Object.entries(categories)) {
      if (!(TOOL_CATEGORIES as readonly string[]).includes(category)) {
        throw new SvcError('VALIDATION_FAILED', { message: `tool_categories.${tool} must be one of ${TOOL_CATEGORIES.join(', ')}`, details: { field: `tool_categories.${tool}`, allowed: TOOL_CATEGORIES } });
      }
    }
  };

  return {
    enabled: deps.enabled,
    async createServer(orgId: string, actor: string, input: ServerInput): Promise<McpServerView> {
      const transport = input.transport ?? (input.stdio !== undefined ? 'stdio' : 'streamable_http');
      const url = await target(orgId, transport, input.url, input.stdio);
      checkCategories(input.tool_categories ?? {});
      const created = await store.createServer(orgId, { name: input.name, url, transport, tool_categories: input.tool_categories ?? {}, on_held: input.on_held ?? 'hide' });
      if (created === 'exists') throw new SvcError('CONFLICT', { message: `An MCP server named "${input.name}" already exists.`, details: { field: 'name' } });
      audit(orgId, { action: 'mcp.server.create', outcome: 'success', target: created.id, details: { name: created.name, url: created.url, transport: created.transport, actor } });
      return view(created);
    },
    /**
     * Edits a registration: the fields given replace the stored ones (tool_categories as a
     * whole). A new target (url, stdio or transport) is validated as at registration, the SSRF
     * check included. Pinned definitions, holds, quarantine and sessions are kept: a new target
     * that serves other definitions has them held as changed, as any rug pull.
     */
    async updateServer(orgId: string, actor: string, id: string, input: Partial<ServerInput>): Promise<McpServerView> {
      const current = await store.getServer(orgId, id);
      if (current === null) throw new SvcError('NOT_FOUND', { details: { resource: 'mcp_server', id } });
      const retarget = input.url !== undefined || input.stdio !== undefined || input.transport !== undefined;
      let transport = current.transport;
      let url = current.url;
      if (retarget) {
        transport = input.transport ?? (input.stdio !== undefined ? 'stdio' : input.url !== undefined && current.transport === 'stdio' ? 'streamable_http' : current.transport);
        const keptUrl = transport !== 'stdio' && current.transport !== 'stdio' ? current.url : undefined;
        const keptStdio = transport === 'stdio' && current.transport === 'stdio' ? current.url.slice('stdio:'.length) : undefined;
        url = await target(orgId, transport, input.url ?? (input.stdio === undefined ? keptUrl : undefined), input.stdio ?? (input.url === undefined ? keptStdio : undefined));
      }
      const categories = input.tool_categories ?? current.tool_categories;
      checkCategories(categories);
      const uncategorized = Object.keys(current.tool_categories).filter((tool) => !Object.hasOwn(categories, tool));
      const updated = await store.updateServer(orgId, id, { name: input.name ?? current.name, url, transport, tool_categories: { ...categories }, on_held: input.on_held ?? current.on_held }, uncategorized);
      if (updated === null) throw new SvcError('NOT_FOUND', { details: { resource: 'mcp_server', id } });
      if (updated === 'exists') throw new SvcError('CONFLICT', { message: `An MCP server named "${input.name ?? ''}" already exists.`, details: { field: 'name' } });
      serverCache.delete(`${orgId}:${id}`);
      await pinning.changed(orgId, id);
      const changed = (['name', 'url', 'transport', 'tool_categories', 'on_held'] as const).filter((field) => JSON.stringify(current[field]) !== JSON.stringify(updated[field]));
      audit(orgId, { action: 'mcp.server.update', outcome: 'success', target: id, details: { changed, name: updated.name, url: updated.url, transport: updated.transport, actor } });
      return view(updated);
    },
    async listServers(orgId: string): Promise<McpServerView[]> {
      return (await store.listServers(orgId)).map(view);
    },
    async getServer(orgId: string, id: string): Promise<McpServerView> {
      return view(await this.proxyServer(orgId, id));
    },
    /** The registration the proxy endpoint serves (per-replica cache, as getServer), without the management view. */
    async proxyServer(orgId: string, id: string): Promise<McpServerRecord> {
      const server = await cachedServer(orgId, id);
      if (server === null) throw new SvcError('NOT_FOUND', { details: { resource: 'mcp_server', id } });
      return server;
    },
    async deleteServer(orgId: string, actor: string, id: string): Promise<void> {
      if (!(await store.deleteServer(orgId, id))) throw new SvcError('NOT_FOUND', { details: { resource: 'mcp_server', id } });
      serverCache.delete(`${orgId}:${id}`);
      await pinning.changed(orgId, id);
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
      await pinning.changed(orgId, serverId);
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
    /**
     * Records activity of a session served by a network MCP sensor (its finding reached the
     * collector): the same mcp_sessions row the in-process proxy keeps, its 30-minute expiry
     * restarted and its request counter raised.
     */
    async recordSensorSession(orgId: string, input: { id: string; server_id: string; mcp_session_id: string | null; role: string }): Promise<void> {
      await store.touchSession(orgId, { ...input, expiresAt: new Date(clock() + ttlMs), requests: 1 });
    },
    /**
     * Stores a definition a network MCP sensor held (a rug pull or a poisoned definition it
     * reported): pending approval here as if this process had held it, unless this very hash is
     * already approved or already pending. The approval reaches the sensor with its next
     * configuration. False when the server is not the org's, or the definition's text does not hash
     * to its pending hash (nothing stored).
     */
    async recordSensorDefinition(orgId: string, input: { server_id: string; kind: DefinitionKind; name: string; pending_hash: string; definition: unknown; reason: string; findings: DefinitionRecord['findings']; category: string | null }): Promise<boolean> {
      if ((await store.getServer(orgId, input.server_id)) === null) return false;
      // The text an admin reviews must be what the pending hash pins: a definition that hashes to
      // another value (a sensor showing one text and pinning another) is not stored.
      if (input.definition !== null && !definitionMatches(input.kind, input.definition, input.pending_hash)) return false;
      const existing = (await store.definitions(orgId, input.server_id)).find((record) => record.kind === input.kind && record.name === input.name);
      if (existing !== undefined && (existing.pending_hash === input.pending_hash || (existing.hash === input.pending_hash && existing.pending_hash === null))) return true;
      await store.saveDefinition(orgId, {
        server_id: input.server_id, kind: input.kind, name: input.name, hash: existing?.hash ?? null, pending_hash: input.pending_hash,
        pending_definition: input.definition, pending_reason: input.reason, findings: input.findings, category: input.category ?? existing?.category ?? null,
      });
      await pinning.changed(orgId, input.server_id);
      return true;
    },
    async session(orgId: string, id: string): Promise<SessionRecord> {
      const record = await store.getSession(orgId, id, clock());
      if (record === null) throw new SvcError('NOT_FOUND', { details: { resource: 'mcp_session', id } });
      return record;
    },
    /** The MCP audit entries of one session, oldest first (docs/mcp.md "Audit entries"). */
    async sessionAudit(orgId: string, sessionId: string): Promise<AuditRecord[]> {
      await flushOrg(orgId);
      const records = await deps.audit.list(orgId, { sessionId, limit: 1_000 });
      return records.filter((record) => record.action.startsWith('mcp.')).reverse();
    },
    handle(request: ProxyRequest): Promise<ProxyResponse> {
      return proxy.handle(request);
    },
    /** Legacy HTTP+SSE clients: opens the event stream (GET /mcp/{id}/sse). */
    openLegacy(server: McpServerRecord, caller: ProxyCaller, headers: ProxyRequest['headers']) {
      return legacy.open(server, caller, headers);
    },
    /** Legacy HTTP+SSE clients: one POST /mcp/{id}/messages?sessionId=…. */
    legacyMessage(serverId: string, sessionId: string, caller: ProxyCaller, body: Buffer | null, requestId: string) {
      return legacy.message(serverId, sessionId, caller, body, requestId);
    },
    /** Upstream sessions with requests awaiting an answer on this replica (bounded; for tests and metrics). */
    pendingSessions(): number {
      return proxy.pendingSessions();
    },
    /** Open stdio processes and legacy SSE upstream connections on this replica. */
    bridgedSessions(): number {
      return proxy.bridgedSessions();
    },
    async flush(): Promise<void> {
      while (auditBuffers.size > 0 || auditDrains.size > 0) await Promise.all([...new Set([...auditBuffers.keys(), ...auditDrains.keys()])].map(flushOrg));
    },
    async close(): Promise<void> {
      await this.flush();
      removeGatherer();
      legacy.close();
      await proxy.close();
    },
  };
}

export type Mcp = ReturnType<typeof createMcp>;

/** Whether a definition's text hashes to `hash` as pinning computes it (tools by their pinned fields, the rest whole). */
function definitionMatches(kind: DefinitionKind, definition: unknown, hash: string): boolean {
  if (definition === null || typeof definition !== 'object' || Array.isArray(definition)) return false;
  const record = definition as Record<string, unknown>;
  return (kind === 'tool' ? definitionHash(record) : sha256Jcs(record)) === hash;
}
