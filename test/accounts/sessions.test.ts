/**
 * Dashboard sessions: the cookies a sign-in sets, CSRF on cookie-authenticated state changes,
 * sign-out, revocation on password change and removal, and the idle and absolute timeouts.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { finishSignIn } from '../../src/accounts/index.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { bearer, invite, nextAddress, PASSWORD, register, type Person } from './people.ts';

let context: TestContext;
let owner: Person;

beforeAll(async () => {
  context = await createTestApp();
  owner = await register(context);
});
afterAll(async () => context.close());

interface SignedIn {
  token: string;
  csrf: string;
  /** The Cookie header a browser would send back. */
  cookie: string;
}

async function login(email: string, password = PASSWORD): Promise<SignedIn> {
  const response = await context.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password }, remoteAddress: nextAddress() });
  expect(response.statusCode, response.body).toBe(200);
  const cookies = Object.fromEntries(response.cookies.map((cookie) => [cookie.name, cookie.value]));
  return { token: response.json().token, csrf: cookies.svc_csrf!, cookie: `svc_session=${cookies.svc_session}; svc_csrf=${cookies.svc_csrf}` };
}

const sessionOf = (cookie: string) => context.app.inject({ method: 'GET', url: '/api/v1/auth/session', headers: { cookie } });

describe('signing in', () => {
  it('sets an HttpOnly, Secure, SameSite=Strict session cookie and a readable CSRF cookie, and keeps the JSON token', async () => {
    const response = await context.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: owner.email, password: PASSWORD }, remoteAddress: nextAddress() });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ user_id: owner.userId, org_id: owner.orgId, role: 'admin', method: 'password' });
    expect(body.token.split('.')).toHaveLength(3);
    const session = response.cookies.find((cookie) => cookie.name === 'svc_session')!;
    const csrf = response.cookies.find((cookie) => cookie.name === 'svc_csrf')!;
    expect(session).toMatchObject({ value: body.token, httpOnly: true, secure: true, sameSite: 'Strict', path: '/', maxAge: 12 * 3600 });
    expect(csrf).toMatchObject({ value: body.csrf_token, secure: true, sameSite: 'Strict', path: '/' });
    expect(csrf.httpOnly).toBeFalsy();
    // The bearer token from the JSON answer works as before (the CLI and scripts use it).
    expect((await context.app.inject({ method: 'GET', url: '/api/v1/org', headers: bearer(body.token) })).statusCode).toBe(200);
  });

  it('answers the session by cookie alone: user, role, org, plan and the CSRF token of the cookie', async () => {
    const signedIn = await login(owner.email);
    const response = await sessionOf(signedIn.cookie);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      user: { user_id: owner.userId, email: owner.email, role: 'admin' },
      role: 'admin',
      org: { id: owner.orgId },
      plan: 'starter',
      session: { method: 'password' },
      csrf_token: signedIn.csrf,
    });
  });

  it('refuses the session endpoints to an API key (SESSION_REQUIRED)', async () => {
    const org = await context.createOrg();
    const response = await context.app.inject({ method: 'GET', url: '/api/v1/auth/session', headers: bearer(org.apiKey) });
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('SESSION_REQUIRED');
  });
});

