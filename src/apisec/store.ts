/**
 * Gateway and geo-rule records in the database. Management calls run inside the org's
 * row-level-security transaction (`withOrg`); the proxy's lookups by id and route run as the
 * owner, because end-user traffic carries no svc credential — they return the whole record and
 * the caller (the proxy) acts for the gateway's org.
 */
import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../platform/db/index.ts';
import { noWithin, type WithinWrite } from '../platform/db/within.ts';
import { SvcError } from '../platform/errors.ts';
import { isUuid } from '../platform/uuid.ts';
import type { Gateway, GatewayMode, GatewaySettings } from './types.ts';
import { DEFAULT_BOT_POLICY, DEFAULT_TIMEOUT_MS } from './types.ts';

interface GatewayRow {
  id: string;
  org_id: string;
  name: string;
  backend_url: string;
  mode: GatewayMode;
  hostname: string | null;
  path_prefix: string | null;
  openapi: unknown;
  settings: Partial<GatewaySettings> | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id::text, org_id::text, name, backend_url, mode, hostname, path_prefix, openapi, settings, created_at, updated_at';

export interface GatewayFields {
  name: string;
  backendUrl: string;
  mode: GatewayMode;
  hostname: string | null;
  pathPrefix: string | null;
  openapi: unknown;
  settings: GatewaySettings;
}

function fromRow(row: GatewayRow): Gateway {
  const stored = row.settings ?? {};
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    backendUrl: row.backend_url,
    mode: row.mode,
    hostname: row.hostname,
    pathPrefix: row.path_prefix,
    openapi: row.openapi ?? null,
    settings: {
      rateLimit: stored.rateLimit ?? null,
      botPolicy: { ...DEFAULT_BOT_POLICY, ...stored.botPolicy },
      healthCheck: stored.healthCheck ?? null,
      timeoutMs: stored.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      blockDetails: stored.blockDetails ?? 'hidden',
    },
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** A unique violation of the gateways' hostname and path prefix index (not another one in the same transaction, such as the audit entry's). */
function isRouteTaken(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, constraint } = error as { code?: string; constraint?: string };
  return code === '23505' && constraint === 'apisec_gateways_route';
}

export interface GeoRule {
  id: string;
  orgId: string;
  gatewayId: string | null;
  ruleName: string;
  action: 'block';
  countries: string[];
  responseCode: number;
  log: boolean;
  createdAt: Date;
}

interface GeoRow {
  id: string;
  org_id: string;
  gateway_id: string | null;
  rule_name: string;
  action: 'block';
  countries: string[];
  response_code: number;
  log: boolean;
  created_at: Date;
}

function geoFromRow(row: GeoRow): GeoRule {
  return {
    id: row.id,
    orgId: row.org_id,
    gatewayId: row.gateway_id,
    ruleName: row.rule_name,
    action: row.action,
    countries: row.countries,
    responseCode: row.response_code,
    log: row.log,
    createdAt: new Date(row.created_at),
  };
}

const GEO_COLUMNS = 'id::text, org_id::text, gateway_id::text, rule_name, action, countries, response_code, log, created_at';

/**
 * The management writes take `within`, run in the write's transaction after it (the audit entry):
 * a failure of it rolls the write back, so the change and its entry are stored together or not at all.
 */
