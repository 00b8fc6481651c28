/**
 * Response shapes of the compliance endpoints for /openapi.json (documentation only: merged into
 * src/http/openapi-responses.ts, which test/foundation/openapi-responses.test.ts checks against
 * real answers). Objects whose properties svc fixes are closed.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { ARTICLE_55_OBLIGATIONS } from './models.ts';
import { RISK_CLASSES } from './decisions.ts';
import { APPEAL_STATUSES, GRIEVANCE_STATES } from './states.ts';

const closed = <Properties extends Record<string, TSchema>>(properties: Properties, description?: string) =>
  Type.Object(properties, { additionalProperties: false, ...(description === undefined ? {} : { description }) });
const nullable = (schema: TSchema) => Type.Union([schema, Type.Null()]);
const oneOf = (values: readonly string[]) => Type.Unsafe<string>({ type: 'string', enum: [...values] });
const ref = (name: string) => Type.Unsafe({ $ref: `#/components/schemas/${name}` });
const Timestamp = Type.String({ format: 'date-time' });
const AnyObject = Type.Object({}, { additionalProperties: true });

const threatProperties = {
  id: Type.String(),
  request_id: Type.String({ description: 'The decision id (X-Request-ID of the scored request).' }),
  occurred_at: Timestamp,
  pillar: Type.String(),
  kind: Type.String(),
  threat_score: Type.Number({ minimum: 0, maximum: 1 }),
  decision: oneOf(['log', 'alert', 'challenge', 'block']),
  categories: Type.Array(Type.String()),
  patterns_matched: Type.Array(closed({ id: Type.String(), name: Type.String(), confidence: Type.Number() })),
  session_id: nullable(Type.String()),
  gateway_id: nullable(Type.String()),
  session_request_count: nullable(Type.Number()),
  session_escalation_factor: nullable(Type.Number()),
  base_score: nullable(Type.Number()),
  sensor_id: nullable(Type.String({ description: 'The sensor that sent this finding (self-hosted topology, docs/sensors.md); null for a decision svc made itself.' })),
};
const ThreatEvent = closed(threatProperties);
const ThreatEventDetail = closed({ ...threatProperties, explanation: Type.String() });
const ThreatEventPage = closed({ data: Type.Array(ref('ThreatEvent')), next_cursor: nullable(Type.String({ description: 'Pass as `cursor` for the next (older) page; null on the last page.' })) });
const counts = (description: string) => Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description });
const ThreatSummary = closed(
  {
    from: Timestamp,
    to: Timestamp,
    bucket: oneOf(['hour', 'day']),
    buckets: Type.Array(
      closed({
        start: Timestamp,
        total: Type.Integer({ minimum: 0 }),
        by_decision: counts('Findings per decision (log, alert, challenge and block always present).'),
        by_pillar: counts('Findings per pillar that had any in the bucket.'),
      }),
      { description: 'Every UTC bucket of the range, oldest first, zeros included.' },
    ),
    totals: closed({ total: Type.Integer({ minimum: 0 }), by_decision: counts('Findings per decision over the range.'), by_pillar: counts('Findings per pillar over the range.') }),
  },
  'Counts of findings (threat events, log band and above) per time bucket, by decision and by pillar.',
);

const Explainability = closed({
  logic_involved: Type.String(),
  significance_and_consequences: Type.String(),
  human_review_available: Type.Boolean(),
  contact: nullable(Type.String()),
  stated_by: nullable(Type.String()),
  updated_at: nullable(Timestamp),
});
const AiDecision = closed({
  decision_id: Type.String(),
  kinds: Type.Array(oneOf(['threat_decision', 'ai_completion'])),
  decided_at: Timestamp,
  threat: nullable(ref('ThreatEventDetail')),
  completion: nullable(
    closed({
      request_id: Type.String(),
      created_at: Timestamp,
      provider: Type.String(),
      model: Type.String(),
      delivered: Type.Boolean(),
      passed: nullable(Type.Boolean()),
      action: nullable(Type.String()),
      risk_class: Type.String(),
      checks: AnyObject,
    }),
  ),
  explainability: ref('Explainability'),
  appeal_status: nullable(oneOf(APPEAL_STATUSES)),
});
const Appeal = closed({
  decision_id: Type.String(),
  status: oneOf(APPEAL_STATUSES),
  reason: Type.String(),
  contact: nullable(Type.String()),
  human_review_contact: nullable(Type.String()),
  outcome: nullable(oneOf(['upheld', 'overturned'])),
  resolution: nullable(Type.String()),
  filed_at: Timestamp,
  filed_by: Type.String(),
  review_started_at: nullable(Timestamp),
  reviewed_by: nullable(Type.String()),
  resolved_at: nullable(Timestamp),
  resolved_by: nullable(Type.String()),
});
const RiskAssessment = closed({
  id: Type.String(),
  subject: oneOf(['decision', 'model']),
  risk_class: oneOf(RISK_CLASSES),
  derivation: Type.Array(closed({ rule: Type.String(), applies: Type.Boolean(), detail: Type.String() })),
  assessed_at: Timestamp,
});
const Explanation = closed({
  id: Type.String(),
  decision_id: Type.String(),
  created_at: Timestamp,
  summary: Type.String(),
  outcome: Type.String(),
  confidence: Type.Number({ minimum: 0, maximum: 1 }),
  confidence_basis: Type.String(),
  factors: Type.Array(closed({ factor: Type.String(), detail: Type.String(), confidence: Type.Number({ minimum: 0, maximum: 1 }) })),
  explainability: ref('Explainability'),
});
const Grievance = closed({
  id: Type.String(),
  state: oneOf(GRIEVANCE_STATES),
  category: Type.String(),
  description: Type.String(),
  contact: nullable(Type.String()),
  decision_id: nullable(Type.String()),
  submitted_at: Timestamp,
  submitted_by: Type.String(),
  acknowledge_due_at: Timestamp,
  response_due_at: Timestamp,
  review_started_at: nullable(Timestamp),
  reviewed_by: nullable(Type.String()),
  decided_at: nullable(Timestamp),
  decided_by: nullable(Type.String()),
  outcome: nullable(oneOf(['upheld', 'declined'])),
  response: nullable(Type.String()),
  overdue: closed({ acknowledgment: Type.Boolean(), response: Type.Boolean() }),
  allowed_moves: Type.Array(oneOf(['review', 'uphold', 'decline'])),
});
const CatalogModel = closed({
  id: Type.String(),
  name: Type.String(),
  provider: Type.String(),
  version: Type.String(),
  training_flops: nullable(Type.Number()),
  parameters: nullable(Type.Number()),
  description: nullable(Type.String()),
  intended_use: nullable(Type.String()),
  systemic_risk: Type.Boolean(),
  systemic_risk_reasons: Type.Array(Type.String()),
  obligations: Type.Array(closed({ id: oneOf(ARTICLE_55_OBLIGATIONS.map((item) => item.id)), text: Type.String() })),
  registered_at: Timestamp,
  registered_by: Type.String(),
});
const CatalogModelList = closed({ data: Type.Array(ref('CatalogModel')) });

const RiskTolerance = closed({
  thresholds: Type.Array(
    closed({
      metric: Type.String(),
      comparison: oneOf(['at_most', 'at_least']),
      threshold: Type.Number(),
      unit: Type.String(),
      measured: Type.Boolean(),
      current: nullable(Type.Number()),
      within: nullable(Type.Boolean()),
      source: Type.String(),
    }),
  ),
  measured_at: Timestamp,
});
const AiOptOut = closed({
  subject_id: Type.String(),
  opted_out: Type.Literal(true),
  reason: nullable(Type.String()),
  created_at: Timestamp,
  created_by: Type.String(),
  cache_ttl_s: Type.Integer(),
  effect: Type.String(),
});
const AiOptOutStatus = closed({ subject_id: Type.String(), opted_out: Type.Boolean() });
const dataSource = Type.Object({ table: Type.String(), column: Type.String(), purpose: Type.String(), legal_basis: Type.String(), rows: Type.Integer() }, { additionalProperties: true });
const CcpaCategories = Type.Object(
  {
    categories: Type.Array(closed({ category: Type.String(), ccpa_reference: Type.String(), sources: Type.Array(dataSource), collected: Type.Boolean() })),
    request_content_stored: Type.Boolean(),
    sold: Type.Boolean(),
    shared_for_cross_context_behavioral_advertising: Type.Boolean(),
    retention: AnyObject,
    derived_at: Timestamp,
  },
  { additionalProperties: false, description: 'Derived at call time from the schema and the org\'s rows (docs/compliance.md).' },
);
const LgpdProcessing = closed({
  processing: Type.Boolean(),
  controller: nullable(Type.String()),
  processor: Type.String(),
  data: Type.Array(Type.Object({ table: Type.String(), column: Type.String(), category: Type.String(), purpose: Type.String(), legal_basis: Type.String(), rows: Type.Integer() }, { additionalProperties: false })),
  international_transfer: Type.Boolean(),
  lgpd_reference: Type.String(),
  confirmed_at: Timestamp,
});
const LgpdSharing = closed({
  recipients: Type.Array(Type.Object({ kind: Type.String(), recipient: Type.String(), data_shared: Type.Array(Type.String()), purpose: Type.String() }, { additionalProperties: true })),
  sold: Type.Boolean(),
  lgpd_reference: Type.String(),
  derived_at: Timestamp,
});
const PortabilityExport = closed({
  format: Type.Literal('svc.portability.v1'),
  subject_id: nullable(Type.String()),
  session_ids: Type.Array(Type.String()),
  generated_at: Timestamp,
  data: Type.Object(
    { threat_events: Type.Array(AnyObject), mcp_sessions: Type.Array(AnyObject), mcp_quarantine: Type.Array(AnyObject), ai_opt_out: Type.Array(AnyObject), grievances: Type.Array(AnyObject), appeals: Type.Array(AnyObject) },
    { additionalProperties: false },
  ),
});
const ApprovalHistory = closed({
  data: Type.Array(
    closed({ seq: Type.Integer(), approved_at: Timestamp, approved_by: Type.String(), kind: Type.String(), action: Type.String(), target: nullable(Type.String()), request_id: nullable(Type.String()) }),
  ),
  next_before: nullable(Type.Integer()),
});

const stepResult = closed({ done: Type.Literal(true), removed: Type.Integer(), at: Timestamp, note: Type.Optional(Type.String()) });
const UnlearningRequest = closed({
  id: Type.String(),
  state: oneOf(['queued', 'running', 'completed', 'failed']),
  subject_id: nullable(Type.String()),
  session_ids: Type.Array(Type.String()),
  requested_at: Timestamp,
  requested_by: Type.String(),
  started_at: nullable(Timestamp),
  completed_at: nullable(Timestamp),
  steps: Type.Record(Type.String(), stepResult),
  pending_steps: Type.Array(Type.String()),
  attempts: Type.Integer(),
  last_error: nullable(Type.String()),
  service_level: closed({ days: Type.Integer(), due_at: Timestamp, breached: Type.Boolean() }),
  upstream_model_weights: Type.Literal('not_touched'),
  audit: nullable(closed({ seq: Type.Integer(), hash: Type.String() })),
});

const AuditExportBundle = closed(
  {
    manifest: closed({
      format: Type.Literal('svc.ai-audit-export.v1'),
      framework: oneOf(['eu_ai_act', 'naisi', 'japan_ai_act']),
      org_id: Type.String(),
      generated_at: Timestamp,
      deployment_key: closed({ algorithm: Type.Literal('Ed25519'), public_key: Type.String({ description: 'Raw 32-byte key, base64.' }), key_id: Type.String() }),
      parts: Type.Array(closed({ name: Type.String(), sha256: Type.String(), media_type: Type.Literal('application/json') })),
    }),
    signature: Type.String({ description: 'Ed25519 over the RFC 8785 form of manifest, base64.' }),
    parts: Type.Record(Type.String(), Type.Unknown()),
  },
  'The signed bundle (format json, naisi, japan_ai_act). format=pdf answers application/pdf: a rendered report carrying this bundle verbatim. Verify offline with `svc compliance verify-export FILE`.',
);

export const COMPLIANCE_RESPONSE_COMPONENTS = {
  ThreatEvent,
  ThreatSummary,
  ThreatEventDetail,
  ThreatEventPage,
  Explainability,
  AiDecision,
  Appeal,
  RiskAssessment,
  Explanation,
  Grievance,
  CatalogModel,
  CatalogModelList,
  RiskTolerance,
  AiOptOut,
  AiOptOutStatus,
  CcpaCategories,
  LgpdProcessing,
  LgpdSharing,
  PortabilityExport,
  ApprovalHistory,
  UnlearningRequest,
  AuditExportBundle,
} satisfies Record<string, TSchema>;

type Component = keyof typeof COMPLIANCE_RESPONSE_COMPONENTS;

/** Per compliance operation: its success answer and the error statuses specific to it. */
export const COMPLIANCE_OPERATION_RESPONSES: Readonly<Record<string, { success: Partial<Record<200 | 201 | 202, Component>>; errors?: number[] }>> = {
  'GET /api/v1/threats': { success: { 200: 'ThreatEventPage' } },
  'GET /api/v1/threats/summary': { success: { 200: 'ThreatSummary' } },
  'GET /api/v1/threats/:id': { success: { 200: 'ThreatEventDetail' }, errors: [404] },
  'GET /api/v1/ai/decisions/:id': { success: { 200: 'AiDecision' }, errors: [404] },
  'PATCH /api/v1/ai/decisions/:id/explainability': { success: { 200: 'AiDecision' }, errors: [404] },
  'GET /api/v1/ai/decisions/:id/appeal-status': { success: { 200: 'Appeal' }, errors: [404] },
  'POST /api/v1/ai/decisions/:id/appeal': { success: { 201: 'Appeal' }, errors: [404, 409] },
  'POST /api/v1/ai/decisions/:id/appeal/review': { success: { 200: 'Appeal' }, errors: [404, 409] },
  'POST /api/v1/ai/decisions/:id/appeal/resolve': { success: { 200: 'Appeal' }, errors: [404, 409] },
  'GET /api/v1/ai/risk-assessment/:id': { success: { 200: 'RiskAssessment' }, errors: [404] },
  'POST /api/v1/ai/explain': { success: { 201: 'Explanation' }, errors: [404] },
  'GET /api/v1/ai/explain/:id': { success: { 200: 'Explanation' }, errors: [404] },
  'POST /api/v1/compliance/grievance': { success: { 201: 'Grievance' } },
  'GET /api/v1/compliance/grievance/:id': { success: { 200: 'Grievance' }, errors: [404] },
  'POST /api/v1/compliance/grievance/:id/review': { success: { 200: 'Grievance' }, errors: [404, 409] },
  'POST /api/v1/compliance/grievance/:id/decision': { success: { 200: 'Grievance' }, errors: [404, 409] },
  'POST /api/v1/ai/model-catalog': { success: { 201: 'CatalogModel' }, errors: [409] },
  'GET /api/v1/ai/model-catalog': { success: { 200: 'CatalogModelList' } },
  'POST /api/v1/ai/unlearning/request': { success: { 202: 'UnlearningRequest' } },
  'GET /api/v1/ai/unlearning/:id': { success: { 200: 'UnlearningRequest' }, errors: [404] },
  'GET /api/v1/compliance/ai-audit-export': { success: { 200: 'AuditExportBundle' } },
  'GET /api/v1/ai/risk-tolerance': { success: { 200: 'RiskTolerance' } },
  'POST /api/v1/privacy/ai-opt-out': { success: { 200: 'AiOptOut', 201: 'AiOptOut' } },
  'GET /api/v1/privacy/ai-opt-out/:id': { success: { 200: 'AiOptOutStatus' }, errors: [404] },
  'GET /api/v1/privacy/ccpa/categories-collected': { success: { 200: 'CcpaCategories' } },
  'GET /api/v1/privacy/lgpd/processing-confirmation': { success: { 200: 'LgpdProcessing' } },
  'GET /api/v1/privacy/lgpd/data-sharing-info': { success: { 200: 'LgpdSharing' } },
  'GET /api/v1/privacy/portability-export': { success: { 200: 'PortabilityExport' } },
  'GET /api/v1/compliance/approval-history': { success: { 200: 'ApprovalHistory' } },
};

/** Operations that may answer STATE_TRANSITION_INVALID (the catalogue's ONLY_ON). */
export const STATE_TRANSITION_OPERATIONS = [
  'POST /api/v1/ai/decisions/:id/appeal',
  'POST /api/v1/ai/decisions/:id/appeal/review',
  'POST /api/v1/ai/decisions/:id/appeal/resolve',
  'POST /api/v1/compliance/grievance/:id/review',
  'POST /api/v1/compliance/grievance/:id/decision',
];
/** Operations that may answer PLAN_REQUIRED. */
export const PLAN_REQUIRED_OPERATIONS = ['GET /api/v1/compliance/ai-audit-export'];
