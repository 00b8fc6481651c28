/**
 * One database interface over node-postgres and PGlite.
 *
 * Security posture (row-level security): every org-scoped table has RLS enabled and forced,
 * with a tenant policy for the role `svc_app` that admits only rows whose org_id equals the
 * transaction's `app.org_id` setting. Tenant work goes through `withOrg(orgId, fn)`, which runs
 * `fn` in a transaction on the application's connection with `app.org_id` set (local to that
 * transaction). On PostgreSQL that connection logs in as the non-superuser role `svc_app`
 * (DATABASE_APP_URL, or a login svc manages itself — see `ensureAppRole`), so no statement can
 * escape its org. `system` work (migrations, API-key lookup by hash, jobs that span orgs) uses
 * the owner connection from DATABASE_URL. PGlite has one session user, a superuser: there
 * `withOrg` switches to `svc_app` with SET LOCAL ROLE, which applies the same policies to
 * svc's own queries but is no boundary against SQL that could reset the role; embedded mode
 * therefore never runs user-supplied SQL.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import type { DatabaseTarget } from '../config.ts';
import { fromTransaction, toQueryError } from './query-error.ts';
import { sanitizeParams, sanitizeText } from './sanitize.ts';
import { isUuid } from '../uuid.ts';

export interface QueryResult<Row> {
  rows: Row[];
  rowCount: number;
}

export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * The embedded engine only (undefined on PostgreSQL): appends rows to a table with COPY, the
   * cheapest way into it (about 2.4× less of svc's CPU per row than a multi-row INSERT, which
   * parses its parameters and plans inside the process; docs/benchmarks.md, "Where the time
   * goes"). `rows` is COPY's text format with every field already escaped (`copyField`). COPY
   * cannot skip a conflicting row: a duplicate key fails the statement (SQLSTATE 23505) and with
   * it the transaction. It runs as the session's owner for its one statement (COPY from a file
   * needs it, and row-level security refuses COPY FROM), so the caller writes the org of each
   * row itself; the transaction's role is restored after it. Returns the rows written.
   */
  copyRows?(table: string, columns: readonly string[], rows: string): Promise<number>;
}

export interface Database extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** A transaction on the owner connection (no org set). */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** A transaction as `svc_app` with `app.org_id` = orgId: row-level security applies. */
  withOrg<T>(orgId: string, fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Open connections (svc_db_pool_size). */
  poolSize(): number;
  close(): Promise<void>;
}

const APP_ROLE = 'svc_app';
const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');
/** Arbitrary constant key for pg_advisory_lock around migrations, so replicas migrate one at a time. */
const MIGRATION_LOCK = 815_204_117;

// Return int8/numeric as JS numbers when they fit, timestamps as Date (pg's default).
pg.types.setTypeParser(20, (value) => Number(value));
pg.types.setTypeParser(1700, (value) => Number(value));

export interface OpenOptions {
  /** Password for the managed `svc_app` login (derived from SECRET_KEY). */
  appRolePassword: string;
  /** Pool size of each PostgreSQL pool. */
  poolMax?: number;
  /** PGlite only: start from a data-dir snapshot (tests). */
  pgliteSnapshot?: Blob;
}

export async function openDatabase(target: DatabaseTarget, options: OpenOptions): Promise<Database> {
  return target.kind === 'postgres' ? openPostgres(target, options) : openPglite(target.dir, options);
}

// ---------------------------------------------------------------------------------- PostgreSQL

async function openPostgres(target: Extract<DatabaseTarget, { kind: 'postgres' }>, options: OpenOptions): Promise<PostgresDatabase> {
  const owner = new pg.Pool({ connectionString: target.url, max: options.poolMax ?? 10, idleTimeoutMillis: 30_000 });
  owner.on('error', () => undefined); // idle client errors surface on the next query instead
  // pool.query() listens for a client's 'error' only until its query settles: a server that
  // terminates the connection (57P01 at a stop) fails the query and then emits 'error' as well,
  // which nothing heard. Every client is guarded from the moment the pool creates it.
  owner.on('connect', guard);
  const database = new PostgresDatabase(owner, target, options);
  return database;
}

class PostgresDatabase implements Database {
  readonly kind = 'postgres' as const;
  private app: pg.Pool | null = null;

  constructor(
    private readonly owner: pg.Pool,
    private readonly target: Extract<DatabaseTarget, { kind: 'postgres' }>,
    private readonly options: OpenOptions,
  ) {}

