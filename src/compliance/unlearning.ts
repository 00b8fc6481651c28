/**
 * Unlearning (GDPR Art. 17, CCPA §1798.105, LGPD Art. 18 VI; spec: 30-day service level): a
 * request is stored, then purged in the background through the job queue (BullMQ on Redis, the
 * in-process queue embedded). What svc holds about a subject is keyed by the session
 * (conversation) ids the customer names and by the subject id itself:
 *   threat_events rows of those sessions, MCP sessions and quarantined tool outputs of those
 *   sessions, the detection session state in the cache (recent prompt fragments and counters),
 *   and the subject's contact on grievances and appeals (redacted; the records stay, a legal
 *   duty). svc holds no embeddings, vectors or fine-tune datasets (each purge states so) and never
 *   touches upstream model weights. Prompts are not stored; the analysis cache holds verdicts
 *   keyed by a hash of content for at most 10 minutes.
 *
 * Safety: each step runs in a transaction under the org (row-level security) with an explicit
 * org_id condition too, locks the request row and records the step's result in the same
 * transaction, so a purge that stops half-way (crash, restart, database error) resumes at the
 * first step not recorded and never repeats or skips one. A restart re-enqueues every request
 * still queued or running (`recover`). Completion appends one audit entry (with the counts) and
 * stores its seq and hash on the request.
 */
