/**
 * Builds the Fastify application from the services. `server.ts` only listens; tests call
 * `buildApp` and use `app.inject()`.
 *
 * Request life cycle (hooks, in order):
 *   onRequest   X-Request-ID; identify the credential (API key or dashboard session, never
 *               rejecting yet); rate limit on the first axis that applies — API key, JWT user,
 *               IP — and set X-RateLimit-* on every response; 429 with Retry-After when refused;
 *               then enforce the route's declared scope, before the body is read: 401
 *               AUTH_MISSING / AUTH_INVALID / AUTH_REVOKED, 403 SCOPE_INSUFFICIENT.
 *   onResponse  metrics, one JSON log line with the spec's fields, release the concurrency slot.
 * Every route under /api/ must declare `config.scope` or `config.public`; one that does neither
 * fails at boot, so no endpoint is ever public by omission.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  ANONYMOUS_POLICY,
  KEY_LOOKUP_POLICY,
  OPERATIONS_POLICY,
  PLAN_POLICIES,
  scopeAllows,
  type AuthContext,
  type Scope,
} from '../accounts/index.ts';
import type { ResolvedConfig } from '../platform/config.ts';
import { errorBody, SvcError, type ErrorCode } from '../platform/errors.ts';
import type { RateLimitPolicy } from '../platform/rate-limit.ts';
import { lazyChildLogger } from './lazy-logger.ts';
import { databaseFailure } from '../platform/db/failures.ts';
import { bodyTooLarge, logFailure } from './error-reply.ts';
import { validationError } from './validation-message.ts';
import { allowedMethods } from './allowed-methods.ts';
import { clientErrorReply } from './client-error.ts';
import { documentResponses, RESPONSE_COMPONENTS } from './openapi-responses.ts';
import { rateLimitError, setRateLimitHeaders } from '../platform/rate-limit-reply.ts';
import type { AppInstance } from '../platform/http-plugin.ts';
import { STREAM_SHUTDOWN_GRACE_MS } from '../platform/streams.ts';
import type { Services } from '../services.ts';
import { registerOperationalRoutes } from './routes/operational.ts';
import { registerCapabilities } from './capabilities.ts';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
    authFailure: ErrorCode | null;
    rateLimit: { identity: string; holdsSlot: boolean } | null;
    /** Set by whatever scored the request; logged and counted. */
    threat: { score: number; decision: string; pattern: string | null } | null;
    gatewayId: string | null;
    /** Org of a protected gateway's end-user traffic (no svc credential; logged as org_id). */
    trafficOrgId: string | null;
  }
  interface FastifyInstance {
    /** Host/path rewrites consulted before routing (protected gateways' hostnames and path prefixes). */
    urlRewrites: Array<(host: string, url: string) => string | null>;
  }
  interface FastifyContextConfig {
    /** End-user traffic of a capability (protected gateways): no svc credential, no plan rate limit. */
    traffic?: boolean;
    /** Scope the caller's credential must hold. */
    scope?: Scope;
    /** No credential needed (still rate limited per IP). */
    public?: boolean;
    /** Health and metrics: per-IP operations limit, no API credential parsing. */
    operations?: boolean;
  }
}

export type { AppInstance } from '../platform/http-plugin.ts';