describe('CSRF', () => {
  it('refuses a cookie-authenticated state change without the token, and with a wrong one, and changes nothing', async () => {
    const signedIn = await login(owner.email);
    const before = (await context.services.accounts.listKeys(owner.orgId)).length;
    const missing = await context.app.inject({ method: 'POST', url: '/api/v1/keys', headers: { cookie: signedIn.cookie }, payload: { scope: 'read' } });
    expect(missing.statusCode).toBe(403);
    expect(missing.json().error).toMatchObject({ code: 'CSRF_TOKEN_INVALID', reason: 'missing' });
    const other = await login(owner.email);
    const wrong = await context.app.inject({ method: 'POST', url: '/api/v1/keys', headers: { cookie: signedIn.cookie, 'x-csrf-token': other.csrf }, payload: { scope: 'read' } });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json().error).toMatchObject({ code: 'CSRF_TOKEN_INVALID', reason: 'mismatch' });
    expect(await context.services.accounts.listKeys(owner.orgId)).toHaveLength(before);
  });

  it('accepts the cookie-authenticated state change with the session CSRF token in X-CSRF-Token', async () => {
    const signedIn = await login(owner.email);
    const response = await context.app.inject({ method: 'POST', url: '/api/v1/keys', headers: { cookie: signedIn.cookie, 'x-csrf-token': signedIn.csrf }, payload: { scope: 'read' } });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().created_by).toBe(`user:${owner.userId}`);
  });

  it('leaves bearer-authenticated calls alone: no CSRF token needed, even with the cookie sent too', async () => {
    const signedIn = await login(owner.email);
    const response = await context.app.inject({ method: 'POST', url: '/api/v1/keys', headers: { ...bearer(signedIn.token), cookie: signedIn.cookie }, payload: { scope: 'read' } });
    expect(response.statusCode, response.body).toBe(201);
  });

  it('holds the MCP proxy, the OpenAI-compatible surface and form-encodable bodies to the same rule', async () => {
    const signedIn = await login(owner.email);
    const surfaces = [
      { method: 'POST' as const, url: `/mcp/${randomUUID()}`, headers: { 'content-type': 'application/json' }, payload: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' },
      { method: 'POST' as const, url: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, payload: '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}' },
      { method: 'POST' as const, url: '/api/v1/keys', headers: { 'content-type': 'text/plain' }, payload: '{"scope":"read"}' },
      { method: 'POST' as const, url: '/api/v1/keys', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'scope=read' },
      { method: 'DELETE' as const, url: `/api/v1/users/${owner.userId}`, headers: {} },
    ];
    for (const surface of surfaces) {
      const response = await context.app.inject({ ...surface, headers: { ...surface.headers, cookie: signedIn.cookie } });
      expect(response.statusCode, `${surface.method} ${surface.url}`).toBe(403);
      // The OpenAI-compatible surface answers in OpenAI's error shape (the code in lower case).
      expect(String(response.json().error.code).toUpperCase()).toBe('CSRF_TOKEN_INVALID');
    }
  });

  it('needs no token for a cookie-authenticated read', async () => {
    const signedIn = await login(owner.email);
    expect((await context.app.inject({ method: 'GET', url: '/api/v1/keys', headers: { cookie: signedIn.cookie } })).statusCode).toBe(200);
  });
});

describe('ending sessions', () => {
  it('signs out: the session is revoked server-side and both cookies are cleared', async () => {
    const signedIn = await login(owner.email);
    const response = await context.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { cookie: signedIn.cookie, 'x-csrf-token': signedIn.csrf } });
    expect(response.statusCode).toBe(204);
    const cleared = Object.fromEntries(response.cookies.map((cookie) => [cookie.name, cookie]));
    expect(cleared.svc_session?.value).toBe('');
    expect(cleared.svc_csrf?.value).toBe('');
    // The old cookie, replayed, and the same token as a bearer: both refused.
    expect((await sessionOf(signedIn.cookie)).statusCode).toBe(401);
    const replay = await context.app.inject({ method: 'GET', url: '/api/v1/org', headers: bearer(signedIn.token) });
    expect(replay.statusCode).toBe(401);
    expect(replay.json().error.code).toBe('AUTH_INVALID');
  });

  it('revokes every session of the user on a password change, and signs the caller in again', async () => {
    const person = await invite(context, owner.token, 'operator');
    const elsewhere = await login(person.email);
    const wrong = await context.app.inject({ method: 'POST', url: '/api/v1/auth/password', headers: bearer(person.token), payload: { current_password: 'not the password', new_password: 'a new long passphrase' } });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json().error.code).toBe('PASSWORD_INCORRECT');
    expect((await sessionOf(elsewhere.cookie)).statusCode).toBe(200);

    const changed = await context.app.inject({ method: 'POST', url: '/api/v1/auth/password', headers: bearer(person.token), payload: { current_password: PASSWORD, new_password: 'a new long passphrase' } });
    expect(changed.statusCode, changed.body).toBe(200);
    for (const old of [person.token, elsewhere.token]) {
      expect((await context.app.inject({ method: 'GET', url: '/api/v1/org', headers: bearer(old) })).statusCode).toBe(401);
    }
    expect((await sessionOf(elsewhere.cookie)).statusCode).toBe(401);
    expect((await context.app.inject({ method: 'GET', url: '/api/v1/org', headers: bearer(changed.json().token) })).statusCode).toBe(200);
    const oldPassword = await context.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: person.email, password: PASSWORD }, remoteAddress: nextAddress() });
    expect(oldPassword.json().error.code).toBe('LOGIN_FAILED');
    await login(person.email, 'a new long passphrase');
  });

  it('revokes every session of a removed user', async () => {
    const person = await invite(context, owner.token, 'viewer');
    const elsewhere = await login(person.email);
    const removed = await context.app.inject({ method: 'DELETE', url: `/api/v1/users/${person.userId}`, headers: bearer(owner.token) });
    expect(removed.statusCode).toBe(204);
    expect((await context.app.inject({ method: 'GET', url: '/api/v1/org', headers: bearer(person.token) })).statusCode).toBe(401);
    expect((await sessionOf(elsewhere.cookie)).statusCode).toBe(401);
    const again = await context.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: person.email, password: PASSWORD }, remoteAddress: nextAddress() });
    expect(again.json().error.code).toBe('LOGIN_FAILED');
  });
});

