/**
 * Grievances (EU AI Act Art. 85 complaints, LGPD Art. 18 petitions, CCPA consumer requests):
 * submitted → under_review (review) → resolved (upheld) | rejected (declined). Acknowledgment is
 * due 5 business days after submission (the review move acknowledges), the substantive response
 * 30 days after submission (the decision move answers). Overdue: acknowledgment or response
 * past its due date and not given — counted per org for the svc_grievances_overdue gauge.
 */
import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../platform/db/index.ts';
import { noWithin, type WithinWrite } from '../platform/db/within.ts';
import { SvcError } from '../platform/errors.ts';
import { isUuid } from '../platform/uuid.ts';
import { GRIEVANCE_ACKNOWLEDGE_BUSINESS_DAYS, GRIEVANCE_RESPONSE_DAYS, addBusinessDays, addCalendarDays } from './business-days.ts';
import { GRIEVANCE_MACHINE, nextState, type GrievanceMove, type GrievanceState } from './states.ts';

export const GRIEVANCE_CATEGORIES = ['automated_decision', 'data_protection', 'discrimination', 'transparency', 'safety', 'other'] as const;

export interface GrievanceInput {
  category: string;
  description: string;
  contact?: string;
  decision_id?: string;
}

export interface Grievance {
  id: string;
  state: GrievanceState;
  category: string;
  description: string;
  contact: string | null;
  decision_id: string | null;
  submitted_at: string;
  submitted_by: string;
  acknowledge_due_at: string;
  response_due_at: string;
  review_started_at: string | null;
  reviewed_by: string | null;
  decided_at: string | null;
  decided_by: string | null;
  outcome: 'upheld' | 'declined' | null;
  response: string | null;
  overdue: { acknowledgment: boolean; response: boolean };
  allowed_moves: GrievanceMove[];
}

interface GrievanceRow {
  id: string;
  state: GrievanceState;
  category: string;
  description: string;
  contact: string | null;
  decision_id: string | null;
  submitted_at: Date;
  submitted_by: string;
  acknowledge_due_at: Date;
  response_due_at: Date;
  review_started_at: Date | null;
  reviewed_by: string | null;
  decided_at: Date | null;
  decided_by: string | null;
  outcome: 'upheld' | 'declined' | null;
  response: string | null;
}

const COLUMNS = 'id::text, state, category, description, contact, decision_id, submitted_at, submitted_by, acknowledge_due_at, response_due_at, review_started_at, reviewed_by, decided_at, decided_by, outcome, response';
const iso = (value: Date | null) => (value === null ? null : value.toISOString());

function view(row: GrievanceRow, now: Date): Grievance {
  const open = row.state === 'submitted' || row.state === 'under_review';
  return {
    id: row.id,
    state: row.state,
    category: row.category,
    description: row.description,
    contact: row.contact,
    decision_id: row.decision_id,
    submitted_at: row.submitted_at.toISOString(),
    submitted_by: row.submitted_by,
    acknowledge_due_at: row.acknowledge_due_at.toISOString(),
    response_due_at: row.response_due_at.toISOString(),
    review_started_at: iso(row.review_started_at),
    reviewed_by: row.reviewed_by,
    decided_at: iso(row.decided_at),
    decided_by: row.decided_by,
    outcome: row.outcome,
    response: row.response,
    overdue: { acknowledgment: row.state === 'submitted' && now > row.acknowledge_due_at, response: open && now > row.response_due_at },
    allowed_moves: Object.keys(GRIEVANCE_MACHINE[row.state]) as GrievanceMove[],
  };
}

export interface Grievances {
  /** The write methods take `within`, run in their transaction after the write (the call's audit entry). */
  submit(orgId: string, input: GrievanceInput, actor: string, within?: WithinWrite<unknown>): Promise<Grievance>;
  get(orgId: string, id: string): Promise<Grievance | null>;
  review(orgId: string, id: string, actor: string, within?: WithinWrite<unknown>): Promise<Grievance>;
  decide(orgId: string, id: string, input: { outcome: 'upheld' | 'declined'; response: string }, actor: string, within?: WithinWrite<unknown>): Promise<Grievance>;
  list(orgId: string): Promise<Grievance[]>;
  /** Open grievances past a due date, per org, across all orgs (owner connection; the gauge). */
  overdueByOrg(): Promise<Array<{ orgId: string; acknowledgment: number; response: number }>>;
}


