-- AI gateway: per-org gateway settings (routing configuration, PII mode, daily USD cap),
-- org-scoped with row-level security. Usage counters live in the cache (see gateway/budget.ts).

CREATE TABLE gateway_settings (
  org_id uuid PRIMARY KEY REFERENCES orgs(id) ON DELETE CASCADE,
  -- Routing configuration resource: { strategy, providers, health_check_interval_s } or NULL.
  routing jsonb,
  pii_mode text NOT NULL DEFAULT 'redact' CHECK (pii_mode IN ('off', 'redact', 'block')),
  pii_restore boolean NOT NULL DEFAULT false,
  daily_usd_cap numeric(14, 6) CHECK (daily_usd_cap IS NULL OR daily_usd_cap >= 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);
SELECT svc_enable_rls('gateway_settings');
