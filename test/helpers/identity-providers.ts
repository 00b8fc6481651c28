/**
 * Identity providers for sign-in tests, real enough to be trusted: a real OpenID provider
 * (oidc-provider) whose interaction endpoint signs in the account the test names and grants
 * consent, with a hook to alter its token answers in flight; and a SAML IdP made of an RSA key,
 * its self-signed certificate (openssl) and assertions signed with xml-crypto (enveloped
 * signature, exclusive C14N, RSA-SHA256) as an IdP's HTTP-POST binding sends them.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';
import { SignedXml } from 'xml-crypto';

export interface OidcProvider {
  issuer: string;
  client: { client_id: string; client_secret: string };
  /** The provider's signing key (ES256, kid idp-key). */
  privateJwk: JWK;
  /** (Re)creates the provider with these redirect URIs registered for the client. */
  register(redirectUris: string[]): Promise<void>;
  /** The email_verified claim the provider asserts (default true; undefined leaves it out). */
  emailVerified: boolean | undefined;
  /** When set, rewrites the ID token of the provider's token answers. */
  tamper: ((idToken: string) => Promise<string>) | null;
  /**
   * A browser at the provider: from the authorization URL, signs `email` in and follows the
   * provider's redirects (keeping its cookies) until one leaves for `until`; returns that URL.
   */
  signIn(authorizationUrl: string, email: string, until: string): Promise<string>;
  /** Who the provider signs in at its next interaction (for a real browser driving the flow). */
  loginAs(email: string): void;
  close(): Promise<void>;
}

export async function startOidcProvider(client = { client_id: 'svc-dashboard', client_secret: 'svc-dashboard-secret-0123456789abcdef' }): Promise<OidcProvider> {
  let loginAs = '';
  const server: Server = createServer((_request, response) => response.writeHead(503).end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const privateJwk: JWK = { ...(await exportJWK(privateKey)), kid: 'idp-key', alg: 'ES256', use: 'sig' };
  const idp: OidcProvider = {
    issuer,
    client,
    privateJwk,
    emailVerified: true,
    tamper: null,
    async register(redirectUris) {
      const provider = new Provider(issuer, {
        clients: [{ ...client, redirect_uris: redirectUris, grant_types: ['authorization_code'], response_types: ['code'], id_token_signed_response_alg: 'ES256' }],
        jwks: { keys: [privateJwk] },
        cookies: { keys: ['test-cookie-key-0123456789'] },
        conformIdTokenClaims: false,
        claims: { openid: ['sub'], email: ['email', 'email_verified'] },
        findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub, email: sub, ...(idp.emailVerified === undefined ? {} : { email_verified: idp.emailVerified }) }) }),
        interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
        features: { devInteractions: { enabled: false } },
      });
      provider.use(async (ctx, next) => {
        await next();
        const body = ctx.body as { id_token?: string } | undefined;
        if (ctx.path === '/token' && idp.tamper !== null && typeof body?.id_token === 'string') ctx.body = { ...body, id_token: await idp.tamper(body.id_token) };
      });
      const callback = provider.callback();
      server.removeAllListeners('request');
      server.on('request', (request: IncomingMessage, response: ServerResponse) => {
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
    },
    loginAs(email) {
      loginAs = email;
    },
    async signIn(authorizationUrl, email, until) {
      loginAs = email;
      const target = new URL(until).href; // normalized, as the redirects will be (default port dropped)
      const jar = new Map<string, string>();
      let url = authorizationUrl;
      for (let hop = 0; hop < 10; hop++) {
        const answer = await fetch(url, { redirect: 'manual', headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') } });
        for (const line of answer.headers.getSetCookie()) {
          const [pair] = line.split(';');
          const separator = pair!.indexOf('=');
          jar.set(pair!.slice(0, separator), pair!.slice(separator + 1));
        }
        const location = answer.headers.get('location');
        if (location === null) throw new Error(`no redirect from ${url}: ${answer.status} ${await answer.text()}`);
        url = new URL(location, url).href;
        if (url.startsWith(target)) return url;
      }
      throw new Error('too many redirects');
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return idp;
}

export interface SamlKeyPair {
  key: string;
  cert: string;
}

/** An RSA key and its self-signed certificate (openssl, as an IdP administrator makes one). */
export function samlKeyPair(name: string): SamlKeyPair {
  const dir = mkdtempSync(join(tmpdir(), 'svc-saml-'));
  try {
    const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name}`, '-days', '2', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`openssl: ${made.stderr}`);
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface AssertionOptions {
  signer: SamlKeyPair;
  idpEntityId: string;
  audience: string;
  acsUrl: string;
  notBefore?: Date;
  notOnOrAfter?: Date;
  /** Alters the signed XML (a tampering test). */
  tamper?: (xml: string) => string;
}

/** A base64 SAML Response with one assertion for `email`, the assertion signed by `signer`. */
export function samlResponse(email: string, options: AssertionOptions): string {
  const now = Date.now();
  const iso = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const notBefore = iso(options.notBefore ?? new Date(now - 60_000));
  const notOnOrAfter = iso(options.notOnOrAfter ?? new Date(now + 5 * 60_000));
  const assertionId = `_a${randomUUID().replaceAll('-', '')}`;
  const issued = iso(new Date(now));
  const assertion =
    `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${assertionId}" Version="2.0" IssueInstant="${issued}">` +
    `<saml:Issuer>${options.idpEntityId}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${email}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${notOnOrAfter}" Recipient="${options.acsUrl}"/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${notBefore}" NotOnOrAfter="${notOnOrAfter}"><saml:AudienceRestriction><saml:Audience>${options.audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${issued}" SessionIndex="${assertionId}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    `<saml:AttributeStatement><saml:Attribute Name="email"><saml:AttributeValue>${email}</saml:AttributeValue></saml:Attribute></saml:AttributeStatement>` +
    `</saml:Assertion>`;
  const response =
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_r${randomUUID().replaceAll('-', '')}" Version="2.0" IssueInstant="${issued}" Destination="${options.acsUrl}">` +
    `<saml:Issuer>${options.idpEntityId}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>${assertion}</samlp:Response>`;
  const signature = new SignedXml({
    privateKey: options.signer.key,
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  });
  signature.addReference({
    xpath: "//*[local-name(.)='Assertion']",
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  signature.computeSignature(response, { location: { reference: "//*[local-name(.)='Assertion']/*[local-name(.)='Issuer']", action: 'after' } });
  const signed = signature.getSignedXml();
  return Buffer.from(options.tamper ? options.tamper(signed) : signed, 'utf8').toString('base64');
}
