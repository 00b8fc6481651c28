/**
 * OIDC sign-in against a real OpenID provider started by the test (oidc-provider): svc redirects
 * the browser to the provider with PKCE, state and nonce; the provider signs the user in (the
 * test's interaction endpoint logs in the chosen account and grants consent) and redirects back;
 * svc exchanges the code, verifies the ID token and signs the user in. The browser is played by
 * fetch with a cookie jar. Refused: a wrong or reused state, a callback from another browser, an
 * ID token for another audience or signed with another key (the provider's token answer altered
 * in flight), a domain that is not allowed.
 */
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { decodeJwt, generateKeyPair, importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { samlKeyPair, startOidcProvider, type OidcProvider } from '../helpers/identity-providers.ts';

let context: TestContext;
let base: string;
let idp: OidcProvider;
let issuer: string;
let org: { orgId: string; apiKey: string };
let CLIENT: { client_id: string; client_secret: string };
let browsers = 0;

/**
 * A browser (its own client address: svc trusts X-Forwarded-For here, as behind a load balancer,
 * and the anonymous per-address rate limit is not what these tests are about): svc's start
 * endpoint, then the provider, until the redirect back to svc's callback (returned, with svc's
 * cookie, not yet called).
 */
async function signInAtProvider(email: string, orgId = org.orgId): Promise<{ callback: string; cookie: string; address: string }> {
  browsers++;
  const address = `10.7.${browsers >> 8}.${browsers & 255}`;
  const start = await fetch(`${base}/api/v1/auth/oidc/${orgId}/start`, { redirect: 'manual', headers: { 'x-forwarded-for': address } });
  if (start.status !== 302) throw new Error(`start: ${start.status} ${await start.text()}`);
  const cookie = start.headers.getSetCookie()[0]!.split(';')[0]!;
  const callback = await idp.signIn(start.headers.get('location')!, email, `${base}/api/v1/auth/oidc/${orgId}/callback`);
  return { callback, cookie, address };
}

async function callback(url: string, cookie: string | null, address = '10.6.0.1') {
  return fetch(url, { headers: { 'x-forwarded-for': address, ...(cookie === null ? {} : { cookie }) } });
}

/** A sign-in whose ID token the provider's token answer carries altered by `alter`: svc's answer to the callback. */
async function refusalOfAlteredToken(alter: (idToken: string) => Promise<string>): Promise<{ status: number; code: string; reason: string }> {
  idp.tamper = alter;
  try {
    const flow = await signInAtProvider(`oidc-${randomUUID().slice(0, 8)}@corp.example`);
    const answer = await callback(flow.callback, flow.cookie, flow.address);
    const { code, reason } = ((await answer.json()) as { error: { code: string; reason: string } }).error;
    return { status: answer.status, code, reason };
  } finally {
    idp.tamper = null;
  }
}

beforeAll(async () => {
  idp = await startOidcProvider();
  issuer = idp.issuer;
  CLIENT = idp.client;
  context = await createTestApp({ env: { TRUST_PROXY: 'true' } });
  await context.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(context.app.server.address() as AddressInfo).port}`;
  // A Starter org: OIDC is not gated by plan (docs/decisions.md).
  org = await context.createOrg();
  await idp.register([`${base}/api/v1/auth/oidc/${org.orgId}/callback`]);
  const saved = await fetch(`${base}/api/v1/sso/oidc`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ issuer, ...CLIENT, allowed_domains: ['corp.example'], default_role: 'viewer' }),
  });
  expect(saved.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await context?.close();
  await idp?.close();
});

describe('OIDC sign-in', () => {
  it('keeps the client secret encrypted and answers it masked', async () => {
    const view = await fetch(`${base}/api/v1/sso/oidc`, { headers: { authorization: `Bearer ${org.apiKey}` } });
    const body = (await view.json()) as { client_secret: string; issuer: string };
    expect(body.issuer).toBe(issuer);
    expect(body.client_secret).toBe(`••••${CLIENT.client_secret.slice(-4)}`);
    const stored = await context.services.db.query<{ secret_ciphertext: string }>(`SELECT secret_ciphertext FROM sso_connections WHERE kind = 'oidc'`);
    expect(stored.rows[0]!.secret_ciphertext).not.toContain(CLIENT.client_secret);
  });

  it('redirects to the provider with PKCE, state and nonce, and signs a new user of an allowed domain in with the configured role', async () => {
    const start = await fetch(`${base}/api/v1/auth/oidc/${org.orgId}/start`, { redirect: 'manual', headers: { 'x-forwarded-for': '10.6.0.2' } });
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get('location')!);
    expect(authorize.origin).toBe(issuer);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('state')).toBeTruthy();
    expect(authorize.searchParams.get('nonce')).toBeTruthy();
    expect(start.headers.get('set-cookie')).toMatch(/svc_sso_browser=.*HttpOnly/);

    const email = `oidc-${randomUUID().slice(0, 8)}@corp.example`;
    const { callback: url, cookie } = await signInAtProvider(email);
    const answer = await callback(url, cookie, '10.6.0.3');
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { user_id: string; org_id: string; role: string; token: string };
    expect(body.org_id).toBe(org.orgId);
    expect(body.role).toBe('viewer');
    const whoami = await fetch(`${base}/api/v1/whoami`, { headers: { authorization: `Bearer ${body.token}` } });
    expect(((await whoami.json()) as { user_id: string }).user_id).toBe(body.user_id);
    // The same person again: the same user.
    const again = await signInAtProvider(email);
    expect(((await (await callback(again.callback, again.cookie, again.address)).json()) as { user_id: string }).user_id).toBe(body.user_id);
  });

  it('sends a browser (it asks for HTML) on to the dashboard with the session cookie instead of the JSON answer', async () => {
    const email = `oidc-${randomUUID().slice(0, 8)}@corp.example`;
    const flow = await signInAtProvider(email);
    const answer = await fetch(flow.callback, { redirect: 'manual', headers: { 'x-forwarded-for': flow.address, cookie: flow.cookie, accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8' } });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe('/dashboard/');
    const session = answer.headers.getSetCookie().find((line) => line.startsWith('svc_session='));
    expect(session).toMatch(/HttpOnly/);
    const resumed = await fetch(`${base}/api/v1/auth/session`, { headers: { cookie: session!.split(';')[0]! } });
    expect(resumed.status).toBe(200);
    expect(((await resumed.json()) as { user: { email: string }; session: { method: string } })).toMatchObject({ user: { email }, session: { method: 'oidc' } });
  });

  it('refuses a wrong state, a state used twice, and a callback from another browser', async () => {
    const email = `oidc-${randomUUID().slice(0, 8)}@corp.example`;
    const first = await signInAtProvider(email);
    const wrong = new URL(first.callback);
    wrong.searchParams.set('state', 'forged-state-value');
    const refused = await callback(wrong.href, first.cookie, first.address);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('SSO_STATE_INVALID');

    const otherBrowser = await signInAtProvider(email);
    const noCookie = await callback(otherBrowser.callback, null, otherBrowser.address);
    expect(((await noCookie.json()) as { error: { code: string } }).error.code).toBe('SSO_STATE_INVALID');

    const used = await signInAtProvider(email);
    expect((await callback(used.callback, used.cookie, used.address)).status).toBe(200);
    const reused = await callback(used.callback, used.cookie, used.address);
    expect(reused.status).toBe(400);
    expect(((await reused.json()) as { error: { code: string } }).error.code).toBe('SSO_STATE_INVALID');
  });

  it('refuses an ID token for another audience, even one the provider signed', async () => {
    const signed = async (idToken: string) =>
      new SignJWT({ ...decodeJwt(idToken), aud: 'another-client' }).setProtectedHeader({ alg: 'ES256', kid: 'idp-key' }).sign(await importJWK(idp.privateJwk, 'ES256'));
    expect(await refusalOfAlteredToken(signed)).toEqual({ status: 401, code: 'SSO_ASSERTION_INVALID', reason: 'audience' });
  });

  it('refuses an ID token signed with a key the provider does not publish', async () => {
    const { privateKey: forger } = await generateKeyPair('ES256');
    const forged = async (idToken: string) => new SignJWT({ ...decodeJwt(idToken), email: 'ceo@corp.example' }).setProtectedHeader({ alg: 'ES256', kid: 'idp-key' }).sign(forger);
    expect(await refusalOfAlteredToken(forged)).toEqual({ status: 401, code: 'SSO_ASSERTION_INVALID', reason: 'signature' });
  });

  it('signs no one in by an e-mail the provider does not assert verified, neither linking an existing user nor creating one', async () => {
    // svc links by e-mail: a provider that lets its users type an address unchecked must not
    // sign one of them in as the org's user of that address.
    const existing = `member-${randomUUID().slice(0, 8)}@corp.example`;
    await context.services.db.withOrg(org.orgId, (tx) =>
      tx.query(`INSERT INTO users (id, org_id, email, password_hash, role) VALUES ($1, $2, $3, NULL, 'admin')`, [randomUUID(), org.orgId, existing]),
    );
    const fresh = `oidc-${randomUUID().slice(0, 8)}@corp.example`;
    try {
      for (const verified of [undefined, false]) {
        idp.emailVerified = verified;
        for (const email of [existing, fresh]) {
          const flow = await signInAtProvider(email);
          const answer = await callback(flow.callback, flow.cookie, flow.address);
          expect(answer.status).toBe(401);
          expect(((await answer.json()) as { error: { code: string; reason: string } }).error).toMatchObject({ code: 'SSO_ASSERTION_INVALID', reason: 'email_unverified' });
        }
      }
    } finally {
      idp.emailVerified = true;
    }
    const created = await context.services.db.query(`SELECT 1 FROM users WHERE email = $1`, [fresh]);
    expect(created.rows).toHaveLength(0);
    // Verified, the same existing user signs in.
    const flow = await signInAtProvider(existing);
    const answer = await callback(flow.callback, flow.cookie, flow.address);
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { role: string }).role).toBe('admin');
  });

  it('creates no user for a domain that is not allowed', async () => {
    const flow = await signInAtProvider(`oidc-${randomUUID().slice(0, 8)}@elsewhere.example`);
    const answer = await callback(flow.callback, flow.cookie, flow.address);
    expect(answer.status).toBe(403);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('SSO_DOMAIN_NOT_ALLOWED');
  });

  it("does not sign a super_admin in, even one of the org whose admin set up the provider", async () => {
    // The org's admin controls what the provider asserts; signing its super_admin in would let
    // the admin become one (and change the plan), which only a super_admin may grant.
    const email = `boss-${randomUUID().slice(0, 8)}@corp.example`;
    await context.services.db.withOrg(org.orgId, (tx) =>
      tx.query(`INSERT INTO users (id, org_id, email, password_hash, role) VALUES ($1, $2, $3, NULL, 'super_admin')`, [randomUUID(), org.orgId, email]),
    );
    const flow = await signInAtProvider(email);
    const answer = await callback(flow.callback, flow.cookie, flow.address);
    expect(answer.status).toBe(403);
    const error = ((await answer.json()) as { error: { code: string; reason: string } }).error;
    expect(error.code).toBe('SSO_DOMAIN_NOT_ALLOWED');
    expect(error.reason).toBe('super_admin');
  });

  it('keeps the stored client secret only for the same issuer: moving to another issuer needs the secret again', async () => {
    // Kept, the secret would be sent to the new issuer's token endpoint at the next sign-in, so an
    // admin could read it there although svc never answers it.
    const other = await startOidcProvider({ client_id: CLIENT.client_id, client_secret: 'another-secret-for-another-provider-0123' });
    try {
      await other.register([`${base}/api/v1/auth/oidc/${org.orgId}/callback`]);
      const put = (body: Record<string, unknown>) =>
        fetch(`${base}/api/v1/sso/oidc`, { method: 'PUT', headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const moved = await put({ issuer: other.issuer, client_id: CLIENT.client_id, allowed_domains: ['corp.example'] });
      expect(moved.status).toBe(400);
      const error = ((await moved.json()) as { error: { code: string; field: string } }).error;
      expect(error.code).toBe('VALIDATION_FAILED');
      expect(error.field).toBe('client_secret');
      const view = (await (await fetch(`${base}/api/v1/sso/oidc`, { headers: { authorization: `Bearer ${org.apiKey}` } })).json()) as { issuer: string };
      expect(view.issuer).toBe(issuer);
      // The same issuer keeps the stored secret.
      expect((await put({ issuer, client_id: CLIENT.client_id, allowed_domains: ['corp.example'] })).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('refuses an issuer on a private address where private targets are not allowed', async () => {
    const strict = await createTestApp({ env: { ALLOW_PRIVATE_TARGETS: 'false' } });
    try {
      const other = await strict.createOrg();
      const saved = await strict.app.inject({ method: 'PUT', url: '/api/v1/sso/oidc', headers: { authorization: `Bearer ${other.apiKey}` }, payload: { issuer, ...CLIENT } });
      expect(saved.statusCode).toBe(403);
      expect(saved.json().error.code).toBe('TARGET_FORBIDDEN');
    } finally {
      await strict.close();
    }
  });
});

describe('the addresses an identity provider sends sign-ins to', () => {
  const errorCode = (answer: { json(): unknown }) => (answer.json() as { error: { code: string } }).error.code;
  /** A SAML connection saved without acs_url and sp_entity_id, under a Host the client chose. */
  const samlUnderForgedHost = (target: TestContext, apiKey: string) =>
    target.app.inject({
      method: 'PUT',
      url: '/api/v1/sso/saml',
      headers: { host: 'evil.example', authorization: `Bearer ${apiKey}` },
      payload: { idp_entity_id: 'https://idp.example.test', sso_url: 'https://idp.example.test/sso', certificate: samlKeyPair('forged-host-idp').cert },
    });

  it('refuses to start a sign-in under a Host that is not loopback while PUBLIC_URL is not set, so a forged Host cannot choose the redirect_uri', async () => {
    const forged = await context.app.inject({ method: 'GET', url: `/api/v1/auth/oidc/${org.orgId}/start`, headers: { host: 'evil.example' } });
    expect(forged.statusCode).toBe(403);
    expect(errorCode(forged)).toBe('SSO_PUBLIC_URL_REQUIRED');
    // Behind the trusted proxy (TRUST_PROXY=true here) the forwarded host is the one judged.
    const forwarded = await fetch(`${base}/api/v1/auth/oidc/${org.orgId}/start`, { redirect: 'manual', headers: { 'x-forwarded-for': '10.6.1.1', 'x-forwarded-host': 'evil.example' } });
    expect(forwarded.status).toBe(403);
    expect(forwarded.headers.get('location')).toBeNull();
    // A SAML connection saved without its own ACS address would take it from the Host too.
    const enterprise = await context.createOrg({ plan: 'enterprise' });
    const saml = await samlUnderForgedHost(context, enterprise.apiKey);
    expect(saml.statusCode).toBe(403);
    expect(errorCode(saml)).toBe('SSO_PUBLIC_URL_REQUIRED');
  });

  it('builds the redirect_uri and the SAML ACS from PUBLIC_URL when it is set, whatever the Host says', async () => {
    const publicUrl = 'https://svc.example.test';
    const deployed = await createTestApp({ env: { PUBLIC_URL: `${publicUrl}/` } });
    try {
      const other = await deployed.createOrg({ plan: 'enterprise' });
      const saved = await deployed.app.inject({ method: 'PUT', url: '/api/v1/sso/oidc', headers: { host: 'evil.example', authorization: `Bearer ${other.apiKey}` }, payload: { issuer, ...CLIENT } });
      expect(saved.statusCode).toBe(200);
      const start = await deployed.app.inject({ method: 'GET', url: `/api/v1/auth/oidc/${other.orgId}/start`, headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example' } });
      expect(start.statusCode).toBe(302);
      const authorize = new URL(start.headers.location as string);
      expect(authorize.origin).toBe(issuer);
      expect(authorize.searchParams.get('redirect_uri')).toBe(`${publicUrl}/api/v1/auth/oidc/${other.orgId}/callback`);
      const saml = await samlUnderForgedHost(deployed, other.apiKey);
      expect(saml.statusCode).toBe(200);
      expect(saml.json()).toMatchObject({ acs_url: `${publicUrl}/api/v1/auth/saml/${other.orgId}/acs`, sp_entity_id: `${publicUrl}/api/v1/auth/saml/${other.orgId}/metadata` });
    } finally {
      await deployed.close();
    }
  });
});
