-- Self-hosted topology (issue #38): the sensors a collector knows and the one-time enrolment
-- tokens an org admin creates for them (docs/sensors.md). Org-scoped under row-level security;
-- the wire routes look a sensor or a token up on the owner connection (no org is known before
-- the sensor is identified), then work inside withOrg.
CREATE TABLE sensor_enrolment_tokens (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  -- SHA-256 (hex) of the token text; the text is shown once and never stored.
  token_hash text NOT NULL UNIQUE,
  name text,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  sensor_id uuid
);
SELECT svc_enable_rls('sensor_enrolment_tokens');

CREATE TABLE sensors (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  name text NOT NULL,
  class text NOT NULL CHECK (class IN ('mcp', 'gateway', 'verification')),
  capabilities jsonb NOT NULL DEFAULT '[]'::jsonb,
  version text NOT NULL,
  wire_version integer NOT NULL,
  -- The sensor's Ed25519 public key: 32 bytes, base64url (its findings are verified against it).
  public_key text NOT NULL,
  registered_at timestamptz NOT NULL DEFAULT now(),
  last_registered_at timestamptz NOT NULL DEFAULT now(),
  last_heartbeat_at timestamptz,
  -- The last heartbeat's report: load, queue_depth, last_finding_at, spool.
  heartbeat jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- Configuration the collector pushes (muted_patterns, severity_threshold, paused, replay_rate).
  config jsonb NOT NULL DEFAULT '{}'::jsonb,
  config_version integer NOT NULL DEFAULT 1,
  certificate_expires_at timestamptz,
  revoked_at timestamptz,
  UNIQUE (org_id, public_key)
);
SELECT svc_enable_rls('sensors');
CREATE INDEX sensors_org ON sensors (org_id, registered_at);
