/**
 * What each operation of /openapi.json answers: the success shapes (the spec's where it defines
 * them — completion response, threat decision, routing configuration, geo-blocking rule — and
 * svc's own elsewhere) and the catalogue's error envelope for every error status the operation
 * can answer, all as shared components (`#/components/schemas/<Name>`).
 *
 * Documentation only: `documentResponses` is @fastify/swagger's `transform`, so these schemas
 * reach the OpenAPI document and never a route's `schema.response`, which Fastify would use to
 * serialize — dropping properties it does not list and coercing types (docs/decisions.md,
 * "OpenAPI response schemas"). test/foundation/openapi-responses.test.ts validates real answers of
 * every route against them, so the document cannot drift from what clients receive.
 *
 * Objects whose properties svc fixes are closed (`additionalProperties: false`), so a property
 * added without documenting it fails that test; free-form parts (error details, audit details,
 * policies, MCP definitions) stay open.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifySchema } from 'fastify';
import { KEY_CLASSES, PLANS, ROLES, SCOPES } from '../accounts/index.ts';
import { COMPLIANCE_OPERATION_RESPONSES, COMPLIANCE_RESPONSE_COMPONENTS, PLAN_REQUIRED_OPERATIONS, STATE_TRANSITION_OPERATIONS } from '../compliance/index.ts';
import {
  AnthropicErrorSchema,
  ChatCompletionChunkSchema,
  ChatCompletionResponseSchema,
  CompletionResponseSchema,
  MessageResponseSchema,
  MessageStreamEventSchema,
  ModelListSchema,
  ModelSchema,
  OpenAiErrorSchema,
  VerificationSchema,
} from '../gateway/index.ts';
import { TOOL_CATEGORIES } from '../mcp/index.ts';
import { ERRORS, type ErrorCode } from '../platform/errors.ts';
import { SIEM_KINDS, SIEM_STREAMS } from '../siem/index.ts';
import { WEBHOOK_EVENTS } from '../webhooks/index.ts';

const COMPONENTS_PATH = '#/components/schemas/';

const closed = <Properties extends Record<string, TSchema>>(properties: Properties, description?: string) =>
  Type.Object(properties, { additionalProperties: false, ...(description === undefined ? {} : { description }) });
const nullable = (schema: TSchema) => Type.Union([schema, Type.Null()]);
const oneOf = (values: readonly string[]) => Type.Unsafe<string>({ type: 'string', enum: [...values] });
const Timestamp = Type.String({ format: 'date-time' });
const AnyObject = Type.Object({}, { additionalProperties: true });

/** A reference to a component of this module (the test checks every reference resolves). */
function ref(name: string): TSchema {
  return Type.Unsafe({ $ref: `${COMPONENTS_PATH}${name}` });
}

// ---------------------------------------------------------------------------------- errors

const ErrorSchema = closed(
  {
    error: Type.Object(
      {
        code: oneOf(Object.keys(ERRORS)),
        message: Type.String({ description: 'For humans; may change. Clients act on code.' }),
        request_id: Type.String({ description: 'Equals the X-Request-ID response header.' }),
      },
      { additionalProperties: true, description: 'Details such as field, reason, allowed, retry_after or required_scope accompany some codes (docs/errors.md).' },
    ),
  },
  'The error envelope of every non-2xx answer (docs/errors.md).',
);

// -------------------------------------------------------------------------------- operations

const HealthLiveness = closed({ status: Type.Literal('ok'), uptime_s: Type.Integer() });
const DatabaseHealth = closed({
  status: oneOf(['ok', 'error']),
  engine: Type.String(),
  latency_ms: nullable(Type.Number()),
  pool_size: Type.Integer(),
  timed_out: Type.Optional(Type.Boolean()),
});
const CacheHealth = closed({
  status: oneOf(['ok', 'degraded']),
  configured: oneOf(['redis', 'memory']),
  mode: Type.String(),
  fallback: Type.Boolean(),
  latency_ms: nullable(Type.Number()),
  timed_out: Type.Optional(Type.Boolean()),
});
const QueueHealth = Type.Object({ status: oneOf(['ok', 'degraded']), kind: Type.String() }, { additionalProperties: true, description: 'Job counts (waiting, active, delayed, failed) when the queue answers.' });
const HealthFull = closed({
  status: oneOf(['ok', 'degraded', 'error']),
  checks: closed({ db: ref('DatabaseHealth'), redis: ref('CacheHealth'), queue: ref('QueueHealth') }),
});

// ---------------------------------------------------------------------------------- accounts

