/**
 * Accounts: organizations (plans and trials), users, API keys and upstream provider keys.
 *
 * Security posture: API keys are random (≥ 32 base62 characters), shown once, and stored only
 * as their SHA-256; a presented key is looked up by hash and the stored hash is compared in
 * constant time. Resolved keys are cached in process for 30 s (revocation through this
 * process is immediate; other replicas see it within the TTL). Upstream provider keys are
 * encrypted with AES-256-GCM under API_ENCRYPTION_KEY, bound to their org and provider as
 * associated data, and only ever returned masked. Passwords are hashed with argon2id; dashboard
 * sessions are server-side rows behind an HS256 JWT signed with a key derived from SECRET_KEY
 * (sessions.ts: revocable, idle and absolute timeouts); users, roles and invitations: members.ts.
 */
import { LRUCache } from 'lru-cache';
import { randomUUID } from 'node:crypto';
import { hash as argonHash, verify as argonVerify } from '@node-rs/argon2';
import type { ResolvedConfig } from '../platform/config.ts';
import { PROVIDER_CATALOGUE } from '../platform/providers.ts';
import { decrypt, encrypt, encryptionKeyFrom, mask, randomBase62, safeEqual, sha256Hex } from '../platform/crypto.ts';
import type { Database, Queryable } from '../platform/db/index.ts';
import { isDatabaseOutage } from '../platform/db/failures.ts';
import { noWithin, type WithinWrite } from '../platform/db/within.ts';
import { SvcError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { AuthContext, KeyClass, Role, Scope } from './access.ts';
import { createSessions, type SignInMethod } from './sessions.ts';
import { createMembers } from './members.ts';
import { createFindingsQuota } from './quota.ts';
import type { OrgUsage } from './org-usage.ts';
import { effectivePlan, extendedTrialEnd, findingsQuota, PILLARS, PLAN_FEATURES, PLAN_LIMITS, PLANS, planAllows, sensorQuota, TRIAL_MAX_DAYS, trialEnd, type Plan } from './plans.ts';
import { entryBound } from '../platform/lru.ts';


export { SCOPES, KEY_CLASSES, ROLES, scopeAllows, type Scope, type KeyClass, type Role, type AuthContext } from './access.ts';

/** Provider ids a key may be stored for. */
export const PROVIDER_IDS: readonly string[] = PROVIDER_CATALOGUE.filter((entry) => entry.orgKeys).map((entry) => entry.id);

export interface OrgRecord {
  id: string;
  tag: string;
  name: string;
  plan: Plan;
  effective_plan: Plan;
  trial_started_at: string | null;
  trial_ends_at: string | null;
  created_at: string;
}

export interface ApiKeyRecord {
  key_id: string;
  display: string;
  name: string | null;
  scope: Scope;
  class: KeyClass;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** Who created the key: user:<id>, api_key:<id>, cli, or null (the org's initial key, or made before this was recorded). */
  created_by: string | null;
}

export interface ProviderKeyRecord {
  provider: string;
  key: string; // masked
  base_url: string | null;
  updated_at: string;
}

const KEY_PATTERN = /^svc_org_(live|test|rstr)_([a-z0-9]{8})_([A-Za-z0-9]{32,64})$/;
const KEY_CACHE_TTL_MS = 30_000;
/**
 * While the database is unavailable, a key resolved within this long is still honoured (stale):
 * inspect and the pillars' detection keep working through an outage of minutes, their evidence
 * going to the outbox. Revocation needs the database, so none can happen meanwhile; one made on
 * another replica just before the outage is seen when the database returns (docs/reliability.md).
 */
const KEY_STALE_ON_OUTAGE_MS = 60 * 60_000;
const KEY_CACHE_MAX = 50_000;

export type Accounts = ReturnType<typeof createAccounts>;

/** How a plan change moved the org (from the plan in force before it). */
export type PlanChange = 'upgrade' | 'downgrade' | 'trial_conversion' | 'unchanged';

/** What a plan change answers: the org after it, its plan before, and the kind of change. */
export interface PlanChangeResult {
  org: OrgRecord;
  previous: { plan: Plan; effective_plan: Plan; trial_ends_at: string | null };
  change: PlanChange;
}

/** Runs inside a plan change's transaction (e.g. SIEM export disables its sinks on a plan without it). */
export type PlanChangeListener = (tx: Queryable, orgId: string, plan: Plan) => Promise<void>;

export type { OrgUsage };

const PLAN_RANK: Record<Plan, number> = { community: 0, starter: 1, pro: 2, enterprise: 3 };

/**
 * Locks an org's row for a change of its plan or trial, in the order every audited writer takes
 * its locks: the row changed first, then the audit chain's head (`audit.append`). The lock is FOR
 * NO KEY UPDATE, the one an UPDATE that keeps the id takes, never FOR UPDATE: every insert of a
 * row that belongs to the org (an audit record, an API key, a finding) checks its foreign key
 * with FOR KEY SHARE on this row, which FOR UPDATE blocks. A writer holding the chain head and
 * inserting its record then waited for a plan change that waited for the chain head: PostgreSQL
 * rolled one back (40P01). FOR NO KEY UPDATE still serializes plan and trial changes.
 */
function lockOrgRow(tx: Queryable, orgId: string) {
  return tx.query('SELECT * FROM orgs WHERE id = $1 FOR NO KEY UPDATE', [orgId]);
}

/** The calendar month (UTC) holding `now`: [start, end). */
export function usageMonth(now: Date): { start: Date; end: Date } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  return { start, end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)) };
}