/** Who may call a route: a scope, 'public', 'operations' (health/metrics) or 'none' (outside /api). */
export interface RouteAccess {
  method: string;
  url: string;
  access: Scope | 'public' | 'operations' | 'none';
}

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export async function buildApp(config: ResolvedConfig, services: Services): Promise<AppInstance> {
  const urlRewrites: Array<(host: string, url: string) => string | null> = [];
  const app = Fastify({
    rewriteUrl: (raw) => {
      const url = raw.url ?? '/';
      for (const rewrite of urlRewrites) {
        const next = rewrite(String(raw.headers.host ?? ''), url);
        if (next !== null) return next;
      }
      return url;
    },
    loggerInstance: services.logger,
    // svc writes its own request line (onResponse) with exactly the spec's fields.
    logController: new LogController({ disableRequestLogging: true }),
    // request.log is rarely used: its pino child is created on first use (lazy-logger.ts).
    childLoggerFactory: lazyChildLogger,
    trustProxy: config.trustProxy,
    bodyLimit: 1_048_576,
    requestIdHeader: false,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID();
    },
    ajv: { customOptions: { allErrors: false, coerceTypes: false, removeAdditional: false } },
    clientErrorHandler: clientErrorReply,
    // find-my-way answers a longer path parameter with a bare 414 outside the error handler; the
    // header limit (431) bounds the URL anyway, and routes validate their parameters' length.
    routerOptions: { maxParamLength: 16_384 },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // JSON only on the API; a capability that proxies other media types adds its parser in its own scope.
  app.removeContentTypeParser('text/plain');

  app.decorateRequest('auth', null);
  app.decorateRequest('authFailure', null);
  app.decorateRequest('rateLimit', null);
  app.decorateRequest('threat', null);
  app.decorateRequest('gatewayId', null);
  app.decorateRequest('trafficOrgId', null);
  app.decorate('urlRewrites', urlRewrites);

  await app.register(cors, {
    origin: config.allowedOrigins.includes('*') ? '*' : [...config.allowedOrigins],
    exposedHeaders: ['X-Request-ID', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After'],
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'svc API', version: '1.0.0', description: 'Threat protection and AI gateway. See docs/ for details.' },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'API key (svc_org_…) or dashboard session token' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
        schemas: RESPONSE_COMPONENTS,
      },
      security: [{ bearer: [] }, { apiKey: [] }],
    },
    // Response schemas are attached to the document only, never to the routes' serializers (openapi-responses.ts).
    transform: documentResponses,
  });

  const routes: RouteAccess[] = [];
  app.decorate('routeAccess', routes);
  app.addHook('onRoute', (route) => {
    const url = route.url ?? route.path;
    const routeConfig = (route.config ?? {}) as { scope?: Scope; public?: boolean; operations?: boolean };
    for (const method of [route.method].flat()) {
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      const access = routeConfig.scope ?? (routeConfig.operations ? 'operations' : routeConfig.public ? 'public' : 'none');
      routes.push({ method, url, access });
    }
    if (url.startsWith('/api/') && routeConfig.scope === undefined && routeConfig.public !== true) {
      throw new Error(`route ${String(route.method)} ${url} declares neither config.scope nor config.public`);
    }
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-ID', request.id);
    const routeConfig = request.routeOptions.config;
    if (routeConfig.traffic === true) return;
    if (routeConfig.operations !== true) {
      // A key svc has not seen lately costs a database lookup: charge it to the caller's IP
      // first, so a flood of made-up keys is refused before it reaches the database.
      const presented = presentedCredential(request);
      if (presented !== null && presented.startsWith('svc_') && !services.accounts.isKeyCached(presented)) {
        const gate = await services.rateLimiter.hit(`keylookup:${request.ip}`, KEY_LOOKUP_POLICY);
        if (!gate.allowed) {
          setRateLimitHeaders(reply, gate);
          services.metrics.rateLimitHits.inc({ scope: 'per_ip', gateway: request.gatewayId ?? 'api' });
          throw rateLimitError(gate, 'RATE_LIMITED');
        }
      }
      await identify(services, request, presented);
    }

    let identity: string;
    let policy: RateLimitPolicy;
    let scope: string;
    const auth = request.auth;
    if (routeConfig.operations === true) {
      identity = `ops:${request.ip}`;
      policy = OPERATIONS_POLICY;
      scope = 'per_ip';
    } else if (auth?.kind === 'api_key') {
      identity = `key:${auth.keyId}`;
      policy = PLAN_POLICIES[auth.plan];
      scope = 'per_key';
    } else if (auth?.kind === 'user') {
      identity = `user:${auth.userId}`;
      policy = PLAN_POLICIES[auth.plan];
      scope = 'per_user';
    } else {
      identity = `ip:${request.ip}`;
      policy = ANONYMOUS_POLICY;
      scope = 'per_ip';
    }
    const decision = await services.rateLimiter.hit(identity, policy);
    setRateLimitHeaders(reply, decision);
    request.rateLimit = { identity, holdsSlot: decision.holdsSlot };
    // A client that goes away before the response is sent never reaches onResponse; the
    // response's 'close' fires either way, so the slot is always given back (idempotent).
    if (decision.holdsSlot) reply.raw.once('close', () => void releaseSlot(services, request));
    if (!decision.allowed) {
      services.metrics.rateLimitHits.inc({ scope: decision.refusedBy === 'concurrency' ? 'concurrency' : scope, gateway: request.gatewayId ?? 'api' });
      if (auth !== null) {
        services.events.emit(auth.orgId, 'rate_limit.exceeded', {
          scope,
          identifier: auth.keyId ?? auth.userId ?? request.ip,
          limit: decision.limit,
          window_seconds: windowSeconds(policy, decision.refusedBy),
          retry_after: decision.retryAfter,
        });
      }
      throw rateLimitError(decision, decision.refusedBy === 'concurrency' ? 'CONCURRENCY_LIMITED' : 'RATE_LIMITED');
    }

    // Who may call the route: decided here, before the body is read or validated, so an
    // unauthenticated caller learns nothing about the body a route expects.
    const needed = routeConfig.scope;
    if (needed === undefined) return;
    if (auth === null) throw new SvcError(request.authFailure ?? 'AUTH_MISSING');
    if (!scopeAllows(auth.scope, needed)) {
      throw new SvcError('SCOPE_INSUFFICIENT', { details: { required_scope: needed, key_scope: auth.scope } });
    }
  });

  app.addHook('onResponse', async (request, reply) => {
    const status = reply.statusCode;
    const gateway = request.gatewayId ?? 'api';
    const seconds = reply.elapsedTime / 1000;
    services.metrics.requests.inc({ gateway, method: request.method, status: String(status) });
    services.metrics.requestDuration.observe({ gateway, method: request.method }, seconds);
    const threat = request.threat;
    services.requestLog.write({
      request_id: request.id,
      org_id: request.auth?.orgId ?? request.trafficOrgId ?? null,
      gateway_id: request.gatewayId,
      method: request.method,
      path: request.routeOptions.url ?? pathOf(request.url),
      status,
      duration_ms: Math.round(reply.elapsedTime * 1000) / 1000,
      threat_score: threat?.score ?? null,
      decision: threat?.decision ?? null,
      pattern: threat?.pattern ?? null,
    });
    await releaseSlot(services, request);
  });


  app.setNotFoundHandler({ preHandler: undefined }, async (request) => {
    const allow = allowedMethods(routes, pathOf(request.url));
    if (allow.length > 0) {
      throw new SvcError('METHOD_NOT_ALLOWED', { details: { method: request.method, path: pathOf(request.url), allowed: allow }, headers: { Allow: allow.join(', ') } });
    }
    throw new SvcError('ROUTE_NOT_FOUND', { details: { method: request.method, path: pathOf(request.url) } });
  });

  app.setErrorHandler(async (error: FastifyError | SvcError, request, reply) => sendError(services, error, request, reply));

  // Background work runs while the server does: it starts when the app is ready; services.close() stops it.
  app.addHook('onReady', () => services.start());
  // Open streams would hold app.close() until the drain deadline: end them first (bounded).
  app.addHook('preClose', async () => {
    const { ended, destroyed } = await services.streams.endAll(STREAM_SHUTDOWN_GRACE_MS);
    if (ended + destroyed > 0) services.logger.info({ ended, destroyed, grace_ms: STREAM_SHUTDOWN_GRACE_MS }, 'open streams ended for shutdown');
  });

  await registerOperationalRoutes(app as unknown as AppInstance, services);
  await registerCapabilities(app as unknown as AppInstance, services);

  app.get('/openapi.json', { config: { operations: true }, schema: { hide: true } }, async () => app.swagger());
  return app as unknown as AppInstance;
}

