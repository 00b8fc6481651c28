/**
 * The collector: what network sensors talk to (docs/sensors.md). It enrols and re-registers
 * sensors, takes their heartbeats and answers with the configuration it pushes, and ingests their
 * findings in the spec's order:
 *
 *   1. verify the Ed25519 signature over the bytes received, against the sensor's key (sig_invalid)
 *   2. check the wire version — N and N−1 accepted, anything else wire_version_unsupported — and then
 *      the rest of the event (VALIDATION_FAILED)
 *   3. check the licence (license_expired)
 *   4. de-duplicate by idempotency_key for 24 hours in the shared cache (Redis when configured, so
 *      every collector replica agrees; a set-if-absent marker)
 *   5. correlate compound patterns over 5 minutes (the MCP pillar's chain correlator, keyed by the
 *      event's subject: the correlation_id), and
 *   6. persist and audit: threat_events through the detection engine's writer, mcp_sessions through
 *      the MCP pillar, audit_log through the audit chain. Ids are derived from the org and the
 *      idempotency key, so a finding persisted again (the cache lost, a retry after a failure)
 *      is skipped by the tables themselves.
 *
 * A finding whose sensor clock is more than 30 s off is accepted, and an audit warning
 * (sensor.clock_skew, at most one per sensor per minute) is written. A persistence failure clears
 * the de-duplication markers of what was not stored and answers 503, so the sensor keeps the
 * findings in its spool and sends them again; an audit group that loses a lock conflict is tried
 * again a few times first (a conflict is transient and says nothing about the findings).
 *
 * Security posture: nothing of a finding is parsed before its signature verifies; sensors are
 * identified by X-SVC-Sensor-ID, their keys read on the owner connection and cached for 5 s (a
 * revocation on another replica takes effect within that time). Every refusal is a catalogue code.
 */
