-- Sign-in beyond the password: TOTP second factor (users.totp_secret, unused until now, holds
-- the secret encrypted under API_ENCRYPTION_KEY), one-time recovery codes (stored as SHA-256),
-- and an org's single sign-on connections (OIDC, SAML).
ALTER TABLE users
  -- Set when the first code confirmed the enrolment; null: TOTP is not active (pending or none).
  ADD COLUMN totp_enabled_at timestamptz,
  -- The time step of the last code accepted: a code of that step or an earlier one is refused (replay).
  ADD COLUMN totp_last_step bigint,
  -- Consecutive failed second steps, and the end of the lock-out they caused.
  ADD COLUMN totp_failures integer NOT NULL DEFAULT 0,
  ADD COLUMN totp_locked_until timestamptz;

CREATE TABLE user_recovery_codes (
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  code_hash text NOT NULL,
  used_at timestamptz,
  PRIMARY KEY (user_id, code_hash)
);
SELECT svc_enable_rls('user_recovery_codes');

-- One connection per org and kind. settings: the non-secret fields (issuer, client id, domains,
-- role; or the IdP's entity id, SSO URL and certificate); secret: the OIDC client secret, encrypted.
CREATE TABLE sso_connections (
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('oidc', 'saml')),
  settings jsonb NOT NULL,
  secret_ciphertext text,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, kind)
);
SELECT svc_enable_rls('sso_connections');
