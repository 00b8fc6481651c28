/**
 * Builds svc for a test: real PostgreSQL and Redis when DATABASE_URL / REDIS_URL are set (CI),
 * otherwise PGlite restored from the suite's migrated snapshot and the in-memory cache. Every
 * app gets its own cache prefix, so parallel test files never share rate-limit or session state.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { buildApp, type AppInstance } from '../../src/http/build-app.ts';
import { loadConfig, type ResolvedConfig } from '../../src/platform/config.ts';
import { resolveSecrets } from '../../src/platform/secrets.ts';
import { createServices, type ServiceOptions, type Services } from '../../src/services.ts';
import { TEST_ENCRYPTION_KEY, TEST_METRICS_TOKEN, TEST_SECRET_KEY } from './constants.ts';

export interface TestContext {
  config: ResolvedConfig;
  services: Services;
  app: AppInstance;
  /** Creates an org (plan optional; default Starter trial) and returns its admin key. */
  createOrg(options?: { name?: string; plan?: 'community' | 'starter' | 'pro' | 'enterprise' }): Promise<{ orgId: string; orgTag: string; apiKey: string }>;
  close(): Promise<void>;
}

export const usingPostgres = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');
export const usingRedis = /^rediss?:\/\//.test(process.env.REDIS_URL ?? '');

let snapshot: Blob | undefined;
function pgliteSnapshot(): Blob | undefined {
  const path = process.env.SVC_TEST_PGLITE_SNAPSHOT;
  if (!path) return undefined;
  snapshot ??= new Blob([readFileSync(path)]);
  return snapshot;
}

export function testConfig(overrides: Record<string, string | undefined> = {}): ResolvedConfig {
  const env: Record<string, string | undefined> = {
    ENVIRONMENT: 'development',
    DATABASE_URL: usingPostgres ? process.env.DATABASE_URL : 'pglite:memory',
    REDIS_URL: usingRedis ? process.env.REDIS_URL : 'memory:',
    SECRET_KEY: TEST_SECRET_KEY,
    API_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    METRICS_TOKEN: TEST_METRICS_TOKEN,
    ALLOW_PRIVATE_TARGETS: 'true',
    CACHE_PREFIX: `test:${randomUUID().slice(0, 8)}:`,
    LOG_LEVEL: 'error',
    ...overrides,
  };
  return resolveSecrets(loadConfig(env));
}

/** A log destination that keeps lines in memory (tests can read them) instead of writing to stdout. */
export function memoryLog(): { destination: { write(line: string): void }; lines: string[] } {
  const lines: string[] = [];
  return { destination: { write: (line: string) => void lines.push(line) }, lines };
}

export interface TestOptions {
  env?: Record<string, string | undefined>;
  logDestination?: { write(line: string): void };
  /** Composition-root seams (gateway invokers and policies, detection tiers, webhook policy, MCP, API security, verification tiers). */
  services?: Pick<ServiceOptions, 'detection' | 'gateway' | 'webhooks' | 'siem' | 'mcp' | 'apisec' | 'verification' | 'compliance' | 'collector'>;
}

export async function createTestServices(options: TestOptions = {}): Promise<Services> {
  const config = testConfig(options.env);
  const snapshotBlob = config.database.kind === 'pglite' ? pgliteSnapshot() : undefined;
  return createServices(config, {
    ...options.services,
    logDestination: options.logDestination ?? memoryLog().destination,
    defaultMetrics: false,
    ...(snapshotBlob ? { pgliteSnapshot: snapshotBlob } : {}),
  });
}

export async function createTestApp(options: TestOptions = {}): Promise<TestContext> {
  const services = await createTestServices(options);
  const app = await buildApp(services.config, services);
  await app.ready();
  return {
    config: services.config,
    services,
    app,
    async createOrg(orgOptions = {}) {
      const { org, apiKey } = await services.accounts.createOrg({
        name: orgOptions.name ?? `org-${randomUUID().slice(0, 6)}`,
        ...(orgOptions.plan ? { plan: orgOptions.plan } : {}),
      });
      return { orgId: org.id, orgTag: org.tag, apiKey };
    },
    async close() {
      await app.close();
      await services.close();
    },
  };
}

/**
 * On PostgreSQL, a database of the caller's own on the shared server (migrated when svc first
 * opens it) and a function that drops it; undefined without PostgreSQL. For a test whose rows
 * must not be taken up by other files' instances: every svc that starts re-queues the pending
 * webhook deliveries of its whole database (and sweeps the overdue ones), so a delivery waiting
 * for its next attempt in a shared database can be sent and rescheduled by another file's svc,
 * with that svc's retry policy.
 */
export async function ownPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> } | undefined> {
  if (!usingPostgres) return undefined;
  const { default: pg } = await import('pg');
  const shared = new URL(process.env.DATABASE_URL!);
  const name = `svc_own_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: shared.toString() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const own = new URL(shared.toString());
  own.pathname = `/${name}`;
  return {
    url: own.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: shared.toString() });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
