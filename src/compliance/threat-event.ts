/**
 * One threat event as GET /api/v1/threats answers it (docs/compliance.md). Its own file, with no
 * imports, so the dashboard can take the type (a type-only import, erased from its bundle) instead
 * of restating it.
 */
export interface ThreatEvent {
  id: string;
  request_id: string;
  occurred_at: string;
  pillar: string;
  kind: string;
  threat_score: number;
  decision: string;
  categories: string[];
  patterns_matched: Array<{ id: string; name: string; confidence: number }>;
  session_id: string | null;
  gateway_id: string | null;
  session_request_count: number | null;
  session_escalation_factor: number | null;
  base_score: number | null;
  /** The sensor that sent the finding (self-hosted topology); null for a decision svc made itself. */
  sensor_id: string | null;
}
