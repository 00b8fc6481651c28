/**
 * Threats read API over `threat_events` (one row per scored request whose decision was log or
 * above, written by detection off the request path). Reads run under the caller's org
 * (row-level security). Pagination is by keyset over (occurred_at, id), newest first: the
 * cursor is opaque to clients (base64url of the last row's exact timestamp text and id), so a
 * page never repeats or skips a row while new events arrive.
 */
import type { Database, Queryable } from '../platform/db/index.ts';
import { SvcError } from '../platform/errors.ts';
import { isUuid } from '../platform/uuid.ts';
import type { ThreatEvent } from './threat-event.ts';

export type { ThreatEvent } from './threat-event.ts';

export const THREAT_DECISIONS = ['log', 'alert', 'challenge', 'block'] as const;

export interface ThreatFilter {
  from?: string;
  to?: string;
  decision?: string;
  category?: string;
  gatewayId?: string;
  sessionId?: string;
  pattern?: string;
  requestId?: string;
  /** Decisions one sensor sent (the self-hosted topology). */
  sensorId?: string;
  limit?: number;
  cursor?: string;
}

export interface ThreatEventWithExplanation extends ThreatEvent {
  explanation: string;
}

interface ThreatRow {
  id: string;
  request_id: string;
  occurred_at: Date;
  occurred_text: string;
  pillar: string;
  kind: string;
  threat_score: number;
  decision: string;
  patterns: Array<{ id?: unknown; name?: unknown; confidence?: unknown }>;
  session_id: string | null;
  gateway_id: string | null;
  details: Record<string, unknown>;
}

const COLUMNS = 'id::text, request_id, occurred_at, occurred_at::text AS occurred_text, pillar, kind, threat_score, decision, patterns, session_id, gateway_id, details';
const round = (value: number) => Math.round(value * 1000) / 1000;
const numberOrNull = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : null);

export function toThreatEvent(row: ThreatRow): ThreatEvent {
  // A sensor's decision keeps its own details (categories, base score, session figures) under
  // details.sensor_details, beside the collector's provenance (source, sensor_id, sensed_at).
  const sensorDetails = row.details.source === 'sensor' && typeof row.details.sensor_details === 'object' && row.details.sensor_details !== null && !Array.isArray(row.details.sensor_details) ? (row.details.sensor_details as Record<string, unknown>) : null;
  const decided = sensorDetails ?? row.details;
  const categories = Array.isArray(decided.categories) ? decided.categories.filter((item): item is string => typeof item === 'string') : [];
  return {
    id: row.id,
    request_id: row.request_id,
    occurred_at: row.occurred_at.toISOString(),
    pillar: row.pillar,
    kind: row.kind,
    threat_score: round(row.threat_score),
    decision: row.decision,
    categories,
    patterns_matched: (Array.isArray(row.patterns) ? row.patterns : []).map((pattern) => ({
      id: String(pattern.id ?? ''),
      name: String(pattern.name ?? ''),
      confidence: round(typeof pattern.confidence === 'number' ? pattern.confidence : 0),
    })),
    session_id: row.session_id,
    gateway_id: row.gateway_id,
    session_request_count: numberOrNull(decided.session_request_count),
    session_escalation_factor: numberOrNull(decided.session_escalation_factor),
    base_score: numberOrNull(decided.base_score),
    // The collector stores a sensor's finding with details.source 'sensor' and its sensor_id.
    sensor_id: row.details.source === 'sensor' && typeof row.details.sensor_id === 'string' ? row.details.sensor_id : null,
  };
}

/**
 * The explanation of a stored decision, rebuilt from its evidence (svc keeps no request content):
 * what matched with which confidence, the session escalation, and the score → decision.
 */
export function explainThreat(event: ThreatEvent): string {
  const parts: string[] = [];
  const top = [...event.patterns_matched].sort((left, right) => right.confidence - left.confidence).slice(0, 3);
  parts.push(top.length === 0 ? 'No catalogue pattern matched; the score came from other signals (classifier, behaviour, session).' : `Matched ${top.map((pattern) => `${pattern.name} (${pattern.id}, ${pattern.confidence.toFixed(2)})`).join('; ')}.`);
  if (event.categories.length > 0) parts.push(`Categories: ${event.categories.join(', ')}.`);
  if (event.session_escalation_factor !== null && event.session_escalation_factor > 1) parts.push(`Session escalation x${event.session_escalation_factor} at request ${event.session_request_count ?? '?'}.`);
  parts.push(`Threat score ${event.threat_score.toFixed(2)} → ${event.decision} (${event.kind} inspected by the ${event.pillar} pillar).`);
  return parts.join(' ');
}

