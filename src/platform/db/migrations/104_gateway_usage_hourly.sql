-- AI-gateway cost and tokens per org, provider, model and UTC hour, and the cost anomalies raised
-- (issue #37 item 5: the dashboard's "budgets, cost by model and anomalies, as charts"). Before
-- this, per-model cost lived only in Prometheus counters (no org) and the hourly spend only in
-- the cache (8-day expiry, no model). Settlement adds each batch's totals here (one upsert);
-- GET /api/v1/gateway/usage reads them back per hour or day.
CREATE TABLE gateway_usage_hourly (
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  hour timestamptz NOT NULL,
  provider text NOT NULL,
  model text NOT NULL,
  requests bigint NOT NULL DEFAULT 0,
  prompt_tokens bigint NOT NULL DEFAULT 0,
  completion_tokens bigint NOT NULL DEFAULT 0,
  -- at the listed price, to 1e-10 USD like the completion's cost_usd (micro-dollars would lose
  -- most of a small call); 0 for an unpriced model.
  cost_usd numeric(24, 10) NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, hour, provider, model)
);
SELECT svc_enable_rls('gateway_usage_hourly');

CREATE TABLE gateway_cost_anomalies (
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  hour timestamptz NOT NULL,
  spend_micro_usd bigint NOT NULL,
  baseline_mean_micro_usd double precision NOT NULL,
  baseline_stddev_micro_usd double precision NOT NULL,
  z_score double precision NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, hour)
);
SELECT svc_enable_rls('gateway_cost_anomalies');