const Session = {
  token: Type.String({ description: 'The session token: the svc_session cookie is set to it too; scripts send it as a bearer token.' }),
  expires_at: Timestamp,
  method: oneOf(['password', 'totp', 'oidc', 'saml', 'invite']),
  csrf_token: Type.String({ description: 'The session CSRF token (also in the svc_csrf cookie): send it in X-CSRF-Token with cookie-authenticated state changes.' }),
};
const Registration = closed({
  org_id: Type.String(),
  org_tag: Type.String(),
  plan: Type.String(),
  trial_ends_at: nullable(Timestamp),
  user_id: Type.String(),
  role: oneOf(ROLES),
  ...Session,
});
const Login = closed({ user_id: Type.String(), org_id: Type.String(), role: oneOf(ROLES), ...Session });
const MfaChallenge = closed(
  { mfa_required: Type.Literal(true), mfa_token: Type.String(), expires_at: Timestamp },
  'The password was right and TOTP is active: send mfa_token with a code to POST /api/v1/auth/login/totp within five minutes.',
);
const LoginStep = Type.Union([ref('Login'), ref('MfaChallenge')]);
const TotpEnrolment = closed(
  { otpauth_uri: Type.String(), qr_code: Type.String({ description: 'The otpauth URI as a PNG QR code (data URL).' }), recovery_codes: Type.Array(Type.String()) },
  'Shown once: add the secret to an authenticator (URI or QR code), keep the recovery codes, then confirm with a first code.',
);
const TotpConfirmation = closed({ enabled_at: Timestamp });
const SsoRoles = oneOf(['viewer', 'operator', 'admin']);
const OidcConnection = closed({
  issuer: Type.String(),
  client_id: Type.String(),
  client_secret: Type.String({ description: 'Masked: the last four characters only.' }),
  allowed_domains: Type.Array(Type.String()),
  default_role: SsoRoles,
  updated_at: Timestamp,
});
const SamlConnection = closed({
  idp_entity_id: Type.String(),
  sso_url: Type.String(),
  certificate: Type.String(),
  allowed_domains: Type.Array(Type.String()),
  default_role: SsoRoles,
  sp_entity_id: Type.String(),
  acs_url: Type.String(),
  updated_at: Timestamp,
});
const SamlMetadata = Type.String({ description: "This service provider's SAML 2.0 metadata (XML): entity id, ACS URL (HTTP-POST binding)." });
const Whoami = closed({
  org_id: Type.String(),
  org_tag: Type.String(),
  plan: Type.String(),
  scope: oneOf(SCOPES),
  class: oneOf(KEY_CLASSES),
  key_id: nullable(Type.String()),
  user_id: nullable(Type.String()),
  role: nullable(oneOf(ROLES)),
});
const Org = closed({
  id: Type.String(),
  tag: Type.String(),
  name: Type.String(),
  plan: Type.String(),
  effective_plan: Type.String(),
  trial_started_at: nullable(Timestamp),
  trial_ends_at: nullable(Timestamp),
  created_at: Timestamp,
});
const PlanLimitCount = nullable(Type.Integer({ description: 'null: unlimited' }));
const OrgUsage = closed({
  org_id: Type.String(),
  plan: oneOf(PLANS),
  effective_plan: oneOf(PLANS),
  trial: closed({ active: Type.Boolean(), started_at: nullable(Timestamp), ends_at: nullable(Timestamp), days_left: nullable(Type.Integer()), max_days: Type.Integer() }),
  period: closed({ start: Timestamp, end: Timestamp }),
  findings: closed({
    used: Type.Integer({ description: 'Findings stored this month (UTC).' }),
    limit: PlanLimitCount,
    remaining: PlanLimitCount,
    over_quota: Type.Boolean(),
    dropped: Type.Integer({ description: 'Log- and alert-band findings not stored this month because the quota was used up.' }),
  }),
  sensors: closed({ used: nullable(Type.Integer()), limit: PlanLimitCount }),
  pillars: Type.Record(Type.String(), Type.Boolean()),
  features: Type.Record(Type.String(), Type.Boolean()),
  rate: closed({ requests_per_minute: PlanLimitCount, requests_per_day: PlanLimitCount, burst: Type.Integer(), concurrent: PlanLimitCount }),
  daily_tokens: closed({ limit: Type.Integer() }),
});
const PlanChanged = closed({
  org: ref('Org'),
  previous: closed({ plan: oneOf(PLANS), effective_plan: oneOf(PLANS), trial_ends_at: nullable(Timestamp) }),
  change: oneOf(['upgrade', 'downgrade', 'trial_conversion', 'unchanged']),
});
const apiKeyProperties = {
  key_id: Type.String(),
  display: Type.String(),
  name: nullable(Type.String()),
  scope: oneOf(SCOPES),
  class: oneOf(KEY_CLASSES),
  created_at: Timestamp,
  last_used_at: nullable(Timestamp),
  revoked_at: nullable(Timestamp),
  created_by: nullable(Type.String({ description: 'Who created the key: user:<id>, api_key:<id> or cli; null for the org\'s initial key.' })),
};
const User = closed({ user_id: Type.String(), email: Type.String(), role: oneOf(ROLES), created_at: Timestamp, last_login_at: nullable(Timestamp) });
const UserList = closed({ data: Type.Array(ref('User')) });
const invitationProperties = {
  invitation_id: Type.String(),
  email: Type.String(),
  role: oneOf(ROLES),
  status: oneOf(['pending', 'accepted', 'revoked', 'expired']),
  invited_by: Type.String({ description: 'user:<id> or api_key:<id>' }),
  created_at: Timestamp,
  expires_at: Timestamp,
  accepted_at: nullable(Timestamp),
};
const Invitation = closed(invitationProperties);
const InvitationList = closed({ data: Type.Array(ref('Invitation')) });
const InvitationCreated = closed({
  ...invitationProperties,
  delivery: oneOf(['sent', 'not_configured']),
  accept_url: nullable(Type.String({ description: 'The link, shown once, only when SMTP is not configured (delivery not_configured): hand it to the invitee.' })),
});
const InvitationAccepted = closed({ user_id: Type.String(), org_id: Type.String(), role: oneOf(ROLES), email: Type.String(), ...Session });
const DashboardSession = closed({
  user: closed({ user_id: Type.String(), email: nullable(Type.String()), role: oneOf(ROLES) }),
  role: oneOf(ROLES),
  org: closed({ id: Type.String(), tag: Type.String(), name: Type.String(), plan: Type.String(), effective_plan: Type.String(), trial_ends_at: nullable(Timestamp) }),
  plan: Type.String({ description: 'The plan in force (effective_plan).' }),
  session: closed({ session_id: Type.String(), method: Type.String(), created_at: Timestamp, expires_at: Timestamp, idle_expires_at: Timestamp }),
  csrf_token: Type.String(),
});
const ApiKey = closed(apiKeyProperties);
const ApiKeyCreated = closed({ ...apiKeyProperties, api_key: Type.String({ description: 'The key itself: shown once, at creation.' }) });
const ApiKeyList = closed({ data: Type.Array(ref('ApiKey')) });
const ProviderKey = closed({ provider: Type.String(), key: Type.String({ description: 'Masked.' }), base_url: nullable(Type.String()), updated_at: Timestamp });
const ProviderKeyList = closed({ data: Type.Array(ref('ProviderKey')) });

// --------------------------------------------------------------------------------- detection

const DECISIONS = ['allow', 'log', 'alert', 'challenge', 'block'];
const Span = closed({ start: Type.Integer(), end: Type.Integer() });
const ThreatDecision = closed(
  {
    allowed: Type.Boolean(),
    threat_score: Type.Number({ minimum: 0, maximum: 1 }),
    decision: oneOf(DECISIONS),
    explanation: Type.String(),
    patterns_matched: Type.Array(closed({ id: Type.String(), name: Type.String(), confidence: Type.Number(), span: Type.Optional(ref('Span')) })),
    session_escalation_factor: Type.Number(),
    session_request_count: Type.Integer(),
    base_score: Type.Number({ description: 'Score before the session factor.' }),
    decision_score: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'The score the response policy acted on (and the one threat events and webhooks carry): equal to threat_score for a refused prompt (except a prompt blocked on the intent classifier alone, whose threat_score is the block threshold), tool output or tool definition, and whenever a behavioural (T5) anomaly was joined; otherwise threat_score grades the evidence inside the band of the decision: below the log threshold it stays under the log threshold, for a logged or alerted tool output or model answer it lies between decision_score and the top of its band, and for a challenged or blocked model answer between decision_score and the block threshold (challenge) or 1 (block).' })),
    kind: Type.String(),
    categories: Type.Array(Type.String()),
    tiers: Type.Array(closed({ tier: Type.String(), outcome: oneOf(['clean', 'match', 'error', 'skipped']), score: Type.Number(), latency_ms: Type.Number(), detail: Type.Optional(Type.String()) })),
    evidence: Type.Array(closed({ transform: Type.String(), detail: Type.String() })),
    thresholds: closed({ log: Type.Number(), alert: Type.Number(), challenge: Type.Number(), block: Type.Number() }),
    latency_ms: Type.Number(),
  },
  'The spec\'s Threat decision (explainability response) plus svc\'s explainability fields.',
);
const ThresholdSettings = closed({
  thresholds: closed({ log_threshold: Type.Number(), alert_threshold: Type.Number(), challenge_threshold: Type.Number(), block_threshold: Type.Number() }),
  updated_at: Type.Optional(Timestamp),
});

// ----------------------------------------------------------------------------------- gateway

