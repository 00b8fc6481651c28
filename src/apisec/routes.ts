/**
 * API-security routes: gateway CRUD and discovered endpoints under /api/v1/gateways, geo-blocking
 * rules under /api/v1/geo-rules, and the traffic itself — `/gw/{id}/<any path>` and, through the
 * app's URL rewrite, any path on a gateway's hostname / path prefix — plus WebSocket upgrades on
 * the same addresses. Traffic routes carry `config.traffic`: no svc credential, no plan rate
 * limit (the gateway's own limit applies), no CORS handling of svc's (the backend's headers pass).
 */
import { METHODS, request as httpRequest, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex, Readable } from 'node:stream';
import { Type, type Static } from '@sinclair/typebox';
import { planGate } from '../accounts/index.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { auditActor, type RoutesPlugin } from '../platform/http-plugin.ts';
import { ERRORS, errorBody, SvcError } from '../platform/errors.ts';
import { guardedLookup, isForbiddenLiteral } from '../platform/ssrf.ts';
import type { StreamRegistry } from '../platform/streams.ts';
import { readUpgradeBody, relayDeclinedUpgrade, requestHeaders, UPGRADE_BODY_LIMIT } from './forward.ts';
import type { ApiSecurity, TrafficOutcome, TrafficRequest } from './service.ts';
import type { Gateway } from './types.ts';
import { BOT_CLASSES } from './types.ts';

const BotAction = Type.Union([Type.Literal('allow'), Type.Literal('log'), Type.Literal('challenge'), Type.Literal('block')]);
const GatewayBody = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  backend_url: Type.String({ minLength: 8, maxLength: 2_048 }),
  mode: Type.Union([Type.Literal('monitor'), Type.Literal('block')]),
  hostname: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 253 }), Type.Null()])),
  path_prefix: Type.Optional(Type.Union([Type.String({ minLength: 2, maxLength: 512 }), Type.Null()])),
  openapi: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
  rate_limit: Type.Optional(
    Type.Union([
      Type.Object(
        { requests_per_minute: Type.Integer({ minimum: 1, maximum: 1_000_000 }), burst: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 100_000 }), Type.Null()])) },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
  ),
  bot_policy: Type.Optional(Type.Object(Object.fromEntries(BOT_CLASSES.map((name) => [name, Type.Optional(BotAction)])), { additionalProperties: false })),
  health_check: Type.Optional(
    Type.Union([
      Type.Object(
        {
          path: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
          interval_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600 })),
          timeout_ms: Type.Optional(Type.Integer({ minimum: 50, maximum: 60_000 })),
          unhealthy_after: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
  ),
  timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
  block_details: Type.Optional(Type.Union([Type.Literal('hidden'), Type.Literal('full')], { description: "What a blocked or challenged client is told: hidden (default) — the request id only; full — the threat decision." })),
};
const CreateGateway = Type.Object(
  { ...GatewayBody, mode: Type.Optional(GatewayBody.mode) },
  { additionalProperties: false },
);
const PatchGateway = Type.Object(
  { ...GatewayBody, name: Type.Optional(GatewayBody.name), backend_url: Type.Optional(GatewayBody.backend_url), mode: Type.Optional(GatewayBody.mode) },
  { additionalProperties: false, minProperties: 1 },
);
const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
const GeoRuleBody = Type.Object(
  {
    rule_name: Type.String({ minLength: 1, maxLength: 200 }),
    action: Type.Literal('block'),
    countries: Type.Array(Type.String({ pattern: '^[A-Za-z]{2}$' }), { minItems: 1, maxItems: 250, uniqueItems: true }),
    response_code: Type.Optional(Type.Integer({ minimum: 400, maximum: 599 })),
    log: Type.Optional(Type.Boolean()),
    gateway_id: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
  },
  { additionalProperties: false },
);

function authOf(request: FastifyRequest): { orgId: string; actor: string } {
  const auth = request.auth;
  if (auth === null) throw new SvcError('AUTH_MISSING');
  const actor = auditActor(auth);
  return { orgId: auth.orgId, actor };
}