export function createGrievances(deps: { db: Database; now?: () => Date }): Grievances {
  const { db } = deps;
  const now = deps.now ?? (() => new Date());

  const read = async (tx: Queryable, id: string, lock: boolean): Promise<GrievanceRow> => {
    const rows = isUuid(id) ? await tx.query<GrievanceRow>(`SELECT ${COLUMNS} FROM compliance_grievances WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]) : { rows: [] };
    const row = rows.rows[0];
    if (row === undefined) throw new SvcError('NOT_FOUND', { details: { resource: 'grievance', id } });
    return row;
  };

  const move = (orgId: string, id: string, step: GrievanceMove, apply: (tx: Queryable, to: GrievanceState, at: Date) => Promise<GrievanceRow | undefined>, within: WithinWrite<unknown>) =>
    db.withOrg(orgId, async (tx) => {
      const row = await read(tx, id, true);
      const to = nextState(GRIEVANCE_MACHINE, 'grievance', row.state, step);
      const at = now();
      const updated = await apply(tx, to, at);
      if (updated === undefined) throw new SvcError('CONFLICT', { details: { resource: 'grievance', id } });
      const moved = view(updated, at);
      await within(tx, moved);
      return moved;
    });

  return {
    async submit(orgId, input, actor, within = noWithin) {
      const submittedAt = now();
      const rows = await db.withOrg(orgId, async (tx) => {
        const inserted = await tx.query<GrievanceRow>(
          `INSERT INTO compliance_grievances (org_id, id, state, category, description, contact, decision_id, submitted_at, submitted_by, acknowledge_due_at, response_due_at)
           VALUES ($1, $2, 'submitted', $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${COLUMNS}`,
          [
            orgId,
            randomUUID(),
            input.category,
            input.description,
            input.contact ?? null,
            input.decision_id ?? null,
            submittedAt.toISOString(),
            actor,
            addBusinessDays(submittedAt, GRIEVANCE_ACKNOWLEDGE_BUSINESS_DAYS).toISOString(),
            addCalendarDays(submittedAt, GRIEVANCE_RESPONSE_DAYS).toISOString(),
          ],
        );
        await within(tx, inserted.rows[0]);
        return inserted;
      });
      return view(rows.rows[0]!, submittedAt);
    },
    async get(orgId, id) {
      if (!isUuid(id)) return null;
      const rows = await db.withOrg(orgId, (tx) => tx.query<GrievanceRow>(`SELECT ${COLUMNS} FROM compliance_grievances WHERE id = $1`, [id]));
      return rows.rows[0] === undefined ? null : view(rows.rows[0], now());
    },
    review: (orgId, id, actor, within = noWithin) =>
      move(
        orgId,
        id,
        'review',
        async (tx, to, at) =>
          (await tx.query<GrievanceRow>(`UPDATE compliance_grievances SET state = $2, review_started_at = $3, reviewed_by = $4 WHERE id = $1 AND state = 'submitted' RETURNING ${COLUMNS}`, [id, to, at.toISOString(), actor])).rows[0],
        within,
      ),
    decide: (orgId, id, input, actor, within = noWithin) =>
      move(orgId, id, input.outcome === 'upheld' ? 'uphold' : 'decline', async (tx, to, at) =>
        (
          await tx.query<GrievanceRow>(
            `UPDATE compliance_grievances SET state = $2, decided_at = $3, decided_by = $4, outcome = $5, response = $6 WHERE id = $1 AND state = 'under_review' RETURNING ${COLUMNS}`,
            [id, to, at.toISOString(), actor, input.outcome, input.response],
          )
        ).rows[0],
      within,
      ),
    async list(orgId) {
      const rows = await db.withOrg(orgId, (tx) => tx.query<GrievanceRow>(`SELECT ${COLUMNS} FROM compliance_grievances ORDER BY submitted_at`));
      const at = now();
      return rows.rows.map((row) => view(row, at));
    },
    async overdueByOrg() {
      const rows = await db.query<{ org_id: string; acknowledgment: number; response: number }>(
        `SELECT org_id::text,
                count(*) FILTER (WHERE state = 'submitted' AND acknowledge_due_at < $1)::int AS acknowledgment,
                count(*) FILTER (WHERE response_due_at < $1)::int AS response
           FROM compliance_grievances WHERE state IN ('submitted', 'under_review') AND (acknowledge_due_at < $1 OR response_due_at < $1)
          GROUP BY org_id`,
        [now().toISOString()],
      );
      return rows.rows.map((row) => ({ orgId: row.org_id, acknowledgment: row.acknowledgment, response: row.response }));
    },
  };
}