import { randomUUID } from 'node:crypto';
import type { AuditLog } from '../audit/index.ts';
import type { Cache } from '../platform/cache.ts';
import type { Database, Queryable } from '../platform/db/index.ts';
import { noWithin, type WithinWrite } from '../platform/db/within.ts';
import { SvcError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { JobQueue } from '../platform/queue.ts';
import { isUuid } from '../platform/uuid.ts';
import { UNLEARNING_SERVICE_LEVEL_DAYS, addCalendarDays } from './business-days.ts';
import type { UnlearningState } from './states.ts';

export const UNLEARNING_JOB = 'compliance-unlearning';

export const UNLEARNING_STEPS = ['threat_events', 'mcp_quarantine', 'mcp_sessions', 'session_cache', 'subject_contacts', 'embeddings_and_vectors', 'fine_tune_datasets'] as const;
export type UnlearningStep = (typeof UNLEARNING_STEPS)[number];

export interface UnlearningInput {
  subject_id?: string;
  session_ids?: string[];
}

export interface StepResult {
  done: true;
  removed: number;
  at: string;
  note?: string;
}

export interface UnlearningRequest {
  id: string;
  state: UnlearningState;
  subject_id: string | null;
  session_ids: string[];
  requested_at: string;
  requested_by: string;
  started_at: string | null;
  completed_at: string | null;
  steps: Partial<Record<UnlearningStep, StepResult>>;
  pending_steps: UnlearningStep[];
  attempts: number;
  last_error: string | null;
  service_level: { days: number; due_at: string; breached: boolean };
  upstream_model_weights: 'not_touched';
  audit: { seq: number; hash: string } | null;
}

interface Row {
  id: string;
  state: UnlearningState;
  subject_id: string | null;
  session_ids: string[];
  requested_at: Date;
  requested_by: string;
  due_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  steps: Partial<Record<UnlearningStep, StepResult>>;
  attempts: number;
  last_error: string | null;
  audit_seq: number | null;
  audit_hash: string | null;
}

const COLUMNS = 'id::text, state, subject_id, session_ids, requested_at, requested_by, due_at, started_at, completed_at, steps, attempts, last_error, audit_seq, audit_hash';

function view(row: Row, now: Date): UnlearningRequest {
  const completedAt = row.completed_at;
  return {
    id: row.id,
    state: row.state,
    subject_id: row.subject_id,
    session_ids: row.session_ids,
    requested_at: row.requested_at.toISOString(),
    requested_by: row.requested_by,
    started_at: row.started_at?.toISOString() ?? null,
    completed_at: completedAt?.toISOString() ?? null,
    steps: row.steps,
    pending_steps: UNLEARNING_STEPS.filter((step) => row.steps[step] === undefined),
    attempts: row.attempts,
    last_error: row.last_error,
    service_level: { days: UNLEARNING_SERVICE_LEVEL_DAYS, due_at: row.due_at.toISOString(), breached: (completedAt ?? now) > row.due_at },
    upstream_model_weights: 'not_touched',
    audit: row.audit_seq === null || row.audit_hash === null ? null : { seq: Number(row.audit_seq), hash: row.audit_hash },
  };
}

export interface UnlearningDeps {
  db: Database;
  cache: Cache;
  queue: JobQueue;
  audit: AuditLog;
  logger: Logger;
  now?: () => Date;
  /** Writes evidence still buffered off the request path, so the purge sees every row already answered for. */
  flushEvidence?: () => Promise<void>;
  /** Test seam: called after each step is recorded; throwing stops the purge there (a crash). */
  afterStep?: (step: UnlearningStep) => void;
  /** Base delay of the queue's retry after a failed run (default 60 s). */
  retryBackoffMs?: number;
}

export interface Unlearning {
  /** `within` runs in the request's transaction (the call's audit entry); the job is enqueued after it commits. */
  request(orgId: string, input: UnlearningInput, actor: string, within?: WithinWrite<unknown>): Promise<UnlearningRequest>;
  get(orgId: string, id: string): Promise<UnlearningRequest | null>;
  list(orgId: string): Promise<UnlearningRequest[]>;
  /** Registers the queue handler and re-enqueues every request still queued or running. */
  start(): Promise<number>;
}

export function createUnlearning(deps: UnlearningDeps): Unlearning {
  const { db, cache, queue, audit, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const backoffMs = deps.retryBackoffMs ?? 60_000;

  const enqueue = (orgId: string, id: string, fresh: boolean) =>
    queue.enqueue(UNLEARNING_JOB, { orgId, id }, { jobId: fresh ? `unlearning:${id}` : `unlearning:${id}:${Date.now()}`, attempts: 5, backoffMs });

  /** One step's purge inside the request's transaction; returns how many items it removed. */
  const purge = async (tx: Queryable, orgId: string, row: Row, step: UnlearningStep): Promise<{ removed: number; note?: string }> => {
    const sessions = row.session_ids;
    switch (step) {
      case 'threat_events':
        return sessions.length === 0 ? { removed: 0 } : { removed: (await tx.query('DELETE FROM threat_events WHERE org_id = $1 AND session_id = ANY($2)', [orgId, sessions])).rowCount };
      case 'mcp_quarantine':
        return sessions.length === 0 ? { removed: 0 } : { removed: (await tx.query('DELETE FROM mcp_quarantine WHERE org_id = $1 AND session_id = ANY($2)', [orgId, sessions])).rowCount };
      case 'mcp_sessions':
        return sessions.length === 0 ? { removed: 0 } : { removed: (await tx.query('DELETE FROM mcp_sessions WHERE org_id = $1 AND id = ANY($2)', [orgId, sessions])).rowCount };
      case 'session_cache': {
        // Detection's per-session state (src/detection/session.ts): request counter and recent prompt fragments.
        for (const session of sessions) {
          for (const kind of ['sess', 'frag']) await cache.del(`${cache.prefix}det:${kind}:${orgId}:${session}`);
        }
        return { removed: sessions.length * 2, note: 'session counters and prompt fragments of each session (cache keys deleted)' };
      }
      case 'subject_contacts': {
        if (row.subject_id === null) return { removed: 0 };
        const grievances = await tx.query('UPDATE compliance_grievances SET contact = NULL WHERE org_id = $1 AND contact = $2', [orgId, row.subject_id]);
        const appeals = await tx.query('UPDATE compliance_appeals SET contact = NULL WHERE org_id = $1 AND contact = $2', [orgId, row.subject_id]);
        return { removed: grievances.rowCount + appeals.rowCount, note: 'contact redacted on grievances and appeals; the records stay (legal duty to answer them); the opt-out, if any, stays so it keeps being honoured' };
      }
      case 'embeddings_and_vectors':
        return { removed: 0, note: 'svc stores no embeddings or vector indexes (RAG sources are hashed per request, never stored)' };
      case 'fine_tune_datasets':
        return { removed: 0, note: 'svc holds no fine-tune datasets; upstream model weights are not changed' };
    }
  };

  const run = async ({ orgId, id }: { orgId: string; id: string }): Promise<void> => {
    await deps.flushEvidence?.();
    const started = await db.withOrg(orgId, async (tx) => {
      const rows = await tx.query<Row>(`SELECT ${COLUMNS} FROM compliance_unlearning WHERE id = $1 AND org_id = $2 FOR UPDATE`, [id, orgId]);
      const row = rows.rows[0];
      if (row === undefined || row.state === 'completed') return false;
      await tx.query(`UPDATE compliance_unlearning SET state = 'running', started_at = COALESCE(started_at, $2), attempts = attempts + 1 WHERE id = $1`, [id, now().toISOString()]);
      return true;
    });
    if (!started) return;
    try {
      for (const step of UNLEARNING_STEPS) {
        const ran = await db.withOrg(orgId, async (tx) => {
          const rows = await tx.query<Row>(`SELECT ${COLUMNS} FROM compliance_unlearning WHERE id = $1 AND org_id = $2 FOR UPDATE`, [id, orgId]);
          const row = rows.rows[0];
          if (row === undefined || row.steps[step] !== undefined) return false;
          const result = await purge(tx, orgId, row, step);
          const recorded: StepResult = { done: true, removed: result.removed, at: now().toISOString(), ...(result.note === undefined ? {} : { note: result.note }) };
          await tx.query(`UPDATE compliance_unlearning SET steps = steps || $2::jsonb WHERE id = $1`, [id, JSON.stringify({ [step]: recorded })]);
          return true;
        });
        if (ran) deps.afterStep?.(step);
      }
      await db.withOrg(orgId, async (tx) => {
        const rows = await tx.query<Row>(`SELECT ${COLUMNS} FROM compliance_unlearning WHERE id = $1 AND org_id = $2 FOR UPDATE`, [id, orgId]);
        const row = rows.rows[0];
        if (row === undefined || row.state === 'completed') return;
        const completedAt = now();
        const counts = Object.fromEntries(UNLEARNING_STEPS.map((step) => [step, row.steps[step]?.removed ?? 0]));
        const record = await audit.append(
          orgId,
          {
            actor: 'system:unlearning',
            action: 'compliance.unlearning.completed',
            target: id,
            outcome: 'success',
            details: { unlearning_id: id, removed: counts, sessions: row.session_ids.length, subject: row.subject_id !== null, within_service_level: completedAt <= row.due_at, upstream_model_weights: 'not_touched' },
          },
          { tx },
        );
        // An entry without an id of its own is always chained (append answers null only for a replayed id).
        if (record === null) throw new Error('the completion audit entry was not chained');
        await tx.query(`UPDATE compliance_unlearning SET state = 'completed', completed_at = $2, audit_seq = $3, audit_hash = $4, last_error = NULL WHERE id = $1`, [id, completedAt.toISOString(), record.seq, record.hash]);
      });
    } catch (error) {
      const message = error instanceof Error ? error.message.slice(0, 500) : 'unknown error';
      await db.withOrg(orgId, (tx) => tx.query('UPDATE compliance_unlearning SET last_error = $2 WHERE id = $1', [id, message])).catch(() => undefined);
      logger.warn({ org_id: orgId, unlearning_id: id, err: error }, 'unlearning purge stopped; it resumes on the next attempt or restart');
      throw error;
    }
  };

  return {
    async request(orgId, input, actor, within = noWithin) {
      const sessions = [...new Set(input.session_ids ?? [])];
      if (input.subject_id === undefined && sessions.length === 0) throw new SvcError('VALIDATION_FAILED', { message: 'give subject_id, session_ids or both', details: { field: 'subject_id', reason: 'required' } });
      const requestedAt = now();
      const rows = await db.withOrg(orgId, async (tx) => {
        const inserted = await tx.query<Row>(
          `INSERT INTO compliance_unlearning (org_id, id, subject_id, session_ids, state, requested_at, requested_by, due_at) VALUES ($1, $2, $3, $4::jsonb, 'queued', $5, $6, $7) RETURNING ${COLUMNS}`,
          [orgId, randomUUID(), input.subject_id ?? null, JSON.stringify(sessions), requestedAt.toISOString(), actor, addCalendarDays(requestedAt, UNLEARNING_SERVICE_LEVEL_DAYS).toISOString()],
        );
        await within(tx, inserted.rows[0]);
        return inserted;
      });
      const row = rows.rows[0]!;
      await enqueue(orgId, row.id, true);
      return view(row, requestedAt);
    },
    async get(orgId, id) {
      if (!isUuid(id)) return null;
      const rows = await db.withOrg(orgId, (tx) => tx.query<Row>(`SELECT ${COLUMNS} FROM compliance_unlearning WHERE id = $1`, [id]));
      return rows.rows[0] === undefined ? null : view(rows.rows[0], now());
    },
    async list(orgId) {
      const rows = await db.withOrg(orgId, (tx) => tx.query<Row>(`SELECT ${COLUMNS} FROM compliance_unlearning ORDER BY requested_at`));
      const at = now();
      return rows.rows.map((row) => view(row, at));
    },
    async start() {
      queue.register<{ orgId: string; id: string }>(UNLEARNING_JOB, (data) => run(data), { concurrency: 1 });
      const open = await db.query<{ org_id: string; id: string }>(`SELECT org_id::text, id::text FROM compliance_unlearning WHERE state IN ('queued', 'running') ORDER BY requested_at`);
      for (const row of open.rows) await enqueue(row.org_id, row.id, false);
      return open.rows.length;
    },
  };
}
