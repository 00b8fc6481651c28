/**
 * The multi-framework audit export (GET /api/v1/compliance/ai-audit-export): the org's audit
 * chain with its verification result, threat decisions, provenance records, grievances,
 * appeals, unlearning requests and the model catalog — each a part of a signed bundle
 * (export-signing.ts) — shaped for a framework:
 *   json         every part plus an `eu_ai_act` mapping of parts to articles;
 *   naisi        the same parts mapped to the NIST AI RMF functions (govern, map, measure,
 *                manage) that AI safety institutes' evaluations use;
 *   japan_ai_act the same parts mapped to Japan's AI Promotion Act (2025) duties;
 *   pdf          a readable report (pdf-lib) of the json bundle, which it carries verbatim.
 * Optional sections: `soc2` (FEATURE_SOC2_REPORTS) lists SOC 2 controls evidenced by svc's own
 * records; `hipaa` (FEATURE_HIPAA_BAA, Enterprise plan) the HIPAA technical safeguards. Each part
 * is capped at EXPORT_ROW_LIMIT rows (newest kept), and says so when it was cut.
 */
import { createHash } from 'node:crypto';
import { PDFDocument, StandardFonts, rgb, type PDFFont, type PDFPage } from 'pdf-lib';
import type { AuditLog } from '../audit/index.ts';
import type { Database } from '../platform/db/index.ts';
import { SvcError } from '../platform/errors.ts';
import { deriveSecret } from '../platform/secrets.ts';
import type { Decisions } from './decisions.ts';
import { PDF_BEGIN, PDF_END, deploymentKey, signBundle, type Bundle, type DeploymentKey } from './export-signing.ts';
import type { Grievances } from './grievances.ts';
import type { ModelCatalog } from './models.ts';
import { APPROVAL_ACTIONS } from './privacy.ts';
import type { Unlearning } from './unlearning.ts';