  async query<Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>> {
    try {
      const result = await this.owner.query(sql, sanitizeParams(params));
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    } catch (error) {
      throw toQueryError(error, sql, params);
    }
  }

  async exec(sql: string): Promise<void> {
    try {
      await this.owner.query(sql);
    } catch (error) {
      throw toQueryError(error, sql);
    }
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return runInTransaction(await this.owner.connect(), fn, null);
  }

  async withOrg<T>(orgId: string, fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return runInTransaction(await this.appPool().connect(), fn, orgId);
  }

  /** The application's pool, logging in as svc_app. Created after migrations made the role. */
  private appPool(): pg.Pool {
    if (this.app === null) {
      const url = this.target.appUrl ?? appRoleUrl(this.target.url, this.options.appRolePassword);
      this.app = new pg.Pool({ connectionString: url, max: this.options.poolMax ?? 10, idleTimeoutMillis: 30_000 });
      this.app.on('error', () => undefined);
      this.app.on('connect', guard);
    }
    return this.app;
  }

  /**
   * Makes sure `svc_app` can log in with the managed password, unless DATABASE_APP_URL names
   * its own login. Needs CREATEROLE on the owner; when the owner lacks it, set DATABASE_APP_URL.
   */
  async ensureAppRole(): Promise<void> {
    if (this.target.appUrl !== null) return;
    // The password is a derived secret and cannot contain a quote; format() quotes it anyway.
    await this.owner.query(`SELECT svc_set_app_password($1)`, [this.options.appRolePassword]);
  }

  poolSize(): number {
    return this.owner.totalCount + (this.app?.totalCount ?? 0);
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.owner.end(), this.app?.end()]);
  }
}

function appRoleUrl(ownerUrl: string, password: string): string {
  const url = new URL(ownerUrl);
  url.username = APP_ROLE;
  url.password = password;
  return url.toString();
}

/**
 * A checked-out client whose server goes away (restart, failover) emits 'error'; without a
 * listener that is an uncaught exception that ends the process. The failure already reaches the
 * caller through the pending query, so the event itself is only swallowed (once per client).
 */
const guarded = new WeakSet<pg.PoolClient>();
function guard(client: pg.PoolClient): pg.PoolClient {
  if (!guarded.has(client)) {
    guarded.add(client);
    client.on('error', () => undefined);
  }
  return client;
}

async function runInTransaction<T>(client: pg.PoolClient, fn: (tx: Queryable) => Promise<T>, orgId: string | null): Promise<T> {
  guard(client);
  const tx: Queryable = {
    async query<Row>(sql: string, params?: readonly unknown[]) {
      try {
        const result = await client.query(sql, sanitizeParams(params));
        return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
      } catch (error) {
        throw toQueryError(error, sql, params);
      }
    },
    async exec(sql: string) {
      try {
        await client.query(sql);
      } catch (error) {
        throw toQueryError(error, sql);
      }
    },
  };
  let broken = false;
  try {
    await tx.query('BEGIN');
    if (orgId !== null) await tx.query(`SELECT set_config('app.org_id', $1, true)`, [orgId]);
    const value = await fn(tx);
    await tx.query('COMMIT');
    return value;
  } catch (error) {
    try {
      await client.query('ROLLBACK');
    } catch {
      broken = true;
    }
    throw error;
  } finally {
    client.release(broken);
  }
}

// -------------------------------------------------------------------------------------- PGlite

/**
 * PostgreSQL settings for the embedded engine, appended to PGlite's own start parameters. Stock
 * PostgreSQL sizes `shared_buffers` at 128 MB for a server that owns its machine; inside PGlite
 * the buffer pool lives in the WebAssembly heap, which is touched at start and never shrinks,
 * so it is paid in RSS whether used or not. svc's embedded database is small (single node,
 * development) and every page not in the pool is one read from DATA_DIR away (the OS page cache
 * keeps it hot), so 16 MB holds the working set: idle RSS drops by about 110 MB
 * (docs/benchmarks.md, "Idle memory"). `maintenance_work_mem` is capped for the same reason: a
 * VACUUM or CREATE INDEX grows the heap by that much for the rest of the process.
 * `wal_init_zero=off`: PostgreSQL fills each new 16 MB WAL segment with zeroes before using it.
 * Inside PGlite that write runs on svc's own thread. Under load (a new segment every few seconds
 * of evidence writes) it held every request for 110–140 ms. Skipping it loses nothing: WAL records
 * carry their own CRC, so recovery never mistakes old bytes for a record. The zero-fill reserves
 * disk space ahead of time and speeds up fsync on some file systems, and PGlite runs with fsync
 * off (docs/decisions.md, "Embedded engine stalls").
 */
