/**
 * The permission table of docs/accounts.md, row by row: every role calls a representative
 * endpoint of every action, with a user session; the roles the table allows succeed and every
 * other role is refused (403), so no lower role ever succeeds.
 */
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLES, type Role } from '../../src/accounts/index.ts';
import { runCommand } from '../../src/commands.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { bearer, invite, register, type Person } from './people.ts';

let context: TestContext;
let owner: Person;
const people = {} as Record<Role, Person>;

beforeAll(async () => {
  context = await createTestApp();
  owner = await register(context);
  people.admin = owner;
  people.viewer = await invite(context, owner.token, 'viewer');
  people.operator = await invite(context, owner.token, 'operator');
  // The first super_admin is made by the host's operator (the CLI's `user role`): an admin cannot.
  const future = await invite(context, owner.token, 'admin');
  await context.services.accounts.members.changeRole(owner.orgId, 'operator', future.userId, 'super_admin');
  people.super_admin = { ...future, role: 'super_admin' };
});
afterAll(async () => context.close());

/** A fresh viewer to act on (role changes and removals use one each). */
const target = () => invite(context, owner.token, 'viewer');

interface Action {
  name: string;
  allowed: readonly Role[];
  call(token: string): Promise<LightMyRequestResponse>;
}

const everyone: readonly Role[] = ROLES;
const operatorUp: readonly Role[] = ['operator', 'admin', 'super_admin'];
const adminUp: readonly Role[] = ['admin', 'super_admin'];
const superAdmin: readonly Role[] = ['super_admin'];

