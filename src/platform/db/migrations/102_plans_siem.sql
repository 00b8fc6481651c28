-- Plans and quotas (findings counted per org and month) and SIEM export (per-org sinks, each
-- with its own delivery queue of findings and its own cursor in the audit chain).

-- Findings stored per org and calendar month (UTC). Counted by the trigger below, in the same
-- transaction as the threat events themselves: a finding replayed from the evidence outbox after
-- an outage or a crash is counted when it is stored, and a replay that stores nothing new (the
-- insert skips ids already there) counts nothing. findings_dropped: log- and alert-band findings
-- not stored because the month's quota was used up (docs/accounts-plans.md).
CREATE TABLE org_usage (
  org_id uuid NOT NULL,
  month date NOT NULL,
  findings bigint NOT NULL DEFAULT 0,
  findings_dropped bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, month)
);
SELECT svc_enable_rls('org_usage');

-- A SIEM destination of an org: syslog (RFC 5424 over TCP or TLS, CEF or JSON) or an HTTP event
-- collector (Splunk HEC shape). docs/siem.md.
CREATE TABLE siem_sinks (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  name text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('syslog', 'hec')),
  transport text CHECK (transport IN ('tcp', 'tls')),
  format text NOT NULL CHECK (format IN ('cef', 'json')),
  host text,
  port integer,
  url text,
  -- HEC token, encrypted (AES-256-GCM, bound to the sink id); shown masked.
  token_ciphertext text,
  token_last4 text,
  -- TLS: extra trust anchors (PEM) and the name the certificate must carry.
  ca_pem text,
  server_name text,
  facility integer NOT NULL DEFAULT 13,
  hec_index text,
  streams jsonb NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  disabled_reason text,
  -- Audit entries are delivered in chain order: the seq of the last one delivered.
  audit_cursor bigint NOT NULL DEFAULT 0,
  delivered_findings bigint NOT NULL DEFAULT 0,
  delivered_audit bigint NOT NULL DEFAULT 0,
  consecutive_failures integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  lease_until timestamptz,
  last_error text,
  last_error_at timestamptz,
  last_delivered_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX siem_sinks_org ON siem_sinks (org_id);
SELECT svc_enable_rls('siem_sinks');

-- Findings waiting for a sink, one row per (sink, threat event); deleted once the sink took them.
CREATE TABLE siem_pending (
  seq bigserial NOT NULL,
  sink_id uuid NOT NULL REFERENCES siem_sinks(id) ON DELETE CASCADE,
  org_id uuid NOT NULL,
  event_id uuid NOT NULL,
  PRIMARY KEY (sink_id, event_id)
);
CREATE INDEX siem_pending_order ON siem_pending (sink_id, seq);
SELECT svc_enable_rls('siem_pending');

-- One statement-level trigger per insert statement (the threat-event writer inserts in batches of
-- up to 100 rows): counts the month's findings and queues each new finding for every enabled sink
-- of its org that streams findings. The transition table holds only the rows really inserted.
CREATE OR REPLACE FUNCTION svc_threat_events_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO org_usage AS u (org_id, month, findings)
  SELECT i.org_id, date_trunc('month', i.occurred_at AT TIME ZONE 'UTC')::date, count(*)
    FROM inserted i GROUP BY 1, 2
  ON CONFLICT (org_id, month) DO UPDATE SET findings = u.findings + EXCLUDED.findings;
  INSERT INTO siem_pending (sink_id, org_id, event_id)
  SELECT s.id, i.org_id, i.id
    FROM inserted i JOIN siem_sinks s ON s.org_id = i.org_id AND s.enabled AND s.streams @> '["findings"]'::jsonb
   ORDER BY i.occurred_at, i.id
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;

CREATE TRIGGER threat_events_inserted AFTER INSERT ON threat_events
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION svc_threat_events_inserted();
