/**
 * The shape of a capability's routes plugin: what `src/<capability>/routes.ts` exports and the
 * HTTP layer registers with `app.register(plugin, options)` (encapsulated: a plugin's hooks,
 * parsers and decorators stay in its own scope). Options carry the capability's built core and
 * whatever else its routes need — never the whole services object.
 * Only routes files (and src/http) import this; capability cores import no Fastify type.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';

/** The Fastify instance every routes plugin receives (TypeBox type provider). */
export type AppInstance = FastifyInstance<Server, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

/** A capability's routes: `export const xRoutes: RoutesPlugin<{ x: X }> = async (app, { x }) => { … }`. */
export type RoutesPlugin<Options extends object> = FastifyPluginAsync<Options, Server, TypeBoxTypeProvider, FastifyBaseLogger>;

/** What one request leaves behind once answered: counted in the request metrics and logged as the request line. */
export interface RequestRecord {
  readonly requestId: string;
  readonly orgId: string | null;
  readonly gatewayId: string | null;
  readonly method: string;
  /** The route pattern (e.g. '/gw/:id/*'), as Fastify names it in the log line. */
  readonly path: string;
  readonly status: number;
  readonly elapsedMs: number;
  readonly threat: { score: number; decision: string; pattern: string | null } | null;
}

/**
 * What the HTTP layer lends a raw request handler (one tried on the listening server before
 * Fastify's routing, so that hot proxy traffic skips the framework): the same request id, client
 * address, host and protocol Fastify would report, the same record (metrics and request line) its
 * onResponse hook writes, and the same catalogue error its error handler answers.
 */
export interface RawRequestTools {
  /** A valid incoming X-Request-ID, else a new UUID (the app's genReqId). */
  requestId(raw: IncomingMessage): string;
  /** request.ip, request.host and request.protocol as Fastify computes them under the app's trustProxy. */
  clientIp(raw: IncomingMessage): string;
  host(raw: IncomingMessage): string;
  protocol(raw: IncomingMessage): string;
  record(entry: RequestRecord): void;
  /** The error reply for anything thrown (logged as the app's error handler logs it). */
  errorReply(error: unknown, requestId: string): { status: number; headers: Record<string, string>; body: unknown };
  /** Hands a request a raw handler took to Fastify after all (nothing read or written yet). */
  serve(raw: IncomingMessage, res: ServerResponse): void;
}

/** Takes the request (true) or leaves it to Fastify (false, nothing read or written). */
export type RawRequestHandler = (raw: IncomingMessage, res: ServerResponse) => boolean;

export interface RawRequests {
  readonly tools: RawRequestTools;
  add(handler: RawRequestHandler): void;
}

/**
 * The audit actor of an authenticated caller: `api_key:<key id>` for an API key, `user:<user id>`
 * for a dashboard session (docs/audit.md); one form on every route. Entries written before
 * 2026-11-28 by the gateway, geo-rule and MCP routes say `key:<id>`: the chain hashes them as
 * written, so they stay; they name the same key.
 */
export function auditActor(auth: { readonly keyId?: string | null; readonly userId?: string | null } | null | undefined): string {
  if (auth?.keyId !== null && auth?.keyId !== undefined) return `api_key:${auth.keyId}`;
  return `user:${auth?.userId ?? 'unknown'}`;
}