const CURSOR_TIME = /^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|[+-]\d\d(?::?\d\d)?)?$/;

function encodeCursor(row: ThreatRow): string {
  return Buffer.from(JSON.stringify([row.occurred_text, row.id])).toString('base64url');
}

function decodeCursor(cursor: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string' && CURSOR_TIME.test(value[0]) && isUuid(value[1])) {
      return [value[0], value[1]];
    }
  } catch {
    // fall through to the refusal
  }
  throw new SvcError('VALIDATION_FAILED', { message: 'cursor is not one this API returned', details: { field: 'cursor', reason: 'invalid_cursor' } });
}

function instant(value: string, field: string): string {
  if (Number.isNaN(Date.parse(value))) throw new SvcError('VALIDATION_FAILED', { message: `${field} must be an ISO 8601 date-time`, details: { field, reason: 'format' } });
  return new Date(value).toISOString();
}

export const SUMMARY_BUCKETS = ['hour', 'day'] as const;
export type SummaryBucket = (typeof SUMMARY_BUCKETS)[number];
/** Most buckets one summary answers (7 days of hours, 92 days). */
export const MAX_SUMMARY_BUCKETS = { hour: 24 * 7, day: 92 } as const;

export interface ThreatSummary {
  from: string;
  to: string;
  bucket: SummaryBucket;
  buckets: Array<{ start: string; total: number; by_decision: Record<string, number>; by_pillar: Record<string, number> }>;
  totals: { total: number; by_decision: Record<string, number>; by_pillar: Record<string, number> };
}

const BUCKET_MS: Record<SummaryBucket, number> = { hour: 3_600_000, day: 86_400_000 };

/** The UTC start of the bucket holding `at`. */
function bucketStart(at: number, bucket: SummaryBucket): number {
  return Math.floor(at / BUCKET_MS[bucket]) * BUCKET_MS[bucket];
}

function emptyCounts(): Record<string, number> {
  return Object.fromEntries(THREAT_DECISIONS.map((decision) => [decision, 0]));
}

export interface Threats {
  /**
   * Counts of findings per time bucket (UTC hours or days, every bucket of the range present,
   * zeros included) by decision and by pillar: what a dashboard charts over time.
   */
  summary(orgId: string, range: { from?: string; to?: string; bucket?: SummaryBucket }): Promise<ThreatSummary>;
  list(orgId: string, filter: ThreatFilter): Promise<{ data: ThreatEvent[]; next_cursor: string | null }>;
  get(orgId: string, id: string): Promise<ThreatEventWithExplanation | null>;
  /** Every event of one request (a decision id), highest score first. */
  byRequest(tx: Queryable, requestId: string): Promise<ThreatEvent[]>;
}

