/**
 * What an MCP sensor (`svc sensor --class mcp`) needs of its org to serve /mcp/{id} without a
 * database (docs/sensors.md, "MCP sensor"): the org's registered MCP servers that a network
 * process can reach (Streamable HTTP and legacy SSE; stdio commands stay with svc serve) with
 * their upstream URLs, tool categories and held-definition policy; their pinned definitions with
 * the approvals made here; the SHA-256 hashes of the org's unrevoked API keys with the MCP role
 * each gives (never a key); the org's detection thresholds; and the operator's private-target
 * setting. `version` is a digest of all of it (RFC 8785 canonical JSON), so a sensor pulls the
 * context again only when it changed: heartbeats carry the version only.
 *
 * Built for mcp sensors only, and only of the sensor's own org.
 */
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Thresholds } from '../../detection/index.ts';
import { roleOf, sha256Jcs, type DefinitionRecord, type Mcp, type McpRole } from '../../mcp/index.ts';

export interface McpContextServer {
  readonly id: string;
  readonly name: string;
  readonly url: string;
  readonly transport: 'streamable_http' | 'sse';
  readonly tool_categories: Readonly<Record<string, string>>;
  readonly on_held: 'hide' | 'block';
  readonly definitions: readonly DefinitionRecord[];
}

export interface McpContextKey {
  readonly key_id: string;
  /** Hex SHA-256 of the key, as api_keys stores it. */
  readonly key_hash: string;
  readonly role: McpRole;
}

export interface McpSensorContext {
  readonly version: string;
  readonly org_id: string;
  /** FEATURE_MCP_SECURITY of the collector: false, and the sensor refuses MCP traffic (FEATURE_DISABLED). */
  readonly enabled: boolean;
  /** ALLOW_PRIVATE_TARGETS of the collector: upstreams on private addresses may be reached. */
  readonly allow_private_targets: boolean;
  readonly thresholds: Thresholds;
  readonly servers: readonly McpContextServer[];
  readonly keys: readonly McpContextKey[];
}

export interface McpContextDeps {
  readonly mcp: Pick<Mcp, 'listServers' | 'definitions'>;
  /** The org's unrevoked keys as hashes and scopes (accounts.activeKeyHashes). */
  readonly keys: (orgId: string) => Promise<ReadonlyArray<{ id: string; key_hash: string; scope: 'read' | 'write' | 'admin' }>>;
  readonly thresholds: (orgId: string) => Promise<Thresholds>;
  /** MCP_SUPER_ADMIN_KEYS. */
  readonly superAdminKeys: readonly string[];
  readonly allowPrivateTargets: boolean;
  readonly enabled: boolean;
}

/** The context builder the collector calls for an mcp sensor's org. */
export function createMcpContextSource(deps: McpContextDeps): (orgId: string) => Promise<McpSensorContext> {
  const superAdmins = new Set(deps.superAdminKeys);
  return async (orgId) => {
    const [registered, keys, thresholds] = await Promise.all([deps.mcp.listServers(orgId), deps.keys(orgId), deps.thresholds(orgId)]);
    const servers: McpContextServer[] = [];
    for (const server of registered) {
      if (server.transport === 'stdio') continue;
      servers.push({
        id: server.id,
        name: server.name,
        url: server.url,
        transport: server.transport,
        tool_categories: server.tool_categories,
        on_held: server.on_held,
        definitions: await deps.mcp.definitions(orgId, server.id),
      });
    }
    const content = {
      org_id: orgId,
      enabled: deps.enabled,
      allow_private_targets: deps.allowPrivateTargets,
      thresholds: { log: thresholds.log, alert: thresholds.alert, challenge: thresholds.challenge, block: thresholds.block },
      servers,
      keys: keys.map((key) => ({ key_id: key.id, key_hash: key.key_hash, role: roleOf({ kind: 'api_key', scope: key.scope, role: null, keyId: key.id }, superAdmins) })),
    };
    return { version: sha256Jcs(content), ...content };
  };
}

/**
 * A definition an MCP sensor held (a rug pull, or a poisoned first sight), as its finding's
 * `details.definition` carries it, so that the collector stores it pending approval exactly as a
 * hold made by svc serve (mcp_definitions). `definition` is what the upstream now serves (null when
 * the sensor no longer had it).
 */
const HeldDefinitionSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('tool'), Type.Literal('instructions')]),
    name: Type.String({ maxLength: 200 }),
    pending_hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    reason: Type.String({ minLength: 1, maxLength: 64 }),
    category: Type.Union([Type.String({ maxLength: 64 }), Type.Null()]),
    findings: Type.Array(Type.Object({ id: Type.String({ maxLength: 128 }), name: Type.String({ maxLength: 256 }), category: Type.String({ maxLength: 64 }), confidence: Type.Number({ minimum: 0, maximum: 1 }) }), { maxItems: 32 }),
    definition: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
  },
  { additionalProperties: false },
);
export type SensorHeldDefinition = Omit<Static<typeof HeldDefinitionSchema>, 'definition'> & { readonly definition: unknown };
const checkHeld = TypeCompiler.Compile(HeldDefinitionSchema);

/** The held definition a finding's details carry, checked; null when there is none or it is malformed. */
export function heldDefinitionOf(details: Readonly<Record<string, unknown>> | undefined): SensorHeldDefinition | null {
  const held = details?.definition;
  if (!checkHeld.Check(held)) return null;
  // Instructions have no name; a tool always has one.
  if ((held.kind === 'tool') === (held.name === '')) return null;
  return held;
}