const CompletionStreamEvent = Type.Object(
  {
    request_id: Type.String(),
    index: Type.Optional(Type.Integer()),
    delta: Type.Optional(Type.String()),
    tool_call: Type.Optional(AnyObject),
    provider: Type.Optional(Type.String()),
    model: Type.Optional(Type.String()),
    finish_reason: Type.Optional(Type.String()),
    usage: Type.Optional(closed({ prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer() })),
    cost_usd: Type.Optional(nullable(Type.Number())),
    latency_ms: Type.Optional(Type.Number()),
    verification: Type.Optional(nullable(AnyObject)),
    response_filter: Type.Optional(nullable(AnyObject)),
    done: Type.Optional(Type.Literal(true)),
    error: Type.Optional(Type.Object({ code: oneOf(Object.keys(ERRORS)), message: Type.String() }, { additionalProperties: true })),
  },
  {
    additionalProperties: false,
    description: 'One `data:` line of a streamed completion: a delta, a tool-call delta, the final event (done: true, with usage and cost) or an error event; the stream ends with `data: [DONE]`.',
  },
);
const RoutingConfig = closed({ strategy: Type.String(), providers: Type.Array(Type.String()), health_check_interval_s: Type.Integer() }, 'The spec\'s routing configuration.');
const PiiSettings = closed({ mode: oneOf(['off', 'redact', 'block']), restore_in_response: Type.Boolean() });
const Budget = closed({
  day: Type.String(),
  plan: Type.String(),
  daily_token_budget: Type.Number(),
  tokens_used: Type.Number(),
  tokens_remaining: Type.Number(),
  daily_usd_cap: nullable(Type.Number()),
  usd_used: nullable(Type.Number()),
});
const FeatureFlagList = closed({
  data: Type.Array(closed({ flag: Type.String(), enabled: Type.Boolean(), variable: Type.String({ description: 'The environment variable that sets it.' }) })),
}, "The deployment's feature flags in force.");
const GatewayUsageBucket = closed({
  start: Type.String({ format: 'date-time' }),
  provider: Type.String(),
  model: Type.String(),
  requests: Type.Integer(),
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_tokens: Type.Integer(),
  cost_usd: Type.Number(),
}, 'Cost and tokens of one model in one hour or day (UTC); cost at the listed price, 0 for an unpriced model.');
const CostAnomaly = closed({
  hour_start: Type.String({ format: 'date-time' }),
  spend_usd: Type.Number(),
  baseline_mean_usd: Type.Number(),
  baseline_stddev_usd: Type.Number(),
  z_score: Type.Number(),
}, 'A cost.anomaly raised: the hour\'s spend against the previous 24 hours.');
const GatewayUsage = closed({
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  bucket: oneOf(['hour', 'day']),
  buckets: Type.Array(ref('GatewayUsageBucket')),
  budget: ref('Budget'),
  anomalies: Type.Array(ref('CostAnomaly')),
});
const ProviderHealth = closed({
  gateway_id: Type.String(),
  state: oneOf(['closed', 'open', 'half_open']),
  healthy: Type.Boolean(),
  requests_in_window: Type.Integer(),
  failures_in_window: Type.Integer(),
  failure_rate: Type.Number(),
  consecutive_failures: Type.Integer(),
  open_until: nullable(Timestamp),
  last_failure_at: nullable(Timestamp),
  mean_latency_ms: nullable(Type.Number()),
  health_check_interval_s: Type.Integer(),
  checked_at: Timestamp,
});
const ProviderHealthList = closed({ providers: Type.Array(ref('ProviderHealth')) });

// ------------------------------------------------------------------------------------- audit

const AuditVerification = closed({ ok: Type.Boolean(), checked: Type.Integer(), first_bad: nullable(closed({ seq: Type.Integer(), reason: Type.String() })), level: oneOf(['full', 'entry', 'last']) });
const AuditRecord = closed({
  seq: Type.Integer(),
  occurred_at: Timestamp,
  actor: Type.String(),
  action: Type.String(),
  target: nullable(Type.String()),
  outcome: Type.String(),
  details: AnyObject,
  prev_hash: Type.String(),
  hash: Type.String(),
});
const AuditPage = closed({ records: Type.Array(ref('AuditRecord')), next_before: nullable(Type.Integer()) });
const AuditCheckpoint = closed({ seq: Type.Integer(), hash: nullable(Type.String()), created_at: nullable(Timestamp) });

// ---------------------------------------------------------------------------------- SIEM export

const SiemSink = closed({
  id: Type.String(),
  name: Type.String(),
  kind: oneOf(SIEM_KINDS),
  format: oneOf(['cef', 'json']),
  transport: nullable(oneOf(['tcp', 'tls'])),
  host: nullable(Type.String()),
  port: nullable(Type.Integer()),
  url: nullable(Type.String()),
  token: nullable(Type.String({ description: 'The HEC token, masked.' })),
  index: nullable(Type.String()),
  server_name: nullable(Type.String()),
  ca_pem_set: Type.Boolean(),
  facility: Type.Integer(),
  streams: Type.Array(oneOf(SIEM_STREAMS)),
  enabled: Type.Boolean(),
  disabled_reason: nullable(oneOf(['manual', 'plan'])),
  state: oneOf(['active', 'failing', 'disabled']),
  consecutive_failures: Type.Integer(),
  last_error: nullable(Type.String()),
  last_error_at: nullable(Timestamp),
  last_delivered_at: nullable(Timestamp),
  next_attempt_at: nullable(Timestamp),
  delivered: closed({ findings: Type.Integer(), audit: Type.Integer() }),
  pending: closed({ findings: Type.Integer(), audit: Type.Integer() }),
  created_at: Timestamp,
  updated_at: Timestamp,
});
const SiemSinkList = closed({ sinks: Type.Array(ref('SiemSink')) });

// ---------------------------------------------------------------------------------- webhooks

const webhookProperties = {
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(oneOf(WEBHOOK_EVENTS)),
  description: nullable(Type.String()),
  state: oneOf(['active', 'paused']),
  consecutive_failures: Type.Integer(),
  paused_at: nullable(Timestamp),
  paused_reason: nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
};
const Webhook = closed(webhookProperties);
const WebhookCreated = closed({ ...webhookProperties, secret: Type.String({ description: 'Signing secret: shown once, at creation.' }) });
const WebhookList = closed({ webhooks: Type.Array(ref('Webhook')) });
const DELIVERY_STATES = ['pending', 'held', 'confirmed', 'exhausted'];
const WebhookDelivery = closed({
  id: Type.String(),
  event: Type.String(),
  state: oneOf(DELIVERY_STATES),
  attempts: Type.Integer(),
  last_status: nullable(Type.Integer()),
  last_error: nullable(Type.String()),
  next_attempt_at: nullable(Timestamp),
  created_at: Timestamp,
  completed_at: nullable(Timestamp),
});
const WebhookDeliveryList = closed({ deliveries: Type.Array(ref('WebhookDelivery')) });
const WebhookFailureSummary = closed({
  webhook_id: Type.String(),
  state: oneOf(['active', 'paused']),
  consecutive_failures: Type.Integer(),
  since: Timestamp,
  counts: Type.Record(Type.String(), Type.Integer(), { description: 'Attempts per status class since `since`.' }),
  last_error: nullable(closed({ at: Timestamp, delivery_id: Type.String(), status_class: Type.String(), status_code: nullable(Type.Integer()), error: nullable(Type.String()) })),
  next_retry_at: nullable(Timestamp),
  deliveries: closed({ pending: Type.Integer(), held: Type.Integer(), confirmed: Type.Integer(), exhausted: Type.Integer() }),
});

