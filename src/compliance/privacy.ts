/**
 * Privacy endpoints' core (CCPA/CPRA, LGPD, GDPR Art. 20/21/22):
 *   - AI opt-outs: recorded per subject id (the customer's own identifier of a person), cached for
 *     24 hours (positive and negative answers) so the request path checks one in a cache lookup.
 *     Effect: a request carrying `X-Subject-ID` of an opted-out subject is marked (response header
 *     `X-AI-Opt-Out: honoured`) and chained in the audit log with its request id, so any automated
 *     decision on it is routed to human review (docs/compliance.md);
 *   - categories collected, processing confirmation and data-sharing information, derived at call
 *     time from the columns that really exist (information_schema), the org's row counts, and the
 *     providers and webhook receivers actually configured — nothing is hard-coded prose about data
 *     svc might not hold;
 *   - the portability export of one subject's data (by subject id and the session ids the
 *     customer associates with the subject);
 *   - the approval history: every approval svc records on the audit chain, with who and when.
 */
import { createHash } from 'node:crypto';
import type { Cache } from '../platform/cache.ts';
import type { Database, Queryable } from '../platform/db/index.ts';
import { noWithin, type WithinWrite } from '../platform/db/within.ts';
import { PROVIDER_CATALOGUE } from '../platform/providers.ts';

export const OPT_OUT_CACHE_TTL_MS = 24 * 3_600_000;

/**
 * What svc stores that can relate to a person, by table and column: the CCPA category
 * (Cal. Civ. Code §1798.140(v)(1)) and why svc keeps it. Only columns present in the schema
 * are reported (the derivation checks information_schema).
 */
export const PERSONAL_DATA_MAP: ReadonlyArray<{ table: string; column: string; category: string; reference: string; purpose: string; legalBasis: string }> = [
  { table: 'users', column: 'email', category: 'identifiers', reference: '1798.140(v)(1)(A)', purpose: 'dashboard sign-in of the org\'s staff', legalBasis: 'contract (LGPD Art. 7 V)' },
  { table: 'users', column: 'last_login_at', category: 'internet_or_network_activity', reference: '1798.140(v)(1)(F)', purpose: 'account security', legalBasis: 'legitimate interest (LGPD Art. 7 IX)' },
  { table: 'api_keys', column: 'last_used_at', category: 'internet_or_network_activity', reference: '1798.140(v)(1)(F)', purpose: 'credential hygiene', legalBasis: 'contract (LGPD Art. 7 V)' },
  { table: 'threat_events', column: 'session_id', category: 'internet_or_network_activity', reference: '1798.140(v)(1)(F)', purpose: 'security decisions on requests (no request content is stored)', legalBasis: 'legitimate interest: security (LGPD Art. 7 IX)' },
  { table: 'threat_events', column: 'threat_score', category: 'inferences', reference: '1798.140(v)(1)(K)', purpose: 'automated security decision about a request', legalBasis: 'legitimate interest: security (LGPD Art. 7 IX)' },
  { table: 'mcp_sessions', column: 'id', category: 'internet_or_network_activity', reference: '1798.140(v)(1)(F)', purpose: 'MCP session tracking', legalBasis: 'contract (LGPD Art. 7 V)' },
  { table: 'mcp_quarantine', column: 'original', category: 'sensitive_contents_of_communications', reference: '1798.140(ae)(1)(E)', purpose: 'tool output held for review because it scored as an attack', legalBasis: 'legitimate interest: security (LGPD Art. 7 IX)' },
  { table: 'ai_provenance', column: 'content_hash', category: 'internet_or_network_activity', reference: '1798.140(v)(1)(F)', purpose: 'provenance of AI-generated content (a hash, not the content)', legalBasis: 'legal obligation: AI transparency (LGPD Art. 7 II)' },
  { table: 'audit_log', column: 'actor', category: 'identifiers', reference: '1798.140(v)(1)(A)', purpose: 'tamper-evident audit trail of who did what', legalBasis: 'legal obligation (LGPD Art. 7 II)' },
  { table: 'compliance_grievances', column: 'contact', category: 'identifiers', reference: '1798.140(v)(1)(A)', purpose: 'answering a grievance', legalBasis: 'legal obligation (LGPD Art. 7 II)' },
  { table: 'compliance_appeals', column: 'contact', category: 'identifiers', reference: '1798.140(v)(1)(A)', purpose: 'human review of an appealed decision', legalBasis: 'legal obligation (LGPD Art. 7 II)' },
  { table: 'compliance_opt_outs', column: 'subject_id', category: 'identifiers', reference: '1798.140(v)(1)(A)', purpose: 'honouring an opt-out from automated decision-making', legalBasis: 'legal obligation (LGPD Art. 7 II)' },
];

