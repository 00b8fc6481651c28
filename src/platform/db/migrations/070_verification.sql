-- Verification pillar (issue #18): per-org verification policy and the AI provenance record of
-- each completion, both org-scoped with row-level security.

CREATE TABLE verification_policies (
  org_id uuid PRIMARY KEY REFERENCES orgs(id) ON DELETE CASCADE,
  -- The admin endpoint's body as saved (validated; defaults are applied on read).
  policy jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
SELECT svc_enable_rls('verification_policies');

-- One row per completion: what was delivered (content hash), by whom (provider, model), from
-- which sources (their hashes), which checks ran with which verdicts, and the audit record that
-- chains it (seq, hash). Written after the response, in the same transaction as its audit entry.
CREATE TABLE ai_provenance (
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  request_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  content_hash text NOT NULL,
  delivered boolean NOT NULL,
  provider text NOT NULL,
  model text NOT NULL,
  streamed boolean NOT NULL,
  sources jsonb NOT NULL,
  checks jsonb NOT NULL,
  passed boolean,
  action text,
  retried_from text,
  risk_class text NOT NULL,
  sb942_manifest_present boolean NOT NULL DEFAULT false,
  audit_seq bigint NOT NULL,
  audit_hash text NOT NULL,
  PRIMARY KEY (org_id, request_id)
);
SELECT svc_enable_rls('ai_provenance');
-- Evidence is appended, never edited by the application.
REVOKE UPDATE, DELETE ON ai_provenance FROM svc_app;