import type { KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { Counter, Gauge } from 'prom-client';
import type { Plan } from '../../accounts/index.ts';
import type { AuditEntryInput, AuditLog } from '../../audit/index.ts';
import type { DetectionEngine } from '../../detection/index.ts';
import { createChainCorrelator, type CompoundFinding } from '../../mcp/index.ts';
import type { Cache } from '../../platform/cache.ts';
import { uuidFromText } from '../../platform/crypto.ts';
import type { Database } from '../../platform/db/index.ts';
import { isRetryableWriteFailure, retryingLockConflicts } from '../../platform/db/failures.ts';
import { ERRORS, SvcError, type ErrorCode } from '../../platform/errors.ts';
import type { EventBus } from '../../platform/events.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Metrics } from '../../platform/metrics.ts';
import { CertificateError, certificateRequestKey, type CertificateAuthority } from '../certificates.ts';
import type { LicenceGate, LicenceState } from '../licence.ts';
import { sensorsAllowedByPlan } from '../limits.ts';
import {
  checkFinding,
  CLOCK_SKEW_MS,
  DEDUPLICATION_MS,
  HEARTBEAT_INTERVAL_S,
  parseVerified,
  publicKeyFromText,
  REQUEST_WINDOW_MS,
  requestSigningText,
  verifySignature,
  WIRE_VERSION,
  wireVersionStanding,
  type FindingEvent,
} from '../wire.ts';
import { forwardedGatewayEvent, GATEWAY_EVENT_KIND, type ForwardedGatewayEvent, type GatewayContextDirective, type GatewayContexts, type GatewayUsageReport } from './gateway-context.ts';
import { heldDefinitionOf, type McpSensorContext, type SensorHeldDefinition } from './mcp-context.ts';
import { createSensorStore, type HeartbeatReport, type RegistrationInput, type SensorConfig, type SensorRecord } from './store.ts';
import { entryBound } from '../../platform/lru.ts';

export interface CollectorDeps {
  readonly db: Database;
  readonly cache: Cache;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly audit: AuditLog;
  readonly detection: Pick<DetectionEngine, 'recordEvent'>;
  readonly mcp: {
    recordSensorSession(orgId: string, input: { id: string; server_id: string; mcp_session_id: string | null; role: string }): Promise<void>;
    /** A definition an MCP sensor held, stored for approval (absent: not stored). */
    recordSensorDefinition?(orgId: string, input: SensorHeldDefinition & { server_id: string }): Promise<boolean>;
  };
  /** What an MCP sensor serves from (mcp-context.ts); absent: mcp sensors get none. */
  readonly mcpContext?: (orgId: string) => Promise<McpSensorContext>;
  readonly events: EventBus;
  readonly licence: LicenceGate;
  /** The org's effective plan (its sensor limit applies when no licence is installed). */
  readonly planOf: (orgId: string) => Promise<Plan>;
  /**
   * The CA that issues sensors their 24-hour certificates (opened on first use from
   * DATA_DIR/sensor-ca by services.ts). Without it a certificate_request is refused.
   */
  readonly certificateAuthority?: () => Promise<CertificateAuthority>;
  /** The gateway context of gateway sensors (gateway-context.ts); without it they get none. */
  readonly gatewayContexts?: GatewayContexts;
  /** Clock (tests move it). */
  readonly now?: () => number;
  /** The wire version this collector speaks (tests set another to check N−1). */
  readonly wireVersion?: number;
}

/** One signed finding as received: its bytes and signature. */
export interface SignedItem {
  readonly bytes: Buffer;
  readonly signature: string;
}

export type FindingResult =
  | { readonly status: 'accepted' | 'duplicate'; readonly id: string; readonly idempotency_key: string; readonly clock_skew_ms?: number }
  | { readonly status: 'rejected'; readonly error: { readonly code: ErrorCode; readonly message: string } & Readonly<Record<string, unknown>> };

export type SensorState = 'healthy' | 'stale' | 'paused' | 'spooling';

export interface SensorView {
  readonly id: string;
  readonly name: string;
  readonly class: SensorRecord['class'];
  readonly state: SensorState;
  readonly capabilities: readonly string[];
  readonly version: string;
  readonly wire_version: number;
  readonly public_key: string;
  readonly registered_at: string;
  readonly last_registered_at: string;
  readonly last_heartbeat_at: string | null;
  readonly load: number | null;
  readonly queue_depth: number | null;
  readonly last_finding_at: string | null;
  readonly spool_depth: number | null;
  readonly config: SensorConfig;
  readonly config_version: number;
  readonly certificate_expires_at: string | null;
  readonly revoked_at: string | null;
}

/** What the collector answers on registration, heartbeat and configuration pull. */
export interface SensorDirective {
  readonly sensor_id: string;
  readonly config: SensorConfig;
  readonly config_version: number;
  readonly heartbeat_interval_s: number;
  readonly wire_version: number;
  readonly accepted_wire_versions: readonly number[];
  readonly licence: { readonly state: LicenceState['state']; readonly expires_at: string | null };
  /** Gateway sensors only: the gateway context's etag, and on GET /sensors/{id}/config the context sealed to the sensor's key. */
  readonly gateway?: GatewayContextDirective;
  /** MCP sensors: their context (registration and configuration pull) … */
  readonly mcp?: McpSensorContext;
  /** … and its version (every answer, heartbeats included: the sensor pulls when it moved). */
  readonly mcp_context_version?: string;
}

/** A certificate the CA issued a sensor, as registration answers it. */
export interface SensorCertificate {
  readonly certificate_pem: string;
  readonly ca_certificate_pem: string;
  readonly serial_number: string;
  readonly expires_at: string;
}

/** A sensor silent for this long is stale (three heartbeat intervals). */
export const STALE_AFTER_MS = 3 * HEARTBEAT_INTERVAL_S * 1000;
const SENSOR_CACHE_MS = 5_000;
const SKEW_AUDIT_EVERY_MS = 60_000;
const MAX_SKEW_REPORTED_MS = 10 * 365 * 86_400_000;

interface CachedSensor {
  readonly record: SensorRecord;
  readonly key: KeyObject;
  readonly at: number;
}

export function createCollector(deps: CollectorDeps) {
  const clock = deps.now ?? Date.now;
  const current = deps.wireVersion ?? WIRE_VERSION;
  const accepted = current > 1 ? [current - 1, current] : [current];
  const store = createSensorStore(deps.db);
  const chains = createChainCorrelator(deps.cache);
  const sensors = new LRUCache<string, CachedSensor>(entryBound(10_000));
  const unknown = new LRUCache<string, number>(entryBound(10_000));
  const metrics = registerMetrics(deps);

  const reject = (code: ErrorCode, details: Record<string, unknown> = {}): FindingResult => {
    metrics.rejections.inc({ code });
    return { status: 'rejected', error: { ...details, code, message: ERRORS[code].message } };
  };

  /** The sensor and its key; SENSOR_UNKNOWN for an unknown or revoked id. */
  async function sensorFor(id: string): Promise<CachedSensor> {
    const now = clock();
    const cached = sensors.get(id);
    if (cached !== undefined && now - cached.at < SENSOR_CACHE_MS) return cached;
    const unknownSince = unknown.get(id);
    const record = unknownSince !== undefined && now - unknownSince < SENSOR_CACHE_MS ? null : await store.find(id);
    const key = record === null ? null : publicKeyFromText(record.public_key);
    if (record === null || record.revoked_at !== null || key === null) {
      sensors.delete(id);
      // A flood of made-up or revoked ids costs one lookup per id per 5 s, not one per request.
      if (unknownSince === undefined || now - unknownSince >= SENSOR_CACHE_MS) unknown.set(id, now);
      metrics.rejections.inc({ code: 'SENSOR_UNKNOWN' });
      throw new SvcError('SENSOR_UNKNOWN', { details: { sensor_id: id.slice(0, 64) } });
    }
    unknown.delete(id);
    const entry = { record, key, at: now };
    sensors.set(id, entry);
    return entry;
  }

  /** Verifies a signed request (heartbeat, configuration pull, re-registration) and returns its sensor. */
  async function authenticate(request: { sensorId: string | undefined; signature: string | undefined; timestamp: string | undefined; method: string; path: string; body: Buffer }): Promise<SensorRecord> {
    if (request.sensorId === undefined || request.signature === undefined || request.timestamp === undefined) {
      metrics.rejections.inc({ code: 'sig_invalid' });
      throw new SvcError('sig_invalid', { details: { reason: 'missing_headers', required: ['X-SVC-Sensor-ID', 'X-SVC-Timestamp', 'X-SVC-Signature'] } });
    }
    const sensor = await sensorFor(request.sensorId);
    const sent = Number(request.timestamp);
    if (!Number.isInteger(sent) || Math.abs(sent - clock()) > REQUEST_WINDOW_MS) {
      metrics.rejections.inc({ code: 'sig_invalid' });
      throw new SvcError('sig_invalid', { details: { reason: 'timestamp_outside_window', window_ms: REQUEST_WINDOW_MS } });
    }
    if (!verifySignature(requestSigningText(request.method, request.path, request.timestamp, request.body), request.signature, sensor.key)) {
      metrics.rejections.inc({ code: 'sig_invalid' });
      throw new SvcError('sig_invalid', { details: { reason: 'signature' } });
    }
    // Each signed request is accepted once: its signature (Ed25519 is deterministic, and the signed
    // text holds the timestamp) is remembered in the shared cache for as long as the window could
    // accept it again, so a captured request replayed on this or another replica is refused.
    if (!(await deps.cache.setIfAbsent(`${deps.cache.prefix}sensors:request:${sensor.record.id}:${request.signature}`, '1', 2 * REQUEST_WINDOW_MS + 1_000))) {
      metrics.rejections.inc({ code: 'sig_invalid' });
      throw new SvcError('sig_invalid', { details: { reason: 'replayed' } });
    }
    return sensor.record;
  }

  function licenceSummary(): SensorDirective['licence'] {
    const state = deps.licence.current(clock());
    return { state: state.state, expires_at: state.state === 'none' ? null : state.licence.expires_at };
  }

  function directive(sensor: SensorRecord): SensorDirective {
    return { sensor_id: sensor.id, config: sensor.config, config_version: sensor.config_version, heartbeat_interval_s: HEARTBEAT_INTERVAL_S, wire_version: current, accepted_wire_versions: accepted, licence: licenceSummary() };
  }

  /**
   * The directive with the sensor's class context: a gateway sensor's context etag, and on a
   * configuration pull the context sealed to its key; an mcp sensor's context version, and its
   * whole context on registration and configuration pull.
   */
  async function directiveFor(sensor: SensorRecord, answer: 'registration' | 'heartbeat' | 'config'): Promise<SensorDirective> {
    const base = directive(sensor);
    if (sensor.class === 'gateway' && deps.gatewayContexts !== undefined) {
      const gateway = await deps.gatewayContexts.directive(sensor, answer === 'config');
      return gateway === null ? base : { ...base, gateway };
    }
    if (sensor.class === 'mcp' && deps.mcpContext !== undefined) {
      const context = await deps.mcpContext(sensor.org_id);
      return answer === 'heartbeat' ? { ...base, mcp_context_version: context.version } : { ...base, mcp: context, mcp_context_version: context.version };
    }
    return base;
  }

  function checkRegistrationVersion(version: number): void {
    if (wireVersionStanding(version, current) !== 'accepted') {
      metrics.rejections.inc({ code: 'wire_version_unsupported' });
      throw new SvcError('wire_version_unsupported', { details: { received: version, accepted } });
    }
  }

  function checkLicence(): void {
    try {
      deps.licence.check(clock());
    } catch (error) {
      if (error instanceof SvcError) metrics.rejections.inc({ code: error.code });
      throw error;
    }
  }

  /** The sensor limit of an org: the licence's when one is installed, else its plan's (0 = unlimited). */
  async function limitOf(orgId: string): Promise<{ limit: number; source: 'licence' | 'plan'; plan: Plan }> {
    const state = deps.licence.current(clock());
    if (state.state !== 'none') return { limit: state.licence.sensors, source: 'licence', plan: state.licence.plan };
    const plan = await deps.planOf(orgId);
    return { limit: sensorsAllowedByPlan(plan), source: 'plan', plan };
  }

  // Group commit of findings' audit entries, per org: while one appendMany holds the org's chain
  // head, the entries of requests arriving meanwhile gather and go in the next one (one lock and
  // one transaction for all of them). Each request still waits for its own entries' commit.
  // There is no outbox here: a group that loses a lock conflict is tried again a few times
  // (retryingLockConflicts), and a conflict that persists, like an outage, rejects the waiting
  // requests, which answer 503 so that the sensors keep their findings and send them again.
  const auditGroups = new Map<string, { entries: AuditEntryInput[]; waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> }>();
  const auditRunning = new Set<string>();
  async function drainAudit(orgId: string): Promise<void> {
    auditRunning.add(orgId);
    try {
      for (let group = auditGroups.get(orgId); group !== undefined; group = auditGroups.get(orgId)) {
        auditGroups.delete(orgId);
        const { entries, waiters } = group;
        try {
          await retryingLockConflicts(() => deps.audit.appendMany(orgId, entries));
          for (const waiter of waiters) waiter.resolve();
        } catch (error) {
          if (isRetryableWriteFailure(error)) {
            for (const waiter of waiters) waiter.reject(error);
            continue;
          }
          // One entry the chain refuses must not fail the others gathered with it: each alone,
          // the refused one logged (its finding is stored in threat_events all the same). An
          // entry that meets an outage or keeps losing lock conflicts is not refused: the
          // requests are rejected and their findings sent again (the chain skips ids it holds).
          try {
            for (const entry of entries) {
              await retryingLockConflicts(() => deps.audit.append(orgId, entry)).catch((entryError: unknown) => {
                if (isRetryableWriteFailure(entryError)) throw entryError;
                deps.logger.error({ org_id: orgId, action: entry.action, code: (entryError as { code?: string }).code ?? 'unknown' }, 'sensor audit entry refused by the audit chain');
              });
            }
            for (const waiter of waiters) waiter.resolve();
          } catch (retryable) {
            for (const waiter of waiters) waiter.reject(retryable);
          }
        }
      }
    } finally {
      auditRunning.delete(orgId);
    }
  }
  function audit(orgId: string, entries: readonly AuditEntryInput[]): Promise<void> {
    if (entries.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      let group = auditGroups.get(orgId);
      if (group === undefined) auditGroups.set(orgId, (group = { entries: [], waiters: [] }));
      group.entries.push(...entries);
      group.waiters.push({ resolve, reject });
      if (!auditRunning.has(orgId)) void drainAudit(orgId);
    });
  }

  /** Steps 1–3 for one item: a verified, valid finding or the rejection. */
  function admit(sensor: CachedSensor, item: SignedItem): FindingEvent | FindingResult {
    if (!verifySignature(item.bytes, item.signature, sensor.key)) return reject('sig_invalid', { reason: 'signature' });
    const parsed = parseVerified(item.bytes);
    if (parsed === null) return reject('VALIDATION_FAILED', { field: 'body', reason: 'not_a_json_object' });
    const standing = wireVersionStanding(parsed.wireversion, current);
    if (standing === 'invalid') return reject('VALIDATION_FAILED', { field: 'wireversion', reason: 'required' });
    if (standing !== 'accepted') return reject('wire_version_unsupported', { received: parsed.wireversion, accepted });
    const checked = checkFinding(item.bytes, parsed, sensor.record.id);
    if ('reason' in checked) return reject('VALIDATION_FAILED', { field: checked.field, reason: checked.reason });
    const state = deps.licence.current(clock());
    if (state.state === 'expired') return reject('license_expired', { expired_at: state.licence.expires_at });
    return checked;
  }

  const dedupeKey = (orgId: string, idempotencyKey: string) => `${deps.cache.prefix}sensors:dedupe:${orgId}:${idempotencyKey}`;
  /** The de-duplication marker while its finding is being stored, and how long that claim holds. */
  const CLAIMED = 'claimed';
  const CLAIM_MS = 30_000;

  /**
   * Ingests signed findings of one sensor (POST /findings: one item; /findings/batch: up to 100),
   * answering a result per item in order. Throws SENSOR_UNKNOWN for the whole request, and
   * SERVICE_UNAVAILABLE when what passed could not be persisted (nothing of it is marked seen).
   */
  async function ingest(sensorId: string, items: readonly SignedItem[], options: { sentAt?: number } = {}): Promise<FindingResult[]> {
    const sensor = await sensorFor(sensorId);
    const orgId = sensor.record.org_id;
    const now = clock();
    const results: FindingResult[] = new Array<FindingResult>(items.length);
    const admitted: { index: number; event: FindingEvent }[] = [];
    items.forEach((item, index) => {
      const outcome = admit(sensor, item);
      if ('status' in outcome) results[index] = outcome;
      else admitted.push({ index, event: outcome });
    });

    // 4. De-duplication: the first to set the marker owns the finding (on any replica). The marker
    // says "being stored" until the finding is persisted and only then "stored" (the finding's id):
    // a collector killed in between leaves a claim that expires, so the sensor's resend (it got no
    // answer) is stored then instead of being called a duplicate of a finding nobody stored.
    const fresh: { index: number; event: FindingEvent; id: string; skewMs: number }[] = [];
    await Promise.all(
      admitted.map(async ({ index, event }) => {
        const id = uuidFromText(`sensor-finding:${orgId}:${event.idempotencykey}`);
        const key = dedupeKey(orgId, event.idempotencykey);
        const first = await deps.cache.setIfAbsent(key, CLAIMED, CLAIM_MS);
        if (!first) {
          if ((await deps.cache.get(key)) === CLAIMED) {
            // Another request (or a collector that died) holds the claim: keep it and send it again.
            results[index] = reject('SERVICE_UNAVAILABLE', { reason: 'being_stored' });
            return;
          }
          results[index] = { status: 'duplicate', id, idempotency_key: event.idempotencykey };
          metrics.findings.inc({ outcome: 'duplicate' });
          return;
        }
        // The sensor's clock: what it says it is now (X-SVC-Timestamp), else the finding's time.
        // Clamped to ±10 years: the header is not signed, and no number may break the audit entry.
        const skewMs = Math.max(-MAX_SKEW_REPORTED_MS, Math.min(MAX_SKEW_REPORTED_MS, options.sentAt !== undefined ? options.sentAt - now : Date.parse(event.time) - now));
        fresh.push({ index, event, id, skewMs });
      }),
    );
    if (fresh.length === 0) return results;
    fresh.sort((left, right) => left.index - right.index);

    try {
      await persist(sensor.record, fresh, now);
    } catch (error) {
      await Promise.all(fresh.map(({ event }) => deps.cache.del(dedupeKey(orgId, event.idempotencykey)).catch(() => undefined)));
      deps.logger.error({ err: error, sensor_id: sensor.record.id, findings: fresh.length }, 'sensor findings not persisted; the sensor keeps them and sends them again');
      metrics.rejections.inc({ code: 'SERVICE_UNAVAILABLE' }, fresh.length);
      throw new SvcError('SERVICE_UNAVAILABLE', { message: 'The findings could not be stored; keep them and send them again.', cause: error });
    }
    // Stored: the claim becomes the finding's id for the de-duplication window. A cache that fails
    // here leaves the claim to expire, and a resend is then stored again under the same ids
    // (threat event and audit entry are keyed by them: no second row).
    await Promise.all(fresh.map(({ event, id }) => deps.cache.set(dedupeKey(orgId, event.idempotencykey), id, DEDUPLICATION_MS).catch(() => undefined)));
    for (const { index, event, id, skewMs } of fresh) {
      results[index] = { status: 'accepted', id, idempotency_key: event.idempotencykey, ...(Math.abs(skewMs) > CLOCK_SKEW_MS ? { clock_skew_ms: skewMs } : {}) };
    }
    metrics.findings.inc({ outcome: 'accepted' }, fresh.length);
    return results;
  }

  /** Steps 5–6: correlation, then threat_events, mcp_sessions and the audit chain (and webhooks). */
  async function persist(sensor: SensorRecord, fresh: readonly { event: FindingEvent; id: string; skewMs: number }[], now: number): Promise<void> {
    const orgId = sensor.org_id;
    const entries: AuditEntryInput[] = [];
    const rows: Promise<boolean>[] = [];
    const skewed = fresh.filter(({ skewMs }) => Math.abs(skewMs) > CLOCK_SKEW_MS);
    if (skewed.length > 0 && (await deps.cache.setIfAbsent(`${deps.cache.prefix}sensors:skew:${sensor.id}`, '1', SKEW_AUDIT_EVERY_MS).catch(() => true))) {
      const worst = skewed.reduce((most, item) => (Math.abs(item.skewMs) > Math.abs(most) ? item.skewMs : most), 0);
      entries.push({
        id: uuidFromText(`sensor-skew:${orgId}:${skewed[0]!.event.idempotencykey}`),
        actor: `sensor:${sensor.id}`,
        action: 'sensor.clock_skew',
        target: sensor.id,
        outcome: 'warning',
        details: { skew_ms: worst, tolerance_ms: CLOCK_SKEW_MS, findings: skewed.length, sensor_name: sensor.name },
      });
    }
    const gatewayEvents: { event: ForwardedGatewayEvent; data: Record<string, string | number> }[] = [];
    for (const { event, id, skewMs } of fresh) {
      const data = event.data;
      // A gateway sensor's event for the org's webhooks (budget.warning, cost.anomaly,
      // gateway.down): delivered once persisted, as `svc serve` delivers it; no threat event, no audit entry.
      if (data.pillar === 'gateway' && data.kind === GATEWAY_EVENT_KIND) {
        const forwarded = sensor.class === 'gateway' ? forwardedGatewayEvent(data.details) : null;
        if (forwarded === null) deps.logger.warn({ sensor_id: sensor.id, class: sensor.class, idempotency_key: event.idempotencykey }, 'a gateway event finding names no event this collector delivers; ignored');
        else gatewayEvents.push(forwarded);
        continue;
      }
      const compounds: CompoundFinding[] = data.facts === undefined || data.facts.length === 0 ? [] : await chains.observe(orgId, event.subject, data.facts.map((fact) => ({ ...fact })), now);
      const sessionId = data.session_id ?? null;
      // An MCP sensor's facts of a session (no pattern of its own): correlated and the session
      // recorded, not a threat event or an audit entry of its own.
      const factsOnly = data.kind === 'mcp_facts' && data.patterns.length === 0;
      if (!factsOnly) rows.push(
        deps.detection.recordEvent({
          id,
          orgId,
          requestId: data.request_id,
          pillar: data.pillar,
          kind: data.kind,
          threatScore: data.threat_score,
          decision: data.decision,
          patterns: data.patterns,
          sessionId,
          gatewayId: data.gateway_id ?? null,
          details: {
            source: 'sensor', sensor_id: sensor.id, severity: data.severity, correlation_id: event.subject, idempotency_key: event.idempotencykey,
            sensed_at: event.time, ...(data.parse_error === true ? { parse_error: true } : {}), ...(data.details === undefined ? {} : { sensor_details: data.details }),
          },
        }),
      );
      if (!factsOnly) entries.push({
        id: uuidFromText(`sensor-finding-audit:${orgId}:${event.idempotencykey}`),
        actor: `sensor:${sensor.id}`,
        action: 'sensor.finding',
        target: data.request_id,
        outcome: data.decision,
        details: {
          threat_event_id: id, event_id: event.id, correlation_id: event.subject, idempotency_key: event.idempotencykey, pillar: data.pillar, kind: data.kind, severity: data.severity,
          threat_score: data.threat_score, session_id: sessionId, sensed_at: event.time,
          // Bounded, so that no finding's entry can exceed the audit chain's 16 KiB of details.
          pattern_ids: data.patterns.slice(0, 16).map((pattern) => pattern.id.slice(0, 64)), pattern_count: data.patterns.length,
          ...(Math.abs(skewMs) > CLOCK_SKEW_MS ? { clock_skew_ms: skewMs } : {}), ...(data.parse_error === true ? { parse_error: true } : {}),
        },
      });
      for (const compound of compounds) {
        const compoundId = uuidFromText(`sensor-compound:${orgId}:${event.subject}:${compound.id}:${event.idempotencykey}`);
        rows.push(
          deps.detection.recordEvent({
            id: compoundId, orgId, requestId: data.request_id, pillar: data.pillar, kind: 'compound', threatScore: 0.6, decision: 'alert',
            patterns: [{ id: compound.id, name: compound.name, confidence: 1 }], sessionId, gatewayId: data.gateway_id ?? null,
            details: { source: 'sensor', sensor_id: sensor.id, correlation_id: event.subject, composed_of: compound.composed_of },
          }),
        );
        entries.push({ id: uuidFromText(`sensor-compound-audit:${compoundId}`), actor: `sensor:${sensor.id}`, action: 'sensor.compound', target: compound.id, outcome: 'flagged', details: { threat_event_id: compoundId, correlation_id: event.subject, session_id: sessionId, name: compound.name, composed_of: compound.composed_of } });
      }
      if (data.pillar === 'mcp' && data.mcp !== undefined && sessionId !== null) {
        await deps.mcp.recordSensorSession(orgId, { id: sessionId, server_id: data.mcp.server_id, mcp_session_id: data.mcp.mcp_session_id ?? null, role: data.mcp.role ?? 'viewer' });
      }
      const held = data.pillar === 'mcp' && data.kind === 'tool_definition' ? heldDefinitionOf(data.details) : null;
      if (held !== null && data.mcp !== undefined && deps.mcp.recordSensorDefinition !== undefined) {
        await deps.mcp.recordSensorDefinition(orgId, { ...held, server_id: data.mcp.server_id });
      }
    }
    await Promise.all(rows);
    await audit(orgId, entries);
    for (const forwarded of gatewayEvents) await deps.gatewayContexts?.recordEvent(orgId, forwarded);
    for (const { event, data } of gatewayEvents) void deps.events.emit(orgId, event, data, { gatewayId: 'ai_gateway' });
    for (const { event } of fresh) {
      const data = event.data;
      if (data.decision !== 'block' && data.decision !== 'alert') continue;
      void deps.events.emit(orgId, data.decision === 'block' ? 'threat.blocked' : 'threat.alert', {
        request_id: data.request_id, threat_score: data.threat_score, decision: data.decision, pattern_ids: data.patterns.map((pattern) => pattern.id),
        session_id: data.session_id ?? '', session_request_count: 0, session_escalation_factor: 1, source_ip: '', method: '', path: '', user_agent: '', sensor_id: sensor.id,
      }, { gatewayId: data.gateway_id ?? null });
    }
  }

  function stateOf(sensor: SensorRecord, now: number): SensorState {
    if (sensor.config.paused) return 'paused';
    const lastSeen = Date.parse(sensor.last_heartbeat_at ?? sensor.last_registered_at);
    if (now - lastSeen > STALE_AFTER_MS) return 'stale';
    if ((sensor.heartbeat.spool?.depth ?? 0) > 0 || sensor.heartbeat.spool?.replaying === true) return 'spooling';
    return 'healthy';
  }

  function view(sensor: SensorRecord, now = clock()): SensorView {
    return {
      id: sensor.id,
      name: sensor.name,
      class: sensor.class,
      state: stateOf(sensor, now),
      capabilities: sensor.capabilities,
      version: sensor.version,
      wire_version: sensor.wire_version,
      public_key: sensor.public_key,
      registered_at: sensor.registered_at,
      last_registered_at: sensor.last_registered_at,
      last_heartbeat_at: sensor.last_heartbeat_at,
      load: sensor.heartbeat.load ?? null,
      queue_depth: sensor.heartbeat.queue_depth ?? null,
      last_finding_at: sensor.heartbeat.last_finding_at ?? null,
      spool_depth: sensor.heartbeat.spool?.depth ?? null,
      config: sensor.config,
      config_version: sensor.config_version,
      certificate_expires_at: sensor.certificate_expires_at,
      revoked_at: sensor.revoked_at,
    };
  }

  async function openAuthority(): Promise<CertificateAuthority> {
    if (deps.certificateAuthority === undefined) throw new SvcError('CERTIFICATE_AUTHORITY_UNAVAILABLE', { details: { reason: 'not_configured' } });
    try {
      return await deps.certificateAuthority();
    } catch (error) {
      if (error instanceof CertificateError) throw new SvcError('CERTIFICATE_AUTHORITY_UNAVAILABLE', { details: { reason: error.code } });
      throw error;
    }
  }

  /** Checks a PKCS#10 request before anything is enrolled: well formed, signed, and for the key the sensor registers. */
  async function checkCertificateRequest(requestPem: string, publicKey: string): Promise<void> {
    await openAuthority();
    let requested: Buffer;
    try {
      requested = await certificateRequestKey(requestPem);
    } catch (error) {
      if (error instanceof CertificateError) throw new SvcError('CERTIFICATE_REQUEST_INVALID', { details: { field: 'body.certificate_request', reason: 'malformed' } });
      throw error;
    }
    const registered = publicKeyFromText(publicKey)?.export({ format: 'der', type: 'spki' });
    if (registered === undefined || !registered.equals(requested)) throw new SvcError('CERTIFICATE_REQUEST_INVALID', { details: { field: 'body.certificate_request', reason: 'key_mismatch' } });
  }

  /**
   * Issues a 24-hour certificate for a sensor whose key the request was checked against. The
   * registration (enrolment token, or a request signed by the sensor's key) is the proof; the CA's
   * own one-time token is minted for this issue only, so the CA keeps choosing the subject.
   */
  async function issueCertificate(sensor: SensorRecord, requestPem: string): Promise<SensorCertificate> {
    const authority = await openAuthority();
    let issued;
    try {
      const { token } = await authority.issueEnrolmentToken({ sensorId: sensor.id, ttlMs: 60_000 });
      issued = await authority.enrol(token, requestPem);
    } catch (error) {
      if (error instanceof CertificateError) {
        throw error.code === 'CERTIFICATE_REQUEST_INVALID'
          ? new SvcError('CERTIFICATE_REQUEST_INVALID', { details: { field: 'body.certificate_request', reason: 'malformed' } })
          : new SvcError('CERTIFICATE_AUTHORITY_UNAVAILABLE', { details: { reason: error.code } });
      }
      throw error;
    }
    await store.setCertificateExpiry(sensor.id, issued.notAfter);
    await deps.audit.append(sensor.org_id, { actor: `sensor:${sensor.id}`, action: 'sensor.certificate.issued', target: sensor.id, outcome: 'success', details: { serial_number: issued.serialNumber, expires_at: issued.notAfter.toISOString() } });
    return { certificate_pem: issued.certificatePem, ca_certificate_pem: issued.caCertificatePem, serial_number: issued.serialNumber, expires_at: issued.notAfter.toISOString() };
  }

  async function mustGet(orgId: string, id: string): Promise<SensorRecord> {
    const sensor = await store.get(orgId, id);
    if (sensor === null) throw new SvcError('NOT_FOUND', { details: { resource: 'sensor', id: id.slice(0, 64) } });
    return sensor;
  }

  // A write with a single audit entry (enrolment token, registration, spool-drop heartbeat,
  // configuration, revocation) appends the entry in the write's own transaction (the store's
  // `within`): both are stored or neither. The transaction runs under retryingLockConflicts: a lost
  // lock conflict rolls both back and the whole is tried again; one that persists, or an outage,
  // reaches the request (503) with nothing written, so the client's retry writes it once.
  return {
    ingest,
    authenticate,
    /** POST /sensors/register with an enrolment token: the first registration of a sensor. */
    async enrol(token: string, input: RegistrationInput, certificateRequest?: string): Promise<{ directive: SensorDirective; created: boolean; orgId: string; certificate?: SensorCertificate }> {
      checkRegistrationVersion(input.wire_version);
      checkLicence();
      if (publicKeyFromText(input.public_key) === null) throw new SvcError('VALIDATION_FAILED', { details: { field: 'body.public_key', reason: 'not_an_ed25519_key' } });
      // Checked before the token is spent: a bad request enrols nothing.
      if (certificateRequest !== undefined) await checkCertificateRequest(certificateRequest, input.public_key);
      const orgId = await store.tokenOrg(token);
      if (orgId === null) throw new SvcError('ENROLMENT_TOKEN_INVALID');
      const limit = await limitOf(orgId);
      const outcome = await retryingLockConflicts(() =>
        store.enrol(
          orgId,
          token,
          input,
          (registered) => {
            if (limit.limit > 0 && registered >= limit.limit) {
              metrics.rejections.inc({ code: 'SENSOR_LIMIT_REACHED' });
              throw new SvcError('SENSOR_LIMIT_REACHED', { details: { limit: limit.limit, registered, source: limit.source, plan: limit.plan } });
            }
          },
          (tx, { sensor, created }) => deps.audit.append(orgId, { actor: `sensor:${sensor.id}`, action: created ? 'sensor.enrolled' : 'sensor.registered', target: sensor.id, outcome: 'success', details: registrationDetails(sensor) }, { tx }),
        ),
      );
      if (outcome === 'token_invalid') throw new SvcError('ENROLMENT_TOKEN_INVALID');
      const { sensor, created } = outcome;
      sensors.delete(sensor.id);
      const certificate = certificateRequest === undefined ? undefined : await issueCertificate(sensor, certificateRequest);
      return { directive: await directiveFor(sensor, 'registration'), created, orgId, ...(certificate === undefined ? {} : { certificate }) };
    },
    /** POST /sensors/register signed by an enrolled sensor: its boot (version and capabilities brought up to date). */
    async reregister(sensor: SensorRecord, input: RegistrationInput, certificateRequest?: string): Promise<SensorDirective & { certificate?: SensorCertificate }> {
      checkRegistrationVersion(input.wire_version);
      checkLicence();
      if (input.public_key !== sensor.public_key) throw new SvcError('VALIDATION_FAILED', { message: 'A registered sensor keeps its key; a new key enrols with a new enrolment token.', details: { field: 'body.public_key', reason: 'key_changed' } });
      if (certificateRequest !== undefined) await checkCertificateRequest(certificateRequest, input.public_key);
      const updated = await retryingLockConflicts(() =>
        store.reregister(sensor.org_id, sensor.id, input, (tx, record) =>
          deps.audit.append(sensor.org_id, { actor: `sensor:${sensor.id}`, action: 'sensor.registered', target: sensor.id, outcome: 'success', details: registrationDetails(record) }, { tx }),
        ),
      );
      sensors.delete(sensor.id);
      // A signed registration with a request is also how a sensor renews its certificate (same key only).
      if (certificateRequest !== undefined) return { ...(await directiveFor(updated, 'registration')), certificate: await issueCertificate(updated, certificateRequest) };
      return directiveFor(updated, 'registration');
    },
    /** POST /sensors/heartbeat: stores the report and answers the configuration in force. */
    async heartbeat(sensor: SensorRecord, received: HeartbeatReport & { gateway_usage?: GatewayUsageReport }): Promise<SensorDirective> {
      const { gateway_usage: usage, ...report } = received;
      // A gateway sensor's spend, before the answer: the etag it gets back already counts it.
      if (usage !== undefined && sensor.class === 'gateway' && deps.gatewayContexts !== undefined) await deps.gatewayContexts.recordUsage(sensor.org_id, usage);
      const dropped = Object.entries(report.spool?.dropped ?? {}).filter(([, count]) => count > 0);
      // A spool-drop report is stored with its audit entry (one transaction), or neither is.
      const updated = await retryingLockConflicts(() =>
        store.heartbeat(sensor.org_id, sensor.id, report, new Date(clock()), async (tx) => {
          if (dropped.length === 0) return;
          await deps.audit.append(sensor.org_id, { actor: `sensor:${sensor.id}`, action: 'sensor.spool_dropped', target: sensor.id, outcome: 'warning', details: { dropped: Object.fromEntries(dropped), spool_depth: report.spool?.depth ?? null } }, { tx });
        }),
      );
      if (updated === null) throw new SvcError('SENSOR_UNKNOWN', { details: { sensor_id: sensor.id } });
      for (const [severity, count] of dropped) metrics.spoolDropped.inc({ severity }, count);
      return directiveFor(updated, 'heartbeat');
    },
    /** GET /sensors/{id}/config (a gateway sensor's sealed context, an mcp sensor's whole context). */
    config(sensor: SensorRecord): Promise<SensorDirective> {
      return directiveFor(sensor, 'config');
    },
    async createEnrolmentToken(orgId: string, input: { name: string | null; expiresInS: number; actor: string }) {
      const expiresAt = new Date(clock() + input.expiresInS * 1000);
      const created = await retryingLockConflicts(() =>
        store.createToken(orgId, { name: input.name, createdBy: input.actor, expiresAt }, (tx, token) =>
          deps.audit.append(orgId, { actor: input.actor, action: 'sensor.enrolment_token.created', target: token.id, outcome: 'success', details: { name: input.name, expires_at: token.expires_at } }, { tx }),
        ),
      );
      return { id: created.id, token: created.token, name: input.name, expires_at: created.expires_at };
    },
    async list(orgId: string) {
      const now = clock();
      const [records, limit] = await Promise.all([store.list(orgId), limitOf(orgId)]);
      return { sensors: records.map((record) => view(record, now)), limit: { sensors: limit.limit, source: limit.source, plan: limit.plan }, licence: licenceSummary() };
    },
    async get(orgId: string, id: string): Promise<SensorView> {
      return view(await mustGet(orgId, id));
    },
    async setConfig(orgId: string, id: string, change: Partial<SensorConfig>, actor: string): Promise<SensorView> {
      const updated = await retryingLockConflicts(() =>
        store.setConfig(orgId, id, change, (tx, record) => deps.audit.append(orgId, { actor, action: 'sensor.config.set', target: id, outcome: 'success', details: { change, config_version: record.config_version } }, { tx })),
      );
      if (updated === null) throw new SvcError('NOT_FOUND', { details: { resource: 'sensor', id: id.slice(0, 64) } });
      sensors.delete(id);
      return view(updated);
    },
    async revoke(orgId: string, id: string, actor: string): Promise<SensorView> {
      // The org's own sensor first (an admin of one org must not revoke another's certificates),
      // then its certificates (the CA's revocation list reaches the TLS listener at once), then the row
      // and its audit entry in one transaction. A failure after the CA's revocation leaves the row
      // unrevoked and no entry; the admin's retry revokes at the CA again (a no-op there) and then the row.
      const existing = await mustGet(orgId, id);
      const serials = existing.certificate_expires_at === null || existing.revoked_at !== null ? [] : await (await openAuthority()).revoke({ sensorId: id });
      const revoked = await retryingLockConflicts(() =>
        store.revoke(orgId, id, (tx, record) => deps.audit.append(orgId, { actor, action: 'sensor.revoked', target: id, outcome: 'success', details: { name: record.name, certificates_revoked: serials } }, { tx })),
      );
      if (revoked === null) throw new SvcError('NOT_FOUND', { details: { resource: 'sensor', id: id.slice(0, 64) } });
      sensors.delete(id);
      return view(revoked);
    },
    /** The CA (src/sensors/ca.ts) records the expiry of the certificate it issued a sensor. */
    setCertificateExpiry: (sensorId: string, expiresAt: Date) => store.setCertificateExpiry(sensorId, expiresAt),
  };
}

