/**
 * HTTP surface of the compliance capability (docs/compliance.md lists each endpoint with the
 * regulation that asks for it). Every route is org-scoped and declares its scope; every call —
 * answered or refused (validation, scope, state, not found) — appends exactly one entry to the
 * caller's audit chain before the answer leaves (onSend hook of this plugin): actor, action,
 * target, outcome (`success`, or `refused` with the error code), status and request id. A call
 * without a valid credential names no org, so it has no chain to be written to.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuditEntryInput } from '../audit/index.ts';
import { retryingLockConflicts } from '../platform/db/failures.ts';
import { noWithin, type WithinWrite } from '../platform/db/within.ts';
import { SvcError } from '../platform/errors.ts';
import { auditActor, type RoutesPlugin } from '../platform/http-plugin.ts';
import type { Compliance } from './compliance.ts';
import { EXPORT_FORMATS, type ExportSection } from './audit-export.ts';
import { GRIEVANCE_CATEGORIES } from './grievances.ts';
import { SUMMARY_BUCKETS, THREAT_DECISIONS } from './threats.ts';

export interface ComplianceRoutesOptions {
  compliance: Compliance;
}

const Id = Type.String({ minLength: 1, maxLength: 256 });
const IdParams = Type.Object({ id: Id });
const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength });
const literals = <Value extends string>(values: readonly Value[]) => Type.Unsafe<Value>({ type: 'string', enum: [...values] });

const ThreatQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ format: 'date-time' })),
    to: Type.Optional(Type.String({ format: 'date-time' })),
    decision: Type.Optional(literals(THREAT_DECISIONS)),
    category: Type.Optional(Text(128)),
    gateway_id: Type.Optional(Text(256)),
    session_id: Type.Optional(Text(512)),
    pattern: Type.Optional(Text(128)),
    request_id: Type.Optional(Text(256)),
    sensor_id: Type.Optional(Text(256)),
    limit: Type.Optional(Type.String({ pattern: '^(?:[1-9]|[1-9][0-9]|1[0-9][0-9]|200)$', description: '1 to 200 (default 50).' })),
    cursor: Type.Optional(Text(1024)),
  },
  { additionalProperties: false },
);

const ThreatSummaryQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Start (default: 24 hours, or 30 days for bucket=day, before `to`).' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'End, exclusive (default: now).' })),
    bucket: Type.Optional(literals(SUMMARY_BUCKETS)),
  },
  { additionalProperties: false },
);

const ExplainabilityBody = Type.Object(
  {
    logic_involved: Type.Optional(Text(4000)),
    significance: Type.Optional(Text(4000)),
    human_review_available: Type.Optional(Type.Boolean()),
    contact: Type.Optional(Type.Union([Text(512), Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
);

const AppealBody = Type.Object({ reason: Text(4000), contact: Type.Optional(Text(512)) }, { additionalProperties: false });
const AppealResolveBody = Type.Object({ outcome: literals(['upheld', 'overturned'] as const), resolution: Text(4000) }, { additionalProperties: false });
const ExplainBody = Type.Object({ decision_id: Id }, { additionalProperties: false });
const GrievanceBody = Type.Object(
  { category: literals(GRIEVANCE_CATEGORIES), description: Text(8000), contact: Type.Optional(Text(512)), decision_id: Type.Optional(Id) },
  { additionalProperties: false },
);
const GrievanceDecisionBody = Type.Object({ outcome: literals(['upheld', 'declined'] as const), response: Text(8000) }, { additionalProperties: false });
const SubjectId = Type.String({ minLength: 1, maxLength: 256, pattern: '^[\\x21-\\x7e]+$', description: 'The customer\'s own identifier of the person (printable ASCII, no spaces).' });
const OptOutBody = Type.Object({ subject_id: SubjectId, reason: Type.Optional(Text(2000)) }, { additionalProperties: false });
const PortabilityQuery = Type.Object(
  {
    subject_id: Type.Optional(SubjectId),
    session_id: Type.Optional(Type.String({ minLength: 1, maxLength: 8192, description: 'Comma-separated session (conversation) ids of the subject, at most 100.' })),
  },
  { additionalProperties: false },
);
const ApprovalQuery = Type.Object(
  { limit: Type.Optional(Type.String({ pattern: '^(?:[1-9]|[1-9][0-9]|1[0-9][0-9]|200)$' })), before: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,15}$' })) },
  { additionalProperties: false },
);

const UnlearningBody = Type.Object(
  { subject_id: Type.Optional(SubjectId), session_ids: Type.Optional(Type.Array(Text(512), { maxItems: 100 })) },
  { additionalProperties: false },
);

const ExportQuery = Type.Object(
  {
    format: Type.Optional(literals(EXPORT_FORMATS)),
    include: Type.Optional(Type.String({ pattern: '^(?:soc2|hipaa)(?:,(?:soc2|hipaa))?$', description: 'Optional sections, comma-separated: soc2 (FEATURE_SOC2_REPORTS), hipaa (FEATURE_HIPAA_BAA, Enterprise plan).' })),
  },
  { additionalProperties: false },
);

const ModelBody = Type.Object(
  {
    name: Text(256),
    provider: Text(128),
    version: Type.Optional(Type.String({ maxLength: 128 })),
    training_flops: Type.Optional(Type.Number({ minimum: 0, maximum: 1e40 })),
    parameters: Type.Optional(Type.Number({ minimum: 0, maximum: 1e18 })),
    description: Type.Optional(Text(4000)),
    intended_use: Type.Optional(Text(4000)),
  },
  { additionalProperties: false },
);

function actorOf(request: FastifyRequest): string {
  const auth = request.auth;
  return auth === null ? 'anonymous' : auditActor(auth);
}

function orgOf(request: FastifyRequest): string {
  const auth = request.auth;
  if (auth === null) throw new SvcError('AUTH_MISSING');
  return auth.orgId;
}

function errorCodeOf(payload: unknown): string | null {
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return null;
  try {
    const parsed = JSON.parse(payload.toString()) as { error?: { code?: unknown } };
    return typeof parsed.error?.code === 'string' ? parsed.error.code : null;
  } catch {
    return null;
  }
}

export const complianceRoutes: RoutesPlugin<ComplianceRoutesOptions> = async (app, { compliance }) => {
  /** "METHOD url" → audit action of the route. */
  const actions = new Map<string, string>();
  const action = (method: string, url: string, name: string) => {
    actions.set(`${method} ${url}`, name);
    return url;
  };

  /**
   * The id of a call's one entry, fixed per request: a write's success entry and the refusal the
   * onSend hook chains after a failure share it, so the chain keeps whichever was stored first (the
   * chain skips an id it holds). A failure after the write committed (its follow-up: the queue, the
   * cache, the read of the answer) then adds no second, refused entry for the same call. Set by
   * `audited` only: a call that writes nothing gets a fresh id (no lookup of it in the chain).
   */
  const entryIds = new WeakMap<FastifyRequest, string>();
  /** The call's entry: its action, target (the :id), outcome by status, and the error code of a refusal. */
  const entryOf = (request: FastifyRequest, name: string, status: number, code: string | null): AuditEntryInput => {
    const params = (request.params ?? {}) as Record<string, unknown>;
    return {
      ...(entryIds.has(request) ? { id: entryIds.get(request)! } : {}),
      actor: actorOf(request),
      action: name,
      target: typeof params.id === 'string' ? params.id.slice(0, 256) : null,
      outcome: status < 400 ? 'success' : 'refused',
      details: { status, request_id: String(request.id), method: request.method, route: request.routeOptions.url ?? null, ...(code === null ? {} : { code }) },
    };
  };
  /**
   * A call that changes something: its success entry (answered with `status`, read from what was
   * written) is appended in the write's own transaction, so the change and its entry are stored
   * together or not at all, and the whole is tried again on a lost lock conflict. A failure
   * stores neither and reaches the client (503 for an outage); the onSend hook then chains the
   * refusal as for any refused call. A failure after the write committed chains nothing more:
   * the refusal has the success entry's id (entryIds), which the chain already holds.
   */
  const audited = async <T, W>(request: FastifyRequest, status: (written: W) => number, write: (within: WithinWrite<W>) => Promise<T>): Promise<T> => {
    const orgId = orgOf(request);
    const name = actions.get(`${request.method} ${request.routeOptions.url ?? ''}`);
    if (name === undefined) return write(noWithin);
    entryIds.set(request, randomUUID());
    return retryingLockConflicts(() => write((tx, written) => compliance.record(orgId, entryOf(request, name, status(written), null), { tx })));
  };

  // One audit entry per call, written before the answer is sent (so a client that reads the
  // chain after its answer finds it). Refused calls are written too, with their error code. A
  // call that changed something had its entry stored with the change (audited).
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const auth = request.auth;
    if (auth === null || auth === undefined) return payload;
    const name = actions.get(`${request.method} ${request.routeOptions.url ?? ''}`);
    if (name === undefined) return payload;
    const status = reply.statusCode;
    // A call answered as a success after `audited` had its entry stored with its write.
    if (entryIds.has(request) && status < 400) return payload;
    const code = status >= 400 ? errorCodeOf(payload) : null;
    try {
      await compliance.record(auth.orgId, entryOf(request, name, status, code));
    } catch (error) {
      request.log.error({ err: error, action: name }, 'compliance audit entry could not be written');
    }
    return payload;
  });

  // ------------------------------------------------------------------------ threats (item 8)

  app.get(action('GET', '/api/v1/threats', 'compliance.threats.list'), { config: { scope: 'read' }, schema: { tags: ['compliance'], querystring: ThreatQuery } }, async (request) => {
    const query = request.query as Static<typeof ThreatQuery>;
    return compliance.threats.list(orgOf(request), {
      ...(query.from === undefined ? {} : { from: query.from }),
      ...(query.to === undefined ? {} : { to: query.to }),
      ...(query.decision === undefined ? {} : { decision: query.decision }),
      ...(query.category === undefined ? {} : { category: query.category }),
      ...(query.gateway_id === undefined ? {} : { gatewayId: query.gateway_id }),
      ...(query.session_id === undefined ? {} : { sessionId: query.session_id }),
      ...(query.pattern === undefined ? {} : { pattern: query.pattern }),
      ...(query.request_id === undefined ? {} : { requestId: query.request_id }),
      ...(query.sensor_id === undefined ? {} : { sensorId: query.sensor_id }),
      ...(query.limit === undefined ? {} : { limit: Number(query.limit) }),
      ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
    });
  });

  // Aggregate counts only (no decision's detail): not written to the audit chain, unlike the
  // list and the single event, so a dashboard's overview does not fill the chain.
  app.get('/api/v1/threats/summary', { config: { scope: 'read' }, schema: { tags: ['compliance'], querystring: ThreatSummaryQuery } }, async (request) => {
    const query = request.query as Static<typeof ThreatSummaryQuery>;
    return compliance.threats.summary(orgOf(request), {
      ...(query.from === undefined ? {} : { from: query.from }),
      ...(query.to === undefined ? {} : { to: query.to }),
      ...(query.bucket === undefined ? {} : { bucket: query.bucket }),
    });
  });

  app.get(action('GET', '/api/v1/threats/:id', 'compliance.threats.read'), { config: { scope: 'read' }, schema: { tags: ['compliance'], params: IdParams } }, async (request) => {
    const { id } = request.params as { id: string };
    const event = await compliance.threats.get(orgOf(request), id);
    if (event === null) throw new SvcError('NOT_FOUND', { details: { resource: 'threat_event', id } });
    return event;
  });

  // ---------------------------------------------------------------------- decisions (item 1)

  app.get(action('GET', '/api/v1/ai/decisions/:id', 'compliance.decision.read'), { config: { scope: 'read' }, schema: { tags: ['compliance'], params: IdParams } }, async (request) =>
    compliance.decisions.get(orgOf(request), (request.params as { id: string }).id),
  );

  app.patch(
    action('PATCH', '/api/v1/ai/decisions/:id/explainability', 'compliance.decision.explainability'),
    { config: { scope: 'admin' }, schema: { tags: ['compliance'], params: IdParams, body: ExplainabilityBody } },
    async (request) =>
      audited(request, () => 200, (within) => compliance.decisions.updateExplainability(orgOf(request), (request.params as { id: string }).id, request.body as Static<typeof ExplainabilityBody>, actorOf(request), within)),
  );

  app.get(action('GET', '/api/v1/ai/decisions/:id/appeal-status', 'compliance.appeal.status'), { config: { scope: 'read' }, schema: { tags: ['compliance'], params: IdParams } }, async (request) =>
    compliance.decisions.appeal(orgOf(request), (request.params as { id: string }).id),
  );

  app.post(
    action('POST', '/api/v1/ai/decisions/:id/appeal', 'compliance.appeal.file'),
    { config: { scope: 'write' }, schema: { tags: ['compliance'], params: IdParams, body: AppealBody } },
    async (request, reply) => {
      const appeal = await audited(request, () => 201, (within) => compliance.decisions.fileAppeal(orgOf(request), (request.params as { id: string }).id, request.body as Static<typeof AppealBody>, actorOf(request), within));
      return reply.status(201).send(appeal);
    },
  );

  app.post(action('POST', '/api/v1/ai/decisions/:id/appeal/review', 'compliance.appeal.review'), { config: { scope: 'admin' }, schema: { tags: ['compliance'], params: IdParams } }, async (request) =>
    audited(request, () => 200, (within) => compliance.decisions.reviewAppeal(orgOf(request), (request.params as { id: string }).id, actorOf(request), within)),
  );

  app.post(
    action('POST', '/api/v1/ai/decisions/:id/appeal/resolve', 'compliance.appeal.resolve'),
    { config: { scope: 'admin' }, schema: { tags: ['compliance'], params: IdParams, body: AppealResolveBody } },
    async (request) =>
      audited(request, () => 200, (within) => compliance.decisions.resolveAppeal(orgOf(request), (request.params as { id: string }).id, request.body as Static<typeof AppealResolveBody>, actorOf(request), within)),
  );

  app.get(action('GET', '/api/v1/ai/risk-assessment/:id', 'compliance.risk_assessment.read'), { config: { scope: 'read' }, schema: { tags: ['compliance'], params: IdParams } }, async (request) =>
    compliance.decisions.riskAssessment(orgOf(request), (request.params as { id: string }).id),
  );

  app.post(action('POST', '/api/v1/ai/explain', 'compliance.explain.create'), { config: { scope: 'write' }, schema: { tags: ['compliance'], body: ExplainBody } }, async (request, reply) => {
    const explanation = await audited(request, () => 201, (within) => compliance.decisions.explain(orgOf(request), (request.body as Static<typeof ExplainBody>).decision_id, within));
    return reply.status(201).send(explanation);
  });

  app.get(action('GET', '/api/v1/ai/explain/:id', 'compliance.explain.read'), { config: { scope: 'read' }, schema: { tags: ['compliance'], params: IdParams } }, async (request) => {
    const { id } = request.params as { id: string };
    const explanation = await compliance.decisions.explanation(orgOf(request), id);
    if (explanation === null) throw new SvcError('NOT_FOUND', { details: { resource: 'explanation', id } });
    return explanation;
  });

  // --------------------------------------------------------------------- grievances (item 2)

  app.post(action('POST', '/api/v1/compliance/grievance', 'compliance.grievance.submit'), { config: { scope: 'write' }, schema: { tags: ['compliance'], body: GrievanceBody } }, async (request, reply) => {
    const grievance = await audited(request, () => 201, (within) => compliance.grievances.submit(orgOf(request), request.body as Static<typeof GrievanceBody>, actorOf(request), within));
    return reply.status(201).send(grievance);
  });

  app.get(action('GET', '/api/v1/compliance/grievance/:id', 'compliance.grievance.status'), { config: { scope: 'read' }, schema: { tags: ['compliance'], params: IdParams } }, async (request) => {
    const { id } = request.params as { id: string };
    const grievance = await compliance.grievances.get(orgOf(request), id);
    if (grievance === null) throw new SvcError('NOT_FOUND', { details: { resource: 'grievance', id } });
    return grievance;
  });

  app.post(action('POST', '/api/v1/compliance/grievance/:id/review', 'compliance.grievance.review'), { config: { scope: 'admin' }, schema: { tags: ['compliance'], params: IdParams } }, async (request) =>
    audited(request, () => 200, (within) => compliance.grievances.review(orgOf(request), (request.params as { id: string }).id, actorOf(request), within)),
  );

  app.post(
    action('POST', '/api/v1/compliance/grievance/:id/decision', 'compliance.grievance.decide'),
    { config: { scope: 'admin' }, schema: { tags: ['compliance'], params: IdParams, body: GrievanceDecisionBody } },
    async (request) =>
      audited(request, () => 200, (within) => compliance.grievances.decide(orgOf(request), (request.params as { id: string }).id, request.body as Static<typeof GrievanceDecisionBody>, actorOf(request), within)),
  );

  // ----------------------------------------------------------------- model catalog (item 4)

  app.post(action('POST', '/api/v1/ai/model-catalog', 'compliance.model_catalog.register'), { config: { scope: 'admin' }, schema: { tags: ['compliance'], body: ModelBody } }, async (request, reply) => {
    const model = await audited(request, () => 201, (within) => compliance.models.register(orgOf(request), request.body as Static<typeof ModelBody>, actorOf(request), within));
    return reply.status(201).send(model);
  });

  app.get(action('GET', '/api/v1/ai/model-catalog', 'compliance.model_catalog.list'), { config: { scope: 'read' }, schema: { tags: ['compliance'] } }, async (request) => ({
    data: await compliance.models.list(orgOf(request)),
  }));

  // --------------------------------------------------------------------- audit export (item 6)

  app.get(
    action('GET', '/api/v1/compliance/ai-audit-export', 'compliance.audit_export'),
    { config: { scope: 'admin' }, schema: { tags: ['compliance'], querystring: ExportQuery } },
    async (request, reply) => {
      const query = request.query as Static<typeof ExportQuery>;
      const include = [...new Set((query.include ?? '').split(',').filter((item) => item !== ''))] as ExportSection[];
      const file = await compliance.exporter.build(orgOf(request), { format: query.format ?? 'json', include });
      reply.header('content-type', file.mediaType).header('content-disposition', `attachment; filename="${file.filename}"`);
      return reply.send(file.body);
    },
  );

  app.get(action('GET', '/api/v1/ai/risk-tolerance', 'compliance.risk_tolerance.read'), { config: { scope: 'read' }, schema: { tags: ['compliance'] } }, async (request) =>
    compliance.riskTolerance(orgOf(request)),
  );

  // ---------------------------------------------------------------------- unlearning (item 3)

  app.post(action('POST', '/api/v1/ai/unlearning/request', 'compliance.unlearning.request'), { config: { scope: 'admin' }, schema: { tags: ['compliance'], body: UnlearningBody } }, async (request, reply) => {
    const created = await audited(request, () => 202, (within) => compliance.unlearning.request(orgOf(request), request.body as Static<typeof UnlearningBody>, actorOf(request), within));
    return reply.status(202).send(created);
  });

  app.get(action('GET', '/api/v1/ai/unlearning/:id', 'compliance.unlearning.status'), { config: { scope: 'read' }, schema: { tags: ['compliance'], params: IdParams } }, async (request) => {
    const { id } = request.params as { id: string };
    const found = await compliance.unlearning.get(orgOf(request), id);
    if (found === null) throw new SvcError('NOT_FOUND', { details: { resource: 'unlearning_request', id } });
    return found;
  });

  // ------------------------------------------------------------------------ privacy (item 7)

  app.post(action('POST', '/api/v1/privacy/ai-opt-out', 'privacy.ai_opt_out.record'), { config: { scope: 'write' }, schema: { tags: ['privacy'], body: OptOutBody } }, async (request, reply) => {
    const body = request.body as Static<typeof OptOutBody>;
    const { created, record } = await audited(
      request,
      (written: { created: boolean }) => (written.created ? 201 : 200),
      (within) => compliance.privacy.optOut(orgOf(request), body.subject_id, body.reason, actorOf(request), within),
    );
    return reply.status(created ? 201 : 200).send(record);
  });

  app.get(
    action('GET', '/api/v1/privacy/ai-opt-out/:id', 'privacy.ai_opt_out.read'),
    { config: { scope: 'read' }, schema: { tags: ['privacy'], params: Type.Object({ id: SubjectId }) } },
    async (request) => {
      const { id } = request.params as { id: string };
      return { subject_id: id, opted_out: await compliance.privacy.isOptedOut(orgOf(request), id) };
    },
  );

  app.get(action('GET', '/api/v1/privacy/ccpa/categories-collected', 'privacy.ccpa.categories_collected'), { config: { scope: 'read' }, schema: { tags: ['privacy'] } }, async (request) =>
    compliance.privacy.categoriesCollected(orgOf(request)),
  );

  app.get(action('GET', '/api/v1/privacy/lgpd/processing-confirmation', 'privacy.lgpd.processing_confirmation'), { config: { scope: 'read' }, schema: { tags: ['privacy'] } }, async (request) =>
    compliance.privacy.processingConfirmation(orgOf(request)),
  );

  app.get(action('GET', '/api/v1/privacy/lgpd/data-sharing-info', 'privacy.lgpd.data_sharing_info'), { config: { scope: 'read' }, schema: { tags: ['privacy'] } }, async (request) =>
    compliance.privacy.dataSharing(orgOf(request)),
  );

  app.get(
    action('GET', '/api/v1/privacy/portability-export', 'privacy.portability.export'),
    { config: { scope: 'admin' }, schema: { tags: ['privacy'], querystring: PortabilityQuery } },
    async (request, reply) => {
      const query = request.query as Static<typeof PortabilityQuery>;
      const sessionIds = query.session_id === undefined ? [] : [...new Set(query.session_id.split(',').map((item) => item.trim()).filter((item) => item !== ''))];
      if (sessionIds.length > 100 || sessionIds.some((item) => item.length > 512)) throw new SvcError('VALIDATION_FAILED', { message: 'session_id lists at most 100 ids of at most 512 characters', details: { field: 'session_id', reason: 'too_many' } });
      if (query.subject_id === undefined && sessionIds.length === 0) throw new SvcError('VALIDATION_FAILED', { message: 'give subject_id, session_id or both', details: { field: 'subject_id', reason: 'required' } });
      const bundle = await compliance.privacy.portability(orgOf(request), { ...(query.subject_id === undefined ? {} : { subjectId: query.subject_id }), sessionIds });
      reply.header('content-disposition', 'attachment; filename="svc-portability-export.json"');
      return bundle;
    },
  );

  app.get(action('GET', '/api/v1/compliance/approval-history', 'compliance.approval_history.read'), { config: { scope: 'read' }, schema: { tags: ['compliance'], querystring: ApprovalQuery } }, async (request) => {
    const query = request.query as Static<typeof ApprovalQuery>;
    return compliance.privacy.approvals(orgOf(request), { limit: Number(query.limit ?? 50), ...(query.before === undefined ? {} : { before: Number(query.before) }) });
  });
};

