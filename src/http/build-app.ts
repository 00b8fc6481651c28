/**
 * Builds the Fastify application from the services. `server.ts` only listens; tests call
 * `buildApp` and use `app.inject()`.
 *
 * Request life cycle (hooks, in order):
 *   onRequest   X-Request-ID; identify the credential (API key or dashboard session, as a bearer
 *               token or, when no bearer is sent, the svc_session cookie, whose state changes
 *               then need X-CSRF-Token (403 CSRF_TOKEN_INVALID); never
 *               rejecting yet); rate limit on the first axis that applies — API key, JWT user,
 *               IP — and set X-RateLimit-* on every response; 429 with Retry-After when refused;
 *               then enforce the route's declared scope, before the body is read: 401
 *               AUTH_MISSING / AUTH_INVALID / AUTH_REVOKED, 403 SCOPE_INSUFFICIENT.
 *   onResponse  metrics, one JSON log line with the spec's fields, release the concurrency slot.
 * Both hooks are callback-style and stay synchronous while memory answers (cached key, in-memory
 * limiter); only a step that must wait (key lookup, session, Redis) goes through a promise.
 * Every route under /api/ must declare `config.scope` or `config.public`; one that does neither
 * fails at boot, so no endpoint is ever public by omission.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, { LogController, type FastifyError, type FastifyReply, type FastifyRequest, type FastifySchema } from 'fastify';
import cookie from '@fastify/cookie';
import cors from '@fastify/cors';
import { SpanKind, SpanStatusCode, trace, type Context } from '@opentelemetry/api';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  ANONYMOUS_POLICY,
  CSRF_HEADER,
  KEY_LOOKUP_POLICY,
  SESSION_COOKIE,
  OPERATIONS_POLICY,
  PLAN_POLICIES,
  scopeAllows,
  type AuthContext,
  type Scope,
  type Sessions,
} from '../accounts/index.ts';
import type { ResolvedConfig } from '../platform/config.ts';
import { errorBody, SvcError, type ErrorCode } from '../platform/errors.ts';
import type { RateLimitDecision, RateLimitPolicy } from '../platform/rate-limit.ts';
import type { Counter, Histogram } from 'prom-client';
import { lazyChildLogger } from './lazy-logger.ts';
import { databaseFailure } from '../platform/db/failures.ts';
import { jsonNestedDeeper, MAX_JSON_DEPTH } from '../platform/json-depth.ts';
import { bodyTooLarge, logFailure } from './error-reply.ts';
import { validationError } from './validation-message.ts';
import { allowedMethods } from './allowed-methods.ts';
import { clientErrorReply, connectReply } from './client-error.ts';
import { finishDocument, nameOperation } from './openapi-operations.ts';
import { documentResponses, RESPONSE_COMPONENTS } from './openapi-responses.ts';
import { rateLimitError, setRateLimitHeaders } from '../platform/rate-limit-reply.ts';
import type { AppInstance, RawRequestHandler, RawRequests, RawRequestTools, RequestRecord } from '../platform/http-plugin.ts';
import { STREAM_SHUTDOWN_GRACE_MS } from '../platform/streams.ts';
import type { Services } from '../services.ts';
import { registerOperationalRoutes } from './routes/operational.ts';
import { registerCapabilities } from './capabilities.ts';
import { registerDashboard } from './dashboard.ts';
import { refuseSensorTraffic } from './collector-role.ts';
import { listenerSensorId } from '../sensors/index.ts';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
    authFailure: ErrorCode | null;
    rateLimit: { identity: string; holdsSlot: boolean } | null;
    /** True when the caller was identified by the dashboard's session cookie (CSRF applies). */
    cookieSession: boolean;
    /** Set by whatever scored the request; logged and counted. */
    threat: { score: number; decision: string; pattern: string | null } | null;
    gatewayId: string | null;
    /** Org of a protected gateway's end-user traffic (no svc credential; logged as org_id). */
    trafficOrgId: string | null;
    /** The request's OpenTelemetry context (its server span), when tracing is on. */
    traceContext: Context | null;
  }
  interface FastifyInstance {
    /** Dashboard sessions, for finishSignIn (src/accounts/sign-in.ts) in every routes plugin. */
    accountSessions: Sessions;
    /** Host/path rewrites consulted before routing (protected gateways' hostnames and path prefixes). */
    urlRewrites: Array<(host: string, url: string) => string | null>;
    /** Handlers tried on the listening server before Fastify's routing (protected gateways' traffic). */
    rawRequests: RawRequests;
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
    /**
     * Another bearer credential the route accepts (the MCP endpoints: the org's OAuth access
     * tokens), tried when the token is neither an svc key nor a dashboard session.
     */
    authenticate?: (request: FastifyRequest, token: string) => Promise<AuthContext | null>;
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
      // The sensor listener's requests and a collector's are never a protected gateway's traffic.
      if (config.role === 'collector' || listenerSensorId(raw) !== undefined) return url;
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
    genReqId: requestIdOf,
    ajv: { customOptions: { allErrors: false, coerceTypes: false, removeAdditional: false } },
    clientErrorHandler: clientErrorReply,
    // A path Fastify cannot decode (`%ff`, a lone `%`) is answered before routing and hooks: with
    // svc's envelope and request id instead of Fastify's own body.
    frameworkErrors: (error, request, reply) => {
      const body = error.code === 'FST_ERR_BAD_URL'
        ? errorBody('MALFORMED_REQUEST', 'The request path is not valid percent-encoding.', request.id, { field: 'path' })
        : errorBody('VALIDATION_FAILED', 'The request is not valid.', request.id);
      void (reply as unknown as FastifyReply).code(400).header('X-Request-ID', request.id).send(body);
    },
    // find-my-way answers a longer path parameter with a bare 414 outside the error handler; the
    // header limit (431) bounds the URL anyway, and routes validate their parameters' length.
    routerOptions: { maxParamLength: 16_384 },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // JSON only on the API; a capability that proxies other media types adds its parser in its own scope.
  app.removeContentTypeParser('text/plain');
  // Fastify's JSON parser (prototype poisoning refused), after a check of the nesting depth: a
  // body nested thousands deep would overflow the stack of whatever walks it (json-depth.ts).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (jsonNestedDeeper(text)) {
      done(new SvcError('VALIDATION_FAILED', { message: `The JSON body nests objects and arrays more than ${MAX_JSON_DEPTH} deep.`, details: { field: 'body', reason: 'too_deep', limit: MAX_JSON_DEPTH } }), undefined);
      return;
    }
    parseJson(request, text, done);
  });

  app.decorateRequest('auth', null);
  app.decorateRequest('authFailure', null);
  app.decorateRequest('rateLimit', null);
  app.decorateRequest('cookieSession', false);
  app.decorate('accountSessions', services.accounts.sessions);
  app.decorateRequest('threat', null);
  app.decorateRequest('gatewayId', null);
  app.decorateRequest('trafficOrgId', null);
  app.decorateRequest('traceContext', null);
  if (services.telemetry.enabled) traceRequests(app as unknown as AppInstance, services.telemetry);
  app.decorate('urlRewrites', urlRewrites);
  let closing = false;
  const rawHandlers: RawRequestHandler[] = [];
  // Fastify's own request listener, known once the app is built (raw handlers may hand a request back to it).
  const fastify: { listener?: (raw: IncomingMessage, res: ServerResponse) => void } = {};

  // Cookies are parsed only where a credential may come from one (admission, below): hook false.
  await app.register(cookie, { hook: false });

  await app.register(cors, {
    origin: config.allowedOrigins.includes('*') ? '*' : [...config.allowedOrigins],
    // Mcp-Session-Id and MCP-Protocol-Version: a browser MCP client (the MCP Inspector) must read them to keep its session.
    // X-SVC-*: the gateway's facts of an answer (provider used, failover, cost, verification, error code).
    exposedHeaders: [
      'X-Request-ID', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'Mcp-Session-Id', 'MCP-Protocol-Version',
      'X-SVC-Provider-Used', 'X-SVC-Model-Used', 'X-SVC-Attempts', 'X-SVC-Failover', 'X-SVC-Cost-USD', 'X-SVC-Verification', 'X-SVC-Error-Code',
    ],
    // Every method a route answers (the plugin's default is GET, HEAD, POST): an MCP client ends its session with DELETE.
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    // An OPTIONS without Origin / Access-Control-Request-Method gets the same 204 as a preflight,
    // not the plugin's plain-text 400 "Invalid Preflight Request".
    strictPreflight: false,
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'svc API',
        version: '1.0.0',
        description: 'Threat protection and AI gateway: API security, MCP security, AI gateway and verification. See docs/ for details; an interactive reference is served at /docs.',
        license: { name: 'Proprietary', identifier: 'LicenseRef-svc' },
      },
      // Relative: the document describes the svc that serves it, whatever its address.
      servers: [{ url: '/', description: 'This svc' }],
      tags: [
        { name: 'operations', description: 'Health and metrics' },
        { name: 'accounts', description: 'Organizations, users, API keys and upstream provider keys' },
        { name: 'detection', description: 'The guard API and the response-policy thresholds' },
        { name: 'gateway', description: 'AI gateway: completions, routing, PII redaction, budgets' },
        { name: 'verification', description: 'Verification of AI responses' },
        { name: 'apisec', description: 'Protected API gateways, discovered endpoints, geo rules' },
        { name: 'mcp', description: 'MCP servers behind the inspecting proxy, sessions, quarantine' },
        { name: 'webhooks', description: 'Webhook endpoints and deliveries' },
        { name: 'siem', description: 'SIEM export: syslog (RFC 5424, CEF or JSON, over TCP or TLS) and HTTP event collector sinks' },
        { name: 'audit', description: 'The tamper-evident audit chain' },
        { name: 'compliance', description: 'Compliance and privacy evidence' },
        { name: 'sensors', description: 'Self-hosted sensors: enrolment tokens, state and pushed configuration (the sensor wire itself: docs/sensors.md)' },
      ],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'API key (svc_org_…) or dashboard session token' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          sessionCookie: { type: 'apiKey', in: 'cookie', name: 'svc_session', description: 'Dashboard session cookie; state-changing requests also send X-CSRF-Token (docs/accounts.md)' },
          metricsToken: { type: 'http', scheme: 'bearer', description: 'The metrics token (METRICS_TOKEN)' },
        },
        schemas: RESPONSE_COMPONENTS,
        responses: {
          Error: { description: 'The error envelope (docs/errors.md).', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        },
      },
      security: [{ bearer: [] }, { apiKey: [] }, { sessionCookie: [] }],
    },
    // Response schemas are attached to the document only, never to the routes' serializers
    // (openapi-responses.ts); operations are named from one table (openapi-operations.ts).
    transform: (route) => {
      const documented = documentResponses(route);
      const method = [route.route.method].flat()[0] ?? 'GET';
      return { ...documented, schema: nameOperation(documented.schema as Record<string, unknown>, method, route.url) as FastifySchema };
    },
    transformObject: (document) => finishDocument(document as { openapiObject: Record<string, unknown> }) as ReturnType<typeof finishDocument> & Record<string, never>,
  });

  // The interactive API reference (Swagger UI, its assets served from the package: no CDN).
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true, docExpansion: 'list' } });

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

  // One onRequest hook doing the steps in order, synchronous while every answer is in memory
  // (cached key, in-memory limiter): no promise, no microtask turn. A step that must wait (a key
  // lookup, a session, Redis) hands the rest of the request to a promise.
  const admit = admission(services);
  app.addHook('onRequest', (request, reply, done) => {
    let pending: Promise<void> | undefined;
    try {
      pending = admit(request, reply);
    } catch (error) {
      done(error as Error);
      return;
    }
    if (pending === undefined) done();
    else pending.then(() => done(), (error: unknown) => done(error as Error));
  });

  const record = recorder(services);
  app.decorate('rawRequests', { tools: rawRequestTools(services, config.trustProxy, record, (raw, res) => fastify.listener?.(raw, res)), add: (handler: RawRequestHandler) => void rawHandlers.push(handler) });
  app.addHook('onResponse', (request, reply, done) => {
    record({
      requestId: request.id,
      orgId: request.auth?.orgId ?? request.trafficOrgId ?? null,
      gatewayId: request.gatewayId,
      method: request.method,
      // svc's API logs its route template; traffic to a protected API logs the path the client
      // asked for (without the query string, which may carry credentials), as a WAF log would.
      path: request.routeOptions.config.traffic === true ? pathOf(request.originalUrl).slice(0, 2048) : (request.routeOptions.url ?? pathOf(request.url)),
      status: reply.statusCode,
      elapsedMs: reply.elapsedTime,
      threat: request.threat,
    });
    const held = request.rateLimit;
    if (held === null || !held.holdsSlot) return done();
    held.holdsSlot = false;
    if (services.rateLimiter.releaseNow(held.identity)) return done();
    services.rateLimiter.release(held.identity).then(() => done(), (error: unknown) => done(error as Error));
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
    closing = true;
    const { ended, destroyed } = await services.streams.endAll(STREAM_SHUTDOWN_GRACE_MS);
    if (ended + destroyed > 0) services.logger.info({ ended, destroyed, grace_ms: STREAM_SHUTDOWN_GRACE_MS }, 'open streams ended for shutdown');
  });

  // The collector role refuses the pillars' traffic: their sensors serve it (collector-role.ts).
  if (config.role === 'collector') app.addHook('onRequest', refuseSensorTraffic);
  await registerOperationalRoutes(app as unknown as AppInstance, services);
  await registerCapabilities(app as unknown as AppInstance, services);
  await registerDashboard(app as unknown as AppInstance);

  app.get('/openapi.json', { config: { operations: true }, schema: { hide: true } }, async () => app.swagger());

  app.server.on('connect', (raw: IncomingMessage, socket: Duplex) => connectReply(socket, requestIdOf(raw)));

  // The raw handlers go ahead of Fastify's own request listener on the server (inject() does not
  // pass through it: it reaches Fastify's routes, which serve the same traffic). While the app
  // closes, Fastify answers every request (503 on a kept-alive connection).
  const [listener, ...others] = app.server.listeners('request') as Array<(raw: IncomingMessage, res: ServerResponse) => void>;
  fastify.listener = listener;
  if (listener !== undefined && others.length === 0) {
    app.server.removeListener('request', listener);
    app.server.on('request', (raw: IncomingMessage, res: ServerResponse) => {
      if (!closing && config.role !== 'collector' && listenerSensorId(raw) === undefined) for (const handler of rawHandlers) if (handler(raw, res)) return;
      listener(raw, res);
    });
  }
  return app as unknown as AppInstance;
}