function geoView(rule: { id: string; gatewayId: string | null; ruleName: string; action: string; countries: string[]; responseCode: number; log: boolean; createdAt: Date }, enforced: boolean) {
  return {
    id: rule.id,
    rule_name: rule.ruleName,
    action: rule.action,
    countries: rule.countries,
    response_code: rule.responseCode,
    log: rule.log,
    gateway_id: rule.gatewayId,
    enforced,
    created_at: rule.createdAt.toISOString(),
  };
}

/** Header names in received order: lower case, and as the client spelled them (bot signals). */
function headerNamesOf(raw: IncomingMessage): { headerNames: string[]; rawHeaderNames: string[] } {
  const headerNames: string[] = [];
  const rawHeaderNames: string[] = [];
  for (let index = 0; index < raw.rawHeaders.length; index += 2) {
    rawHeaderNames.push(raw.rawHeaders[index]!);
    headerNames.push(raw.rawHeaders[index]!.toLowerCase());
  }
  return { headerNames, rawHeaderNames };
}

function splitTarget(url: string): { path: string; query: string } {
  const question = url.indexOf('?');
  return question < 0 ? { path: url, query: '' } : { path: url.slice(0, question), query: url.slice(question + 1) };
}

/**
 * The path below the mount point ('/gw/<id>' after rewriting), starting with '/': what follows the
 * id's segment as the client wrote it (an id written with percent-escapes is longer than the id).
 */
function below(url: string): string {
  let end = url.startsWith('/gw/') ? 4 : 0;
  while (end < url.length && url[end] !== '/' && url[end] !== '?') end += 1;
  const rest = url.slice(end);
  return rest === '' || rest.startsWith('?') ? `/${rest}` : rest;
}

export interface ApiSecurityRoutesOptions {
  apisec: ApiSecurity;
  geoBlocking: boolean;
  trustProxy: boolean;
  allowPrivateTargets: boolean;
  /** Proxied responses still streaming at shutdown: let finish within the grace period, then cut (absent: not tracked). */
  streams?: StreamRegistry;
}

