/**
 * TOTP second factor through the API: enrolment (otpauth URI, QR code, recovery codes), the
 * confirmation that activates it, password sign-in answering a second step, and that step's
 * failure cases — a wrong code, a replayed code, a used recovery code, a forged mfa_token, the
 * lock-out after repeated failures — and an admin's reset. Codes are computed with otplib from
 * the secret the otpauth URI carries, as an authenticator app would.
 */
import { randomUUID } from 'node:crypto';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTotp, TOTP_MAX_FAILURES } from '../../src/accounts/index.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';

let context: TestContext;
const PASSWORD = 'correct horse battery staple';

beforeAll(async () => {
  context = await createTestApp();
}, 120_000);

afterAll(async () => {
  await context?.close();
});

/** Each call from its own address: the sign-in endpoints' per-IP limit (5 a minute) is not what these tests are about. */
let address = 0;
async function post(url: string, payload: unknown, token?: string) {
  address++;
  return context.app.inject({
    method: 'POST',
    url,
    payload: payload as Record<string, unknown>,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    remoteAddress: `10.9.${address >> 8}.${address & 255}`,
  });
}

/** A new user (admin of a new org) with TOTP enrolled and confirmed. */
async function enrolledUser() {
  const email = `totp-${randomUUID().slice(0, 8)}@example.org`;
  const registered = await post('/api/v1/auth/register', { email, password: PASSWORD, org_name: 'TOTP org' });
  expect(registered.statusCode).toBe(201);
  const session = registered.json().token as string;
  const enrolment = await post('/api/v1/auth/totp/enroll', {}, session);
  expect(enrolment.statusCode).toBe(201);
  const { otpauth_uri, qr_code, recovery_codes } = enrolment.json() as { otpauth_uri: string; qr_code: string; recovery_codes: string[] };
  const secret = new URL(otpauth_uri).searchParams.get('secret')!;
  const confirmed = await post('/api/v1/auth/totp/confirm', { code: await generate({ secret }) }, session);
  expect(confirmed.statusCode).toBe(200);
  return { email, session, secret, otpauth_uri, qr_code, recovery_codes, orgId: registered.json().org_id as string, userId: registered.json().user_id as string };
}

async function firstStep(email: string): Promise<string> {
  const login = await post('/api/v1/auth/login', { email, password: PASSWORD });
  expect(login.statusCode).toBe(200);
  expect(login.json().mfa_required).toBe(true);
  expect(login.json().token).toBeUndefined();
  return login.json().mfa_token as string;
}

/** A code of the step `offset` steps away from now (30 s each). */
const codeAt = (secret: string, offset: number) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + offset * 30 });

