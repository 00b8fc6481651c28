/**
 * HTTP surface of the verification pillar:
 *   POST /api/v1/verify                                  write  guard API: verify a response without calling a model
 *   GET|PUT|DELETE /api/v1/config/verification           admin  the org's verification policy
 *   GET /api/v1/compliance/ai-provenance/{request_id}    read   provenance record of a completion (audited read)
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { planGate } from '../accounts/index.ts';
import { auditActor, type RoutesPlugin } from '../platform/http-plugin.ts';
import type { AuditLog } from '../audit/index.ts';
import { SourceSchema, ToolSchema, VerificationSchema } from '../gateway/index.ts';
import { retryingLockConflicts } from '../platform/db/failures.ts';
import { SvcError } from '../platform/errors.ts';
import { PolicyError, PolicySchema, refusalDetails } from './policy.ts';
import { schemaRefusalMessage } from './schema-limits.ts';
import { compileSchema } from './structural.ts';
import type { GuardRequest, VerificationCore } from './service.ts';

const CONTENT_CHARS = 262_144;

const ToolCallSchema = Type.Object({ id: Type.String({ maxLength: 256 }), name: Type.String({ minLength: 1, maxLength: 128 }), arguments: Type.String({ maxLength: CONTENT_CHARS }) }, { additionalProperties: false });

export const GuardRequestSchema = Type.Object(
  {
    response: Type.String({ maxLength: CONTENT_CHARS }),
    sources: Type.Optional(Type.Array(SourceSchema, { maxItems: 64 })),
    question: Type.Optional(Type.String({ maxLength: CONTENT_CHARS })),
    schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    tools: Type.Optional(Type.Array(ToolSchema, { maxItems: 128 })),
    tool_calls: Type.Optional(Type.Array(ToolCallSchema, { maxItems: 128 })),
    system_prompt: Type.Optional(Type.String({ maxLength: CONTENT_CHARS })),
    finish_reason: Type.Optional(Type.String({ maxLength: 64 })),
    policy: Type.Optional(PolicySchema),
  },
  { additionalProperties: false },
);

function orgOf(request: FastifyRequest): string {
  const auth = request.auth;
  if (auth === null) throw new SvcError('AUTH_MISSING');
  return auth.orgId;
}

function actorOf(request: FastifyRequest): string {
  return auditActor(request.auth);
}

function policyFailure(error: unknown): never {
  if (error instanceof PolicyError) throw new SvcError('VALIDATION_FAILED', { message: error.message, details: { field: error.field, reason: error.reason, ...error.details } });
  throw error;
}

export interface VerificationRoutesOptions {
  verification: VerificationCore;
  audit: AuditLog;
}

export const verificationRoutes: RoutesPlugin<VerificationRoutesOptions> = async (app, options) => {
  const { verification: core, audit } = options;
  app.post('/api/v1/verify', { config: { scope: 'write' }, bodyLimit: 4 * 1_048_576, schema: { tags: ['verification'], body: GuardRequestSchema, response: { 200: VerificationSchema } } }, async (request) => {
    planGate(request, 'verification');
    const body = request.body as Static<typeof GuardRequestSchema>;
    if (body.schema !== undefined) {
      const compiled = compileSchema(body.schema);
      if ('error' in compiled) {
        throw new SvcError('VALIDATION_FAILED', { message: `body.schema is not a usable JSON Schema (${compiled.error}): ${schemaRefusalMessage(compiled)}`, details: { field: 'body.schema', ...refusalDetails(compiled) } });
      }
    }
    try {
      return await core.guard(orgOf(request), body as GuardRequest);
    } catch (error) {
      return policyFailure(error);
    }
  });

  app.get('/api/v1/config/verification', { config: { scope: 'admin' }, schema: { tags: ['verification'] } }, async (request) => core.policies.view(orgOf(request)));

  app.put('/api/v1/config/verification', { config: { scope: 'admin' }, schema: { tags: ['verification'], body: PolicySchema } }, async (request) => {
    planGate(request, 'verification');
    const orgId = orgOf(request);
    // A policy change is an approval the compliance approval history lists (docs/compliance.md):
    // its entry is appended in the change's transaction, tried again whole on a lost lock conflict.
    const entry = { actor: actorOf(request), action: 'verification.policy.set', target: null, outcome: 'success', details: { request_id: String(request.id) } };
    try {
      await retryingLockConflicts(() => core.policies.put(orgId, request.body as Static<typeof PolicySchema>, (tx) => audit.append(orgId, entry, { tx })));
    } catch (error) {
      policyFailure(error);
    }
    return core.policies.view(orgId);
  });

  app.delete('/api/v1/config/verification', { config: { scope: 'admin' }, schema: { tags: ['verification'] } }, async (request, reply) => {
    const orgId = orgOf(request);
    const entry = { actor: actorOf(request), action: 'verification.policy.reset', target: null, outcome: 'success', details: { request_id: String(request.id) } };
    await retryingLockConflicts(() => core.policies.reset(orgId, (tx) => audit.append(orgId, entry, { tx })));
    return reply.status(204).send();
  });

  app.get(
    '/api/v1/compliance/ai-provenance/:request_id',
    { config: { scope: 'read' }, schema: { tags: ['compliance'], params: Type.Object({ request_id: Type.String({ minLength: 1, maxLength: 256 }) }) } },
    async (request) => {
      const orgId = orgOf(request);
      const { request_id: requestId } = request.params as { request_id: string };
      const record = await core.provenance.get(orgId, requestId);
      // Every call of a compliance endpoint is chained in the audit log (spec).
      const auth = request.auth;
      const actor = auditActor(auth);
      await audit.append(orgId, { actor, action: 'compliance.ai_provenance.read', target: requestId, outcome: record === null ? 'not_found' : 'success', details: { request_id: request.id } });
      if (record === null) throw new SvcError('NOT_FOUND', { details: { resource: 'ai_provenance', completion_request_id: requestId } });
      return record;
    },
  );
};