export interface GatewayStore {
  create(orgId: string, fields: GatewayFields, within?: WithinWrite<Gateway>): Promise<Gateway>;
  list(orgId: string): Promise<Gateway[]>;
  get(orgId: string, id: string): Promise<Gateway>;
  /** `change` is called with the gateway as stored, its row locked until the write's transaction ends. */
  update(orgId: string, id: string, change: (current: Gateway) => GatewayFields, within?: WithinWrite<Gateway>): Promise<Gateway>;
  remove(orgId: string, id: string, within?: WithinWrite<Gateway>): Promise<Gateway>;
  /** Any org's gateway by id (traffic path), or null. */
  findById(id: string): Promise<Gateway | null>;
  /** Every gateway with a hostname or path prefix (the router's table). */
  routed(): Promise<Gateway[]>;
  /** Every gateway (health checks). */
  all(): Promise<Gateway[]>;
  createGeoRule(orgId: string, rule: Omit<GeoRule, 'id' | 'orgId' | 'createdAt'>, within?: WithinWrite<GeoRule>): Promise<GeoRule>;
  listGeoRules(orgId: string): Promise<GeoRule[]>;
  removeGeoRule(orgId: string, id: string, within?: WithinWrite<GeoRule>): Promise<GeoRule>;
  /** Geo rules of an org (traffic path, owner role). */
  geoRulesOf(orgId: string): Promise<GeoRule[]>;
}

/** `written` (a record a write just stored or deleted), with `within` run on it in the write's transaction. */
async function writtenThen<T>(tx: Queryable, written: T, within: WithinWrite<T>): Promise<T> {
  await within(tx, written);
  return written;
}

