/**
 * The collector's tables (migration 103_sensors.sql): sensors and their one-time enrolment tokens.
 * Tenant work runs in `withOrg` (row-level security); two lookups run on the owner connection
 * because no org is known yet: a sensor by its id (the wire's X-SVC-Sensor-ID) and an enrolment
 * token by its hash.
 */
import { randomUUID } from 'node:crypto';
import { randomBase62, sha256Hex } from '../../platform/crypto.ts';
import type { Database, Queryable } from '../../platform/db/index.ts';
import { noWithin as none, type WithinWrite } from '../../platform/db/within.ts';
import { isUuid } from '../../platform/uuid.ts';
import type { SensorClass } from '../wire.ts';

/** Configuration the collector pushes to a sensor (heartbeat answer and GET /sensors/{id}/config). */
export interface SensorConfig {
  /** Pattern ids the sensor reports no finding for. */
  readonly muted_patterns: readonly string[];
  /** Findings below this severity are not sent. */
  readonly severity_threshold: 'low' | 'medium' | 'high' | 'critical';
  /** A paused sensor passes traffic through without inspecting it and sends no findings. */
  readonly paused: boolean;
  /** Envelopes per second the sensor replays its spool at after a partition. */
  readonly replay_rate: number;
}

export const DEFAULT_SENSOR_CONFIG: SensorConfig = { muted_patterns: [], severity_threshold: 'low', paused: false, replay_rate: 100 };

export interface HeartbeatReport {
  readonly load: number;
  readonly queue_depth: number;
  readonly last_finding_at: string | null;
  readonly spool?: { readonly depth: number; readonly bytes?: number; readonly dropped?: Readonly<Record<string, number>>; readonly replaying?: boolean };
}

export interface SensorRecord {
  readonly id: string;
  readonly org_id: string;
  readonly name: string;
  readonly class: SensorClass;
  readonly capabilities: readonly string[];
  readonly version: string;
  readonly wire_version: number;
  readonly public_key: string;
  readonly registered_at: string;
  readonly last_registered_at: string;
  readonly last_heartbeat_at: string | null;
  readonly heartbeat: Partial<HeartbeatReport>;
  readonly config: SensorConfig;
  readonly config_version: number;
  readonly certificate_expires_at: string | null;
  readonly revoked_at: string | null;
}

export interface RegistrationInput {
  readonly name: string;
  readonly class: SensorClass;
  readonly capabilities: readonly string[];
  readonly version: string;
  readonly wire_version: number;
  readonly public_key: string;
}

const iso = (value: unknown): string | null => (value === null || value === undefined ? null : new Date(value as string).toISOString());

function sensorRow(row: Record<string, unknown>): SensorRecord {
  return {
    id: row.id as string,
    org_id: row.org_id as string,
    name: row.name as string,
    class: row.class as SensorClass,
    capabilities: (row.capabilities as string[] | null) ?? [],
    version: row.version as string,
    wire_version: Number(row.wire_version),
    public_key: row.public_key as string,
    registered_at: iso(row.registered_at)!,
    last_registered_at: iso(row.last_registered_at)!,
    last_heartbeat_at: iso(row.last_heartbeat_at),
    heartbeat: (row.heartbeat as Partial<HeartbeatReport> | null) ?? {},
    config: { ...DEFAULT_SENSOR_CONFIG, ...((row.config as Partial<SensorConfig> | null) ?? {}) },
    config_version: Number(row.config_version),
    certificate_expires_at: iso(row.certificate_expires_at),
    revoked_at: iso(row.revoked_at),
  };
}

export const ENROLMENT_TOKEN_PREFIX = 'svc_enr_';

/** The org's registered (not revoked) sensors: the usage figure beside the plan's sensor limit (GET /api/v1/org/usage). */
export async function countSensors(db: Database, orgId: string): Promise<number> {
  const { rows } = await db.withOrg(orgId, (tx) => tx.query<{ count: number }>('SELECT count(*)::int AS count FROM sensors WHERE org_id = $1 AND revoked_at IS NULL', [orgId]));
  return rows[0]?.count ?? 0;
}

export type { WithinWrite } from '../../platform/db/within.ts';

