/**
 * Operator commands shared by the CLI (run locally or through a running server's control
 * socket). Each returns a JSON object (what --json prints) and a line of text for humans.
 */
import type { ParseArgsConfig } from 'node:util';
import { KEY_CLASSES, PLANS, ROLES, SCOPES, type KeyClass, type Plan, type Role, type Scope } from './accounts/index.ts';
import { runAuditVerify } from './audit/index.ts';
import { retryingLockConflicts } from './platform/db/failures.ts';
import { migrate, type Queryable } from './platform/db/index.ts';
import { SvcError } from './platform/errors.ts';
import { isUuid } from './platform/uuid.ts';
import type { Services } from './services.ts';

export interface CommandResult {
  ok?: boolean;
  json: Record<string, unknown>;
  text: string;
}

type Options = Record<string, string | boolean | undefined>;

interface CommandSpec {
  summary: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(services: Services, options: Options): Promise<CommandResult>;
}

/**
 * Operator changes made through the CLI go to the org's audit chain with actor "cli", appended in
 * the change's own transaction (`tx`): the change and its entry are stored together or not at all.
 * The commands run the whole under retryingLockConflicts.
 */
function auditCli(services: Services, tx: Queryable, orgId: string, action: string, target: string, details: Record<string, unknown> = {}) {
  return services.audit.append(orgId, { actor: 'cli', action, target, outcome: 'success', details }, { tx });
}

function required(options: Options, name: string): string {
  const value = options[name];
  if (typeof value !== 'string' || value.trim() === '') {
    throw new SvcError('VALIDATION_FAILED', { message: `--${name} is required`, details: { field: name } });
  }
  return value;
}

function oneOf<T extends string>(options: Options, name: string, allowed: readonly T[], fallback?: T): T {
  const value = options[name];
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new SvcError('VALIDATION_FAILED', { message: `--${name} must be one of ${allowed.join(', ')}`, details: { field: name } });
  }
  return value as T;
}

function uuid(options: Options, name: string): string {
  const value = required(options, name);
  if (!isUuid(value)) {
    throw new SvcError('VALIDATION_FAILED', { message: `--${name} must be an org id (uuid)`, details: { field: name } });
  }
  return value;
}