export const EXPORT_FORMATS = ['json', 'pdf', 'naisi', 'japan_ai_act'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const EXPORT_SECTIONS = ['soc2', 'hipaa'] as const;
export type ExportSection = (typeof EXPORT_SECTIONS)[number];
export const EXPORT_ROW_LIMIT = 10_000;

const EU_AI_ACT: Record<string, string[]> = {
  audit_chain: ['Art. 12 record-keeping', 'Art. 19 automatically generated logs', 'Art. 26(6) deployers keep logs'],
  threat_decisions: ['Art. 12', 'Art. 15 robustness and cybersecurity', 'Art. 86 explanation of decisions'],
  provenance: ['Art. 50(2) marking of AI-generated content', 'California SB 942'],
  grievances: ['Art. 85 right to lodge a complaint'],
  appeals: ['Art. 86', 'Art. 14 human oversight'],
  unlearning: ['GDPR Art. 17', 'CCPA 1798.105', 'LGPD Art. 18 VI'],
  model_catalog: ['Art. 51 classification of GPAI models with systemic risk', 'Art. 53', 'Art. 55'],
};
const NIST_RMF: Record<string, string[]> = {
  govern: ['audit_chain', 'grievances', 'appeals', 'model_catalog'],
  map: ['model_catalog', 'provenance'],
  measure: ['threat_decisions', 'provenance'],
  manage: ['threat_decisions', 'appeals', 'grievances', 'unlearning'],
};
const JAPAN_AI_ACT: Record<string, { duty: string; parts: string[] }> = {
  'Art. 7 (responsibilities of utilising businesses)': { duty: 'Cooperate with national measures; use AI appropriately', parts: ['audit_chain', 'model_catalog'] },
  'Art. 13 (guidelines for appropriate R&D and use)': { duty: 'Transparency, safety and security measures following government guidelines', parts: ['threat_decisions', 'provenance', 'appeals'] },
  'Art. 16 (investigation of incidents and rights infringements)': { duty: 'Information for government investigation and guidance', parts: ['audit_chain', 'threat_decisions', 'grievances', 'unlearning'] },
};

export interface ExportDeps {
  db: Database;
  audit: AuditLog;
  decisions: Decisions;
  grievances: Grievances;
  models: ModelCatalog;
  unlearning: Unlearning;
  secretKey: string;
  features: { soc2Reports: boolean; hipaaBaa: boolean };
  /** The org's effective plan (HIPAA needs Enterprise). */
  planOf: (orgId: string) => Promise<string>;
  /** Writes evidence still buffered off the request path before the export reads it. */
  flushEvidence: () => Promise<void>;
}

export interface ExportFile {
  bundle: Bundle;
  body: Buffer;
  mediaType: string;
  filename: string;
}

export interface AuditExporter {
  build(orgId: string, options: { format: ExportFormat; include: ExportSection[] }): Promise<ExportFile>;
  readonly publicKey: string;
  readonly keyId: string;
}

interface Limited<T> {
  rows: T[];
  truncated: boolean;
}

export function createAuditExporter(deps: ExportDeps): AuditExporter {
  const { db } = deps;
  const key: DeploymentKey = deploymentKey(createHash('sha256').update(deriveSecret(deps.secretKey, 'svc/audit-export-ed25519')).digest());

  const rows = async <T>(orgId: string, sql: string): Promise<Limited<T>> => {
    const result = await db.withOrg(orgId, (tx) => tx.query<T>(sql, [EXPORT_ROW_LIMIT + 1]));
    return { rows: result.rows.slice(0, EXPORT_ROW_LIMIT), truncated: result.rows.length > EXPORT_ROW_LIMIT };
  };
  const iso = (value: unknown) => (value instanceof Date ? value.toISOString() : value);
  const isoRows = <T extends Record<string, unknown>>(list: T[]) => list.map((row) => Object.fromEntries(Object.entries(row).map(([name, value]) => [name, iso(value)])));

  const soc2 = async (orgId: string, audit: { ok: boolean; checked: number }) => {
    const counts = await db.withOrg(orgId, async (tx) => ({
      keys: (await tx.query<{ scope: string; active: number; revoked: number }>(`SELECT scope, count(*) FILTER (WHERE revoked_at IS NULL)::int AS active, count(*) FILTER (WHERE revoked_at IS NOT NULL)::int AS revoked FROM api_keys GROUP BY scope ORDER BY scope`)).rows,
      threats: (await tx.query<{ decision: string; events: number }>(`SELECT decision, count(*)::int AS events FROM threat_events GROUP BY decision ORDER BY decision`)).rows,
      webhooks: (await tx.query<{ state: string; endpoints: number }>(`SELECT state, count(*)::int AS endpoints FROM webhook_endpoints GROUP BY state`)).rows,
      approvals: (await tx.query<{ approvals: number }>(`SELECT count(*)::int AS approvals FROM audit_log WHERE action = ANY($1::text[])`, [APPROVAL_ACTIONS.map((entry) => entry.action)])).rows[0]?.approvals ?? 0,
    }));
    return {
      framework: 'SOC 2 (AICPA Trust Services Criteria 2017)',
      controls: [
        { id: 'CC6.1', name: 'Logical access security', evidence: { api_keys_by_scope: counts.keys, keys_stored_as: 'hashes only', provider_keys: 'AES-256-GCM at rest' } },
        { id: 'CC6.6', name: 'Protection against threats from outside the system boundary', evidence: { threat_decisions_by_action: counts.threats } },
        { id: 'CC7.2', name: 'Monitoring of system components for anomalies', evidence: { threat_decisions_by_action: counts.threats, alert_rules: 'ops/prometheus/alerts.yml' } },
        { id: 'CC7.3', name: 'Evaluation of security events', evidence: { webhook_endpoints_by_state: counts.webhooks } },
        { id: 'CC8.1', name: 'Change management', evidence: { approvals_recorded: counts.approvals } },
        { id: 'CC4.1', name: 'Monitoring of controls (audit trail integrity)', evidence: { audit_chain_ok: audit.ok, records_checked: audit.checked } },
      ],
    };
  };

  const hipaa = (audit: { ok: boolean; checked: number }) => ({
    framework: 'HIPAA Security Rule, 45 CFR 164.312 technical safeguards',
    safeguards: [
      { id: '164.312(a)(1)', name: 'Access control', implementation: 'Per-org API keys with read/write/admin scopes; row-level security isolates each org in the database.' },
      { id: '164.312(b)', name: 'Audit controls', implementation: 'Per-org HMAC hash chain of every configuration change and compliance call, signed checkpoints, 7-year retention.', evidence: { audit_chain_ok: audit.ok, records_checked: audit.checked } },
      { id: '164.312(c)(1)', name: 'Integrity', implementation: 'SHA-256 provenance record of every AI completion; tamper-evident audit chain.' },
      { id: '164.312(d)', name: 'Person or entity authentication', implementation: 'API keys stored as hashes, compared in constant time; dashboard users with argon2 passwords and TOTP.' },
      { id: '164.312(e)(1)', name: 'Transmission security', implementation: 'TLS is terminated by the deployment in front of svc; upstream providers are called over HTTPS.' },
    ],
    business_associate_agreement: 'Available on the Enterprise plan.',
  });

  const shaped = (format: ExportFormat, names: string[]) => {
    if (format === 'naisi') return { framework: 'naisi', nist_ai_rmf: Object.fromEntries(Object.entries(NIST_RMF).map(([fn, parts]) => [fn, parts.filter((part) => names.includes(part))])) };
    if (format === 'japan_ai_act') {
      return {
        framework: 'japan_ai_act',
        act: 'Act on the Promotion of Research, Development and Utilization of AI-Related Technologies (Japan, 2025)',
        articles: Object.fromEntries(Object.entries(JAPAN_AI_ACT).map(([article, entry]) => [article, { duty: entry.duty, parts: entry.parts.filter((part) => names.includes(part)) }])),
      };
    }
    return { framework: 'eu_ai_act', eu_ai_act: Object.fromEntries(names.filter((name) => EU_AI_ACT[name] !== undefined).map((name) => [name, EU_AI_ACT[name]!])) };
  };

  return {
    publicKey: key.publicKey,
    keyId: key.keyId,
    async build(orgId, options) {
      if (options.include.includes('soc2') && !deps.features.soc2Reports) {
        throw new SvcError('FEATURE_DISABLED', { message: 'The SOC 2 section needs FEATURE_SOC2_REPORTS=true on this deployment.', details: { feature: 'FEATURE_SOC2_REPORTS', section: 'soc2' } });
      }
      if (options.include.includes('hipaa')) {
        if (!deps.features.hipaaBaa) throw new SvcError('FEATURE_DISABLED', { message: 'The HIPAA section needs FEATURE_HIPAA_BAA=true on this deployment.', details: { feature: 'FEATURE_HIPAA_BAA', section: 'hipaa' } });
        const plan = await deps.planOf(orgId);
        if (plan !== 'enterprise') throw new SvcError('PLAN_REQUIRED', { message: 'The HIPAA section (BAA) is part of the Enterprise plan.', details: { required_plan: 'enterprise', plan, section: 'hipaa' } });
      }
      await deps.flushEvidence();
      const verification = await deps.audit.verify(orgId, { level: 'full' });
      const records = await rows<Record<string, unknown>>(orgId, 'SELECT seq, occurred_at, actor, action, target, outcome, details, prev_hash, hash FROM audit_log ORDER BY seq DESC LIMIT $1');
      const threats = await rows<Record<string, unknown>>(orgId, 'SELECT id::text, request_id, occurred_at, pillar, kind, threat_score, decision, patterns, session_id, gateway_id, details FROM threat_events ORDER BY occurred_at DESC, id DESC LIMIT $1');
      const provenance = await rows<Record<string, unknown>>(orgId, 'SELECT request_id, created_at, content_hash, delivered, provider, model, streamed, passed, action, risk_class, sb942_manifest_present, audit_seq, audit_hash FROM ai_provenance ORDER BY created_at DESC LIMIT $1');
      const parts: Array<[string, unknown]> = [
        ['audit_chain', { verification, records: isoRows(records.rows.reverse()), truncated: records.truncated }],
        ['threat_decisions', { events: isoRows(threats.rows), truncated: threats.truncated }],
        ['provenance', { records: isoRows(provenance.rows), truncated: provenance.truncated }],
        ['grievances', { grievances: await deps.grievances.list(orgId) }],
        ['appeals', { appeals: await deps.decisions.appeals(orgId) }],
        ['unlearning', { requests: await deps.unlearning.list(orgId) }],
        ['model_catalog', { models: await deps.models.list(orgId) }],
      ];
      if (options.include.includes('soc2')) parts.push(['soc2', await soc2(orgId, verification)]);
      if (options.include.includes('hipaa')) parts.push(['hipaa', hipaa(verification)]);
      const names = parts.map(([name]) => name);
      const mapping = shaped(options.format, names);
      parts.push(['framework_mapping', mapping]);
      const generatedAt = new Date().toISOString();
      const bundle = signBundle(key, { framework: mapping.framework, org_id: orgId, generated_at: generatedAt }, parts);
      const json = Buffer.from(JSON.stringify(bundle), 'utf8');
      const stamp = generatedAt.replace(/[:.]/g, '-');
      if (options.format !== 'pdf') return { bundle, body: json, mediaType: 'application/json', filename: `svc-ai-audit-export-${mapping.framework}-${stamp}.json` };
      return { bundle, body: await renderPdf(bundle, json), mediaType: 'application/pdf', filename: `svc-ai-audit-export-${stamp}.pdf` };
    },
  };
}

/** Text the standard PDF fonts can show (WinAnsi): anything else becomes '?'. */
function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?');
}