// ---------------------------------------------------------------------------- API security

const ChallengeClearance = closed(
  {
    clearance: Type.String({ description: 'Send it as X-SVC-Clearance with the retried request (and later ones of the challenge band) until it expires.' }),
    expires_at: Timestamp,
    challenge_id: Type.String(),
    header: Type.Literal('X-SVC-Clearance'),
  },
  'A solved Challenge-band puzzle: a clearance bound to the org and the credential that solved it.',
);
const McpAuthorization = closed(
  {
    issuer: Type.String(),
    jwks_uri: Type.String(),
    audience: nullable(Type.String()),
    role: oneOf(['viewer', 'operator', 'admin']),
    scopes_supported: Type.Array(Type.String()),
    updated_at: Timestamp,
  },
  "The org's OAuth authorization server for its MCP endpoints (RFC 9728 metadata; its access tokens are accepted beside svc keys).",
);
const ProtectedGateway = closed({
  id: Type.String(),
  name: Type.String(),
  backend_url: Type.String(),
  mode: oneOf(['monitor', 'block']),
  hostname: nullable(Type.String()),
  path_prefix: nullable(Type.String()),
  endpoint: Type.String({ description: 'Where end users reach the gateway: /gw/{id}.' }),
  openapi: nullable(closed({ operations: Type.Integer() })),
  rate_limit: nullable(closed({ requests_per_minute: Type.Integer(), burst: nullable(Type.Integer()) })),
  bot_policy: Type.Record(Type.String(), Type.String()),
  health_check: nullable(closed({ path: Type.String(), interval_seconds: Type.Integer(), timeout_ms: Type.Integer(), unhealthy_after: Type.Integer() })),
  timeout_ms: Type.Integer(),
  block_details: oneOf(['hidden', 'full']),
  health: Type.Object({ status: oneOf(['unknown', 'healthy', 'down']) }, { additionalProperties: true }),
  created_at: Timestamp,
  updated_at: Timestamp,
});
const ProtectedGatewayList = closed({ gateways: Type.Array(ref('ProtectedGateway')) });
const DiscoveredEndpoint = closed({
  method: Type.String(),
  path: Type.String(),
  protocol: Type.String(),
  status: oneOf(['documented', 'shadow', 'zombie', 'unknown']),
  risk_score: Type.Number(),
  risk_factors: AnyObject,
  requests: Type.Integer(),
  first_seen: Timestamp,
  last_seen: Timestamp,
  data_types: Type.Array(Type.String()),
});
const DiscoveredEndpointList = closed({ endpoints: Type.Array(ref('DiscoveredEndpoint')) });
const GeoRule = closed(
  {
    id: Type.String(),
    rule_name: Type.String(),
    action: Type.Literal('block'),
    countries: Type.Array(Type.String({ pattern: '^[A-Z]{2}$' })),
    response_code: Type.Integer(),
    log: Type.Boolean(),
    gateway_id: nullable(Type.String()),
    enforced: Type.Boolean({ description: 'False while FEATURE_GEO_BLOCKING is off: stored, not enforced.' }),
    created_at: Timestamp,
  },
  'The spec\'s geo-blocking rule.',
);
const GeoRuleList = closed({ enforced: Type.Boolean(), rules: Type.Array(ref('GeoRule')) });

// ------------------------------------------------------------------------------ verification

const VerificationPolicy = closed({
  policy: AnyObject,
  updated_at: nullable(Timestamp),
  inactive_rules: Type.Array(closed({ layer: oneOf(['structural', 'constraint']), rule: Type.String(), inactive_reason: Type.String() }), {
    description: 'Stored rules that today\'s validation refuses (e.g. a pattern that is not bounded-time): skipped, never compiled; `inactive_reason` is the code a PUT of the rule answers. Empty when every rule is active.',
  }),
});
const ProvenanceRecord = closed({
  request_id: Type.String(),
  created_at: Timestamp,
  content_hash: Type.String(),
  hash_algorithm: Type.Literal('sha256'),
  delivered: Type.Boolean(),
  provider: Type.String(),
  model: Type.String(),
  streamed: Type.Boolean(),
  sources: Type.Array(Type.Object({ index: Type.Integer(), sha256: Type.String() }, { additionalProperties: true })),
  checks: AnyObject,
  passed: nullable(Type.Boolean()),
  action: nullable(Type.String()),
  retried_from: nullable(Type.String()),
  risk_class: Type.String(),
  sb942_manifest_present: Type.Boolean(),
  chain_of_custody: closed({ audit_seq: Type.Integer(), audit_hash: Type.String(), audit_action: Type.String() }),
});

// --------------------------------------------------------------------------------------- MCP

const McpFinding = Type.Object({ id: Type.String(), name: Type.String(), category: Type.String(), confidence: Type.Number() }, { additionalProperties: true });
const McpServer = closed({
  id: Type.String(),
  org_id: Type.String(),
  name: Type.String(),
  url: Type.String({ description: 'The upstream URL (Streamable HTTP or legacy SSE), or `stdio:<name>` for an operator-configured stdio server.' }),
  transport: oneOf(['streamable_http', 'sse', 'stdio']),
  tool_categories: Type.Record(Type.String(), oneOf(TOOL_CATEGORIES)),
  on_held: oneOf(['hide', 'block']),
  created_at: Timestamp,
  endpoint: Type.String({ description: 'Where MCP clients connect (Streamable HTTP) with their svc API key.' }),
});
const McpServerList = closed({ servers: Type.Array(ref('McpServer')) });
const McpDefinition = closed({
  server_id: Type.String(),
  kind: oneOf(['tool', 'prompt', 'resource', 'instructions']),
  name: Type.String(),
  hash: nullable(Type.String()),
  pending_hash: nullable(Type.String()),
  pending_definition: Type.Unknown(),
  pending_reason: nullable(Type.String()),
  findings: Type.Array(ref('McpFinding')),
  category: nullable(Type.String()),
  first_seen_at: Timestamp,
  updated_at: Timestamp,
});
const McpDefinitionList = closed({ definitions: Type.Array(ref('McpDefinition')) });
const McpCollisionList = closed({
  collisions: Type.Array(closed({ kind: Type.String(), name: Type.String(), servers: Type.Array(Type.String()), server_names: Type.Array(Type.String()) })),
});
const quarantineProperties = {
  id: Type.String(),
  server_id: Type.String(),
  session_id: nullable(Type.String()),
  method: Type.String(),
  tool: nullable(Type.String()),
  findings: Type.Array(ref('McpFinding')),
  state: oneOf(['held', 'released']),
  created_at: Timestamp,
  released_at: nullable(Timestamp),
  released_by: nullable(Type.String()),
};
const McpQuarantineEntry = closed(quarantineProperties);
const McpQuarantineRecord = closed({ ...quarantineProperties, original: Type.Unknown({ description: 'The held message as the upstream sent it.' }) });
const McpQuarantineList = closed({ quarantine: Type.Array(ref('McpQuarantineEntry')) });
const McpSession = closed({
  id: Type.String(),
  server_id: nullable(Type.String()),
  mcp_session_id: nullable(Type.String()),
  role: nullable(Type.String()),
  state: oneOf(['active', 'expired']),
  created_at: Timestamp,
  last_heartbeat_at: Timestamp,
  expires_at: Timestamp,
  request_count: Type.Integer(),
});
const McpSessionAudit = closed({
  session_id: Type.String(),
  entries: Type.Array(
    Type.Object(
      { seq: Type.Integer(), occurred_at: Timestamp, action: Type.String(), outcome: Type.String(), target: nullable(Type.String()), hash: Type.String(), prev_hash: Type.String() },
      { additionalProperties: true, description: 'An audit entry of the session with its details (tool, role, decision, …) spread in.' },
    ),
  ),
});

