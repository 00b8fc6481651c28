/**
 * Sign-in beyond the password: TOTP enrolment and the second step, an admin's TOTP reset, and
 * the org's single sign-on connections (OIDC, SAML) with their public browser endpoints. Every
 * completed sign-in goes through `finishSignIn`. Scopes: enrolment needs a signed-in user (any
 * role); connections are read with read and changed with admin; the browser endpoints are public
 * (what they check is the state, the ID token or the signed assertion). The TOTP second step has
 * the strict per-IP tier of password sign-in; the SSO callbacks do not (a single-use state or a
 * signed assertion cannot be guessed, and a whole office signs in from one address at 9 am).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { SvcError } from '../platform/errors.ts';
import { auditActor, type RoutesPlugin } from '../platform/http-plugin.ts';
import type { Metrics } from '../platform/metrics.ts';
import type { RateLimiter } from '../platform/rate-limit.ts';
import type { Accounts } from './accounts.ts';
import { LOGIN_POLICY } from './plans.ts';
import { auth, strictTier } from './routes.ts';
import { finishSignIn } from './sign-in.ts';
import { SSO_ROLES, type Sso } from './sso.ts';
import type { Totp } from './totp.ts';

export interface SignInRoutesOptions {
  accounts: Accounts;
  totp: Totp;
  sso: Sso;
  rateLimiter: RateLimiter;
  metrics: Pick<Metrics, 'rateLimitHits'>;
  /** PUBLIC_URL when the operator set it (config.publicUrlSet), else null. */
  publicUrl: string | null;
}