async function renderPdf(bundle: Bundle, json: Buffer): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  pdf.setTitle('svc AI audit export');
  pdf.setProducer('svc');
  pdf.setCreationDate(new Date(bundle.manifest.generated_at));
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const mono = await pdf.embedFont(StandardFonts.Courier);
  let page: PDFPage = pdf.addPage([595, 842]);
  let y = 800;
  const line = (text: string, options: { font?: PDFFont; size?: number; indent?: number } = {}) => {
    const size = options.size ?? 10;
    if (y < 50) {
      page = pdf.addPage([595, 842]);
      y = 800;
    }
    page.drawText(printable(text).slice(0, 110), { x: 40 + (options.indent ?? 0), y, size, font: options.font ?? font, color: rgb(0, 0, 0) });
    y -= size + 6;
  };
  const manifest = bundle.manifest;
  line('svc AI audit export', { font: bold, size: 18 });
  line(`Organization: ${manifest.org_id}`);
  line(`Generated: ${manifest.generated_at}    Framework: ${manifest.framework}`);
  line(`Signed with Ed25519 deployment key ${manifest.deployment_key.key_id}`);
  line(`Public key: ${manifest.deployment_key.public_key}`, { font: mono, size: 8 });
  y -= 6;
  line('Parts and their SHA-256 (RFC 8785 canonical JSON)', { font: bold, size: 12 });
  for (const part of manifest.parts) {
    line(part.name, { font: bold });
    line(part.sha256, { font: mono, size: 8, indent: 12 });
  }
  y -= 6;
  const chain = (bundle.parts.audit_chain as { verification: { ok: boolean; checked: number }; records: unknown[] }) ?? null;
  line('Summary', { font: bold, size: 12 });
  if (chain !== null) line(`Audit chain: ${chain.verification.ok ? 'verified' : 'BROKEN'} (${chain.verification.checked} records checked, ${chain.records.length} exported)`);
  const count = (name: string, field: string) => ((bundle.parts[name] as Record<string, unknown[]> | undefined)?.[field] ?? []).length;
  line(`Threat decisions: ${count('threat_decisions', 'events')}    Provenance records: ${count('provenance', 'records')}`);
  line(`Grievances: ${count('grievances', 'grievances')}    Appeals: ${count('appeals', 'appeals')}    Unlearning requests: ${count('unlearning', 'requests')}    Models: ${count('model_catalog', 'models')}`);
  y -= 6;
  line('Verify offline: svc compliance verify-export <this file>', { font: mono, size: 9 });
  line('The signed JSON bundle is embedded in this file; the pages above summarise it.', { size: 9 });
  // The bundle, verbatim and uncompressed, for `svc compliance verify-export`; also attached
  // (compressed) so PDF readers list it as an attachment.
  const carrier = pdf.context.stream(Buffer.concat([Buffer.from(PDF_BEGIN, 'latin1'), json, Buffer.from(PDF_END, 'latin1')]), { Type: 'EmbeddedFile', Subtype: 'application#2Fjson' });
  pdf.catalog.set(pdf.context.obj('SvcAuditExport'), pdf.context.register(carrier));
  await pdf.attach(json, 'svc-ai-audit-export.json', { mimeType: 'application/json', description: 'Signed svc AI audit export bundle', creationDate: new Date(manifest.generated_at) });
  return Buffer.from(await pdf.save({ useObjectStreams: false }));
}
