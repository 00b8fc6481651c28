/**
 * Where an evidence chunk's CPU goes on the embedded engine (issue #39 item 3), per record, in
 * one process: the writer's whole flush of a 500-record chunk (statements, digests, one audit
 * entry, five COPYs, commit), the statements and digests alone (sanitizeJson, the record's
 * canonical form and SHA-256, the batch digest), and one audit entry in a transaction of its own
 * divided over the chunk's 500 records. Medians of 24 rounds after 6 of warm-up, with the load
 * average. The COPY itself: bench/evidence-copy.ts.
 *   npx tsx bench/evidence-parts.ts
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { createServices } from '../src/services.ts';
import { provenanceRecordDigest, provenanceBatchDigest } from '../src/verification/provenance.ts';
import { sanitizeJson } from '../src/platform/db/sanitize.ts';
import { benchConfig, discardedLogs } from './servers/svc-config.ts';
const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-parts-'));
const config = benchConfig({ DATABASE_URL: `pglite:${dataDir}/pglite`, DATA_DIR: dataDir, REDIS_URL: 'memory:', LOG_LEVEL: 'warn' });
const services = await createServices(config, { logDestination: discardedLogs(), verification: { provenance: { flushMs: 3_600_000, batch: 500, maxBacklog: 1e9 } } });
const { org } = await services.accounts.createOrg({ name: 'p', plan: 'enterprise' });
const rec = () => ({ requestId: `bench-core-${randomUUID()}`, contentHash: createHash('sha256').update(randomUUID()).digest('hex'), delivered: true, provider: 'openai', model: 'gpt-4o-mini', streamed: false, sources: [], checks: { integrity: 'pass', structural: 'pass' }, passed: true, action: null, retriedFrom: null, riskClass: 'limited_risk', sb942ManifestPresent: false, recordedAt: new Date().toISOString() });
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const flush: number[] = [], hash: number[] = [], audit: number[] = [];
for (let r = 0; r < 30; r++) {
  const recs = Array.from({ length: 500 }, rec);
  let c0 = cpu();
  const st = recs.map((x) => sanitizeJson({ request_id: x.requestId, content_hash: x.contentHash, delivered: x.delivered, provider: x.provider, model: x.model, streamed: x.streamed, sources: x.sources, checks: x.checks, passed: x.passed, action: x.action, retried_from: x.retriedFrom, risk_class: x.riskClass, sb942_manifest_present: x.sb942ManifestPresent }));
  for (const s of st) provenanceRecordDigest(s as never);
  provenanceBatchDigest(st as never);
  const h = cpu() - c0;
  c0 = cpu();
  await services.db.withOrg(org.id, (tx) => services.audit.appendMany(org.id, [{ actor: 'system:verification', action: 'bench', target: null, outcome: 'recorded', details: { records: 500 } }], { tx }));
  const a = cpu() - c0;
  c0 = cpu();
  for (const x of recs) services.verification.provenance.record(org.id, x as never);
  await services.verification.provenance.flush();
  const f = cpu() - c0;
  if (r >= 6) { flush.push(f / 500 * 1000); hash.push(h / 500 * 1000); audit.push(a / 500 * 1000); }
}
const med = (a: number[]) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)]!.toFixed(1);
console.log(JSON.stringify({ load: loadavg(), us_per_record: { whole_flush: med(flush), statement_and_digests: med(hash), one_audit_entry_in_own_tx_per_500: med(audit) } }));
await services.close();
rmSync(dataDir, { recursive: true, force: true });
