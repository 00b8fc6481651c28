/**
 * The embedded engine's COPY as the evidence writer sends it (issue #39 item 3): svc's CPU per
 * COPY statement of 1, 100 and 500 evidence rows inside an org transaction, sent two ways in
 * interleaved rounds in one process:
 *   extended  RESET ROLE, the COPY as an extended query (parse, describe, bind, execute, sync),
 *             SET LOCAL ROLE: how `copyRows` sent it before speed-ev39;
 *   script    the three as one simple-protocol script (`copyRows` now).
 * PGlite runs on svc's own thread, so a statement's CPU is also how long it holds the event
 * loop on an idle core: the figure to compare when a COPY grows or shrinks. Medians over rounds,
 * with the load average.
 *   npx tsx bench/evidence-copy.ts [--quick]
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import type { Transaction } from '@electric-sql/pglite';
import { copyField } from '../src/platform/db/index.ts';
import { withEmbeddedDatabase } from './embedded-db.ts';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 6 : 14;
const SIZES = [1, 100, 500];
const COLUMNS = ['org_id', 'created_at', 'request_id', 'content_hash', 'delivered', 'provider', 'model', 'streamed', 'sources', 'checks', 'passed', 'action', 'retried_from', 'risk_class', 'sb942_manifest_present', 'audit_seq', 'audit_hash'];
const COPY = `COPY ai_provenance (${COLUMNS.join(', ')}) FROM '/dev/blob'`;

await withEmbeddedDatabase('copy', async ({ pglite }) => {
  const orgId = randomUUID();
  let sequence = 0;
  // A completion's evidence row as the writer formats it (provenance.ts, copyText).
  const rows = (count: number) => {
    let text = '';
    for (let index = 0; index < count; index++) {
      sequence += 1;
      text += `${orgId}\t2026-12-02T00:00:00.000Z\tbench-${sequence}-${randomUUID()}\t${'a'.repeat(64)}\tt\topenai\tgpt-4o-mini\tf\t${copyField('[]')}\t${copyField('{"integrity":"pass","structural":"pass"}')}\tt\t\\N\t\\N\tlimited_risk\tf\t1\t${'b'.repeat(64)}\n`;
    }
    return text;
  };
  const ways: Record<string, (tx: Transaction, text: string) => Promise<unknown>> = {
    extended: async (tx, text) => {
      await tx.exec('RESET ROLE');
      await tx.query(COPY, [], { blob: new Blob([text]) });
      await tx.exec('SET LOCAL ROLE svc_app');
    },
    script: (tx, text) => tx.exec(`RESET ROLE; ${COPY}; SET LOCAL ROLE svc_app`, { blob: new Blob([text]) }),
  };
  const cpuMs = () => {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1000;
  };
  const figures: Record<string, number[]> = {};
  for (let round = -2; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? Object.entries(ways) : Object.entries(ways).reverse();
    for (const size of SIZES) {
      for (const [name, send] of order) {
        const statements = size === 1 ? 20 : size === 100 ? 5 : 1;
        const texts = Array.from({ length: statements }, () => rows(size));
        let used = 0;
        await pglite.transaction(async (tx) => {
          await tx.query(`SELECT set_config('app.org_id', $1, true)`, [orgId]);
          await tx.exec('SET LOCAL ROLE svc_app');
          for (const text of texts) {
            const started = cpuMs();
            await send(tx, text);
            used += cpuMs() - started;
          }
        });
        if (round >= 0) (figures[`${name}_${size}`] ??= []).push(used / statements);
      }
    }
  }
  const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
  const result: Record<string, unknown> = { load_average: loadavg().map((value) => Math.round(value * 100) / 100), rounds: ROUNDS, cpu_ms_per_copy_statement: {} };
  for (const size of SIZES) {
    (result.cpu_ms_per_copy_statement as Record<string, unknown>)[`${size}_rows`] = {
      extended: Math.round(median(figures[`extended_${size}`]!) * 1000) / 1000,
      script: Math.round(median(figures[`script_${size}`]!) * 1000) / 1000,
      script_over_extended_per_round: Math.round(median(figures[`script_${size}`]!.map((value, index) => value / figures[`extended_${size}`]![index]!)) * 1000) / 1000,
    };
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
});
