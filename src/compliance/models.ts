/**
 * General-purpose AI model catalog (EU AI Act Art. 51–55) and the risk tolerance svc works to.
 * A model is presumed to carry systemic risk when its training compute is at least 10^25 FLOPs
 * (Art. 51(2)) or — svc's operational rule from the spec — it has at least 100 billion
 * parameters; such a model's answer lists the Article 55 obligations.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from '../platform/db/index.ts';
import { noWithin, type WithinWrite } from '../platform/db/within.ts';
import { SvcError } from '../platform/errors.ts';
import { isUuid } from '../platform/uuid.ts';

export const SYSTEMIC_RISK_FLOPS = 1e25;
export const SYSTEMIC_RISK_PARAMETERS = 1e11;

export const ARTICLE_55_OBLIGATIONS = [
  { id: 'art55_1a_model_evaluation', text: 'Perform model evaluation with standardised protocols and tools, including adversarial testing, to identify and mitigate systemic risks.' },
  { id: 'art55_1b_risk_mitigation', text: 'Assess and mitigate possible systemic risks at Union level, including their sources.' },
  { id: 'art55_1c_incident_reporting', text: 'Track, document and report serious incidents and possible corrective measures to the AI Office and national authorities without undue delay.' },
  { id: 'art55_1d_cybersecurity', text: 'Ensure an adequate level of cybersecurity protection for the model and its physical infrastructure.' },
] as const;

export interface ModelInput {
  name: string;
  provider: string;
  version?: string;
  training_flops?: number;
  parameters?: number;
  description?: string;
  intended_use?: string;
}

export interface CatalogModel {
  id: string;
  name: string;
  provider: string;
  version: string;
  training_flops: number | null;
  parameters: number | null;
  description: string | null;
  intended_use: string | null;
  systemic_risk: boolean;
  systemic_risk_reasons: string[];
  obligations: Array<{ id: string; text: string }>;
  registered_at: string;
  registered_by: string;
}

interface ModelRow {
  id: string;
  name: string;
  provider: string;
  version: string;
  training_flops: number | null;
  parameters: number | null;
  systemic_risk: boolean;
  details: { description?: string; intended_use?: string };
  registered_at: Date;
  registered_by: string;
}

export function systemicRiskReasons(input: { training_flops?: number | null; parameters?: number | null }): string[] {
  const reasons: string[] = [];
  if (input.training_flops != null && input.training_flops >= SYSTEMIC_RISK_FLOPS) reasons.push('training_compute_at_least_1e25_flops');
  if (input.parameters != null && input.parameters >= SYSTEMIC_RISK_PARAMETERS) reasons.push('parameters_at_least_100_billion');
  return reasons;
}

function view(row: ModelRow): CatalogModel {
  const reasons = systemicRiskReasons(row);
  return {
    id: row.id,
    name: row.name,
    provider: row.provider,
    version: row.version,
    training_flops: row.training_flops,
    parameters: row.parameters,
    description: row.details.description ?? null,
    intended_use: row.details.intended_use ?? null,
    systemic_risk: row.systemic_risk,
    systemic_risk_reasons: reasons,
    obligations: row.systemic_risk ? ARTICLE_55_OBLIGATIONS.map((item) => ({ ...item })) : [],
    registered_at: row.registered_at.toISOString(),
    registered_by: row.registered_by,
  };
}

const COLUMNS = 'id::text, name, provider, version, training_flops, parameters, systemic_risk, details, registered_at, registered_by';

export interface ModelCatalog {
  /** `within` runs in the registration's transaction, only when the model was registered (the call's audit entry). */
  register(orgId: string, input: ModelInput, actor: string, within?: WithinWrite<unknown>): Promise<CatalogModel>;
  list(orgId: string): Promise<CatalogModel[]>;
  get(orgId: string, id: string): Promise<CatalogModel | null>;
  /** The catalogued model a completion used (by provider and model name), if any. */
  find(orgId: string, provider: string, name: string): Promise<CatalogModel | null>;
}

export function createModelCatalog(db: Database): ModelCatalog {
  return {
    async register(orgId, input, actor, within = noWithin) {
      if (input.training_flops === undefined && input.parameters === undefined) {
        throw new SvcError('VALIDATION_FAILED', { message: 'give training_flops or parameters (or both): systemic risk is judged on them', details: { field: 'training_flops', reason: 'required' } });
      }
      const systemic = systemicRiskReasons(input).length > 0;
      const details = { ...(input.description === undefined ? {} : { description: input.description }), ...(input.intended_use === undefined ? {} : { intended_use: input.intended_use }) };
      const result = await db.withOrg(orgId, async (tx) => {
        const inserted = await tx.query<ModelRow>(
          `INSERT INTO compliance_models (org_id, id, name, provider, version, training_flops, parameters, systemic_risk, details, registered_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10) ON CONFLICT (org_id, name, version) DO NOTHING RETURNING ${COLUMNS}`,
          [orgId, randomUUID(), input.name, input.provider, input.version ?? '', input.training_flops ?? null, input.parameters ?? null, systemic, JSON.stringify(details), actor],
        );
        if (inserted.rows[0] !== undefined) await within(tx, inserted.rows[0]);
        return inserted;
      });
      const row = result.rows[0];
      if (row === undefined) throw new SvcError('CONFLICT', { message: 'a model with this name and version is already registered', details: { resource: 'model', name: input.name, version: input.version ?? '' } });
      return view(row);
    },
    async list(orgId) {
      const result = await db.withOrg(orgId, (tx) => tx.query<ModelRow>(`SELECT ${COLUMNS} FROM compliance_models ORDER BY registered_at DESC LIMIT 1000`));
      return result.rows.map(view);
    },
    async get(orgId, id) {
      if (!isUuid(id)) return null;
      const result = await db.withOrg(orgId, (tx) => tx.query<ModelRow>(`SELECT ${COLUMNS} FROM compliance_models WHERE id = $1`, [id]));
      return result.rows[0] === undefined ? null : view(result.rows[0]);
    },
    async find(orgId, provider, name) {
      const result = await db.withOrg(orgId, (tx) => tx.query<ModelRow>(`SELECT ${COLUMNS} FROM compliance_models WHERE provider = $1 AND name = $2 ORDER BY registered_at DESC LIMIT 1`, [provider, name]));
      return result.rows[0] === undefined ? null : view(result.rows[0]);
    },
  };
}
