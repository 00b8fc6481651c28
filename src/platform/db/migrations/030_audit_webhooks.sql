-- Audit chain heads and checkpoints; webhook endpoints, deliveries and attempts.

-- One row per org: the serialization point of appends (SELECT ... FOR UPDATE) and the newest
-- (seq, hash). Created on the org's first append.
CREATE TABLE audit_chain_heads (
  org_id uuid PRIMARY KEY REFERENCES orgs(id) ON DELETE CASCADE,
  seq bigint NOT NULL,
  hash text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
SELECT svc_enable_rls('audit_chain_heads');

-- Signed statements of the chain head (HMAC with a key derived from SECRET_KEY). kind 'anchor'
-- marks where a retention purge cut the chain.
CREATE TABLE audit_checkpoints (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  seq bigint NOT NULL,
  hash text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('periodic', 'manual', 'purge', 'anchor')),
  created_at timestamptz NOT NULL,
  signature text NOT NULL
);
CREATE INDEX audit_checkpoints_org_seq ON audit_checkpoints (org_id, seq DESC);
SELECT svc_enable_rls('audit_checkpoints');

CREATE INDEX audit_log_org_time ON audit_log (org_id, occurred_at);

-- The application role appends and reads; only the owner (retention purge) deletes.
REVOKE UPDATE, DELETE ON audit_log FROM svc_app;
REVOKE UPDATE, DELETE ON audit_checkpoints FROM svc_app;

CREATE TABLE webhook_endpoints (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  url text NOT NULL,
  events jsonb NOT NULL,
  description text,
  secret_ciphertext text NOT NULL,
  state text NOT NULL CHECK (state IN ('active', 'paused')),
  consecutive_failures integer NOT NULL DEFAULT 0,
  paused_at timestamptz,
  paused_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_org ON webhook_endpoints (org_id);
SELECT svc_enable_rls('webhook_endpoints');

-- One row per (event, endpoint). payload is the exact body sent on every attempt.
CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  event text NOT NULL,
  payload text NOT NULL,
  state text NOT NULL CHECK (state IN ('pending', 'held', 'confirmed', 'exhausted')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  lease_until timestamptz,
  last_status integer,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
SELECT svc_enable_rls('webhook_deliveries');

CREATE TABLE webhook_attempts (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  attempt integer NOT NULL,
  started_at timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  status_code integer,
  status_class text NOT NULL CHECK (status_class IN ('2xx', '3xx', '4xx', '429', '5xx', 'timeout', 'network', 'forbidden')),
  outcome text NOT NULL CHECK (outcome IN ('confirmed', 'retry', 'exhausted')),
  error text,
  UNIQUE (delivery_id, attempt)
);
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, started_at DESC);
SELECT svc_enable_rls('webhook_attempts');
