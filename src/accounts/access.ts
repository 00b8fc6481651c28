/**
 * Who may do what: key scopes, user roles, and how a role maps onto the scopes the routes
 * declare (docs/accounts.md, "Roles and permissions").
 *
 * Every route under /api declares the scope it needs (read < write < admin). A dashboard user's
 * role grants one scope — viewer → read, operator → write, admin and super_admin → admin — so one
 * check (build-app's onRequest) enforces the table for keys and users alike. Above the scopes,
 * a few actions are for super_admin only (`requireRole`): granting, changing or removing the
 * super_admin role. API keys never act as super_admin here (MCP_SUPER_ADMIN_KEYS is an MCP
 * tool-authorization setting only).
 */
import { SvcError } from '../platform/errors.ts';
import type { Plan } from './plans.ts';

export const SCOPES = ['read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];
export const KEY_CLASSES = ['live', 'test', 'rstr'] as const;
export type KeyClass = (typeof KEY_CLASSES)[number];
export const ROLES = ['viewer', 'operator', 'admin', 'super_admin'] as const;
export type Role = (typeof ROLES)[number];

const SCOPE_RANK: Record<Scope, number> = { read: 1, write: 2, admin: 3 };
const ROLE_RANK: Record<Role, number> = { viewer: 1, operator: 2, admin: 3, super_admin: 4 };
const ROLE_SCOPE: Record<Role, Scope> = { viewer: 'read', operator: 'write', admin: 'admin', super_admin: 'admin' };

/** Who is calling: attached to each authenticated request. */
export interface AuthContext {
  kind: 'api_key' | 'user';
  orgId: string;
  orgTag: string;
  plan: Plan;
  scope: Scope;
  keyClass: KeyClass;
  keyId: string | null;
  userId: string | null;
  role: Role | null;
  /** The dashboard session behind a user's credential (absent for keys and other tokens). */
  sessionId?: string;
}

export function scopeAllows(held: Scope, needed: Scope): boolean {
  return SCOPE_RANK[held] >= SCOPE_RANK[needed];
}

/** The scope a role holds. */
export function roleScope(role: Role): Scope {
  return ROLE_SCOPE[role];
}

/** True when `held` is `needed` or above (viewer < operator < admin < super_admin). */
export function roleAllows(held: Role, needed: Role): boolean {
  return ROLE_RANK[held] >= ROLE_RANK[needed];
}

/** Roles that count as administrators (the last of them cannot be removed or demoted). */
export const ADMIN_ROLES: readonly Role[] = ['admin', 'super_admin'];

/**
 * Refuses (403 ROLE_INSUFFICIENT) a caller who is not a user of at least `needed`. For the
 * actions above the scopes: only a super_admin user may grant, change or remove super_admin.
 */
export function requireRole(caller: AuthContext, needed: Role, action: string): void {
  if (caller.kind === 'user' && caller.role !== null && roleAllows(caller.role, needed)) return;
  throw new SvcError('ROLE_INSUFFICIENT', { details: { required_role: needed, role: caller.role, action } });
}