/** Audit actions that record an approval (a privileged user accepting or deciding something). */
export const APPROVAL_ACTIONS: ReadonlyArray<{ action: string; kind: string }> = [
  { action: 'mcp.definition.approve', kind: 'mcp_tool_definition' },
  { action: 'mcp.quarantine.release', kind: 'mcp_quarantine_release' },
  { action: 'verification.policy.set', kind: 'verification_policy' },
  { action: 'verification.policy.reset', kind: 'verification_policy' },
  { action: 'config.thresholds.set', kind: 'detection_thresholds' },
  { action: 'mcp.authorization.set', kind: 'mcp_authorization_server' },
  { action: 'compliance.decision.explainability', kind: 'decision_explainability' },
  { action: 'compliance.appeal.resolve', kind: 'appeal_resolution' },
  { action: 'compliance.grievance.decide', kind: 'grievance_decision' },
  { action: 'compliance.model_catalog.register', kind: 'model_registration' },
];

export interface OptOut {
  subject_id: string;
  opted_out: true;
  reason: string | null;
  created_at: string;
  created_by: string;
  cache_ttl_s: number;
  effect: string;
}

const OPT_OUT_EFFECT = 'Requests that carry this subject in X-Subject-ID are answered with X-AI-Opt-Out: honoured and chained in the audit log (privacy.ai_opt_out.applied) with their request id, so automated decisions on them go to human review.';

export interface Privacy {
  /** `within` runs in the opt-out's transaction (the call's audit entry), given whether it was new. */
  optOut(orgId: string, subjectId: string, reason: string | undefined, actor: string, within?: WithinWrite<{ created: boolean }>): Promise<{ created: boolean; record: OptOut }>;
  /** The request path's check (cache first; the database on a miss; both answers cached 24 h). */
  isOptedOut(orgId: string, subjectId: string): Promise<boolean>;
  categoriesCollected(orgId: string): Promise<unknown>;
  processingConfirmation(orgId: string): Promise<unknown>;
  dataSharing(orgId: string): Promise<unknown>;
  portability(orgId: string, subject: { subjectId?: string; sessionIds: string[] }): Promise<Record<string, unknown>>;
  approvals(orgId: string, options: { limit: number; before?: number }): Promise<{ data: unknown[]; next_before: number | null }>;
}

interface Inventory {
  table: string;
  column: string;
  category: string;
  reference: string;
  purpose: string;
  legal_basis: string;
  rows: number;
}

