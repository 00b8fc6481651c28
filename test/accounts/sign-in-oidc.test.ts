/**
 * OIDC sign-in against a real OpenID provider started by the test (oidc-provider): svc redirects
 * the browser to the provider with PKCE, state and nonce; the provider signs the user in (the
 * test's interaction endpoint logs in the chosen account and grants consent) and redirects back;
 * svc exchanges the code, verifies the ID token and signs the user in. The browser is played by
 * fetch with a cookie jar. Refused: a wrong or reused state, a callback from another browser, an
 * ID token for another audience or signed with another key (the provider's token answer altered
 * in flight), a domain that is not allowed.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { decodeJwt, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';

let context: TestContext;
let base: string;
let idp: Server;
let issuer: string;
let org: { orgId: string; apiKey: string };
let privateJwk: JWK;
/** The account the provider signs in next (its e-mail). */
let loginAs = '';
/** When set, rewrites the ID token of the provider's next token answers. */
let tamper: ((idToken: string) => Promise<string>) | null = null;
const CLIENT = { client_id: 'svc-dashboard', client_secret: 'svc-dashboard-secret-0123456789abcdef' };

async function startProvider(redirectUris: string[]): Promise<void> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  privateJwk = { ...(await exportJWK(privateKey)), kid: 'idp-key', alg: 'ES256', use: 'sig' };
  const provider = new Provider(issuer, {
    clients: [{ ...CLIENT, redirect_uris: redirectUris, grant_types: ['authorization_code'], response_types: ['code'], id_token_signed_response_alg: 'ES256' }],
    jwks: { keys: [privateJwk] },
    cookies: { keys: ['test-cookie-key-0123456789'] },
    conformIdTokenClaims: false,
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub, email: sub, email_verified: true }) }),
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    features: { devInteractions: { enabled: false } },
  });
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { id_token?: string } | undefined;
    if (ctx.path === '/token' && tamper !== null && typeof body?.id_token === 'string') ctx.body = { ...body, id_token: await tamper(body.id_token) };
  });
  const callback = provider.callback();
  idp.removeAllListeners('request');
  idp.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (request.url?.startsWith('/interaction/')) {
      void (async () => {
        const details = await provider.interactionDetails(request, response);
        const grant = new provider.Grant({ accountId: loginAs, clientId: details.params.client_id as string });
        grant.addOIDCScope('openid email profile');
        const grantId = await grant.save();
        await provider.interactionFinished(request, response, { login: { accountId: loginAs }, consent: { grantId } }, { mergeWithLastSubmission: false });
      })().catch((error: unknown) => response.writeHead(500).end(String(error)));
      return;
    }
    callback(request, response);
  });
}

/**
 * A browser: follows redirects from svc's start endpoint through the provider, keeping each
 * host's cookies, and stops at svc's callback URL (returned with svc's cookie, not yet called).
 */
async function signInAtProvider(email: string, orgId = org.orgId): Promise<{ callback: string; cookie: string; address: string }> {
  loginAs = email;
  // Each browser its own client address (svc trusts X-Forwarded-For here, as behind a load
  // balancer): the anonymous per-address rate limit is not what these tests are about.
  browsers++;
  const address = `10.7.${browsers >> 8}.${browsers & 255}`;
  const jars = new Map<string, Map<string, string>>();
  let url = `${base}/api/v1/auth/oidc/${orgId}/start`;
  for (let hop = 0; hop < 10; hop++) {
    const host = new URL(url).host;
    const jar = jars.get(host) ?? new Map<string, string>();
    jars.set(host, jar);
    const answer = await fetch(url, { redirect: 'manual', headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; '), 'x-forwarded-for': address } });
    for (const line of answer.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const separator = pair!.indexOf('=');
      jar.set(pair!.slice(0, separator), pair!.slice(separator + 1));
    }
    const location = answer.headers.get('location');
    if (location === null) throw new Error(`no redirect from ${url}: ${answer.status} ${await answer.text()}`);
    url = new URL(location, url).href;
    if (url.startsWith(`${base}/api/v1/auth/oidc/${orgId}/callback`)) {
      const svcJar = jars.get(new URL(base).host)!;
      return { callback: url, cookie: `svc_sso_browser=${svcJar.get('svc_sso_browser')}`, address };
    }
  }
  throw new Error('too many redirects');
}

let browsers = 0;

async function callback(url: string, cookie: string | null, address = '10.6.0.1') {
  return fetch(url, { headers: { 'x-forwarded-for': address, ...(cookie === null ? {} : { cookie }) } });
}

beforeAll(async () => {
  idp = createServer((_request, response) => response.writeHead(503).end());
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  context = await createTestApp({ env: { TRUST_PROXY: 'true' } });
  await context.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(context.app.server.address() as AddressInfo).port}`;
  // A Starter org: OIDC is not gated by plan (docs/decisions.md).
  org = await context.createOrg();
  await startProvider([`${base}/api/v1/auth/oidc/${org.orgId}/callback`]);
  const saved = await fetch(`${base}/api/v1/sso/oidc`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ issuer, ...CLIENT, allowed_domains: ['corp.example'], default_role: 'viewer' }),
  });
  expect(saved.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await context?.close();
  await new Promise((resolve) => idp?.close(resolve));
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
    tamper = async (idToken) => {
      const claims = decodeJwt(idToken);
      return new SignJWT({ ...claims, aud: 'another-client' }).setProtectedHeader({ alg: 'ES256', kid: 'idp-key' }).sign(await importJWK(privateJwk, 'ES256'));
    };
    try {
      const flow = await signInAtProvider(`oidc-${randomUUID().slice(0, 8)}@corp.example`);
      const answer = await callback(flow.callback, flow.cookie, flow.address);
      expect(answer.status).toBe(401);
      const error = ((await answer.json()) as { error: { code: string; reason: string } }).error;
      expect(error.code).toBe('SSO_ASSERTION_INVALID');
      expect(error.reason).toBe('audience');
    } finally {
      tamper = null;
    }
  });

  it('refuses an ID token signed with a key the provider does not publish', async () => {
    const { privateKey: forger } = await generateKeyPair('ES256');
    tamper = async (idToken) => new SignJWT({ ...decodeJwt(idToken), email: 'ceo@corp.example' }).setProtectedHeader({ alg: 'ES256', kid: 'idp-key' }).sign(forger);
    try {
      const flow = await signInAtProvider(`oidc-${randomUUID().slice(0, 8)}@corp.example`);
      const answer = await callback(flow.callback, flow.cookie, flow.address);
      expect(answer.status).toBe(401);
      const error = ((await answer.json()) as { error: { code: string; reason: string } }).error;
      expect(error.code).toBe('SSO_ASSERTION_INVALID');
      expect(error.reason).toBe('signature');
    } finally {
      tamper = null;
    }
  });

  it('creates no user for a domain that is not allowed', async () => {
    const flow = await signInAtProvider(`oidc-${randomUUID().slice(0, 8)}@elsewhere.example`);
    const answer = await callback(flow.callback, flow.cookie, flow.address);
    expect(answer.status).toBe(403);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('SSO_DOMAIN_NOT_ALLOWED');
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

