/**
 * CPU per provenance record's canonical form (RFC 8785), svc's `canonicalStatement` beside the
 * canonicalize library over the whole statement (what it did before), on the statement a JSON
 * completion of the gateway benchmark makes; checks first that both give the same text.
 * Alternating runs, the medians printed with the load average (a shared machine: noisy).
 *   npx tsx bench/provenance-canonical.ts
 */
import canonicalize from 'canonicalize';
import { loadavg } from 'node:os';
import { canonicalStatement, type ProvenanceStatement } from '../src/verification/provenance.ts';

const statement: ProvenanceStatement = {
  request_id: 'c0a8012e-8c3f-4b5e-9a7e-1f2d3c4b5a69',
  content_hash: 'a'.repeat(64),
  delivered: true,
  provider: 'openai',
  model: 'bench-model',
  streamed: false,
  sources: [],
  checks: { integrity: 'pass', structural: 'pass', constraint: 'pass', grounding: 'skipped' },
  passed: true,
  action: null,
  retried_from: null,
  risk_class: 'limited_risk',
  sb942_manifest_present: false,
};
const library = (each: ProvenanceStatement) => canonicalize(each) ?? '';
if (library(statement) !== canonicalStatement(statement)) throw new Error('canonicalStatement differs from the library');
const PER_RUN = 100_000;
const runs: Record<string, number[]> = { library: [], canonicalStatement: [] };
const load = () => loadavg().map((value) => Math.round(value * 100) / 100);
const loadStart = load();
for (let run = 0; run < 10; run++) {
  for (const [name, write] of [['library', library], ['canonicalStatement', canonicalStatement]] as const) {
    let length = 0;
    const start = process.cpuUsage();
    for (let index = 0; index < PER_RUN; index++) length += write(statement).length;
    const used = process.cpuUsage(start);
    if (length === 0) throw new Error('nothing written');
    runs[name]!.push((used.user + used.system) / PER_RUN);
  }
}
const median = (values: number[]) => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)]!;
process.stdout.write(`${JSON.stringify({ load_average_start: loadStart, us_per_statement: { library: Math.round(median(runs.library!) * 1000) / 1000, canonicalStatement: Math.round(median(runs.canonicalStatement!) * 1000) / 1000 }, load_average_end: load() })}\n`);
