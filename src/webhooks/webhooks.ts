/**
 * Webhook subscriptions, fan-out and durable delivery.
 *
 * Security posture: endpoint URLs pass the SSRF check when saved and again at every connect
 * (a guarded DNS lookup, so a name rebound to a private address is refused); redirects are
 * never followed. Secrets are stored encrypted (AES-256-GCM, bound to the endpoint id) and
 * returned only once, at creation. Deliveries are signed (see signing.ts).
 *
 * Durability: every delivery and every attempt is a database row. A job on the queue only
 * says "try delivery X now"; the handler claims the row with a lease (a conditional UPDATE,
 * so two workers never send the same attempt at once), checks it is still pending and its
 * endpoint active, sends, records the attempt and schedules the next one. On start, pending
 * deliveries are re-enqueued, so a restart loses nothing, and a confirmed delivery is never
 * sent again. If a process dies after the receiver answered but before the attempt was
 * recorded, the delivery is sent once more after its lease expires, with the same webhook-id
 * (at-least-once; receivers de-duplicate on webhook-id).
 *
 * Exactly one delivery per event and endpoint: an event gets its id when it happens (before it is
 * journaled or spooled, platform/outbox.ts), and a delivery's id is derived from the event's id
 * and the endpoint's (md5, as a UUID), inserted with ON CONFLICT DO NOTHING. An event written
 * again after a crash or an outage thus finds its deliveries already there, and a delivery's
 * webhook-id (`msg_<delivery id>`) is the same for life.
 */
import { randomUUID } from 'node:crypto';
import { Agent, request as httpRequest } from 'undici';
import type { Database, Queryable } from '../platform/db/index.ts';
import { noWithin, type WithinWrite } from '../platform/db/within.ts';
import type { Logger } from '../platform/logger.ts';
import type { JobQueue } from '../platform/queue.ts';
import type { EventBus } from '../platform/events.ts';
import { decrypt, encrypt, encryptionKeyFrom } from '../platform/crypto.ts';
import { SvcError } from '../platform/errors.ts';
import { assertPublicUrl } from '../platform/ssrf.ts';
import { buildEnvelope, isWebhookEvent, type WebhookEvent } from './events.ts';
import { DEFAULT_POLICY, decide, type AttemptResult, type DeliveryPolicy, type StatusClass } from './retry-policy.ts';
import { generateSecret, signatureHeaders } from './signing.ts';
import { guardedConnector } from '../platform/ssrf.ts';
import { createFanOutGate } from './fan-out-gate.ts';
import { withDeadline } from '../platform/deadline.ts';
import { isRetryableWriteFailure, retryingLockConflicts } from '../platform/db/failures.ts';
import { uuidFromText } from '../platform/crypto.ts';
import type { Outbox } from '../platform/outbox.ts';
import { isUuid } from '../platform/uuid.ts';

const JOB = 'webhook.deliver';
/** The outbox kind of a webhook event (journal and spool). */
const SPOOL_KIND = 'webhook_event';
const CLEANUP_JOB = 'webhook.cleanup';
/** Finished deliveries (and their attempts) are kept this long. */
export const DELIVERY_RETENTION_DAYS = 30;
const DAY_MS = 86_400_000;
const MAX_ENDPOINTS_PER_ORG = 100;
const LEASE_MARGIN_MS = 30_000;
const EARLY_TOLERANCE_MS = 20;
const RESPONSE_BODY_LIMIT = 65_536;
/** A pending delivery this far past due has lost its job; the sweep queues it again. */
const SWEEP_GRACE_MS = 10_000;
const SWEEP_EVERY_MS = 15_000;
/** Longest an enqueue may wait on the queue (BullMQ retries forever while Redis is down). */
const ENQUEUE_DEADLINE_MS = 2_000;
const USER_AGENT = 'svc-webhooks/1';

export interface WebhookServices {
  readonly config: { readonly allowPrivateTargets: boolean; readonly apiEncryptionKey: string };
  readonly db: Database;
  readonly queue: JobQueue;
  readonly logger: Logger;
  /** Events on this bus become deliveries once started. */
  readonly events?: EventBus;
  /** Where events go while the database is unavailable (platform/outbox.ts). */
  readonly outbox?: Outbox;
}

export type EndpointState = 'active' | 'paused';

