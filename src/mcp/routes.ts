/**
 * HTTP surface of the MCP capability. Management API under /api/v1/mcp (admin scope to change,
 * read scope to look) and the proxy endpoint /mcp/{id} (any valid API key; the key's role decides
 * which tools it may call). The proxy reads the body as raw bytes so that svc — not Fastify —
 * decides how unparseable input is refused (JSON-RPC parse error).
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { planGate } from '../accounts/index.ts';
import type { RateLimiter } from '../platform/rate-limit.ts';
import { auditActor, type RoutesPlugin } from '../platform/http-plugin.ts';
import { SvcError } from '../platform/errors.ts';
import { roleOf } from './authorization.ts';
import { TOOL_CATEGORIES } from './definitions.ts';
import { checkOrigin, type OriginPolicy } from './origin.ts';
import type { ProxyCaller } from './proxy.ts';
import type { Mcp } from './service.ts';
import { protectedResourceMetadataUrl, type McpOAuth, type McpOAuthRole } from './oauth.ts';
import type { AuthContext } from '../accounts/index.ts';
import type { StreamRegistry } from '../platform/streams.ts';
import { serializeEvent, shutdownEvent } from './sse.ts';
import type { WorkerRouting } from '../platform/worker-routing.ts';
import type { IncomingMessage } from 'node:http';

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9 ._-]{0,99}$' });
const Url = Type.String({ minLength: 8, maxLength: 2_048 });
const Categories = Type.Record(Type.String({ minLength: 1, maxLength: 200 }), Type.Union(TOOL_CATEGORIES.map((category) => Type.Literal(category))), { maxProperties: 1_000 });

function authOf(request: FastifyRequest): { orgId: string; actor: string } {
  const auth = request.auth;
  if (auth === null) throw new SvcError('AUTH_MISSING');
  return { orgId: auth.orgId, actor: auditActor(auth) };
}

export interface McpRouteOptions {
  readonly mcp: Mcp;
  /** Key ids whose role is super_admin (MCP_SUPER_ADMIN_KEYS). */
  readonly superAdminKeys: readonly string[];
  /** Gives back a request's concurrency slot: long-lived SSE streams must not hold one. */
  readonly rateLimiter: RateLimiter;
  /** Open SSE streams, ended by shutdown (absent: streams are not tracked). */
  readonly streams?: StreamRegistry;
  /** Origin and Host validation of the proxy endpoints (absent: loopback origins only, any Host). */
  readonly origins?: OriginPolicy;
  /** With WORKERS > 1: requests for a session another worker holds go to that worker. */
  readonly routing?: WorkerRouting;
  /** OAuth for the MCP endpoints (RFC 9728 metadata, the org's authorization server's tokens); absent: svc keys only. */
  readonly oauth?: McpOAuth;
  /** Turns a verified token's holder into the request's credential (the org's plan and tag). */
  readonly oauthCredential?: (holder: { orgId: string; subject: string; role: McpOAuthRole }) => Promise<AuthContext | null>;
}

const OAuthSettingsBody = Type.Object(
  {
    issuer: Type.String({ minLength: 8, maxLength: 2_048, pattern: '^https?://', description: "The authorization server's issuer identifier (its metadata is discovered from it)." }),
    jwks_uri: Type.Optional(Type.String({ minLength: 8, maxLength: 2_048, pattern: '^https?://', description: 'Where its signing keys are published; discovered from the issuer when absent.' })),
    audience: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 2_048 }), Type.Null()], { description: 'The aud a token must carry; absent or null: the MCP endpoint URL itself (RFC 8707).' })),
    role: Type.Optional(Type.Union([Type.Literal('viewer'), Type.Literal('operator'), Type.Literal('admin')], { description: "The MCP role of a token's holder (tool authorization by role); default viewer." })),
    scopes_supported: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 32 })),
  },
  { additionalProperties: false },
);

/** The URL of an MCP endpoint as this request reached it: the OAuth resource (RFC 8707) its tokens are for. */
function resourceOf(request: FastifyRequest, id: string): string {
  return `${request.protocol}://${request.host}/mcp/${encodeURIComponent(id)}`;
}