const SensorConfig = closed({
  muted_patterns: Type.Array(Type.String()),
  severity_threshold: oneOf(['low', 'medium', 'high', 'critical']),
  paused: Type.Boolean(),
  replay_rate: Type.Integer({ description: 'Envelopes per second the sensor replays its spool at.' }),
});
const Sensor = closed({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  class: oneOf(['mcp', 'gateway', 'verification']),
  state: oneOf(['healthy', 'stale', 'paused', 'spooling']),
  capabilities: Type.Array(Type.String()),
  version: Type.String(),
  wire_version: Type.Integer(),
  public_key: Type.String({ description: 'Ed25519 public key, raw 32 bytes in base64url.' }),
  registered_at: Timestamp,
  last_registered_at: Timestamp,
  last_heartbeat_at: nullable(Timestamp),
  load: nullable(Type.Number()),
  queue_depth: nullable(Type.Integer()),
  last_finding_at: nullable(Type.String()),
  spool_depth: nullable(Type.Integer()),
  config: ref('SensorConfig'),
  config_version: Type.Integer(),
  certificate_expires_at: nullable(Timestamp),
  revoked_at: nullable(Timestamp),
});
const SensorList = closed({
  sensors: Type.Array(ref('Sensor')),
  limit: closed({ sensors: Type.Integer({ description: '0 = unlimited.' }), source: oneOf(['licence', 'plan']), plan: Type.String() }),
  licence: closed({ state: oneOf(['none', 'valid', 'expired']), expires_at: nullable(Timestamp) }),
});
const SensorEnrolmentToken = closed({
  id: Type.String({ format: 'uuid' }),
  token: Type.String({ description: 'Shown once: the sensor sends it as enrolment_token in POST /sensors/register.' }),
  name: nullable(Type.String()),
  expires_at: Timestamp,
});

/** Every shared response component, by name (emitted under components.schemas). */
export const RESPONSE_COMPONENTS = {
  Error: ErrorSchema,
  HealthLiveness,
  DatabaseHealth,
  CacheHealth,
  QueueHealth,
  HealthFull,
  Registration,
  Login,
  MfaChallenge,
  LoginStep,
  TotpEnrolment,
  TotpConfirmation,
  OidcConnection,
  SamlConnection,
  SamlMetadata,
  Whoami,
  Org,
  OrgUsage,
  PlanChanged,
  SiemSink,
  SiemSinkList,
  ApiKey,
  ApiKeyCreated,
  ApiKeyList,
  User,
  UserList,
  Invitation,
  InvitationList,
  InvitationCreated,
  InvitationAccepted,
  DashboardSession,
  ProviderKey,
  ProviderKeyList,
  Span,
  ThreatDecision,
  ThresholdSettings,
  CompletionResponse: CompletionResponseSchema,
  CompletionStreamEvent,
  ChatCompletion: ChatCompletionResponseSchema,
  ChatCompletionChunk: ChatCompletionChunkSchema,
  Model: ModelSchema,
  ModelList: ModelListSchema,
  OpenAiError: OpenAiErrorSchema,
  AnthropicMessage: MessageResponseSchema,
  AnthropicStreamEvent: MessageStreamEventSchema,
  AnthropicError: AnthropicErrorSchema,
  Verification: VerificationSchema,
  RoutingConfig,
  ChallengeClearance,
  PiiSettings,
  Budget,
  FeatureFlagList,
  GatewayUsageBucket,
  CostAnomaly,
  GatewayUsage,
  ProviderHealth,
  ProviderHealthList,
  AuditVerification,
  AuditRecord,
  AuditPage,
  AuditCheckpoint,
  Webhook,
  WebhookCreated,
  WebhookList,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookFailureSummary,
  ProtectedGateway,
  ProtectedGatewayList,
  DiscoveredEndpoint,
  DiscoveredEndpointList,
  GeoRule,
  GeoRuleList,
  VerificationPolicy,
  ProvenanceRecord,
  McpFinding,
  McpServer,
  McpServerList,
  McpDefinition,
  McpDefinitionList,
  McpCollisionList,
  McpQuarantineEntry,
  McpQuarantineRecord,
  McpQuarantineList,
  McpSession,
  McpSessionAudit,
  McpAuthorization,
  SensorConfig,
  Sensor,
  SensorList,
  SensorEnrolmentToken,
  ...COMPLIANCE_RESPONSE_COMPONENTS,
} satisfies Record<string, TSchema>;

export type ComponentName = keyof typeof RESPONSE_COMPONENTS;

// ------------------------------------------------------------------------ the operation table

/** A success answer: a component (JSON), or no body (204). */
type Success = ComponentName | null;

interface OperationResponses {
  /** Success status → component, or null for an empty body. */
  success: Partial<Record<200 | 201 | 202 | 204 | 302 | 503, Success>>;
  /** The success answer's media type when it is not JSON (SAML metadata is XML). */
  media?: string;
  /** Error statuses beyond those every route of its kind answers (see `commonErrors`). */
  errors?: number[];
  /** Extra media types of the success answer (the streamed completion). */
  stream?: ComponentName;
  /** The error body, when not svc's envelope (the compatible surfaces answer in their API's shape). */
  error?: ComponentName;
}

/**
 * Per operation ("METHOD /url" as registered): its success answers and the error statuses
 * specific to it. A route missing here has no response schemas in the document, which
 * test/foundation/openapi-responses.test.ts reports.
 */
