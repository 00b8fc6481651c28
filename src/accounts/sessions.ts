/**
 * Dashboard sessions: server-side state behind the session token, so a session can be revoked.
 *
 * The token is an HS256 JWT (issuer svc, audience svc-dashboard) naming its session row (`sid`);
 * it travels as the `svc_session` cookie (HttpOnly, Secure, SameSite=Strict) or, for scripts and
 * the CLI, as a bearer token. Each use checks the row: not revoked, not past its absolute expiry
 * (SESSION_ABSOLUTE_TIMEOUT_HOURS after sign-in, also the JWT's exp), and used within the idle
 * timeout (SESSION_IDLE_TIMEOUT_MINUTES). The role is read from the row, which a role change
 * updates, so a demotion applies to the next request. last_seen_at is written at most once a
 * minute per session.
 *
 * CSRF: the token of a session is HMAC-SHA256(key derived from SECRET_KEY, session id), sent to
 * the page in the readable `svc_csrf` cookie and in GET /api/v1/auth/session; a state-changing
 * request authenticated by the cookie must echo it in X-CSRF-Token (docs/accounts.md).
 */
import { createHmac, randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import type { ResolvedConfig } from '../platform/config.ts';
import { safeEqual } from '../platform/crypto.ts';
import type { Database, Queryable } from '../platform/db/index.ts';
import { SvcError } from '../platform/errors.ts';
import { deriveSecret } from '../platform/secrets.ts';
import { effectivePlan, type Plan } from './plans.ts';
import { ROLES, roleScope, type AuthContext, type Role } from './access.ts';

/** How a sign-in was completed (recorded on the session). */
export const SIGN_IN_METHODS = ['password', 'totp', 'oidc', 'saml', 'invite'] as const;
export type SignInMethod = (typeof SIGN_IN_METHODS)[number];

/** last_seen_at is written at most this often per session. */
const TOUCH_INTERVAL_MS = 60_000;

export interface IssuedSession {
  token: string;
  /** The role the session holds (the user's role as it stands when the session opens). */
  role: Role;
  expires_at: string;
  session_id: string;
  csrf_token: string;
}

export interface SessionState {
  sessionId: string;
  userId: string;
  orgId: string;
  role: Role;
  method: string;
  createdAt: string;
  expiresAt: string;
  idleExpiresAt: string;
}

export type Sessions = ReturnType<typeof createSessions>;

/** Revokes every open session of a user in `tx`; returns how many were revoked. */
async function revokeUserIn(tx: Queryable, userId: string): Promise<number> {
  const result = await tx.query('UPDATE user_sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL RETURNING id', [userId]);
  return result.rows.length;
}

export function createSessions(deps: { db: Database; config: ResolvedConfig }) {
  const { db, config } = deps;
  const sessionKey = new TextEncoder().encode(deriveSecret(config.secretKey, 'svc/session-jwt'));
  const csrfKey = deriveSecret(config.secretKey, 'svc/session-csrf');
  const idleMs = config.sessions.idleTimeoutMinutes * 60_000;
  const absoluteMs = config.sessions.absoluteTimeoutHours * 3_600_000;

  const csrfToken = (sessionId: string): string => createHmac('sha256', csrfKey).update(sessionId).digest('base64url');

  return {
    idleMs,
    absoluteMs,

    /**
     * Creates a session row and its token. With `member` (every sign-in: finishSignIn), the user's
     * row is read under a share lock in the same transaction, so a role change or a removal that
     * lands while the credential was being checked (argon2 takes a while) cannot be undone by the
     * sign-in: the session takes the user's current role, and a removed user gets none (401
     * AUTH_INVALID), nor does a password sign-in whose password was changed meanwhile. Without it (tools and tests acting as a user that has no row) the role given
     * is used.
     */
    async issue(user: { userId: string; orgId: string; role: Role; passwordHash?: string }, method: SignInMethod = 'password', options: { member?: boolean } = {}): Promise<IssuedSession> {
      const sessionId = randomUUID();
      const expiresAt = new Date(Date.now() + absoluteMs);
      const role = await db.withOrg(user.orgId, async (tx) => {
        let current = user.role;
        if (options.member === true) {
          const found = await tx.query('SELECT role, password_hash FROM users WHERE id = $1 FOR SHARE', [user.userId]);
          const row = found.rows[0];
          if (row === undefined || !(ROLES as readonly unknown[]).includes(row.role)) throw new SvcError('AUTH_INVALID', { details: { reason: 'user_removed' } });
          // A password sign-in names the hash it checked: a password changed meanwhile (which
          // revoked every session) must not be followed by a session opened with the old one.
          if (user.passwordHash !== undefined && (typeof row.password_hash !== 'string' || !safeEqual(row.password_hash, user.passwordHash))) {
            throw new SvcError('AUTH_INVALID', { details: { reason: 'password_changed' } });
          }
          current = row.role as Role;
        }
        // The user's sessions that can no longer be used (revoked, past the absolute or the idle
        // timeout) go: a user's rows stay bounded by the sessions of the last 12 hours.
        await tx.query(
          `DELETE FROM user_sessions WHERE user_id = $1 AND (revoked_at IS NOT NULL OR expires_at <= now() OR last_seen_at <= now() - $2 * interval '1 millisecond')`,
          [user.userId, idleMs],
        );
        await tx.query('INSERT INTO user_sessions (id, org_id, user_id, role, method, expires_at) VALUES ($1, $2, $3, $4, $5, $6)', [
          sessionId,
          user.orgId,
          user.userId,
          current,
          method,
          expiresAt,
        ]);
        return current;
      });
      const token = await new SignJWT({ org: user.orgId, sid: sessionId })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(user.userId)
        .setIssuer('svc')
        .setAudience('svc-dashboard')
        .setIssuedAt()
        .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
        .sign(sessionKey);
      return { token, role, expires_at: expiresAt.toISOString(), session_id: sessionId, csrf_token: csrfToken(sessionId) };
    },

    /** Resolves a session token to the caller, or null (bad signature, revoked, expired, idle too long). */
    async authenticate(token: string): Promise<AuthContext | null> {
      let sessionId: string;
      let userId: string;
      try {
        const { payload } = await jwtVerify(token, sessionKey, { issuer: 'svc', audience: 'svc-dashboard', algorithms: ['HS256'] });
        if (typeof payload.sid !== 'string' || typeof payload.sub !== 'string') return null;
        sessionId = payload.sid;
        userId = payload.sub;
      } catch {
        return null;
      }
      const result = await db.query(
        `SELECT s.user_id, s.role, s.last_seen_at, s.expires_at, s.revoked_at, o.id AS org_id, o.tag, o.plan, o.trial_started_at, o.trial_ends_at
           FROM user_sessions s JOIN orgs o ON o.id = s.org_id WHERE s.id = $1`,
        [sessionId],
      );
      const row = result.rows[0];
      const now = Date.now();
      if (row === undefined || row.user_id !== userId || row.revoked_at !== null) return null;
      const lastSeen = (row.last_seen_at as Date).getTime();
      if ((row.expires_at as Date).getTime() <= now || lastSeen + idleMs <= now) return null;
      if (!(ROLES as readonly unknown[]).includes(row.role)) return null;
      if (now - lastSeen >= TOUCH_INTERVAL_MS) {
        await db.withOrg(row.org_id as string, (tx) => tx.query('UPDATE user_sessions SET last_seen_at = now() WHERE id = $1', [sessionId]));
      }
      const role = row.role as Role;
      return {
        kind: 'user',
        orgId: row.org_id as string,
        orgTag: row.tag as string,
        plan: effectivePlan({ plan: row.plan as Plan, trialStartedAt: row.trial_started_at as Date | null, trialEndsAt: row.trial_ends_at as Date | null }),
        scope: roleScope(role),
        keyClass: 'live',
        keyId: null,
        userId,
        role,
        sessionId,
      };
    },

    /** The session's state (for GET /api/v1/auth/session), or null when it is gone. */
    async state(orgId: string, sessionId: string): Promise<SessionState | null> {
      const result = await db.withOrg(orgId, (tx) => tx.query('SELECT * FROM user_sessions WHERE id = $1 AND revoked_at IS NULL', [sessionId]));
      const row = result.rows[0];
      if (row === undefined) return null;
      const lastSeen = (row.last_seen_at as Date).getTime();
      const expiresAt = row.expires_at as Date;
      return {
        sessionId,
        userId: row.user_id as string,
        orgId,
        role: row.role as Role,
        method: row.method as string,
        createdAt: (row.created_at as Date).toISOString(),
        expiresAt: expiresAt.toISOString(),
        idleExpiresAt: new Date(Math.min(lastSeen + idleMs, expiresAt.getTime())).toISOString(),
      };
    },

    /** The CSRF token of a session. */
    csrfToken,

    /** True when `presented` is the CSRF token of the session (constant-time). */
    csrfMatches(sessionId: string, presented: string): boolean {
      return safeEqual(csrfToken(sessionId), presented);
    },

    /** Revokes one session; false when it was not active. */
    async revoke(orgId: string, sessionId: string): Promise<boolean> {
      const result = await db.withOrg(orgId, (tx) => tx.query('UPDATE user_sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING id', [sessionId]));
      return result.rows.length > 0;
    },

    /** Revokes every active session of a user in the caller's transaction (a password change and its audit entry); returns how many. */
    revokeUserIn,
  };
}