describe('a sign-in racing a role change or a removal', () => {
  // A sign-in reads the user, then checks the credential (argon2: tens of milliseconds), then opens
  // the session. An admin's change that lands in between is modelled by finishing the sign-in with
  // the user as it was read before the change.
  const reply = { setCookie: () => undefined, clearCookie: () => undefined };

  it('opens the session with the role the user holds when it opens, not the one read before a demotion', async () => {
    const person = await invite(context, owner.token, 'admin');
    const demoted = await context.app.inject({ method: 'PATCH', url: `/api/v1/users/${person.userId}`, headers: bearer(owner.token), payload: { role: 'viewer' } });
    expect(demoted.statusCode, demoted.body).toBe(200);
    const signedIn = await finishSignIn({ server: context.app }, reply, { userId: person.userId, orgId: person.orgId, role: 'admin' }, 'password');
    expect(signedIn.role).toBe('viewer');
    const session = await context.app.inject({ method: 'GET', url: '/api/v1/auth/session', headers: bearer(signedIn.token) });
    expect(session.json().role).toBe('viewer');
    const invitation = await context.app.inject({ method: 'POST', url: '/api/v1/users/invitations', headers: bearer(signedIn.token), payload: { email: `late-${randomUUID().slice(0, 8)}@example.com`, role: 'admin' } });
    expect(invitation.statusCode).toBe(403);
    expect(invitation.json().error.code).toBe('SCOPE_INSUFFICIENT');
  });

  it('opens no session for a password sign-in whose password was changed while it was being checked', async () => {
    const person = await invite(context, owner.token, 'operator');
    const checked = await context.services.db.withOrg(person.orgId, (tx) => tx.query('SELECT password_hash FROM users WHERE id = $1', [person.userId]));
    const oldHash = checked.rows[0]!.password_hash as string;
    const changed = await context.app.inject({ method: 'POST', url: '/api/v1/auth/password', headers: bearer(person.token), payload: { current_password: PASSWORD, new_password: 'a changed long passphrase' } });
    expect(changed.statusCode, changed.body).toBe(200);
    const late = finishSignIn({ server: context.app }, reply, { userId: person.userId, orgId: person.orgId, role: 'operator', passwordHash: oldHash }, 'password');
    await expect(late).rejects.toMatchObject({ code: 'AUTH_INVALID' });
    // Only the session the change itself opened is live.
    const rows = await context.services.db.withOrg(person.orgId, (tx) => tx.query('SELECT id FROM user_sessions WHERE user_id = $1 AND revoked_at IS NULL', [person.userId]));
    expect(rows.rows).toHaveLength(1);
  });

  it('opens no session for a user removed while the credential was being checked', async () => {
    const person = await invite(context, owner.token, 'operator');
    const removed = await context.app.inject({ method: 'DELETE', url: `/api/v1/users/${person.userId}`, headers: bearer(owner.token) });
    expect(removed.statusCode).toBe(204);
    const late = finishSignIn({ server: context.app }, reply, { userId: person.userId, orgId: person.orgId, role: 'operator' }, 'password');
    await expect(late).rejects.toMatchObject({ code: 'AUTH_INVALID' });
    const rows = await context.services.db.withOrg(person.orgId, (tx) => tx.query('SELECT id FROM user_sessions WHERE user_id = $1 AND revoked_at IS NULL', [person.userId]));
    expect(rows.rows).toHaveLength(0);
  });
});

