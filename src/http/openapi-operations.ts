/**
 * The names of /openapi.json's operations: an operationId (stable: generated clients name their
 * methods after it, so it is never renamed) and a one-line summary for every documented route,
 * keyed "METHOD /url" as registered, like OPERATION_RESPONSES. A route missing here fails
 * test/foundation/openapi-lint.test.ts (Redocly's recommended rules, 0 errors), so a new route
 * cannot reach the document unnamed.
 *
 * Beside the registered routes, the document describes the three surfaces that are not JSON API
 * routes (the protected-gateway traffic under /gw, MCP traffic under /mcp and /metrics): they
 * are registered hidden, since their handlers take any method and path, and are described here
 * once by hand (DOCUMENT_ONLY_PATHS), each operation marked `x-svc-surface` (traffic or operations):
 * their answers are the upstream's or a text format, not the JSON API's documented envelopes.
 */

export interface OperationNames {
  operationId: string;
  summary: string;
}

export const OPERATION_NAMES: Readonly<Record<string, OperationNames>> = {
  'GET /health': { operationId: 'getHealth', summary: 'Liveness: the process is up' },
  'GET /health/db': { operationId: 'getDatabaseHealth', summary: 'Relational database connectivity and query latency' },
  'GET /health/redis': { operationId: 'getCacheHealth', summary: 'Key-value cache ping and latency, and whether the in-memory fallback is in use' },
  'GET /health/full': { operationId: 'getFullHealth', summary: 'Database, cache and worker queue together' },

  'POST /api/v1/auth/register': { operationId: 'register', summary: 'Create an organization and its first admin user (starts a Starter trial)' },
  'POST /api/v1/auth/login': { operationId: 'login', summary: 'Sign in with e-mail and password (answers a second step when TOTP is active)' },
  'POST /api/v1/auth/login/totp': { operationId: 'loginTotp', summary: 'Second step of sign-in: the mfa_token with a TOTP code or a recovery code' },
  'POST /api/v1/auth/totp/enroll': { operationId: 'enrollTotp', summary: 'Start TOTP enrolment for the signed-in user (otpauth URI, QR code, recovery codes; shown once)' },
  'POST /api/v1/auth/totp/confirm': { operationId: 'confirmTotp', summary: 'Activate TOTP with a first code' },
  'DELETE /api/v1/users/:id/totp': { operationId: 'resetUserTotp', summary: "Reset a user's TOTP (lost authenticator): password alone signs in until they enrol again" },
  'GET /api/v1/sso/oidc': { operationId: 'getOidcConnection', summary: "The org's OpenID Connect sign-in connection (secret masked)" },
  'PUT /api/v1/sso/oidc': { operationId: 'setOidcConnection', summary: 'Set the OpenID Connect sign-in connection (issuer, client, allowed domains, role for new users)' },
  'DELETE /api/v1/sso/oidc': { operationId: 'deleteOidcConnection', summary: 'Remove the OpenID Connect sign-in connection' },
  'GET /api/v1/auth/oidc/:org_id/start': { operationId: 'startOidcSignIn', summary: "Start OpenID Connect sign-in: redirects the browser to the org's provider" },
  'GET /api/v1/auth/oidc/:org_id/callback': { operationId: 'finishOidcSignIn', summary: "The provider's redirect back: the code exchanged, the ID token verified, the user signed in" },
  'GET /api/v1/sso/saml': { operationId: 'getSamlConnection', summary: "The org's SAML identity provider (Enterprise)" },
  'PUT /api/v1/sso/saml': { operationId: 'setSamlConnection', summary: 'Set the SAML identity provider: entity id, SSO URL, signing certificate (Enterprise)' },
  'DELETE /api/v1/sso/saml': { operationId: 'deleteSamlConnection', summary: 'Remove the SAML identity provider' },
  'GET /api/v1/auth/saml/:org_id/metadata': { operationId: 'getSamlMetadata', summary: "This service provider's SAML metadata for the org's IdP (XML)" },
  'GET /api/v1/auth/saml/:org_id/start': { operationId: 'startSamlSignIn', summary: 'Start SAML sign-in: redirects the browser to the IdP with an AuthnRequest' },
  'POST /api/v1/auth/saml/:org_id/acs': { operationId: 'samlAssertionConsumer', summary: "Assertion consumer service: the IdP's signed assertion (HTTP-POST binding) verified, the user signed in" },
  'GET /api/v1/whoami': { operationId: 'whoami', summary: 'Who the credential belongs to: org, plan, scope and key class' },
  'GET /api/v1/org': { operationId: 'getOrg', summary: "The caller's organization, plan and trial" },
  'POST /api/v1/org/trial/extend': { operationId: 'extendTrial', summary: 'Extend the trial (up to 90 days in all)' },
  'GET /api/v1/org/usage': { operationId: 'getOrgUsage', summary: 'Usage against every quota of the plan: findings this month, sensors, trial days left, pillars and features' },
  'PUT /api/v1/org/plan': { operationId: 'changePlan', summary: 'Change the plan: upgrade, downgrade or trial conversion (super_admin; no payment processor)' },
  'POST /api/v1/keys': { operationId: 'createApiKey', summary: 'Create an API key (the key is shown once)' },
  'GET /api/v1/keys': { operationId: 'listApiKeys', summary: "List the organization's API keys (never the key text)" },
  'DELETE /api/v1/keys/:id': { operationId: 'revokeApiKey', summary: 'Revoke an API key' },
  'GET /api/v1/users': { operationId: 'listUsers', summary: "List the organization's users and their roles" },
  'PATCH /api/v1/users/:id': { operationId: 'changeUserRole', summary: "Change a user's role (the last admin cannot be demoted)" },
  'DELETE /api/v1/users/:id': { operationId: 'removeUser', summary: 'Remove a user from the organization and revoke their sessions' },
  'POST /api/v1/users/invitations': { operationId: 'inviteUser', summary: 'Invite an e-mail address with a role (a signed, expiring, single-use link)' },
  'GET /api/v1/users/invitations': { operationId: 'listInvitations', summary: "List the organization's invitations and their status" },
  'DELETE /api/v1/users/invitations/:id': { operationId: 'revokeInvitation', summary: 'Revoke a pending invitation' },
  'POST /api/v1/auth/invitations/accept': { operationId: 'acceptInvitation', summary: 'Accept an invitation: set a password, join the organization, sign in' },
  'GET /api/v1/auth/session': { operationId: 'getSession', summary: 'The dashboard session: user, role, org, plan, timeouts and CSRF token' },
  'POST /api/v1/auth/logout': { operationId: 'logout', summary: 'End the dashboard session (revoked server-side) and clear its cookies' },
  'POST /api/v1/auth/password': { operationId: 'changePassword', summary: "Change the caller's password; every session of the user is revoked" },
  'PUT /api/v1/providers/:provider/key': { operationId: 'setProviderKey', summary: 'Set an upstream provider key (stored encrypted, shown masked)' },
  'DELETE /api/v1/providers/:provider/key': { operationId: 'deleteProviderKey', summary: 'Remove an upstream provider key' },
  'GET /api/v1/providers': { operationId: 'listProviderKeys', summary: 'List the configured upstream provider keys, masked' },

  'POST /api/v1/inspect': { operationId: 'inspect', summary: 'Score a prompt, tool output, model output or HTTP request (threat decision)' },
  'GET /api/v1/config/features': { operationId: 'listFeatureFlags', summary: "The deployment's feature flags in force (read-only)" },
  'GET /api/v1/config/thresholds': { operationId: 'getThresholds', summary: 'The response-policy thresholds in force' },
  'POST /api/v1/config/thresholds': { operationId: 'setThresholds', summary: 'Set the auto-block threshold and the policy bands' },

  'POST /api/v1/gateway/completions': { operationId: 'createCompletion', summary: "A completion through the AI gateway, in svc's own envelope (JSON or server-sent events)" },
  'GET /api/v1/gateway/routing': { operationId: 'getRouting', summary: 'The routing configuration' },
  'PUT /api/v1/gateway/routing': { operationId: 'setRouting', summary: 'Set the routing strategy and provider order' },
  'DELETE /api/v1/gateway/routing': { operationId: 'deleteRouting', summary: 'Remove the routing configuration' },
  'GET /api/v1/gateway/pii': { operationId: 'getPiiSettings', summary: 'PII redaction settings' },
  'PUT /api/v1/gateway/pii': { operationId: 'setPiiSettings', summary: 'Set PII redaction settings' },
  'GET /api/v1/gateway/budget': { operationId: 'getBudget', summary: 'Budget caps and spend so far' },
  'PUT /api/v1/gateway/budget': { operationId: 'setBudget', summary: 'Set budget caps' },
  'GET /api/v1/gateway/usage': { operationId: 'getGatewayUsage', summary: 'Cost and tokens by model per hour or day, the budget in force and the cost anomalies raised' },
  'GET /api/v1/gateway/providers/health': { operationId: 'listProviderHealth', summary: 'Circuit-breaker state and latency per upstream provider' },
  'POST /api/v1/gateway/challenge': { operationId: 'solveChallenge', summary: 'Answer the proof-of-work puzzle of a CHALLENGE_REQUIRED and get a clearance' },

  'GET /api/v1/audit/verify': { operationId: 'verifyAuditChain', summary: 'Verify the audit hash chain (full, one entry or the last N)' },
  'GET /api/v1/audit': { operationId: 'listAuditEntries', summary: 'List audit entries' },
  'POST /api/v1/audit/checkpoints': { operationId: 'createAuditCheckpoint', summary: 'Record a checkpoint of the audit chain head' },

  'POST /api/v1/siem/sinks': { operationId: 'createSiemSink', summary: 'Stream findings and audit entries to a SIEM (syslog over TCP or TLS in CEF or JSON, or a Splunk HEC)' },
  'GET /api/v1/siem/sinks': { operationId: 'listSiemSinks', summary: 'List SIEM sinks with their delivery state and lag' },
  'GET /api/v1/siem/sinks/:id': { operationId: 'getSiemSink', summary: 'One SIEM sink, its delivery state and lag' },
  'PATCH /api/v1/siem/sinks/:id': { operationId: 'updateSiemSink', summary: 'Edit a SIEM sink, or disable or re-enable it' },
  'DELETE /api/v1/siem/sinks/:id': { operationId: 'deleteSiemSink', summary: 'Delete a SIEM sink' },

  'POST /api/v1/webhooks': { operationId: 'createWebhook', summary: 'Subscribe an endpoint to events (the signing secret is shown once)' },
  'GET /api/v1/webhooks': { operationId: 'listWebhooks', summary: 'List webhook endpoints' },
  'GET /api/v1/webhooks/:id': { operationId: 'getWebhook', summary: 'One webhook endpoint' },
  'PATCH /api/v1/webhooks/:id': { operationId: 'updateWebhook', summary: 'Edit a webhook endpoint, or re-enable a paused one' },
  'DELETE /api/v1/webhooks/:id': { operationId: 'deleteWebhook', summary: 'Delete a webhook endpoint' },
  'GET /api/v1/webhooks/:id/deliveries': { operationId: 'listWebhookDeliveries', summary: "An endpoint's recent deliveries" },
  'GET /api/v1/webhooks/:id/failures/summary': { operationId: 'getWebhookFailureSummary', summary: "Summary of an endpoint's delivery failures" },

  'GET /api/v1/gateways': { operationId: 'listGateways', summary: 'List protected API gateways' },
  'POST /api/v1/gateways': { operationId: 'createGateway', summary: 'Protect an API: create a gateway in front of its backend' },
  'GET /api/v1/gateways/:id': { operationId: 'getGateway', summary: 'One protected gateway' },
  'PATCH /api/v1/gateways/:id': { operationId: 'updateGateway', summary: 'Edit a protected gateway' },
  'DELETE /api/v1/gateways/:id': { operationId: 'deleteGateway', summary: 'Delete a protected gateway' },
  'GET /api/v1/gateways/:id/endpoints': { operationId: 'listGatewayEndpoints', summary: 'Discovered endpoints of a gateway, with shadow/zombie status and risk' },
  'GET /api/v1/geo-rules': { operationId: 'listGeoRules', summary: 'List geo-blocking rules' },
  'POST /api/v1/geo-rules': { operationId: 'createGeoRule', summary: 'Create a geo-blocking rule' },
  'DELETE /api/v1/geo-rules/:id': { operationId: 'deleteGeoRule', summary: 'Delete a geo-blocking rule' },

  'POST /api/v1/verify': { operationId: 'verifyResponse', summary: 'Verify an AI response (integrity, grounding, structural, constraint)' },
  'GET /api/v1/config/verification': { operationId: 'getVerificationPolicy', summary: 'The verification policy in force' },
  'PUT /api/v1/config/verification': { operationId: 'setVerificationPolicy', summary: 'Set the verification policy' },
  'DELETE /api/v1/config/verification': { operationId: 'deleteVerificationPolicy', summary: 'Return to the default verification policy' },
  'GET /api/v1/threats': { operationId: 'listThreats', summary: 'List scored threat events, filtered (time, decision, category, gateway, session, pattern) with a cursor' },
  'GET /api/v1/threats/summary': { operationId: 'summarizeThreats', summary: 'Counts of threat events per hour or day, by decision and by pillar (dashboard charts)' },
  'GET /api/v1/threats/:id': { operationId: 'getThreat', summary: 'One threat event with its explanation' },
  'GET /api/v1/ai/decisions/:id': { operationId: 'getDecision', summary: 'One automated decision (a threat decision or a gateway completion) with its explainability' },
  'PATCH /api/v1/ai/decisions/:id/explainability': { operationId: 'setDecisionExplainability', summary: "Record a decision's logic, significance, human review and contact" },
  'GET /api/v1/ai/decisions/:id/appeal-status': { operationId: 'getAppealStatus', summary: "A decision's appeal status and human-review contact" },
  'POST /api/v1/ai/decisions/:id/appeal': { operationId: 'fileAppeal', summary: 'File an appeal against a decision (pending)' },
  'POST /api/v1/ai/decisions/:id/appeal/review': { operationId: 'reviewAppeal', summary: 'Start the human review of an appeal (under_review)' },
  'POST /api/v1/ai/decisions/:id/appeal/resolve': { operationId: 'resolveAppeal', summary: 'Resolve an appeal with its outcome (resolved)' },
  'GET /api/v1/ai/risk-assessment/:id': { operationId: 'getRiskAssessment', summary: 'The AI risk class of a decision, and how it was derived' },
  'POST /api/v1/ai/explain': { operationId: 'explainDecision', summary: 'Explain a decision, with confidence scoring' },
  'GET /api/v1/ai/explain/:id': { operationId: 'getExplanation', summary: 'A cached explanation' },
  'POST /api/v1/ai/model-catalog': { operationId: 'registerModel', summary: 'Register a general-purpose model (systemic risk flagged at 10^25 FLOPs or 100B parameters)' },
  'GET /api/v1/ai/model-catalog': { operationId: 'listModels', summary: 'The model catalog' },
  'GET /api/v1/ai/risk-tolerance': { operationId: 'getRiskTolerance', summary: 'Machine-readable risk thresholds, with current values where svc measures them' },
  'POST /api/v1/ai/unlearning/request': { operationId: 'requestUnlearning', summary: 'Queue a purge of what svc holds about a subject or conversation' },
  'GET /api/v1/ai/unlearning/:id': { operationId: 'getUnlearning', summary: 'The state of an unlearning request' },
  'GET /api/v1/compliance/ai-audit-export': { operationId: 'exportAudit', summary: 'A signed multi-framework audit bundle (JSON, PDF, NAISI, japan_ai_act)' },
  'GET /api/v1/compliance/approval-history': { operationId: 'listApprovals', summary: 'Every approval svc records, with who and when' },
  'POST /api/v1/compliance/grievance': { operationId: 'submitGrievance', summary: 'Submit a grievance (submitted; acknowledgment due in 5 business days)' },
  'GET /api/v1/compliance/grievance/:id': { operationId: 'getGrievance', summary: "A grievance's status and due dates" },
  'POST /api/v1/compliance/grievance/:id/review': { operationId: 'reviewGrievance', summary: 'Start reviewing a grievance (under_review)' },
  'POST /api/v1/compliance/grievance/:id/decision': { operationId: 'decideGrievance', summary: 'Decide a grievance: upheld (resolved) or declined (rejected)' },
  'POST /api/v1/privacy/ai-opt-out': { operationId: 'recordOptOut', summary: 'Record a subject\'s opt-out of automated decision-making' },
  'GET /api/v1/privacy/ai-opt-out/:id': { operationId: 'getOptOut', summary: 'One recorded opt-out' },
  'GET /api/v1/privacy/ccpa/categories-collected': { operationId: 'getCcpaCategories', summary: 'CCPA: the categories of personal information svc collects' },
  'GET /api/v1/privacy/lgpd/processing-confirmation': { operationId: 'getLgpdProcessingConfirmation', summary: 'LGPD: confirmation of processing' },
  'GET /api/v1/privacy/lgpd/data-sharing-info': { operationId: 'getLgpdDataSharing', summary: 'LGPD: with whom data is shared' },
  'GET /api/v1/privacy/portability-export': { operationId: 'exportSubjectData', summary: "A subject's data in a machine-readable file (portability)" },
  'GET /api/v1/compliance/ai-provenance/:request_id': { operationId: 'getAiProvenance', summary: 'Provenance record of one AI answer (content hash, risk class, chain of custody)' },

  'POST /api/v1/mcp/servers': { operationId: 'createMcpServer', summary: 'Register an MCP server behind the inspecting proxy' },
  'GET /api/v1/mcp/servers': { operationId: 'listMcpServers', summary: 'List registered MCP servers' },
  'GET /api/v1/mcp/servers/:id': { operationId: 'getMcpServer', summary: 'One registered MCP server' },
  'PATCH /api/v1/mcp/servers/:id': { operationId: 'updateMcpServer', summary: 'Edit an MCP server registration (its pins are kept)' },
  'DELETE /api/v1/mcp/servers/:id': { operationId: 'deleteMcpServer', summary: 'Remove an MCP server registration' },
  'GET /api/v1/mcp/servers/:id/definitions': { operationId: 'listMcpDefinitions', summary: "A server's pinned and held tool definitions" },
  'POST /api/v1/mcp/servers/:id/definitions/approve': { operationId: 'approveMcpDefinition', summary: 'Approve a held tool definition (pins it)' },
  'GET /api/v1/mcp/collisions': { operationId: 'listMcpCollisions', summary: 'Tool names offered by more than one server' },
  'GET /api/v1/mcp/quarantine': { operationId: 'listMcpQuarantine', summary: 'Quarantined tool results' },
  'GET /api/v1/mcp/quarantine/:id': { operationId: 'getMcpQuarantineEntry', summary: 'One quarantined tool result' },
  'POST /api/v1/mcp/quarantine/:id/release': { operationId: 'releaseMcpQuarantineEntry', summary: 'Release a quarantined tool result' },
  'POST /api/v1/mcp/sessions/:id/heartbeat': { operationId: 'heartbeatMcpSession', summary: "Restart an MCP session's 30-minute expiry clock" },
  'GET /api/v1/mcp/sessions/:id': { operationId: 'getMcpSession', summary: 'One MCP session' },
  'GET /api/v1/mcp/audit': { operationId: 'listMcpSessionAudit', summary: "Audit entries of an MCP session" },
  'GET /api/v1/mcp/authorization': { operationId: 'getMcpAuthorization', summary: "The org's OAuth authorization server for its MCP endpoints" },
  'PUT /api/v1/mcp/authorization': { operationId: 'setMcpAuthorization', summary: 'Accept OAuth access tokens from an authorization server on the MCP endpoints' },
  'DELETE /api/v1/mcp/authorization': { operationId: 'deleteMcpAuthorization', summary: 'Stop accepting OAuth access tokens on the MCP endpoints' },

  'POST /api/v1/sensors/enrolment-tokens': { operationId: 'createSensorEnrolmentToken', summary: 'Create a one-time enrolment token a sensor registers with (the token is shown once)' },
  'GET /api/v1/sensors': { operationId: 'listSensors', summary: 'The sensors of the organization, their state (healthy, stale, paused, spooling) and the sensor limit' },
  'GET /api/v1/sensors/:id': { operationId: 'getSensor', summary: 'One sensor: state, last heartbeat, spool depth, pushed configuration, certificate expiry' },
  'PATCH /api/v1/sensors/:id/config': { operationId: 'setSensorConfig', summary: 'Push configuration to a sensor (mute a pattern, raise the severity threshold, pause, replay rate)' },
  'DELETE /api/v1/sensors/:id': { operationId: 'revokeSensor', summary: 'Revoke a sensor: its findings and requests are refused from then on' },
};