function requestIdOf(raw: IncomingMessage): string {
  const incoming = raw.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID();
}

/** The last entry of a header that may carry a list (Fastify's X-Forwarded-Host/-Proto reading). */
function lastEntry(value: string): string {
  const comma = value.lastIndexOf(',');
  return comma < 0 ? value.trim() : value.slice(comma + 1).trim();
}

/** The leftmost non-empty X-Forwarded-For address, as proxy-addr reads it when every proxy is trusted; '' when none. */
function leftmostForwarded(header: string): string {
  let start = 0;
  for (;;) {
    const comma = header.indexOf(',', start);
    const token = header.slice(start, comma < 0 ? header.length : comma).replace(/^ +| +$/g, '');
    if (token !== '') return token;
    if (comma < 0) return '';
    start = comma + 1;
  }
}

/** request.ip / host / protocol as Fastify computes them, for requests served before its routing. */
function rawRequestTools(services: Services, trustProxy: boolean, record: (entry: RequestRecord) => void, serve: (raw: IncomingMessage, res: ServerResponse) => void): RawRequestTools {
  return {
    serve,
    requestId: requestIdOf,
    clientIp(raw) {
      const socketAddress = raw.socket.remoteAddress ?? '';
      if (!trustProxy) return socketAddress;
      const forwarded = raw.headers['x-forwarded-for'];
      const client = typeof forwarded === 'string' ? leftmostForwarded(forwarded) : '';
      return client === '' ? socketAddress : client;
    },
    host(raw) {
      const forwarded = raw.headers['x-forwarded-host'];
      if (trustProxy && typeof forwarded === 'string' && forwarded !== '') return lastEntry(forwarded);
      return raw.headers.host ?? '';
    },
    protocol(raw) {
      const forwarded = raw.headers['x-forwarded-proto'];
      if (trustProxy && typeof forwarded === 'string' && forwarded !== '') return lastEntry(forwarded);
      return (raw.socket as { encrypted?: boolean }).encrypted === true ? 'https' : 'http';
    },
    record,
    errorReply(error, requestId) {
      const svcError = error instanceof SvcError ? error : databaseFailure(error) ?? mapFastifyError(error as FastifyError);
      logFailure(services.logger, svcError, error, requestId);
      const headers: Record<string, string> = {};
      if (svcError.headers) for (const [name, value] of Object.entries(svcError.headers)) headers[name.toLowerCase()] = value;
      return { status: svcError.status, headers, body: errorBody(svcError.code, svcError.message, requestId, svcError.details) };
    },
  };
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

type RouteConfig = FastifyRequest['routeOptions']['config'];

/**
 * The onRequest steps, in order: X-Request-ID; identify the credential; rate limit; the route's
 * scope. Returns undefined when all of it was decided synchronously (a cached key, the in-memory
 * limiter), else a promise of the rest; a refusal is thrown (or rejects the promise).
 */
function admission(services: Services): (request: FastifyRequest, reply: FastifyReply) => Promise<void> | undefined {
  return (request, reply) => {
    reply.header('X-Request-ID', request.id);
    const routeConfig = request.routeOptions.config;
    if (routeConfig.traffic === true) return undefined;
    if (routeConfig.operations !== true) {
      const presented = presentedCredential(request);
      if (presented !== null && !identifyNow(services, request, presented)) {
        return identifyLater(services, request, reply, presented).then(() => limit(services, request, reply, routeConfig));
      }
      if (presented === null) {
        const session = sessionCookie(request);
        if (session !== null) return identifyByCookie(services, request, session).then(() => limit(services, request, reply, routeConfig));
        request.authFailure = 'AUTH_MISSING';
      }
    }
    return limit(services, request, reply, routeConfig);
  };
}

/** Identifies the caller from memory; false when that needs the database (uncached key, session). */
function identifyNow(services: Services, request: FastifyRequest, presented: string): boolean {
  if (presented === '') {
    request.authFailure = 'AUTH_INVALID';
    return true;
  }
  if (!presented.startsWith('svc_')) return false;
  const result = services.accounts.authenticateCachedKey(presented);
  if (result === null) return false;
  setKeyResult(request, result);
  return true;
}

async function identifyLater(services: Services, request: FastifyRequest, reply: FastifyReply, presented: string): Promise<void> {
  if (presented.startsWith('svc_')) {
    // A key svc has not seen lately costs a database lookup: charge it to the caller's IP
    // first, so a flood of made-up keys is refused before it reaches the database.
    if (!services.accounts.isKeyCached(presented)) {
      const gate = await services.rateLimiter.hit(`keylookup:${request.ip}`, KEY_LOOKUP_POLICY);
      if (!gate.allowed) {
        setRateLimitHeaders(reply, gate);
        services.metrics.rateLimitHits.inc({ scope: 'per_ip', gateway: request.gatewayId ?? 'api' });
        throw rateLimitError(gate, 'RATE_LIMITED');
      }
    }
    setKeyResult(request, await services.accounts.authenticateKey(presented));
    return;
  }
  const session = presented.split('.').length === 3 ? await services.accounts.users.authenticateSession(presented) : null;
  const other = request.routeOptions.config.authenticate;
  const auth = session ?? (other === undefined ? null : await other(request, presented));
  if (auth === null) request.authFailure = 'AUTH_INVALID';
  else request.auth = auth;
}

/** The dashboard's session cookie, or null when the request carries none. */
function sessionCookie(request: FastifyRequest): string | null {
  const header = request.headers.cookie;
  if (typeof header !== 'string' || !header.includes(SESSION_COOKIE)) return null;
  const value = request.server.parseCookie(header)[SESSION_COOKIE];
  return typeof value === 'string' && value !== '' ? value : null;
}

/** A dashboard user by the session cookie (no bearer credential sent): CSRF then applies to state changes. */
async function identifyByCookie(services: Services, request: FastifyRequest, token: string): Promise<void> {
  const auth = token.length <= 4096 && token.split('.').length === 3 ? await services.accounts.users.authenticateSession(token) : null;
  if (auth === null) {
    request.authFailure = 'AUTH_INVALID';
    return;
  }
  request.auth = auth;
  request.cookieSession = true;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * CSRF: a state-changing request authenticated by the session cookie must carry the session's
 * CSRF token in X-CSRF-Token (the page reads it from the svc_csrf cookie or GET /api/v1/auth/session).
 * Bearer and X-API-Key requests are not affected: a browser never adds those by itself.
 */
function checkCsrf(services: Services, request: FastifyRequest, auth: AuthContext): void {
  if (!request.cookieSession || SAFE_METHODS.has(request.method)) return;
  const presented = request.headers[CSRF_HEADER];
  if (typeof presented !== 'string' || presented === '') throw new SvcError('CSRF_TOKEN_INVALID', { details: { reason: 'missing', header: 'X-CSRF-Token' } });
  if (auth.sessionId === undefined || !services.accounts.sessions.csrfMatches(auth.sessionId, presented)) {
    throw new SvcError('CSRF_TOKEN_INVALID', { details: { reason: 'mismatch', header: 'X-CSRF-Token' } });
  }
}

function setKeyResult(request: FastifyRequest, result: AuthContext | 'invalid' | 'revoked'): void {
  if (result === 'invalid') request.authFailure = 'AUTH_INVALID';
  else if (result === 'revoked') request.authFailure = 'AUTH_REVOKED';
  else request.auth = result;
}

/** Rate limits on the first axis that applies (operations IP, API key, JWT user, IP), then checks the scope. */
function limit(services: Services, request: FastifyRequest, reply: FastifyReply, routeConfig: RouteConfig): Promise<void> | undefined {
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
  const decision = services.rateLimiter.hitNow(identity, policy);
  if (decision !== null) {
    admit(services, request, reply, routeConfig, { decision, identity, policy, scope });
    return undefined;
  }
  return services.rateLimiter.hit(identity, policy).then((later) => admit(services, request, reply, routeConfig, { decision: later, identity, policy, scope }));
}

/** Applies a rate-limit decision (headers, slot, refusal), then enforces the route's scope. */
function admit(
  services: Services,
  request: FastifyRequest,
  reply: FastifyReply,
  routeConfig: RouteConfig,
  limited: { decision: RateLimitDecision; identity: string; policy: RateLimitPolicy; scope: string },
): void {
  const { decision, identity, policy, scope } = limited;
  const auth = request.auth;
  setRateLimitHeaders(reply, decision);
  const held = { identity, holdsSlot: decision.holdsSlot };
  request.rateLimit = held;
  // A client that goes away before the response is sent never reaches onResponse; the
  // response's 'close' fires either way, so the slot is always given back (idempotent).
  if (decision.holdsSlot) reply.raw.on('close', () => void releaseSlot(services, held));
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
  checkCsrf(services, request, auth);
  if (!scopeAllows(auth.scope, needed)) {
    throw new SvcError('SCOPE_INSUFFICIENT', { details: { required_scope: needed, key_scope: auth.scope } });
  }
}

/** Gives a concurrency slot back once (the response's end and its 'close' both call this). */
async function releaseSlot(services: Services, held: { identity: string; holdsSlot: boolean }): Promise<void> {
  if (!held.holdsSlot) return;
  held.holdsSlot = false;
  if (!services.rateLimiter.releaseNow(held.identity)) await services.rateLimiter.release(held.identity);
}

/**
 * The onResponse record of a request: svc_requests_total, svc_request_duration_seconds and the
 * JSON log line. The metrics' children are looked up once per gateway, method and status and kept
 * (prom-client otherwise validates and hashes the label object on every call).
 */
function recorder(services: Services): (entry: RequestRecord) => void {
  const { metrics, requestLog } = services;
  const byRoute = new Map<string, { duration: Histogram.Internal<'gateway' | 'method'>; byStatus: Map<number, Counter.Internal> }>();
  return (entry) => {
    const { status, gatewayId, method, elapsedMs, threat } = entry;
    const gateway = gatewayId ?? 'api';
    const routeKey = `${gateway}\u0000${method}`;
    let children = byRoute.get(routeKey);
    if (children === undefined) {
      children = { duration: metrics.requestDuration.labels({ gateway, method }), byStatus: new Map() };
      byRoute.set(routeKey, children);
    }
    let counter = children.byStatus.get(status);
    if (counter === undefined) {
      counter = metrics.requests.labels({ gateway, method, status: String(status) });
      children.byStatus.set(status, counter);
    }
    counter.inc();
    children.duration.observe(elapsedMs / 1000);
    requestLog.write({
      request_id: entry.requestId,
      org_id: entry.orgId,
      gateway_id: gatewayId,
      method,
      path: entry.path,
      status,
      duration_ms: Math.round(elapsedMs * 1000) / 1000,
      threat_score: threat?.score ?? null,
      decision: threat?.decision ?? null,
      pattern: threat?.pattern ?? null,
    });
  };
}

function windowSeconds(policy: RateLimitPolicy, refusedBy: string | null): number {
  const window = policy.windows.find((candidate) => candidate.name === refusedBy) ?? policy.windows[0];
  return window ? Math.round(window.windowMs / 1000) : 0;
}

/**
 * A server span per request (OpenTelemetry, only when tracing is on): a child of the caller's
 * traceparent, named by method and route, ended when the response is finished or the client left.
 */
function traceRequests(app: AppInstance, telemetry: Services['telemetry']): void {
  app.addHook('onRequest', (request, reply, done) => {
    const parent = telemetry.extract(request.headers);
    const route = request.routeOptions.url ?? 'unmatched';
    const span = telemetry.tracer.startSpan(`${request.method} ${route}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'http.route': route, 'svc.request_id': request.id } }, parent);
    request.traceContext = trace.setSpan(parent, span);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    reply.raw.once('finish', end);
    reply.raw.once('close', end);
    done();
  });
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
  } else if (request.raw.destroyed && !request.raw.complete) {
    // The client went away (or broke its own framing) before its request was complete: an
    // ECONNRESET here is the client's socket, not a database outage. (`complete` is set once the
    // whole message has arrived, so a bodyless request whose client left later still counts a
    // database failure as one.)
    svcError = new SvcError('MALFORMED_REQUEST', { message: 'The request body ended before it was complete.' });
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