describe('timeouts', () => {
  it('ends a session left idle longer than the idle timeout, and keeps one in use', async () => {
    const idle = await login(owner.email);
    const active = await login(owner.email);
    const idleId = (await sessionOf(idle.cookie)).json().session.session_id as string;
    const activeId = (await sessionOf(active.cookie)).json().session.session_id as string;
    // Last use 31 minutes ago for one (default idle timeout: 30 minutes), 29 minutes for the other.
    await context.services.db.query(`UPDATE user_sessions SET last_seen_at = now() - interval '31 minutes' WHERE id = $1`, [idleId]);
    await context.services.db.query(`UPDATE user_sessions SET last_seen_at = now() - interval '29 minutes' WHERE id = $1`, [activeId]);
    const expired = await sessionOf(idle.cookie);
    expect(expired.statusCode).toBe(401);
    expect(expired.json().error.code).toBe('AUTH_INVALID');
    expect((await sessionOf(active.cookie)).statusCode).toBe(200);
    // That use moved its idle deadline forward: 30 minutes from now again.
    const deadline = Date.parse((await sessionOf(active.cookie)).json().session.idle_expires_at as string);
    expect(deadline).toBeGreaterThan(Date.now() + 25 * 60_000);
  });

  it('ends a session past its absolute timeout however recently it was used', async () => {
    const signedIn = await login(owner.email);
    const id = (await sessionOf(signedIn.cookie)).json().session.session_id as string;
    await context.services.db.query(`UPDATE user_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    expect((await sessionOf(signedIn.cookie)).statusCode).toBe(401);
  });

  it('forgets a user\'s unusable sessions (revoked, expired, idle) at their next sign-in, and keeps the live ones', async () => {
    const person = await invite(context, owner.token, 'viewer');
    const live = await login(person.email);
    const [revoked, expired, idle] = [await login(person.email), await login(person.email), await login(person.email)];
    const ids = async (cookie: string) => (await sessionOf(cookie)).json().session.session_id as string;
    const [liveId, revokedId, expiredId, idleId] = [await ids(live.cookie), await ids(revoked.cookie), await ids(expired.cookie), await ids(idle.cookie)];
    await context.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(revoked.token) });
    await context.services.db.query(`UPDATE user_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [expiredId]);
    await context.services.db.query(`UPDATE user_sessions SET last_seen_at = now() - interval '31 minutes' WHERE id = $1`, [idleId]);
    await login(person.email);
    const rows = await context.services.db.query<{ id: string }>('SELECT id FROM user_sessions WHERE id = ANY($1::uuid[])', [[liveId, revokedId, expiredId, idleId]]);
    expect(rows.rows.map((row) => row.id)).toEqual([liveId]);
    expect((await sessionOf(live.cookie)).statusCode).toBe(200);
  });

  it('reads the idle timeout from configuration', async () => {
    const short = await createTestApp({ env: { SESSION_IDLE_TIMEOUT_MINUTES: '5', SESSION_ABSOLUTE_TIMEOUT_HOURS: '2' } });
    try {
      const person = await register(short);
      const response = await short.app.inject({ method: 'GET', url: '/api/v1/auth/session', headers: bearer(person.token) });
      const { session } = response.json();
      expect(Date.parse(session.idle_expires_at) - Date.now()).toBeLessThanOrEqual(5 * 60_000);
      expect(Date.parse(session.expires_at) - Date.parse(session.created_at)).toBeGreaterThan(2 * 3_600_000 - 5_000);
      expect(Date.parse(session.expires_at) - Date.parse(session.created_at)).toBeLessThanOrEqual(2 * 3_600_000 + 1_000);
      const id = session.session_id as string;
      await short.services.db.query(`UPDATE user_sessions SET last_seen_at = now() - interval '6 minutes' WHERE id = $1`, [id]);
      expect((await short.app.inject({ method: 'GET', url: '/api/v1/org', headers: bearer(person.token) })).statusCode).toBe(401);
    } finally {
      await short.close();
    }
  });
});

describe('during a database outage', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After to cookie and bearer sessions, sign-in and sign-out', async () => {
    const signedIn = await login(owner.email);
    const refused = () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    const { db } = context.services;
    vi.spyOn(db, 'query').mockImplementation(refused);
    vi.spyOn(db, 'withOrg').mockImplementation(refused);
    vi.spyOn(db, 'transaction').mockImplementation(refused);
    const calls = [
      context.app.inject({ method: 'GET', url: '/api/v1/auth/session', headers: { cookie: signedIn.cookie } }),
      context.app.inject({ method: 'GET', url: '/api/v1/org', headers: bearer(signedIn.token) }),
      context.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { cookie: signedIn.cookie, 'x-csrf-token': signedIn.csrf } }),
      context.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: owner.email, password: PASSWORD }, remoteAddress: nextAddress() }),
    ];
    for (const response of await Promise.all(calls)) {
      expect(response.statusCode, response.body).toBe(503);
      expect(response.json().error.code).toBe('SERVICE_UNAVAILABLE');
      expect(response.headers['retry-after']).toBeDefined();
    }
  });
});