const OrgParams = Type.Object({ org_id: Type.String({ format: 'uuid' }) });
const Code = Type.String({ pattern: '^[0-9]{6}$', description: 'The six-digit code the authenticator shows now.' });
const Domains = Type.Array(Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.-]+$' }), { maxItems: 100 });
const SsoRole = Type.Union(SSO_ROLES.map((role) => Type.Literal(role)));
const HttpUrl = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 });
const BROWSER_COOKIE = 'svc_sso_browser';
const OIDC_PATH = '/api/v1/auth/oidc/';
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export const signInRoutes: RoutesPlugin<SignInRoutesOptions> = async (app, services) => {
  const { totp, sso } = services;
  /**
   * Where svc is reached, for the addresses an identity provider sends codes and assertions to
   * (OIDC redirect_uri, SAML ACS and entity id): PUBLIC_URL when set. Without it the request's
   * own origin is taken only under a loopback host name: Host (or X-Forwarded-Host behind a
   * trusted proxy) is the client's to choose, and an attacker's would choose where the provider
   * sends the sign-in.
   */
  const origin = (request: FastifyRequest) => {
    if (services.publicUrl !== null) return services.publicUrl;
    if (LOOPBACK_HOSTS.has(hostnameOf(request.host))) return `${request.protocol}://${request.host}`;
    throw new SvcError('SSO_PUBLIC_URL_REQUIRED', { details: { host: request.host.slice(0, 256) } });
  };
  /** The caller as a dashboard user: TOTP belongs to users, not API keys. */
  const user = (request: FastifyRequest) => {
    const caller = auth(request);
    if (caller.kind !== 'user' || caller.userId === null) {
      throw new SvcError('SCOPE_INSUFFICIENT', { message: 'This needs a signed-in dashboard user, not an API key.', details: { reason: 'user_session_required' } });
    }
    return { userId: caller.userId, orgId: caller.orgId };
  };

  // ------------------------------------------------------------------------------------ TOTP

  app.post('/api/v1/auth/totp/enroll', { config: { scope: 'read' }, schema: { tags: ['accounts'] } }, async (request, reply) => {
    const enrolment = await totp.enrol(user(request));
    reply.status(201);
    return enrolment;
  });

  app.post(
    '/api/v1/auth/totp/confirm',
    { config: { scope: 'read' }, schema: { tags: ['accounts'], body: Type.Object({ code: Code }, { additionalProperties: false }) } },
    async (request) => totp.confirm(user(request), request.body.code),
  );

  app.post(
    '/api/v1/auth/login/totp',
    {
      config: { public: true },
      schema: {
        tags: ['accounts'],
        body: Type.Union([
          Type.Object({ mfa_token: Type.String({ minLength: 1, maxLength: 4096 }), code: Code }, { additionalProperties: false }),
          Type.Object({ mfa_token: Type.String({ minLength: 1, maxLength: 4096 }), recovery_code: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
        ]),
      },
    },
    async (request, reply) => {
      await strictTier(services, request, reply, 'login-mfa', LOGIN_POLICY, 'LOGIN_BLOCKED');
      const body = request.body;
      const signedIn = await totp.verifySecondStep(body.mfa_token, 'code' in body ? { code: body.code } : { recovery_code: body.recovery_code });
      return finishSignIn(request, reply, signedIn, 'totp');
    },
  );

  app.delete(
    '/api/v1/users/:id/totp',
    { config: { scope: 'admin' }, schema: { tags: ['accounts'], params: Type.Object({ id: Type.String({ format: 'uuid' }) }) } },
    async (request, reply) => {
      const caller = auth(request);
      await totp.reset(caller.orgId, request.params.id, auditActor(caller), caller);
      reply.status(204);
    },
  );

  // ------------------------------------------------------------------------------------ OIDC

  app.get('/api/v1/sso/oidc', { config: { scope: 'read' }, schema: { tags: ['accounts'] } }, async (request) => {
    const view = await sso.oidc.get(auth(request).orgId);
    if (view === null) throw new SvcError('NOT_FOUND', { details: { resource: 'oidc_connection' } });
    return view;
  });

  app.put(
    '/api/v1/sso/oidc',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['accounts'],
        body: Type.Object(
          {
            issuer: HttpUrl,
            client_id: Type.String({ minLength: 1, maxLength: 512 }),
            client_secret: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
            allowed_domains: Type.Optional(Domains),
            default_role: Type.Optional(SsoRole),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => {
      const caller = auth(request);
      return sso.oidc.set(caller.orgId, auditActor(caller), request.body);
    },
  );

  app.delete('/api/v1/sso/oidc', { config: { scope: 'admin' }, schema: { tags: ['accounts'] } }, async (request, reply) => {
    const caller = auth(request);
    if (!(await sso.oidc.remove(caller.orgId, auditActor(caller)))) throw new SvcError('NOT_FOUND', { details: { resource: 'oidc_connection' } });
    reply.status(204);
  });

  app.get('/api/v1/auth/oidc/:org_id/start', { config: { public: true }, schema: { tags: ['accounts'], params: OrgParams } }, async (request, reply) => {
    const orgId = request.params.org_id;
    const { url, browser } = await sso.oidc.start(orgId, `${origin(request)}${OIDC_PATH}${orgId}/callback`);
    reply.header('Set-Cookie', `${BROWSER_COOKIE}=${browser}; Path=${OIDC_PATH}${orgId}/; Max-Age=600; HttpOnly; Secure; SameSite=Lax`);
    return reply.redirect(url, 302);
  });

  app.get(
    '/api/v1/auth/oidc/:org_id/callback',
    {
      config: { public: true },
      schema: {
        tags: ['accounts'],
        params: OrgParams,
        // The provider's answer (RFC 6749 4.1.2, RFC 9207 iss); providers add parameters of their own.
        querystring: Type.Object(
          {
            code: Type.Optional(Type.String({ maxLength: 8192 })),
            state: Type.Optional(Type.String({ maxLength: 1024 })),
            iss: Type.Optional(Type.String({ maxLength: 2048 })),
            error: Type.Optional(Type.String({ maxLength: 256 })),
            error_description: Type.Optional(Type.String({ maxLength: 2048 })),
          },
          { additionalProperties: Type.String({ maxLength: 8192 }), maxProperties: 20 },
        ),
      },
    },
    async (request, reply) => {
      const orgId = request.params.org_id;
      const signedIn = await sso.oidc.callback(orgId, request.query as Record<string, string>, cookie(request, BROWSER_COOKIE));
      reply.header('Set-Cookie', `${BROWSER_COOKIE}=; Path=${OIDC_PATH}${orgId}/; Max-Age=0; HttpOnly; Secure; SameSite=Lax`);
      const answer = await finishSignIn(request, reply, signedIn, 'oidc');
      // A browser (it asks for HTML) goes on to the dashboard, signed in by the session cookie;
      // a script that follows the redirect itself keeps the JSON answer.
      if (wantsPage(request.headers.accept)) return reply.redirect('/dashboard/', 303);
      return answer;
    },
  );

  // ------------------------------------------------------------------------------------ SAML

  app.get('/api/v1/sso/saml', { config: { scope: 'read' }, schema: { tags: ['accounts'] } }, async (request) => {
    const view = await sso.saml.get(auth(request).orgId);
    if (view === null) throw new SvcError('NOT_FOUND', { details: { resource: 'saml_connection' } });
    return view;
  });

  app.put(
    '/api/v1/sso/saml',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['accounts'],
        body: Type.Object(
          {
            idp_entity_id: Type.String({ minLength: 1, maxLength: 1024 }),
            sso_url: HttpUrl,
            certificate: Type.String({ minLength: 1, maxLength: 16_384 }),
            allowed_domains: Type.Optional(Domains),
            default_role: Type.Optional(SsoRole),
            sp_entity_id: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
            acs_url: Type.Optional(HttpUrl),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => {
      const caller = auth(request);
      // Both given, the Host plays no part (and PUBLIC_URL is not needed).
      const base = () => `${origin(request)}/api/v1/auth/saml/${caller.orgId}`;
      return sso.saml.set(caller.orgId, auditActor(caller), {
        ...request.body,
        sp_entity_id: request.body.sp_entity_id ?? `${base()}/metadata`,
        acs_url: request.body.acs_url ?? `${base()}/acs`,
      });
    },
  );

  app.delete('/api/v1/sso/saml', { config: { scope: 'admin' }, schema: { tags: ['accounts'] } }, async (request, reply) => {
    const caller = auth(request);
    if (!(await sso.saml.remove(caller.orgId, auditActor(caller)))) throw new SvcError('NOT_FOUND', { details: { resource: 'saml_connection' } });
    reply.status(204);
  });

  app.get('/api/v1/auth/saml/:org_id/metadata', { config: { public: true }, schema: { tags: ['accounts'], params: OrgParams } }, async (request, reply) => {
    const xml = await sso.saml.metadata(request.params.org_id);
    reply.type('application/samlmetadata+xml; charset=utf-8');
    return xml;
  });

  app.get('/api/v1/auth/saml/:org_id/start', { config: { public: true }, schema: { tags: ['accounts'], params: OrgParams } }, async (request, reply) => {
    return reply.redirect(await sso.saml.start(request.params.org_id), 302);
  });

  // The ACS takes the browser's form post (HTTP-POST binding): the form parser in its scope only.
  await app.register(async (untyped) => {
    const scope = untyped.withTypeProvider<TypeBoxTypeProvider>();
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 1_048_576 }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(typeof body === 'string' ? body : body.toString('utf8'))));
    });
    scope.post(
      '/api/v1/auth/saml/:org_id/acs',
      {
        config: { public: true },
        schema: {
          tags: ['accounts'],
          params: OrgParams,
          body: Type.Object({ SAMLResponse: Type.String({ minLength: 1, maxLength: 1_000_000 }), RelayState: Type.Optional(Type.String({ maxLength: 2048 })) }),
        },
      },
      async (request, reply) => {
        const signedIn = await sso.saml.acs(request.params.org_id, request.body.SAMLResponse);
        const answer = await finishSignIn(request, reply, signedIn, 'saml');
        if (wantsPage(request.headers.accept)) return reply.redirect('/dashboard/', 303);
        return answer;
      },
    );
  });
};

/**
 * Whether the caller is a browser navigating (its Accept names HTML): an SSO callback then sends
 * it to the dashboard, signed in by the session cookie, instead of answering the session's JSON.
 */
function wantsPage(accept: string | undefined): boolean {
  return typeof accept === 'string' && accept.toLowerCase().includes('text/html');
}

/** The host name of a Host header value (port and case dropped), or '' when it is not one. */
function hostnameOf(host: string): string {
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return '';
  }
}

/** One cookie's value from the Cookie header, or undefined. */
function cookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator > 0 && part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim();
  }
  return undefined;
}
