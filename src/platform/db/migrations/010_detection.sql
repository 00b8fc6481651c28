-- Detection: per-org response-policy thresholds (POST /api/v1/config/thresholds).
-- Order log <= alert <= challenge <= block is enforced here as well as in the API.
CREATE TABLE detection_thresholds (
  org_id uuid PRIMARY KEY REFERENCES orgs(id) ON DELETE CASCADE,
  log_threshold real NOT NULL,
  alert_threshold real NOT NULL,
  challenge_threshold real NOT NULL,
  block_threshold real NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (0 <= log_threshold AND log_threshold <= alert_threshold AND alert_threshold <= challenge_threshold
         AND challenge_threshold <= block_threshold AND block_threshold <= 1 AND block_threshold > 0)
);
SELECT svc_enable_rls('detection_thresholds');
