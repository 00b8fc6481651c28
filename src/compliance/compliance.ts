/**
 * The compliance capability's core: threats read API, decisions (explainability, appeals, risk
 * assessment, explanations), grievances, the model catalog — built once by the composition root
 * with explicit dependencies. Every call of a compliance endpoint is chained in the org's audit
 * log through `record` (the routes plugin calls it once per call, refused calls included).
 *
 * Also owns the gauges `svc_grievances_overdue{org_id,due}` (open grievances past their
 * acknowledgment or response due date) and `svc_unlearning_overdue{org_id}` (unlearning requests
 * not completed within 30 days), read from the database at scrape time, so every replica reports
 * the same figure (the cluster merge takes the maximum).
 */
import { Gauge } from 'prom-client';
import type { AuditEntryInput, AuditLog } from '../audit/index.ts';
import type { Cache } from '../platform/cache.ts';
import type { Database, Queryable } from '../platform/db/index.ts';
import type { Logger } from '../platform/logger.ts';
import type { Metrics } from '../platform/metrics.ts';
import type { JobQueue } from '../platform/queue.ts';
import { createAuditExporter, type AuditExporter } from './audit-export.ts';
import { createDecisions, type Decisions } from './decisions.ts';
import { createGrievances, type Grievances } from './grievances.ts';
import { createModelCatalog, type ModelCatalog } from './models.ts';
import { createPrivacy, type Privacy } from './privacy.ts';
import { createThreats, type Threats } from './threats.ts';
import { riskTolerance, type ToleranceEntry } from './tolerance.ts';
import { createUnlearning, type Unlearning, type UnlearningDeps } from './unlearning.ts';

export interface ComplianceDeps {
  db: Database;
  cache: Cache;
  queue: JobQueue;
  audit: AuditLog;
  /** Derives the deployment's Ed25519 export signing key. */
  secretKey: string;
  /** FEATURE_SOC2_REPORTS and FEATURE_HIPAA_BAA (audit export sections). */
  features: { soc2Reports: boolean; hipaaBaa: boolean };
  /** The org's effective plan (the HIPAA section needs Enterprise). */
  planOf: (orgId: string) => Promise<string>;
  /** Providers with a deployment-wide key (data-sharing information). */
  providerEnvKeys: Readonly<Record<string, string>>;
  logger: Logger;
  metrics?: Metrics;
  /**
   * Writes the evidence still buffered off the request path (threat events, provenance records),
   * so a decision id answered a moment ago can be looked up at once.
   */
  flushEvidence?: () => Promise<void>;
  /** Test seam: the clock of the grievance and unlearning due dates. */
  now?: () => Date;
  /** Test seams of the unlearning purge (a crash after a step, the retry delay). */
  unlearning?: Pick<UnlearningDeps, 'afterStep' | 'retryBackoffMs'>;
}

export interface Compliance {
  readonly threats: Threats;
  readonly decisions: Decisions;
  readonly grievances: Grievances;
  readonly models: ModelCatalog;
  readonly privacy: Privacy;
  readonly unlearning: Unlearning;
  readonly exporter: AuditExporter;
  riskTolerance(orgId: string): Promise<{ thresholds: ToleranceEntry[]; measured_at: string }>;
  /** Appends one entry to the org's audit chain (one per compliance call); in `options.tx` when given (the call's write). */
  record(orgId: string, entry: AuditEntryInput, options?: { tx?: Queryable }): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export const GRIEVANCES_OVERDUE_METRIC = 'svc_grievances_overdue';
export const UNLEARNING_OVERDUE_METRIC = 'svc_unlearning_overdue';

export function createCompliance(deps: ComplianceDeps): Compliance {
  const { db, audit } = deps;
  const threats = createThreats(db, deps.flushEvidence);
  const models = createModelCatalog(db);
  const flushEvidence = deps.flushEvidence ?? (async () => {});
  const decisions = createDecisions({ db, threats, models, flushEvidence });
  const privacy = createPrivacy({ db, cache: deps.cache, providerEnvKeys: deps.providerEnvKeys, flushEvidence: deps.flushEvidence ?? (async () => {}) });
  const unlearning = createUnlearning({
    db,
    cache: deps.cache,
    queue: deps.queue,
    audit,
    logger: deps.logger,
    ...(deps.now === undefined ? {} : { now: deps.now }),
    ...(deps.flushEvidence === undefined ? {} : { flushEvidence: deps.flushEvidence }),
    ...deps.unlearning,
  });
  const grievances = createGrievances({ db, ...(deps.now === undefined ? {} : { now: deps.now }) });

  if (deps.metrics !== undefined && deps.metrics.registry.getSingleMetric(GRIEVANCES_OVERDUE_METRIC) === undefined) {
    const logger = deps.logger;
    new Gauge({
      name: GRIEVANCES_OVERDUE_METRIC,
      help: 'Open grievances past their acknowledgment (5 business days) or response (30 days) due date, per org.',
      labelNames: ['org_id', 'due'] as const,
      registers: [deps.metrics.registry],
      aggregator: 'max',
      async collect() {
        this.reset();
        try {
          for (const row of await grievances.overdueByOrg()) {
            this.set({ org_id: row.orgId, due: 'acknowledgment' }, row.acknowledgment);
            this.set({ org_id: row.orgId, due: 'response' }, row.response);
          }
        } catch (error) {
          logger.warn({ err: error }, 'svc_grievances_overdue could not be read');
        }
      },
    });
    new Gauge({
      name: UNLEARNING_OVERDUE_METRIC,
      help: 'Unlearning requests not completed within their 30-day service level, per org.',
      labelNames: ['org_id'] as const,
      registers: [deps.metrics.registry],
      aggregator: 'max',
      async collect() {
        this.reset();
        try {
          const rows = await db.query<{ org_id: string; overdue: number }>(
            `SELECT org_id::text, count(*)::int AS overdue FROM compliance_unlearning WHERE state IN ('queued', 'running', 'failed') AND due_at < $1 GROUP BY org_id`,
            [(deps.now?.() ?? new Date()).toISOString()],
          );
          for (const row of rows.rows) this.set({ org_id: row.org_id }, row.overdue);
        } catch (error) {
          logger.warn({ err: error }, 'svc_unlearning_overdue could not be read');
        }
      },
    });
  }

  const exporter = createAuditExporter({ db, audit, decisions, grievances, models, unlearning, secretKey: deps.secretKey, features: deps.features, planOf: deps.planOf, flushEvidence });

  return {
    threats,
    decisions,
    grievances,
    models,
    privacy,
    unlearning,
    exporter,
    riskTolerance: (orgId) => riskTolerance({ db, ...(deps.metrics === undefined ? {} : { metrics: deps.metrics }) }, orgId),
    async record(orgId, entry, options = {}) {
      await audit.append(orgId, entry, options);
    },
    async start() {
      const resumed = await unlearning.start();
      if (resumed > 0) deps.logger.info({ resumed }, 'unlearning requests re-enqueued');
    },
    async close() {},
  };
}