export type Collector = ReturnType<typeof createCollector>;

/** What a registration's audit entry (sensor.enrolled, sensor.registered) records of the sensor. */
function registrationDetails(sensor: SensorRecord): Record<string, unknown> {
  return { name: sensor.name, class: sensor.class, version: sensor.version, wire_version: sensor.wire_version, capabilities: sensor.capabilities };
}

function registerMetrics(deps: CollectorDeps) {
  const registry = deps.metrics.registry;
  const existing = <T>(name: string) => registry.getSingleMetric(name) as T | undefined;
  const findings =
    existing<Counter<'outcome'>>('svc_sensor_findings_total') ??
    new Counter({ name: 'svc_sensor_findings_total', help: 'Sensor findings ingested by the collector, by outcome (accepted, duplicate); rate() of it is the ingest rate.', labelNames: ['outcome'] as const, registers: [registry] });
  const rejections =
    existing<Counter<'code'>>('svc_sensor_rejections_total') ??
    new Counter({ name: 'svc_sensor_rejections_total', help: 'Sensor requests and findings the collector refused, by error code (sig_invalid, wire_version_unsupported, license_expired, …).', labelNames: ['code'] as const, registers: [registry] });
  const spoolDropped =
    existing<Counter<'severity'>>('svc_sensor_spool_dropped_total') ??
    new Counter({ name: 'svc_sensor_spool_dropped_total', help: 'Findings sensors reported dropped from a full spool, by severity.', labelNames: ['severity'] as const, registers: [registry] });
  if (existing('svc_sensor_spool_depth') === undefined) {
    const logger = deps.logger;
    new Gauge({
      name: 'svc_sensor_spool_depth',
      help: 'Findings in each sensor spool, as its last heartbeat reported.',
      labelNames: ['sensor_id', 'class'] as const,
      registers: [registry],
      aggregator: 'max',
      async collect() {
        this.reset();
        try {
          const { rows } = await deps.db.query<{ id: string; class: string; depth: number | null }>(
            "SELECT id::text, class, (heartbeat->'spool'->>'depth')::float8 AS depth FROM sensors WHERE revoked_at IS NULL ORDER BY registered_at LIMIT 1000",
          );
          for (const row of rows) this.set({ sensor_id: row.id, class: row.class }, row.depth ?? 0);
        } catch (error) {
          logger.warn({ err: error }, 'svc_sensor_spool_depth could not be read');
        }
      },
    });
  }
  return { findings, rejections, spoolDropped };
}
