import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../services.ts';

/** The Fastify instance every route module receives (TypeBox type provider). */
export type AppInstance = FastifyInstance<Server, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

/** A capability's routes: `register<Capability>Routes(app, services)` from its index.ts. */
export type CapabilityPlugin = (app: AppInstance, services: Services) => Promise<void> | void;
