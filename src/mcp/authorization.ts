/**
 * Tool authorization by role, exactly the spec's table (Tool authorization by role), and the
 * caller's role: a dashboard user's role as stored; an API key's role from its scope (read →
 * viewer, write → operator, admin → admin); super_admin for users with that role and for the key
 * ids listed in MCP_SUPER_ADMIN_KEYS. Tools of no category (pure computation) are callable by
 * every role.
 */
import type { ToolCategory } from './definitions.ts';

export const MCP_ROLES = ['viewer', 'operator', 'admin', 'super_admin'] as const;
export type McpRole = (typeof MCP_ROLES)[number];

const ALLOWED: Readonly<Record<Exclude<ToolCategory, 'none'>, readonly McpRole[]>> = {
  read_files: ['viewer', 'operator', 'admin', 'super_admin'],
  write_files: ['operator', 'admin', 'super_admin'],
  execute_code: ['admin', 'super_admin'],
  network_access: ['super_admin'],
  system_calls: ['super_admin'],
};

export function roleAllows(role: McpRole, category: ToolCategory): boolean {
  return category === 'none' || ALLOWED[category].includes(role);
}

export interface CallerIdentity {
  readonly kind: 'api_key' | 'user';
  readonly scope: 'read' | 'write' | 'admin';
  readonly role: McpRole | null;
  readonly keyId: string | null;
}

export function roleOf(caller: CallerIdentity, superAdminKeys: ReadonlySet<string>): McpRole {
  if (caller.kind === 'user' && caller.role !== null) return caller.role;
  if (caller.keyId !== null && superAdminKeys.has(caller.keyId)) return 'super_admin';
  return caller.scope === 'admin' ? 'admin' : caller.scope === 'write' ? 'operator' : 'viewer';
}
