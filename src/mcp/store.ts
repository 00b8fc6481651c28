/**
 * Persistence of the MCP pillar: registered servers, pinned definitions, quarantined results and
 * sessions. Every query runs as the application role inside the org (row-level security), so
 * one org never reads another's rows even through a wrong id.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from '../platform/db/index.ts';
import { isUuid } from '../platform/uuid.ts';
import type { McpFinding } from './inspection.ts';

export interface McpServerRecord {
  readonly id: string;
  readonly org_id: string;
  readonly name: string;
  /** Streamable HTTP or SSE endpoint URL; `stdio:<name>` for a stdio upstream. */
  readonly url: string;
  readonly transport: McpTransport;
  readonly tool_categories: Readonly<Record<string, string>>;
  readonly on_held: 'hide' | 'block';
  readonly created_at: string;
}

export type McpTransport = 'streamable_http' | 'sse' | 'stdio';

export type DefinitionKind = 'tool' | 'prompt' | 'resource' | 'instructions';

export interface DefinitionRecord {
  readonly server_id: string;
  readonly kind: DefinitionKind;
  readonly name: string;
  /** Approved hash (null: never approved, first sight was held). */
  readonly hash: string | null;
  readonly pending_hash: string | null;
  readonly pending_definition: unknown;
  readonly pending_reason: string | null;
  readonly findings: readonly McpFinding[];
  readonly category: string | null;
  readonly first_seen_at: string;
  readonly updated_at: string;
}

export interface QuarantineRecord {
  readonly id: string;
  readonly server_id: string;
  readonly session_id: string | null;
  readonly method: string;
  readonly tool: string | null;
  readonly original: unknown;
  readonly findings: readonly McpFinding[];
  readonly state: 'held' | 'released';
  readonly created_at: string;
  readonly released_at: string | null;
  readonly released_by: string | null;
}

export interface SessionRecord {
  readonly id: string;
  readonly server_id: string | null;
  readonly mcp_session_id: string | null;
  readonly role: string | null;
  readonly state: 'active' | 'expired';
  readonly created_at: string;
  readonly last_heartbeat_at: string;
  readonly expires_at: string;
  readonly request_count: number;
}

const iso = (value: unknown): string => (value instanceof Date ? value.toISOString() : String(value));
const isoOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : iso(value));

function serverRow(row: Record<string, unknown>): McpServerRecord {
  return {
    id: String(row.id),
    org_id: String(row.org_id),
    name: String(row.name),
    url: String(row.url),
    transport: row.transport === 'sse' || row.transport === 'stdio' ? row.transport : 'streamable_http',
    tool_categories: (row.tool_categories ?? {}) as Record<string, string>,
    on_held: row.on_held === 'block' ? 'block' : 'hide',
    created_at: iso(row.created_at),
  };
}

function definitionRow(row: Record<string, unknown>): DefinitionRecord {
  return {
    server_id: String(row.server_id),
    kind: row.kind as DefinitionKind,
    name: String(row.name),
    hash: (row.hash as string | null) ?? null,
    pending_hash: (row.pending_hash as string | null) ?? null,
    pending_definition: row.pending_definition ?? null,
    pending_reason: (row.pending_reason as string | null) ?? null,
    findings: (row.findings ?? []) as McpFinding[],
    category: (row.category as string | null) ?? null,
    first_seen_at: iso(row.first_seen_at),
    updated_at: iso(row.updated_at),
  };
}

function quarantineRow(row: Record<string, unknown>): QuarantineRecord {
  return {
    id: String(row.id),
    server_id: String(row.server_id),
    session_id: (row.session_id as string | null) ?? null,
    method: String(row.method),
    tool: (row.tool as string | null) ?? null,
    original: row.original,
    findings: (row.findings ?? []) as McpFinding[],
    state: row.state === 'released' ? 'released' : 'held',
    created_at: iso(row.created_at),
    released_at: isoOrNull(row.released_at),
    released_by: (row.released_by as string | null) ?? null,
  };
}