const inject = (token: string, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  context.app.inject({ method, url, headers: bearer(token), ...(payload === undefined ? {} : { payload }) });

const ACTIONS: Action[] = [
  { name: 'read the org', allowed: everyone, call: (token) => inject(token, 'GET', '/api/v1/org') },
  { name: 'list users', allowed: everyone, call: (token) => inject(token, 'GET', '/api/v1/users') },
  { name: 'see the own session', allowed: everyone, call: (token) => inject(token, 'GET', '/api/v1/auth/session') },
  { name: 'send traffic (inspect)', allowed: operatorUp, call: (token) => inject(token, 'POST', '/api/v1/inspect', { kind: 'prompt', content: 'What is the capital of France?' }) },
  { name: 'configure (set a provider key)', allowed: adminUp, call: (token) => inject(token, 'PUT', '/api/v1/providers/openai/key', { key: `sk-proj-${randomUUID().replaceAll('-', '')}` }) },
  { name: 'create an API key', allowed: adminUp, call: (token) => inject(token, 'POST', '/api/v1/keys', { scope: 'read', name: 'role test' }) },
  { name: 'list API keys', allowed: adminUp, call: (token) => inject(token, 'GET', '/api/v1/keys') },
  { name: 'invite a viewer', allowed: adminUp, call: (token) => inject(token, 'POST', '/api/v1/users/invitations', { email: `v-${randomUUID().slice(0, 8)}@example.com`, role: 'viewer' }) },
  { name: 'list invitations', allowed: adminUp, call: (token) => inject(token, 'GET', '/api/v1/users/invitations') },
  {
    name: 'revoke an invitation',
    allowed: adminUp,
    call: async (token) => {
      const made = await inject(owner.token, 'POST', '/api/v1/users/invitations', { email: `r-${randomUUID().slice(0, 8)}@example.com`, role: 'viewer' });
      return inject(token, 'DELETE', `/api/v1/users/invitations/${made.json().invitation_id}`);
    },
  },
  { name: 'change a role', allowed: adminUp, call: async (token) => inject(token, 'PATCH', `/api/v1/users/${(await target()).userId}`, { role: 'operator' }) },
  { name: 'remove a user', allowed: adminUp, call: async (token) => inject(token, 'DELETE', `/api/v1/users/${(await target()).userId}`) },
  { name: 'invite a super_admin', allowed: superAdmin, call: (token) => inject(token, 'POST', '/api/v1/users/invitations', { email: `s-${randomUUID().slice(0, 8)}@example.com`, role: 'super_admin' }) },
  { name: 'promote to super_admin', allowed: superAdmin, call: async (token) => inject(token, 'PATCH', `/api/v1/users/${(await target()).userId}`, { role: 'super_admin' }) },
];

describe('the permission table, enforced for user sessions', () => {
  for (const action of ACTIONS) {
    for (const role of ROLES) {
      const allowed = action.allowed.includes(role);
      it(`${allowed ? 'lets' : 'refuses'} a ${role} ${action.name}`, async () => {
        const response = await action.call(people[role].token);
        if (allowed) {
          expect(response.statusCode, response.body).toBeGreaterThanOrEqual(200);
          expect(response.statusCode, response.body).toBeLessThan(300);
        } else {
          expect(response.statusCode, response.body).toBe(403);
          expect(['SCOPE_INSUFFICIENT', 'ROLE_INSUFFICIENT']).toContain(response.json().error.code);
        }
      });
    }
  }

  it('refuses an admin who would demote or remove a super_admin (ROLE_INSUFFICIENT), and changes nothing', async () => {
    const demote = await inject(owner.token, 'PATCH', `/api/v1/users/${people.super_admin.userId}`, { role: 'admin' });
    expect(demote.statusCode).toBe(403);
    expect(demote.json().error.code).toBe('ROLE_INSUFFICIENT');
    const remove = await inject(owner.token, 'DELETE', `/api/v1/users/${people.super_admin.userId}`);
    expect(remove.json().error.code).toBe('ROLE_INSUFFICIENT');
    const listed = (await inject(owner.token, 'GET', '/api/v1/users')).json().data as Array<{ user_id: string; role: string }>;
    expect(listed.find((user) => user.user_id === people.super_admin.userId)?.role).toBe('super_admin');
  });

  it("cannot touch another org's users: their ids answer 404 and nothing changes", async () => {
    const other = await register(context);
    const stranger = await invite(context, other.token, 'viewer');
    const patch = await inject(owner.token, 'PATCH', `/api/v1/users/${stranger.userId}`, { role: 'admin' });
    expect(patch.statusCode).toBe(404);
    const remove = await inject(owner.token, 'DELETE', `/api/v1/users/${stranger.userId}`);
    expect(remove.statusCode).toBe(404);
    expect((await inject(stranger.token, 'GET', '/api/v1/auth/session')).json().role).toBe('viewer');
    const listed = (await inject(owner.token, 'GET', '/api/v1/users')).json().data as Array<{ user_id: string }>;
    expect(listed.map((user) => user.user_id)).not.toContain(stranger.userId);
  });

  it('never lets an API key grant super_admin, even an admin key', async () => {
    const org = await context.services.accounts.createOrg({ name: 'keyed' });
    const response = await context.app.inject({ method: 'POST', url: '/api/v1/users/invitations', headers: bearer(org.apiKey), payload: { email: `k-${randomUUID().slice(0, 8)}@example.com`, role: 'super_admin' } });
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('ROLE_INSUFFICIENT');
    const viewer = await context.app.inject({ method: 'POST', url: '/api/v1/users/invitations', headers: bearer(org.apiKey), payload: { email: `k-${randomUUID().slice(0, 8)}@example.com`, role: 'viewer' } });
    expect(viewer.statusCode).toBe(201);
    expect(viewer.json().invited_by).toBe(`api_key:${org.key.key_id}`);
  });

  it('applies a role change to the open session at its next request', async () => {
    const person = await invite(context, owner.token, 'operator');
    expect((await inject(person.token, 'POST', '/api/v1/inspect', { kind: 'prompt', content: 'hello' })).statusCode).toBe(200);
    expect((await inject(owner.token, 'PATCH', `/api/v1/users/${person.userId}`, { role: 'viewer' })).statusCode).toBe(200);
    const after = await inject(person.token, 'POST', '/api/v1/inspect', { kind: 'prompt', content: 'hello' });
    expect(after.statusCode).toBe(403);
    expect(after.json().error.code).toBe('SCOPE_INSUFFICIENT');
    expect((await inject(person.token, 'GET', '/api/v1/auth/session')).json().role).toBe('viewer');
  });

  it('records who created each API key and lists it', async () => {
    const created = await inject(owner.token, 'POST', '/api/v1/keys', { scope: 'read', name: 'by a user' });
    expect(created.json().created_by).toBe(`user:${owner.userId}`);
    const apiKey = created.json().api_key as string;
    const admin = await context.services.accounts.createKey(owner.orgId, { scope: 'admin', keyClass: 'live', name: 'admin key', createdBy: `user:${owner.userId}` });
    const byKey = await context.app.inject({ method: 'POST', url: '/api/v1/keys', headers: bearer(admin.apiKey), payload: { scope: 'read' } });
    expect(byKey.json().created_by).toBe(`api_key:${admin.key.key_id}`);
    const listed = (await inject(owner.token, 'GET', '/api/v1/keys')).json().data as Array<{ key_id: string; created_by: string | null; display: string }>;
    expect(listed.find((key) => key.key_id === created.json().key_id)?.created_by).toBe(`user:${owner.userId}`);
    expect(listed.find((key) => key.key_id === byKey.json().key_id)?.created_by).toBe(`api_key:${admin.key.key_id}`);
    expect(apiKey).toMatch(/^svc_org_live_/);
  });
});

describe('the CLI (the host operator)', () => {
  it('makes a user super_admin with `user role`, audited with actor cli', async () => {
    const person = await invite(context, owner.token, 'viewer');
    const result = await runCommand(context.services, 'user role', { org: owner.orgId, email: person.email.toUpperCase(), role: 'super_admin' });
    expect(result.json).toMatchObject({ user_id: person.userId, role: 'super_admin', previous_role: 'viewer' });
    expect((await inject(person.token, 'GET', '/api/v1/auth/session')).json().role).toBe('super_admin');
    const trail = await context.services.db.withOrg(owner.orgId, (tx) =>
      tx.query<{ actor: string; details: Record<string, unknown> }>(`SELECT actor, details FROM audit_log WHERE action = 'user.role_changed' AND target = $1`, [person.userId]),
    );
    expect(trail.rows).toEqual([expect.objectContaining({ actor: 'cli', details: expect.objectContaining({ from: 'viewer', to: 'super_admin' }) })]);
  });

  it('refuses `user role` for an address that is not a user of the org (NOT_FOUND)', async () => {
    await expect(runCommand(context.services, 'user role', { org: owner.orgId, email: 'nobody@example.com', role: 'admin' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('the last administrator', () => {
  it('can be neither demoted nor removed (409 LAST_ADMIN), and stays admin', async () => {
    const alone = await register(context);
    const demote = await inject(alone.token, 'PATCH', `/api/v1/users/${alone.userId}`, { role: 'viewer' });
    expect(demote.statusCode).toBe(409);
    expect(demote.json().error.code).toBe('LAST_ADMIN');
    const remove = await inject(alone.token, 'DELETE', `/api/v1/users/${alone.userId}`);
    expect(remove.statusCode).toBe(409);
    expect(remove.json().error.code).toBe('LAST_ADMIN');
    const session = await inject(alone.token, 'GET', '/api/v1/auth/session');
    expect(session.json().role).toBe('admin');
  });

  it('may step down once another admin exists', async () => {
    const first = await register(context);
    const second = await invite(context, first.token, 'admin');
    const demote = await inject(first.token, 'PATCH', `/api/v1/users/${first.userId}`, { role: 'viewer' });
    expect(demote.statusCode, demote.body).toBe(200);
    const last = await inject(second.token, 'DELETE', `/api/v1/users/${second.userId}`);
    expect(last.json().error.code).toBe('LAST_ADMIN');
  });

  it('survives two concurrent demotions of the last two admins: one wins, the other is LAST_ADMIN', async () => {
    const first = await register(context);
    const second = await invite(context, first.token, 'admin');
    const [a, b] = await Promise.all([
      inject(first.token, 'PATCH', `/api/v1/users/${second.userId}`, { role: 'viewer' }),
      inject(second.token, 'PATCH', `/api/v1/users/${first.userId}`, { role: 'viewer' }),
    ]);
    const statuses = [a, b].map((response) => response.statusCode).sort();
    // The loser is refused either by LAST_ADMIN or, when the winner demoted it first, by its own new scope.
    expect(statuses[0]).toBe(200);
    expect([403, 409]).toContain(statuses[1]);
    const users = await context.services.accounts.members.list(first.orgId);
    expect(users.filter((user) => user.role === 'admin')).toHaveLength(1);
  });
});
