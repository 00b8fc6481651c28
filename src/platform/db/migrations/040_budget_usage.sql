-- Daily gateway budget usage per org, kept where the cache cannot keep it (issue #14 item 9).
-- With the in-memory cache (embedded default, or PostgreSQL without Redis) the counters of
-- src/gateway/budget.ts live in process memory; they are written here as deltas about once a
-- second and at shutdown, and read back on the first budget check after a start, so a restart
-- no longer resets the day's spend. With Redis the counters live in Redis and this table is unused.
CREATE TABLE budget_usage (
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  day date NOT NULL,
  tokens bigint NOT NULL DEFAULT 0,
  micro_usd bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, day)
);
SELECT svc_enable_rls('budget_usage');
