/**
 * TOTP second factor (RFC 6238 through otplib): enrolment with an otpauth URI, its QR code and
 * ten one-time recovery codes; activation by a first code; the second step of password sign-in.
 *
 * Posture: the secret is encrypted at rest (AES-256-GCM under API_ENCRYPTION_KEY, bound to the
 * user) and never shown again after enrolment; recovery codes are random (50 bits) and stored as
 * SHA-256 only, each usable once. A code is accepted one 30-second step either side of now; the
 * step of the last accepted code is remembered, so that code (or an earlier one) is refused.
 * TOTP_MAX_FAILURES wrong codes in a row lock the second step for TOTP_LOCK_MS (audited); the
 * counter is per user in the database, so every replica agrees. Between the password and the
 * code the client holds an mfa_token: an HS256 JWT (own key and audience) valid five minutes,
 * bound to the password hash it was issued for (a digest of it), so a password changed meanwhile
 * ends it as it ends every session.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import { generateSecret, generateURI, verify as verifyCode } from 'otplib';
import QRCode from 'qrcode';
import type { AuditLog } from '../audit/index.ts';
import type { ResolvedConfig } from '../platform/config.ts';
import { decrypt, encrypt, encryptionKeyFrom, safeEqual, sha256Hex } from '../platform/crypto.ts';
import { retryingLockConflicts } from '../platform/db/failures.ts';
import type { Database } from '../platform/db/index.ts';
import { SvcError } from '../platform/errors.ts';
import { deriveSecret } from '../platform/secrets.ts';
import { ROLES, type Role } from './accounts.ts';
import { requireRole, type AuthContext } from './access.ts';
import type { SignedInUser } from './sign-in.ts';

/** Wrong second-step answers in a row (codes or recovery codes) before the lock-out. */
export const TOTP_MAX_FAILURES = 5;
/** How long the second step stays locked after TOTP_MAX_FAILURES. */
export const TOTP_LOCK_MS = 15 * 60_000;
/** Steps of 30 s accepted either side of now (clock drift of the authenticator). */
export const TOTP_WINDOW_STEPS = 1;
export const MFA_TOKEN_TTL_SECONDS = 5 * 60;
export const RECOVERY_CODE_COUNT = 10;
const ISSUER = 'svc';
const MFA_AUDIENCE = 'svc-mfa';

export type Totp = ReturnType<typeof createTotp>;

export interface Enrolment {
  otpauth_uri: string;
  qr_code: string;
  recovery_codes: string[];
}

type SecondStep = { code: string } | { recovery_code: string };

