/**
 * Audit and webhook benchmark (short runs): audit appends per second on PGlite, and on
 * PostgreSQL when BENCH_DATABASE_URL or DATABASE_URL is a postgres:// URL (one writer, then
 * eight concurrent writers on one org chain, which serialize on the chain-head row lock, and
 * eight writers on eight orgs, batches of 100 as the block-audit writer does), full-chain verification rate, and webhook deliveries per second
 * to a loopback receiver (in-process queue, 16 concurrent deliveries, each one leased, signed,
 * POSTed and recorded). Prints one JSON line.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { createAuditLog } from '../src/audit/index.ts';
import { migrate, openDatabase, type Database } from '../src/platform/db/index.ts';
import { createLogger } from '../src/platform/logger.ts';
import { InProcessQueue } from '../src/platform/queue.ts';
import { deriveSecret } from '../src/platform/secrets.ts';
import { createWebhooks } from '../src/webhooks/index.ts';
import { TEST_ENCRYPTION_KEY, TEST_SECRET_KEY } from '../test/helpers/constants.ts';

const round = (value: number) => Math.round(value * 10) / 10;

async function createOrg(database: Database): Promise<string> {
  const id = randomUUID();
  await database.query(`INSERT INTO orgs (id, tag, name, plan) VALUES ($1, $2, 'bench', 'pro')`, [id, randomBytes(4).toString('hex')]);
  return id;
}

async function auditBench(database: Database, appends: number) {
  const audit = createAuditLog({ config: { secretKey: TEST_SECRET_KEY }, db: database });
  const entry = (index: number) => ({ actor: 'key:bench', action: 'threat.blocked', target: `request-${index}`, outcome: 'success', details: { score: 0.91, patterns: ['sqli'] } });

  const single = await createOrg(database);
  let started = performance.now();
  for (let index = 0; index < appends; index++) await audit.append(single, entry(index));
  const sequential = appends / ((performance.now() - started) / 1000);

  const shared = await createOrg(database);
  started = performance.now();
  await Promise.all(Array.from({ length: 8 }, async (_, writer) => {
    for (let index = 0; index < appends / 8; index++) await audit.append(shared, entry(writer * 1000 + index));
  }));
  const oneChainConcurrent = appends / ((performance.now() - started) / 1000);

  const orgs = await Promise.all(Array.from({ length: 8 }, () => createOrg(database)));
  started = performance.now();
  await Promise.all(orgs.map(async (orgId) => {
    for (let index = 0; index < appends / 8; index++) await audit.append(orgId, entry(index));
  }));
  const eightChains = appends / ((performance.now() - started) / 1000);

  const batched = await createOrg(database);
  started = performance.now();
  for (let index = 0; index < appends; index += 100) await audit.appendMany(batched, Array.from({ length: 100 }, (_, offset) => entry(index + offset)));
  const batchedRate = appends / ((performance.now() - started) / 1000);

  started = performance.now();
  const verified = await audit.verify(single);
  const verifyRate = verified.checked / ((performance.now() - started) / 1000);
  if (!verified.ok) throw new Error('benchmark chain does not verify');

  return {
    appends,
    appends_per_s_sequential: round(sequential),
    appends_per_s_8_writers_one_chain: round(oneChainConcurrent),
    appends_per_s_8_writers_8_chains: round(eightChains),
    appends_per_s_batches_of_100: round(batchedRate),
    verify_records_per_s: round(verifyRate),
  };
}

async function webhookBench(database: Database, events: number) {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(204);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const queue = new InProcessQueue();
  const services = {
    config: { allowPrivateTargets: true, apiEncryptionKey: TEST_ENCRYPTION_KEY },
    db: database,
    queue,
    logger: createLogger('error'),
  };
  const webhooks = createWebhooks(services);
  webhooks.start();
  try {
    const orgId = await createOrg(database);
    await webhooks.create(orgId, { url: `http://127.0.0.1:${port}/hook`, events: ['threat.blocked'] });
    const started = performance.now();
    const ids: string[] = [];
    for (let index = 0; index < events; index++) {
      ids.push(...(await webhooks.emit(orgId, 'threat.blocked', { request_id: `r-${index}`, threat_score: 0.9 })).deliveries);
    }
    for (;;) {
      const result = await database.query<{ done: number }>(
        `SELECT count(*)::int AS done FROM webhook_deliveries WHERE org_id = $1 AND state = 'confirmed'`,
        [orgId],
      );
      if ((result.rows[0]?.done ?? 0) >= ids.length) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const seconds = (performance.now() - started) / 1000;
    return { deliveries: ids.length, deliveries_per_s: round(ids.length / seconds), note: 'emit + durable delivery + attempt record, loopback receiver' };
  } finally {
    await webhooks.close();
    await queue.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

export async function runAuditWebhooksBench(options: { quick?: boolean } = {}): Promise<object> {
  const appends = options.quick ? 200 : 800;
  const deliveries = options.quick ? 200 : 600;
  const results: Record<string, unknown> = { bench: 'audit-webhooks' };

  const pglite = await openDatabase({ kind: 'pglite', dir: null }, { appRolePassword: 'unused' });
  try {
    await migrate(pglite);
    results.audit_pglite = await auditBench(pglite, appends);
    results.webhooks_pglite = await webhookBench(pglite, deliveries);
  } finally {
    await pglite.close();
  }

  const url = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL;
  if (url !== undefined && /^postgres(ql)?:\/\//.test(url)) {
    const postgres = await openDatabase({ kind: 'postgres', url, appUrl: null }, { appRolePassword: deriveSecret(TEST_SECRET_KEY, 'svc/db-app-role') });
    try {
      await migrate(postgres);
      results.audit_postgres = await auditBench(postgres, appends);
      results.webhooks_postgres = await webhookBench(postgres, deliveries);
    } finally {
      await postgres.close();
    }
  } else {
    results.audit_postgres = 'skipped: set BENCH_DATABASE_URL (or DATABASE_URL) to a postgres:// URL';
  }
  return results;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(`${JSON.stringify(await runAuditWebhooksBench({ quick: process.argv.includes('--quick') }))}\n`);
}