export function createPrivacy(deps: { db: Database; cache: Cache; providerEnvKeys: Readonly<Record<string, string>>; flushEvidence: () => Promise<void> }): Privacy {
  const { db, cache } = deps;
  const cacheKey = (orgId: string, subjectId: string) => `${cache.prefix}optout:${orgId}:${createHash('sha256').update(subjectId).digest('hex')}`;

  /** Rows of the org per personal-data column that exists in this deployment's schema. */
  const inventory = async (orgId: string): Promise<Inventory[]> => {
    const present = await db.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = ANY($1)`,
      [[...new Set(PERSONAL_DATA_MAP.map((entry) => entry.table))]],
    );
    const exists = new Set(present.rows.map((row) => `${row.table_name}.${row.column_name}`));
    const entries = PERSONAL_DATA_MAP.filter((entry) => exists.has(`${entry.table}.${entry.column}`));
    const tables = [...new Set(entries.map((entry) => entry.table))];
    const counts = new Map<string, number>();
    await db.withOrg(orgId, async (tx) => {
      for (const table of tables) {
        // Table names come from PERSONAL_DATA_MAP (constants), never from the request.
        const result = await tx.query<{ rows: number }>(`SELECT count(*)::int AS rows FROM ${table}`);
        counts.set(table, result.rows[0]?.rows ?? 0);
      }
    });
    return entries.map((entry) => ({ table: entry.table, column: entry.column, category: entry.category, reference: entry.reference, purpose: entry.purpose, legal_basis: entry.legalBasis, rows: counts.get(entry.table) ?? 0 }));
  };

  const recipients = async (orgId: string) => {
    const configured = await db.withOrg(orgId, async (tx) => ({
      orgKeys: (await tx.query<{ provider: string; base_url: string | null }>('SELECT provider, base_url FROM provider_keys ORDER BY provider')).rows,
      webhooks: (await tx.query<{ url: string; events: string[]; state: string }>('SELECT url, events, state FROM webhook_endpoints ORDER BY created_at')).rows,
    }));
    // Built-in mock providers answer inside svc: nothing leaves the deployment.
    const providers = PROVIDER_CATALOGUE.filter((entry) => !entry.builtIn).flatMap((entry) => {
      const orgKey = configured.orgKeys.find((key) => key.provider === entry.id);
      const deployment = deps.providerEnvKeys[entry.id] !== undefined;
      if (orgKey === undefined && !deployment) return [];
      let host: string | null = null;
      if (orgKey?.base_url) {
        try {
          host = new URL(orgKey.base_url).host;
        } catch {
          host = null;
        }
      }
      return [{ recipient: entry.displayName, provider: entry.id, configured_by: orgKey !== undefined ? 'org_key' : 'deployment_key', endpoint_host: host, data_shared: ['completion messages (prompts)', 'tool definitions and grounding sources sent with them', 'model parameters'], purpose: 'generating the AI completions the org requests through the gateway' }];
    });
    const receivers = configured.webhooks.map((hook) => {
      let host = '';
      try {
        host = new URL(hook.url).host;
      } catch {
        host = 'invalid';
      }
      return { recipient: host, kind: 'webhook', state: hook.state, events: hook.events, data_shared: ['event envelopes: org id, gateway id, decision, score, pattern ids (no request content)'], purpose: 'notifications the org subscribed to' };
    });
    return { providers, receivers };
  };

  return {
    async optOut(orgId, subjectId, reason, actor, within = noWithin) {
      const result = await db.withOrg(orgId, async (tx: Queryable) => {
        const inserted = await tx.query<{ reason: string | null; created_at: Date; created_by: string }>(
          `INSERT INTO compliance_opt_outs (org_id, subject_id, reason, created_by) VALUES ($1, $2, $3, $4) ON CONFLICT (org_id, subject_id) DO NOTHING RETURNING reason, created_at, created_by`,
          [orgId, subjectId, reason ?? null, actor],
        );
        if (inserted.rows[0] !== undefined) {
          await within(tx, { created: true });
          return { created: true, row: inserted.rows[0] };
        }
        const existing = await tx.query<{ reason: string | null; created_at: Date; created_by: string }>('SELECT reason, created_at, created_by FROM compliance_opt_outs WHERE subject_id = $1', [subjectId]);
        await within(tx, { created: false });
        return { created: false, row: existing.rows[0]! };
      });
      await cache.set(cacheKey(orgId, subjectId), '1', OPT_OUT_CACHE_TTL_MS);
      return {
        created: result.created,
        record: { subject_id: subjectId, opted_out: true, reason: result.row.reason, created_at: result.row.created_at.toISOString(), created_by: result.row.created_by, cache_ttl_s: OPT_OUT_CACHE_TTL_MS / 1000, effect: OPT_OUT_EFFECT },
      };
    },
    async isOptedOut(orgId, subjectId) {
      const key = cacheKey(orgId, subjectId);
      const cached = await cache.get(key);
      if (cached !== null) return cached === '1';
      const found = await db.withOrg(orgId, (tx) => tx.query('SELECT 1 FROM compliance_opt_outs WHERE subject_id = $1', [subjectId]));
      const optedOut = found.rows.length > 0;
      await cache.set(key, optedOut ? '1' : '0', OPT_OUT_CACHE_TTL_MS);
      return optedOut;
    },
    async categoriesCollected(orgId) {
      await deps.flushEvidence();
      const items = await inventory(orgId);
      const byCategory = new Map<string, { category: string; ccpa_reference: string; sources: Array<Omit<Inventory, 'category' | 'reference'>> }>();
      for (const item of items) {
        const entry = byCategory.get(item.category) ?? { category: item.category, ccpa_reference: item.reference, sources: [] };
        entry.sources.push({ table: item.table, column: item.column, purpose: item.purpose, legal_basis: item.legal_basis, rows: item.rows });
        byCategory.set(item.category, entry);
      }
      return {
        categories: [...byCategory.values()].map((entry) => ({ ...entry, collected: entry.sources.some((source) => source.rows > 0) })),
        request_content_stored: false,
        sold: false,
        shared_for_cross_context_behavioral_advertising: false,
        retention: { audit_log_days: 2_555, threat_events: 'kept until an unlearning request or org deletion', mcp_quarantine: 'until released or unlearned' },
        derived_at: new Date().toISOString(),
      };
    },
    async processingConfirmation(orgId) {
      const items = await inventory(orgId);
      const org = await db.withOrg(orgId, (tx) => tx.query<{ name: string }>('SELECT name FROM orgs WHERE id = $1', [orgId]));
      const { providers } = await recipients(orgId);
      return {
        processing: items.some((item) => item.rows > 0),
        controller: org.rows[0]?.name ?? null,
        processor: 'svc (this deployment)',
        data: items.filter((item) => item.rows > 0).map((item) => ({ table: item.table, column: item.column, category: item.category, purpose: item.purpose, legal_basis: item.legal_basis, rows: item.rows })),
        international_transfer: providers.length > 0,
        lgpd_reference: 'Art. 18 I and Art. 19',
        confirmed_at: new Date().toISOString(),
      };
    },
    async dataSharing(orgId) {
      const { providers, receivers } = await recipients(orgId);
      return { recipients: [...providers.map((provider) => ({ kind: 'ai_provider', ...provider })), ...receivers], sold: false, lgpd_reference: 'Art. 18 VII', derived_at: new Date().toISOString() };
    },
    async portability(orgId, subject) {
      const sessions = subject.sessionIds;
      await deps.flushEvidence();
      const data = await db.withOrg(orgId, async (tx) => {
        const threats = sessions.length === 0 ? [] : (await tx.query('SELECT id::text, request_id, occurred_at, pillar, kind, threat_score, decision, patterns, session_id, gateway_id FROM threat_events WHERE session_id = ANY($1) ORDER BY occurred_at', [sessions])).rows;
        const mcpSessions = sessions.length === 0 ? [] : (await tx.query('SELECT id, role, created_at, last_heartbeat_at, expires_at, request_count FROM mcp_sessions WHERE id = ANY($1)', [sessions])).rows;
        const quarantine = sessions.length === 0 ? [] : (await tx.query('SELECT id::text, session_id, method, tool, original, findings, state, created_at FROM mcp_quarantine WHERE session_id = ANY($1)', [sessions])).rows;
        const subjectId = subject.subjectId;
        const optOut = subjectId === undefined ? [] : (await tx.query('SELECT subject_id, reason, created_at FROM compliance_opt_outs WHERE subject_id = $1', [subjectId])).rows;
        const grievances = subjectId === undefined ? [] : (await tx.query('SELECT id::text, state, category, description, submitted_at, outcome, response FROM compliance_grievances WHERE contact = $1 ORDER BY submitted_at', [subjectId])).rows;
        const appeals = subjectId === undefined ? [] : (await tx.query('SELECT decision_id, status, reason, filed_at, outcome, resolution FROM compliance_appeals WHERE contact = $1 ORDER BY filed_at', [subjectId])).rows;
        return { threat_events: threats, mcp_sessions: mcpSessions, mcp_quarantine: quarantine, ai_opt_out: optOut, grievances, appeals };
      });
      return { format: 'svc.portability.v1', subject_id: subject.subjectId ?? null, session_ids: sessions, generated_at: new Date().toISOString(), data };
    },
    async approvals(orgId, options) {
      const actions = APPROVAL_ACTIONS.map((entry) => entry.action);
      const rows = await db.withOrg(orgId, (tx) =>
        tx.query<{ seq: number; occurred_at: Date; actor: string; action: string; target: string | null; details: Record<string, unknown> }>(
          `SELECT seq, occurred_at, actor, action, target, details FROM audit_log WHERE action = ANY($1) AND outcome = 'success' ${options.before === undefined ? '' : 'AND seq < $3'} ORDER BY seq DESC LIMIT $2`,
          options.before === undefined ? [actions, options.limit] : [actions, options.limit, options.before],
        ),
      );
      const kinds = new Map(APPROVAL_ACTIONS.map((entry) => [entry.action, entry.kind]));
      const data = rows.rows.map((row) => ({ seq: Number(row.seq), approved_at: row.occurred_at.toISOString(), approved_by: row.actor, kind: kinds.get(row.action) ?? row.action, action: row.action, target: row.target, request_id: typeof row.details.request_id === 'string' ? row.details.request_id : null }));
      const last = data[data.length - 1];
      return { data, next_before: data.length === options.limit && last !== undefined ? last.seq : null };
    },
  };
}