const errorResponse = { $ref: '#/components/responses/Error' };
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/**
 * The non-JSON-API surfaces, described by hand: their handlers are hidden from the generator
 * (they match any method and sub-path, or stream).
 */
export const DOCUMENT_ONLY_PATHS: Readonly<Record<string, unknown>> = {
  '/gw/{id}/{path}': {
    parameters: [
      { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The protected gateway id.' },
      { name: 'path', in: 'path', required: true, schema: { type: 'string' }, description: "Any path of the customer's API, forwarded as is." },
    ],
    ...Object.fromEntries(
      METHODS.map((method) => [
        method,
        {
          operationId: `gatewayTraffic${method[0]?.toUpperCase()}${method.slice(1)}`,
          'x-svc-surface': 'traffic',
          summary: `Traffic to a protected API through its gateway (${method.toUpperCase()}; any method is accepted)`,
          description:
            "Any method and path is scored and, when allowed, forwarded to the gateway's backend; the answer is the backend's. svc does not authenticate this traffic (the customer's API does its own). A blocked request answers 403, a challenged one the proof-of-work challenge, a gateway whose backend is down 503 BACKEND_DOWN (docs/apisec.md).",
          tags: ['apisec'],
          security: [],
          responses: {
            '403': { description: 'Blocked by the response policy, or a challenge to solve: a generic answer carrying the request id.' },
            '503': { description: "BACKEND_DOWN: the gateway's backend fails its health check." },
            default: { description: "The backend's answer." },
          },
        },
      ]),
    ),
  },
  '/mcp/{id}': {
    parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The registered MCP server id.' }],
    post: {
      operationId: 'mcpPost',
      'x-svc-surface': 'traffic',
      summary: 'Send JSON-RPC messages to a registered MCP server (Streamable HTTP)',
      description: 'Every message is inspected: tool definitions pinned, tool calls authorized by role, results scanned (docs/mcp.md). The answer is JSON or a server-sent-event stream.',
      tags: ['mcp'],
      requestBody: { required: true, content: { 'application/json': { schema: { type: ['object', 'array'] } } } },
      responses: { '200': { description: 'JSON-RPC answer (application/json or text/event-stream).' }, '202': { description: 'Accepted: the message was a notification or a response.' }, '400': errorResponse, '401': errorResponse, '403': errorResponse, '404': errorResponse, '429': errorResponse },
    },
    get: {
      operationId: 'mcpStream',
      'x-svc-surface': 'traffic',
      summary: "Open the MCP server's event stream for the session (Streamable HTTP)",
      tags: ['mcp'],
      responses: { '200': { description: 'text/event-stream of server messages.' }, '401': errorResponse, '404': errorResponse, '405': { description: 'The upstream offers no stream.' } },
    },
    delete: {
      operationId: 'mcpEndSession',
      'x-svc-surface': 'traffic',
      summary: 'End the MCP session (Streamable HTTP)',
      tags: ['mcp'],
      responses: { '200': { description: 'Ended.' }, '204': { description: 'Ended.' }, '401': errorResponse, '404': errorResponse },
    },
  },
  '/mcp/{id}/sse': {
    parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The registered MCP server id.' }],
    get: {
      operationId: 'mcpLegacyStream',
      'x-svc-surface': 'traffic',
      summary: 'Open a session of the legacy HTTP+SSE transport (MCP 2024-11-05)',
      tags: ['mcp'],
      responses: { '200': { description: 'text/event-stream; its first event names the messages endpoint.' }, '401': errorResponse, '404': errorResponse },
    },
  },
  '/mcp/{id}/messages': {
    parameters: [
      { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The registered MCP server id.' },
      { name: 'sessionId', in: 'query', required: true, schema: { type: 'string' }, description: 'The session named by the stream.' },
    ],
    post: {
      operationId: 'mcpLegacyMessage',
      'x-svc-surface': 'traffic',
      summary: 'Send a JSON-RPC message on a legacy HTTP+SSE session (answers arrive on the stream)',
      tags: ['mcp'],
      requestBody: { required: true, content: { 'application/json': { schema: { type: ['object', 'array'] } } } },
      responses: { '202': { description: 'Accepted.' }, '400': errorResponse, '401': errorResponse, '404': errorResponse },
    },
  },
  '/metrics': {
    get: {
      operationId: 'getMetrics',
      'x-svc-surface': 'operations',
      summary: 'Prometheus metrics (text exposition format)',
      description: 'Scraped with the bearer token METRICS_TOKEN (or the one derived from SECRET_KEY, docs/api.md); a scrape interval of 15 s is recommended.',
      tags: ['operations'],
      security: [{ metricsToken: [] }],
      responses: {
        '200': { description: 'Metrics.', content: { 'text/plain': { schema: { type: 'string' } } } },
        '401': errorResponse,
        '429': errorResponse,
        '503': errorResponse,
      },
    },
  },
};

/** The tag of a route registered without one: its capability, read off the path. */
function tagOf(url: string): string {
  const segment = url.split('/')[3] ?? '';
  if (segment === 'gateway') return 'gateway';
  return segment === '' ? 'operations' : segment;
}

/**
 * OpenAPI 3.1 is JSON Schema 2020-12: a tuple is `prefixItems` (+ `items: false`), not the
 * draft-07 `items: [...]` TypeBox emits for the routes' own (ajv draft-07) validation. Returns a
 * converted copy; the route's schema is never changed.
 */
export function toJsonSchema2020(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema2020);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) copy[key] = toJsonSchema2020(value);
  if (Array.isArray(copy.items)) {
    copy.prefixItems = copy.items;
    if (copy.additionalItems === false) copy.items = false;
    else delete copy.items;
    delete copy.additionalItems;
  }
  return copy;
}

/**
 * Part of @fastify/swagger's per-route transform, after documentResponses: names the operation
 * (operationId, summary) and tags a route registered without a tag.
 */
export function nameOperation(schema: Record<string, unknown>, method: string, url: string): Record<string, unknown> {
  if (schema.hide === true) return schema;
  const names = OPERATION_NAMES[`${method} ${url}`];
  const named: Record<string, unknown> = { ...schema, ...(names ?? {}) };
  if (named.tags === undefined) named.tags = [tagOf(url)];
  return named;
}

/**
 * @fastify/swagger's transformObject: adds the hand-described surfaces and makes every schema of
 * the document JSON Schema 2020-12 (OpenAPI 3.1).
 */
export function finishDocument({ openapiObject }: { openapiObject: Record<string, unknown> }): Record<string, unknown> {
  const paths = { ...(openapiObject.paths as Record<string, unknown> | undefined), ...DOCUMENT_ONLY_PATHS };
  return toJsonSchema2020({ ...openapiObject, paths }) as Record<string, unknown>;
}