export const commandSpecs: Record<string, CommandSpec> = {
  migrate: {
    summary: 'apply pending database migrations',
    options: {},
    async run(services) {
      const applied = await migrate(services.db);
      return { json: { applied }, text: applied.length ? `applied migrations ${applied.join(', ')}` : 'database is up to date' };
    },
  },
  'org create': {
    summary: '--name N [--plan community|starter|pro|enterprise]  create an org and its admin key',
    options: { name: { type: 'string' }, plan: { type: 'string' } },
    async run(services, options) {
      const plan = options.plan === undefined ? undefined : oneOf<Plan>(options, 'plan', PLANS);
      const { org, apiKey } = await retryingLockConflicts(() =>
        services.accounts.createOrg({ name: required(options, 'name'), ...(plan ? { plan } : {}) }, (tx, created) =>
          auditCli(services, tx, created.org.id, 'org.created', created.org.id, { plan: created.org.plan, initial_key_id: created.key.key_id }),
        ),
      );
      return {
        json: { org_id: org.id, org_tag: org.tag, plan: org.plan, trial_ends_at: org.trial_ends_at, api_key: apiKey },
        text: `org ${org.id} (${org.tag}) plan ${org.plan}\nadmin key (shown once): ${apiKey}`,
      };
    },
  },
  'org plan': {
    summary: '--org ID --plan community|starter|pro|enterprise  change an org\'s plan (upgrade, downgrade, trial conversion; no payment processor)',
    options: { org: { type: 'string' }, plan: { type: 'string' } },
    async run(services, options) {
      const orgId = uuid(options, 'org');
      const plan = oneOf<Plan>(options, 'plan', PLANS);
      const result = await retryingLockConflicts(() =>
        services.accounts.changePlan(orgId, plan, (tx, changed) =>
          auditCli(services, tx, orgId, 'org.plan_changed', orgId, {
            from: changed.previous.plan,
            from_effective: changed.previous.effective_plan,
            to: changed.org.plan,
            change: changed.change,
            trial_ends_at_before: changed.previous.trial_ends_at,
          }),
        ),
      );
      return {
        json: { org: result.org, previous: result.previous, change: result.change },
        text: `org ${orgId}: ${result.previous.effective_plan} → ${result.org.plan} (${result.change})`,
      };
    },
  },
  'org usage': {
    summary: '--org ID  usage against every quota of the org\'s plan (findings this month, sensors, trial, pillars)',
    options: { org: { type: 'string' } },
    async run(services, options) {
      const usage = await services.accounts.usage(uuid(options, 'org'));
      const findings = `${usage.findings.used}/${usage.findings.limit ?? 'unlimited'}${usage.findings.dropped > 0 ? ` (${usage.findings.dropped} dropped)` : ''}`;
      return {
        json: usage as unknown as Record<string, unknown>,
        text: `plan ${usage.effective_plan}  findings ${findings}  sensors ${usage.sensors.used ?? '?'}/${usage.sensors.limit ?? 'unlimited'}${usage.trial.active ? `  trial ${usage.trial.days_left} days left` : ''}`,
      };
    },
  },
  'org list': {
    summary: 'list organizations',
    options: {},
    async run(services) {
      const orgs = await services.accounts.listOrgs();
      return { json: { data: orgs }, text: orgs.map((org) => `${org.id}  ${org.tag}  ${org.effective_plan}  ${org.name}`).join('\n') };
    },
  },
  'key create': {
    summary: '--org ID --scope read|write|admin [--class live|test|rstr] [--name N]  create an API key',
    options: { org: { type: 'string' }, scope: { type: 'string' }, class: { type: 'string' }, name: { type: 'string' } },
    async run(services, options) {
      const scope = oneOf<Scope>(options, 'scope', SCOPES);
      const keyClass = oneOf<KeyClass>(options, 'class', KEY_CLASSES, 'live');
      const name = typeof options.name === 'string' ? options.name : null;
      const orgId = uuid(options, 'org');
      const { key, apiKey } = await retryingLockConflicts(() =>
        services.accounts.createKey(orgId, { scope, keyClass, name, createdBy: 'cli' }, (tx, created) => auditCli(services, tx, orgId, 'api_key.created', created.key_id, { scope, class: keyClass })),
      );
      return { json: { key_id: key.key_id, api_key: apiKey, scope: key.scope, class: key.class }, text: `key ${key.key_id} (${scope}, ${keyClass}): ${apiKey}` };
    },
  },
  'key list': {
    summary: '--org ID  list API keys (never the secrets)',
    options: { org: { type: 'string' } },
    async run(services, options) {
      const keys = await services.accounts.listKeys(uuid(options, 'org'));
      return { json: { data: keys }, text: keys.map((key) => `${key.key_id}  ${key.display}  ${key.scope}  ${key.revoked_at ? 'revoked' : 'active'}`).join('\n') };
    },
  },
  'key revoke': {
    summary: '--org ID --key KEY_ID  revoke an API key',
    options: { org: { type: 'string' }, key: { type: 'string' } },
    async run(services, options) {
      const orgId = uuid(options, 'org');
      const keyId = uuid(options, 'key');
      const key = await retryingLockConflicts(() => services.accounts.revokeKey(orgId, keyId, (tx, revoked) => auditCli(services, tx, orgId, 'api_key.revoked', revoked.key_id)));
      return { json: { ...key }, text: `revoked ${key.key_id}` };
    },
  },
  'user role': {
    summary: '--org ID --email E --role viewer|operator|admin|super_admin  set a user\'s role (the way to make the first super_admin)',
    options: { org: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' } },
    async run(services, options) {
      const orgId = uuid(options, 'org');
      const role = oneOf<Role>(options, 'role', ROLES);
      const user = await services.accounts.members.findByEmail(orgId, required(options, 'email'));
      if (user === null) throw new SvcError('NOT_FOUND', { message: 'No user with this e-mail in the org.', details: { resource: 'user' } });
      const { user: changed, previousRole } = await retryingLockConflicts(() =>
        services.accounts.members.changeRole(orgId, 'operator', user.user_id, role, async (tx, result) => {
          if (result.previousRole !== result.user.role) await auditCli(services, tx, orgId, 'user.role_changed', result.user.user_id, { from: result.previousRole, to: result.user.role });
        }),
      );
      return { json: { ...changed, previous_role: previousRole }, text: `${changed.email}: ${previousRole} → ${changed.role}` };
    },
  },
  'provider-key set': {
    summary: '--org ID --provider P --key K [--base-url URL]  store an upstream provider key (encrypted)',
    options: { org: { type: 'string' }, provider: { type: 'string' }, key: { type: 'string' }, 'base-url': { type: 'string' } },
    async run(services, options) {
      const baseUrl = typeof options['base-url'] === 'string' ? options['base-url'] : null;
      if (baseUrl !== null) await services.checkTarget(baseUrl, 'base-url');
      const orgId = uuid(options, 'org');
      const provider = required(options, 'provider');
      const key = required(options, 'key');
      const record = await retryingLockConflicts(() =>
        services.accounts.providerKeys.set(orgId, provider, key, baseUrl, (tx, stored) => auditCli(services, tx, orgId, 'provider_key.set', stored.provider, { base_url: stored.base_url })),
      );
      return { json: { ...record }, text: `stored ${record.provider} key ${record.key}` };
    },
  },
  'audit verify': {
    summary: '[--org ID] [--last N]  verify the audit hash chain (every org, or one; all records, or the last N)',
    options: { org: { type: 'string' }, last: { type: 'string' } },
    async run(services, options) {
      const orgId = options.org === undefined ? undefined : uuid(options, 'org');
      let last: number | undefined;
      if (options.last !== undefined) {
        last = Number(options.last);
        if (!Number.isInteger(last) || last < 1) throw new SvcError('VALIDATION_FAILED', { message: '--last must be a positive integer', details: { field: 'last' } });
      }
      const report = await runAuditVerify(services.audit, { ...(orgId ? { orgId } : {}), ...(last ? { last } : {}) });
      const bad = report.first_bad;
      return {
        ok: report.ok,
        json: { ...report },
        text: report.ok ? `audit chain intact: ${report.checked} records in ${report.orgs} org(s)` : `audit chain BROKEN in org ${bad?.org_id} at seq ${bad?.seq}: ${bad?.reason}`,
      };
    },
  },
  'metrics-token': {
    summary: 'print the bearer token /metrics expects',
    options: {},
    async run(services) {
      return { json: { token: services.config.metricsToken }, text: services.config.metricsToken };
    },
  },
};

export async function runCommand(services: Services, name: string, options: Options): Promise<CommandResult> {
  const spec = commandSpecs[name];
  if (spec === undefined) throw new SvcError('VALIDATION_FAILED', { message: `unknown command "${name}"` });
  return spec.run(services, options);
}