export function createTotp(deps: { db: Database; config: Pick<ResolvedConfig, 'apiEncryptionKey' | 'secretKey'>; audit: AuditLog; now?: () => number }) {
  const { db, audit } = deps;
  const now = deps.now ?? Date.now;
  const encryptionKey = encryptionKeyFrom(deps.config.apiEncryptionKey);
  const mfaKey = new TextEncoder().encode(deriveSecret(deps.config.secretKey, 'svc/mfa-token'));
  const context = (userId: string) => `totp:${userId}`;

  const userRow = async (orgId: string, userId: string) => {
    const result = await db.withOrg(orgId, (tx) => tx.query('SELECT id, email, totp_secret, totp_enabled_at FROM users WHERE id = $1', [userId]));
    return result.rows[0] as { id: string; email: string; totp_secret: string | null; totp_enabled_at: Date | null } | undefined;
  };

  return {
    /**
     * Starts (or restarts, while not yet confirmed) an enrolment: a new secret and new recovery
     * codes, shown once. An active TOTP must be reset by an admin first (CONFLICT).
     */
    async enrol(user: { userId: string; orgId: string }): Promise<Enrolment> {
      const row = await userRow(user.orgId, user.userId);
      if (row === undefined) throw new SvcError('NOT_FOUND', { details: { resource: 'user' } });
      if (row.totp_enabled_at !== null) {
        throw new SvcError('CONFLICT', { message: 'TOTP is already active for this user; an admin can reset it.', details: { reason: 'totp_active' } });
      }
      const secret = generateSecret();
      const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, recoveryCode);
      await db.withOrg(user.orgId, async (tx) => {
        await tx.query('UPDATE users SET totp_secret = $2, totp_last_step = NULL, totp_failures = 0, totp_locked_until = NULL WHERE id = $1', [
          user.userId,
          encrypt(encryptionKey, secret, context(user.userId)),
        ]);
        await tx.query('DELETE FROM user_recovery_codes WHERE user_id = $1', [user.userId]);
        for (const code of recoveryCodes) {
          await tx.query('INSERT INTO user_recovery_codes (org_id, user_id, code_hash) VALUES ($1, $2, $3)', [user.orgId, user.userId, sha256Hex(normalizeRecovery(code))]);
        }
      });
      const uri = generateURI({ issuer: ISSUER, label: row.email, secret });
      return { otpauth_uri: uri, qr_code: await QRCode.toDataURL(uri), recovery_codes: recoveryCodes };
    },

    /** Activates a pending enrolment with a first valid code (audited as totp.enrolled). */
    async confirm(user: { userId: string; orgId: string }, code: string): Promise<{ enabled_at: string }> {
      const row = await userRow(user.orgId, user.userId);
      if (row === undefined) throw new SvcError('NOT_FOUND', { details: { resource: 'user' } });
      if (row.totp_enabled_at !== null) throw new SvcError('CONFLICT', { message: 'TOTP is already active.', details: { reason: 'totp_active' } });
      if (row.totp_secret === null) throw new SvcError('CONFLICT', { message: 'Start an enrolment first (POST /api/v1/auth/totp/enroll).', details: { reason: 'not_enrolled' } });
      const result = await check(decrypt(encryptionKey, row.totp_secret, context(user.userId)), code, null, now());
      if (result === null) throw new SvcError('MFA_CODE_INVALID', { details: { reason: 'wrong_code' } });
      // Activated with its audit entry in one transaction: a failure of the append leaves TOTP
      // pending (the user confirms again); a lost lock conflict is tried again whole.
      const enabledAt = await retryingLockConflicts(() =>
        db.withOrg(user.orgId, async (tx) => {
          const updated = await tx.query<{ totp_enabled_at: Date }>('UPDATE users SET totp_enabled_at = now(), totp_last_step = $2 WHERE id = $1 AND totp_enabled_at IS NULL RETURNING totp_enabled_at', [
            user.userId,
            result,
          ]);
          const enabled = updated.rows[0]?.totp_enabled_at;
          if (enabled === undefined) throw new SvcError('CONFLICT', { message: 'TOTP is already active.', details: { reason: 'totp_active' } });
          await audit.append(user.orgId, { actor: `user:${user.userId}`, action: 'user.totp.enrolled', target: user.userId, outcome: 'success', details: { recovery_codes: RECOVERY_CODE_COUNT } }, { tx });
          return enabled;
        }),
      );
      return { enabled_at: new Date(enabledAt).toISOString() };
    },

    /** True when the user's TOTP is active (password sign-in then answers a second step). */
    async active(user: { userId: string; orgId: string }): Promise<boolean> {
      return (await userRow(user.orgId, user.userId))?.totp_enabled_at != null;
    },

    /** The short-lived token that carries a password-verified user (and the hash checked) to the second step. */
    async issueMfaToken(user: SignedInUser & { passwordHash: string }): Promise<{ mfa_token: string; expires_at: string }> {
      const expiresAt = new Date(now() + MFA_TOKEN_TTL_SECONDS * 1000);
      const token = await new SignJWT({ org: user.orgId, role: user.role, pwd: sha256Hex(user.passwordHash) })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(user.userId)
        .setIssuer(ISSUER)
        .setAudience(MFA_AUDIENCE)
        .setJti(randomUUID())
        .setIssuedAt(Math.floor(now() / 1000))
        .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
        .sign(mfaKey);
      return { mfa_token: token, expires_at: expiresAt.toISOString() };
    },

    /**
     * The second step: the mfa_token and a TOTP code or an unused recovery code. Answers the
     * signed-in user, or throws MFA_TOKEN_INVALID, MFA_CODE_INVALID or MFA_LOCKED.
     */
    async verifySecondStep(mfaToken: string, answer: SecondStep): Promise<SignedInUser & { passwordHash: string }> {
      let user: SignedInUser;
      let passwordDigest: string;
      try {
        const { payload } = await jwtVerify(mfaToken, mfaKey, { issuer: ISSUER, audience: MFA_AUDIENCE, algorithms: ['HS256'], currentDate: new Date(now()) });
        if (typeof payload.sub !== 'string' || typeof payload.org !== 'string' || typeof payload.pwd !== 'string' || !(ROLES as readonly unknown[]).includes(payload.role)) throw new Error('claims');
        user = { userId: payload.sub, orgId: payload.org, role: payload.role as Role };
        passwordDigest = payload.pwd;
      } catch {
        throw new SvcError('MFA_TOKEN_INVALID');
      }
      const at = now();
      // The outcome is decided and recorded in one transaction (the row locked), then answered:
      // a failure must be counted even though it ends in an error.
      const outcome = await retryingLockConflicts(() => db.withOrg(user.orgId, async (tx) => {
        const result = await tx.query('SELECT password_hash, totp_secret, totp_enabled_at, totp_last_step, totp_failures, totp_locked_until FROM users WHERE id = $1 FOR UPDATE', [user.userId]);
        const row = result.rows[0];
        if (row === undefined || row.totp_enabled_at === null || row.totp_secret === null) return { kind: 'token' as const };
        // The password this token's first step checked has been changed since: the token is over.
        if (typeof row.password_hash !== 'string' || !safeEqual(sha256Hex(row.password_hash), passwordDigest)) return { kind: 'token' as const };
        const lockedUntil = row.totp_locked_until as Date | null;
        if (lockedUntil !== null && new Date(lockedUntil).getTime() > at) return { kind: 'locked' as const, until: new Date(lockedUntil).getTime() };
        // The limit was reached but its lock could not be stored with its entry (an audit outage):
        // no answer is checked until it is (fail closed), not even a right one.
        if (Number(row.totp_failures) >= TOTP_MAX_FAILURES) return { kind: 'lock-due' as const };
        let accepted = false;
        if ('code' in answer) {
          const lastStep = row.totp_last_step === null ? null : Number(row.totp_last_step);
          const step = await check(decrypt(encryptionKey, row.totp_secret as string, context(user.userId)), answer.code, lastStep, at);
          if (step !== null) {
            accepted = true;
            await tx.query('UPDATE users SET totp_last_step = $2, totp_failures = 0, totp_locked_until = NULL, last_login_at = now() WHERE id = $1', [user.userId, step]);
          }
        } else {
          const used = await tx.query('UPDATE user_recovery_codes SET used_at = now() WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL RETURNING code_hash', [
            user.userId,
            sha256Hex(normalizeRecovery(answer.recovery_code)),
          ]);
          if (used.rows.length > 0) {
            accepted = true;
            await tx.query('UPDATE users SET totp_failures = 0, totp_locked_until = NULL, last_login_at = now() WHERE id = $1', [user.userId]);
          }
        }
        if (accepted) return { kind: 'ok' as const, passwordHash: row.password_hash as string };
        const failures = Number(row.totp_failures) + 1;
        await tx.query('UPDATE users SET totp_failures = $2 WHERE id = $1', [user.userId, failures]);
        return failures >= TOTP_MAX_FAILURES ? { kind: 'lock-due' as const } : { kind: 'wrong' as const, remaining: TOTP_MAX_FAILURES - failures };
      }));
      if (outcome.kind === 'lock-due') {
        // The lock and its entry are one transaction, after the failure that reached the limit is
        // counted in its own: an outage stores neither lock nor entry (503), and the counter, left
        // at the limit, keeps every later answer unchecked until a retry stores both. So no lock
        // exists unrecorded, a stored lock is answered MFA_LOCKED, and an outage never gives a
        // guess more.
        const locked = await retryingLockConflicts(() =>
          db.withOrg(user.orgId, async (tx) => {
            const result = await tx.query('SELECT totp_failures, totp_locked_until FROM users WHERE id = $1 FOR UPDATE', [user.userId]);
            const row = result.rows[0];
            if (row === undefined) return { kind: 'token' as const };
            const lockedUntil = row.totp_locked_until as Date | null;
            if (lockedUntil !== null && new Date(lockedUntil).getTime() > at) return { kind: 'locked' as const, until: new Date(lockedUntil).getTime() };
            // An admin's reset, or a recovery by another path, cleared the count since.
            if (Number(row.totp_failures) < TOTP_MAX_FAILURES) return { kind: 'wrong' as const, remaining: TOTP_MAX_FAILURES - Number(row.totp_failures) };
            const until = at + TOTP_LOCK_MS;
            await tx.query('UPDATE users SET totp_failures = 0, totp_locked_until = $2 WHERE id = $1', [user.userId, new Date(until)]);
            await audit.append(
              user.orgId,
              { actor: `user:${user.userId}`, action: 'user.totp.locked', target: user.userId, outcome: 'failure', details: { failures: TOTP_MAX_FAILURES, locked_until: new Date(until).toISOString() } },
              { tx },
            );
            return { kind: 'locked' as const, until };
          }),
        );
        return answerSecondStep(locked);
      }
      return answerSecondStep(outcome);

      function answerSecondStep(result: { kind: 'ok'; passwordHash: string } | { kind: 'token' } | { kind: 'wrong'; remaining: number } | { kind: 'locked'; until: number }): SignedInUser & { passwordHash: string } {
        switch (result.kind) {
          case 'ok':
            // finishSignIn checks the hash again under its lock (a change landing after this).
            return { ...user, passwordHash: result.passwordHash };
          case 'token':
            throw new SvcError('MFA_TOKEN_INVALID');
          case 'wrong':
            throw new SvcError('MFA_CODE_INVALID', { details: { attempts_remaining: result.remaining } });
          case 'locked': {
            const retryAfter = Math.max(1, Math.ceil((result.until - at) / 1000));
            throw new SvcError('MFA_LOCKED', { details: { retry_after: retryAfter, locked_until: new Date(result.until).toISOString() }, headers: { 'Retry-After': String(retryAfter) } });
          }
        }
      }
    },

    /**
     * An admin removes a user's TOTP (lost device): the user signs in with the password alone and
     * may enrol again. A super_admin's needs a super_admin (`caller`; as for that role's grants):
     * an admin must not be able to take a super_admin's second factor away.
     */
    async reset(orgId: string, userId: string, actor: string, caller?: AuthContext): Promise<void> {
      // The reset and its audit entry are one transaction (a second factor never disappears unrecorded).
      await retryingLockConflicts(() =>
        db.withOrg(orgId, async (tx) => {
          const target = await tx.query('SELECT role FROM users WHERE id = $1 FOR UPDATE', [userId]);
          if (target.rows[0]?.role === 'super_admin' && caller !== undefined) requireRole(caller, 'super_admin', 'reset_super_admin_totp');
          const updated = await tx.query(
            'UPDATE users SET totp_secret = NULL, totp_enabled_at = NULL, totp_last_step = NULL, totp_failures = 0, totp_locked_until = NULL WHERE id = $1 RETURNING id',
            [userId],
          );
          if (updated.rows.length === 0) throw new SvcError('NOT_FOUND', { details: { resource: 'user' } });
          await tx.query('DELETE FROM user_recovery_codes WHERE user_id = $1', [userId]);
          await audit.append(orgId, { actor, action: 'user.totp.reset', target: userId, outcome: 'success', details: {} }, { tx });
        }),
      );
    },
  };
}