export const OPERATION_RESPONSES: Readonly<Record<string, OperationResponses>> = {
  'GET /health': { success: { 200: 'HealthLiveness' } },
  'GET /health/db': { success: { 200: 'DatabaseHealth', 503: 'DatabaseHealth' } },
  'GET /health/redis': { success: { 200: 'CacheHealth' } },
  'GET /health/full': { success: { 200: 'HealthFull', 503: 'HealthFull' } },

  'POST /api/v1/auth/register': { success: { 201: 'Registration' }, errors: [409] },
  'POST /api/v1/auth/login': { success: { 200: 'LoginStep' }, errors: [401] },
  'POST /api/v1/auth/login/totp': { success: { 200: 'Login' }, errors: [401] },
  'POST /api/v1/auth/totp/enroll': { success: { 201: 'TotpEnrolment' }, errors: [404, 409] },
  'POST /api/v1/auth/totp/confirm': { success: { 200: 'TotpConfirmation' }, errors: [404, 409] },
  'DELETE /api/v1/users/:id/totp': { success: { 204: null }, errors: [404] },
  'GET /api/v1/sso/oidc': { success: { 200: 'OidcConnection' }, errors: [404] },
  'PUT /api/v1/sso/oidc': { success: { 200: 'OidcConnection' } },
  'DELETE /api/v1/sso/oidc': { success: { 204: null }, errors: [404] },
  'GET /api/v1/auth/oidc/:org_id/start': { success: { 302: null }, errors: [403, 404, 502] },
  'GET /api/v1/auth/oidc/:org_id/callback': { success: { 200: 'Login' }, errors: [401, 403, 404, 409, 502] },
  'GET /api/v1/sso/saml': { success: { 200: 'SamlConnection' }, errors: [404] },
  'PUT /api/v1/sso/saml': { success: { 200: 'SamlConnection' } },
  'DELETE /api/v1/sso/saml': { success: { 204: null }, errors: [404] },
  'GET /api/v1/auth/saml/:org_id/metadata': { success: { 200: 'SamlMetadata' }, media: 'application/samlmetadata+xml', errors: [403, 404] },
  'GET /api/v1/auth/saml/:org_id/start': { success: { 302: null }, errors: [403, 404] },
  'POST /api/v1/auth/saml/:org_id/acs': { success: { 200: 'Login' }, errors: [401, 403, 404, 409] },
  'GET /api/v1/whoami': { success: { 200: 'Whoami' } },
  'GET /api/v1/org': { success: { 200: 'Org' }, errors: [404] },
  'POST /api/v1/org/trial/extend': { success: { 200: 'Org' }, errors: [404, 409] },
  'GET /api/v1/org/usage': { success: { 200: 'OrgUsage' }, errors: [404] },
  'PUT /api/v1/org/plan': { success: { 200: 'PlanChanged' }, errors: [404] },
  'POST /api/v1/keys': { success: { 201: 'ApiKeyCreated' }, errors: [404] },
  'GET /api/v1/keys': { success: { 200: 'ApiKeyList' } },
  'DELETE /api/v1/keys/:id': { success: { 200: 'ApiKey' }, errors: [404, 409] },
  'GET /api/v1/users': { success: { 200: 'UserList' } },
  'PATCH /api/v1/users/:id': { success: { 200: 'User' }, errors: [404, 409] },
  'DELETE /api/v1/users/:id': { success: { 204: null }, errors: [404, 409] },
  'POST /api/v1/users/invitations': { success: { 201: 'InvitationCreated' }, errors: [404, 409, 502] },
  'GET /api/v1/users/invitations': { success: { 200: 'InvitationList' } },
  'DELETE /api/v1/users/invitations/:id': { success: { 200: 'Invitation' }, errors: [404, 409] },
  'POST /api/v1/auth/invitations/accept': { success: { 201: 'InvitationAccepted' }, errors: [409, 410] },
  'GET /api/v1/auth/session': { success: { 200: 'DashboardSession' } },
  'POST /api/v1/auth/logout': { success: { 204: null } },
  'POST /api/v1/auth/password': { success: { 200: 'Login' } },
  'PUT /api/v1/providers/:provider/key': { success: { 200: 'ProviderKey' } },
  'GET /api/v1/providers': { success: { 200: 'ProviderKeyList' } },
  'DELETE /api/v1/providers/:provider/key': { success: { 204: null }, errors: [404] },

  'POST /api/v1/inspect': { success: { 200: 'ThreatDecision' } },
  'GET /api/v1/config/thresholds': { success: { 200: 'ThresholdSettings' } },
  'GET /api/v1/config/features': { success: { 200: 'FeatureFlagList' } },
  'POST /api/v1/config/thresholds': { success: { 200: 'ThresholdSettings' } },

  'POST /api/v1/gateway/completions': { success: { 200: 'CompletionResponse' }, stream: 'CompletionStreamEvent', errors: [402, 422, 502, 504] },
  'POST /v1/chat/completions': { success: { 200: 'ChatCompletion' }, stream: 'ChatCompletionChunk', errors: [402, 404, 422, 502, 504], error: 'OpenAiError' },
  'GET /v1/models': { success: { 200: 'ModelList' }, error: 'OpenAiError' },
  'GET /v1/models/:model': { success: { 200: 'Model' }, errors: [404], error: 'OpenAiError' },
  'POST /v1/messages': { success: { 200: 'AnthropicMessage' }, stream: 'AnthropicStreamEvent', errors: [402, 404, 422, 502, 504], error: 'AnthropicError' },
  'GET /api/v1/gateway/routing': { success: { 200: 'RoutingConfig' }, errors: [404] },
  'PUT /api/v1/gateway/routing': { success: { 200: 'RoutingConfig' } },
  'DELETE /api/v1/gateway/routing': { success: { 204: null } },
  'GET /api/v1/gateway/pii': { success: { 200: 'PiiSettings' } },
  'PUT /api/v1/gateway/pii': { success: { 200: 'PiiSettings' } },
  'GET /api/v1/gateway/budget': { success: { 200: 'Budget' } },
  'PUT /api/v1/gateway/budget': { success: { 200: 'Budget' } },
  'GET /api/v1/gateway/providers/health': { success: { 200: 'ProviderHealthList' } },
  'GET /api/v1/gateway/usage': { success: { 200: 'GatewayUsage' } },
  'POST /api/v1/gateway/challenge': { success: { 200: 'ChallengeClearance' } },

  'GET /api/v1/audit/verify': { success: { 200: 'AuditVerification' } },
  'GET /api/v1/audit': { success: { 200: 'AuditPage' } },
  'POST /api/v1/audit/checkpoints': { success: { 201: 'AuditCheckpoint' } },

  'POST /api/v1/siem/sinks': { success: { 201: 'SiemSink' } },
  'GET /api/v1/siem/sinks': { success: { 200: 'SiemSinkList' } },
  'GET /api/v1/siem/sinks/:id': { success: { 200: 'SiemSink' }, errors: [404] },
  'PATCH /api/v1/siem/sinks/:id': { success: { 200: 'SiemSink' }, errors: [404] },
  'DELETE /api/v1/siem/sinks/:id': { success: { 204: null }, errors: [404] },

  'POST /api/v1/webhooks': { success: { 201: 'WebhookCreated' } },
  'GET /api/v1/webhooks': { success: { 200: 'WebhookList' } },
  'GET /api/v1/webhooks/:id': { success: { 200: 'Webhook' }, errors: [404] },
  'PATCH /api/v1/webhooks/:id': { success: { 200: 'Webhook' }, errors: [404] },
  'DELETE /api/v1/webhooks/:id': { success: { 204: null }, errors: [404] },
  'GET /api/v1/webhooks/:id/deliveries': { success: { 200: 'WebhookDeliveryList' }, errors: [404] },
  'GET /api/v1/webhooks/:id/failures/summary': { success: { 200: 'WebhookFailureSummary' }, errors: [404] },

  'GET /api/v1/gateways': { success: { 200: 'ProtectedGatewayList' } },
  'POST /api/v1/gateways': { success: { 201: 'ProtectedGateway' }, errors: [409] },
  'GET /api/v1/gateways/:id': { success: { 200: 'ProtectedGateway' }, errors: [404] },
  'PATCH /api/v1/gateways/:id': { success: { 200: 'ProtectedGateway' }, errors: [404, 409] },
  'DELETE /api/v1/gateways/:id': { success: { 204: null }, errors: [404] },
  'GET /api/v1/gateways/:id/endpoints': { success: { 200: 'DiscoveredEndpointList' }, errors: [404] },
  'GET /api/v1/geo-rules': { success: { 200: 'GeoRuleList' } },
  'POST /api/v1/geo-rules': { success: { 201: 'GeoRule' }, errors: [404] },
  'DELETE /api/v1/geo-rules/:id': { success: { 204: null }, errors: [404] },

  'POST /api/v1/verify': { success: { 200: 'Verification' } },
  'GET /api/v1/config/verification': { success: { 200: 'VerificationPolicy' } },
  'PUT /api/v1/config/verification': { success: { 200: 'VerificationPolicy' } },
  'DELETE /api/v1/config/verification': { success: { 204: null } },
  'GET /api/v1/compliance/ai-provenance/:request_id': { success: { 200: 'ProvenanceRecord' }, errors: [404] },

  'POST /api/v1/mcp/servers': { success: { 201: 'McpServer' }, errors: [409] },
  'GET /api/v1/mcp/servers': { success: { 200: 'McpServerList' } },
  'GET /api/v1/mcp/servers/:id': { success: { 200: 'McpServer' }, errors: [404] },
  'PATCH /api/v1/mcp/servers/:id': { success: { 200: 'McpServer' }, errors: [404, 409] },
  'DELETE /api/v1/mcp/servers/:id': { success: { 204: null }, errors: [404] },
  'GET /api/v1/mcp/servers/:id/definitions': { success: { 200: 'McpDefinitionList' }, errors: [404] },
  'POST /api/v1/mcp/servers/:id/definitions/approve': { success: { 200: 'McpDefinition' }, errors: [404, 409] },
  'GET /api/v1/mcp/collisions': { success: { 200: 'McpCollisionList' } },
  'GET /api/v1/mcp/quarantine': { success: { 200: 'McpQuarantineList' } },
  'GET /api/v1/mcp/quarantine/:id': { success: { 200: 'McpQuarantineRecord' }, errors: [404] },
  'POST /api/v1/mcp/quarantine/:id/release': { success: { 200: 'McpQuarantineRecord' }, errors: [404] },
  'POST /api/v1/mcp/sessions/:id/heartbeat': { success: { 200: 'McpSession' }, errors: [404, 410] },
  'GET /api/v1/mcp/sessions/:id': { success: { 200: 'McpSession' }, errors: [404] },
  'GET /api/v1/mcp/audit': { success: { 200: 'McpSessionAudit' } },
  'GET /api/v1/mcp/authorization': { success: { 200: 'McpAuthorization' } , errors: [404] },
  'PUT /api/v1/mcp/authorization': { success: { 200: 'McpAuthorization' } },
  'DELETE /api/v1/mcp/authorization': { success: { 204: null }, errors: [404] },

  'POST /api/v1/sensors/enrolment-tokens': { success: { 201: 'SensorEnrolmentToken' } },
  'GET /api/v1/sensors': { success: { 200: 'SensorList' } },
  'GET /api/v1/sensors/:id': { success: { 200: 'Sensor' }, errors: [404] },
  'PATCH /api/v1/sensors/:id/config': { success: { 200: 'Sensor' }, errors: [404] },
  'DELETE /api/v1/sensors/:id': { success: { 200: 'Sensor' }, errors: [404] },

  ...COMPLIANCE_OPERATION_RESPONSES,
};