/**
 * The AI opt-out's effect on the request path, as a root hook (src/http/capabilities.ts): a
 * request to svc's API that carries `X-Subject-ID` of an opted-out subject is answered with
 * `X-AI-Opt-Out: honoured` and chained in the org's audit log with its request id
 * (privacy.ai_opt_out.applied), so automated decisions on it go to human review. The check is
 * one cache lookup (24 h); requests without the header cost nothing: the hook calls `done` at once,
 * with no promise for Fastify to wait on (every API request runs it).
 */
export function optOutHook(compliance: Compliance) {
  const apply = async (request: FastifyRequest, reply: FastifyReply, orgId: string, header: string): Promise<void> => {
    if (!(await compliance.privacy.isOptedOut(orgId, header))) return;
    reply.header('x-ai-opt-out', 'honoured');
    await compliance.record(orgId, {
      actor: actorOf(request),
      action: 'privacy.ai_opt_out.applied',
      target: String(request.id),
      outcome: 'success',
      details: { request_id: String(request.id), method: request.method, route: request.routeOptions.url ?? null, subject_sha256: createHash('sha256').update(header).digest('hex') },
    });
  };
  return (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
    const header = request.headers['x-subject-id'];
    const auth = request.auth;
    if (typeof header !== 'string' || header === '' || header.length > 256 || auth === null || auth === undefined) return done();
    apply(request, reply, auth.orgId, header).then(() => done(), (error: Error) => done(error));
  };
}
