-- Foundation: the application role, the row-level-security helper, accounts and the first
-- org-scoped tables. Runs identically on PostgreSQL and PGlite.

-- The non-superuser role tenant queries run as. NOLOGIN here; svc gives it a login password
-- (derived from SECRET_KEY) after migrating, unless DATABASE_APP_URL names another login.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'svc_app') THEN
    CREATE ROLE svc_app NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS;
  END IF;
END
$$;

GRANT USAGE ON SCHEMA public TO svc_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO svc_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO svc_app;

CREATE OR REPLACE FUNCTION svc_set_app_password(password text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('ALTER ROLE svc_app WITH LOGIN PASSWORD %L', password);
END
$$;
REVOKE ALL ON FUNCTION svc_set_app_password(text) FROM PUBLIC;

-- Turns on forced row-level security for an org-scoped table: svc_app sees and writes only the
-- rows of the org in app.org_id; the owner (migrations, system jobs) keeps full access.
CREATE OR REPLACE FUNCTION svc_enable_rls(target regclass, org_column text DEFAULT 'org_id') RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', target);
  EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', target);
  EXECUTE format(
    'CREATE POLICY tenant_isolation ON %s FOR ALL TO svc_app '
    'USING (%I = nullif(current_setting(''app.org_id'', true), '''')::uuid) '
    'WITH CHECK (%I = nullif(current_setting(''app.org_id'', true), '''')::uuid)',
    target, org_column, org_column);
  EXECUTE format('CREATE POLICY owner_access ON %s FOR ALL TO %I USING (true) WITH CHECK (true)', target, current_user);
END
$$;
REVOKE ALL ON FUNCTION svc_enable_rls(regclass, text) FROM PUBLIC;

CREATE TABLE orgs (
  id uuid PRIMARY KEY,
  tag text NOT NULL UNIQUE CHECK (tag ~ '^[a-z0-9]{8}$'),
  name text NOT NULL,
  plan text NOT NULL CHECK (plan IN ('community', 'starter', 'pro', 'enterprise')),
  trial_started_at timestamptz,
  trial_ends_at timestamptz,
  settings jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
SELECT svc_enable_rls('orgs', 'id');

CREATE TABLE users (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  email text NOT NULL,
  password_hash text,
  role text NOT NULL CHECK (role IN ('viewer', 'operator', 'admin', 'super_admin')),
  totp_secret text,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_login_at timestamptz
);
CREATE UNIQUE INDEX users_email_unique ON users (lower(email));
CREATE INDEX users_org ON users (org_id);
SELECT svc_enable_rls('users');

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  key_hash text NOT NULL UNIQUE,
  display text NOT NULL,
  name text,
  scope text NOT NULL CHECK (scope IN ('read', 'write', 'admin')),
  class text NOT NULL CHECK (class IN ('live', 'test', 'rstr')),
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_org ON api_keys (org_id);
SELECT svc_enable_rls('api_keys');

CREATE TABLE provider_keys (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  provider text NOT NULL,
  ciphertext text NOT NULL,
  last4 text NOT NULL,
  base_url text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, provider)
);
SELECT svc_enable_rls('provider_keys');

CREATE TABLE threat_events (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  request_id text NOT NULL,
  occurred_at timestamptz NOT NULL DEFAULT now(),
  pillar text NOT NULL,
  kind text NOT NULL,
  threat_score real NOT NULL,
  decision text NOT NULL,
  patterns jsonb NOT NULL DEFAULT '[]'::jsonb,
  session_id text,
  gateway_id text,
  details jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX threat_events_org_time ON threat_events (org_id, occurred_at DESC);
SELECT svc_enable_rls('threat_events');

CREATE TABLE audit_log (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  seq bigint NOT NULL,
  occurred_at timestamptz NOT NULL,
  actor text NOT NULL,
  action text NOT NULL,
  target text,
  outcome text NOT NULL,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  prev_hash text NOT NULL,
  hash text NOT NULL,
  UNIQUE (org_id, seq)
);
SELECT svc_enable_rls('audit_log');

CREATE TABLE mcp_sessions (
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  id text NOT NULL,
  role text,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_heartbeat_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  request_count integer NOT NULL DEFAULT 0,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  PRIMARY KEY (org_id, id)
);
SELECT svc_enable_rls('mcp_sessions');