export function createThreats(db: Database, flushEvidence: () => Promise<void> = async () => {}): Threats {
  return {
    async summary(orgId, range) {
      await flushEvidence();
      const bucket = range.bucket ?? 'hour';
      const to = range.to === undefined ? Date.now() : Date.parse(instant(range.to, 'to'));
      const from = range.from === undefined ? to - (bucket === 'hour' ? 24 : 30) * BUCKET_MS[bucket] : Date.parse(instant(range.from, 'from'));
      if (from > to) throw new SvcError('VALIDATION_FAILED', { message: 'from must not be after to', details: { field: 'from', reason: 'range' } });
      const first = bucketStart(from, bucket);
      const count = Math.floor((bucketStart(to, bucket) - first) / BUCKET_MS[bucket]) + 1;
      if (count > MAX_SUMMARY_BUCKETS[bucket]) {
        throw new SvcError('VALIDATION_FAILED', {
          message: `A summary spans at most ${MAX_SUMMARY_BUCKETS[bucket]} ${bucket} buckets: narrow from/to or use bucket=day.`,
          details: { field: 'from', reason: 'range', limit: MAX_SUMMARY_BUCKETS[bucket] },
        });
      }
      // Grouped by exact epoch bucket in SQL (no time-zone dependence), filled with zeros here.
      const width = BUCKET_MS[bucket] / 1000;
      const { rows } = await db.withOrg(orgId, (tx) =>
        tx.query<{ bucket: string | number; decision: string; pillar: string; count: string | number }>(
          `SELECT floor(extract(epoch FROM occurred_at) / $3)::bigint AS bucket, decision, pillar, count(*) AS count
             FROM threat_events WHERE occurred_at >= $1::timestamptz AND occurred_at < $2::timestamptz
            GROUP BY 1, 2, 3`,
          [new Date(from).toISOString(), new Date(to).toISOString(), width],
        ),
      );
      const buckets = Array.from({ length: count }, (_, index) => ({ start: new Date(first + index * BUCKET_MS[bucket]).toISOString(), total: 0, by_decision: emptyCounts(), by_pillar: {} as Record<string, number> }));
      const totals = { total: 0, by_decision: emptyCounts(), by_pillar: {} as Record<string, number> };
      for (const row of rows) {
        const index = Math.round((Number(row.bucket) * width * 1000 - first) / BUCKET_MS[bucket]);
        const target = buckets[index];
        if (target === undefined) continue;
        const n = Number(row.count);
        target.total += n;
        target.by_decision[row.decision] = (target.by_decision[row.decision] ?? 0) + n;
        target.by_pillar[row.pillar] = (target.by_pillar[row.pillar] ?? 0) + n;
        totals.total += n;
        totals.by_decision[row.decision] = (totals.by_decision[row.decision] ?? 0) + n;
        totals.by_pillar[row.pillar] = (totals.by_pillar[row.pillar] ?? 0) + n;
      }
      return { from: new Date(from).toISOString(), to: new Date(to).toISOString(), bucket, buckets, totals };
    },
    async list(orgId, filter) {
      await flushEvidence();
      const where: string[] = [];
      const values: unknown[] = [];
      const add = (clause: (placeholder: string) => string, value: unknown) => {
        values.push(value);
        where.push(clause(`$${values.length}`));
      };
      const from = filter.from === undefined ? undefined : instant(filter.from, 'from');
      const to = filter.to === undefined ? undefined : instant(filter.to, 'to');
      if (from !== undefined && to !== undefined && from > to) throw new SvcError('VALIDATION_FAILED', { message: 'from must not be after to', details: { field: 'from', reason: 'range' } });
      if (from !== undefined) add((p) => `occurred_at >= ${p}::timestamptz`, from);
      if (to !== undefined) add((p) => `occurred_at < ${p}::timestamptz`, to);
      if (filter.decision !== undefined) add((p) => `decision = ${p}`, filter.decision);
      // A sensor's decision keeps its categories under details.sensor_details (toThreatEvent).
      if (filter.category !== undefined) add((p) => `(details->'categories' @> ${p}::jsonb OR (details->>'source' = 'sensor' AND details->'sensor_details'->'categories' @> ${p}::jsonb))`, JSON.stringify([filter.category]));
      if (filter.sensorId !== undefined) add((p) => `details->>'source' = 'sensor' AND details->>'sensor_id' = ${p}`, filter.sensorId);
      if (filter.gatewayId !== undefined) add((p) => `gateway_id = ${p}`, filter.gatewayId);
      if (filter.sessionId !== undefined) add((p) => `session_id = ${p}`, filter.sessionId);
      if (filter.requestId !== undefined) add((p) => `request_id = ${p}`, filter.requestId);
      if (filter.pattern !== undefined) add((p) => `patterns @> ${p}::jsonb`, JSON.stringify([{ id: filter.pattern }]));
      if (filter.cursor !== undefined) {
        const [at, id] = decodeCursor(filter.cursor);
        values.push(at, id);
        where.push(`(occurred_at, id) < ($${values.length - 1}::timestamptz, $${values.length}::uuid)`);
      }
      const limit = Math.min(Math.max(filter.limit ?? 50, 1), 200);
      values.push(limit + 1);
      const rows = await db.withOrg(orgId, (tx) =>
        tx.query<ThreatRow>(`SELECT ${COLUMNS} FROM threat_events ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`} ORDER BY occurred_at DESC, id DESC LIMIT $${values.length}`, values),
      );
      const page = rows.rows.slice(0, limit);
      const last = page[page.length - 1];
      return { data: page.map(toThreatEvent), next_cursor: rows.rows.length > limit && last !== undefined ? encodeCursor(last) : null };
    },
    async get(orgId, id) {
      if (!isUuid(id)) return null;
      await flushEvidence();
      const rows = await db.withOrg(orgId, (tx) => tx.query<ThreatRow>(`SELECT ${COLUMNS} FROM threat_events WHERE id = $1`, [id]));
      const row = rows.rows[0];
      if (row === undefined) return null;
      const event = toThreatEvent(row);
      return { ...event, explanation: explainThreat(event) };
    },
    async byRequest(tx, requestId) {
      const rows = await tx.query<ThreatRow>(`SELECT ${COLUMNS} FROM threat_events WHERE request_id = $1 ORDER BY threat_score DESC, occurred_at DESC LIMIT 50`, [requestId]);
      return rows.rows.map(toThreatEvent);
    },
  };
}