export const PGLITE_SETTINGS: readonly string[] = ['shared_buffers=16MB', 'maintenance_work_mem=16MB', 'wal_init_zero=off'];

async function openPglite(dir: string | null, options: OpenOptions): Promise<Database> {
  const { PGlite } = await import('@electric-sql/pglite');
  const startParams = [...PGlite.defaultStartParams, ...PGLITE_SETTINGS.flatMap((setting) => ['-c', setting])];
  if (options.pgliteSnapshot) return new PgliteDatabase(await PGlite.create({ loadDataDir: options.pgliteSnapshot, startParams }));
  // A new cluster is created by a second, temporary PGlite running initdb, and the instance that
  // ran it keeps that instance's WebAssembly memory alive (about 430 MB) for as long as it is open.
  // So after an initdb the first instance is closed (which frees it) and the cluster opened again:
  // from the directory on disk, or, in memory, from a dump of the fresh cluster.
  if (dir === null) {
    const initial = await PGlite.create({ startParams });
    const fresh = await initial.dumpDataDir('none');
    await initial.close();
    return new PgliteDatabase(await PGlite.create({ loadDataDir: fresh, startParams }));
  }
  if (!existsSync(join(dir, 'PG_VERSION'))) await createClusterInChildProcess(dir, startParams);
  return new PgliteDatabase(await PGlite.create(dir, { startParams }));
}

/**
 * Creates a new cluster in DATA_DIR from a short-lived node process. Closing the instance that
 * ran initdb frees its WebAssembly memory, but not what its JavaScript side allocated through
 * glibc's malloc (the cluster's files held in memory, the dump), which stays resident in the
 * server's heap for good: a server started on a fresh DATA_DIR had 112 MB in glibc's main arena
 * against 47 MB when restarted on the same directory, 80 MB more RSS for the process's lifetime
 * (docs/benchmarks.md, "Memory breakdown"). A process that exits returns all of it. The cluster
 * is the same: the same PGlite, the same start parameters, closed before the server opens it.
 */
async function createClusterInChildProcess(dir: string, startParams: readonly string[]): Promise<void> {
  const { execFile } = await import('node:child_process');
  const module = import.meta.resolve('@electric-sql/pglite');
  const script = `const { PGlite } = await import(${JSON.stringify(module)}); await (await PGlite.create(${JSON.stringify(dir)}, { startParams: ${JSON.stringify(startParams)} })).close();`;
  let child: ReturnType<typeof execFile> | undefined;
  // The initdb dies with the server, as it did in-process: a server stopped while it starts
  // (SIGTERM before listening exits at once) must not leave it writing into DATA_DIR, whose lock
  // the next start takes over.
  const stop = () => child?.kill('SIGKILL');
  process.once('exit', stop);
  try {
    await new Promise<void>((resolveRun, rejectRun) => {
      child = execFile(process.execPath, ['--input-type=module', '--eval', script], { maxBuffer: 1_048_576 }, (error, _stdout, stderr) => {
        if (error === null) resolveRun();
        else rejectRun(Object.assign(error, { stderr }));
      });
    });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    throw new Error(`creating the embedded database in ${dir} failed${stderr ? `: ${stderr.slice(-2_000)}` : ''}`, { cause: error });
  } finally {
    process.off('exit', stop);
  }
}

class PgliteDatabase implements Database {
  readonly kind = 'pglite' as const;
  constructor(readonly instance: PGlite) {}

  async query<Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>> {
    try {
      const result = await this.instance.query<Row>(sql, sanitizeParams(params));
      return { rows: result.rows, rowCount: result.affectedRows || result.rows.length };
    } catch (error) {
      throw toQueryError(error, sql, params);
    }
  }

  async exec(sql: string): Promise<void> {
    try {
      await this.instance.exec(sql);
    } catch (error) {
      throw toQueryError(error, sql);
    }
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    try {
      return await this.instance.transaction(async (transaction) => fn(wrapPgliteTransaction(transaction, null)));
    } catch (error) {
      throw fromTransaction(error);
    }
  }

