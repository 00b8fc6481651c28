/**
 * OAuth 2.0 for the MCP endpoints, as the MCP authorization spec (2025-06-18 and later) asks of a
 * protected resource: each /mcp/{id} publishes Protected Resource Metadata (RFC 9728) naming the
 * org's authorization server, answers 401 with `WWW-Authenticate: Bearer resource_metadata=…`,
 * and accepts that server's JWT access tokens beside svc keys.
 *
 * Posture: a token is accepted only if its signature verifies against the authorization server's
 * published keys (JWKS, fetched over an SSRF-checked URL and cached by jose), its `iss` is the
 * configured issuer, its `aud` the configured audience or else this endpoint's own URL (RFC 8707:
 * a token minted for another resource is refused), and it is within its validity (30 s of clock
 * skew). Only asymmetric algorithms are accepted. The holder gets the org's configured MCP role,
 * never more than admin. Token contents are never logged.
 */
import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { LRUCache } from 'lru-cache';
import type { AuditLog } from '../audit/index.ts';
import { retryingLockConflicts } from '../platform/db/failures.ts';
import type { Database } from '../platform/db/index.ts';
import { SvcError } from '../platform/errors.ts';
import { entryBound } from '../platform/lru.ts';
import { isUuid } from '../platform/uuid.ts';

export type McpOAuthRole = 'viewer' | 'operator' | 'admin';

export interface McpOAuthSettings {
  issuer: string;
  jwks_uri: string;
  audience: string | null;
  role: McpOAuthRole;
  scopes_supported: string[];
  updated_at: string;
}

export interface McpOAuthInput {
  issuer: string;
  jwks_uri?: string;
  audience?: string | null;
  role?: McpOAuthRole;
  scopes_supported?: string[];
}

export interface McpOAuthDeps {
  db: Database;
  /** Changes to the settings go to the org's audit chain. */
  audit: Pick<AuditLog, 'append'>;
  /** SSRF check of a URL the org supplied (services.checkTarget), at save and at use. */
  checkTarget: (url: string, field: string) => Promise<unknown>;
}

export interface McpOAuth {
  get(orgId: string): Promise<McpOAuthSettings | null>;
  /** Saves the org's authorization server; without jwks_uri it is discovered from the issuer's metadata. */
  set(orgId: string, actor: string, input: McpOAuthInput): Promise<McpOAuthSettings>;
  remove(orgId: string, actor: string): Promise<boolean>;
  /** The settings that govern one MCP server's endpoint, by server id (any org), or null. */
  forServer(serverId: string): Promise<(McpOAuthSettings & { orgId: string }) | null>;
  /** A verified access token's holder, or null when it does not verify (any reason). */
  verify(serverId: string, token: string, resource: string): Promise<{ orgId: string; subject: string; role: McpOAuthRole } | null>;
}

const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

interface Row {
  org_id: string;
  issuer: string;
  jwks_uri: string;
  audience: string | null;
  role: McpOAuthRole;
  scopes_supported: string[];
  updated_at: Date | string;
}

const view = (row: Row): McpOAuthSettings => ({
  issuer: row.issuer,
  jwks_uri: row.jwks_uri,
  audience: row.audience,
  role: row.role,
  scopes_supported: row.scopes_supported,
  updated_at: new Date(row.updated_at).toISOString(),
});