/** The time step of `code` when it is valid now (±TOTP_WINDOW_STEPS) and later than `afterStep`, else null. */
async function check(secret: string, code: string, afterStep: number | null, at: number): Promise<number | null> {
  if (!/^[0-9]{6}$/.test(code)) return null;
  // A step already used that is later than any step acceptable now (a replica whose clock is
  // behind the one that took it): nothing is acceptable; otplib would throw (a 500) instead.
  if (afterStep !== null && afterStep >= Math.floor(at / 30_000) + TOTP_WINDOW_STEPS) return null;
  const result = await verifyCode({
    secret,
    token: code,
    epoch: Math.floor(at / 1000),
    epochTolerance: TOTP_WINDOW_STEPS * 30,
    ...(afterStep === null ? {} : { afterTimeStep: afterStep }),
  });
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}

const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** `xxxxx-xxxxx`: 10 characters of a 31-letter alphabet without look-alikes (≈ 50 bits). */
function recoveryCode(): string {
  let out = '';
  for (const byte of randomBytes(64)) {
    if (byte >= 248) continue; // 248 = 8 × 31: no modulo bias
    out += RECOVERY_ALPHABET[byte % 31];
    if (out.length === 10) break;
  }
  return `${out.slice(0, 5)}-${out.slice(5)}`;
}

function normalizeRecovery(code: string): string {
  return code.trim().toLowerCase().replace(/[\s-]/g, '');
}
