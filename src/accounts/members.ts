/**
 * An org's members: invitations by e-mail, acceptance, role changes, removal and password
 * changes (docs/accounts.md).
 *
 * An invitation link carries an HS256 JWT (issuer svc, audience svc-invitation, key derived from
 * SECRET_KEY) naming the invitation row; the row makes it single-use (accepted_at, set by the one
 * UPDATE that wins), revocable and bounded in time (expires_at, INVITATION_TTL_HOURS). The row
 * keeps only the token's SHA-256. The org always keeps an administrator: removing or demoting the
 * last admin or super_admin is 409 LAST_ADMIN, decided under a lock on the org's admin rows so
 * two concurrent changes cannot both pass. Granting, changing or removing super_admin needs a
 * super_admin user (403 ROLE_INSUFFICIENT).
 */
import { randomUUID } from 'node:crypto';
import { hash as argonHash, verify as argonVerify } from '@node-rs/argon2';
import { SignJWT, jwtVerify } from 'jose';
import type { ResolvedConfig } from '../platform/config.ts';
import { safeEqual, sha256Hex } from '../platform/crypto.ts';
import { retryingLockConflicts } from '../platform/db/failures.ts';
import type { Database, Queryable } from '../platform/db/index.ts';
import { noWithin, type WithinWrite } from '../platform/db/within.ts';
import { SvcError } from '../platform/errors.ts';
import { deriveSecret } from '../platform/secrets.ts';
import { ADMIN_ROLES, requireRole, roleAllows, type AuthContext, type Role } from './access.ts';
import { createMailer, type Mailer } from './mailer.ts';
import type { Sessions } from './sessions.ts';

export interface UserRecord {
  user_id: string;
  email: string;
  role: Role;
  created_at: string;
  last_login_at: string | null;
}

export const INVITATION_STATUSES = ['pending', 'accepted', 'revoked', 'expired'] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

export interface InvitationRecord {
  invitation_id: string;
  email: string;
  role: Role;
  status: InvitationStatus;
  invited_by: string;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
}

export type Members = ReturnType<typeof createMembers>;

/** An accepted invitation: the user it created. */
export interface AcceptedInvitation {
  userId: string;
  orgId: string;
  role: Role;
  email: string;
  invitationId: string;
}

function userRow(row: Record<string, unknown>): UserRecord {
  return {
    user_id: row.id as string,
    email: row.email as string,
    role: row.role as Role,
    created_at: (row.created_at as Date).toISOString(),
    last_login_at: (row.last_login_at as Date | null)?.toISOString() ?? null,
  };
}

function invitationRow(row: Record<string, unknown>): InvitationRecord {
  const expiresAt = row.expires_at as Date;
  const status: InvitationStatus =
    row.accepted_at !== null ? 'accepted' : row.revoked_at !== null ? 'revoked' : expiresAt.getTime() <= Date.now() ? 'expired' : 'pending';
  return {
    invitation_id: row.id as string,
    email: row.email as string,
    role: row.role as Role,
    status,
    invited_by: row.invited_by as string,
    created_at: (row.created_at as Date).toISOString(),
    expires_at: expiresAt.toISOString(),
    accepted_at: (row.accepted_at as Date | null)?.toISOString() ?? null,
  };
}

