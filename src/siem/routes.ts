/**
 * SIEM sinks API (admin scope): create, list, get, PATCH (target, format, streams, token,
 * enabled) and delete. Creating and changing a sink needs a plan with SIEM export (Pro and
 * Enterprise; 403 PLAN_UPGRADE_REQUIRED otherwise); listing, reading and deleting stay open so
 * that an org that moved to a lower plan can see and remove its disabled sinks. Every change is
 * written to the org's audit chain (never the token).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { assertPlanAllows } from '../accounts/index.ts';
import type { AuditLog } from '../audit/index.ts';
import { retryingLockConflicts } from '../platform/db/failures.ts';
import type { Queryable } from '../platform/db/index.ts';
import { SvcError } from '../platform/errors.ts';
import { auditActor, type RoutesPlugin } from '../platform/http-plugin.ts';
import { SIEM_KINDS, SIEM_STREAMS, type Siem, type SinkInput } from './siem.ts';

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  format: Type.Union([Type.Literal('cef'), Type.Literal('json')]),
  transport: Type.Union([Type.Literal('tcp'), Type.Literal('tls')]),
  host: Type.String({ minLength: 1, maxLength: 253 }),
  port: Type.Integer({ minimum: 1, maximum: 65_535 }),
  url: Type.String({ minLength: 8, maxLength: 2_048 }),
  token: Type.String({ minLength: 1, maxLength: 512 }),
  index: Nullable(Type.String({ minLength: 1, maxLength: 200 })),
  ca_pem: Nullable(Type.String({ minLength: 1, maxLength: 65_536 })),
  server_name: Nullable(Type.String({ minLength: 1, maxLength: 253 })),
  facility: Type.Integer({ minimum: 0, maximum: 23 }),
  streams: Type.Array(Type.Union(SIEM_STREAMS.map((stream) => Type.Literal(stream))), { minItems: 1, maxItems: SIEM_STREAMS.length, uniqueItems: true }),
  enabled: Type.Boolean(),
};
const optional = Type.Partial(Type.Object(fields)).properties;
const CreateSink = Type.Object({ ...optional, name: fields.name, kind: Type.Union(SIEM_KINDS.map((kind) => Type.Literal(kind))) }, { additionalProperties: false });
const UpdateSink = Type.Object(optional, { additionalProperties: false, minProperties: 1 });

export interface SiemRoutesOptions {
  siem: Siem;
  /** Every sink change is written here. */
  audit: AuditLog;
}

function callerOf(request: FastifyRequest) {
  const auth = request.auth;
  if (auth === null) throw new SvcError('AUTH_MISSING');
  return { orgId: auth.orgId, plan: auth.plan, actor: auditActor(auth) };
}

/** What an audit entry says about a sink: its target and settings, never the token or the CA. */
const described = (sink: { kind: string; format: string; transport: string | null; host: string | null; port: number | null; url: string | null; streams: string[]; enabled: boolean }) => ({
  kind: sink.kind,
  format: sink.format,
  transport: sink.transport,
  host: sink.host,
  port: sink.port,
  url: sink.url,
  streams: sink.streams,
  enabled: sink.enabled,
});

export const siemRoutes: RoutesPlugin<SiemRoutesOptions> = async (app, { siem, audit }) => {
  // A change's entry is appended in the change's transaction (`within`), the whole tried again on
  // a lost lock conflict: both are stored or neither (an outage answers 503 with nothing stored).
  const note = (orgId: string, actor: string, action: string, target: string, details: Record<string, unknown>, tx: Queryable) =>
    audit.append(orgId, { actor, action, target, outcome: 'success', details }, { tx });

  app.post('/api/v1/siem/sinks', { config: { scope: 'admin' }, schema: { tags: ['siem'], body: CreateSink } }, async (request, reply) => {
    const { orgId, plan, actor } = callerOf(request);
    assertPlanAllows(plan, 'siem_export');
    const sink = await retryingLockConflicts(() => siem.create(orgId, request.body as SinkInput, (tx, created) => note(orgId, actor, 'siem.sink.created', created.id, described(created), tx)));
    reply.status(201);
    return sink;
  });

  app.get('/api/v1/siem/sinks', { config: { scope: 'admin' }, schema: { tags: ['siem'] } }, async (request) => ({ sinks: await siem.list(callerOf(request).orgId) }));

  app.get('/api/v1/siem/sinks/:id', { config: { scope: 'admin' }, schema: { tags: ['siem'], params: Params } }, async (request) => siem.get(callerOf(request).orgId, request.params.id));

  app.patch('/api/v1/siem/sinks/:id', { config: { scope: 'admin' }, schema: { tags: ['siem'], params: Params, body: UpdateSink } }, async (request) => {
    const { orgId, plan, actor } = callerOf(request);
    assertPlanAllows(plan, 'siem_export');
    const changed = Object.keys(request.body);
    return retryingLockConflicts(() =>
      siem.update(orgId, request.params.id, request.body as Partial<SinkInput>, (tx, sink) => note(orgId, actor, 'siem.sink.updated', sink.id, { ...described(sink), changed }, tx)),
    );
  });

  app.delete('/api/v1/siem/sinks/:id', { config: { scope: 'admin' }, schema: { tags: ['siem'], params: Params } }, async (request, reply) => {
    const { orgId, actor } = callerOf(request);
    await retryingLockConflicts(() => siem.remove(orgId, request.params.id, (tx, id) => note(orgId, actor, 'siem.sink.deleted', id, {}, tx)));
    reply.status(204);
  });
};
