-- Users and roles (issue #37): invitations by e-mail, server-side dashboard sessions, and who
-- created each API key.

-- An invitation to join an org with a role. The link carries a signed token naming the row; the
-- row makes it single-use (accepted_at) and revocable (revoked_at). token_hash: SHA-256 of the
-- token, so a row alone cannot be turned into a link.
CREATE TABLE invitations (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  email text NOT NULL,
  role text NOT NULL CHECK (role IN ('viewer', 'operator', 'admin', 'super_admin')),
  token_hash text NOT NULL,
  -- The audit actor who invited (user:<id> or api_key:<id>).
  invited_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  accepted_at timestamptz,
  accepted_user_id uuid,
  revoked_at timestamptz
);
CREATE INDEX invitations_org ON invitations (org_id, created_at);
SELECT svc_enable_rls('invitations');

-- A dashboard session (cookie or bearer token): revocable, with idle and absolute expiry. The
-- role is copied here and kept in step by a role change, so a session resolves in one query.
-- user_id has no foreign key: a removed user's sessions are revoked first, and sessions issued
-- for service users by tests and tools need no user row.
CREATE TABLE user_sessions (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  user_id uuid NOT NULL,
  role text NOT NULL CHECK (role IN ('viewer', 'operator', 'admin', 'super_admin')),
  method text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX user_sessions_user ON user_sessions (user_id);
SELECT svc_enable_rls('user_sessions');

-- Who created an API key: user:<id> or api_key:<id> (the audit actor form); null for keys made
-- with the org (org creation) or before this column existed.
ALTER TABLE api_keys ADD COLUMN created_by text;
