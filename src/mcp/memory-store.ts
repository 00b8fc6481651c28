/**
 * The MCP core's narrow stores held in memory, for a process with no database (the MCP sensor,
 * `svc sensor --class mcp`): pinned definitions per org and server, quarantined answers (bounded,
 * least recently held dropped first) and name collisions, with the same semantics as the
 * database store's methods of the same names (store.ts). Definitions come from the collector's
 * configuration (`merge`) and from what this process pins itself.
 */
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { McpFinding } from './inspection.ts';
import type { DefinitionKind, DefinitionRecord, McpStore, QuarantineRecord } from './store.ts';
import { entryBound } from '../platform/lru.ts';

/** Quarantined answers kept in memory at most (their content never leaves the process). */
const MAX_QUARANTINED = 1_000;

const keyOf = (kind: DefinitionKind, name: string) => `${kind}\u0000${name}`;

export function createMemoryStore() {
  /** org:server → kind\0name → record. */
  const servers = new Map<string, Map<string, DefinitionRecord>>();
  const quarantined = new LRUCache<string, QuarantineRecord & { readonly org_id: string }>(entryBound(MAX_QUARANTINED));
  const entriesOf = (orgId: string, serverId: string): Map<string, DefinitionRecord> => {
    let entries = servers.get(`${orgId}:${serverId}`);
    if (entries === undefined) servers.set(`${orgId}:${serverId}`, (entries = new Map()));
    return entries;
  };

  const store = {
    async definitions(orgId: string, serverId: string): Promise<DefinitionRecord[]> {
      return [...(servers.get(`${orgId}:${serverId}`)?.values() ?? [])].sort((left, right) => left.kind.localeCompare(right.kind) || left.name.localeCompare(right.name));
    },
    async saveDefinition(orgId: string, record: Omit<DefinitionRecord, 'first_seen_at' | 'updated_at'>): Promise<void> {
      const entries = entriesOf(orgId, record.server_id);
      const now = new Date().toISOString();
      entries.set(keyOf(record.kind, record.name), { ...record, first_seen_at: entries.get(keyOf(record.kind, record.name))?.first_seen_at ?? now, updated_at: now });
    },
    async quarantine(orgId: string, input: { server_id: string; session_id: string | null; method: string; tool: string | null; original: unknown; findings: readonly McpFinding[] }): Promise<string> {
      const id = randomUUID();
      quarantined.set(id, { id, org_id: orgId, ...input, state: 'held', created_at: new Date().toISOString(), released_at: null, released_by: null });
      return id;
    },
    async collisions(orgId: string): Promise<{ kind: DefinitionKind; name: string; servers: string[] }[]> {
      const byName = new Map<string, { kind: DefinitionKind; name: string; servers: string[] }>();
      for (const [key, entries] of servers) {
        if (!key.startsWith(`${orgId}:`)) continue;
        const serverId = key.slice(orgId.length + 1);
        for (const record of entries.values()) {
          if (record.kind === 'instructions') continue;
          const entry = byName.get(keyOf(record.kind, record.name)) ?? { kind: record.kind, name: record.name, servers: [] };
          entry.servers.push(serverId);
          byName.set(keyOf(record.kind, record.name), entry);
        }
      }
      return [...byName.values()].filter((entry) => entry.servers.length > 1).map((entry) => ({ ...entry, servers: entry.servers.sort() }));
    },
  } satisfies Pick<McpStore, 'definitions' | 'saveDefinition' | 'quarantine' | 'collisions'>;

  return {
    ...store,
    /** One definition as held now (null when never seen). */
    definition(orgId: string, serverId: string, kind: DefinitionKind, name: string): DefinitionRecord | null {
      return servers.get(`${orgId}:${serverId}`)?.get(keyOf(kind, name)) ?? null;
    },
    /**
     * Takes the collector's definitions of a server. Its record wins, except over a hold made here
     * that it has not heard of yet (same approved hash, nothing pending there): that hold stays
     * until the collector stores it or an approval changes the approved hash.
     */
    merge(orgId: string, serverId: string, records: readonly DefinitionRecord[]): void {
      const entries = entriesOf(orgId, serverId);
      for (const record of records) {
        const local = entries.get(keyOf(record.kind, record.name));
        if (local !== undefined && local.pending_hash !== null && record.pending_hash === null && record.hash === local.hash) continue;
        entries.set(keyOf(record.kind, record.name), record);
      }
    },
    /** Forgets a server no longer in the configuration. */
    dropServer(orgId: string, serverId: string): void {
      servers.delete(`${orgId}:${serverId}`);
    },
    /** A quarantined answer held here (for the sensor's operator; null when gone). */
    quarantined(id: string): QuarantineRecord | null {
      return quarantined.get(id) ?? null;
    },
  };
}

export type MemoryStore = ReturnType<typeof createMemoryStore>;
