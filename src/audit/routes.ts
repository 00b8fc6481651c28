/**
 * Audit API. GET /api/v1/audit/verify (admin scope) checks the caller's org chain at one of
 * three levels; GET /api/v1/audit (read scope) lists records newest first, paginated by seq;
 * POST /api/v1/audit/checkpoints (admin scope) anchors the current head now.
 */
import { Type } from '@sinclair/typebox';
import { SvcError } from '../platform/errors.ts';
import type { RoutesPlugin } from '../platform/http-plugin.ts';
import type { FastifyRequest } from 'fastify';
import type { AuditLog, VerifyOptions } from './audit-log.ts';
import { recordView } from './chain.ts';

const FirstBad = Type.Union([Type.Object({ seq: Type.Integer(), reason: Type.String() }), Type.Null()]);
const VerifyResponse = Type.Object({ ok: Type.Boolean(), checked: Type.Integer(), first_bad: FirstBad, level: Type.String() });
const Seq = Type.String({ pattern: '^[1-9][0-9]{0,15}$' });

function orgOf(request: FastifyRequest): string {
  const auth = request.auth;
  if (auth === null) throw new SvcError('AUTH_MISSING');
  return auth.orgId;
}


export interface AuditRoutesOptions {
  audit: AuditLog;
}

export const auditRoutes: RoutesPlugin<AuditRoutesOptions> = async (app, { audit }) => {

  app.get(
    '/api/v1/audit/verify',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['audit'],
        querystring: Type.Object(
          { level: Type.Optional(Type.Union([Type.Literal('full'), Type.Literal('entry'), Type.Literal('last')])), seq: Type.Optional(Seq), n: Type.Optional(Seq) },
          { additionalProperties: false },
        ),
        response: { 200: VerifyResponse },
      },
    },
    async (request) => {
      const orgId = orgOf(request);
      const level = request.query.level ?? 'full';
      let options: VerifyOptions;
      if (level === 'entry') {
        if (request.query.seq === undefined) throw new SvcError('VALIDATION_FAILED', { details: { field: 'seq', reason: 'required for level=entry' } });
        options = { level, seq: Number(request.query.seq) };
      } else if (level === 'last') {
        if (request.query.n === undefined) throw new SvcError('VALIDATION_FAILED', { details: { field: 'n', reason: 'required for level=last' } });
        options = { level, n: Number(request.query.n) };
      } else {
        options = { level };
      }
      return { ...(await audit.verify(orgId, options)), level };
    },
  );

  app.get(
    '/api/v1/audit',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['audit'],
        querystring: Type.Object(
          {
            limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$' })),
            before: Type.Optional(Seq),
            action: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            session_id: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => {
      const orgId = orgOf(request);
      const limit = Math.min(Number(request.query.limit ?? 50), 500);
      const records = await audit.list(orgId, {
        limit,
        ...(request.query.before === undefined ? {} : { before: Number(request.query.before) }),
        ...(request.query.action === undefined ? {} : { action: request.query.action }),
        ...(request.query.session_id === undefined ? {} : { sessionId: request.query.session_id }),
      });
      const last = records[records.length - 1];
      return { records: records.map(recordView), next_before: records.length === limit && last !== undefined ? last.seq : null };
    },
  );

  app.post(
    '/api/v1/audit/checkpoints',
    { config: { scope: 'admin' }, schema: { tags: ['audit'] } },
    async (request, reply) => {
      const checkpoint = await audit.checkpoint(orgOf(request), 'manual');
      reply.status(201);
      return checkpoint === null
        ? { seq: 0, hash: null, created_at: null }
        : { seq: checkpoint.seq, hash: checkpoint.hash, created_at: checkpoint.createdAt };
    },
  );
};