export function createAccounts(deps: {
  db: Database;
  config: ResolvedConfig;
  logger: Logger;
  /** Sensors an org has registered (the collector's registry); without it usage reports null. */
  sensorCount?: (orgId: string) => Promise<number>;
}) {
  const { db, config, logger } = deps;
  const planListeners: PlanChangeListener[] = [];
  const encryptionKey = encryptionKeyFrom(config.apiEncryptionKey);
  const sessions = createSessions({ db, config });
  // Bounded (least recently used out); each entry also expires KEY_CACHE_TTL_MS after it was read
  // from the database, and may be honoured stale while the database is down (resolvedAt).
  const keyCache = new LRUCache<string, { context: AuthContext | 'revoked'; expiresAt: number; resolvedAt: number }>(entryBound(KEY_CACHE_MAX));
  /** Lookups in flight, by key hash: concurrent first requests of one key share one query. */
  const keyLookups = new Map<string, Promise<AuthContext | 'revoked' | 'invalid'>>();
  /** Bumped by every revocation: a lookup that raced one is answered but not cached. */
  let revocations = 0;
  const providerKeyCache = new LRUCache<string, { value: { key: string; baseUrl: string | null } | null; expiresAt: number }>(entryBound(KEY_CACHE_MAX));
  const lastUsed = new Map<string, { orgId: string; at: number }>();
  // isKeyCached and authenticateKey run back to back for one request: hash the key once.
  let hashedKey = '';
  let hashedValue = '';
  const keyHash = (presented: string): string => {
    if (presented !== hashedKey) {
      hashedValue = sha256Hex(presented);
      hashedKey = presented;
    }
    return hashedValue;
  };

  const flushTimer = setInterval(() => void flushLastUsed(), 5_000);
  flushTimer.unref();

  function orgRow(row: Record<string, unknown>): OrgRecord {
    const trialStartedAt = (row.trial_started_at as Date | null) ?? null;
    const trialEndsAt = (row.trial_ends_at as Date | null) ?? null;
    const plan = row.plan as Plan;
    return {
      id: row.id as string,
      tag: row.tag as string,
      name: row.name as string,
      plan,
      effective_plan: effectivePlan({ plan, trialStartedAt, trialEndsAt }),
      trial_started_at: trialStartedAt?.toISOString() ?? null,
      trial_ends_at: trialEndsAt?.toISOString() ?? null,
      created_at: (row.created_at as Date).toISOString(),
    };
  }

  function keyRow(row: Record<string, unknown>): ApiKeyRecord {
    return {
      key_id: row.id as string,
      display: row.display as string,
      name: (row.name as string | null) ?? null,
      scope: row.scope as Scope,
      class: row.class as KeyClass,
      created_at: (row.created_at as Date).toISOString(),
      last_used_at: (row.last_used_at as Date | null)?.toISOString() ?? null,
      revoked_at: (row.revoked_at as Date | null)?.toISOString() ?? null,
      created_by: (row.created_by as string | null) ?? null,
    };
  }

  async function uniqueTag(tx: Queryable): Promise<string> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const tag = randomBase62(8).toLowerCase();
      const taken = await tx.query('SELECT 1 FROM orgs WHERE tag = $1', [tag]);
      if (taken.rows.length === 0) return tag;
    }
    throw new Error('could not find a free org tag');
  }

  async function insertKey(tx: Queryable, org: { id: string; tag: string }, input: { scope: Scope; keyClass: KeyClass; name?: string | null; createdBy?: string | null }) {
    if (input.keyClass === 'rstr' && input.scope === 'admin') {
      throw new SvcError('KEY_CLASS_FORBIDDEN', { message: 'Restricted (rstr) keys cannot hold the admin scope.' });
    }
    const apiKey = `svc_org_${input.keyClass}_${org.tag}_${randomBase62(40)}`;
    const id = randomUUID();
    const display = `svc_org_${input.keyClass}_${org.tag}_${apiKey.slice(-4).padStart(8, '•')}`;
    const result = await tx.query(
      `INSERT INTO api_keys (id, org_id, key_hash, display, name, scope, class, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [id, org.id, sha256Hex(apiKey), display, input.name ?? null, input.scope, input.keyClass, input.createdBy ?? null],
    );
    return { key: keyRow(result.rows[0]!), apiKey };
  }

  async function createOrgIn(tx: Queryable, input: { name: string; plan?: Plan }) {
    const id = randomUUID();
    const tag = await uniqueTag(tx);
    const now = new Date();
    const trial = input.plan === undefined;
    const result = await tx.query(
      `INSERT INTO orgs (id, tag, name, plan, trial_started_at, trial_ends_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
      [id, tag, input.name, input.plan ?? 'starter', trial ? now : null, trial ? trialEnd(now) : null],
    );
    return orgRow(result.rows[0]!);
  }

  async function flushLastUsed(): Promise<void> {
    if (lastUsed.size === 0) return;
    const batch = [...lastUsed.entries()];
    lastUsed.clear();
    for (const [keyId, { orgId, at }] of batch) {
      try {
        await db.withOrg(orgId, (tx) => tx.query('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [keyId, new Date(at)]));
      } catch (error) {
        logger.warn({ err: error }, 'could not record API key last-used time');
      }
    }
  }

  async function lookUpKey(hash: string, tag: string, now: number): Promise<AuthContext | 'revoked' | 'invalid'> {
    const generation = revocations;
    const result = await db.query(
      `SELECT k.id, k.key_hash, k.scope, k.class, k.revoked_at, o.id AS org_id, o.tag, o.plan, o.trial_started_at, o.trial_ends_at
         FROM api_keys k JOIN orgs o ON o.id = k.org_id WHERE k.key_hash = $1`,
      [hash],
    );
    const row = result.rows[0];
    if (row === undefined || !safeEqual(row.key_hash as string, hash) || row.tag !== tag) return 'invalid';
    const context: AuthContext | 'revoked' =
      row.revoked_at !== null
        ? 'revoked'
        : {
            kind: 'api_key',
            orgId: row.org_id as string,
            orgTag: row.tag as string,
            plan: effectivePlan({
              plan: row.plan as Plan,
              trialStartedAt: row.trial_started_at as Date | null,
              trialEndsAt: row.trial_ends_at as Date | null,
            }),
            scope: row.scope as Scope,
            keyClass: row.class as KeyClass,
            keyId: row.id as string,
            userId: null,
            role: null,
          };
    if (generation === revocations) {
      keyCache.set(hash, { context, expiresAt: now + KEY_CACHE_TTL_MS, resolvedAt: now });
    }
    return context;
  }

  /** Drops this process's cached credentials of an org (their plan changed); other replicas see it within the 30 s TTL. */
  const forgetOrg = (orgId: string) => {
    for (const [hash, entry] of [...keyCache.entries()]) {
      if (entry.context !== 'revoked' && entry.context.orgId === orgId) keyCache.delete(hash);
    }
  };

  const accounts = {
    /**
     * Findings per month (docs/accounts-plans.md): `admit(orgId, decision)` says whether a finding
     * is stored; blocks and challenges always are, log- and alert-band findings not once the
     * month's quota is used up (they are counted as dropped). Answers from memory.
     */
    findings: createFindingsQuota({ db, logger }),

    /** Registers a listener that runs inside every plan change's transaction. */
    onPlanChanged(listener: PlanChangeListener): void {
      planListeners.push(listener);
    },

    /**
     * Changes an org's plan (upgrade, downgrade or trial conversion), as a super_admin does through
     * the API or an operator through the CLI. There is no payment processor: the plan is what the
     * operator sets. The new plan has no trial (a trial org that gets a plan is converted).
     */
    async changePlan(orgId: string, plan: Plan, within: WithinWrite<PlanChangeResult> = noWithin): Promise<PlanChangeResult> {
      if (!(PLANS as readonly string[]).includes(plan)) {
        throw new SvcError('VALIDATION_FAILED', { details: { field: 'plan', allowed: [...PLANS] }, message: `plan must be one of ${PLANS.join(', ')}` });
      }
      const result = await db.withOrg(orgId, async (tx) => {
        // FOR NO KEY UPDATE, as the UPDATE below takes (its id is not changed), not FOR UPDATE: see lockOrgRow.
        const current = await lockOrgRow(tx, orgId);
        const row = current.rows[0];
        if (!row) throw new SvcError('NOT_FOUND', { details: { resource: 'org' } });
        const before = orgRow(row);
        const onTrial = before.trial_ends_at !== null && before.effective_plan === before.plan;
        const change: PlanChange =
          onTrial && plan === before.plan
            ? 'trial_conversion'
            : PLAN_RANK[plan] > PLAN_RANK[before.effective_plan]
              ? 'upgrade'
              : PLAN_RANK[plan] < PLAN_RANK[before.effective_plan]
                ? 'downgrade'
                : before.trial_ends_at === null
                  ? 'unchanged'
                  : 'trial_conversion';
        const updated = await tx.query('UPDATE orgs SET plan = $2, trial_started_at = NULL, trial_ends_at = NULL WHERE id = $1 RETURNING *', [orgId, plan]);
        for (const listener of planListeners) await listener(tx, orgId, plan);
        const changed: PlanChangeResult = { org: orgRow(updated.rows[0]!), previous: { plan: before.plan, effective_plan: before.effective_plan, trial_ends_at: before.trial_ends_at }, change };
        await within(tx, changed);
        return changed;
      });
      forgetOrg(orgId);
      accounts.findings.forget(orgId);
      return result;
    },

    /** Usage against every quota of the plan in force. */
    async usage(orgId: string, now = new Date()): Promise<OrgUsage> {
      const org = await accounts.getOrg(orgId);
      if (org === null) throw new SvcError('NOT_FOUND', { details: { resource: 'org' } });
      const month = usageMonth(now);
      const counted = await db.withOrg(orgId, (tx) =>
        tx.query<{ findings: string; findings_dropped: string }>('SELECT findings::text, findings_dropped::text FROM org_usage WHERE org_id = $1 AND month = $2', [orgId, month.start.toISOString().slice(0, 10)]),
      );
      const used = Number(counted.rows[0]?.findings ?? 0);
      const dropped = Number(counted.rows[0]?.findings_dropped ?? 0) + accounts.findings.unflushed(orgId);
      const plan = org.effective_plan;
      const limit = findingsQuota(plan);
      const trialActive = org.trial_ends_at !== null && new Date(org.trial_ends_at).getTime() > now.getTime();
      const limits = PLAN_LIMITS[plan];
      return {
        org_id: org.id,
        plan: org.plan,
        effective_plan: plan,
        trial: {
          active: trialActive,
          started_at: org.trial_started_at,
          ends_at: org.trial_ends_at,
          days_left: org.trial_ends_at === null ? null : Math.max(0, Math.ceil((new Date(org.trial_ends_at).getTime() - now.getTime()) / 86_400_000)),
          max_days: TRIAL_MAX_DAYS,
        },
        period: { start: month.start.toISOString(), end: month.end.toISOString() },
        findings: { used, limit, remaining: limit === null ? null : Math.max(0, limit - used), over_quota: limit !== null && used >= limit, dropped },
        sensors: { used: deps.sensorCount === undefined ? null : await deps.sensorCount(orgId), limit: sensorQuota(plan) },
        pillars: Object.fromEntries(PILLARS.map((pillar) => [pillar, planAllows(plan, pillar)])),
        features: Object.fromEntries(PLAN_FEATURES.map((feature) => [feature, planAllows(plan, feature)])),
        rate: {
          requests_per_minute: limits.rate.perMinute === 0 ? null : limits.rate.perMinute,
          requests_per_day: limits.rate.perDay === 0 ? null : limits.rate.perDay,
          burst: limits.rate.burst,
          concurrent: limits.rate.concurrent === 0 ? null : limits.rate.concurrent,
        },
        daily_tokens: { limit: limits.dailyTokens },
      };
    },

    /** Creates an org (Starter trial unless a plan is given) and its first admin key (live). */
    /** Creates an org and its initial admin key; `within` (e.g. the CLI's org.created entry) runs in their transaction. */
    async createOrg(input: { name: string; plan?: Plan }, within: WithinWrite<{ org: OrgRecord; key: ApiKeyRecord }> = noWithin) {
      if (input.name.trim() === '' || input.name.length > 200) {
        throw new SvcError('VALIDATION_FAILED', { details: { field: 'name' }, message: 'name must be 1 to 200 characters' });
      }
      if (input.plan !== undefined && !(PLANS as readonly string[]).includes(input.plan)) {
        throw new SvcError('VALIDATION_FAILED', { details: { field: 'plan' }, message: `plan must be one of ${PLANS.join(', ')}` });
      }
      return db.transaction(async (tx) => {
        const org = await createOrgIn(tx, input);
        const { key, apiKey } = await insertKey(tx, org, { scope: 'admin', keyClass: 'live', name: 'initial admin key' });
        await within(tx, { org, key });
        return { org, key, apiKey };
      });
    },

    async getOrg(orgId: string): Promise<OrgRecord | null> {
      const result = await db.withOrg(orgId, (tx) => tx.query('SELECT * FROM orgs WHERE id = $1', [orgId]));
      return result.rows[0] ? orgRow(result.rows[0]) : null;
    },

    /** System listing for operators (CLI). */
    async listOrgs(): Promise<OrgRecord[]> {
      const result = await db.query('SELECT * FROM orgs ORDER BY created_at');
      return result.rows.map(orgRow);
    },

    async extendTrial(orgId: string, days: number, within: WithinWrite<OrgRecord> = noWithin): Promise<OrgRecord> {
      return db.withOrg(orgId, async (tx) => {
        const result = await lockOrgRow(tx, orgId);
        const row = result.rows[0];
        if (!row) throw new SvcError('NOT_FOUND');
        let next: Date;
        try {
          next = extendedTrialEnd(
            { plan: row.plan as Plan, trialStartedAt: row.trial_started_at as Date | null, trialEndsAt: row.trial_ends_at as Date | null },
            days,
          );
        } catch {
          throw new SvcError('TRIAL_LIMIT');
        }
        const updated = await tx.query('UPDATE orgs SET trial_ends_at = $2 WHERE id = $1 RETURNING *', [orgId, next]);
        const extended = orgRow(updated.rows[0]!);
        await within(tx, extended);
        return extended;
      });
    },

    /**
     * Creates a key; createdBy names its creator (the audit actor form: user:<id>, api_key:<id>, cli).
     * `within` (its audit entry) runs in the key's transaction: a failure of it stores no key.
     */
    async createKey(orgId: string, input: { scope: Scope; keyClass: KeyClass; name?: string | null; createdBy?: string | null }, within: WithinWrite<ApiKeyRecord> = noWithin) {
      return db.withOrg(orgId, async (tx) => {
        const org = await tx.query<{ id: string; tag: string }>('SELECT id, tag FROM orgs WHERE id = $1', [orgId]);
        if (!org.rows[0]) throw new SvcError('NOT_FOUND', { message: 'No such organization.' });
        const created = await insertKey(tx, org.rows[0], input);
        await within(tx, created.key);
        return created;
      });
    },

    async listKeys(orgId: string): Promise<ApiKeyRecord[]> {
      const result = await db.withOrg(orgId, (tx) => tx.query('SELECT * FROM api_keys ORDER BY created_at'));
      return result.rows.map(keyRow);
    },

    /**
     * The org's unrevoked keys as their SHA-256 hashes and scopes (never the keys): what an MCP
     * sensor checks its clients' keys against (docs/sensors.md, "MCP sensor").
     */
    async activeKeyHashes(orgId: string): Promise<Array<{ id: string; key_hash: string; scope: Scope }>> {
      const result = await db.withOrg(orgId, (tx) => tx.query<{ id: string; key_hash: string; scope: Scope }>('SELECT id::text, key_hash, scope FROM api_keys WHERE org_id = $1 AND revoked_at IS NULL ORDER BY created_at, id', [orgId]));
      return result.rows;
    },

    /**
     * Revokes an active key. Exactly one of concurrent revocations wins (the UPDATE only matches
     * while revoked_at is null); a key already revoked is 409 CONFLICT (reason already_revoked,
     * with its revoked_at), an unknown one 404.
     */
    async revokeKey(orgId: string, keyId: string, within: WithinWrite<ApiKeyRecord> = noWithin): Promise<ApiKeyRecord> {
      const result = await db.withOrg(orgId, async (tx) => {
        const updated = await tx.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING *', [keyId]);
        if (updated.rows[0] !== undefined) {
          await within(tx, keyRow(updated.rows[0]));
          return updated;
        }
        const existing = await tx.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM api_keys WHERE id = $1', [keyId]);
        const revokedAt = existing.rows[0]?.revoked_at;
        if (revokedAt === undefined || revokedAt === null) throw new SvcError('NOT_FOUND', { details: { resource: 'api_key' } });
        throw new SvcError('CONFLICT', { message: 'The API key is already revoked.', details: { reason: 'already_revoked', revoked_at: new Date(revokedAt).toISOString() } });
      });
      const row = result.rows[0];
      if (!row) throw new SvcError('NOT_FOUND');
      revocations++;
      for (const [hash, entry] of [...keyCache.entries()]) {
        if (entry.context !== 'revoked' && entry.context.keyId === keyId) keyCache.delete(hash);
      }
      return keyRow(row);
    },

    /** True when `authenticateKey` can answer from memory (no database round trip). */
    isKeyCached(presented: string): boolean {
      if (!KEY_PATTERN.test(presented)) return true;
      const hash = keyHash(presented);
      const cached = keyCache.get(hash);
      return (cached !== undefined && cached.expiresAt > Date.now()) || keyLookups.has(hash);
    },

    /**
     * `authenticateKey` answered from memory, synchronously: the same answer, or null when it
     * would need the database (key not cached, or its entry expired). The request hook's fast path.
     */
    authenticateCachedKey(presented: string): AuthContext | 'invalid' | 'revoked' | null {
      if (!KEY_PATTERN.test(presented)) return 'invalid';
      const now = Date.now();
      const cached = keyCache.get(keyHash(presented));
      if (cached === undefined || cached.expiresAt <= now) return null;
      const context = cached.context;
      if (context !== 'revoked') lastUsed.set(context.keyId!, { orgId: context.orgId, at: now });
      return context;
    },

    /**
     * Resolves a presented API key. Returns the caller's context, 'invalid' for an unknown or
     * malformed key, 'revoked' for a revoked one. Hot path: cached for 30 s.
     */
    async authenticateKey(presented: string): Promise<AuthContext | 'invalid' | 'revoked'> {
      const match = KEY_PATTERN.exec(presented);
      if (match === null) return 'invalid';
      const hash = keyHash(presented);
      const now = Date.now();
      const cached = keyCache.get(hash);
      let context: AuthContext | 'revoked' | 'invalid';
      if (cached !== undefined && cached.expiresAt > now) {
        context = cached.context;
      } else {
        let lookup = keyLookups.get(hash);
        if (lookup === undefined) {
          lookup = lookUpKey(hash, match[2]!, now).finally(() => keyLookups.delete(hash));
          keyLookups.set(hash, lookup);
        }
        try {
          context = await lookup;
        } catch (error) {
          // Database down: a key this process resolved recently is honoured stale (see
          // KEY_STALE_ON_OUTAGE_MS) for another TTL, so the database is asked again only then.
          if (cached === undefined || cached.resolvedAt + KEY_STALE_ON_OUTAGE_MS <= now || !isDatabaseOutage(error)) throw error;
          if (keyCache.get(hash) === cached) keyCache.set(hash, { ...cached, expiresAt: now + KEY_CACHE_TTL_MS });
          context = cached.context;
        }
      }
      if (context === 'invalid') return 'invalid';
      if (context !== 'revoked') lastUsed.set(context.keyId!, { orgId: context.orgId, at: now });
      return context;
    },

    providerKeys: {
      async set(orgId: string, provider: string, key: string, baseUrl: string | null, within: WithinWrite<ProviderKeyRecord> = noWithin): Promise<ProviderKeyRecord> {
        if (!PROVIDER_IDS.includes(provider)) {
          throw new SvcError('VALIDATION_FAILED', { details: { field: 'provider' }, message: `unknown provider ${provider}` });
        }
        if (key.trim() === '' || key.length > 8_192) {
          throw new SvcError('VALIDATION_FAILED', { details: { field: 'key' }, message: 'key must be 1 to 8192 characters' });
        }
        const placeholder = providerKeyPlaceholder(key);
        if (placeholder !== null) {
          throw new SvcError('VALIDATION_FAILED', { details: { field: 'key', reason: placeholder }, message: 'key looks like a placeholder (an ellipsis, "<…>" or "your-key"), not a provider key' });
        }
        const ciphertext = encrypt(encryptionKey, key, `${orgId}:${provider}`);
        const stored = await db.withOrg(orgId, async (tx) => {
          const result = await tx.query(
            `INSERT INTO provider_keys (id, org_id, provider, ciphertext, last4, base_url) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (org_id, provider) DO UPDATE SET ciphertext = EXCLUDED.ciphertext, last4 = EXCLUDED.last4,
               base_url = EXCLUDED.base_url, updated_at = now()
             RETURNING provider, last4, base_url, updated_at`,
            [randomUUID(), orgId, provider, ciphertext, key.length >= 20 ? key.slice(-4) : '', baseUrl] /* the mask shows the last four only of a key long enough */,
          );
          const row = result.rows[0]!;
          const record: ProviderKeyRecord = {
            provider: row.provider as string,
            key: mask(row.last4 as string),
            base_url: (row.base_url as string | null) ?? null,
            updated_at: (row.updated_at as Date).toISOString(),
          };
          await within(tx, record);
          return record;
        });
        providerKeyCache.delete(`${orgId}:${provider}`);
        return stored;
      },

      /** The decrypted key for a call upstream (cached 30 s), or null when none is stored. */
      async get(orgId: string, provider: string): Promise<{ key: string; baseUrl: string | null } | null> {
        const cacheKey = `${orgId}:${provider}`;
        const cached = providerKeyCache.get(cacheKey);
        if (cached !== undefined && cached.expiresAt > Date.now()) return cached.value;
        const result = await db.withOrg(orgId, (tx) =>
          tx.query('SELECT ciphertext, base_url FROM provider_keys WHERE provider = $1', [provider]),
        );
        const row = result.rows[0];
        const value = row
          ? { key: decrypt(encryptionKey, row.ciphertext as string, cacheKey), baseUrl: (row.base_url as string | null) ?? null }
          : null;
        providerKeyCache.set(cacheKey, { value, expiresAt: Date.now() + KEY_CACHE_TTL_MS });
        return value;
      },

      async list(orgId: string): Promise<ProviderKeyRecord[]> {
        const result = await db.withOrg(orgId, (tx) => tx.query('SELECT provider, last4, base_url, updated_at FROM provider_keys ORDER BY provider'));
        return result.rows.map((row) => ({
          provider: row.provider as string,
          key: mask(row.last4 as string),
          base_url: (row.base_url as string | null) ?? null,
          updated_at: (row.updated_at as Date).toISOString(),
        }));
      },

      /** Removes a provider's key; `within` runs in the delete's transaction, only when there was one. */
      async remove(orgId: string, provider: string, within: WithinWrite<string> = noWithin): Promise<boolean> {
        const removed = await db.withOrg(orgId, async (tx) => {
          const result = await tx.query('DELETE FROM provider_keys WHERE provider = $1 RETURNING provider', [provider]);
          if (result.rows.length === 0) return false;
          await within(tx, provider);
          return true;
        });
        providerKeyCache.delete(`${orgId}:${provider}`);
        return removed;
      },
    },

    users: {
      /** Self-service sign-up: a new org on a 30-day Starter trial and its first (admin) user. */
      async register(input: { email: string; password: string; orgName: string }) {
        const email = input.email.trim().toLowerCase();
        const passwordHash = await argonHash(input.password);
        try {
          return await db.transaction(async (tx) => {
            const taken = await tx.query('SELECT 1 FROM users WHERE lower(email) = $1', [email]);
            if (taken.rows.length > 0) throw new SvcError('EMAIL_TAKEN');
            const org = await createOrgIn(tx, { name: input.orgName });
            const userId = randomUUID();
            await tx.query(`INSERT INTO users (id, org_id, email, password_hash, role) VALUES ($1, $2, $3, $4, 'admin')`, [
              userId,
              org.id,
              email,
              passwordHash,
            ]);
            return { org, userId, role: 'admin' as Role };
          });
        } catch (error) {
          if ((error as { code?: string }).code === '23505') throw new SvcError('EMAIL_TAKEN');
          throw error;
        }
      },

      /** The user a password signs in, with the hash it was checked against (finishSignIn refuses a session if it changed meanwhile). */
      async login(emailInput: string, password: string): Promise<{ userId: string; orgId: string; role: Role; passwordHash: string } | null> {
        const email = emailInput.trim().toLowerCase();
        const result = await db.query('SELECT id, org_id, password_hash, role FROM users WHERE lower(email) = $1', [email]);
        const row = result.rows[0];
        // Verify against a fixed hash when the user is unknown, so timing does not reveal accounts.
        const stored = (row?.password_hash as string | undefined) ?? (await unknownUserHashOnce());
        const ok = await argonVerify(stored, password).catch(() => false);
        if (!row || !ok) return null;
        await db.withOrg(row.org_id as string, (tx) => tx.query('UPDATE users SET last_login_at = now() WHERE id = $1', [row.id]));
        return { userId: row.id as string, orgId: row.org_id as string, role: row.role as Role, passwordHash: stored };
      },

      /**
       * Opens a dashboard session (server-side, revocable) and returns its token. Routes go through
       * finishSignIn (sign-in.ts), which also sets the cookies.
       */
      issueSession(user: { userId: string; orgId: string; role: Role }, method: SignInMethod = 'password') {
        return sessions.issue(user, method);
      },

      /** Resolves a dashboard session token, or null when it is not valid (revoked, expired, idle). */
      authenticateSession(token: string): Promise<AuthContext | null> {
        return sessions.authenticate(token);
      },
    },

    /** Dashboard sessions: state, CSRF tokens, revocation. */
    sessions,

    /** The org's members: list, invitations, role changes, removal, password change. */
    members: createMembers({ db, config, sessions }),

    /** Writes pending last-used times now (shutdown, tests). */
    flush: flushLastUsed,

    async close(): Promise<void> {
      clearInterval(flushTimer);
      await flushLastUsed();
      await accounts.findings.close();
    },
  };
  return accounts;
}

// argon2id hash of a random string nobody knows; verifying against it equalizes timing for
// unknown users. Computed once, on the first login attempt.
let unknownUserHash: Promise<string> | null = null;
function unknownUserHashOnce(): Promise<string> {
  unknownUserHash ??= argonHash(randomBase62(32));
  return unknownUserHash;
}

/**
 * Why a provider key is a placeholder copied from documentation (README's `sk-…`, `<your key>`,
 * `sk-xxxx`), or null when it may be a real key. Real provider keys are long runs of
 * base64/base62 characters, never an ellipsis or angle brackets.
 */
export function providerKeyPlaceholder(key: string): string | null {
  const text = key.trim();
  if (/…|\.\.\./.test(text)) return 'ellipsis';
  if (/[<>{}]/.test(text)) return 'template';
  if (/your[-_ ]?(?:api[-_ ]?)?key|replace[-_ ]?me|changeme/i.test(text)) return 'template';
  if (/^(?:sk-)?x{4,}$/i.test(text)) return 'template';
  if (text.length < 8) return 'too_short';
  return null;
}
