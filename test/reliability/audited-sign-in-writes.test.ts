/**
 * Sign-in changes and their audit entries are one transaction: an OIDC connection saved or
 * removed, a user created just in time by an OIDC sign-in, TOTP activated or reset by an admin.
 * When the entry cannot be appended (an outage; a lock conflict that persists) nothing is stored
 * and the caller is answered 503 with Retry-After; sent again, the change and its entry are stored
 * once. Before, the change was committed first: a JIT user existed with no user.created entry
 * (its next sign-in found it and never recorded it), a second factor was reset unrecorded.
 * The OIDC provider is a real one started by the test (oidc-provider), as in sign-in-oidc.test.ts.
 */
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { generate } from 'otplib';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { startOidcProvider, type OidcProvider } from '../helpers/identity-providers.ts';
import { TOTP_MAX_FAILURES } from '../../src/accounts/index.ts';
import { chained, databaseOutage, expectUnavailable, failAppends, lockConflict } from './audited-writes.ts';

let context: TestContext;
let base: string;
let idp: OidcProvider;
let org: { orgId: string; apiKey: string };
let browsers = 0;

beforeAll(async () => {
  idp = await startOidcProvider();
  context = await createTestApp({ env: { TRUST_PROXY: 'true' } });
  await context.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(context.app.server.address() as AddressInfo).port}`;
  org = await context.createOrg();
  await idp.register([`${base}/api/v1/auth/oidc/${org.orgId}/callback`]);
}, 120_000);
afterAll(async () => {
  await context?.close();
  await idp?.close();
});
afterEach(() => vi.restoreAllMocks());

const saveOidc = (allowed: string[]) =>
  fetch(`${base}/api/v1/sso/oidc`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ issuer: idp.issuer, ...idp.client, allowed_domains: allowed, default_role: 'viewer' }),
  });
const oidcConnection = async () => (await context.services.db.query<{ settings: { allowed_domains: string[] } }>(`SELECT settings FROM sso_connections WHERE org_id = $1 AND kind = 'oidc'`, [org.orgId])).rows[0] ?? null;

/** A browser's sign-in at the provider and the callback to svc (from an address of its own). */
async function signIn(email: string): Promise<Response> {
  browsers++;
  const address = `10.8.${browsers >> 8}.${browsers & 255}`;
  const start = await fetch(`${base}/api/v1/auth/oidc/${org.orgId}/start`, { redirect: 'manual', headers: { 'x-forwarded-for': address } });
  expect(start.status).toBe(302);
  const cookie = start.headers.getSetCookie()[0]!.split(';')[0]!;
  const callback = await idp.signIn(start.headers.get('location')!, email, `${base}/api/v1/auth/oidc/${org.orgId}/callback`);
  return fetch(callback, { headers: { 'x-forwarded-for': address, cookie } });
}

/** A fetch Response in the shape expectUnavailable reads. */
async function answered(response: Response) {
  const body = (await response.json()) as { error: { code: string } };
  return { statusCode: response.status, headers: Object.fromEntries(response.headers), json: () => body };
}

describe('sign-in changes and their audit entries are stored together or not at all', () => {
  it('saves no OIDC connection when its sso.oidc.set entry meets an outage, and the retry saves it with one entry', async () => {
    failAppends(context.services.audit, 'sso.oidc.set', 1);
    expectUnavailable(await answered(await saveOidc(['corp.example'])));
    // Before: the connection was saved with no entry.
    expect(await oidcConnection()).toBeNull();
    vi.restoreAllMocks();

    expect((await saveOidc(['corp.example'])).status).toBe(200);
    expect((await oidcConnection())?.settings.allowed_domains).toEqual(['corp.example']);
    expect(await chained(context, org.orgId, 'sso.oidc.set')).toEqual([idp.issuer]);
  });

  it.each([
    ['an outage', databaseOutage, 1],
    ['a lock conflict that persists', lockConflict, 1_000],
  ] as const)('creates no just-in-time user when its user.created entry meets %s; the next sign-in creates it with one entry, as before', async (_what, failure, times) => {
    const email = `jit-${randomUUID().slice(0, 8)}@corp.example`;
    failAppends(context.services.audit, 'user.created', times, failure);
    expectUnavailable(await answered(await signIn(email)));
    // Before: the user was created with no user.created entry, and every later sign-in found it.
    expect(await context.services.accounts.members.findByEmail(org.orgId, email)).toBeNull();
    vi.restoreAllMocks();

    const again = await signIn(email);
    expect(again.status).toBe(200);
    const { user_id: userId, role } = (await again.json()) as { user_id: string; role: string };
    expect(role).toBe('viewer');
    expect((await context.services.accounts.members.findByEmail(org.orgId, email))?.user_id).toBe(userId);
    expect((await chained(context, org.orgId, 'user.created')).filter((target) => target === userId)).toHaveLength(1);
    // Signed in again: the same user, no second entry.
    expect(((await (await signIn(email)).json()) as { user_id: string }).user_id).toBe(userId);
    expect((await chained(context, org.orgId, 'user.created')).filter((target) => target === userId)).toHaveLength(1);
  });

  it('creates one just-in-time user when its entry loses a lock conflict once (tried again whole)', async () => {
    const email = `jit-${randomUUID().slice(0, 8)}@corp.example`;
    failAppends(context.services.audit, 'user.created', 1, lockConflict);
    const answer = await signIn(email);
    expect(answer.status).toBe(200);
    const { user_id: userId } = (await answer.json()) as { user_id: string };
    expect((await chained(context, org.orgId, 'user.created')).filter((target) => target === userId)).toHaveLength(1);
  });

  it('keeps the OIDC connection when its sso.oidc.removed entry meets an outage', async () => {
    const remove = () => fetch(`${base}/api/v1/sso/oidc`, { method: 'DELETE', headers: { authorization: `Bearer ${org.apiKey}` } });
    expect((await saveOidc(['corp.example'])).status).toBe(200);
    failAppends(context.services.audit, 'sso.oidc.removed', 1);
    expectUnavailable(await answered(await remove()));
    expect(await oidcConnection()).not.toBeNull();
    vi.restoreAllMocks();
    expect((await remove()).status).toBeLessThan(300);
    expect(await oidcConnection()).toBeNull();
    expect(await chained(context, org.orgId, 'sso.oidc.removed')).toHaveLength(1);
  });
});

describe('TOTP changes and their audit entries are stored together or not at all', () => {
  const PASSWORD = 'correct horse battery staple';
  let address = 0;
  const post = (url: string, payload: Record<string, unknown>, token?: string) => {
    address++;
    return context.app.inject({ method: 'POST', url, payload, headers: token === undefined ? {} : { authorization: `Bearer ${token}` }, remoteAddress: `10.9.${address >> 8}.${address & 255}` });
  };
  const enabledAt = async (orgId: string, userId: string) =>
    (await context.services.db.withOrg(orgId, (tx) => tx.query<{ totp_enabled_at: Date | null }>('SELECT totp_enabled_at FROM users WHERE id = $1', [userId]))).rows[0]?.totp_enabled_at ?? null;

  /** A registered admin with a TOTP enrolment started: its session, secret and ids. */
  async function enrolling() {
    const registered = await post('/api/v1/auth/register', { email: `totp-${randomUUID().slice(0, 8)}@example.org`, password: PASSWORD, org_name: 'TOTP org' });
    expect(registered.statusCode).toBe(201);
    const session = registered.json().token as string;
    const enrolment = await post('/api/v1/auth/totp/enroll', {}, session);
    expect(enrolment.statusCode).toBe(201);
    const secret = new URL(enrolment.json().otpauth_uri as string).searchParams.get('secret')!;
    return { session, secret, recoveryCodes: enrolment.json().recovery_codes as string[], orgId: registered.json().org_id as string, userId: registered.json().user_id as string };
  }

  it('leaves TOTP pending when its user.totp.enrolled entry meets an outage, and the confirmation sent again activates it with one entry', async () => {
    const user = await enrolling();
    const code = await generate({ secret: user.secret });
    failAppends(context.services.audit, 'user.totp.enrolled', 1);
    expectUnavailable(await post('/api/v1/auth/totp/confirm', { code }, user.session));
    // Before: TOTP was active with no entry, and the confirmation sent again answered CONFLICT.
    expect(await enabledAt(user.orgId, user.userId)).toBeNull();
    vi.restoreAllMocks();

    expect((await post('/api/v1/auth/totp/confirm', { code }, user.session)).statusCode).toBe(200);
    expect(await enabledAt(user.orgId, user.userId)).not.toBeNull();
    expect(await chained(context, user.orgId, 'user.totp.enrolled')).toEqual([user.userId]);
  });

  it('stores no TOTP lock when its user.totp.locked entry meets an outage; the next wrong answer locks, answered MFA_LOCKED, with one entry', async () => {
    const user = await enrolling();
    const right = await generate({ secret: user.secret });
    expect((await post('/api/v1/auth/totp/confirm', { code: right }, user.session)).statusCode).toBe(200);
    const email = (await context.services.db.withOrg(user.orgId, (tx) => tx.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [user.userId]))).rows[0]!.email;
    const wrong = (Number(right) ^ 7).toString().padStart(6, '0');
    const attempt = async () => {
      const login = await post('/api/v1/auth/login', { email, password: PASSWORD });
      expect(login.statusCode).toBe(200);
      return post('/api/v1/auth/login/totp', { mfa_token: login.json().mfa_token as string, code: wrong });
    };
    const state = async () =>
      (await context.services.db.withOrg(user.orgId, (tx) => tx.query<{ totp_failures: number; totp_locked_until: Date | null }>('SELECT totp_failures, totp_locked_until FROM users WHERE id = $1', [user.userId]))).rows[0]!;
    for (let i = 1; i < TOTP_MAX_FAILURES; i++) expect((await attempt()).json().error.code).toBe('MFA_CODE_INVALID');

    failAppends(context.services.audit, 'user.totp.locked', 2);
    expectUnavailable(await attempt());
    // Before: the lock was stored with no entry (and this call answered 503, not MFA_LOCKED).
    expect(await state()).toMatchObject({ totp_failures: TOTP_MAX_FAILURES, totp_locked_until: null });
    expect(await chained(context, user.orgId, 'user.totp.locked')).toEqual([]);
    // While the lock cannot be recorded no answer is checked, not even a right one: an outage of
    // the audit store gives no guess more (fail closed; a first version rolled the count back and
    // let a valid recovery code sign in here).
    const login = await post('/api/v1/auth/login', { email, password: PASSWORD });
    expectUnavailable(await post('/api/v1/auth/login/totp', { mfa_token: login.json().mfa_token as string, recovery_code: user.recoveryCodes[0] }));
    expect(await state()).toMatchObject({ totp_failures: TOTP_MAX_FAILURES, totp_locked_until: null });
    vi.restoreAllMocks();

    const locked = await attempt();
    expect(locked.statusCode).toBe(429);
    expect(locked.json().error.code).toBe('MFA_LOCKED');
    expect(Number(locked.headers['retry-after'])).toBe(locked.json().error.retry_after);
    expect((await state()).totp_locked_until).not.toBeNull();
    expect(await chained(context, user.orgId, 'user.totp.locked')).toEqual([user.userId]);
  });

  it("keeps a user's TOTP when the user.totp.reset entry meets an outage, and the admin's retry resets it with one entry", async () => {
    const user = await enrolling();
    expect((await post('/api/v1/auth/totp/confirm', { code: await generate({ secret: user.secret }) }, user.session)).statusCode).toBe(200);
    const reset = () => context.app.inject({ method: 'DELETE', url: `/api/v1/users/${user.userId}/totp`, headers: { authorization: `Bearer ${user.session}` } });
    failAppends(context.services.audit, 'user.totp.reset', 1);
    expectUnavailable(await reset());
    // Before: the second factor was removed with no entry.
    expect(await enabledAt(user.orgId, user.userId)).not.toBeNull();
    vi.restoreAllMocks();

    expect((await reset()).statusCode).toBe(204);
    expect(await enabledAt(user.orgId, user.userId)).toBeNull();
    expect(await chained(context, user.orgId, 'user.totp.reset')).toEqual([user.userId]);
  });
});
