/**
 * The error catalogue: every error a client of /api/v1 can see, with its stable code and HTTP
 * status. Codes are UPPER_SNAKE (except the three ingest rejections the spec names in lower case:
 * sig_invalid, wire_version_unsupported, license_expired), never reused or renamed; `docs/errors.md` lists them and a test
 * keeps the two in step. Clients (and tests) rely on `code`, never on `message`.
 *
 * Body of every non-2xx answer: { "error": { "code", "message", "request_id", ...details } }.
 */

export const ERRORS = {
  // 400
  VALIDATION_FAILED: { status: 400, message: 'The request is not valid.' },
  INVALID_JSON: { status: 400, message: 'The request body is not valid JSON.' },
  MALFORMED_REQUEST: { status: 400, message: 'The HTTP request is malformed.' },
  INVALID_METHOD: { status: 400, message: "The request method is not a valid HTTP method token (RFC 9110: letters, digits and !#$%&'*+-.^_`|~ only)." },
  INVITATION_INVALID: { status: 400, message: 'The invitation link is not valid (not issued by this svc, altered, or revoked); ask for a new invitation.' },
  CERTIFICATE_REQUEST_INVALID: { status: 400, message: 'The certificate_request is not a PKCS#10 request for the Ed25519 key the sensor registers, signed by that key (details.reason).' },
  wire_version_unsupported: { status: 400, message: 'The finding is of a wire version this collector does not accept (it accepts its own, N, and N-1; details.accepted).' },
  // 401
  AUTH_MISSING: { status: 401, message: 'No credential: send Authorization: Bearer <key> or X-API-Key.' },
  AUTH_INVALID: { status: 401, message: 'The credential is not valid.' },
  AUTH_REVOKED: { status: 401, message: 'The API key has been revoked.' },
  LOGIN_FAILED: { status: 401, message: 'E-mail or password is wrong.' },
  MFA_TOKEN_INVALID: { status: 401, message: 'The mfa_token is missing, expired or not valid; sign in with the password again.' },
  MFA_CODE_INVALID: { status: 401, message: 'The TOTP code or recovery code is wrong, already used, or outside the accepted window (details.attempts_remaining).' },
  SSO_ASSERTION_INVALID: { status: 401, message: "The identity provider's answer did not verify (details.reason: signature, audience, expired, issuer, nonce, ...)." },
  SSO_REPLAYED: { status: 401, message: 'This SAML assertion was already used; sign in again at the identity provider.' },
  METRICS_TOKEN_INVALID: { status: 401, message: 'The metrics bearer token is missing or wrong.' },
  SENSOR_UNKNOWN: { status: 401, message: 'No registered sensor has this id, or it was revoked: enrol the sensor again with a new enrolment token.' },
  ENROLMENT_TOKEN_INVALID: { status: 401, message: 'The enrolment token is unknown, already used or expired: an org admin creates a new one (POST /api/v1/sensors/enrolment-tokens).' },
  // Ingest rejections, named as the spec names them (lower case, docs/sensors.md).
  sig_invalid: { status: 401, message: 'The signature does not verify against the sensor key (or the signed request is outside its time window).' },
  // 403
  SENSOR_MTLS_REQUIRED: { status: 403, message: "This collector takes sensor requests only on its mutual-TLS sensor listener (SENSOR_LISTEN); only enrolment with a one-time token is answered here." },
  SENSOR_IDENTITY_MISMATCH: { status: 403, message: "The sensor id of the request is not the one the client certificate was issued for: a sensor speaks only for itself." },
  ROLE_NOT_SERVED: { status: 403, message: "This process runs as a collector (svc serve --role collector): a pillar's traffic is served by its sensors (svc sensor --class ...), not here." },
  SCOPE_INSUFFICIENT: { status: 403, message: 'The API key scope does not allow this operation.' },
  KEY_CLASS_FORBIDDEN: { status: 403, message: 'This key class may not perform this operation.' },
  FEATURE_DISABLED: { status: 403, message: 'This feature is turned off for this deployment.' },
  PLAN_UPGRADE_REQUIRED: { status: 403, message: 'The plan in force does not include this pillar or feature, or its quota is used up (details.feature, details.plan, details.required_plan).' },
  SSO_DOMAIN_NOT_ALLOWED: { status: 403, message: "The e-mail's domain is not one the single sign-on connection may create users for, the e-mail belongs to another organization, or it is a super_admin's (who signs in with a password)." },
  PLAN_REQUIRED: { status: 403, message: 'This feature needs a higher plan (details.required_plan).' },
  TARGET_FORBIDDEN: { status: 403, message: 'The target URL points at a private, loopback or link-local address; a private deployment may allow such targets with ALLOW_PRIVATE_TARGETS=true.' },
  THREAT_BLOCKED: { status: 403, message: 'The request was blocked by the response policy.' },
  CHALLENGE_FAILED: { status: 403, message: 'The challenge answer was not accepted (wrong, expired, replayed, or for another client or gateway).' },
  GEO_BLOCKED: { status: 403, message: 'Requests from this country are blocked by a geo-blocking rule of this gateway.' },
  MCP_ORIGIN_REFUSED: { status: 403, message: 'The Origin header names a browser origin that may not call the MCP endpoints (allowed: loopback origins, MCP_ALLOWED_ORIGINS and ALLOWED_ORIGINS entries); clients that are not browsers send no Origin.' },
  MCP_HOST_REFUSED: { status: 403, message: 'The Host header is not one of the host names the MCP endpoints answer under (MCP_ALLOWED_HOSTS).' },
  ROLE_INSUFFICIENT: { status: 403, message: 'Your role does not allow this operation (details.required_role): e.g. granting, changing or removing super_admin, or changing the plan, needs a super_admin user; API keys hold no role.' },
  SESSION_REQUIRED: { status: 403, message: 'This operation is for a signed-in dashboard user; an API key cannot perform it.' },
  CSRF_TOKEN_INVALID: { status: 403, message: 'A state-changing request signed in by the session cookie must send the session CSRF token (the svc_csrf cookie) in X-CSRF-Token.' },
  PASSWORD_INCORRECT: { status: 403, message: 'The current password is wrong.' },
  license_expired: { status: 403, message: 'The licence is no longer valid: install a renewed licence file (LICENSE_FILE).' },
  SENSOR_LIMIT_REACHED: { status: 403, message: 'The plan or licence allows no more sensors (details.limit, details.source); revoke one or raise the limit.' },
  CHALLENGE_REQUIRED: { status: 403, message: 'The request scored in the challenge band: verify (CAPTCHA or second factor) before it is forwarded.' },
  SSO_PUBLIC_URL_REQUIRED: { status: 403, message: "Single sign-on is reached here under a host name svc may not trust: the operator sets PUBLIC_URL, the address users reach svc at (without it, only loopback host names are taken from the Host header)." },
  SSO_STATE_INVALID: { status: 400, message: 'The sign-in state is unknown, expired, already used, or from another browser; start the sign-in again.' },
  // 402
  UPSTREAM_QUOTA_EXCEEDED: { status: 402, message: 'The upstream provider account is out of credit or quota and no other provider could serve the request.' },
  // 404
  NOT_FOUND: { status: 404, message: 'No such resource.' },
  ROUTE_NOT_FOUND: { status: 404, message: 'No such endpoint.' },
  MODEL_NOT_FOUND: { status: 404, message: 'The model names no provider svc knows: write it as provider/model (GET /v1/models lists them), send X-SVC-Provider, or configure routing.' },
  // 405/409/413/415
  METHOD_NOT_ALLOWED: { status: 405, message: 'This method is not allowed on this endpoint; the Allow header lists those that are.' },
  REQUEST_TIMEOUT: { status: 408, message: 'The request was not received completely in time.' },
  CONFLICT: { status: 409, message: 'The resource already exists or changed meanwhile.' },
  STATE_TRANSITION_INVALID: { status: 409, message: 'The resource is not in a state that allows this move (details.state, details.allowed_moves).' },
  EMAIL_TAKEN: { status: 409, message: 'An account with this e-mail already exists.' },
  LAST_ADMIN: { status: 409, message: 'The org must keep an administrator: the last admin or super_admin can be neither removed nor demoted; make another user admin first.' },
  INVITATION_USED: { status: 409, message: 'The invitation has already been accepted; sign in instead.' },
  INVITATION_EXPIRED: { status: 410, message: 'The invitation link has expired; ask for a new invitation.' },
  TRIAL_LIMIT: { status: 409, message: 'The trial cannot be extended beyond 90 days.' },
  MCP_SESSION_EXPIRED: { status: 410, message: 'The MCP session expired (30 minutes without a heartbeat); start a new session.' },
  BODY_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  HEADERS_TOO_LARGE: { status: 431, message: 'The request headers are larger than the server accepts (16 KiB in total).' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Send the body as application/json.' },
  PII_BLOCKED: { status: 422, message: 'The request contains personal data and the org blocks such requests.' },
  VERIFICATION_BLOCKED: { status: 422, message: 'The response failed verification and the org policy blocks such responses; the verdict is in details.verification.' },
  IMAGES_NOT_SUPPORTED: { status: 422, message: 'The request carries images that the chosen provider cannot take.' },
  UPSTREAM_REJECTED: { status: 422, message: 'The upstream provider rejected the request (unknown model, context too long, invalid parameters).' },
  // 429
  RATE_LIMITED: { status: 429, message: 'Rate limit exceeded; retry after the number of seconds in Retry-After.' },
  CONCURRENCY_LIMITED: { status: 429, message: 'Too many requests in flight for this credential.' },
  MFA_LOCKED: { status: 429, message: 'Too many wrong second-step codes: TOTP sign-in is locked for a while (details.retry_after seconds).' },
  LOGIN_BLOCKED: { status: 429, message: 'Too many sign-in attempts; wait before trying again.' },
  REGISTER_BLOCKED: { status: 429, message: 'Too many registrations from this address; wait before trying again.' },
  BUDGET_EXHAUSTED: { status: 429, message: 'The org daily token budget or USD cap is used up; it resets at 00:00 UTC.' },
  // 5xx
  INTERNAL: { status: 500, message: 'Internal error.' },
  METHOD_NOT_IMPLEMENTED: { status: 501, message: "The request method is a valid token, but not one svc's HTTP parser reads; docs/apisec.md lists the methods svc forwards." },
  NO_PROVIDERS: { status: 502, message: 'No upstream provider or upstream key is configured.' },
  UPSTREAM_AUTH_FAILED: { status: 502, message: 'The upstream provider refused the configured provider key.' },
  UPSTREAM_ERROR: { status: 502, message: 'The upstream provider failed and no other provider could serve the request.' },
  EMAIL_DELIVERY_FAILED: { status: 502, message: 'The invitation e-mail could not be handed to the SMTP server (SMTP_URL); the invitation was withdrawn, try again later.' },
  SSO_PROVIDER_UNAVAILABLE: { status: 502, message: "The organization's OpenID provider could not be reached or its configuration read; retry later." },
  BACKEND_UNREACHABLE: { status: 502, message: 'The gateway backend could not be reached (connection refused, reset or not resolvable).' },
  CERTIFICATE_AUTHORITY_UNAVAILABLE: { status: 503, message: "The collector's certificate authority cannot be opened (its stored key does not open with API_ENCRYPTION_KEY, or an operator CA key file is locked or readable by others); an operator must fix it." },
  SERVICE_UNAVAILABLE: { status: 503, message: 'A dependency is unavailable; retry with backoff.' },
  UPSTREAM_UNAVAILABLE: { status: 503, message: 'Every candidate upstream provider is failing or has its circuit open; retry with backoff.' },
  BACKEND_DOWN: { status: 503, message: 'The gateway backend fails its health checks; retry with backoff.' },
  BACKEND_TIMEOUT: { status: 504, message: 'The gateway backend did not answer in time.' },
  UPSTREAM_TIMEOUT: { status: 504, message: 'The upstream provider did not answer in time.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** An error that maps to one catalogue entry. `details` are safe to show to the client. */
export class SvcError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Readonly<Record<string, unknown>> | undefined;
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(
    code: ErrorCode,
    options: { message?: string; details?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    // A client error (4xx) is an answer, not a fault: no stack trace is captured for it, which
    // made a refused request (429) several times dearer than it needs to be.
    const clientError = ERRORS[code].status < 500;
    const stackTraceLimit = Error.stackTraceLimit;
    if (clientError) Error.stackTraceLimit = 0;
    try {
      super(options.message ?? ERRORS[code].message, options.cause === undefined ? undefined : { cause: options.cause });
    } finally {
      if (clientError) Error.stackTraceLimit = stackTraceLimit;
    }
    this.name = 'SvcError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.details = options.details;
    this.headers = options.headers;
  }
}

export function errorBody(code: ErrorCode, message: string, requestId: string, details?: Readonly<Record<string, unknown>>) {
  // code, message and request_id are the contract: a detail never overrides them.
  return { error: { ...details, code, message, request_id: requestId } };
}
