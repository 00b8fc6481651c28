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