// ------------------------------------------------------------------------- the swagger hook

interface RouteFacts {
  method: string | string[];
  url: string;
  config?: { scope?: string; public?: boolean; operations?: boolean } | undefined;
}

interface RouteSchema {
  hide?: boolean;
  body?: unknown;
  params?: unknown;
  querystring?: unknown;
  response?: unknown;
  [key: string]: unknown;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Error statuses every route of its kind can answer: 429 (rate limits; operations routes have
 * their own per-IP limit), 400 when it takes input, 413/415 when it reads a JSON body, 401/403
 * with a scope, and 503 SERVICE_UNAVAILABLE (database outage) for every API route.
 */
export function commonErrors(method: string, schema: RouteSchema, config: RouteFacts['config']): number[] {
  const statuses = new Set<number>([429]);
  if (config?.operations === true) return [...statuses];
  statuses.add(503);
  const readsBody = BODY_METHODS.has(method);
  if (readsBody || schema.params !== undefined || schema.querystring !== undefined || schema.body !== undefined) statuses.add(400);
  if (readsBody) {
    statuses.add(413);
    statuses.add(415);
  }
  if (config?.scope !== undefined) {
    statuses.add(401);
    statuses.add(403);
  }
  return [...statuses];
}

/** Operations behind a plan gate (PLAN_UPGRADE_REQUIRED): pillar configuration and SIEM export (docs/accounts-plans.md). */
const PLAN_UPGRADE_OPERATIONS = [
  'POST /api/v1/gateways',
  'PATCH /api/v1/gateways/:id',
  'POST /api/v1/geo-rules',
  'POST /api/v1/mcp/servers',
  'PATCH /api/v1/mcp/servers/:id',
  'PUT /api/v1/mcp/authorization',
  'POST /api/v1/verify',
  'PUT /api/v1/config/verification',
  'POST /api/v1/siem/sinks',
  'PATCH /api/v1/siem/sinks/:id',
];

const COMPLETIONS = 'POST /api/v1/gateway/completions';
const CHAT = 'POST /v1/chat/completions';
const MESSAGES = 'POST /v1/messages';
/** Every operation that serves a completion (svc's envelope and the compatible surfaces). */
const ALL_COMPLETIONS = [COMPLETIONS, CHAT, MESSAGES] as const;
/**
 * Codes only some operations answer (all others may come from any operation with the status).
 * An empty list: answered outside the documented operations (the router's 404/405, /metrics, the
 * protected gateways' and the MCP proxy's traffic).
 */
const ONLY_ON: Partial<Record<ErrorCode, readonly string[]>> = {
  LOGIN_FAILED: ['POST /api/v1/auth/login'],
  LOGIN_BLOCKED: ['POST /api/v1/auth/login', 'POST /api/v1/auth/password', 'POST /api/v1/auth/invitations/accept', 'POST /api/v1/auth/login/totp'],
  MFA_TOKEN_INVALID: ['POST /api/v1/auth/login/totp'],
  MFA_CODE_INVALID: ['POST /api/v1/auth/login/totp', 'POST /api/v1/auth/totp/confirm'],
  MFA_LOCKED: ['POST /api/v1/auth/login/totp'],
  SSO_STATE_INVALID: ['GET /api/v1/auth/oidc/:org_id/callback'],
  SSO_ASSERTION_INVALID: ['GET /api/v1/auth/oidc/:org_id/callback', 'POST /api/v1/auth/saml/:org_id/acs'],
  SSO_REPLAYED: ['POST /api/v1/auth/saml/:org_id/acs'],
  SSO_DOMAIN_NOT_ALLOWED: ['GET /api/v1/auth/oidc/:org_id/callback', 'POST /api/v1/auth/saml/:org_id/acs'],
  SSO_PROVIDER_UNAVAILABLE: ['GET /api/v1/auth/oidc/:org_id/start', 'GET /api/v1/auth/oidc/:org_id/callback'],
  SSO_PUBLIC_URL_REQUIRED: ['GET /api/v1/auth/oidc/:org_id/start', 'PUT /api/v1/sso/saml'],
  REGISTER_BLOCKED: ['POST /api/v1/auth/register'],
  EMAIL_TAKEN: ['POST /api/v1/auth/register', 'POST /api/v1/users/invitations', 'POST /api/v1/auth/invitations/accept'],
  INVITATION_INVALID: ['POST /api/v1/auth/invitations/accept'],
  INVITATION_USED: ['POST /api/v1/auth/invitations/accept', 'DELETE /api/v1/users/invitations/:id'],
  INVITATION_EXPIRED: ['POST /api/v1/auth/invitations/accept'],
  LAST_ADMIN: ['PATCH /api/v1/users/:id', 'DELETE /api/v1/users/:id'],
  ROLE_INSUFFICIENT: ['PATCH /api/v1/users/:id', 'DELETE /api/v1/users/:id', 'POST /api/v1/users/invitations', 'PUT /api/v1/org/plan', 'DELETE /api/v1/users/:id/totp'],
  SESSION_REQUIRED: ['GET /api/v1/auth/session', 'POST /api/v1/auth/logout', 'POST /api/v1/auth/password'],
  PASSWORD_INCORRECT: ['POST /api/v1/auth/password'],
  EMAIL_DELIVERY_FAILED: ['POST /api/v1/users/invitations'],
  TRIAL_LIMIT: ['POST /api/v1/org/trial/extend'],
  KEY_CLASS_FORBIDDEN: ['POST /api/v1/keys'],
  METRICS_TOKEN_INVALID: [],
  ROUTE_NOT_FOUND: [],
  METHOD_NOT_ALLOWED: [],
  CHALLENGE_FAILED: ['POST /api/v1/gateway/challenge'],
  GEO_BLOCKED: [],
  BACKEND_UNREACHABLE: [],
  BACKEND_DOWN: [],
  BACKEND_TIMEOUT: [],
  MCP_SESSION_EXPIRED: ['POST /api/v1/mcp/sessions/:id/heartbeat'],
  STATE_TRANSITION_INVALID: STATE_TRANSITION_OPERATIONS,
  PLAN_REQUIRED: PLAN_REQUIRED_OPERATIONS,
  PLAN_UPGRADE_REQUIRED: [...PLAN_UPGRADE_OPERATIONS, 'PUT /api/v1/sso/saml', 'GET /api/v1/auth/saml/:org_id/metadata', 'GET /api/v1/auth/saml/:org_id/start', 'POST /api/v1/auth/saml/:org_id/acs'],
  THREAT_BLOCKED: ALL_COMPLETIONS,
  CHALLENGE_REQUIRED: ALL_COMPLETIONS,
  UPSTREAM_QUOTA_EXCEEDED: ALL_COMPLETIONS,
  PII_BLOCKED: ALL_COMPLETIONS,
  VERIFICATION_BLOCKED: ALL_COMPLETIONS,
  IMAGES_NOT_SUPPORTED: ALL_COMPLETIONS,
  UPSTREAM_REJECTED: ALL_COMPLETIONS,
  BUDGET_EXHAUSTED: ALL_COMPLETIONS,
  NO_PROVIDERS: ALL_COMPLETIONS,
  UPSTREAM_AUTH_FAILED: ALL_COMPLETIONS,
  UPSTREAM_ERROR: ALL_COMPLETIONS,
  UPSTREAM_UNAVAILABLE: ALL_COMPLETIONS,
  UPSTREAM_TIMEOUT: ALL_COMPLETIONS,
  MODEL_NOT_FOUND: [CHAT, MESSAGES, 'GET /v1/models/:model'],
  // The sensor wire (docs/sensors.md), outside the documented /api/v1 operations.
  SENSOR_UNKNOWN: [],
  ENROLMENT_TOKEN_INVALID: [],
  sig_invalid: [],
  wire_version_unsupported: [],
  license_expired: [],
  SENSOR_LIMIT_REACHED: [],
};

/** The catalogue's codes this operation may answer with this status: the response's description. */
export function codesOf(operation: string, status: number): ErrorCode[] {
  return (Object.keys(ERRORS) as ErrorCode[]).filter((code) => ERRORS[code].status === status && (ONLY_ON[code]?.includes(operation) ?? true));
}

const json = (name: ComponentName) => ({ 'application/json': { schema: { $ref: `${COMPONENTS_PATH}${name}` } } });

const SUCCESS_DESCRIPTIONS: Record<number, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No content', 302: 'Found: the browser is sent to the Location', 503: 'Unhealthy' };

/** The OpenAPI `responses` of one operation, or null when the table does not know it. */
export function responsesOf(method: string, url: string, schema: RouteSchema, config: RouteFacts['config']): Record<string, unknown> | null {
  const entry = OPERATION_RESPONSES[`${method} ${url}`];
  if (entry === undefined) return null;
  const responses: Record<string, unknown> = {};
  for (const [status, component] of Object.entries(entry.success)) {
    const description = SUCCESS_DESCRIPTIONS[Number(status)] ?? 'OK';
    if (Number(status) === 302) {
      responses[status] = { description, type: 'null', headers: { Location: { type: 'string', format: 'uri', description: 'Where the browser goes next.' } } };
      continue;
    }
    if (component === null || component === undefined) {
      responses[status] = { description, type: 'null' };
      continue;
    }
    const content: Record<string, unknown> = entry.media === undefined ? json(component) : { [entry.media]: { schema: { $ref: `${COMPONENTS_PATH}${component}` } } };
    if (entry.stream !== undefined) {
      content['text/event-stream'] = {
        schema: {
          type: 'string',
          description:
            entry.stream === 'AnthropicStreamEvent'
              ? 'With "stream": true: server-sent events, each an `event:` line naming its type and a `data:` line with an AnthropicStreamEvent (JSON), ending with message_stop.'
              : `With "stream": true: server-sent events, each \`data:\` line a ${entry.stream} (JSON), ending with \`data: [DONE]\`.`,
          'x-event-schema': { $ref: `${COMPONENTS_PATH}${entry.stream}` },
        },
      };
    }
    responses[status] = { description, content };
  }
  const errors = new Set([...commonErrors(method, schema, config), ...(entry.errors ?? [])]);
  for (const status of [...errors].sort((left, right) => left - right)) {
    if (responses[String(status)] !== undefined) continue;
    responses[String(status)] = { description: codesOf(`${method} ${url}`, status).join(', '), content: json(entry.error ?? 'Error') };
  }
  responses.default = { description: 'Any other error (INTERNAL): the same envelope.', content: json(entry.error ?? 'Error') };
  return responses;
}

/**
 * @fastify/swagger `transform`: the operation's documented responses replace whatever the route
 * declares for the document only; the route's own schema (and serializer) is untouched.
 */
export function documentResponses({ schema, url, route }: { schema: FastifySchema; url: string; route: RouteFacts }): { schema: FastifySchema; url: string } {
  const routeSchema = (schema ?? {}) as RouteSchema;
  if (routeSchema.hide === true) return { schema, url };
  const method = [route.method].flat()[0] ?? 'GET';
  const responses = responsesOf(method, url, routeSchema, route.config);
  if (responses === null) return { schema, url };
  return { schema: { ...routeSchema, response: responses } as FastifySchema, url };
}