export function createMembers(deps: { db: Database; config: ResolvedConfig; sessions: Sessions; mailer?: Mailer }) {
  const { db, config, sessions } = deps;
  const mailer = deps.mailer ?? createMailer(config);
  const invitationKey = new TextEncoder().encode(deriveSecret(config.secretKey, 'svc/invitation-jwt'));
  const ttlMs = config.invitationTtlHours * 3_600_000;

  /** Locks the org's administrators and the target user; NOT_FOUND when the user is not in the org. */
  async function lockTarget(tx: Queryable, userId: string): Promise<{ target: Record<string, unknown>; admins: number }> {
    const admins = await tx.query(`SELECT id FROM users WHERE role IN ('admin', 'super_admin') ORDER BY id FOR UPDATE`);
    const target = await tx.query('SELECT * FROM users WHERE id = $1 FOR UPDATE', [userId]);
    if (target.rows[0] === undefined) throw new SvcError('NOT_FOUND', { details: { resource: 'user' } });
    return { target: target.rows[0], admins: admins.rows.length };
  }

  /**
   * Whether whoever made an invitation could still make it: a user still in the org with a role
   * that may grant the invited one (admin; super_admin for super_admin), or an API key not revoked
   * and still of admin scope (keys never grant super_admin). A removed or demoted admin's pending
   * invitations, one to an address of their own among them, would otherwise bring them back.
   */
  async function inviterMayStillGrant(tx: Queryable, orgId: string, invitedBy: string, role: Role): Promise<boolean> {
    const needed: Role = role === 'super_admin' ? 'super_admin' : 'admin';
    const separator = invitedBy.indexOf(':');
    const kind = invitedBy.slice(0, separator);
    const id = invitedBy.slice(separator + 1);
    if (!/^[0-9a-f-]{36}$/i.test(id)) return false;
    if (kind === 'user') {
      const found = await tx.query('SELECT role FROM users WHERE id = $1 AND org_id = $2', [id, orgId]);
      const held = found.rows[0]?.role as Role | undefined;
      return held !== undefined && roleAllows(held, needed);
    }
    if (kind === 'api_key') {
      if (needed === 'super_admin') return false;
      const found = await tx.query('SELECT scope FROM api_keys WHERE id = $1 AND org_id = $2 AND revoked_at IS NULL', [id, orgId]);
      return found.rows[0]?.scope === 'admin';
    }
    return false;
  }

  /** The host's operator (the CLI) may grant super_admin: that is how the first one is made. */
  function superAdminGuard(caller: AuthContext | 'operator', roles: Array<Role | undefined>, action: string): void {
    if (caller !== 'operator' && roles.includes('super_admin')) requireRole(caller, 'super_admin', action);
  }

  return {
    /** The org's users, oldest first. */
    async list(orgId: string): Promise<UserRecord[]> {
      const result = await db.withOrg(orgId, (tx) => tx.query('SELECT id, email, role, created_at, last_login_at FROM users ORDER BY created_at, id'));
      return result.rows.map(userRow);
    },

    async findByEmail(orgId: string, email: string): Promise<UserRecord | null> {
      const result = await db.withOrg(orgId, (tx) => tx.query('SELECT id, email, role, created_at, last_login_at FROM users WHERE lower(email) = $1', [email.trim().toLowerCase()]));
      return result.rows[0] ? userRow(result.rows[0]) : null;
    },

    async get(orgId: string, userId: string): Promise<UserRecord | null> {
      const result = await db.withOrg(orgId, (tx) => tx.query('SELECT id, email, role, created_at, last_login_at FROM users WHERE id = $1', [userId]));
      return result.rows[0] ? userRow(result.rows[0]) : null;
    },

    /**
     * Invites an e-mail address with a role. Sent by SMTP when configured (the link is then never
     * returned); otherwise the link is returned once, for the admin to hand over. An earlier
     * pending invitation of the same address in the org is revoked. A failed delivery revokes the
     * new invitation and answers 502 EMAIL_DELIVERY_FAILED. `within` runs in the invitation's
     * transaction (its audit entry, with how it is delivered), `undelivered` in the revocation's
     * after a failed delivery. Each transaction is retried alone on a lost lock conflict: callers
     * must not retry the whole, which would send the e-mail again.
     */
    async invite(
      caller: AuthContext,
      input: { email: string; role: Role; orgName: string },
      within: WithinWrite<{ invitation: InvitationRecord; delivery: 'not_configured' | 'sent' }> = noWithin,
      undelivered: WithinWrite<InvitationRecord> = noWithin,
    ) {
      superAdminGuard(caller, [input.role], 'invite_super_admin');
      const email = input.email.trim().toLowerCase();
      const taken = await db.query('SELECT 1 FROM users WHERE lower(email) = $1', [email]);
      if (taken.rows.length > 0) throw new SvcError('EMAIL_TAKEN');
      const id = randomUUID();
      const expiresAt = new Date(Date.now() + ttlMs);
      const token = await new SignJWT({ org: caller.orgId })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setJti(id)
        .setIssuer('svc')
        .setAudience('svc-invitation')
        .setIssuedAt()
        .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
        .sign(invitationKey);
      const invitedBy = caller.keyId !== null ? `api_key:${caller.keyId}` : `user:${caller.userId ?? 'unknown'}`;
      // Each transaction is tried again alone on a lost lock conflict (retryingLockConflicts), never
      // the whole invitation: a retry after the delivery would store a second invitation (its
      // predecessor revoked unrecorded) and send a second e-mail with another link.
      const row = await retryingLockConflicts(() =>
        db.withOrg(caller.orgId, async (tx) => {
          await tx.query('UPDATE invitations SET revoked_at = now() WHERE lower(email) = $1 AND accepted_at IS NULL AND revoked_at IS NULL', [email]);
          const inserted = await tx.query(
            `INSERT INTO invitations (id, org_id, email, role, token_hash, invited_by, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
            [id, caller.orgId, email, input.role, sha256Hex(token), invitedBy, expiresAt],
          );
          await within(tx, { invitation: invitationRow(inserted.rows[0]!), delivery: mailer === null ? 'not_configured' : 'sent' });
          return inserted.rows[0]!;
        }),
      );
      const acceptUrl = `${config.publicUrl}/dashboard/accept-invitation#token=${token}`;
      if (mailer === null) return { invitation: invitationRow(row), delivery: 'not_configured' as const, acceptUrl };
      try {
        await mailer.sendInvitation({ to: email, orgName: input.orgName, role: input.role, acceptUrl, expiresAt });
      } catch (error) {
        await retryingLockConflicts(() =>
          db.withOrg(caller.orgId, async (tx) => {
            const revoked = await tx.query('UPDATE invitations SET revoked_at = now() WHERE id = $1 RETURNING *', [id]);
            if (revoked.rows[0] !== undefined) await undelivered(tx, invitationRow(revoked.rows[0]));
          }),
        );
        throw new SvcError('EMAIL_DELIVERY_FAILED', { cause: error, details: { reason: (error as { code?: string }).code ?? 'send_failed' } });
      }
      return { invitation: invitationRow(row), delivery: 'sent' as const, acceptUrl: null };
    },

    /** The org's invitations, newest first (the last 200). */
    async listInvitations(orgId: string): Promise<InvitationRecord[]> {
      const result = await db.withOrg(orgId, (tx) => tx.query('SELECT * FROM invitations ORDER BY created_at DESC, id LIMIT 200'));
      return result.rows.map(invitationRow);
    },

    /** Revokes a pending invitation: NOT_FOUND when unknown, 409 INVITATION_USED when accepted. */
    async revokeInvitation(orgId: string, invitationId: string, within: WithinWrite<InvitationRecord> = noWithin): Promise<InvitationRecord> {
      return db.withOrg(orgId, async (tx) => {
        const updated = await tx.query('UPDATE invitations SET revoked_at = now() WHERE id = $1 AND accepted_at IS NULL AND revoked_at IS NULL RETURNING *', [invitationId]);
        if (updated.rows[0] !== undefined) {
          const revoked = invitationRow(updated.rows[0]);
          await within(tx, revoked);
          return revoked;
        }
        const existing = await tx.query('SELECT accepted_at FROM invitations WHERE id = $1', [invitationId]);
        if (existing.rows[0] === undefined || existing.rows[0].accepted_at === null) throw new SvcError('NOT_FOUND', { details: { resource: 'invitation' } });
        throw new SvcError('INVITATION_USED');
      });
    },

    /**
     * Accepts an invitation: creates the user with the invited role and the given password.
     * 400 INVITATION_INVALID (not a token svc signed, revoked, or its inviter has since been removed
     * or lost the right to grant the role), 410 INVITATION_EXPIRED,
     * 409 INVITATION_USED (accepted before), 409 EMAIL_TAKEN (the address signed up meanwhile).
     */
    async accept(token: string, password: string, within: WithinWrite<AcceptedInvitation> = noWithin): Promise<AcceptedInvitation> {
      let invitationId: string;
      let orgId: string;
      try {
        const { payload } = await jwtVerify(token, invitationKey, { issuer: 'svc', audience: 'svc-invitation', algorithms: ['HS256'] });
        if (typeof payload.jti !== 'string' || typeof payload.org !== 'string') throw new SvcError('INVITATION_INVALID');
        invitationId = payload.jti;
        orgId = payload.org;
      } catch (error) {
        if (error instanceof SvcError) throw error;
        if ((error as { code?: string }).code === 'ERR_JWT_EXPIRED') throw new SvcError('INVITATION_EXPIRED');
        throw new SvcError('INVITATION_INVALID');
      }
      const passwordHash = await argonHash(password);
      try {
        return await db.transaction(async (tx) => {
          const found = await tx.query('SELECT * FROM invitations WHERE id = $1 AND org_id = $2 FOR UPDATE', [invitationId, orgId]);
          const row = found.rows[0];
          if (row === undefined || !safeEqual(row.token_hash as string, sha256Hex(token))) throw new SvcError('INVITATION_INVALID');
          if (row.accepted_at !== null) throw new SvcError('INVITATION_USED');
          if (row.revoked_at !== null) throw new SvcError('INVITATION_INVALID', { details: { reason: 'revoked' } });
          if ((row.expires_at as Date).getTime() <= Date.now()) throw new SvcError('INVITATION_EXPIRED');
          if (!(await inviterMayStillGrant(tx, orgId, row.invited_by as string, row.role as Role))) {
            throw new SvcError('INVITATION_INVALID', { details: { reason: 'inviter_lost_rights' } });
          }
          const email = row.email as string;
          const taken = await tx.query('SELECT 1 FROM users WHERE lower(email) = $1', [email]);
          if (taken.rows.length > 0) throw new SvcError('EMAIL_TAKEN');
          const userId = randomUUID();
          await tx.query('INSERT INTO users (id, org_id, email, password_hash, role, last_login_at) VALUES ($1, $2, $3, $4, $5, now())', [
            userId,
            orgId,
            email,
            passwordHash,
            row.role,
          ]);
          await tx.query('UPDATE invitations SET accepted_at = now(), accepted_user_id = $2 WHERE id = $1', [invitationId, userId]);
          const accepted: AcceptedInvitation = { userId, orgId, role: row.role as Role, email, invitationId };
          await within(tx, accepted);
          return accepted;
        });
      } catch (error) {
        if ((error as { code?: string }).code === '23505') throw new SvcError('EMAIL_TAKEN');
        throw error;
      }
    },

    /**
     * Changes a user's role; the user's open sessions take the new role at their next request.
     * 409 LAST_ADMIN when it would leave the org without an administrator.
     */
    async changeRole(orgId: string, caller: AuthContext | 'operator', userId: string, role: Role, within: WithinWrite<{ user: UserRecord; previousRole: Role }> = noWithin): Promise<{ user: UserRecord; previousRole: Role }> {
      return db.withOrg(orgId, async (tx) => {
        const { target, admins } = await lockTarget(tx, userId);
        const previousRole = target.role as Role;
        superAdminGuard(caller, [previousRole, role], 'change_super_admin');
        if (ADMIN_ROLES.includes(previousRole) && !ADMIN_ROLES.includes(role) && admins <= 1) {
          throw new SvcError('LAST_ADMIN', { details: { user_id: userId, role: previousRole } });
        }
        const updated = await tx.query('UPDATE users SET role = $2 WHERE id = $1 RETURNING id, email, role, created_at, last_login_at', [userId, role]);
        await tx.query('UPDATE user_sessions SET role = $2 WHERE user_id = $1 AND revoked_at IS NULL', [userId, role]);
        const changed = { user: userRow(updated.rows[0]!), previousRole };
        await within(tx, changed);
        return changed;
      });
    },

    /** Removes a user from the org and revokes all their sessions. 409 LAST_ADMIN for the last administrator. */
    async remove(caller: AuthContext, userId: string, within: WithinWrite<{ user: UserRecord; sessionsRevoked: number }> = noWithin): Promise<{ user: UserRecord; sessionsRevoked: number }> {
      return db.withOrg(caller.orgId, async (tx) => {
        const { target, admins } = await lockTarget(tx, userId);
        const role = target.role as Role;
        superAdminGuard(caller, [role], 'remove_super_admin');
        if (ADMIN_ROLES.includes(role) && admins <= 1) throw new SvcError('LAST_ADMIN', { details: { user_id: userId, role } });
        const revoked = await tx.query('UPDATE user_sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL RETURNING id', [userId]);
        await tx.query('DELETE FROM users WHERE id = $1', [userId]);
        const removed = { user: userRow(target), sessionsRevoked: revoked.rows.length };
        await within(tx, removed);
        return removed;
      });
    },

    /**
     * Changes the caller's password after checking the current one (403 PASSWORD_INCORRECT), and
     * revokes every session of the user, in one transaction with `within` (its audit entry, given
     * how many sessions were revoked). Returns how many sessions were revoked.
     */
    async changePassword(orgId: string, userId: string, current: string, next: string, within: WithinWrite<number> = noWithin): Promise<number> {
      const found = await db.withOrg(orgId, (tx) => tx.query('SELECT password_hash FROM users WHERE id = $1', [userId]));
      const stored = found.rows[0]?.password_hash as string | null | undefined;
      if (stored === undefined) throw new SvcError('NOT_FOUND', { details: { resource: 'user' } });
      const ok = stored !== null && (await argonVerify(stored, current).catch(() => false));
      if (!ok) throw new SvcError('PASSWORD_INCORRECT');
      const passwordHash = await argonHash(next);
      return db.withOrg(orgId, async (tx) => {
        await tx.query('UPDATE users SET password_hash = $2 WHERE id = $1', [userId, passwordHash]);
        const revoked = await sessions.revokeUserIn(tx, userId);
        await within(tx, revoked);
        return revoked;
      });
    },
  };
}