export function createSensorStore(db: Database) {
  return {
    async createToken(orgId: string, input: { name: string | null; createdBy: string; expiresAt: Date }, within: WithinWrite<{ id: string; expires_at: string }> = none): Promise<{ id: string; token: string; expires_at: string }> {
      const id = randomUUID();
      const token = `${ENROLMENT_TOKEN_PREFIX}${randomBase62(40)}`;
      const created = { id, token, expires_at: input.expiresAt.toISOString() };
      await db.withOrg(orgId, async (tx) => {
        await tx.query('INSERT INTO sensor_enrolment_tokens (id, org_id, token_hash, name, created_by, expires_at) VALUES ($1, $2, $3, $4, $5, $6)', [
          id, orgId, sha256Hex(token), input.name, input.createdBy, created.expires_at,
        ]);
        await within(tx, { id, expires_at: created.expires_at });
      });
      return created;
    },

    /** The org of a usable (unused, unexpired) token, looked up by its hash on the owner connection. */
    async tokenOrg(token: string): Promise<string | null> {
      if (!token.startsWith(ENROLMENT_TOKEN_PREFIX) || token.length > 128) return null;
      const { rows } = await db.query<{ org_id: string }>('SELECT org_id::text FROM sensor_enrolment_tokens WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()', [sha256Hex(token)]);
      return rows[0]?.org_id ?? null;
    },

    /** A sensor by id on the owner connection (the wire identifies it before any org is known). */
    async find(id: string): Promise<SensorRecord | null> {
      if (!isUuid(id)) return null;
      const { rows } = await db.query('SELECT * FROM sensors WHERE id = $1', [id]);
      return rows[0] === undefined ? null : sensorRow(rows[0]);
    },

    /**
     * Enrols a sensor with a one-time token, in one org transaction: the org's registrations are
     * serialized (an advisory lock), the token is consumed, and the sensor is inserted only if
     * `allowed(count)` says the org may have one more. The same public key enrolled again returns
     * its existing sensor (a redeployed sensor keeps its identity). A refused registration rolls
     * back: the token stays usable; so does a failure of `within` (the audit entry).
     */
    async enrol(
      orgId: string,
      token: string,
      input: RegistrationInput,
      allowed: (registered: number) => void,
      within: WithinWrite<{ sensor: SensorRecord; created: boolean }> = none,
    ): Promise<{ sensor: SensorRecord; created: boolean } | 'token_invalid'> {
      return db.withOrg(orgId, async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 38))', [`sensors:${orgId}`]);
        const consumed = await tx.query<{ id: string }>(
          'UPDATE sensor_enrolment_tokens SET used_at = now() WHERE org_id = $1 AND token_hash = $2 AND used_at IS NULL AND expires_at > now() RETURNING id::text',
          [orgId, sha256Hex(token)],
        );
        const tokenId = consumed.rows[0]?.id;
        if (tokenId === undefined) return 'token_invalid' as const;
        const existing = await tx.query('SELECT * FROM sensors WHERE org_id = $1 AND public_key = $2 AND revoked_at IS NULL', [orgId, input.public_key]);
        if (existing.rows[0] !== undefined) {
          const sensor = await updateRegistration(tx, orgId, existing.rows[0].id as string, input);
          await tx.query('UPDATE sensor_enrolment_tokens SET sensor_id = $2 WHERE id = $1', [tokenId, sensor.id]);
          const registered = { sensor, created: false };
          await within(tx, registered);
          return registered;
        }
        const count = await tx.query<{ count: number }>('SELECT count(*)::int AS count FROM sensors WHERE org_id = $1 AND revoked_at IS NULL', [orgId]);
        allowed(count.rows[0]?.count ?? 0);
        const id = randomUUID();
        // A revoked sensor's key may enrol again as a new sensor: the old row keeps its history under a retired key.
        await tx.query("UPDATE sensors SET public_key = public_key || ':revoked:' || id::text WHERE org_id = $1 AND public_key = $2 AND revoked_at IS NOT NULL", [orgId, input.public_key]);
        const { rows } = await tx.query(
          `INSERT INTO sensors (id, org_id, name, class, capabilities, version, wire_version, public_key) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8) RETURNING *`,
          [id, orgId, input.name, input.class, JSON.stringify(input.capabilities), input.version, input.wire_version, input.public_key],
        );
        await tx.query('UPDATE sensor_enrolment_tokens SET sensor_id = $2 WHERE id = $1', [tokenId, id]);
        const enrolled = { sensor: sensorRow(rows[0]!), created: true };
        await within(tx, enrolled);
        return enrolled;
      });
    },

    /** A registered sensor's boot: identity, capabilities and version brought up to date. */
    async reregister(orgId: string, id: string, input: RegistrationInput, within: WithinWrite<SensorRecord> = none): Promise<SensorRecord> {
      return db.withOrg(orgId, async (tx) => {
        const updated = await updateRegistration(tx, orgId, id, input);
        await within(tx, updated);
        return updated;
      });
    },

    /** Stores a heartbeat; `within` runs only when the sensor was updated (null: unknown or revoked). */
    async heartbeat(orgId: string, id: string, report: HeartbeatReport, at: Date, within: WithinWrite<SensorRecord> = none): Promise<SensorRecord | null> {
      return db.withOrg(orgId, async (tx) => {
        const { rows } = await tx.query('UPDATE sensors SET last_heartbeat_at = $3, heartbeat = $4::jsonb WHERE org_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING *', [
          orgId, id, at.toISOString(), JSON.stringify(report),
        ]);
        return updatedThen(tx, rows[0], within);
      });
    },

    async list(orgId: string): Promise<SensorRecord[]> {
      const { rows } = await db.withOrg(orgId, (tx) => tx.query('SELECT * FROM sensors WHERE org_id = $1 AND revoked_at IS NULL ORDER BY registered_at, id LIMIT 1000', [orgId]));
      return rows.map(sensorRow);
    },

    async get(orgId: string, id: string): Promise<SensorRecord | null> {
      if (!isUuid(id)) return null;
      const { rows } = await db.withOrg(orgId, (tx) => tx.query('SELECT * FROM sensors WHERE org_id = $1 AND id = $2', [orgId, id]));
      return rows[0] === undefined ? null : sensorRow(rows[0]);
    },

    /** Merges a configuration change and bumps its version (the sensor sees it at its next heartbeat). */
    async setConfig(orgId: string, id: string, change: Partial<SensorConfig>, within: WithinWrite<SensorRecord> = none): Promise<SensorRecord | null> {
      if (!isUuid(id)) return null;
      return db.withOrg(orgId, async (tx) => {
        const { rows } = await tx.query('UPDATE sensors SET config = config || $3::jsonb, config_version = config_version + 1 WHERE org_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING *', [
          orgId, id, JSON.stringify(change),
        ]);
        return updatedThen(tx, rows[0], within);
      });
    },

    async revoke(orgId: string, id: string, within: WithinWrite<SensorRecord> = none): Promise<SensorRecord | null> {
      if (!isUuid(id)) return null;
      return db.withOrg(orgId, async (tx) => {
        const { rows } = await tx.query('UPDATE sensors SET revoked_at = now() WHERE org_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING *', [orgId, id]);
        return updatedThen(tx, rows[0], within);
      });
    },

    /** The expiry of the sensor's current certificate (the CA calls this when it issues one). */
    async setCertificateExpiry(id: string, expiresAt: Date): Promise<void> {
      if (!isUuid(id)) return;
      await db.query('UPDATE sensors SET certificate_expires_at = $2 WHERE id = $1', [id, expiresAt.toISOString()]);
    },
  };
}

/** The row an UPDATE … RETURNING * gave, with `within` run on it; null (nothing run) when none matched. */
async function updatedThen(tx: Queryable, row: Record<string, unknown> | undefined, within: WithinWrite<SensorRecord>): Promise<SensorRecord | null> {
  if (row === undefined) return null;
  const record = sensorRow(row);
  await within(tx, record);
  return record;
}

async function updateRegistration(tx: Queryable, orgId: string, id: string, input: RegistrationInput): Promise<SensorRecord> {
  const { rows } = await tx.query(
    `UPDATE sensors SET name = $3, class = $4, capabilities = $5::jsonb, version = $6, wire_version = $7, last_registered_at = now() WHERE org_id = $1 AND id = $2 RETURNING *`,
    [orgId, id, input.name, input.class, JSON.stringify(input.capabilities), input.version, input.wire_version],
  );
  return sensorRow(rows[0]!);
}

export type SensorStore = ReturnType<typeof createSensorStore>;