export const apiSecurityRoutes: RoutesPlugin<ApiSecurityRoutesOptions> = async (app, options) => {
  const { apisec } = options;
  // Hostnames and path prefixes of gateways: rewritten onto /gw/{id} before routing (build-app's rewriteUrl).
  app.urlRewrites.push((host, url) => {
    const routed = apisec.route(host, url);
    if (routed === null) return null;
    const rest = url.slice(routed.mount.length);
    return `/gw/${routed.gateway.id}${rest.startsWith('/') ? rest : `/${rest}`}`;
  });

  app.get('/api/v1/gateways', { config: { scope: 'read' }, schema: { tags: ['apisec'] } }, async (request) => {
    const { orgId } = authOf(request);
    return { gateways: (await apisec.store.list(orgId)).map((gateway) => apisec.view(gateway)) };
  });

  app.post('/api/v1/gateways', { config: { scope: 'admin' }, schema: { tags: ['apisec'], body: CreateGateway } }, async (request, reply) => {
    planGate(request, 'api_security');
    const { orgId, actor } = authOf(request);
    const gateway = await apisec.create(orgId, actor, request.body as Static<typeof CreateGateway>);
    reply.status(201);
    return apisec.view(gateway);
  });

  app.get('/api/v1/gateways/:id', { config: { scope: 'read' }, schema: { tags: ['apisec'], params: Params } }, async (request) => {
    const { orgId } = authOf(request);
    return apisec.view(await apisec.store.get(orgId, request.params.id));
  });

  app.patch('/api/v1/gateways/:id', { config: { scope: 'admin' }, schema: { tags: ['apisec'], params: Params, body: PatchGateway } }, async (request) => {
    planGate(request, 'api_security');
    const { orgId, actor } = authOf(request);
    return apisec.view(await apisec.update(orgId, actor, request.params.id, request.body as Static<typeof PatchGateway>));
  });

  app.delete('/api/v1/gateways/:id', { config: { scope: 'admin' }, schema: { tags: ['apisec'], params: Params } }, async (request, reply) => {
    const { orgId, actor } = authOf(request);
    await apisec.remove(orgId, actor, request.params.id);
    reply.status(204);
  });

  app.get('/api/v1/gateways/:id/endpoints', { config: { scope: 'read' }, schema: { tags: ['apisec'], params: Params } }, async (request) => {
    const { orgId } = authOf(request);
    return { endpoints: await apisec.endpoints(orgId, request.params.id) };
  });

  app.get('/api/v1/geo-rules', { config: { scope: 'read' }, schema: { tags: ['apisec'] } }, async (request) => {
    const { orgId } = authOf(request);
    return { enforced: options.geoBlocking, rules: (await apisec.store.listGeoRules(orgId)).map((rule) => geoView(rule, options.geoBlocking)) };
  });

  app.post('/api/v1/geo-rules', { config: { scope: 'admin' }, schema: { tags: ['apisec'], body: GeoRuleBody } }, async (request, reply) => {
    planGate(request, 'api_security');
    const { orgId, actor } = authOf(request);
    const rule = await apisec.createGeoRule(orgId, actor, request.body as Static<typeof GeoRuleBody>);
    reply.status(201);
    return geoView(rule, options.geoBlocking);
  });

  app.delete('/api/v1/geo-rules/:id', { config: { scope: 'admin' }, schema: { tags: ['apisec'], params: Params } }, async (request, reply) => {
    const { orgId, actor } = authOf(request);
    await apisec.removeGeoRule(orgId, actor, request.params.id);
    reply.status(204);
  });

  const trafficBase = (request: FastifyRequest, gateway: Gateway, mount: string): Omit<TrafficRequest, 'body'> => {
    const raw = request.raw;
    const { path, query } = splitTarget(below(raw.url ?? request.url));
    return {
      gateway,
      method: request.method,
      path,
      query,
      headers: raw.headers,
      ...headerNamesOf(raw),
      httpVersion: raw.httpVersion,
      clientIp: request.ip,
      remoteAddress: raw.socket.remoteAddress ?? request.ip,
      protocol: request.protocol,
      host: request.host,
      requestId: String(request.id),
      mount,
    };
  };

  const send = async (request: FastifyRequest, reply: FastifyReply, outcome: TrafficOutcome): Promise<void> => {
    if (outcome.summary !== null) request.threat = outcome.summary;
    switch (outcome.kind) {
      case 'error': {
        if (outcome.headers) reply.headers(outcome.headers);
        reply.header('content-type', 'application/json; charset=utf-8').status(outcome.status);
        await reply.send(errorBody(outcome.code, outcome.message ?? ERRORS[outcome.code].message, String(request.id), outcome.details));
        return;
      }
      case 'html':
        reply.headers(outcome.headers).header('content-type', 'text/html; charset=utf-8').status(outcome.status);
        await reply.send(outcome.html);
        return;
      case 'json':
        reply.headers(outcome.headers).status(outcome.status);
        await reply.send(outcome.body);
        return;
      case 'forward':
        // Written on the raw response so that the backend's headers reach the client exactly
        // (Fastify would add a content-type to a bodiless answer); svc adds only its own.
        reply.hijack();
        await forwardAnswer(request.method, reply.raw, outcome, String(reply.getHeader('x-request-id') ?? request.id));
        return;
    }
  };

  const traffic = async (request: FastifyRequest, reply: FastifyReply) => {
    const id = (request.params as { id: string }).id;
    const original = request.originalUrl;
    let gateway: Gateway | null;
    let mount = `/gw/${id}`;
    if (original !== request.url) {
      const routed = apisec.route(request.host, original);
      gateway = routed?.gateway ?? null;
      mount = routed?.mount ?? '';
    } else gateway = await apisec.resolve(id, request.ip);
    if (gateway === null) {
      request.raw.resume();
      throw new SvcError('NOT_FOUND', { details: { resource: 'gateway', id } });
    }
    request.gatewayId = gateway.id;
    request.trafficOrgId = gateway.orgId;
    const outcome = await apisec.handle({ ...trafficBase(request, gateway, mount), body: request.raw });
    await send(request, reply, outcome);
  };

  // The same traffic served ahead of Fastify's routing (build-app's raw handlers): no router, hook
  // runner, content-type parser stage or reply object on the hot path. It takes a request only
  // when the answer is sure to be the one the routes above give: a /gw/{id} whose gateway is in
  // the cache (or a hostname/path-prefix route), an id without escapes. Everything else (unknown
  // or uncached ids, which may need a rate-limited lookup; percent-encoded ids; X-Forwarded-Host
  // on a hostname route behind a trusted proxy) goes to Fastify.
  const tools = app.rawRequests.tools;
  app.rawRequests.add((raw, res) => {
    const url = raw.url;
    if (url === undefined) return false;
    if (url.startsWith('/gw/')) {
      let end = 4;
      while (end < url.length) {
        const code = url.charCodeAt(end);
        if (code === 0x2f || code === 0x3f) break;
        end += 1;
      }
      const id = url.slice(4, end);
      if (id === '' || id.includes('%')) return false;
      const gateway = apisec.resolveCached(id);
      if (gateway === undefined) return false;
      const rest = url.slice(end);
      void serveRaw(raw, res, gateway, url.slice(0, end), rest === '' || rest.startsWith('?') ? `/${rest}` : rest);
      return true;
    }
    const routed = apisec.route(String(raw.headers.host ?? ''), url);
    if (routed === null || (options.trustProxy && raw.headers['x-forwarded-host'] !== undefined)) return false;
    const rest = url.slice(routed.mount.length);
    void serveRaw(raw, res, routed.gateway, routed.mount, rest.startsWith('/') ? rest : `/${rest}`);
    return true;
  });

  const serveRaw = async (raw: IncomingMessage, res: ServerResponse, gateway: Gateway, mount: string, target: string): Promise<void> => {
    const started = performance.now();
    const requestId = tools.requestId(raw);
    const method = raw.method ?? 'GET';
    let threat: TrafficOutcome['summary'] = null;
    let recorded = false;
    // What the app's onResponse hook does for a Fastify route: on 'finish' (or a response error).
    const record = () => {
      if (recorded) return;
      recorded = true;
      // The path the client asked for, without its query string (as the framework route logs it).
      tools.record({ requestId, orgId: gateway.orgId, gatewayId: gateway.id, method, path: (raw.url ?? '/').split('?', 1)[0]!.slice(0, 2048), status: res.statusCode, elapsedMs: performance.now() - started, threat });
    };
    res.once('finish', record);
    res.once('error', record);
    try {
      const { path, query } = splitTarget(target);
      const clientIp = tools.clientIp(raw);
      const outcome = await apisec.handle({
        gateway,
        method,
        path,
        query,
        headers: raw.headers,
        ...headerNamesOf(raw),
        httpVersion: raw.httpVersion,
        clientIp,
        remoteAddress: raw.socket.remoteAddress ?? clientIp,
        protocol: tools.protocol(raw),
        host: tools.host(raw),
        requestId,
        mount,
        body: raw,
      });
      if (outcome.summary !== null) threat = outcome.summary;
      await writeOutcome(method, res, outcome, requestId);
    } catch (error) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const reply = tools.errorReply(error, requestId);
      writeBody(res, reply.status, reply.headers, JSON.stringify(reply.body), 'application/json; charset=utf-8', requestId);
    }
  };

  /** What `send` writes through Fastify's reply, written on the raw response. */
  const writeOutcome = async (method: string, res: ServerResponse, outcome: TrafficOutcome, requestId: string): Promise<void> => {
    switch (outcome.kind) {
      case 'error':
        writeBody(res, outcome.status, outcome.headers, JSON.stringify(errorBody(outcome.code, outcome.message ?? ERRORS[outcome.code].message, requestId, outcome.details)), 'application/json; charset=utf-8', requestId);
        return;
      case 'html':
        writeBody(res, outcome.status, outcome.headers, outcome.html, 'text/html; charset=utf-8', requestId);
        return;
      case 'json':
        writeBody(res, outcome.status, outcome.headers, JSON.stringify(outcome.body), undefined, requestId);
        return;
      case 'forward':
        await forwardAnswer(method, res, outcome, requestId);
        return;
    }
  };

  const forwardAnswer = async (method: string, raw: ServerResponse, outcome: Extract<TrafficOutcome, { kind: 'forward' }>, requestId: string): Promise<void> => {
    const headers = outcome.headers;
    headers['x-request-id'] = requestId;
    raw.writeHead(outcome.status, headers);
    // A backend's body is relayed as is (nothing can be appended to it): at shutdown it may
    // finish within the grace period, after which the connection is cut.
    const untrack = options.streams?.track({ end: () => undefined, destroy: () => raw.destroy() });
    if (method === 'HEAD' || outcome.status === 204 || outcome.status === 304) {
      outcome.body.resume();
      raw.end();
    } else await relay(outcome.body, raw);
    untrack?.();
  };

  // Every method Node's HTTP parser reads reaches the backend (WebDAV's PROPFIND and LOCK, PURGE,
  // REPORT, QUERY …), not only the eight Fastify routes by default: registered as methods without
  // a body for Fastify, so that it neither parses one nor answers for the backend (a QUERY without
  // a Content-Type is the backend's to refuse); the traffic route streams whatever body comes.
  // CONNECT never reaches a route (client-error.ts answers it).
  const supported = new Set(app.supportedMethods);
  for (const method of METHODS) {
    if (method === 'CONNECT' || (supported.has(method) && method !== 'QUERY')) continue;
    app.addHttpMethod(method, { hasBody: false, overrideExisting: true });
  }

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // The body stays a stream: the core reads its head for inspection and forwards the rest.
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const config = { traffic: true, cors: false } as const;
    scope.all('/gw/:id', { config, schema: { hide: true } }, traffic);
    scope.all('/gw/:id/*', { config, schema: { hide: true } }, traffic);
  });

  // WebSocket (and any other Upgrade): inspect the handshake like any request, then splice the
  // two sockets; frames pass untouched.
  app.server.on('upgrade', (raw: IncomingMessage, socket: Duplex, head: Buffer) => {
    void handleUpgrade(raw, socket, head).catch(() => socket.destroy());
  });

  const handleUpgrade = async (raw: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    socket.on('error', () => socket.destroy());
    // The handshake's id, as every other answer's: the client's valid X-Request-ID, else a new one.
    const requestId = tools.requestId(raw);
    const url = raw.url ?? '/';
    const host = String(raw.headers.host ?? '');
    let gateway: Gateway | null = null;
    let mount = '';
    let rest = url;
    const remoteAddress = raw.socket.remoteAddress ?? '';
    const forwardedFor = typeof raw.headers['x-forwarded-for'] === 'string' ? raw.headers['x-forwarded-for'].split(',')[0]!.trim() : '';
    const clientIp = options.trustProxy && forwardedFor !== '' ? forwardedFor : remoteAddress;
    const match = /^\/gw\/([0-9a-fA-F-]{36})(?=\/|\?|$)/.exec(url);
    if (match !== null) {
      try {
        gateway = await apisec.resolve(match[1]!, clientIp);
      } catch (error) {
        if (error instanceof SvcError && error.code === 'RATE_LIMITED') return refuseSocket(socket, 429, undefined, JSON.stringify(errorBody('RATE_LIMITED', ERRORS.RATE_LIMITED.message, requestId)), 'application/json; charset=utf-8', requestId);
        throw error;
      }
      mount = `/gw/${match[1]}`;
      rest = url.slice(mount.length) || '/';
    } else {
      const routed = apisec.route(host, url);
      if (routed !== null) {
        gateway = routed.gateway;
        mount = routed.mount;
        rest = url.slice(mount.length) || '/';
      }
    }
    if (gateway === null) return refuseSocket(socket, 404, undefined, JSON.stringify(errorBody('NOT_FOUND', ERRORS.NOT_FOUND.message, requestId)), 'application/json; charset=utf-8', requestId);
    // A body sent with the handshake is read whole, inspected with it and forwarded before the
    // new protocol's bytes (which follow it on the socket).
    const received = await readUpgradeBody(raw.headers, socket, head);
    if (!received.ok) {
      if (received.code === 'CLOSED') return void socket.destroy();
      const message = received.code === 'MALFORMED_REQUEST' ? 'An upgrade request may carry a body only with a valid Content-Length (not chunked).' : received.code === 'BODY_TOO_LARGE' ? `An upgrade request's body may be at most ${UPGRADE_BODY_LIMIT} bytes.` : ERRORS[received.code].message;
      return refuseSocket(socket, ERRORS[received.code].status, undefined, JSON.stringify(errorBody(received.code, message, requestId)), 'application/json; charset=utf-8', requestId);
    }
    if (rest.startsWith('?')) rest = `/${rest}`;
    const { path, query } = splitTarget(rest);
    const protocol = (raw.socket as { encrypted?: boolean }).encrypted === true ? 'https' : 'http';
    const refusal = await apisec.inspectHandshake({
      gateway, method: raw.method ?? 'GET', path, query, headers: raw.headers, ...headerNamesOf(raw), httpVersion: raw.httpVersion,
      clientIp, remoteAddress, protocol, host, requestId, mount,
    }, received.body);
    // Refused: the answer a plain request would get (status, headers, body), then the connection closes.
    if (refusal !== null) {
      switch (refusal.kind) {
        case 'error':
          return refuseSocket(socket, refusal.status, refusal.headers, JSON.stringify(errorBody(refusal.code, refusal.message ?? ERRORS[refusal.code].message, requestId, refusal.details)), 'application/json; charset=utf-8', requestId);
        case 'json':
          return refuseSocket(socket, refusal.status, refusal.headers, JSON.stringify(refusal.body), undefined, requestId);
        case 'html':
          return refuseSocket(socket, refusal.status, refusal.headers, refusal.html, 'text/html; charset=utf-8', requestId);
        case 'forward':
          // A handshake is never answered by forwarding; nothing is read from its body.
          refusal.body.resume();
          return refuseSocket(socket, 502, undefined, JSON.stringify(errorBody('BACKEND_UNREACHABLE', ERRORS.BACKEND_UNREACHABLE.message, requestId)), 'application/json; charset=utf-8', requestId);
      }
    }
    const backend = new URL(gateway.backendUrl);
    // The guarded lookup below never sees an IP literal: it is checked here (a backend saved while ALLOW_PRIVATE_TARGETS was on).
    if (isForbiddenLiteral(backend.hostname, { allowPrivate: options.allowPrivateTargets })) {
      return refuseSocket(socket, 502, undefined, JSON.stringify(errorBody('BACKEND_UNREACHABLE', ERRORS.BACKEND_UNREACHABLE.message, requestId)), 'application/json; charset=utf-8', requestId);
    }
    const headers = requestHeaders(raw.headers, backend.host, { remoteAddress, protocol, host, trustProxy: options.trustProxy });
    headers.connection = 'Upgrade';
    if (raw.headers.upgrade !== undefined) headers.upgrade = raw.headers.upgrade;
    const basePath = backend.pathname.endsWith('/') ? backend.pathname.slice(0, -1) : backend.pathname;
    const outgoing = (backend.protocol === 'https:' ? httpsRequest : httpRequest)({
      host: backend.hostname,
      port: backend.port === '' ? undefined : Number(backend.port),
      method: raw.method,
      path: `${basePath}${path}${query === '' ? '' : `?${query}`}`,
      headers,
      agent: false,
      lookup: guardedLookup({ allowPrivate: options.allowPrivateTargets }) as never,
      timeout: gateway.settings.timeoutMs,
    });
    const timeoutMs = gateway.settings.timeoutMs;
    let timedOut = false;
    outgoing.on('timeout', () => {
      timedOut = true;
      outgoing.destroy(new Error('timeout'));
    });
    let answered = false;
    outgoing.on('error', () => {
      if (socket.destroyed) return;
      // Once the backend's answer is being relayed, a 502 written after it would corrupt it.
      if (answered) socket.destroy();
      else if (timedOut) refuseSocket(socket, 504, undefined, JSON.stringify(errorBody('BACKEND_TIMEOUT', ERRORS.BACKEND_TIMEOUT.message, requestId, { timeout_ms: timeoutMs })), 'application/json; charset=utf-8', requestId);
      else refuseSocket(socket, 502, undefined, JSON.stringify(errorBody('BACKEND_UNREACHABLE', ERRORS.BACKEND_UNREACHABLE.message, requestId)), 'application/json; charset=utf-8', requestId);
    });
    outgoing.on('response', (response) => {
      // The backend declined the upgrade: relay its answer, re-framed, and close.
      answered = true;
      relayDeclinedUpgrade(raw, socket, response, requestId);
    });
    outgoing.on('upgrade', (response, backendSocket, backendHead) => {
      // timeout_ms bounds the handshake only: an idle WebSocket stays open.
      outgoing.setTimeout(0);
      outgoing.removeAllListeners('timeout');
      backendSocket.setTimeout(0);
      const lines = [`HTTP/1.1 101 Switching Protocols`];
      for (let index = 0; index < response.rawHeaders.length; index += 2) {
        if (response.rawHeaders[index]!.toLowerCase() !== 'x-request-id') lines.push(`${response.rawHeaders[index]}: ${response.rawHeaders[index + 1]}`);
      }
      lines.push(`X-Request-ID: ${requestId}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (backendHead.length > 0) socket.write(backendHead);
      if (received.rest.length > 0) backendSocket.write(received.rest);
      backendSocket.on('error', () => socket.destroy());
      socket.on('error', () => backendSocket.destroy());
      socket.on('close', () => backendSocket.destroy());
      backendSocket.on('close', () => socket.destroy());
      backendSocket.pipe(socket);
      socket.pipe(backendSocket);
    });
    outgoing.end(received.body);
  };
};

/**
 * Pipes a backend body to the client and settles when the response is finished or either side
 * failed (then both are destroyed, so the backend connection is released). What
 * stream.pipeline does, without its per-call AbortController and the DOMException it builds on
 * every completion (measured: ~1.5 % of the proxy's CPU at 1 connection).
 */
function relay(body: Readable, out: ServerResponse): Promise<void> {
  return new Promise((settle) => {
    let done = false;
    // The listeners stay (both streams belong to this one request): a late error is swallowed.
    const finish = (failed: boolean) => {
      if (done) return;
      done = true;
      if (failed) {
        body.destroy();
        out.destroy();
      }
      settle();
    };
    body.on('error', () => finish(true));
    out.on('error', () => finish(true));
    out.on('close', () => finish(!out.writableFinished));
    out.on('finish', () => finish(false));
    body.pipe(out);
  });
}

/**
 * A whole answer on the raw response as Fastify's reply.send writes it: header names in lower
 * case, X-Request-ID, the content type unless the outcome set one, Content-Length.
 */
function writeBody(res: ServerResponse, status: number, extra: Record<string, string | string[]> | undefined, text: string, contentType: string | undefined, requestId: string): void {
  const headers: Record<string, string | string[]> = { 'x-request-id': requestId };
  if (extra !== undefined) for (const name in extra) headers[name.toLowerCase()] = extra[name]!;
  if (contentType !== undefined) headers['content-type'] = contentType;
  else if (headers['content-type'] === undefined) headers['content-type'] = 'application/json; charset=utf-8';
  headers['content-length'] = String(Buffer.byteLength(text));
  res.writeHead(status, headers);
  res.end(text);
}

/**
 * Refuses an upgrade on its raw socket with the answer writeBody would give a plain request
 * (X-Request-ID, the outcome's headers, content type and length), then closes the connection.
 */
function refuseSocket(socket: Duplex, status: number, extra: Record<string, string | string[]> | undefined, text: string, contentType: string | undefined, requestId: string): void {
  const headers: Record<string, string | string[]> = { 'x-request-id': requestId };
  if (extra !== undefined) for (const name in extra) headers[name.toLowerCase()] = extra[name]!;
  if (contentType !== undefined) headers['content-type'] = contentType;
  else if (headers['content-type'] === undefined) headers['content-type'] = 'application/json; charset=utf-8';
  headers['content-length'] = String(Buffer.byteLength(text));
  headers.connection = 'close';
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`];
  for (const name in headers) {
    const value = headers[name]!;
    for (const item of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${item}`);
  }
  socket.end(`${lines.join('\r\n')}\r\n\r\n${text}`);
}