function sessionRow(row: Record<string, unknown>, now: number): SessionRecord {
  const expiresAt = iso(row.expires_at);
  const expired = row.state === 'expired' || Date.parse(expiresAt) <= now;
  return {
    id: String(row.id),
    server_id: (row.server_id as string | null) ?? null,
    mcp_session_id: (row.mcp_session_id as string | null) ?? null,
    role: (row.role as string | null) ?? null,
    state: expired ? 'expired' : 'active',
    created_at: iso(row.created_at),
    last_heartbeat_at: iso(row.last_heartbeat_at),
    expires_at: expiresAt,
    request_count: Number(row.request_count ?? 0),
  };
}

/**
 * The name check above runs before the write: two registrations (or renames) to one name at
 * once both pass it, and the unique index refuses the later write (23505). That write's
 * transaction is rolled back whole; it is the same answer as the check's.
 */
function nameTakenMeanwhile(error: unknown): 'exists' {
  const { code, constraint } = (error ?? {}) as { code?: string; constraint?: string };
  if (code === '23505' && constraint === 'mcp_servers_org_id_name_key') return 'exists';
  throw error;
}

export function createStore(db: Database) {
  return {
    async createServer(orgId: string, input: { name: string; url: string; transport: McpTransport; tool_categories: Record<string, string>; on_held: 'hide' | 'block' }): Promise<McpServerRecord | 'exists'> {
      return db.withOrg(orgId, async (tx) => {
        const existing = await tx.query('SELECT 1 FROM mcp_servers WHERE org_id = $1 AND name = $2', [orgId, input.name]);
        if (existing.rowCount > 0) return 'exists' as const;
        const { rows } = await tx.query(
          'INSERT INTO mcp_servers (id, org_id, name, url, transport, tool_categories, on_held) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *',
          [randomUUID(), orgId, input.name, input.url, input.transport, JSON.stringify(input.tool_categories), input.on_held],
        );
        return serverRow(rows[0]!);
      }).catch(nameTakenMeanwhile);
    },
    /**
     * Edits a registration (only the fields given); its pins, quarantine and sessions stay.
     * Tools whose category override was removed lose their stored category (it came from the
     * override): the next listing infers it again. Null when there is no such server.
     */
    async updateServer(orgId: string, id: string, input: { name: string; url: string; transport: McpTransport; tool_categories: Record<string, string>; on_held: 'hide' | 'block' }, uncategorized: readonly string[]): Promise<McpServerRecord | 'exists' | null> {
      if (!isUuid(id)) return null;
      return db.withOrg(orgId, async (tx) => {
        const existing = await tx.query('SELECT 1 FROM mcp_servers WHERE org_id = $1 AND name = $2 AND id <> $3', [orgId, input.name, id]);
        if (existing.rowCount > 0) return 'exists' as const;
        const { rows } = await tx.query(
          'UPDATE mcp_servers SET name = $3, url = $4, transport = $5, tool_categories = $6, on_held = $7 WHERE org_id = $1 AND id = $2 RETURNING *',
          [orgId, id, input.name, input.url, input.transport, JSON.stringify(input.tool_categories), input.on_held],
        );
        if (rows[0] === undefined) return null;
        if (uncategorized.length > 0) {
          await tx.query("UPDATE mcp_definitions SET category = NULL WHERE org_id = $1 AND server_id = $2 AND kind = 'tool' AND name = ANY($3::text[])", [orgId, id, [...uncategorized]]);
        }
        return serverRow(rows[0]);
      }).catch(nameTakenMeanwhile);
    },
    async listServers(orgId: string): Promise<McpServerRecord[]> {
      const { rows } = await db.withOrg(orgId, (tx) => tx.query('SELECT * FROM mcp_servers WHERE org_id = $1 ORDER BY created_at, id', [orgId]));
      return rows.map(serverRow);
    },
    async getServer(orgId: string, id: string): Promise<McpServerRecord | null> {
      if (!isUuid(id)) return null;
      const { rows } = await db.withOrg(orgId, (tx) => tx.query('SELECT * FROM mcp_servers WHERE org_id = $1 AND id = $2', [orgId, id]));
      return rows[0] === undefined ? null : serverRow(rows[0]);
    },
    async deleteServer(orgId: string, id: string): Promise<boolean> {
      if (!isUuid(id)) return false;
      const { rowCount } = await db.withOrg(orgId, (tx) => tx.query('DELETE FROM mcp_servers WHERE org_id = $1 AND id = $2', [orgId, id]));
      return rowCount > 0;
    },

    async definitions(orgId: string, serverId: string): Promise<DefinitionRecord[]> {
      const { rows } = await db.withOrg(orgId, (tx) => tx.query('SELECT * FROM mcp_definitions WHERE org_id = $1 AND server_id = $2 ORDER BY kind, name', [orgId, serverId]));
      return rows.map(definitionRow);
    },
    /** Inserts or updates one definition row (the caller decided hash / pending). */
    async saveDefinition(orgId: string, record: Omit<DefinitionRecord, 'first_seen_at' | 'updated_at'>): Promise<void> {
      await db.withOrg(orgId, (tx) =>
        tx.query(
          `INSERT INTO mcp_definitions (org_id, server_id, kind, name, hash, pending_hash, pending_definition, pending_reason, findings, category)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
           ON CONFLICT (server_id, kind, name) DO UPDATE SET hash = EXCLUDED.hash, pending_hash = EXCLUDED.pending_hash,
             pending_definition = EXCLUDED.pending_definition, pending_reason = EXCLUDED.pending_reason,
             findings = EXCLUDED.findings, category = EXCLUDED.category, updated_at = now()`,
          [orgId, record.server_id, record.kind, record.name, record.hash, record.pending_hash, record.pending_definition === null ? null : JSON.stringify(record.pending_definition), record.pending_reason, JSON.stringify(record.findings), record.category],
        ),
      );
    },
    /** Approves the pending hash of a held definition; null when nothing is pending (or it changed meanwhile). */
    async approveDefinition(orgId: string, serverId: string, kind: DefinitionKind, name: string, hash: string): Promise<DefinitionRecord | null> {
      const { rows } = await db.withOrg(orgId, (tx) =>
        tx.query(
          `UPDATE mcp_definitions SET hash = pending_hash, pending_hash = NULL, pending_definition = NULL, pending_reason = NULL, updated_at = now()
           WHERE org_id = $1 AND server_id = $2 AND kind = $3 AND name = $4 AND pending_hash = $5 RETURNING *`,
          [orgId, serverId, kind, name, hash],
        ),
      );
      return rows[0] === undefined ? null : definitionRow(rows[0]);
    },
    /** Names of this kind that other servers of the org also expose. */
    async collisions(orgId: string): Promise<{ kind: DefinitionKind; name: string; servers: string[] }[]> {
      const { rows } = await db.withOrg(orgId, (tx) =>
        tx.query<{ kind: DefinitionKind; name: string; servers: string[] }>(
          `SELECT kind, name, array_agg(server_id::text ORDER BY server_id) AS servers FROM mcp_definitions
           WHERE org_id = $1 AND kind IN ('tool', 'prompt', 'resource') GROUP BY kind, name HAVING count(*) > 1 ORDER BY kind, name`,
          [orgId],
        ),
      );
      return rows;
    },

    async quarantine(orgId: string, input: { server_id: string; session_id: string | null; method: string; tool: string | null; original: unknown; findings: readonly McpFinding[] }): Promise<string> {
      const id = randomUUID();
      await db.withOrg(orgId, (tx) =>
        tx.query('INSERT INTO mcp_quarantine (id, org_id, server_id, session_id, method, tool, original, findings) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)', [
          id, orgId, input.server_id, input.session_id, input.method, input.tool, JSON.stringify(input.original), JSON.stringify(input.findings),
        ]),
      );
      return id;
    },
    async listQuarantine(orgId: string, state?: 'held' | 'released'): Promise<QuarantineRecord[]> {
      const { rows } = await db.withOrg(orgId, (tx) =>
        tx.query(`SELECT * FROM mcp_quarantine WHERE org_id = $1 ${state === undefined ? '' : 'AND state = $2'} ORDER BY created_at DESC LIMIT 500`, state === undefined ? [orgId] : [orgId, state]),
      );
      return rows.map(quarantineRow);
    },
    async getQuarantine(orgId: string, id: string): Promise<QuarantineRecord | null> {
      if (!isUuid(id)) return null;
      const { rows } = await db.withOrg(orgId, (tx) => tx.query('SELECT * FROM mcp_quarantine WHERE org_id = $1 AND id = $2', [orgId, id]));
      return rows[0] === undefined ? null : quarantineRow(rows[0]);
    },
    async releaseQuarantine(orgId: string, id: string, actor: string): Promise<QuarantineRecord | null> {
      if (!isUuid(id)) return null;
      const { rows } = await db.withOrg(orgId, (tx) =>
        tx.query("UPDATE mcp_quarantine SET state = 'released', released_at = now(), released_by = $3 WHERE org_id = $1 AND id = $2 RETURNING *", [orgId, id, actor]),
      );
      return rows[0] === undefined ? null : quarantineRow(rows[0]);
    },

    async getSession(orgId: string, id: string, now = Date.now()): Promise<SessionRecord | null> {
      const { rows } = await db.withOrg(orgId, (tx) => tx.query('SELECT * FROM mcp_sessions WHERE org_id = $1 AND id = $2', [orgId, id]));
      return rows[0] === undefined ? null : sessionRow(rows[0], now);
    },
    /** Creates the session or records activity; `requests` is added to its counter. */
    async touchSession(orgId: string, input: { id: string; server_id: string; mcp_session_id: string | null; role: string; expiresAt: Date; requests: number }): Promise<void> {
      await db.withOrg(orgId, (tx) =>
        tx.query(
          `INSERT INTO mcp_sessions (org_id, id, role, server_id, mcp_session_id, expires_at, request_count, state)
           VALUES ($1, $2, $3, $4, $5, $6, $7, 'active')
           ON CONFLICT (org_id, id) DO UPDATE SET request_count = mcp_sessions.request_count + EXCLUDED.request_count,
             mcp_session_id = COALESCE(EXCLUDED.mcp_session_id, mcp_sessions.mcp_session_id), role = EXCLUDED.role,
             expires_at = EXCLUDED.expires_at`,
          [orgId, input.id, input.role, input.server_id, input.mcp_session_id, input.expiresAt.toISOString(), input.requests],
        ),
      );
    },
    /** Restarts the expiry clock of an active session; 'expired' or null (unknown) otherwise. */
    async heartbeat(orgId: string, id: string, ttlMs: number, now = Date.now()): Promise<SessionRecord | 'expired' | null> {
      return db.withOrg(orgId, async (tx) => {
        const { rows } = await tx.query('SELECT * FROM mcp_sessions WHERE org_id = $1 AND id = $2 FOR UPDATE', [orgId, id]);
        if (rows[0] === undefined) return null;
        if (sessionRow(rows[0], now).state === 'expired') {
          await tx.query("UPDATE mcp_sessions SET state = 'expired' WHERE org_id = $1 AND id = $2", [orgId, id]);
          return 'expired' as const;
        }
        const updated = await tx.query(
          `UPDATE mcp_sessions SET last_heartbeat_at = $3, expires_at = $4 WHERE org_id = $1 AND id = $2 RETURNING *`,
          [orgId, id, new Date(now).toISOString(), new Date(now + ttlMs).toISOString()],
        );
        return sessionRow(updated.rows[0]!, now);
      });
    },
    async expireSession(orgId: string, id: string): Promise<void> {
      await db.withOrg(orgId, (tx) => tx.query("UPDATE mcp_sessions SET state = 'expired' WHERE org_id = $1 AND id = $2", [orgId, id]));
    },
  };
}

export type McpStore = ReturnType<typeof createStore>;

