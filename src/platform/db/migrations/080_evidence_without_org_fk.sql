-- Append-only evidence tables (written on the request path: one audit entry and one provenance
-- record per completion, one threat event per finding) keep org_id without a foreign key to
-- orgs. A foreign-key check runs a lookup per inserted row: on the embedded engine it was more
-- than half of the cost of writing a row (about 90 of 145 µs), the largest single cost of a
-- completion. svc never deletes an org, so the constraint's only effect was that lookup; evidence
-- is meant to outlive anything an operator does to the org row, and row-level security still
-- confines every read and write to the session's org.
ALTER TABLE audit_log DROP CONSTRAINT IF EXISTS audit_log_org_id_fkey;
ALTER TABLE ai_provenance DROP CONSTRAINT IF EXISTS ai_provenance_org_id_fkey;
ALTER TABLE threat_events DROP CONSTRAINT IF EXISTS threat_events_org_id_fkey;