export interface WebhookEndpoint {
  id: string;
  url: string;
  events: WebhookEvent[];
  description: string | null;
  state: EndpointState;
  consecutive_failures: number;
  paused_at: string | null;
  paused_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface FailureSummary {
  webhook_id: string;
  state: EndpointState;
  consecutive_failures: number;
  since: string;
  counts: Record<StatusClass, number>;
  last_error: { at: string; delivery_id: string; status_class: StatusClass; status_code: number | null; error: string | null } | null;
  next_retry_at: string | null;
  deliveries: { pending: number; held: number; confirmed: number; exhausted: number };
}

export interface DeliveryView {
  id: string;
  event: string;
  state: 'pending' | 'held' | 'confirmed' | 'exhausted';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  created_at: string;
  completed_at: string | null;
}

export interface Webhooks {
  readonly policy: DeliveryPolicy;
  /**
   * Fans an event out to the org's active subscriptions and enqueues the deliveries. `eventId`
   * (a UUID) names the event: emitting it again creates no second delivery per endpoint.
   */
  emit(orgId: string, event: WebhookEvent, data: Record<string, unknown>, options?: { gatewayId?: string | null; at?: Date; eventId?: string }): Promise<{ deliveries: string[] }>;
  /**
   * The subscription writes take `within`, run in the write's transaction after it (the audit
   * entry): a failure of it rolls the write back, so the change and its entry are stored together
   * or not at all.
   */
  create(orgId: string, input: { url: string; events: WebhookEvent[]; description?: string | null }, within?: WithinWrite<WebhookEndpoint>): Promise<WebhookEndpoint & { secret: string }>;
  list(orgId: string): Promise<WebhookEndpoint[]>;
  get(orgId: string, id: string): Promise<WebhookEndpoint>;
  /** `within` runs also when nothing changes (the request is recorded as made). */
  update(orgId: string, id: string, changes: { url?: string; events?: WebhookEvent[]; description?: string | null; state?: EndpointState }, within?: WithinWrite<WebhookEndpoint>): Promise<WebhookEndpoint>;
  /** `within` gets the id of the subscription deleted. */
  remove(orgId: string, id: string, within?: WithinWrite<string>): Promise<void>;
  failureSummary(orgId: string, id: string, since?: Date): Promise<FailureSummary>;
  /** Recent deliveries of one endpoint, newest first. */
  deliveries(orgId: string, id: string, limit?: number): Promise<DeliveryView[]>;
  /** Deletes confirmed and exhausted deliveries older than the retention; returns how many. */
  cleanup(now?: Date): Promise<number>;
  /**
   * Re-enqueues every pending delivery (the server lifecycle calls it after start, without
   * letting a slow queue hold the start). Stops at the first enqueue the queue does not take in
   * time (a warning; the rows stay pending and the periodic sweep queues them as they fall due).
   * Returns how many were queued.
   */
  recover(): Promise<number>;
  /**
   * Starts the background work: the delivery and cleanup workers on the queue, the daily
   * cleanup schedule, the event-bus listener and the periodic sweep of overdue deliveries.
   * Idempotent; `close()` stops it.
   */
  start(): void;
  /**
   * Re-enqueues pending deliveries overdue by more than `graceMs` (their job was lost: Redis lost
   * its data, a worker died). Idempotent across instances: the job id is derived from the
   * delivery, its attempt and its due time, so the queue accepts it once; the claim's lease then
   * keeps any duplicate from sending twice. Returns how many were re-enqueued.
   */
  sweep(now?: Date, graceMs?: number): Promise<number>;
  /** (Re)starts the periodic sweep every `intervalMs` (default 15 s; start() runs it); close() stops it. */
  sweepEvery(intervalMs?: number): void;
  close(): Promise<void>;
}

interface EndpointRow {
  id: string;
  url: string;
  events: WebhookEvent[] | string;
  description: string | null;
  state: EndpointState;
  consecutive_failures: number;
  paused_at: Date | null;
  paused_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

const ENDPOINT_COLUMNS = 'id::text, url, events, description, state, consecutive_failures, paused_at, paused_reason, created_at, updated_at';

interface DeliveryJob {
  deliveryId: string;
  orgId: string;
}

/** Options of the webhooks capability (tests shorten the delivery policy). */
export interface WebhookOptions {
  policy?: Partial<DeliveryPolicy>;
  random?: () => number;
}

/**
 * The webhooks service. Building it starts nothing: `start()` (called once by the composition
 * root's lifecycle) registers the workers and the event listener.
 */
export function createWebhooks(services: WebhookServices, options: WebhookOptions = {}): Webhooks {
  return buildWebhooks(services, { ...DEFAULT_POLICY, ...options.policy }, options.random ?? Math.random);
}

function buildWebhooks(services: WebhookServices, policy: DeliveryPolicy, random: () => number): Webhooks {
  const { db, queue, logger } = services;
  const allowPrivate = services.config.allowPrivateTargets;
  const encryptionKey = encryptionKeyFrom(services.config.apiEncryptionKey);
  const agent = new Agent({
    // No connect timeout of undici's own beyond its default: the attempt's deadline in deliver()
    // bounds connect, headers and body together, and yields to pending I/O first.
    connect: guardedConnector({ allowPrivate }),
    keepAliveTimeout: 10_000,
    connections: 64,
  });
  let closed = false;
  let sweepTimer: NodeJS.Timeout | null = null;
  const inFlight = new Set<Promise<void>>();

  const secretContext = (endpointId: string) => `webhook-secret:${endpointId}`;

  const enqueue = async (job: DeliveryJob, delayMs: number, jobId: string) => {
    if (closed) return;
    await withDeadline(queue.enqueue(JOB, job, { delayMs: Math.max(0, Math.round(delayMs)), jobId }), ENQUEUE_DEADLINE_MS, 'webhook enqueue');
  };

  const findEndpoint = async (orgId: string, id: string): Promise<EndpointRow> => {
    if (!isUuid(id)) throw new SvcError('NOT_FOUND', { details: { resource: 'webhook' } });
    const result = await db.withOrg(orgId, (tx) => tx.query<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1`, [id]));
    const row = result.rows[0];
    if (row === undefined) throw new SvcError('NOT_FOUND', { details: { resource: 'webhook' } });
    return row;
  };

  /** Makes an endpoint's held deliveries pending again, in the caller's transaction (queued by enqueueReleased after its commit). */
  const releaseHeld = async (tx: Queryable, endpointId: string, now: Date): Promise<{ id: string; attempts: number; at: number }[]> => {
    const released = await tx.query<{ id: string; attempts: number }>(
      `UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = $2, lease_until = NULL
        WHERE endpoint_id = $1 AND state = 'held' RETURNING id::text, attempts`,
      [endpointId, now.toISOString()],
    );
    return released.rows.map((row) => ({ id: row.id, attempts: row.attempts, at: now.getTime() }));
  };

  /**
   * Queues deliveries released by a committed change. The change is stored: a queue failure is a
   * warning, not the answer's failure (the rows are pending and due, so the periodic sweep queues them).
   */
  const enqueueReleased = async (orgId: string, released: readonly { id: string; attempts: number; at: number }[]) => {
    try {
      for (const row of released) await enqueue({ deliveryId: row.id, orgId }, 0, `${row.id}_${row.attempts + 1}_${row.at}`);
    } catch (error) {
      logger.warn({ org_id: orgId, deliveries: released.length, message: error instanceof Error ? error.message.slice(0, 200) : null }, 'webhook enqueue failed; the sweep will retry');
    }
  };

  // ------------------------------------------------------------------------------ delivery

  const deliver = async (job: DeliveryJob): Promise<void> => {
    if (closed) return;
    const { deliveryId, orgId } = job;
    const startedAt = new Date();
    const leaseUntil = new Date(startedAt.getTime() + policy.timeoutMs + LEASE_MARGIN_MS);
    // One conditional UPDATE in a transaction of its own; it locks only the delivery's row (the
    // endpoint is read through FROM, not locked), so it waits rather than deadlocks in practice, and
    // the retry is defensive. A lost lock conflict rolls it back whole, nothing claimed, and it is run
    // again; the conditions are checked afresh, so a delivery claimed meanwhile by another job is not
    // claimed twice (it goes to reschedule). Thrown, the job ended with the delivery pending and
    // unqueued: sent only when the sweep found it, 10 s and more late.
    const claimed = await retryingLockConflicts(() => db.withOrg(orgId, (tx) =>
      tx.query<{ attempts: number; payload: string; endpoint_id: string; url: string; secret_ciphertext: string }>(
        `UPDATE webhook_deliveries d SET attempts = d.attempts + 1, lease_until = $3
           FROM webhook_endpoints e
          WHERE d.id = $1 AND e.id = d.endpoint_id AND e.state = 'active' AND d.state = 'pending'
            AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= $2)
            AND (d.lease_until IS NULL OR d.lease_until < $4)
        RETURNING d.attempts, d.payload, d.endpoint_id::text, e.url, e.secret_ciphertext`,
        [deliveryId, new Date(startedAt.getTime() + EARLY_TOLERANCE_MS).toISOString(), leaseUntil.toISOString(), startedAt.toISOString()],
      ),
    ));
    const claim = claimed.rows[0];
    if (claim === undefined) return reschedule(job, startedAt);

    let secret: string;
    try {
      secret = decrypt(encryptionKey, claim.secret_ciphertext, secretContext(claim.endpoint_id));
    } catch (error) {
      logger.error({ err: error, webhook_id: claim.endpoint_id }, 'webhook secret cannot be decrypted');
      return record(job, claim.endpoint_id, claim.attempts, startedAt, 0, { kind: 'error', code: 'ESECRET', name: null }, 'secret cannot be decrypted');
    }

    const messageId = `msg_${deliveryId.replaceAll('-', '')}`;
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'x-svc-delivery': deliveryId,
      ...signatureHeaders(secret, messageId, claim.payload, new Date()),
    };
    let result: AttemptResult;
    let errorText: string | null = null;
    const clock = performance.now();
    let deadline: NodeJS.Timeout | undefined;
    try {
      await assertPublicUrl(claim.url, { allowPrivate });
      const controller = new AbortController();
      // The timeout gives up one turn of the event loop late (setImmediate: after pending I/O).
      // When svc's own loop stalls (a loaded machine) past the deadline, the timer and the
      // receiver's answer are both ready; timers run first, and an answer that came in time was
      // counted a timeout and the delivery sent again. Now the answer is read first.
      deadline = setTimeout(() => setImmediate(() => controller.abort(new DOMException('the receiver did not answer in time', 'TimeoutError'))), policy.timeoutMs);
      const response = await httpRequest(claim.url, {
        method: 'POST',
        body: claim.payload,
        headers,
        dispatcher: agent,
        signal: controller.signal,
      });
      try {
        await response.body.dump({ limit: RESPONSE_BODY_LIMIT });
      } catch {
        // The status is what counts; a body cut short is not a failed delivery.
      }
      const retryAfter = response.headers['retry-after'];
      result = { kind: 'response', status: response.statusCode, retryAfter: typeof retryAfter === 'string' ? retryAfter : null };
      if (response.statusCode >= 300) errorText = `HTTP ${response.statusCode}`;
    } catch (error) {
      const failure = error as { code?: unknown; name?: unknown; message?: unknown };
      const code = error instanceof SvcError ? (error.code === 'TARGET_FORBIDDEN' ? 'ETARGETFORBIDDEN' : error.code) : typeof failure.code === 'string' ? failure.code : null;
      const cause = (error as { cause?: { code?: unknown } }).cause;
      const causeCode = typeof cause?.code === 'string' ? cause.code : null;
      result = { kind: 'error', code: code ?? causeCode, name: typeof failure.name === 'string' ? failure.name : null };
      errorText = `${code ?? causeCode ?? (typeof failure.name === 'string' ? failure.name : 'error')}`.slice(0, 200);
    } finally {
      clearTimeout(deadline);
    }
    return record(job, claim.endpoint_id, claim.attempts, startedAt, performance.now() - clock, result, errorText);
  };

  /** The claim failed: done, held, leased elsewhere, or too early. */
  const reschedule = async (job: DeliveryJob, now: Date): Promise<void> => {
    // The endpoint's state is read under a share lock on its row, and the delivery held in the same
    // transaction: a re-enable (which updates that row, then releases the held deliveries in its
    // transaction) either commits first, and the endpoint is read active, or waits for this commit
    // and releases the delivery held here. Read in a transaction of its own before the write, a
    // re-enable committing between the two left the delivery held for good.
    // A lost lock conflict rolls the transaction back whole and it is run again (it reads before it
    // writes, and holds only a delivery still pending): thrown, the delivery was neither held nor
    // queued again until the sweep, minutes later.
    const row = await retryingLockConflicts(() => db.withOrg(job.orgId, async (tx) => {
      const current = await tx.query<{ state: string; attempts: number; next_attempt_at: Date | null; lease_until: Date | null; endpoint_state: EndpointState }>(
        `SELECT d.state, d.attempts, d.next_attempt_at, d.lease_until, e.state AS endpoint_state
           FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE d.id = $1 FOR SHARE OF e`,
        [job.deliveryId],
      );
      const found = current.rows[0];
      if (found === undefined || found.state !== 'pending') return null;
      if (found.endpoint_state === 'paused') {
        await tx.query(`UPDATE webhook_deliveries SET state = 'held', lease_until = NULL WHERE id = $1 AND state = 'pending'`, [job.deliveryId]);
        return null;
      }
      return found;
    }));
    if (row === null) return;
    const due = Math.max(row.next_attempt_at?.getTime() ?? 0, row.lease_until?.getTime() ?? 0);
    await enqueue(job, Math.max(10, due - now.getTime()), `${job.deliveryId}_${row.attempts + 1}_${due}_${now.getTime()}`);
  };

  const record = async (
    job: DeliveryJob,
    endpointId: string,
    attempt: number,
    startedAt: Date,
    durationMs: number,
    result: AttemptResult,
    errorText: string | null,
  ): Promise<void> => {
    const now = Date.now();
    const decision = decide(result, attempt, policy, now, random);
    const statusCode = result.kind === 'response' ? result.status : null;
    const nextAttemptAt = decision.delayMs === null ? null : new Date(now + decision.delayMs);
    // One statement: the attempt row, the delivery's new state and the endpoint's failure counter.
    const endpointUpdate =
      decision.outcome === 'confirmed'
        ? `UPDATE webhook_endpoints SET consecutive_failures = 0 WHERE id = $4 AND consecutive_failures <> 0 RETURNING state`
        : decision.outcome === 'exhausted'
          ? `UPDATE webhook_endpoints
                SET consecutive_failures = consecutive_failures + 1,
                    state = CASE WHEN consecutive_failures + 1 >= $14 THEN 'paused' ELSE state END,
                    paused_at = CASE WHEN consecutive_failures + 1 >= $14 AND state = 'active' THEN now() ELSE paused_at END,
                    paused_reason = CASE WHEN consecutive_failures + 1 >= $14 AND state = 'active' THEN 'consecutive_failures' ELSE paused_reason END,
                    updated_at = now()
              WHERE id = $4 RETURNING state`
          : `SELECT state FROM webhook_endpoints WHERE id = $4`;
    // One statement in a transaction of its own, the decision fixed before it: a lost lock conflict
    // (a re-enable or another attempt's record updating the endpoint's row) rolls it back whole and
    // the same statement is run again, recording the attempt once. Thrown, the attempt was lost with
    // the delivery left leased: sent again by the sweep although the receiver had confirmed it.
    const recorded = await retryingLockConflicts(() => db.withOrg(job.orgId, (tx) =>
      tx.query<{ state: EndpointState }>(
        `WITH attempt AS (
           INSERT INTO webhook_attempts (id, org_id, delivery_id, endpoint_id, attempt, started_at, duration_ms, status_code, status_class, outcome, error)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (delivery_id, attempt) DO NOTHING),
         delivery AS (
           UPDATE webhook_deliveries
              SET state = $12, next_attempt_at = $13, lease_until = NULL, last_status = $8, last_error = $11,
                  completed_at = CASE WHEN $12 = 'pending' THEN NULL ELSE now() END
            WHERE id = $3)
         ${endpointUpdate}`,
        [
          randomUUID(), job.orgId, job.deliveryId, endpointId, attempt, startedAt.toISOString(), Math.round(durationMs), statusCode,
          decision.statusClass, decision.outcome, errorText, decision.outcome === 'retry' ? 'pending' : decision.outcome,
          nextAttemptAt?.toISOString() ?? null, ...(decision.outcome === 'exhausted' ? [policy.pauseAfterExhausted] : []),
        ],
      ),
    ));
    const paused = decision.outcome === 'exhausted' && recorded.rows[0]?.state === 'paused';
    if (paused) logger.warn({ webhook_id: endpointId, org_id: job.orgId }, 'webhook endpoint paused after repeated failures');
    if (decision.outcome === 'retry' && nextAttemptAt !== null) {
      await enqueue(job, decision.delayMs ?? 0, `${job.deliveryId}_${attempt + 1}_${nextAttemptAt.getTime()}`);
    }
  };

  let started = false;
  let cleanupTimer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  const start = () => {
    if (started || closed) return;
    started = true;
    queue.register<DeliveryJob>(
      JOB,
      async (job) => {
        const run = deliver(job).catch((error: unknown) => {
          logger.error({ err: error, delivery_id: job.deliveryId }, 'webhook delivery failed unexpectedly');
        });
        inFlight.add(run);
        try {
          await run;
        } finally {
          inFlight.delete(run);
        }
      },
      { concurrency: 16 },
    );

    queue.register(CLEANUP_JOB, async () => {
      const deleted = await webhooks.cleanup();
      if (deleted > 0) logger.info({ deleted }, 'old webhook deliveries deleted');
    });
    cleanupTimer = setInterval(() => {
      queue.enqueue(CLEANUP_JOB, {}, { jobId: `${CLEANUP_JOB}_${Math.floor(Date.now() / DAY_MS)}` }).catch((error: unknown) => {
        logger.error({ err: error }, 'could not enqueue webhook cleanup');
      });
    }, DAY_MS);
    cleanupTimer.unref();

    unsubscribe = services.events?.subscribe(async (event) => {
      if (!isWebhookEvent(event.event)) return;
      const admitted = gate.admit(event.orgId, event.event, event.data, event.at.getTime());
      if (!admitted.admit) return;
      const spooled: SpooledEvent = { id: randomUUID(), orgId: event.orgId, event: event.event, data: admitted.data, gatewayId: event.gatewayId, at: event.at.toISOString() };
      // On disk before the emitter answers (a SIGKILL then loses nothing); forgotten once the
      // deliveries are rows or the event is spooled.
      const journaled = outbox?.journal(SPOOL_KIND, spooled) ?? null;
      if (journaled !== null) event.hold(journaled.durable);
      let settled = true;
      try {
        // Behind events already spooled, so subscribers see them in order.
        if (outbox !== undefined && outbox.pending() > 0) {
          await outbox.append(SPOOL_KIND, spooled);
          return;
        }
        if (!(await gate.subscribed(event.orgId)).has(event.event)) return;
        await webhooks.emit(event.orgId, event.event, admitted.data, { gatewayId: event.gatewayId, at: event.at, eventId: spooled.id });
      } catch (error) {
        // A lock conflict (another writer's transaction) rolled the statement back whole: spooled like an outage, the
        // event is written by the next replay instead of being lost.
        if (outbox === undefined || !isRetryableWriteFailure(error)) throw error;
        settled = false;
        await outbox.append(SPOOL_KIND, spooled);
        settled = true;
      } finally {
        // A spool write that failed leaves the event in the journal for the next start.
        if (settled) journaled?.done();
      }
    });
    webhooks.sweepEvery();
  };

  const gate = createFanOutGate(async (orgId) => {
    const rows = await db.withOrg(orgId, (tx) => tx.query<{ events: string[] | string }>(`SELECT events FROM webhook_endpoints WHERE state = 'active'`));
    return new Set(rows.rows.flatMap((row) => (typeof row.events === 'string' ? (JSON.parse(row.events) as string[]) : row.events)));
  });
  interface SpooledEvent {
    /** The event's id, fixed when it happened (absent only in spools of older versions). */
    id?: string;
    orgId: string;
    event: WebhookEvent;
    data: Record<string, unknown>;
    gatewayId: string | null;
    at: string;
  }
  const outbox = services.outbox;
  // One org's events per replay call, fanned out in one statement (one transaction), so a call
  // repeated after an outage mid-replay never duplicates; a 10-minute outage's backlog is
  // written in hundreds of transactions, not tens of thousands.
  outbox?.register(
    SPOOL_KIND,
    async (records) => {
      const list = records as SpooledEvent[];
      if (list.length === 0) return;
      const orgId = list[0]!.orgId;
      const rows = list.map((record) => ({
        id: record.id ?? uuidFromText(JSON.stringify(record)),
        event: record.event,
        payload: JSON.stringify(buildEnvelope(orgId, record.event, record.data, record.gatewayId, new Date(record.at))),
        at: record.at,
      }));
      // The rows are inserted in the order of their ids (the conflict key): two writers that insert the same new deliveries
      // (a spool replayed twice at once) then wait for each other; in opposite orders each waited on a row the other had
      // inserted, and PostgreSQL rolled one back ("deadlock detected"). They are queued in the order their events happened.
      const inserted = await db.withOrg(orgId, (tx) =>
        tx.query<{ id: string }>(
          `WITH inserted AS (
             INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event, payload, state, next_attempt_at)
             SELECT md5(r.id || e.id::text)::uuid, $1, e.id, r.event, r.payload, 'pending', r.at
               FROM jsonb_to_recordset($2::jsonb) AS r(id text, event text, payload text, at timestamptz)
               JOIN webhook_endpoints e ON e.state = 'active' AND e.events @> jsonb_build_array(r.event)
              ORDER BY 1
             ON CONFLICT (id) DO NOTHING
             RETURNING id, next_attempt_at)
           SELECT id::text FROM inserted ORDER BY next_attempt_at, id`,
          [orgId, JSON.stringify(rows)],
        ),
      );
      try {
        for (const row of inserted.rows) await enqueue({ deliveryId: row.id, orgId }, 0, `${row.id}_1`);
      } catch (error) {
        logger.warn({ org_id: orgId, deliveries: inserted.rows.length, message: error instanceof Error ? error.message.slice(0, 200) : null }, 'webhook enqueue failed; the sweep will retry');
      }
    },
    { group: (record) => (record as SpooledEvent).orgId, batch: 100 },
  );

  // ------------------------------------------------------------------------------ API

  const webhooks: Webhooks = {
    policy,

    async emit(orgId, event, data, options = {}) {
      if (!isWebhookEvent(event)) throw new Error(`unknown webhook event ${String(event)}`);
      const at = options.at ?? new Date();
      const payload = JSON.stringify(buildEnvelope(orgId, event, data, options.gatewayId ?? null, at));
      const eventId = options.eventId ?? randomUUID();
      // In the order of their ids, as the outbox's writer inserts them (a replay of this event may run at the same time).
      const inserted = await db.withOrg(orgId, (tx) =>
        tx.query<{ id: string }>(
          `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event, payload, state, next_attempt_at)
           SELECT md5($5 || id::text)::uuid, $1, id, $2, $3, 'pending', $4 FROM webhook_endpoints
            WHERE state = 'active' AND events @> jsonb_build_array($2::text)
            ORDER BY 1
           ON CONFLICT (id) DO NOTHING
           RETURNING id::text`,
          [orgId, event, payload, at.toISOString(), eventId],
        ),
      );
      const ids = inserted.rows.map((row) => row.id);
      try {
        for (const id of ids) await enqueue({ deliveryId: id, orgId }, 0, `${id}_1`);
      } catch (error) {
        // The delivery rows are durable: the periodic sweep queues them once the queue is back.
        logger.warn({ org_id: orgId, deliveries: ids.length, message: error instanceof Error ? error.message.slice(0, 200) : null }, 'webhook enqueue failed; the sweep will retry');
      }
      return { deliveries: ids };
    },

    async create(orgId, input, within = noWithin) {
      await assertPublicUrl(input.url, { allowPrivate });
      const events = uniqueEvents(input.events);
      const id = randomUUID();
      const secret = generateSecret();
      const row = await db.withOrg(orgId, async (tx) => {
        const count = await tx.query<{ count: number }>('SELECT count(*)::int AS count FROM webhook_endpoints');
        if ((count.rows[0]?.count ?? 0) >= MAX_ENDPOINTS_PER_ORG) {
          throw new SvcError('VALIDATION_FAILED', { details: { reason: 'too_many_webhooks', limit: MAX_ENDPOINTS_PER_ORG } });
        }
        const inserted = await tx.query<EndpointRow>(
          `INSERT INTO webhook_endpoints (id, org_id, url, events, description, secret_ciphertext, state)
           VALUES ($1, $2, $3, $4, $5, $6, 'active') RETURNING ${ENDPOINT_COLUMNS}`,
          [id, orgId, input.url, JSON.stringify(events), input.description ?? null, encrypt(encryptionKey, secret, secretContext(id))],
        );
        const created = endpointView(inserted.rows[0]!);
        await within(tx, created);
        return created;
      });
      gate.forget(orgId);
      return { ...row, secret };
    },

    async list(orgId) {
      const result = await db.withOrg(orgId, (tx) => tx.query<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints ORDER BY created_at, id`));
      return result.rows.map(endpointView);
    },

    async get(orgId, id) {
      return endpointView(await findEndpoint(orgId, id));
    },

    async update(orgId, id, changes, within = noWithin) {
      if (changes.url !== undefined) {
        // An unknown endpoint is 404 before the URL is judged; the URL's DNS lookup runs before the
        // transaction (no network call while the endpoint's row is locked) and is made again at
        // every delivery, so an answer that changes later is refused then.
        await findEndpoint(orgId, id);
        await assertPublicUrl(changes.url, { allowPrivate });
      } else if (!isUuid(id)) {
        throw new SvcError('NOT_FOUND', { details: { resource: 'webhook' } });
      }
      const sets: string[] = [];
      const params: unknown[] = [id];
      const set = (column: string, value: unknown) => {
        params.push(value);
        sets.push(`${column} = $${params.length}`);
      };
      if (changes.url !== undefined) set('url', changes.url);
      if (changes.events !== undefined) set('events', JSON.stringify(uniqueEvents(changes.events)));
      if (changes.description !== undefined) set('description', changes.description);
      // The state the change is decided on (re-enable, pause or neither) is read in the change's
      // transaction with the row locked: a pause by the deliverer (or another PATCH) committed
      // between a read of its own and the write made a request for `active` leave the endpoint
      // paused, or answer and record a state that was no longer stored.
      // The deliveries held while the endpoint was paused are released in the re-enable's own
      // transaction: a lost lock conflict rolls back both, and the caller's retry of the whole call
      // (retryingLockConflicts) makes both again. Released in a transaction of their own after the
      // commit, a conflict there had the retry find the endpoint active already: the held deliveries
      // stayed held for good, and the re-enable was audited twice (review-37).
      const { view: updated, released } = await db.withOrg(orgId, async (tx) => {
        // FOR NO KEY UPDATE (the lock the UPDATE below takes anyway), never FOR UPDATE: each delivery
        // the fan-out inserts and each attempt the deliverer records checks its foreign key with FOR
        // KEY SHARE on this row, which FOR UPDATE blocks while the change waits for the chain head.
        // It still conflicts with the deliverer's FOR SHARE of the row (its hold of a retry).
        const current = await tx.query<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 FOR NO KEY UPDATE`, [id]);
        const before = current.rows[0];
        if (before === undefined) throw new SvcError('NOT_FOUND', { details: { resource: 'webhook' } });
        const reenable = changes.state === 'active' && before.state === 'paused';
        const stateSets =
          reenable
            ? [`state = 'active'`, 'consecutive_failures = 0', 'paused_at = NULL', 'paused_reason = NULL']
            : changes.state === 'paused' && before.state === 'active'
              ? [`state = 'paused'`, 'paused_at = now()', `paused_reason = 'manual'`]
              : [];
        if (sets.length === 0 && stateSets.length === 0) {
          const view = endpointView(before);
          await within(tx, view);
          return { view, released: [] };
        }
        const result = await tx.query<EndpointRow>(`UPDATE webhook_endpoints SET ${[...sets, ...stateSets, 'updated_at = now()'].join(', ')} WHERE id = $1 RETURNING ${ENDPOINT_COLUMNS}`, params);
        const row = result.rows[0];
        if (row === undefined) throw new SvcError('NOT_FOUND', { details: { resource: 'webhook' } });
        const view = endpointView(row);
        const released = reenable ? await releaseHeld(tx, id, new Date()) : [];
        await within(tx, view);
        return { view, released };
      });
      gate.forget(orgId);
      await enqueueReleased(orgId, released);
      return updated;
    },

    async remove(orgId, id, within = noWithin) {
      if (!isUuid(id)) throw new SvcError('NOT_FOUND', { details: { resource: 'webhook' } });
      // One statement decides: of concurrent deletes, only the one whose DELETE removed the row
      // succeeds; the others wait for it and find nothing (404), so one audit entry is written.
      await db.withOrg(orgId, async (tx) => {
        const deleted = await tx.query('DELETE FROM webhook_endpoints WHERE id = $1 RETURNING id', [id]);
        if (deleted.rowCount === 0) throw new SvcError('NOT_FOUND', { details: { resource: 'webhook' } });
        await within(tx, id);
      });
      gate.forget(orgId);
    },

    async failureSummary(orgId, id, since = new Date(Date.now() - 30 * 86_400_000)) {
      const endpoint = await findEndpoint(orgId, id);
      return db.withOrg(orgId, async (tx) => {
        const counts = await tx.query<{ status_class: StatusClass; count: number }>(
          `SELECT status_class, count(*)::int AS count FROM webhook_attempts WHERE endpoint_id = $1 AND started_at >= $2 GROUP BY status_class`,
          [id, since.toISOString()],
        );
        const lastError = await tx.query<{ started_at: Date; delivery_id: string; status_class: StatusClass; status_code: number | null; error: string | null }>(
          `SELECT started_at, delivery_id::text, status_class, status_code, error FROM webhook_attempts
            WHERE endpoint_id = $1 AND outcome <> 'confirmed' ORDER BY started_at DESC LIMIT 1`,
          [id],
        );
        const deliveries = await tx.query<{ state: string; count: number; next_retry_at: Date | null }>(
          `SELECT state, count(*)::int AS count, min(next_attempt_at) FILTER (WHERE state = 'pending') AS next_retry_at
             FROM webhook_deliveries WHERE endpoint_id = $1 GROUP BY state`,
          [id],
        );
        const summary: FailureSummary = {
          webhook_id: id,
          state: endpoint.state,
          consecutive_failures: endpoint.consecutive_failures,
          since: since.toISOString(),
          counts: { '2xx': 0, '3xx': 0, '4xx': 0, '429': 0, '5xx': 0, timeout: 0, network: 0, forbidden: 0 },
          last_error: null,
          next_retry_at: null,
          deliveries: { pending: 0, held: 0, confirmed: 0, exhausted: 0 },
        };
        for (const row of counts.rows) summary.counts[row.status_class] = row.count;
        for (const row of deliveries.rows) {
          summary.deliveries[row.state as keyof FailureSummary['deliveries']] = row.count;
          if (row.next_retry_at !== null) summary.next_retry_at = row.next_retry_at.toISOString();
        }
        const last = lastError.rows[0];
        if (last !== undefined) {
          summary.last_error = {
            at: last.started_at.toISOString(),
            delivery_id: last.delivery_id,
            status_class: last.status_class,
            status_code: last.status_code,
            error: last.error,
          };
        }
        return summary;
      });
    },

    async deliveries(orgId, id, limit = 50) {
      await findEndpoint(orgId, id);
      const result = await db.withOrg(orgId, (tx) =>
        tx.query<{ id: string; event: string; state: DeliveryView['state']; attempts: number; last_status: number | null; last_error: string | null; next_attempt_at: Date | null; created_at: Date; completed_at: Date | null }>(
          `SELECT id::text, event, state, attempts, last_status, last_error, next_attempt_at, created_at, completed_at
             FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY created_at DESC, id LIMIT $2`,
          [id, Math.min(Math.max(1, Math.floor(limit)), 200)],
        ),
      );
      return result.rows.map((row) => ({
        id: row.id,
        event: row.event,
        state: row.state,
        attempts: row.attempts,
        last_status: row.last_status,
        last_error: row.last_error,
        next_attempt_at: row.state === 'pending' ? (row.next_attempt_at?.toISOString() ?? null) : null,
        created_at: row.created_at.toISOString(),
        completed_at: row.completed_at?.toISOString() ?? null,
      }));
    },

    async cleanup(now = new Date()) {
      const cutoff = new Date(now.getTime() - DELIVERY_RETENTION_DAYS * DAY_MS);
      const result = await db.query(
        `DELETE FROM webhook_deliveries WHERE state IN ('confirmed', 'exhausted') AND completed_at < $1`,
        [cutoff.toISOString()],
      );
      return result.rowCount;
    },

    recover() {
      const run = (async () => {
        const pending = await db.query<{ id: string; org_id: string; attempts: number; due: Date | null }>(
          `SELECT id::text, org_id::text, attempts, greatest(next_attempt_at, lease_until) AS due
             FROM webhook_deliveries WHERE state = 'pending' ORDER BY next_attempt_at LIMIT 100000`,
        );
        const now = Date.now();
        let queued = 0;
        for (const row of pending.rows) {
          if (closed) break;
          const due = row.due?.getTime() ?? now;
          try {
            await enqueue({ deliveryId: row.id, orgId: row.org_id }, Math.max(0, due - now), `${row.id}_${row.attempts + 1}_${due}`);
          } catch (error) {
            // The rows are durable and stay pending: the periodic sweep queues each one once it is
            // overdue, so a queue that is slow or down loses nothing; waiting on it row by row
            // (ENQUEUE_DEADLINE_MS each) would only hold this loop for hours.
            logger.warn(
              { queued, left: pending.rows.length - queued, code: (error as { code?: unknown } | null)?.code ?? null, message: error instanceof Error ? error.message.slice(0, 200) : null },
              'webhook re-queue stopped at a queue failure; the sweep queues the remaining deliveries as they fall due',
            );
            break;
          }
          queued += 1;
        }
        return queued;
      })();
      // close() waits for it (it stops at the next row once closing).
      const settled = run.then(() => undefined, () => undefined);
      inFlight.add(settled);
      void settled.then(() => inFlight.delete(settled));
      return run;
    },

    async sweep(now = new Date(), graceMs = SWEEP_GRACE_MS) {
      if (closed) return 0;
      const overdue = await db.query<{ id: string; org_id: string; attempts: number; due: Date | null }>(
        `SELECT id::text, org_id::text, attempts, greatest(next_attempt_at, lease_until) AS due
           FROM webhook_deliveries
          WHERE state = 'pending' AND next_attempt_at < $1 AND (lease_until IS NULL OR lease_until < $1)
          ORDER BY next_attempt_at LIMIT 1000`,
        [new Date(now.getTime() - graceMs).toISOString()],
      );
      for (const row of overdue.rows) {
        const due = row.due?.getTime() ?? now.getTime();
        await enqueue({ deliveryId: row.id, orgId: row.org_id }, 0, `${row.id}_${row.attempts + 1}_${due}`);
      }
      return overdue.rows.length;
    },

    sweepEvery(intervalMs = SWEEP_EVERY_MS) {
      if (closed) return;
      if (sweepTimer !== null) clearInterval(sweepTimer);
      let running = false;
      sweepTimer = setInterval(() => {
        if (running) return;
        running = true;
        webhooks
          .sweep()
          .then((count) => {
            if (count > 0) logger.info({ pending: count }, 'overdue webhook deliveries re-enqueued');
          })
          .catch((error: unknown) => logger.warn({ code: (error as { code?: unknown } | null)?.code ?? null, message: error instanceof Error ? error.message.slice(0, 200) : null }, 'webhook sweep failed'))
          .finally(() => {
            running = false;
          });
      }, intervalMs);
      sweepTimer.unref();
    },

    start,

    async close() {
      if (closed) return;
      closed = true;
      clearInterval(cleanupTimer);
      if (sweepTimer !== null) clearInterval(sweepTimer);
      unsubscribe?.();
      await Promise.allSettled([...inFlight]);
      await agent.close();
    },
  };
  return webhooks;
}

function uniqueEvents(events: readonly string[]): WebhookEvent[] {
  const unique = [...new Set(events)];
  if (unique.length === 0 || !unique.every(isWebhookEvent)) throw new SvcError('VALIDATION_FAILED', { details: { field: 'events' } });
  return unique;
}

function endpointView(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    events: typeof row.events === 'string' ? (JSON.parse(row.events) as WebhookEvent[]) : row.events,
    description: row.description,
    state: row.state,
    consecutive_failures: row.consecutive_failures,
    paused_at: row.paused_at?.toISOString() ?? null,
    paused_reason: row.paused_reason,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