/** The in-memory session a proxy request names: Mcp-Session-Id, or a legacy POST's sessionId. */
function sessionOf(raw: IncomingMessage, url: string): string | null {
  const header = raw.headers['mcp-session-id'];
  if (typeof header === 'string') return header;
  const query = url.indexOf('?');
  if (query < 0 || !url.slice(0, query).endsWith('/messages')) return null;
  return new URLSearchParams(url.slice(query + 1)).get('sessionId');
}

export const mcpRoutes: RoutesPlugin<McpRouteOptions> = async (app, options) => {
  const { mcp } = options;
  const superAdmins = new Set(options.superAdminKeys);
  // Not awaited: the slot is marked given back at once (the response hook will not release it
  // again) and the release itself (a Redis DECR when shared) need not delay the answer's relay.
  const releaseSlot = (request: FastifyRequest): void => {
    const held = request.rateLimit;
    if (held === null || !held.holdsSlot) return;
    held.holdsSlot = false;
    options.rateLimiter.release(held.identity).catch(() => undefined);
  };
  // FEATURE_MCP_SECURITY=false: every route of the pillar — management, read and proxy — answers
  // 403 FEATURE_DISABLED (docs/mcp.md), after authentication (the app's onRequest hook runs first).
  app.addHook('onRequest', async () => {
    if (!mcp.enabled) throw new SvcError('FEATURE_DISABLED', { details: { feature: 'FEATURE_MCP_SECURITY' } });
  });

  // Bridged channels and legacy SSE streams live in the worker that opened them. A request for one
  // that reaches another worker is piped to the owner before anything else runs here: the owner
  // authenticates, limits, inspects and logs it (src/platform/worker-routing.ts).
  const routing = options.routing;
  if (routing?.enabled === true) {
    const tools = app.rawRequests.tools;
    app.rawRequests.add((raw, res) => {
      const url = raw.url;
      if (url === undefined || !url.startsWith('/mcp/')) return false;
      const session = sessionOf(raw, url);
      const owner = session === null ? null : routing.ownerElsewhere(session);
      if (owner === null) return false;
      const requestId = tools.requestId(raw);
      const end = routing.forward(raw, res, owner, {
        // The owner is gone, and its sessions with it: answered here as any unknown session is.
        unreachable: () => tools.serve(raw, res),
        failed: () => {
          const reply = tools.errorReply(new SvcError('SERVICE_UNAVAILABLE'), requestId);
          res.writeHead(reply.status, { ...reply.headers, 'content-type': 'application/json' });
          res.end(JSON.stringify(reply.body));
        },
      });
      // A forwarded event stream is ended by this worker's shutdown like one of its own: a final
      // error event (SERVICE_UNAVAILABLE, shutting_down), then its end.
      const finalEvent = () => (String(res.getHeader('content-type') ?? '').startsWith('text/event-stream') ? serializeEvent(shutdownEvent(requestId)) : undefined);
      const untrack = options.streams?.track({ end: () => end(finalEvent()), destroy: () => res.destroy() });
      if (untrack !== undefined) res.once('close', untrack);
      return true;
    });
  }

  app.post('/api/v1/mcp/servers', {
    config: { scope: 'admin' },
    schema: {
      tags: ['mcp'],
      body: Type.Object({
        name: Name,
        url: Type.Optional(Url),
        transport: Type.Optional(Type.Union([Type.Literal('streamable_http'), Type.Literal('sse'), Type.Literal('stdio')])),
        stdio: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        tool_categories: Type.Optional(Categories),
        on_held: Type.Optional(Type.Union([Type.Literal('hide'), Type.Literal('block')])),
      }, { additionalProperties: false }),
    },
  }, async (request, reply) => {
    const { orgId, actor } = authOf(request);
    planGate(request, 'mcp_security');
    const created = await mcp.createServer(orgId, actor, request.body);
    reply.status(201);
    return created;
  });
  app.patch('/api/v1/mcp/servers/:id', {
    config: { scope: 'admin' },
    schema: {
      tags: ['mcp'],
      params: Params,
      body: Type.Object({
        name: Type.Optional(Name),
        url: Type.Optional(Url),
        transport: Type.Optional(Type.Union([Type.Literal('streamable_http'), Type.Literal('sse'), Type.Literal('stdio')])),
        stdio: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        tool_categories: Type.Optional(Categories),
        on_held: Type.Optional(Type.Union([Type.Literal('hide'), Type.Literal('block')])),
      }, { additionalProperties: false, minProperties: 1 }),
    },
  }, async (request) => {
    const { orgId, actor } = authOf(request);
    planGate(request, 'mcp_security');
    return mcp.updateServer(orgId, actor, request.params.id, request.body);
  });
  app.get('/api/v1/mcp/servers', { config: { scope: 'read' }, schema: { tags: ['mcp'] } }, async (request) => ({ servers: await mcp.listServers(authOf(request).orgId) }));
  app.get('/api/v1/mcp/servers/:id', { config: { scope: 'read' }, schema: { tags: ['mcp'], params: Params } }, async (request) => mcp.getServer(authOf(request).orgId, request.params.id));
  app.delete('/api/v1/mcp/servers/:id', { config: { scope: 'admin' }, schema: { tags: ['mcp'], params: Params } }, async (request, reply) => {
    const { orgId, actor } = authOf(request);
    await mcp.deleteServer(orgId, actor, request.params.id);
    reply.status(204);
  });
  app.get('/api/v1/mcp/servers/:id/definitions', { config: { scope: 'read' }, schema: { tags: ['mcp'], params: Params } }, async (request) => ({
    definitions: await mcp.definitions(authOf(request).orgId, request.params.id),
  }));
  app.post('/api/v1/mcp/servers/:id/definitions/approve', {
    config: { scope: 'admin' },
    schema: {
      tags: ['mcp'],
      params: Params,
      body: Type.Object({
        kind: Type.Union([Type.Literal('tool'), Type.Literal('instructions')]),
        name: Type.String({ maxLength: 200 }),
        hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
      }, { additionalProperties: false }),
    },
  }, async (request) => {
    const { orgId, actor } = authOf(request);
    return mcp.approve(orgId, actor, request.params.id, request.body.kind, request.body.name, request.body.hash);
  });
  app.get('/api/v1/mcp/collisions', { config: { scope: 'read' }, schema: { tags: ['mcp'] } }, async (request) => ({ collisions: await mcp.collisions(authOf(request).orgId) }));
  app.get('/api/v1/mcp/quarantine', {
    config: { scope: 'read' },
    schema: { tags: ['mcp'], querystring: Type.Object({ state: Type.Optional(Type.Union([Type.Literal('held'), Type.Literal('released')])) }, { additionalProperties: false }) },
  }, async (request) => ({ quarantine: await mcp.quarantined(authOf(request).orgId, request.query.state) }));
  app.get('/api/v1/mcp/quarantine/:id', { config: { scope: 'admin' }, schema: { tags: ['mcp'], params: Params } }, async (request) => mcp.quarantine(authOf(request).orgId, request.params.id));
  app.post('/api/v1/mcp/quarantine/:id/release', { config: { scope: 'admin' }, schema: { tags: ['mcp'], params: Params } }, async (request) => {
    const { orgId, actor } = authOf(request);
    return mcp.release(orgId, actor, request.params.id);
  });
  app.post('/api/v1/mcp/sessions/:id/heartbeat', { config: { scope: 'read' }, schema: { tags: ['mcp'], params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 256 }) }) } }, async (request) =>
    mcp.heartbeat(authOf(request).orgId, request.params.id));
  app.get('/api/v1/mcp/sessions/:id', { config: { scope: 'read' }, schema: { tags: ['mcp'], params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 256 }) }) } }, async (request) =>
    mcp.session(authOf(request).orgId, request.params.id));
  app.get('/api/v1/mcp/audit', {
    config: { scope: 'read' },
    schema: { tags: ['mcp'], querystring: Type.Object({ session_id: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: false }) },
  }, async (request) => {
    const records = await mcp.sessionAudit(authOf(request).orgId, request.query.session_id);
    return {
      session_id: request.query.session_id,
      entries: records.map((record) => ({ seq: record.seq, occurred_at: record.occurredAt, action: record.action, outcome: record.outcome, target: record.target, ...record.details, hash: record.hash, prev_hash: record.prevHash })),
    };
  });

  // OAuth 2.0 for the MCP endpoints (docs/mcp.md "Authorization"): the org's authorization server.
  const { oauth } = options;
  if (oauth !== undefined) {
    app.get('/api/v1/mcp/authorization', { config: { scope: 'read' }, schema: { tags: ['mcp'] } }, async (request) => {
      const settings = await oauth.get(authOf(request).orgId);
      if (settings === null) throw new SvcError('NOT_FOUND', { details: { resource: 'mcp_authorization' } });
      return settings;
    });
    app.put('/api/v1/mcp/authorization', { config: { scope: 'admin' }, schema: { tags: ['mcp'], body: OAuthSettingsBody } }, async (request) => {
      planGate(request, 'mcp_security');
      const { orgId, actor } = authOf(request);
      return oauth.set(orgId, actor, request.body as Static<typeof OAuthSettingsBody>);
    });
    app.delete('/api/v1/mcp/authorization', { config: { scope: 'admin' }, schema: { tags: ['mcp'] } }, async (request, reply) => {
      const { orgId, actor } = authOf(request);
      if (!(await oauth.remove(orgId, actor))) throw new SvcError('NOT_FOUND', { details: { resource: 'mcp_authorization' } });
      return reply.status(204).send();
    });
    // RFC 9728 Protected Resource Metadata of /mcp/{id}: public, as MCP clients fetch it before they hold a token.
    app.get('/.well-known/oauth-protected-resource/mcp/:id', { schema: { hide: true, params: Type.Object({ id: Type.String({ maxLength: 64 }) }) } }, async (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
      const settings = await oauth.forServer(request.params.id);
      if (settings === null) throw new SvcError('NOT_FOUND', { details: { resource: 'protected_resource' } });
      reply.header('cache-control', 'public, max-age=300');
      return {
        resource: resourceOf(request, request.params.id),
        authorization_servers: [settings.issuer],
        bearer_methods_supported: ['header'],
        ...(settings.scopes_supported.length === 0 ? {} : { scopes_supported: settings.scopes_supported }),
        resource_name: 'MCP server behind svc',
      };
    });
  }

  // The proxy endpoint: raw bytes in, the upstream's answer (JSON or SSE) out.
  await app.register(async (scope) => {
    if (oauth !== undefined) {
      // A 401 names where the endpoint's OAuth metadata is (MCP authorization spec, RFC 9728 §5.1).
      scope.addHook('onSend', async (request, reply, payload) => {
        if (reply.statusCode !== 401) return payload;
        const id = (request.params as { id?: string }).id;
        if (id !== undefined && (await oauth.forServer(id).catch(() => null)) !== null) {
          reply.header('WWW-Authenticate', `Bearer resource_metadata="${protectedResourceMetadataUrl(resourceOf(request, id))}"`);
        }
        return payload;
      });
    }
    // DNS-rebinding protection on every proxy endpoint, before the body is read (docs/mcp.md
    // "Origin and Host validation"); runs after authentication (the global onRequest hook).
    const origins = options.origins ?? { allowedOrigins: [], allowedHosts: [] };
    scope.addHook('onRequest', async (request) => {
      const origin = request.headers.origin;
      const refusal = checkOrigin(origins, request.host, typeof origin === 'string' ? origin : undefined);
      if (refusal !== null) throw new SvcError(refusal.code, { details: refusal.code === 'MCP_ORIGIN_REFUSED' ? { origin: refusal.origin } : { host: refusal.host } });
    });
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 4 * 1_048_576 }, (_request, body, done) => done(null, body));
    const handler = async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
      const auth = request.auth;
      if (auth === null) throw new SvcError('AUTH_MISSING');
      const server = await mcp.proxyServer(auth.orgId, request.params.id);
      const actor = auditActor(auth);
      const hopHeader = request.headers['x-agent-hop'];
      const caller: ProxyCaller = {
        orgId: auth.orgId,
        role: roleOf({ kind: auth.kind, scope: auth.scope, role: auth.role, keyId: auth.keyId }, superAdmins),
        actor,
        hop: typeof hopHeader === 'string' && hopHeader !== '' ? hopHeader.slice(0, 128) : actor,
      };
      const controller = new AbortController();
      // A client gone before its answer was sent stops the upstream request; a finished answer
      // needs no abort (creating the abort reason costs a DOMException on every call).
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) controller.abort();
      });
      if (request.method === 'GET') releaseSlot(request);
      const response = await mcp.handle({
        method: request.method,
        server,
        caller,
        headers: request.headers,
        body: Buffer.isBuffer(request.body) ? request.body : null,
        requestId: request.id,
        signal: controller.signal,
      });
      reply.status(response.status);
      for (const [name, value] of Object.entries(response.headers)) reply.header(name, value);
      if (response.body !== null && typeof response.body !== 'string') {
        releaseSlot(request);
        // A long-lived stream: shutdown aborts the upstream (final SSE error event, clean end).
        const untrack = options.streams?.track({ end: (reason) => controller.abort(reason), destroy: () => reply.raw.destroy() });
        if (untrack !== undefined) reply.raw.once('close', untrack);
      }
      return reply.send(response.body ?? '');
    };
    // Besides svc keys, the org's OAuth access tokens (verified for this endpoint's URL as audience).
    const authenticate =
      oauth === undefined || options.oauthCredential === undefined
        ? undefined
        : async (request: FastifyRequest, token: string): Promise<AuthContext | null> => {
            const id = (request.params as { id?: string }).id;
            if (id === undefined) return null;
            const holder = await oauth.verify(id, token, resourceOf(request, id));
            return holder === null ? null : options.oauthCredential!(holder);
          };
    const routeOptions = { config: { scope: 'read' as const, ...(authenticate === undefined ? {} : { authenticate }) }, schema: { hide: true, params: Params } };
    // The legacy HTTP+SSE transport (2024-11-05) for clients that do not speak Streamable HTTP.
    const callerOf = (request: FastifyRequest): { caller: ProxyCaller; orgId: string } => {
      const auth = request.auth;
      if (auth === null) throw new SvcError('AUTH_MISSING');
      const actor = auditActor(auth);
      const hopHeader = request.headers['x-agent-hop'];
      return {
        orgId: auth.orgId,
        caller: { orgId: auth.orgId, role: roleOf({ kind: auth.kind, scope: auth.scope, role: auth.role, keyId: auth.keyId }, superAdmins), actor, hop: typeof hopHeader === 'string' && hopHeader !== '' ? hopHeader.slice(0, 128) : actor },
      };
    };
    scope.get('/mcp/:id/sse', routeOptions, async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
      const { caller, orgId } = callerOf(request);
      const server = await mcp.proxyServer(orgId, request.params.id);
      releaseSlot(request);
      const stream = mcp.openLegacy(server, caller, request.headers);
      reply.raw.once('close', () => stream.destroy());
      // Shutdown ends the legacy stream (its upstream session is ended with it).
      const untrack = options.streams?.track({ end: () => void stream.end(), destroy: () => reply.raw.destroy() });
      if (untrack !== undefined) reply.raw.once('close', untrack);
      reply.status(200).header('content-type', 'text/event-stream').header('cache-control', 'no-cache');
      return reply.send(stream);
    });
    scope.post('/mcp/:id/messages', {
      config: { scope: 'read' as const },
      schema: { hide: true, params: Params, querystring: Type.Object({ sessionId: Type.String({ minLength: 1, maxLength: 64 }) }) },
    }, async (request: FastifyRequest<{ Params: { id: string }; Querystring: { sessionId: string } }>, reply: FastifyReply) => {
      const { caller } = callerOf(request);
      const answer = await mcp.legacyMessage(request.params.id, request.query.sessionId, caller, Buffer.isBuffer(request.body) ? request.body : null, request.id);
      reply.status(answer.status).header('content-type', answer.status === 202 || answer.status === 404 ? 'text/plain' : 'application/json');
      return reply.send(answer.body);
    });
    scope.post('/mcp/:id', routeOptions, handler);
    scope.get('/mcp/:id', routeOptions, handler);
    scope.delete('/mcp/:id', routeOptions, handler);
  });
};
