/**
 * SIEM export: an org's sinks (syslog RFC 5424 over TCP or TLS in CEF or JSON; an HTTP event
 * collector in Splunk HEC shape) and the exporter that streams findings and audit entries to them.
 *
 * Security posture: a sink's host (or HEC URL) passes the SSRF check when saved and again at every
 * connect (transport.ts), as webhook URLs do. The HEC token is stored encrypted (AES-256-GCM,
 * bound to the sink id) and only ever shown masked. Sinks are created and changed only on plans
 * that include SIEM export (the routes' gate) and are disabled by a downgrade (`planChanged`).
 *
 * Guarantees (docs/siem.md):
 * - Nothing lost while a SIEM is down. A finding reaches the database through the evidence outbox
 *   (journal, spool, replay: platform/outbox.ts); the insert's trigger (migration 102) queues it
 *   for every enabled sink of its org in the same transaction, one `siem_pending` row per sink and
 *   finding. Audit entries need no queue: a sink keeps a cursor in its org's chain (`audit_cursor`,
 *   the seq of the last entry it took), and the chain's seq is gapless and commits in order (one
 *   lock of the chain head per append). A row leaves the queue, and the cursor moves, only after
 *   the receiver has acknowledged the batch (transport.ts).
 * - Retried with backoff: a failed batch sets the sink's next attempt to base·2^(n−1) ±10 %,
 *   capped; the batch stays queued. The sink's view shows the failures, the last error and the lag.
 * - No duplicates after recovery: each record is sent until one batch holding it is acknowledged,
 *   then never again (its queue row is gone, the cursor has passed it). One replica at a time
 *   sends for a sink (a lease on the sink row), so two never send the same batch. Only a crash
 *   (or a lost database) between the receiver's acknowledgement and the commit sends that batch
 *   once more, with the same record ids, so a SIEM can drop the copy.
 */
