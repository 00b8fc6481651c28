/**
 * Single sign-on for an org's dashboard users: OIDC (openid-client; authorization code with
 * PKCE, state and nonce) and SAML 2.0 (@node-saml/node-saml; the IdP posts a signed assertion to
 * the ACS). Both end in `provision`: the user with the asserted e-mail in this org, or a new user
 * with the connection's role when the e-mail's domain is allowed.
 *
 * Posture: the OIDC issuer is SSRF-checked when saved and every request openid-client makes
 * (discovery, token, keys, userinfo) is checked again at use; http issuers are accepted only where
 * ALLOW_PRIVATE_TARGETS is on (development). The client secret is encrypted at rest (AES-256-GCM,
 * bound to the org) and never answered. The OIDC state lives in the cache (10 minutes, single use,
 * so replicas agree) beside the PKCE verifier and nonce, and is also bound to the browser that
 * started the flow by an HttpOnly cookie. A SAML assertion must be signed with the configured
 * certificate, carry this SP's audience, name this org's ACS URL as its bearer Recipient and be
 * inside NotBefore/NotOnOrAfter (60 s skew); its ID
 * is remembered in the cache until NotOnOrAfter, so a replayed assertion is refused on any replica.
 */
import { X509Certificate, randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { SAML, ValidateInResponseTo } from '@node-saml/node-saml';
import * as oidc from 'openid-client';
import type { AuditEntryInput, AuditLog } from '../audit/index.ts';
import type { Cache } from '../platform/cache.ts';
import type { ResolvedConfig } from '../platform/config.ts';
import { decrypt, encrypt, encryptionKeyFrom, mask, sha256Hex } from '../platform/crypto.ts';
import { retryingLockConflicts } from '../platform/db/failures.ts';
import type { Database } from '../platform/db/index.ts';
import { SvcError } from '../platform/errors.ts';
import type { Accounts, Role } from './accounts.ts';
import type { Plan } from './plans.ts';
import type { SignedInUser } from './sign-in.ts';
import { entryBound } from '../platform/lru.ts';

/** Roles a connection may give a user it creates (super_admin is never handed out by an IdP). */
export const SSO_ROLES = ['viewer', 'operator', 'admin'] as const;
export type SsoRole = (typeof SSO_ROLES)[number];
/** Plans whose orgs may use SAML (spec, Plans: "SSO/SAML" on Enterprise). */
export const SAML_PLANS: readonly Plan[] = ['enterprise'];
const STATE_TTL_MS = 10 * 60_000;
const CLOCK_SKEW_MS = 60_000;
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';

export interface OidcSettings {
  issuer: string;
  client_id: string;
  allowed_domains: string[];
  default_role: SsoRole;
}
export interface OidcView extends OidcSettings {
  client_secret: string; // masked
  updated_at: string;
}
export interface SamlSettings {
  idp_entity_id: string;
  sso_url: string;
  certificate: string;
  allowed_domains: string[];
  default_role: SsoRole;
  /** This service provider's entity id (the audience assertions must name) and ACS URL, fixed when saved. */
  sp_entity_id: string;
  acs_url: string;
}
export interface SamlView extends SamlSettings {
  updated_at: string;
}

export type Sso = ReturnType<typeof createSso>;

interface OidcState {
  orgId: string;
  verifier: string;
  nonce: string;
  redirectUri: string;
  browser: string;
}

export function createSso(deps: {
  db: Database;
  cache: Cache;
  audit: AuditLog;
  accounts: Pick<Accounts, 'getOrg'>;
  config: Pick<ResolvedConfig, 'apiEncryptionKey' | 'allowPrivateTargets'>;
  checkTarget(url: string, field?: string): Promise<URL>;
}) {
  const { db, cache, audit } = deps;
  const encryptionKey = encryptionKeyFrom(deps.config.apiEncryptionKey);
  const secretContext = (orgId: string) => `sso-oidc:${orgId}`;
  /** Discovered OIDC configurations by org (dropped when the connection changes). */
  const discovered = new LRUCache<string, { key: string; configuration: Promise<oidc.Configuration> }>({ ...entryBound(1_000), ttl: 10 * 60_000 });

  const load = async <T>(orgId: string, kind: 'oidc' | 'saml') => {
    const result = await db.withOrg(orgId, (tx) => tx.query('SELECT settings, secret_ciphertext, updated_at FROM sso_connections WHERE kind = $1', [kind]));
    const row = result.rows[0];
    return row === undefined ? null : { settings: row.settings as T, secret: (row.secret_ciphertext as string | null) ?? null, updatedAt: new Date(row.updated_at as Date).toISOString() };
  };
  /**
   * Saves a connection with its audit entry (`entry`) in one transaction: a failure of the append
   * stores neither; a lost lock conflict is tried again whole (retryingLockConflicts).
   */
  const save = async (orgId: string, kind: 'oidc' | 'saml', settings: object, secret: string | null, entry: AuditEntryInput) =>
    retryingLockConflicts(() =>
      db.withOrg(orgId, async (tx) => {
        const result = await tx.query(
          `INSERT INTO sso_connections (org_id, kind, settings, secret_ciphertext) VALUES ($1, $2, $3, $4)
           ON CONFLICT (org_id, kind) DO UPDATE SET settings = $3, secret_ciphertext = $4, updated_at = now() RETURNING updated_at`,
          [orgId, kind, JSON.stringify(settings), secret],
        );
        await audit.append(orgId, entry, { tx });
        return new Date(result.rows[0]!.updated_at as Date).toISOString();
      }),
    );
  const remove = async (orgId: string, kind: 'oidc' | 'saml', actor: string) => {
    const removed = await retryingLockConflicts(() =>
      db.withOrg(orgId, async (tx) => {
        const result = await tx.query('DELETE FROM sso_connections WHERE kind = $1 RETURNING kind', [kind]);
        if (result.rows.length === 0) return false;
        await audit.append(orgId, { actor, action: `sso.${kind}.removed`, target: orgId, outcome: 'success', details: {} }, { tx });
        return true;
      }),
    );
    if (removed) discovered.delete(orgId);
    return removed;
  };

  const planOf = async (orgId: string): Promise<Plan> => {
    const org = await deps.accounts.getOrg(orgId);
    if (org === null) throw new SvcError('NOT_FOUND', { details: { resource: 'org' } });
    return org.effective_plan;
  };
  const requireSamlPlan = async (orgId: string) => {
    const plan = await planOf(orgId);
    if (!SAML_PLANS.includes(plan)) {
      throw new SvcError('PLAN_UPGRADE_REQUIRED', { message: 'SAML single sign-on is part of the Enterprise plan.', details: { feature: 'sso_saml', plan, required_plan: 'enterprise' } });
    }
  };

  /** openid-client's requests, each SSRF-checked at use. */
  const checkedFetch: oidc.CustomFetch = async (url, options) => {
    await deps.checkTarget(url, 'issuer');
    return fetch(url, { ...options, signal: options.signal ?? AbortSignal.timeout(5_000) } as RequestInit);
  };
  const discover = async (issuer: string, clientId: string, clientSecret: string) => {
    const configuration = await oidc.discovery(new URL(issuer), clientId, clientSecret, oidc.ClientSecretBasic(clientSecret), {
      [oidc.customFetch]: checkedFetch,
      timeout: 5,
      ...(new URL(issuer).protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {}),
    });
    // The ID token's signature is checked against the provider's published keys, not only
    // trusted for having come over TLS (OIDC Core 3.1.3.7 would allow that).
    oidc.enableNonRepudiationChecks(configuration);
    return configuration;
  };
  const configurationOf = async (orgId: string, settings: OidcSettings, secret: string) => {
    const key = sha256Hex(`${settings.issuer}\n${settings.client_id}\n${secret}`);
    let entry = discovered.get(orgId);
    if (entry === undefined || entry.key !== key) {
      const configuration = discover(settings.issuer, settings.client_id, secret);
      configuration.catch(() => discovered.delete(orgId));
      entry = { key, configuration };
      discovered.set(orgId, entry);
    }
    try {
      return await entry.configuration;
    } catch (error) {
      if (error instanceof SvcError) throw error;
      throw new SvcError('SSO_PROVIDER_UNAVAILABLE', { message: "The identity provider's OpenID configuration could not be read.", details: { reason: 'discovery_failed' } });
    }
  };

  /** The user with this e-mail in the org, or a new one when the domain is allowed. */
  const provision = async (orgId: string, emailInput: unknown, settings: { allowed_domains: string[]; default_role: SsoRole }, method: 'oidc' | 'saml'): Promise<SignedInUser> => {
    if (typeof emailInput !== 'string' || !/^[^\s@\p{Cc}]{1,200}@[^\s@\p{Cc}]{1,200}$/u.test(emailInput.trim())) {
      throw new SvcError('SSO_ASSERTION_INVALID', { message: 'The identity provider did not assert an e-mail address.', details: { reason: 'no_email' } });
    }
    const email = emailInput.trim().toLowerCase();
    const existing = await db.query('SELECT id, org_id, role FROM users WHERE lower(email) = $1', [email]);
    const row = existing.rows[0];
    if (row !== undefined) {
      if (row.org_id !== orgId) throw new SvcError('SSO_DOMAIN_NOT_ALLOWED', { message: 'This e-mail belongs to a user of another organization.', details: { reason: 'other_org' } });
      // An org admin configures the identity provider and so decides what it asserts: were a
      // super_admin signed in by it, an admin could become one (which only a super_admin or the
      // host's operator may grant) and change the org's plan. A super_admin signs in with a password.
      if (row.role === 'super_admin') {
        throw new SvcError('SSO_DOMAIN_NOT_ALLOWED', { message: 'A super_admin signs in with a password, not through single sign-on.', details: { reason: 'super_admin' } });
      }
      await db.withOrg(orgId, (tx) => tx.query('UPDATE users SET last_login_at = now() WHERE id = $1', [row.id]));
      return { userId: row.id as string, orgId, role: row.role as Role };
    }
    const domain = email.slice(email.lastIndexOf('@') + 1);
    if (!settings.allowed_domains.includes(domain)) {
      throw new SvcError('SSO_DOMAIN_NOT_ALLOWED', { details: { reason: 'domain', domain } });
    }
    const userId = randomUUID();
    // The new user and its user.created entry are one transaction: a failure of the append (an
    // outage, a lock conflict that persists) creates no user, and the sign-in answers as on an outage.
    try {
      await retryingLockConflicts(() =>
        db.withOrg(orgId, async (tx) => {
          await tx.query('INSERT INTO users (id, org_id, email, password_hash, role, last_login_at) VALUES ($1, $2, $3, NULL, $4, now())', [userId, orgId, email, settings.default_role]);
          await audit.append(orgId, { actor: `sso:${method}`, action: 'user.created', target: userId, outcome: 'success', details: { method, role: settings.default_role, domain } }, { tx });
        }),
      );
    } catch (error) {
      if ((error as { code?: string }).code === '23505') throw new SvcError('CONFLICT', { message: 'A user with this e-mail was created meanwhile; sign in again.', details: { reason: 'email_taken' } });
      throw error;
    }
    return { userId, orgId, role: settings.default_role };
  };

  const oidcView = (settings: OidcSettings, secret: string, updatedAt: string): OidcView => ({ ...settings, client_secret: mask(secret), updated_at: updatedAt });

  return {
    oidc: {
      async get(orgId: string): Promise<OidcView | null> {
        const stored = await load<OidcSettings>(orgId, 'oidc');
        return stored === null ? null : oidcView(stored.settings, decrypt(encryptionKey, stored.secret!, secretContext(orgId)), stored.updatedAt);
      },

      /** Saves the connection after discovering the issuer (SSRF-checked); the secret may be omitted to keep the stored one. */
      async set(orgId: string, actor: string, input: Omit<OidcSettings, 'allowed_domains' | 'default_role'> & { client_secret?: string; allowed_domains?: string[]; default_role?: SsoRole }): Promise<OidcView> {
        const issuerUrl = await deps.checkTarget(input.issuer, 'issuer');
        if (issuerUrl.protocol !== 'https:' && !(issuerUrl.protocol === 'http:' && deps.config.allowPrivateTargets)) {
          throw new SvcError('VALIDATION_FAILED', { message: 'The issuer must be an https URL.', details: { field: 'issuer', reason: 'https_required' } });
        }
        let secret = input.client_secret ?? null;
        if (secret === null) {
          const stored = await load<OidcSettings>(orgId, 'oidc');
          if (stored === null) throw new SvcError('VALIDATION_FAILED', { message: 'client_secret is required for a new connection.', details: { field: 'client_secret' } });
          // The stored secret goes only to the issuer it was given for: kept across an issuer
          // change, it would be sent (client_secret_basic) to whatever token endpoint the new
          // issuer names, and an admin could read it there although it is never answered.
          if (new URL(stored.settings.issuer).href !== issuerUrl.href) {
            throw new SvcError('VALIDATION_FAILED', { message: 'client_secret is required when the issuer changes.', details: { field: 'client_secret', reason: 'issuer_changed' } });
          }
          secret = decrypt(encryptionKey, stored.secret!, secretContext(orgId));
        }
        const settings: OidcSettings = {
          issuer: input.issuer,
          client_id: input.client_id,
          allowed_domains: normalizeDomains(input.allowed_domains ?? []),
          default_role: input.default_role ?? 'viewer',
        };
        try {
          await discover(settings.issuer, settings.client_id, secret);
        } catch (error) {
          if (error instanceof SvcError) throw error;
          throw new SvcError('VALIDATION_FAILED', { message: "The issuer's OpenID configuration could not be read, or names another issuer.", details: { field: 'issuer', reason: 'discovery_failed' } });
        }
        const updatedAt = await save(orgId, 'oidc', settings, encrypt(encryptionKey, secret, secretContext(orgId)), {
          actor,
          action: 'sso.oidc.set',
          target: settings.issuer,
          outcome: 'success',
          details: { issuer: settings.issuer, client_id: settings.client_id, allowed_domains: settings.allowed_domains, default_role: settings.default_role },
        });
        discovered.delete(orgId);
        return oidcView(settings, secret, updatedAt);
      },

      remove: (orgId: string, actor: string) => remove(orgId, 'oidc', actor),

      /** The provider's authorization URL for a new flow, and the browser binding to set as a cookie. */
      async start(orgId: string, redirectUriInput: string): Promise<{ url: string; browser: string }> {
        // Normalized (a default port dropped): the code exchange sends it in this form, and the
        // provider compares the two as strings.
        const redirectUri = new URL(redirectUriInput).href;
        const stored = await load<OidcSettings>(orgId, 'oidc');
        if (stored === null) throw new SvcError('NOT_FOUND', { message: 'This organization has no OIDC connection.', details: { resource: 'oidc_connection' } });
        const configuration = await configurationOf(orgId, stored.settings, decrypt(encryptionKey, stored.secret!, secretContext(orgId)));
        const verifier = oidc.randomPKCECodeVerifier();
        const state = oidc.randomState();
        const nonce = oidc.randomNonce();
        const browser = oidc.randomState();
        const entry: OidcState = { orgId, verifier, nonce, redirectUri, browser: sha256Hex(browser) };
        await cache.set(`sso:oidc:state:${state}`, JSON.stringify(entry), STATE_TTL_MS);
        const url = oidc.buildAuthorizationUrl(configuration, {
          redirect_uri: redirectUri,
          scope: 'openid email profile',
          response_type: 'code',
          code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
          state,
          nonce,
        });
        return { url: url.href, browser };
      },

      /**
       * The provider's redirect back: the state must be one this service issued for this org and
       * this browser (single use); the code is exchanged with the PKCE verifier and the ID token
       * verified (signature, issuer, audience, nonce, times) by openid-client.
       */
      async callback(orgId: string, query: Record<string, string>, browser: string | undefined): Promise<SignedInUser> {
        const state = query.state;
        if (typeof state !== 'string' || state === '' || state.length > 200) throw new SvcError('SSO_STATE_INVALID', { details: { reason: 'missing' } });
        const key = `sso:oidc:state:${state}`;
        const raw = await cache.get(key);
        if (raw === null) throw new SvcError('SSO_STATE_INVALID', { details: { reason: 'unknown_or_used' } });
        // Single use under concurrency too: callbacks with one state sent at once all read it
        // before any deleted it, and each exchanged the code (rel-41). The first to set the
        // marker (SET NX on Redis, shared by the replicas) goes on; the others were too late.
        if (!(await cache.setIfAbsent(`sso:oidc:state-used:${sha256Hex(state)}`, '1', STATE_TTL_MS))) {
          throw new SvcError('SSO_STATE_INVALID', { details: { reason: 'unknown_or_used' } });
        }
        await cache.del(key);
        const entry = JSON.parse(raw) as OidcState;
        if (entry.orgId !== orgId) throw new SvcError('SSO_STATE_INVALID', { details: { reason: 'other_org' } });
        if (browser === undefined || sha256Hex(browser) !== entry.browser) throw new SvcError('SSO_STATE_INVALID', { details: { reason: 'other_browser' } });
        if (typeof query.error === 'string') throw new SvcError('SSO_ASSERTION_INVALID', { message: 'The identity provider answered an error.', details: { reason: 'provider_error', error: query.error.slice(0, 100) } });
        const stored = await load<OidcSettings>(orgId, 'oidc');
        if (stored === null) throw new SvcError('NOT_FOUND', { details: { resource: 'oidc_connection' } });
        const configuration = await configurationOf(orgId, stored.settings, decrypt(encryptionKey, stored.secret!, secretContext(orgId)));
        const current = new URL(entry.redirectUri);
        for (const [name, value] of Object.entries(query)) current.searchParams.set(name, value);
        let claims: Record<string, unknown>;
        try {
          const tokens = await oidc.authorizationCodeGrant(configuration, current, { pkceCodeVerifier: entry.verifier, expectedState: state, expectedNonce: entry.nonce, idTokenExpected: true });
          claims = { ...(tokens.claims() ?? {}) };
          if (claims.email === undefined && tokens.access_token !== undefined) {
            claims = { ...claims, ...(await oidc.fetchUserInfo(configuration, tokens.access_token, claims.sub as string)) };
          }
        } catch (error) {
          throw new SvcError('SSO_ASSERTION_INVALID', { message: 'The identity provider\'s answer did not verify.', details: { reason: oidcFailure(error) } });
        }
        // Only an e-mail the provider vouches for (email_verified: true, OpenID Connect Core 5.1)
        // names a user: svc links by e-mail, so one the provider lets its users type in unchecked
        // would sign them in as that address's existing user, or create it for its real owner to
        // inherit later. A missing claim counts as not verified (docs/decisions.md).
        if (claims.email_verified !== true) {
          throw new SvcError('SSO_ASSERTION_INVALID', { message: 'The identity provider does not assert that the e-mail is verified (email_verified: true).', details: { reason: 'email_unverified' } });
        }
        return provision(orgId, claims.email, stored.settings, 'oidc');
      },
    },

    saml: {
      async get(orgId: string): Promise<SamlView | null> {
        const stored = await load<SamlSettings>(orgId, 'saml');
        return stored === null ? null : { ...stored.settings, updated_at: stored.updatedAt };
      },

      async set(orgId: string, actor: string, input: Omit<SamlSettings, 'allowed_domains' | 'default_role'> & { allowed_domains?: string[]; default_role?: SsoRole }): Promise<SamlView> {
        await requireSamlPlan(orgId);
        let certificate: string;
        try {
          certificate = new X509Certificate(input.certificate).toString();
        } catch {
          throw new SvcError('VALIDATION_FAILED', { message: 'certificate must be the IdP signing certificate in PEM.', details: { field: 'certificate', reason: 'not_a_certificate' } });
        }
        const settings: SamlSettings = {
          idp_entity_id: input.idp_entity_id,
          sso_url: input.sso_url,
          certificate,
          allowed_domains: normalizeDomains(input.allowed_domains ?? []),
          default_role: input.default_role ?? 'viewer',
          sp_entity_id: input.sp_entity_id,
          acs_url: input.acs_url,
        };
        const updatedAt = await save(orgId, 'saml', settings, null, {
          actor,
          action: 'sso.saml.set',
          target: settings.idp_entity_id,
          outcome: 'success',
          details: { idp_entity_id: settings.idp_entity_id, sso_url: settings.sso_url, allowed_domains: settings.allowed_domains, default_role: settings.default_role },
        });
        return { ...settings, updated_at: updatedAt };
      },

      remove: (orgId: string, actor: string) => remove(orgId, 'saml', actor),

      async metadata(orgId: string): Promise<string> {
        await requireSamlPlan(orgId);
        const stored = await load<SamlSettings>(orgId, 'saml');
        if (stored === null) throw new SvcError('NOT_FOUND', { message: 'This organization has no SAML connection.', details: { resource: 'saml_connection' } });
        return samlFor(stored.settings).generateServiceProviderMetadata(null, null);
      },

      /** SP-initiated sign-in: the IdP's SSO URL with an AuthnRequest (HTTP-Redirect binding). */
      async start(orgId: string): Promise<string> {
        await requireSamlPlan(orgId);
        const stored = await load<SamlSettings>(orgId, 'saml');
        if (stored === null) throw new SvcError('NOT_FOUND', { message: 'This organization has no SAML connection.', details: { resource: 'saml_connection' } });
        return samlFor(stored.settings).getAuthorizeUrlAsync('', undefined, {});
      },

      /** The IdP's POST to the ACS: the signed assertion verified, then the user signed in. */
      async acs(orgId: string, samlResponse: string): Promise<SignedInUser> {
        await requireSamlPlan(orgId);
        const stored = await load<SamlSettings>(orgId, 'saml');
        if (stored === null) throw new SvcError('NOT_FOUND', { message: 'This organization has no SAML connection.', details: { resource: 'saml_connection' } });
        let profile: Awaited<ReturnType<SAML['validatePostResponseAsync']>>['profile'];
        try {
          ({ profile } = await samlFor(stored.settings).validatePostResponseAsync({ SAMLResponse: samlResponse }));
        } catch (error) {
          throw new SvcError('SSO_ASSERTION_INVALID', { message: 'The SAML response did not verify.', details: { reason: samlFailure(error) } });
        }
        if (profile === null) throw new SvcError('SSO_ASSERTION_INVALID', { details: { reason: 'no_assertion' } });
        const assertion = (profile.getAssertion?.() ?? {}) as {
          Assertion?: {
            $?: { ID?: string };
            Conditions?: Array<{ $?: { NotOnOrAfter?: string } }>;
            Subject?: Array<{ SubjectConfirmation?: Array<{ $?: { Method?: string }; SubjectConfirmationData?: Array<{ $?: { Recipient?: string } }> }> }>;
          };
        };
        // The signed assertion names the ACS it was issued for (SAML profiles 4.1.4.2: the bearer
        // confirmation's Recipient); node-saml does not check it. Without this, an assertion the
        // IdP issued for another ACS (another org's, or another service sharing the IdP and the
        // entity id) would be taken here.
        const confirmations = assertion.Assertion?.Subject?.[0]?.SubjectConfirmation ?? [];
        const forThisAcs = confirmations.some(
          (confirmation) => confirmation.$?.Method === BEARER && (confirmation.SubjectConfirmationData ?? []).some((data) => data.$?.Recipient === stored.settings.acs_url),
        );
        if (!forThisAcs) throw new SvcError('SSO_ASSERTION_INVALID', { message: 'The SAML assertion was issued for another assertion consumer service URL.', details: { reason: 'recipient' } });
        const id = assertion.Assertion?.$?.ID;
        const notOnOrAfter = Date.parse(assertion.Assertion?.Conditions?.[0]?.$?.NotOnOrAfter ?? '');
        if (typeof id !== 'string' || id === '') throw new SvcError('SSO_ASSERTION_INVALID', { details: { reason: 'no_assertion_id' } });
        // Remembered until the assertion could no longer be accepted anyway (at most a day).
        const ttl = Math.min(24 * 3_600_000, Math.max(CLOCK_SKEW_MS, (Number.isNaN(notOnOrAfter) ? Date.now() + 3_600_000 : notOnOrAfter) - Date.now() + CLOCK_SKEW_MS));
        if (!(await cache.setIfAbsent(`sso:saml:assertion:${orgId}:${sha256Hex(id)}`, '1', ttl))) {
          throw new SvcError('SSO_REPLAYED', { details: { reason: 'assertion_replayed' } });
        }
        const email = profile.email ?? profile.mail ?? profile.nameID;
        return provision(orgId, email, stored.settings, 'saml');
      },
    },
  };
}

function samlFor(settings: SamlSettings): SAML {
  return new SAML({
    issuer: settings.sp_entity_id,
    audience: settings.sp_entity_id,
    callbackUrl: settings.acs_url,
    entryPoint: settings.sso_url,
    idpIssuer: settings.idp_entity_id,
    idpCert: settings.certificate,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    validateInResponseTo: ValidateInResponseTo.never,
    disableRequestedAuthnContext: true,
  });
}

function normalizeDomains(domains: string[]): string[] {
  return [...new Set(domains.map((domain) => domain.trim().toLowerCase()).filter((domain) => domain !== ''))];
}

/** A stable reason for an OIDC failure (details.reason), from openid-client's error and its causes. */
function oidcFailure(error: unknown): string {
  const codes: unknown[] = [];
  const messages: string[] = [];
  let claim: unknown;
  for (let current = error as { code?: unknown; cause?: unknown; message?: unknown } | undefined, depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    codes.push(current.code);
    if (typeof current.message === 'string') messages.push(current.message);
    claim ??= (current.cause as { claim?: unknown } | undefined)?.claim;
    current = current.cause as typeof current;
  }
  if (claim === 'aud' || claim === 'azp') return 'audience';
  if (claim === 'nonce') return 'nonce';
  if (claim === 'iss') return 'issuer';
  if (codes.includes('OAUTH_JWT_TIMESTAMP_CHECK_FAILED')) return 'expired';
  if (codes.includes('OAUTH_KEY_SELECTION_FAILED') || codes.includes('ERR_JWS_SIGNATURE_VERIFICATION_FAILED') || messages.some((message) => /signature/i.test(message))) return 'signature';
  if (codes.includes('OAUTH_RESPONSE_BODY_ERROR') || codes.includes('OAUTH_AUTHORIZATION_RESPONSE_ERROR')) return 'provider_error';
  return 'id_token_invalid';
}

/** A stable reason for a SAML failure (details.reason), from node-saml's errors. */
function samlFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  if (/audience/i.test(message)) return 'audience';
  if (/expired|NotOnOrAfter|NotBefore|not yet valid/i.test(message)) return 'expired';
  if (/signature/i.test(message)) return 'signature';
  if (/issuer/i.test(message)) return 'issuer';
  return 'invalid';
}