export function createMcpOAuth(deps: McpOAuthDeps): McpOAuth {
  const { db } = deps;
  const keySets = new LRUCache<string, JWTVerifyGetKey>(entryBound(1_000));
  // A JWKS URL is re-checked against SSRF at use, at most once a minute per URL.
  const checked = new LRUCache<string, true>({ ...entryBound(1_000), ttl: 60_000 });

  const discover = async (issuer: string): Promise<string> => {
    const base = issuer.replace(/\/+$/, '');
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const url = `${base}${path}`;
      await deps.checkTarget(url, 'issuer');
      let metadata: { issuer?: unknown; jwks_uri?: unknown };
      try {
        const response = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(5_000), headers: { accept: 'application/json' } });
        if (!response.ok) continue;
        metadata = (await response.json()) as typeof metadata;
      } catch {
        continue;
      }
      if (metadata.issuer !== issuer) throw new SvcError('VALIDATION_FAILED', { message: "The authorization server's metadata names another issuer.", details: { field: 'issuer', reason: 'issuer_mismatch' } });
      if (typeof metadata.jwks_uri !== 'string') break;
      return metadata.jwks_uri;
    }
    throw new SvcError('VALIDATION_FAILED', { message: 'No jwks_uri could be discovered from the issuer; give jwks_uri.', details: { field: 'jwks_uri', reason: 'discovery_failed' } });
  };

  const forServer = async (serverId: string) => {
    if (!isUuid(serverId)) return null;
    const result = await db.query<Row>('SELECT o.* FROM mcp_servers s JOIN mcp_oauth o ON o.org_id = s.org_id WHERE s.id = $1', [serverId]);
    const row = result.rows[0];
    return row === undefined ? null : { ...view(row), orgId: row.org_id };
  };

  return {
    async get(orgId) {
      const result = await db.withOrg(orgId, (tx) => tx.query<Row>('SELECT * FROM mcp_oauth WHERE org_id = $1', [orgId]));
      const row = result.rows[0];
      return row === undefined ? null : view(row);
    },
    async set(orgId, actor, input) {
      await deps.checkTarget(input.issuer, 'issuer');
      const jwksUri = input.jwks_uri ?? (await discover(input.issuer));
      await deps.checkTarget(jwksUri, 'jwks_uri');
      // The settings and their audit entry are one transaction (stored together or not at all),
      // tried again whole on a lost lock conflict.
      return retryingLockConflicts(() =>
        db.withOrg(orgId, async (tx) => {
          const result = await tx.query<Row>(
            `INSERT INTO mcp_oauth (org_id, issuer, jwks_uri, audience, role, scopes_supported) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (org_id) DO UPDATE SET issuer = $2, jwks_uri = $3, audience = $4, role = $5, scopes_supported = $6, updated_at = now() RETURNING *`,
            [orgId, input.issuer, jwksUri, input.audience ?? null, input.role ?? 'viewer', JSON.stringify(input.scopes_supported ?? [])],
          );
          const saved = view(result.rows[0]!);
          await deps.audit.append(orgId, { actor, action: 'mcp.authorization.set', target: saved.issuer, outcome: 'success', details: { issuer: saved.issuer, jwks_uri: saved.jwks_uri, audience: saved.audience, role: saved.role } }, { tx });
          return saved;
        }),
      );
    },
    async remove(orgId, actor) {
      return retryingLockConflicts(() =>
        db.withOrg(orgId, async (tx) => {
          const result = await tx.query('DELETE FROM mcp_oauth WHERE org_id = $1 RETURNING org_id', [orgId]);
          if (result.rows.length === 0) return false;
          await deps.audit.append(orgId, { actor, action: 'mcp.authorization.delete', target: orgId, outcome: 'success', details: {} }, { tx });
          return true;
        }),
      );
    },
    forServer,
    async verify(serverId, token, resource) {
      const settings = await forServer(serverId);
      if (settings === null) return null;
      try {
        if (!checked.has(settings.jwks_uri)) {
          await deps.checkTarget(settings.jwks_uri, 'jwks_uri');
          checked.set(settings.jwks_uri, true);
        }
        let keys = keySets.get(settings.jwks_uri);
        if (keys === undefined) {
          keys = createRemoteJWKSet(new URL(settings.jwks_uri), { timeoutDuration: 5_000, cooldownDuration: 30_000 });
          keySets.set(settings.jwks_uri, keys);
        }
        const { payload } = await jwtVerify(token, keys, { issuer: settings.issuer, audience: settings.audience ?? resource, clockTolerance: 30, algorithms: ALGORITHMS });
        const subject = typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub.slice(0, 200) : typeof payload.client_id === 'string' ? payload.client_id.slice(0, 200) : 'unknown';
        return { orgId: settings.orgId, subject, role: settings.role };
      } catch {
        return null;
      }
    },
  };
}

/** Where RFC 9728 puts a resource's metadata: the well-known prefix inserted before its path. */
export function protectedResourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  return `${url.origin}/.well-known/oauth-protected-resource${url.pathname}`;
}