export function createGatewayStore(db: Database): GatewayStore {
  /** A gateway read in `tx`; `lock` takes its row: 'update' for a change of it, 'key-share' to keep it from a delete while a row that refers to it is inserted. */
  const load = async (tx: Queryable, id: string, lock: 'update' | 'key-share' | false = false): Promise<Gateway> => {
    if (!isUuid(id)) throw new SvcError('NOT_FOUND', { details: { resource: 'gateway', id } });
    const clause = lock === 'update' ? ' FOR NO KEY UPDATE' : lock === 'key-share' ? ' FOR KEY SHARE' : '';
    const result = await tx.query<GatewayRow>(`SELECT ${COLUMNS} FROM apisec_gateways WHERE id = $1${clause}`, [id]);
    const row = result.rows[0];
    if (row === undefined) throw new SvcError('NOT_FOUND', { details: { resource: 'gateway', id } });
    return fromRow(row);
  };
  const conflict = (error: unknown): never => {
    if (isRouteTaken(error)) {
      throw new SvcError('CONFLICT', { message: 'Another gateway already receives traffic at this hostname and path prefix.', details: { field: 'hostname' } });
    }
    throw error;
  };

  return {
    async create(orgId, fields, within = noWithin) {
      const id = randomUUID();
      try {
        return await db.withOrg(orgId, async (tx) => {
          const result = await tx.query<GatewayRow>(
            `INSERT INTO apisec_gateways (id, org_id, name, backend_url, mode, hostname, path_prefix, openapi, settings)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${COLUMNS}`,
            [id, orgId, fields.name, fields.backendUrl, fields.mode, fields.hostname, fields.pathPrefix, fields.openapi === null ? null : JSON.stringify(fields.openapi), JSON.stringify(fields.settings)],
          );
          return writtenThen(tx, fromRow(result.rows[0]!), within);
        });
      } catch (error) {
        return conflict(error);
      }
    },
    async list(orgId) {
      return db.withOrg(orgId, async (tx) => {
        const result = await tx.query<GatewayRow>(`SELECT ${COLUMNS} FROM apisec_gateways ORDER BY created_at, id`);
        return result.rows.map(fromRow);
      });
    },
    get: (orgId, id) => db.withOrg(orgId, (tx) => load(tx, id)),
    async update(orgId, id, change, within = noWithin) {
      try {
        return await db.withOrg(orgId, async (tx) => {
          const current = await load(tx, id, 'update');
          const fields = change(current);
          const result = await tx.query<GatewayRow>(
            `UPDATE apisec_gateways SET name = $2, backend_url = $3, mode = $4, hostname = $5, path_prefix = $6, openapi = $7, settings = $8, updated_at = now()
             WHERE id = $1 RETURNING ${COLUMNS}`,
            [id, fields.name, fields.backendUrl, fields.mode, fields.hostname, fields.pathPrefix, fields.openapi === null ? null : JSON.stringify(fields.openapi), JSON.stringify(fields.settings)],
          );
          return writtenThen(tx, fromRow(result.rows[0]!), within);
        });
      } catch (error) {
        return conflict(error);
      }
    },
    async remove(orgId, id, within = noWithin) {
      if (!isUuid(id)) throw new SvcError('NOT_FOUND', { details: { resource: 'gateway', id } });
      // The DELETE itself decides who wins a race: concurrent deletes wait for the first and then
      // find no row (404), so only one caller goes on to audit the deletion.
      return db.withOrg(orgId, async (tx) => {
        const row = (await tx.query<GatewayRow>(`DELETE FROM apisec_gateways WHERE id = $1 RETURNING ${COLUMNS}`, [id])).rows[0];
        if (row === undefined) throw new SvcError('NOT_FOUND', { details: { resource: 'gateway', id } });
        return writtenThen(tx, fromRow(row), within);
      });
    },
    async findById(id) {
      if (!isUuid(id)) return null;
      const result = await db.query<GatewayRow>(`SELECT ${COLUMNS} FROM apisec_gateways WHERE id = $1`, [id]);
      const row = result.rows[0];
      return row === undefined ? null : fromRow(row);
    },
    async routed() {
      const result = await db.query<GatewayRow>(`SELECT ${COLUMNS} FROM apisec_gateways WHERE hostname IS NOT NULL OR path_prefix IS NOT NULL`);
      return result.rows.map(fromRow);
    },
    async all() {
      const result = await db.query<GatewayRow>(`SELECT ${COLUMNS} FROM apisec_gateways`);
      return result.rows.map(fromRow);
    },
    async createGeoRule(orgId, rule, within = noWithin) {
      const id = randomUUID();
      return db.withOrg(orgId, async (tx) => {
        // FOR KEY SHARE (the lock the rule's foreign key check takes anyway, now before it): a
        // gateway deleted meanwhile is found gone (404) instead of failing the insert's check
        // (23503, a 500), and one not yet deleted is kept until the rule is committed, when
        // the delete removes it with the gateway.
        if (rule.gatewayId !== null) await load(tx, rule.gatewayId, 'key-share');
        const result = await tx.query<GeoRow>(
          `INSERT INTO apisec_geo_rules (id, org_id, gateway_id, rule_name, action, countries, response_code, log)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${GEO_COLUMNS}`,
          [id, orgId, rule.gatewayId, rule.ruleName, rule.action, JSON.stringify(rule.countries), rule.responseCode, rule.log],
        );
        return writtenThen(tx, geoFromRow(result.rows[0]!), within);
      });
    },
    async listGeoRules(orgId) {
      return db.withOrg(orgId, async (tx) => {
        const result = await tx.query<GeoRow>(`SELECT ${GEO_COLUMNS} FROM apisec_geo_rules ORDER BY created_at, id`);
        return result.rows.map(geoFromRow);
      });
    },
    async removeGeoRule(orgId, id, within = noWithin) {
      if (!isUuid(id)) throw new SvcError('NOT_FOUND', { details: { resource: 'geo_rule', id } });
      return db.withOrg(orgId, async (tx) => {
        const result = await tx.query<GeoRow>(`DELETE FROM apisec_geo_rules WHERE id = $1 RETURNING ${GEO_COLUMNS}`, [id]);
        const row = result.rows[0];
        if (row === undefined) throw new SvcError('NOT_FOUND', { details: { resource: 'geo_rule', id } });
        return writtenThen(tx, geoFromRow(row), within);
      });
    },
    async geoRulesOf(orgId) {
      const result = await db.query<GeoRow>(`SELECT ${GEO_COLUMNS} FROM apisec_geo_rules WHERE org_id = $1`, [orgId]);
      return result.rows.map(geoFromRow);
    },
  };
}