  async withOrg<T>(orgId: string, fn: (tx: Queryable) => Promise<T>): Promise<T> {
    try {
      return await this.instance.transaction(async (transaction) => {
        const tx = wrapPgliteTransaction(transaction, APP_ROLE);
        if (isUuid(orgId)) {
          // One simple-protocol script: as two extended queries (parse, describe, bind, describe,
          // execute, sync: six calls into the engine each) the set-up cost ~220 µs more of svc's
          // CPU per transaction (docs/benchmarks.md, "Issue #39 item 3, speed-ev40 round"). The
          // id is spliced only when it is a UUID, so it cannot end the literal.
          await tx.exec(`SELECT set_config('app.org_id', '${orgId}', true); SET LOCAL ROLE ${APP_ROLE}`);
        } else {
          await tx.query(`SELECT set_config('app.org_id', $1, true)`, [orgId]);
          await tx.query(`SET LOCAL ROLE ${APP_ROLE}`);
        }
        return fn(tx);
      });
    } catch (error) {
      throw fromTransaction(error);
    }
  }

  poolSize(): number {
    return this.instance.closed ? 0 : 1;
  }

  async close(): Promise<void> {
    if (!this.instance.closed) await this.instance.close();
  }
}

type PgliteTransaction = Parameters<Parameters<PGlite['transaction']>[0]>[0];

/** One field of a COPY text-format row: null as \N, booleans as t/f, text with backslash, tab, newline and carriage return escaped. */
export function copyField(value: string | number | boolean | null): string {
  if (value === null) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'number') return String(value);
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (character) => COPY_ESCAPES[character]!) : value;
}
const COPY_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const SQL_NAME = /^[a-z_][a-z0-9_]*$/;

/** A PGlite transaction as a Queryable; `role` is the role it runs as (SET LOCAL), restored after a COPY. */
function wrapPgliteTransaction(transaction: PgliteTransaction, role: string | null): Queryable {
  return {
    async copyRows(table: string, columns: readonly string[], rows: string) {
      if (!SQL_NAME.test(table) || !columns.every((column) => SQL_NAME.test(column))) throw new Error('copyRows: table and column names are plain identifiers');
      const sql = `COPY ${table} (${columns.join(', ')}) FROM '/dev/blob'`;
      // One simple-protocol script, the role switched around the COPY: sent as an extended query
      // (parse, describe, bind, execute, each a round trip into the engine) between two role
      // statements, a COPY cost 0.3-0.9 ms more of svc's CPU (docs/benchmarks.md, "Issue #39 item 3,
      // speed-ev39 round"). A failure aborts the script there and the transaction with it.
      const script = role === null ? sql : `RESET ROLE; ${sql}; SET LOCAL ROLE ${role}`;
      try {
        const results = await transaction.exec(script, { blob: new Blob([sanitizeText(rows)]) });
        return results[role === null ? 0 : 1]?.affectedRows ?? 0;
      } catch (error) {
        throw toQueryError(error, sql);
      }
    },
    async query<Row>(sql: string, params?: readonly unknown[]) {
      try {
        const result = await transaction.query<Row>(sql, sanitizeParams(params));
        return { rows: result.rows, rowCount: result.affectedRows || result.rows.length };
      } catch (error) {
        throw toQueryError(error, sql, params);
      }
    },
    async exec(sql: string) {
      try {
        await transaction.exec(sql);
      } catch (error) {
        throw toQueryError(error, sql);
      }
    },
  };
}

/** Takes a migrated PGlite's data directory as a blob (tests restore it instead of re-migrating). */
export async function pgliteSnapshot(database: Database): Promise<Blob> {
  if (!(database instanceof PgliteDatabase)) throw new Error('snapshots exist only for PGlite');
  return database.instance.dumpDataDir('none');
}

// ---------------------------------------------------------------------------------- migrations

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function listMigrations(directory = MIGRATIONS_DIR): Migration[] {
  return readdirSync(directory)
    .filter((file) => /^\d{3}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file.slice(4, -4),
      sql: readFileSync(join(directory, file), 'utf8'),
    }));
}

/**
 * Applies pending migrations in order, each in its own transaction, under an advisory lock so
 * that replicas starting together migrate once. Returns the versions applied now.
 */
export async function migrate(database: Database): Promise<number[]> {
  const applied: number[] = [];
  await database.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
  try {
    await database.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = new Set(
      (await database.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((row) => row.version),
    );
    for (const migration of listMigrations()) {
      if (done.has(migration.version)) continue;
      await database.transaction(async (tx) => {
        await tx.exec(migration.sql);
        await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      });
      applied.push(migration.version);
    }
    if (database instanceof PostgresDatabase) await database.ensureAppRole();
  } finally {
    await database.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`);
  }
  return applied;
}
