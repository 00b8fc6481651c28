-- Compliance and privacy (issue #36): decisions' explainability notes and appeals, cached
-- explanations, grievances, the general-purpose model catalog, AI opt-outs and unlearning
-- requests. Every table is org-scoped with forced row-level security; no row names another org.

-- What a compliance officer states about one decision (EU AI Act Art. 86, GDPR Art. 22): the
-- logic involved, its significance and consequences, whether a human can review it, and whom to
-- contact. decision_id is the request_id of the decided request (docs/compliance.md).
CREATE TABLE compliance_decision_notes (
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  decision_id text NOT NULL,
  logic_involved text,
  significance text,
  human_review_available boolean,
  contact text,
  updated_at timestamptz NOT NULL DEFAULT now(),
  updated_by text NOT NULL,
  PRIMARY KEY (org_id, decision_id)
);
SELECT svc_enable_rls('compliance_decision_notes');

-- One appeal per decision: pending -> under_review -> resolved.
CREATE TABLE compliance_appeals (
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  decision_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'under_review', 'resolved')),
  reason text NOT NULL,
  contact text,
  outcome text CHECK (outcome IN ('upheld', 'overturned')),
  resolution text,
  filed_at timestamptz NOT NULL DEFAULT now(),
  filed_by text NOT NULL,
  review_started_at timestamptz,
  reviewed_by text,
  resolved_at timestamptz,
  resolved_by text,
  PRIMARY KEY (org_id, decision_id)
);
SELECT svc_enable_rls('compliance_appeals');

-- Explanations produced by POST /api/v1/ai/explain, served again by GET /api/v1/ai/explain/{id}.
CREATE TABLE compliance_explanations (
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  decision_id text NOT NULL,
  body jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id)
);
CREATE INDEX compliance_explanations_decision ON compliance_explanations (org_id, decision_id);
SELECT svc_enable_rls('compliance_explanations');

-- Grievances: submitted -> under_review -> resolved | rejected (spec, States and transitions).
CREATE TABLE compliance_grievances (
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  state text NOT NULL CHECK (state IN ('submitted', 'under_review', 'resolved', 'rejected')),
  category text NOT NULL,
  description text NOT NULL,
  contact text,
  decision_id text,
  submitted_at timestamptz NOT NULL,
  submitted_by text NOT NULL,
  acknowledge_due_at timestamptz NOT NULL,
  response_due_at timestamptz NOT NULL,
  review_started_at timestamptz,
  reviewed_by text,
  decided_at timestamptz,
  decided_by text,
  outcome text CHECK (outcome IN ('upheld', 'declined')),
  response text,
  PRIMARY KEY (org_id, id)
);
CREATE INDEX compliance_grievances_open ON compliance_grievances (state, acknowledge_due_at);
SELECT svc_enable_rls('compliance_grievances');

-- General-purpose AI models the org deploys (EU AI Act Art. 51-55).
CREATE TABLE compliance_models (
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  name text NOT NULL,
  provider text NOT NULL,
  version text NOT NULL DEFAULT '',
  training_flops double precision,
  parameters double precision,
  systemic_risk boolean NOT NULL,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  registered_at timestamptz NOT NULL DEFAULT now(),
  registered_by text NOT NULL,
  PRIMARY KEY (org_id, id),
  UNIQUE (org_id, name, version)
);
SELECT svc_enable_rls('compliance_models');

-- Opt-outs from automated decision-making (CCPA ADMT, GDPR Art. 21/22).
CREATE TABLE compliance_opt_outs (
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  subject_id text NOT NULL,
  reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  created_by text NOT NULL,
  PRIMARY KEY (org_id, subject_id)
);
SELECT svc_enable_rls('compliance_opt_outs');

-- Unlearning requests: queued -> running -> completed | failed; `steps` records each store's
-- progress so a purge interrupted half-way resumes where it stopped.
CREATE TABLE compliance_unlearning (
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  subject_id text,
  session_ids jsonb NOT NULL,
  state text NOT NULL CHECK (state IN ('queued', 'running', 'completed', 'failed')),
  requested_at timestamptz NOT NULL,
  requested_by text NOT NULL,
  due_at timestamptz NOT NULL,
  started_at timestamptz,
  completed_at timestamptz,
  steps jsonb NOT NULL DEFAULT '{}'::jsonb,
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  audit_seq bigint,
  audit_hash text,
  PRIMARY KEY (org_id, id)
);
CREATE INDEX compliance_unlearning_open ON compliance_unlearning (state) WHERE state IN ('queued', 'running');
SELECT svc_enable_rls('compliance_unlearning');

-- The threats read API filters threat_events by request and session.
CREATE INDEX IF NOT EXISTS threat_events_org_request ON threat_events (org_id, request_id);
CREATE INDEX IF NOT EXISTS threat_events_org_session ON threat_events (org_id, session_id);
-- Rows of one buffered batch were stamped with the same transaction time (now()), so their order
-- was lost; clock_timestamp() is evaluated per row, in the order the batch lists them.
ALTER TABLE threat_events ALTER COLUMN occurred_at SET DEFAULT clock_timestamp();
