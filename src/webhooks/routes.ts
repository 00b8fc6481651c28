/**
 * Webhook subscriptions API (admin scope): create (secret shown once), list, get, PATCH
 * (url, events, description, state — { "state": "active" } re-enables a paused endpoint),
 * delete, recent deliveries, and the failure summary. Every change is written to the org's audit chain.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AuditLog } from '../audit/index.ts';
import { retryingLockConflicts } from '../platform/db/failures.ts';
import type { Queryable } from '../platform/db/index.ts';
import { SvcError } from '../platform/errors.ts';
import { auditActor, type RoutesPlugin } from '../platform/http-plugin.ts';
import { WEBHOOK_EVENTS } from './events.ts';
import type { Webhooks } from './webhooks.ts';

const Url = Type.String({ minLength: 8, maxLength: 2_048 });
const Events = Type.Array(Type.Union(WEBHOOK_EVENTS.map((event) => Type.Literal(event))), { minItems: 1, maxItems: WEBHOOK_EVENTS.length, uniqueItems: true });
const Description = Type.Union([Type.String({ maxLength: 500 }), Type.Null()]);
const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });

function authOf(request: FastifyRequest): { orgId: string; actor: string } {
  const auth = request.auth;
  if (auth === null) throw new SvcError('AUTH_MISSING');
  const actor = auditActor(auth);
  return { orgId: auth.orgId, actor };
}

export interface WebhookRoutesOptions {
  webhooks: Webhooks;
  /** Every subscription change is written here. */
  audit: AuditLog;
}

export const webhookRoutes: RoutesPlugin<WebhookRoutesOptions> = async (app, { webhooks, audit }) => {
  // A change's entry is appended in the change's transaction (`within`), the whole tried again on
  // a lost lock conflict: both are stored or neither (an outage answers 503 with nothing stored).
  const note = (orgId: string, actor: string, action: string, target: string, details: Record<string, unknown>, tx: Queryable) =>
    audit.append(orgId, { actor, action, target, outcome: 'success', details }, { tx });

  app.post(
    '/api/v1/webhooks',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['webhooks'],
        body: Type.Object({ url: Url, events: Events, description: Type.Optional(Description) }, { additionalProperties: false }),
      },
    },
    async (request, reply) => {
      const { orgId, actor } = authOf(request);
      const created = await retryingLockConflicts(() =>
        webhooks.create(orgId, request.body, (tx, endpoint) => note(orgId, actor, 'webhook.create', endpoint.id, { url: endpoint.url, events: endpoint.events }, tx)),
      );
      reply.status(201);
      return created;
    },
  );

  app.get('/api/v1/webhooks', { config: { scope: 'admin' }, schema: { tags: ['webhooks'] } }, async (request) => {
    return { webhooks: await webhooks.list(authOf(request).orgId) };
  });

  app.get('/api/v1/webhooks/:id', { config: { scope: 'admin' }, schema: { tags: ['webhooks'], params: Params } }, async (request) => {
    return webhooks.get(authOf(request).orgId, request.params.id);
  });

  app.patch(
    '/api/v1/webhooks/:id',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['webhooks'],
        params: Params,
        body: Type.Object(
          {
            url: Type.Optional(Url),
            events: Type.Optional(Events),
            description: Type.Optional(Description),
            state: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('paused')])),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
      },
    },
    async (request) => {
      const { orgId, actor } = authOf(request);
      const changes = Object.keys(request.body);
      return retryingLockConflicts(() =>
        webhooks.update(orgId, request.params.id, request.body, (tx, endpoint) => note(orgId, actor, 'webhook.update', endpoint.id, { changes, state: endpoint.state }, tx)),
      );
    },
  );

  app.delete('/api/v1/webhooks/:id', { config: { scope: 'admin' }, schema: { tags: ['webhooks'], params: Params } }, async (request, reply) => {
    const { orgId, actor } = authOf(request);
    await retryingLockConflicts(() => webhooks.remove(orgId, request.params.id, (tx, id) => note(orgId, actor, 'webhook.delete', id, {}, tx)));
    reply.status(204);
    return null;
  });

  app.get(
    '/api/v1/webhooks/:id/deliveries',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['webhooks'],
        params: Params,
        querystring: Type.Object({ limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$' })) }, { additionalProperties: false }),
      },
    },
    async (request) => {
      const limit = request.query.limit === undefined ? 50 : Number(request.query.limit);
      return { deliveries: await webhooks.deliveries(authOf(request).orgId, request.params.id, limit) };
    },
  );

  app.get(
    '/api/v1/webhooks/:id/failures/summary',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['webhooks'],
        params: Params,
        querystring: Type.Object({ since: Type.Optional(Type.String({ format: 'date-time' })) }, { additionalProperties: false }),
      },
    },
    async (request) => {
      const since = request.query.since === undefined ? undefined : new Date(request.query.since);
      return webhooks.failureSummary(authOf(request).orgId, request.params.id, since);
    },
  );
};