/** The credential text from Authorization: Bearer or X-API-Key; '' when malformed; null when absent. */
function presentedCredential(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header === 'string' && header.length > 0) {
    const match = /^Bearer[ ]+(\S{1,4096})[ ]*$/i.exec(header);
    return match?.[1] ?? '';
  }
  const apiKey = request.headers['x-api-key'];
  return typeof apiKey === 'string' && apiKey.length > 0 ? apiKey.trim() : null;
}

async function identify(services: Services, request: FastifyRequest, presented: string | null): Promise<void> {
  if (presented === null) {
    request.authFailure = 'AUTH_MISSING';
    return;
  }
  if (presented === '') {
    request.authFailure = 'AUTH_INVALID';
    return;
  }
  if (presented.startsWith('svc_')) {
    const result = await services.accounts.authenticateKey(presented);
    if (result === 'invalid') request.authFailure = 'AUTH_INVALID';
    else if (result === 'revoked') request.authFailure = 'AUTH_REVOKED';
    else request.auth = result;
    return;
  }
  const session = presented.split('.').length === 3 ? await services.accounts.users.authenticateSession(presented) : null;
  if (session === null) request.authFailure = 'AUTH_INVALID';
  else request.auth = session;
}

async function releaseSlot(services: Services, request: FastifyRequest): Promise<void> {
  const held = request.rateLimit;
  if (held === null || !held.holdsSlot) return;
  held.holdsSlot = false;
  await services.rateLimiter.release(held.identity);
}

function windowSeconds(policy: RateLimitPolicy, refusedBy: string | null): number {
  const window = policy.windows.find((candidate) => candidate.name === refusedBy) ?? policy.windows[0];
  return window ? Math.round(window.windowMs / 1000) : 0;
}

function pathOf(url: string): string {
  const index = url.indexOf('?');
  return index < 0 ? url : url.slice(0, index);
}

/** Maps any error to the catalogue; nothing a client sends can produce a raw 500. */
async function sendError(services: Services, error: FastifyError | SvcError, request: FastifyRequest, reply: FastifyReply) {
  let svcError: SvcError;
  if (error instanceof SvcError) {
    svcError = error;
  } else if ((error as FastifyError).validation) {
    svcError = validationError((error as FastifyError).validation!, (error as FastifyError).validationContext ?? 'body');
  } else {
    svcError = databaseFailure(error) ?? bodyTooLarge(error, request.routeOptions.bodyLimit) ?? mapFastifyError(error as FastifyError);
  }
  logFailure(services.logger, svcError, error, request.id);
  if (svcError.headers) for (const [name, value] of Object.entries(svcError.headers)) reply.header(name, value);
  reply.status(svcError.status);
  return errorBody(svcError.code, svcError.message, request.id, svcError.details);
}

function mapFastifyError(error: FastifyError): SvcError {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new SvcError('BODY_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new SvcError('UNSUPPORTED_MEDIA_TYPE');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new SvcError('INVALID_JSON', { message: 'The request body is empty.' });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new SvcError('VALIDATION_FAILED', { message: 'Content-Length does not match the body.' });
    default:
      break;
  }
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') return new SvcError('INVALID_JSON');
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return new SvcError('VALIDATION_FAILED', { message: 'The request is not valid.' });
  }
  return new SvcError('INTERNAL', { cause: error });
}