import { randomUUID } from 'node:crypto';
import { hostname as osHostname } from 'node:os';
import type { Agent } from 'undici';
import { decrypt, encrypt, encryptionKeyFrom, mask } from '../platform/crypto.ts';
import type { Database, Queryable } from '../platform/db/index.ts';
import { retryingLockConflicts } from '../platform/db/failures.ts';
import { noWithin, type WithinWrite } from '../platform/db/within.ts';
import { SvcError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import { assertPublicHost, assertPublicUrl, isPrivateHost } from '../platform/ssrf.ts';
import { isUuid } from '../platform/uuid.ts';
import { hecEvent, octetFrame, syslogMessage, type AuditRecordView, type FindingRecord, type SiemRecord } from './format.ts';
import { hecAgent, sendHec, sendSyslog, SendError, type SendPolicy } from './transport.ts';

export const SIEM_STREAMS = ['findings', 'audit'] as const;
export type SiemStream = (typeof SIEM_STREAMS)[number];
export const SIEM_KINDS = ['syslog', 'hec'] as const;
export type SiemKind = (typeof SIEM_KINDS)[number];

export interface SinkInput {
  name: string;
  kind: SiemKind;
  format?: 'cef' | 'json';
  transport?: 'tcp' | 'tls';
  host?: string;
  port?: number;
  url?: string;
  token?: string;
  index?: string | null;
  ca_pem?: string | null;
  server_name?: string | null;
  facility?: number;
  streams?: SiemStream[];
  enabled?: boolean;
}

export interface SinkView {
  id: string;
  name: string;
  kind: SiemKind;
  format: 'cef' | 'json';
  transport: 'tcp' | 'tls' | null;
  host: string | null;
  port: number | null;
  url: string | null;
  token: string | null;
  index: string | null;
  server_name: string | null;
  ca_pem_set: boolean;
  facility: number;
  streams: SiemStream[];
  enabled: boolean;
  disabled_reason: string | null;
  /** active: delivering; failing: the last attempt failed (retrying with backoff); disabled. */
  state: 'active' | 'failing' | 'disabled';
  consecutive_failures: number;
  last_error: string | null;
  last_error_at: string | null;
  last_delivered_at: string | null;
  next_attempt_at: string | null;
  delivered: { findings: number; audit: number };
  pending: { findings: number; audit: number };
  created_at: string;
  updated_at: string;
}

export interface SiemPolicy {
  /** Delay before the first retry of a failing sink; doubles each failure. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** One batch: connect, send and acknowledgement. */
  timeoutMs: number;
  /** Records of each stream per batch. */
  batch: number;
  /** How often the exporter looks for sinks with something to send. */
  intervalMs: number;
}

export const DEFAULT_SIEM_POLICY: SiemPolicy = { baseDelayMs: 1_000, maxDelayMs: 300_000, timeoutMs: 10_000, batch: 200, intervalMs: 1_000 };

export interface SiemDeps {
  readonly db: Database;
  readonly logger: Logger;
  readonly config: { readonly allowPrivateTargets: boolean; readonly apiEncryptionKey: string };
  readonly policy?: Partial<SiemPolicy>;
  readonly random?: () => number;
}

export interface Siem {
  readonly policy: SiemPolicy;
  /**
   * The writes take `within`, run in the write's transaction after it (the audit entry): a failure
   * of it rolls the write back, so the change and its entry are stored together or not at all.
   */
  create(orgId: string, input: SinkInput, within?: WithinWrite<SinkView>): Promise<SinkView>;
  list(orgId: string): Promise<SinkView[]>;
  get(orgId: string, id: string): Promise<SinkView>;
  /** `within` runs also when nothing changes (the request is recorded as made). */
  update(orgId: string, id: string, changes: Partial<SinkInput>, within?: WithinWrite<SinkView>): Promise<SinkView>;
  /** `within` gets the id of the sink deleted. */
  remove(orgId: string, id: string, within?: WithinWrite<string>): Promise<void>;
  /**
   * Inside a plan change's transaction: a plan without SIEM export disables the org's enabled
   * sinks (reason `plan`) and drops their queues; a plan with it enables the sinks a downgrade had
   * disabled, from the chain's current head (nothing of the time in between is sent).
   */
  planChanged(tx: Queryable, orgId: string, siemIncluded: boolean): Promise<void>;
  /** Sends one batch to every sink that is due; returns how many records were delivered. */
  tick(): Promise<number>;
  start(): void;
  close(): Promise<void>;
}

const MAX_SINKS_PER_ORG = 20;
const LEASE_MARGIN_MS = 30_000;
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$|^\[?[0-9A-Fa-f:.]+\]?$/;
const VERSION = '1';

interface SinkRow {
  id: string;
  org_id: string;
  name: string;
  kind: SiemKind;
  transport: 'tcp' | 'tls' | null;
  format: 'cef' | 'json';
  host: string | null;
  port: number | null;
  url: string | null;
  token_ciphertext: string | null;
  token_last4: string | null;
  ca_pem: string | null;
  server_name: string | null;
  facility: number;
  hec_index: string | null;
  streams: SiemStream[] | string;
  enabled: boolean;
  disabled_reason: string | null;
  audit_cursor: string;
  delivered_findings: string;
  delivered_audit: string;
  consecutive_failures: number;
  next_attempt_at: Date;
  last_error: string | null;
  last_error_at: Date | null;
  last_delivered_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const SINK_COLUMNS = `id::text, org_id::text, name, kind, transport, format, host, port, url, token_ciphertext, token_last4, ca_pem, server_name, facility,
  hec_index, streams, enabled, disabled_reason, audit_cursor::text, delivered_findings::text, delivered_audit::text, consecutive_failures,
  next_attempt_at, last_error, last_error_at, last_delivered_at, created_at, updated_at`;

const streamsOf = (row: SinkRow): SiemStream[] => (typeof row.streams === 'string' ? (JSON.parse(row.streams) as SiemStream[]) : row.streams);
const invalid = (field: string, message: string, extra: Record<string, unknown> = {}) => new SvcError('VALIDATION_FAILED', { message, details: { field, ...extra } });

/** Backoff before the next attempt after `failures` consecutive failures: base·2^(failures−1) ±10 %, capped. */
export function siemBackoff(failures: number, policy: Pick<SiemPolicy, 'baseDelayMs' | 'maxDelayMs'>, random: () => number = Math.random): number {
  const nominal = Math.min(policy.baseDelayMs * 2 ** Math.max(0, failures - 1), policy.maxDelayMs);
  return Math.max(0, Math.round(nominal * (1 + (random() * 2 - 1) * 0.1)));
}

export function createSiem(deps: SiemDeps): Siem {
  const { db, logger } = deps;
  const policy: SiemPolicy = { ...DEFAULT_SIEM_POLICY, ...deps.policy };
  const random = deps.random ?? Math.random;
  const allowPrivate = deps.config.allowPrivateTargets;
  const encryptionKey = encryptionKeyFrom(deps.config.apiEncryptionKey);
  const sendPolicy: SendPolicy = { allowPrivate, timeoutMs: policy.timeoutMs };
  const hostname = osHostname();
  let agent: Agent | null = null;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<number> | null = null;
  let closed = false;
  let lastPassFailureLog = 0;
  const tokenContext = (id: string) => `siem-token:${id}`;

  /** Validates a complete sink (after defaults and changes are merged) and SSRF-checks its target. */
  const validate = async (sink: Required<Pick<SinkInput, 'name' | 'kind' | 'format' | 'streams'>> & SinkInput) => {
    if (sink.name.trim() === '') throw invalid('body.name', 'name must not be empty');
    if (sink.streams.length === 0 || !sink.streams.every((stream) => (SIEM_STREAMS as readonly string[]).includes(stream))) {
      throw invalid('body.streams', `streams must list one or more of ${SIEM_STREAMS.join(', ')}`);
    }
    if (sink.kind === 'syslog') {
      if (sink.host === undefined || sink.port === undefined) throw invalid(sink.host === undefined ? 'body.host' : 'body.port', 'a syslog sink needs host and port');
      if (!HOST.test(sink.host)) throw invalid('body.host', 'host must be a host name or an IP address');
      if (sink.url !== undefined || sink.token !== undefined) throw invalid(sink.url !== undefined ? 'body.url' : 'body.token', 'url and token belong to hec sinks');
      if (sink.transport === 'tcp' && (sink.ca_pem ?? null) !== null) throw invalid('body.ca_pem', 'ca_pem needs transport tls');
      if ((sink.ca_pem ?? null) !== null && !/-----BEGIN CERTIFICATE-----/.test(sink.ca_pem!)) throw invalid('body.ca_pem', 'ca_pem must hold PEM certificates');
      await assertPublicHost(sink.host, { allowPrivate, field: 'host' });
    } else {
      if (sink.url === undefined) throw invalid('body.url', 'a hec sink needs url');
      if (sink.host !== undefined || sink.port !== undefined) throw invalid(sink.host !== undefined ? 'body.host' : 'body.port', 'host and port belong to syslog sinks');
      if (sink.format !== 'json') throw invalid('body.format', 'a hec sink sends json events', { allowed: ['json'] });
      const url = await assertPublicUrl(sink.url, { allowPrivate, field: 'url' });
      // The HEC token goes in the Authorization header: over plain http only to a receiver that
      // is not on the internet (loopback or the private network, where ALLOW_PRIVATE_TARGETS lets
      // a sink be); checked again at every send (transport.ts).
      if (url.protocol === 'http:' && !(await isPrivateHost(url.hostname, { field: 'url' }))) {
        throw invalid('body.url', 'a hec sink on a public host needs https: over http the HEC token would cross the network in clear', { reason: 'https_required' });
      }
    }
  };

  /** The view of a sink just written, with `within` run on it in the write's transaction. */
  const viewThen = async (tx: Queryable, row: SinkRow, within: WithinWrite<SinkView>): Promise<SinkView> => {
    const written = await view(tx, row);
    await within(tx, written);
    return written;
  };

  const view = async (tx: Queryable, row: SinkRow): Promise<SinkView> => {
    const streams = streamsOf(row);
    // Only what will be sent: a row left for a sink that does not stream findings (or is disabled) by
    // a finding recorded while the sink was changed is dropped, not waiting (loadBatch, update).
    const pendingFindings = streams.includes('findings') && row.enabled
      ? await tx.query<{ count: number }>('SELECT count(*)::int AS count FROM siem_pending WHERE sink_id = $1', [row.id])
      : { rows: [{ count: 0 }] };
    let pendingAudit = 0;
    if (streams.includes('audit') && row.enabled) {
      const head = await tx.query<{ seq: string }>('SELECT seq::text FROM audit_chain_heads WHERE org_id = $1', [row.org_id]);
      pendingAudit = Math.max(0, Number(head.rows[0]?.seq ?? 0) - Number(row.audit_cursor));
    }
    return {
      id: row.id,
      name: row.name,
      kind: row.kind,
      format: row.format,
      transport: row.transport,
      host: row.host,
      port: row.port,
      url: row.url,
      token: row.token_last4 === null ? null : mask(row.token_last4),
      index: row.hec_index,
      server_name: row.server_name,
      ca_pem_set: row.ca_pem !== null,
      facility: row.facility,
      streams,
      enabled: row.enabled,
      disabled_reason: row.disabled_reason,
      state: !row.enabled ? 'disabled' : row.consecutive_failures > 0 ? 'failing' : 'active',
      consecutive_failures: row.consecutive_failures,
      last_error: row.last_error,
      last_error_at: row.last_error_at?.toISOString() ?? null,
      last_delivered_at: row.last_delivered_at?.toISOString() ?? null,
      next_attempt_at: row.enabled && row.consecutive_failures > 0 ? row.next_attempt_at.toISOString() : null,
      delivered: { findings: Number(row.delivered_findings), audit: Number(row.delivered_audit) },
      pending: { findings: pendingFindings.rows[0]?.count ?? 0, audit: pendingAudit },
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  };

  const find = async (tx: Queryable, id: string, lock = false): Promise<SinkRow> => {
    if (!isUuid(id)) throw new SvcError('NOT_FOUND', { details: { resource: 'siem_sink' } });
    const result = await tx.query<SinkRow>(`SELECT ${SINK_COLUMNS} FROM siem_sinks WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
    const row = result.rows[0];
    if (row === undefined) throw new SvcError('NOT_FOUND', { details: { resource: 'siem_sink' } });
    return row;
  };

  /** The audit chain's head seq of an org (0 when it has no chain yet): where a new or re-enabled sink starts. */
  const chainHead = async (tx: Queryable, orgId: string): Promise<number> => {
    const head = await tx.query<{ seq: string }>('SELECT seq::text FROM audit_chain_heads WHERE org_id = $1', [orgId]);
    return Number(head.rows[0]?.seq ?? 0);
  };

  // ------------------------------------------------------------------------------ delivery

  const loadBatch = async (row: SinkRow): Promise<{ items: SiemRecord[]; eventIds: string[]; auditTo: number | null }> => {
    const streams = streamsOf(row);
    return db.withOrg(row.org_id, async (tx) => {
      const items: SiemRecord[] = [];
      const eventIds: string[] = [];
      // A finding recorded while its sink's change (findings taken off its streams) was in flight
      // is queued by the trigger from the sink as it was before the change (the trigger's read does
      // not wait for the change's lock; only its foreign key check does, and that passes once the
      // change commits): the row is left behind, the sink due for ever. Dropped here, at the sink's
      // next pass, as the change itself dropped the rows it found (review-37). The sink's streams
      // are read again by the statement, not taken from the claim: a change that added findings
      // since, and the findings queued after it, are both seen, and kept.
      if (!streams.includes('findings')) {
        await tx.query(
          `DELETE FROM siem_pending p USING siem_sinks s WHERE p.sink_id = $1 AND s.id = p.sink_id AND NOT s.streams @> '["findings"]'::jsonb`,
          [row.id],
        );
      } else {
        const findings = await tx.query<{
          event_id: string; id: string | null; request_id: string; occurred_at: Date; pillar: string; kind: string; threat_score: number; decision: string;
          patterns: FindingRecord['patterns'] | string; session_id: string | null; gateway_id: string | null; details: Record<string, unknown> | string;
        }>(
          `SELECT p.event_id::text, e.id::text, e.request_id, e.occurred_at, e.pillar, e.kind, e.threat_score, e.decision, e.patterns, e.session_id, e.gateway_id, e.details
             FROM siem_pending p LEFT JOIN threat_events e ON e.id = p.event_id
            WHERE p.sink_id = $1 ORDER BY p.seq LIMIT $2`,
          [row.id, policy.batch],
        );
        for (const finding of findings.rows) {
          eventIds.push(finding.event_id);
          if (finding.id === null) continue; // purged meanwhile: nothing left to send
          items.push({
            type: 'finding',
            record: {
              id: finding.id,
              orgId: row.org_id,
              occurredAt: finding.occurred_at,
              requestId: finding.request_id,
              pillar: finding.pillar,
              kind: finding.kind,
              threatScore: Number(finding.threat_score),
              decision: finding.decision,
              patterns: typeof finding.patterns === 'string' ? JSON.parse(finding.patterns) : finding.patterns,
              sessionId: finding.session_id,
              gatewayId: finding.gateway_id,
              details: typeof finding.details === 'string' ? JSON.parse(finding.details) : finding.details,
            },
          });
        }
      }
      let auditTo: number | null = null;
      if (streams.includes('audit')) {
        const entries = await tx.query<{ id: string; seq: string; occurred_at: Date; actor: string; action: string; target: string | null; outcome: string; details: Record<string, unknown> | string; hash: string }>(
          `SELECT id::text, seq::text, occurred_at, actor, action, target, outcome, details, hash FROM audit_log
            WHERE org_id = $1 AND seq > $2 ORDER BY audit_log.seq LIMIT $3`,
          [row.org_id, row.audit_cursor, policy.batch],
        );
        for (const entry of entries.rows) {
          const record: AuditRecordView = {
            id: entry.id,
            orgId: row.org_id,
            seq: Number(entry.seq),
            occurredAt: entry.occurred_at,
            actor: entry.actor,
            action: entry.action,
            target: entry.target,
            outcome: entry.outcome,
            details: typeof entry.details === 'string' ? JSON.parse(entry.details) : entry.details,
            hash: entry.hash,
          };
          items.push({ type: 'audit', record });
          auditTo = record.seq;
        }
      }
      return { items, eventIds, auditTo };
    });
  };

  const send = async (row: SinkRow, items: readonly SiemRecord[]): Promise<void> => {
    if (row.kind === 'syslog') {
      const frames = items.map((item) => octetFrame(syslogMessage(item, { format: row.format, facility: row.facility, hostname, version: VERSION })));
      await sendSyslog({ host: row.host!, port: row.port!, transport: row.transport ?? 'tcp', caPem: row.ca_pem, serverName: row.server_name }, frames, sendPolicy);
      return;
    }
    const token = decrypt(encryptionKey, row.token_ciphertext!, tokenContext(row.id));
    agent ??= hecAgent(sendPolicy);
    await sendHec({ url: row.url!, token }, items.map((item) => hecEvent(item, { hostname, index: row.hec_index })), agent, sendPolicy);
  };

  /** One batch for one sink, under its lease. Returns how many records it delivered. */
  const deliverSink = async (sinkId: string, orgId: string): Promise<number> => {
    const leaseUntil = new Date(Date.now() + policy.timeoutMs + LEASE_MARGIN_MS);
    const claimed = await db.withOrg(orgId, (tx) =>
      tx.query<SinkRow>(
        `UPDATE siem_sinks SET lease_until = $2
          WHERE id = $1 AND enabled AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
        RETURNING ${SINK_COLUMNS}`,
        [sinkId, leaseUntil.toISOString()],
      ),
    );
    const row = claimed.rows[0];
    if (row === undefined) return 0;
    let delivered = 0;
    try {
      const batch = await loadBatch(row);
      if (batch.items.length > 0) await send(row, batch.items);
      const findings = batch.items.filter((item) => item.type === 'finding').length;
      const audits = batch.items.length - findings;
      // The batch is sent: its record is one transaction, decided before it runs, that a lost lock
      // conflict rolls back whole, so it is run again (retryingLockConflicts). It deadlocks with a
      // sink PATCH that disables or re-enables the sink or takes findings off its streams (that
      // locks the sink row, then deletes the sink's pending rows; this deletes them, then updates
      // the row). Thrown, it was counted a failed send: the sink backed off and sent the batch again.
      await retryingLockConflicts(() => db.withOrg(orgId, async (tx) => {
        if (batch.eventIds.length > 0) await tx.query('DELETE FROM siem_pending WHERE sink_id = $1 AND event_id = ANY($2::uuid[])', [row.id, batch.eventIds]);
        await tx.query(
          `UPDATE siem_sinks SET lease_until = NULL, consecutive_failures = 0, next_attempt_at = now(),
                  audit_cursor = greatest(audit_cursor, $2), delivered_findings = delivered_findings + $3, delivered_audit = delivered_audit + $4,
                  last_delivered_at = CASE WHEN $5 THEN now() ELSE last_delivered_at END
            WHERE id = $1`,
          [row.id, batch.auditTo ?? 0, findings, audits, batch.items.length > 0],
        );
      }));
      delivered = batch.items.length;
    } catch (error) {
      const code = error instanceof SendError ? error.code : ((error as { code?: unknown } | null)?.code as string | undefined) ?? 'error';
      const failures = row.consecutive_failures + 1;
      const delay = siemBackoff(failures, policy, random);
      logger.warn({ siem_sink_id: row.id, org_id: orgId, code, failures }, 'SIEM delivery failed; retrying with backoff');
      await db
        .withOrg(orgId, (tx) =>
          tx.query(
            `UPDATE siem_sinks SET lease_until = NULL, consecutive_failures = $2, next_attempt_at = $3, last_error = $4, last_error_at = now() WHERE id = $1`,
            [row.id, failures, new Date(Date.now() + delay).toISOString(), String(code).slice(0, 200)],
          ),
        )
        .catch(() => undefined); // the lease expires on its own
    }
    return delivered;
  };

  const tickOnce = async (): Promise<number> => {
    // Sinks with something to send, that are due and not leased, of orgs whose plan includes SIEM export.
    const due = await db.query<{ id: string; org_id: string }>(
      `SELECT s.id::text, s.org_id::text FROM siem_sinks s JOIN orgs o ON o.id = s.org_id
        WHERE s.enabled AND s.next_attempt_at <= now() AND (s.lease_until IS NULL OR s.lease_until < now())
          AND o.plan IN ('pro', 'enterprise') AND (o.trial_ends_at IS NULL OR o.trial_ends_at > now())
          AND (EXISTS (SELECT 1 FROM siem_pending p WHERE p.sink_id = s.id)
               OR (s.streams @> '["audit"]'::jsonb AND EXISTS (SELECT 1 FROM audit_chain_heads h WHERE h.org_id = s.org_id AND h.seq > s.audit_cursor)))
        ORDER BY s.next_attempt_at LIMIT 100`,
    );
    let delivered = 0;
    await Promise.all(
      due.rows.map(async (sink) => {
        // A sink with a backlog takes batch after batch until it is drained or fails.
        for (;;) {
          if (closed) return;
          const count = await deliverSink(sink.id, sink.org_id);
          delivered += count;
          if (count < policy.batch) return;
        }
      }),
    );
    return delivered;
  };

  const siem: Siem = {
    policy,

    async create(orgId, input, within = noWithin) {
      const sink: SinkInput & { format: 'cef' | 'json'; streams: SiemStream[] } = {
        ...input,
        format: input.format ?? (input.kind === 'hec' ? 'json' : 'cef'),
        streams: [...new Set(input.streams ?? [...SIEM_STREAMS])],
      };
      if (input.kind === 'syslog') sink.transport = input.transport ?? 'tcp';
      await validate(sink);
      const id = randomUUID();
      return db.withOrg(orgId, async (tx) => {
        const count = await tx.query<{ count: number }>('SELECT count(*)::int AS count FROM siem_sinks');
        if ((count.rows[0]?.count ?? 0) >= MAX_SINKS_PER_ORG) throw new SvcError('VALIDATION_FAILED', { details: { reason: 'too_many_siem_sinks', limit: MAX_SINKS_PER_ORG } });
        const inserted = await tx.query<SinkRow>(
          `INSERT INTO siem_sinks (id, org_id, name, kind, transport, format, host, port, url, token_ciphertext, token_last4, ca_pem, server_name, facility, hec_index, streams, enabled, audit_cursor)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) RETURNING ${SINK_COLUMNS}`,
          [
            id, orgId, sink.name.trim(), sink.kind, sink.transport ?? null, sink.format, sink.host ?? null, sink.port ?? null, sink.url ?? null,
            sink.token === undefined ? null : encrypt(encryptionKey, sink.token, tokenContext(id)),
            sink.token === undefined ? null : sink.token.length >= 20 ? sink.token.slice(-4) : '',
            sink.ca_pem ?? null, sink.server_name ?? null, sink.facility ?? 13, sink.index ?? null, JSON.stringify(sink.streams), sink.enabled ?? true,
            await chainHead(tx, orgId),
          ],
        );
        return viewThen(tx, inserted.rows[0]!, within);
      });
    },

    async list(orgId) {
      return db.withOrg(orgId, async (tx) => {
        const rows = await tx.query<SinkRow>(`SELECT ${SINK_COLUMNS} FROM siem_sinks ORDER BY created_at, id`);
        const views: SinkView[] = [];
        for (const row of rows.rows) views.push(await view(tx, row));
        return views;
      });
    },

    async get(orgId, id) {
      return db.withOrg(orgId, async (tx) => view(tx, await find(tx, id)));
    },

    async update(orgId, id, changes, within = noWithin) {
      const before = await db.withOrg(orgId, (tx) => find(tx, id));
      const merged = {
        name: changes.name ?? before.name,
        kind: before.kind,
        format: changes.format ?? before.format,
        streams: [...new Set(changes.streams ?? streamsOf(before))],
        ...(before.kind === 'syslog'
          ? {
              transport: changes.transport ?? before.transport ?? 'tcp',
              host: changes.host ?? before.host!,
              port: changes.port ?? before.port!,
              ca_pem: changes.ca_pem === undefined ? before.ca_pem : changes.ca_pem,
              server_name: changes.server_name === undefined ? before.server_name : changes.server_name,
            }
          : { url: changes.url ?? before.url! }),
      } satisfies SinkInput;
      if (changes.kind !== undefined && changes.kind !== before.kind) throw invalid('body.kind', 'the kind of a sink cannot change; create a new sink');
      if (before.kind === 'hec' && (changes.host !== undefined || changes.port !== undefined || changes.transport !== undefined)) throw invalid('body.host', 'host, port and transport belong to syslog sinks');
      if (before.kind === 'syslog' && (changes.url !== undefined || changes.token !== undefined || changes.index !== undefined)) throw invalid('body.url', 'url, token and index belong to hec sinks');
      // The stored token goes only to the collector it was given for: kept across a new url, it
      // would be sent to that url's receiver, where an admin could read it although it is never answered.
      if (before.kind === 'hec' && changes.url !== undefined && changes.url !== before.url && changes.token === undefined) {
        throw invalid('body.token', 'a new url needs the token again (the stored one is sent only to the url it was given for)', { reason: 'url_changed' });
      }
      await validate(merged);
      return db.withOrg(orgId, async (tx) => {
        const current = await find(tx, id, true);
        const sets: string[] = [];
        const params: unknown[] = [id];
        let resetCursor = false;
        let retryNow = false;
        const set = (column: string, value: unknown) => {
          params.push(value);
          sets.push(`${column} = $${params.length}`);
        };
        if (changes.name !== undefined) set('name', merged.name.trim());
        if (changes.format !== undefined) set('format', merged.format);
        if (changes.streams !== undefined) {
          set('streams', JSON.stringify(merged.streams));
          // A stream taken off drops what waited for it; one added starts from now (no backfill).
          if (!merged.streams.includes('findings')) await tx.query('DELETE FROM siem_pending WHERE sink_id = $1', [id]);
          if (merged.streams.includes('audit') && !streamsOf(current).includes('audit')) resetCursor = true;
        }
        if (changes.transport !== undefined) set('transport', changes.transport);
        if (changes.host !== undefined) set('host', changes.host);
        if (changes.port !== undefined) set('port', changes.port);
        if (changes.ca_pem !== undefined) set('ca_pem', changes.ca_pem);
        if (changes.server_name !== undefined) set('server_name', changes.server_name);
        if (changes.facility !== undefined) set('facility', changes.facility);
        if (changes.url !== undefined) set('url', changes.url);
        if (changes.index !== undefined) set('hec_index', changes.index);
        if (changes.token !== undefined) {
          set('token_ciphertext', encrypt(encryptionKey, changes.token, tokenContext(id)));
          set('token_last4', changes.token.length >= 20 ? changes.token.slice(-4) : '');
        }
        if (changes.enabled === true && !current.enabled) {
          if (current.disabled_reason === 'plan') throw new SvcError('PLAN_UPGRADE_REQUIRED', { details: { feature: 'siem_export', required_plan: 'pro' } });
          // Re-enabled: from the chain's head on, and retried at once. Findings start from now too:
          // a row a finding recorded while the sink was being disabled left behind is dropped.
          resetCursor = true;
          await tx.query('DELETE FROM siem_pending WHERE sink_id = $1', [id]);
          sets.push('enabled = true', 'disabled_reason = NULL', 'consecutive_failures = 0');
          retryNow = true;
        } else if (changes.enabled === false && current.enabled) {
          sets.push('enabled = false', `disabled_reason = 'manual'`);
          await tx.query('DELETE FROM siem_pending WHERE sink_id = $1', [id]);
        }
        // A changed target is tried at once, not after the old target's backoff. (Set once: a
        // re-enable that also changes the target assigned the column twice, which PostgreSQL refuses.)
        if (changes.host !== undefined || changes.port !== undefined || changes.url !== undefined || changes.token !== undefined || changes.transport !== undefined || changes.ca_pem !== undefined) {
          retryNow = true;
        }
        if (retryNow) sets.push('next_attempt_at = now()');
        if (resetCursor) set('audit_cursor', await chainHead(tx, orgId));
        if (sets.length === 0) return viewThen(tx, current, within);
        sets.push('updated_at = now()');
        const updated = await tx.query<SinkRow>(`UPDATE siem_sinks SET ${sets.join(', ')} WHERE id = $1 RETURNING ${SINK_COLUMNS}`, params);
        return viewThen(tx, updated.rows[0]!, within);
      });
    },

    async remove(orgId, id, within = noWithin) {
      if (!isUuid(id)) throw new SvcError('NOT_FOUND', { details: { resource: 'siem_sink' } });
      await db.withOrg(orgId, async (tx) => {
        const deleted = await tx.query('DELETE FROM siem_sinks WHERE id = $1 RETURNING id', [id]);
        if (deleted.rowCount === 0) throw new SvcError('NOT_FOUND', { details: { resource: 'siem_sink' } });
        await within(tx, id);
      });
    },

    async planChanged(tx, orgId, siemIncluded) {
      if (!siemIncluded) {
        await tx.query(`DELETE FROM siem_pending WHERE sink_id IN (SELECT id FROM siem_sinks WHERE org_id = $1 AND enabled)`, [orgId]);
        await tx.query(`UPDATE siem_sinks SET enabled = false, disabled_reason = 'plan', updated_at = now() WHERE org_id = $1 AND enabled`, [orgId]);
        return;
      }
      // Re-enabled from now on: rows a finding recorded while the downgrade was in flight left behind are dropped.
      await tx.query(`DELETE FROM siem_pending WHERE sink_id IN (SELECT id FROM siem_sinks WHERE org_id = $1 AND NOT enabled AND disabled_reason = 'plan')`, [orgId]);
      await tx.query(
        `UPDATE siem_sinks SET enabled = true, disabled_reason = NULL, consecutive_failures = 0, next_attempt_at = now(), updated_at = now(),
                audit_cursor = coalesce((SELECT seq FROM audit_chain_heads WHERE org_id = $1), 0)
          WHERE org_id = $1 AND NOT enabled AND disabled_reason = 'plan'`,
        [orgId],
      );
    },

    tick() {
      running ??= tickOnce().finally(() => {
        running = null;
      });
      return running;
    },

    start() {
      if (timer !== null || closed) return;
      timer = setInterval(() => {
        if (running !== null) return;
        siem.tick().catch((error: unknown) => {
          // A database outage fails every pass: one warning a minute says so.
          if (Date.now() - lastPassFailureLog < 60_000) return;
          lastPassFailureLog = Date.now();
          logger.warn({ code: (error as { code?: unknown } | null)?.code ?? null, message: error instanceof Error ? error.message.slice(0, 200) : null }, 'SIEM export pass failed; retrying every pass');
        });
      }, policy.intervalMs);
      timer.unref();
    },

    async close() {
      closed = true;
      if (timer !== null) clearInterval(timer);
      timer = null;
      await running?.catch(() => 0);
      await agent?.close();
    },
  };
  return siem;
}