describe('TOTP sign-in', () => {
  it('enrols with an otpauth URI, a QR code and ten recovery codes, then asks password sign-in for a code and signs in with it', async () => {
    const user = await enrolledUser();
    expect(user.otpauth_uri).toMatch(/^otpauth:\/\/totp\/svc:/);
    expect(user.qr_code).toMatch(/^data:image\/png;base64,/);
    expect(user.recovery_codes).toHaveLength(10);
    expect(new Set(user.recovery_codes).size).toBe(10);
    const mfaToken = await firstStep(user.email);
    // The next step's code: the current one was spent by the confirmation.
    const second = await post('/api/v1/auth/login/totp', { mfa_token: mfaToken, code: await codeAt(user.secret, 1) });
    expect(second.statusCode).toBe(200);
    expect(second.json().user_id).toBe(user.userId);
    const whoami = await context.app.inject({ method: 'GET', url: '/api/v1/whoami', headers: { authorization: `Bearer ${second.json().token as string}` } });
    expect(whoami.json().user_id).toBe(user.userId);
    // The secret is stored encrypted, not as the base32 text the URI carries.
    const stored = await context.services.db.query<{ totp_secret: string }>('SELECT totp_secret FROM users WHERE id = $1', [user.userId]);
    expect(stored.rows[0]!.totp_secret).not.toContain(user.secret);
    expect(stored.rows[0]!.totp_secret).toMatch(/^v1\./);
  });

  it('accepts a code one step ahead (authenticator clock drift) and refuses one three steps ahead', async () => {
    const user = await enrolledUser();
    // Skip past the step the confirmation used (that one is spent).
    const late = await post('/api/v1/auth/login/totp', { mfa_token: await firstStep(user.email), code: await codeAt(user.secret, 1) });
    expect(late.statusCode).toBe(200);
    const far = await post('/api/v1/auth/login/totp', { mfa_token: await firstStep(user.email), code: await codeAt(user.secret, 3) });
    expect(far.statusCode).toBe(401);
    expect(far.json().error.code).toBe('MFA_CODE_INVALID');
  });

  it('refuses a wrong code, and a code already used (the same step) even with a new mfa_token', async () => {
    const user = await enrolledUser();
    const wrong = await post('/api/v1/auth/login/totp', { mfa_token: await firstStep(user.email), code: (Number(await codeAt(user.secret, 1)) ^ 1).toString().padStart(6, '0') });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error.code).toBe('MFA_CODE_INVALID');
    expect(wrong.json().error.attempts_remaining).toBe(TOTP_MAX_FAILURES - 1);
    const code = await codeAt(user.secret, 1);
    expect((await post('/api/v1/auth/login/totp', { mfa_token: await firstStep(user.email), code })).statusCode).toBe(200);
    const replayed = await post('/api/v1/auth/login/totp', { mfa_token: await firstStep(user.email), code });
    expect(replayed.statusCode).toBe(401);
    expect(replayed.json().error.code).toBe('MFA_CODE_INVALID');
  });

  it('takes each recovery code once', async () => {
    const user = await enrolledUser();
    const [recovery] = user.recovery_codes;
    const first = await post('/api/v1/auth/login/totp', { mfa_token: await firstStep(user.email), recovery_code: recovery!.toUpperCase() });
    expect(first.statusCode).toBe(200);
    const again = await post('/api/v1/auth/login/totp', { mfa_token: await firstStep(user.email), recovery_code: recovery });
    expect(again.statusCode).toBe(401);
    expect(again.json().error.code).toBe('MFA_CODE_INVALID');
  });

  it('ends an mfa_token when the password is changed before the second step', async () => {
    const user = await enrolledUser();
    const mfaToken = await firstStep(user.email);
    const changed = await post('/api/v1/auth/password', { current_password: PASSWORD, new_password: 'another horse battery staple' }, user.session);
    expect(changed.statusCode).toBe(200);
    // Whoever passed the old password's first step gets no session, even with the right code.
    const second = await post('/api/v1/auth/login/totp', { mfa_token: mfaToken, code: await codeAt(user.secret, 1) });
    expect(second.statusCode).toBe(401);
    expect(second.json().error.code).toBe('MFA_TOKEN_INVALID');
  });

  it('answers a wrong code, not a server error, on a replica whose clock is behind the step last used', async () => {
    const user = await enrolledUser();
    // Another replica, two minutes behind the one that took the confirmation's code.
    const behind = createTotp({ db: context.services.db, config: context.config, audit: context.services.audit, now: () => Date.now() - 120_000 });
    const stored = await context.services.db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [user.userId]);
    const { mfa_token } = await behind.issueMfaToken({ userId: user.userId, orgId: user.orgId, role: 'admin', passwordHash: stored.rows[0]!.password_hash });
    const code = await generate({ secret: user.secret, epoch: Math.floor(Date.now() / 1000) - 120 });
    await expect(behind.verifySecondStep(mfa_token, { code })).rejects.toMatchObject({ code: 'MFA_CODE_INVALID' });
  });

  it('refuses a forged or expired mfa_token, and a session token in its place', async () => {
    const user = await enrolledUser();
    const code = await codeAt(user.secret, 1);
    const mfaToken = await firstStep(user.email);
    const [header, payload] = mfaToken.split('.');
    for (const forged of [`${header}.${payload}.${'A'.repeat(43)}`, user.session, 'not-a-token']) {
      const answer = await post('/api/v1/auth/login/totp', { mfa_token: forged, code });
      expect(answer.statusCode).toBe(401);
      expect(answer.json().error.code).toBe('MFA_TOKEN_INVALID');
    }
  });

  it('locks the second step after five wrong answers (audited), even for the right code, until an admin resets TOTP', async () => {
    const user = await enrolledUser();
    const right = await codeAt(user.secret, 1);
    const wrongCode = (Number(right) ^ 7).toString().padStart(6, '0');
    const statuses: string[] = [];
    for (let attempt = 0; attempt < TOTP_MAX_FAILURES; attempt++) {
      const answer = await post('/api/v1/auth/login/totp', { mfa_token: await firstStep(user.email), ...(attempt % 2 === 0 ? { code: wrongCode } : { recovery_code: 'aaaaa-bbbbb' }) });
      statuses.push(answer.json().error.code as string);
    }
    expect(statuses).toEqual(['MFA_CODE_INVALID', 'MFA_CODE_INVALID', 'MFA_CODE_INVALID', 'MFA_CODE_INVALID', 'MFA_LOCKED']);
    const locked = await post('/api/v1/auth/login/totp', { mfa_token: await firstStep(user.email), code: right });
    expect(locked.statusCode).toBe(429);
    expect(locked.json().error.code).toBe('MFA_LOCKED');
    expect(locked.json().error.retry_after).toBeGreaterThan(800);
    expect(Number(locked.headers['retry-after'])).toBe(locked.json().error.retry_after);
    const audit = await context.app.inject({ method: 'GET', url: '/api/v1/audit?limit=50', headers: { authorization: `Bearer ${user.session}` } });
    const actions = (audit.json().records as Array<{ action: string }>).map((entry) => entry.action);
    expect(actions).toContain('user.totp.enrolled');
    expect(actions).toContain('user.totp.locked');

    // The org's admin resets it: password alone signs in again, and the reset is audited.
    const reset = await context.app.inject({ method: 'DELETE', url: `/api/v1/users/${user.userId}/totp`, headers: { authorization: `Bearer ${user.session}` } });
    expect(reset.statusCode).toBe(204);
    const login = await post('/api/v1/auth/login', { email: user.email, password: PASSWORD });
    expect(login.json().mfa_required).toBeUndefined();
    expect(typeof login.json().token).toBe('string');
    const after = await context.app.inject({ method: 'GET', url: '/api/v1/audit?limit=50', headers: { authorization: `Bearer ${user.session}` } });
    expect((after.json().records as Array<{ action: string }>).map((entry) => entry.action)).toContain('user.totp.reset');
  });

  it("lets no admin of another org reset a user's TOTP, and no API key enrol", async () => {
    const user = await enrolledUser();
    const other = await context.createOrg();
    const reset = await context.app.inject({ method: 'DELETE', url: `/api/v1/users/${user.userId}/totp`, headers: { authorization: `Bearer ${other.apiKey}` } });
    expect(reset.statusCode).toBe(404);
    expect((await firstStep(user.email)).length).toBeGreaterThan(0);
    const enrol = await post('/api/v1/auth/totp/enroll', {}, other.apiKey);
    expect(enrol.statusCode).toBe(403);
    expect(enrol.json().error.code).toBe('SCOPE_INSUFFICIENT');
  });

  it("lets no admin reset a super_admin's TOTP", async () => {
    const user = await enrolledUser();
    const key = await post('/api/v1/keys', { scope: 'admin', name: 'an admin of the org' }, user.session);
    expect(key.statusCode).toBe(201);
    await context.services.db.withOrg(user.orgId, (tx) => tx.query(`UPDATE users SET role = 'super_admin' WHERE id = $1`, [user.userId]));
    const reset = await context.app.inject({ method: 'DELETE', url: `/api/v1/users/${user.userId}/totp`, headers: { authorization: `Bearer ${key.json().api_key as string}` } });
    expect(reset.statusCode).toBe(403);
    expect(reset.json().error.code).toBe('ROLE_INSUFFICIENT');
    // The second factor still stands.
    expect((await firstStep(user.email)).length).toBeGreaterThan(0);
  });

  it('refuses a second enrolment while TOTP is active, and a wrong first code', async () => {
    const user = await enrolledUser();
    const again = await post('/api/v1/auth/totp/enroll', {}, user.session);
    expect(again.statusCode).toBe(409);
    const email = `totp-${randomUUID().slice(0, 8)}@example.org`;
    const registered = await post('/api/v1/auth/register', { email, password: PASSWORD, org_name: 'TOTP org' });
    const session = registered.json().token as string;
    const enrolment = await post('/api/v1/auth/totp/enroll', {}, session);
    const secret = new URL(enrolment.json().otpauth_uri as string).searchParams.get('secret')!;
    const wrong = await post('/api/v1/auth/totp/confirm', { code: (Number(await generate({ secret })) ^ 3).toString().padStart(6, '0') }, session);
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error.code).toBe('MFA_CODE_INVALID');
    // Not confirmed: password alone still signs in.
    expect(typeof (await post('/api/v1/auth/login', { email, password: PASSWORD })).json().token).toBe('string');
  });
});
