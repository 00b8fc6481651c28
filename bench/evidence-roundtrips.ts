/**
 * What an org transaction's set-up costs on the embedded engine (issue #39 item 3, speed-ev40):
 * svc's CPU for an empty transaction, and for the evidence flush's own statements, sent as
 *   extended  `SELECT set_config($1)` and `SET LOCAL ROLE` as two extended queries (each a
 *             parse, describe, bind, describe, execute and sync: six calls into the engine);
 *   script    both as one simple-protocol script (one call).
 * Interleaved rounds in one process, medians, with the load average. PGlite runs on svc's own
 * thread, so this CPU is also how long the event loop is held.
 *   npx tsx bench/evidence-roundtrips.ts
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import type { Transaction } from '@electric-sql/pglite';
import { withEmbeddedDatabase } from './embedded-db.ts';

await withEmbeddedDatabase('rt', async ({ db, pglite }) => {
  const orgId = randomUUID();
  const ZERO = '0'.repeat(64);
  await db.query(`INSERT INTO orgs (id, tag, name, plan) VALUES ($1, 'bench001', 'bench', 'enterprise')`, [orgId]);
  const ways: Record<string, (tx: Transaction) => Promise<unknown>> = {
    empty: async () => {},
    extended: async (tx) => {
      await tx.query(`SELECT set_config('app.org_id', $1, true)`, [orgId]);
      await tx.query('SET LOCAL ROLE svc_app');
    },
    script: (tx) => tx.exec(`SELECT set_config('app.org_id', '${orgId}', true); SET LOCAL ROLE svc_app`),
    head_extended: async (tx) => {
      await tx.query(`SELECT set_config('app.org_id', $1, true)`, [orgId]);
      await tx.query('SET LOCAL ROLE svc_app');
      await tx.query(`INSERT INTO audit_chain_heads AS h (org_id, seq, hash) VALUES ($1, 0, $2) ON CONFLICT (org_id) DO UPDATE SET seq = h.seq RETURNING h.seq::text, h.hash`, [orgId, ZERO]);
    },
    head_script: (tx) => tx.exec(`SELECT set_config('app.org_id', '${orgId}', true); SET LOCAL ROLE svc_app; INSERT INTO audit_chain_heads AS h (org_id, seq, hash) VALUES ('${orgId}', 0, '${ZERO}') ON CONFLICT (org_id) DO UPDATE SET seq = h.seq RETURNING h.seq::text, h.hash`),
  };
  const cpuUs = () => { const u = process.cpuUsage(); return u.user + u.system; };
  const N = 300;
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(ways).map((k) => [k, []]));
  const load0 = loadavg()[0];
  for (let round = 0; round < 14; round++) {
    const names = Object.keys(ways);
    if (round % 2 === 1) names.reverse();
    for (const name of names) {
      const c0 = cpuUs();
      for (let i = 0; i < N; i++) await pglite.transaction((tx) => ways[name]!(tx));
      if (round >= 2) samples[name]!.push((cpuUs() - c0) / N);
    }
  }
  const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
  const out = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, +med(v).toFixed(1)]));
  console.log(JSON.stringify({ at: new Date().toISOString(), load: [load0, loadavg()[0]], us_per_transaction: out }));
});
