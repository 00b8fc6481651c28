/**
 * An account change (API key created or revoked, role changed, user removed, invitation accepted,
 * provider key, plan) and its audit entry are one transaction: when the entry cannot be appended
 * (an outage, a lock conflict that persists) nothing is stored and the client is answered 503
 * with Retry-After; its retry stores the change and its entry once. A conflict lost once is tried
 * again whole and the request succeeds. Before, the change was committed first and the entry
 * appended after it: the 503 left a change without its audit record (a key nobody saw created in
 * the chain), and the client's retry made a second key.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { bearer, invite, nextAddress, PASSWORD, register, tokenOf, type Person } from '../accounts/people.ts';
import { chained, databaseOutage, expectUnavailable, failAppends, lockConflict } from './audited-writes.ts';

describe('account changes and their audit entries are stored together or not at all', () => {
  let context: TestContext;
  let owner: Person;
  beforeAll(async () => {
    context = await createTestApp();
    owner = await register(context);
  }, 60_000);
  afterAll(async () => context.close());
  afterEach(() => vi.restoreAllMocks());

  const failures: Array<[string, () => Error]> = [
    ['an outage', databaseOutage],
    ['a lock conflict that persists', lockConflict],
  ];
  // A persistent conflict: more than retryingLockConflicts' attempts.
  const timesFor = (failure: () => Error) => (failure === lockConflict ? 1_000 : 1);

  const createKey = (name: string) => context.app.inject({ method: 'POST', url: '/api/v1/keys', headers: bearer(owner.token), payload: { scope: 'read', name } });
  const keysNamed = async (name: string) =>
    (await context.app.inject({ method: 'GET', url: '/api/v1/keys', headers: bearer(owner.token) })).json().data.filter((key: { name: string | null }) => key.name === name) as Array<{ key_id: string; revoked_at: string | null }>;

  it.each(failures)('stores no API key when its api_key.created entry meets %s, and the retry stores one key and one entry', async (_what, failure) => {
    const name = `key-${randomUUID().slice(0, 8)}`;
    failAppends(context.services.audit, 'api_key.created', timesFor(failure), failure);
    expectUnavailable(await createKey(name));
    // Before: the key was stored (usable, never on the chain) and the answer was 503.
    expect(await keysNamed(name)).toEqual([]);
    vi.restoreAllMocks();

    const again = await createKey(name);
    expect(again.statusCode).toBe(201);
    expect((await keysNamed(name)).map((key) => key.key_id)).toEqual([again.json().key_id]);
    expect((await chained(context, owner.orgId, 'api_key.created')).filter((target) => target === again.json().key_id)).toHaveLength(1);
    // The key works: it was stored with its entry.
    expect((await context.app.inject({ method: 'GET', url: '/api/v1/whoami', headers: bearer(again.json().api_key) })).statusCode).toBe(200);
  });

  it('creates one API key and one entry when the entry loses a lock conflict once (tried again whole)', async () => {
    const name = `key-${randomUUID().slice(0, 8)}`;
    failAppends(context.services.audit, 'api_key.created', 1, lockConflict);
    const answer = await createKey(name);
    expect(answer.statusCode).toBe(201);
    expect((await keysNamed(name)).map((key) => key.key_id)).toEqual([answer.json().key_id]);
    expect(await chained(context, owner.orgId, 'api_key.created')).toContain(answer.json().key_id);
  });

  it.each(failures)('leaves an API key active when its api_key.revoked entry meets %s, and the retry revokes it with one entry', async (_what, failure) => {
    const name = `key-${randomUUID().slice(0, 8)}`;
    const created = await createKey(name);
    expect(created.statusCode).toBe(201);
    const { key_id: keyId, api_key: apiKey } = created.json();
    const revoke = () => context.app.inject({ method: 'DELETE', url: `/api/v1/keys/${keyId}`, headers: bearer(owner.token) });
    failAppends(context.services.audit, 'api_key.revoked', timesFor(failure), failure);
    expectUnavailable(await revoke());
    // Before: the key was revoked with no api_key.revoked entry, and the retry answered 409.
    expect((await keysNamed(name))[0]?.revoked_at).toBeNull();
    expect((await context.app.inject({ method: 'GET', url: '/api/v1/whoami', headers: bearer(apiKey) })).statusCode).toBe(200);
    vi.restoreAllMocks();

    expect((await revoke()).statusCode).toBe(200);
    expect((await keysNamed(name))[0]?.revoked_at).not.toBeNull();
    expect((await chained(context, owner.orgId, 'api_key.revoked')).filter((target) => target === keyId)).toHaveLength(1);
  });

  it.each(failures)('keeps a user\'s role when its user.role_changed entry meets %s, and the retry changes it with one entry', async (_what, failure) => {
    const viewer = await invite(context, owner.token, 'viewer');
    const change = () => context.app.inject({ method: 'PATCH', url: `/api/v1/users/${viewer.userId}`, headers: bearer(owner.token), payload: { role: 'operator' } });
    const roleOf = async () => (await context.services.accounts.members.get(owner.orgId, viewer.userId))?.role;
    failAppends(context.services.audit, 'user.role_changed', timesFor(failure), failure);
    expectUnavailable(await change());
    // Before: the role was changed (the user's sessions too) with no entry; the retry changed nothing and chained nothing.
    expect(await roleOf()).toBe('viewer');
    vi.restoreAllMocks();

    expect((await change()).statusCode).toBe(200);
    expect(await roleOf()).toBe('operator');
    expect((await chained(context, owner.orgId, 'user.role_changed')).filter((target) => target === viewer.userId)).toHaveLength(1);
  });

  it.each(failures)('keeps a user when its user.removed entry meets %s, and the retry removes it with one entry', async (_what, failure) => {
    const viewer = await invite(context, owner.token, 'viewer');
    const remove = () => context.app.inject({ method: 'DELETE', url: `/api/v1/users/${viewer.userId}`, headers: bearer(owner.token) });
    failAppends(context.services.audit, 'user.removed', timesFor(failure), failure);
    expectUnavailable(await remove());
    // Before: the user was removed with no entry, and the retry answered 404.
    expect(await context.services.accounts.members.get(owner.orgId, viewer.userId)).not.toBeNull();
    vi.restoreAllMocks();

    expect((await remove()).statusCode).toBe(204);
    expect(await context.services.accounts.members.get(owner.orgId, viewer.userId)).toBeNull();
    expect((await chained(context, owner.orgId, 'user.removed')).filter((target) => target === viewer.userId)).toHaveLength(1);
  });

  it('creates no user when the user.invitation_accepted entry meets an outage, and the same link accepted again creates one with one entry', async () => {
    const email = `viewer-${randomUUID().slice(0, 8)}@example.com`;
    const invited = await context.app.inject({ method: 'POST', url: '/api/v1/users/invitations', headers: bearer(owner.token), payload: { email, role: 'viewer' } });
    expect(invited.statusCode).toBe(201);
    const accept = () => context.app.inject({ method: 'POST', url: '/api/v1/auth/invitations/accept', payload: { token: tokenOf(invited.json().accept_url), password: PASSWORD }, remoteAddress: nextAddress() });
    failAppends(context.services.audit, 'user.invitation_accepted', 1);
    expectUnavailable(await accept());
    // Before: the user was created and the invitation used, with no entry; the link then answered INVITATION_USED.
    expect(await context.services.accounts.members.findByEmail(owner.orgId, email)).toBeNull();
    vi.restoreAllMocks();

    const again = await accept();
    expect(again.statusCode).toBe(201);
    expect((await context.services.accounts.members.findByEmail(owner.orgId, email))?.user_id).toBe(again.json().user_id);
    expect((await chained(context, owner.orgId, 'user.invitation_accepted')).filter((target) => target === invited.json().invitation_id)).toHaveLength(1);
  });

  it('stores no invitation when its user.invited entry meets an outage', async () => {
    const email = `viewer-${randomUUID().slice(0, 8)}@example.com`;
    failAppends(context.services.audit, 'user.invited', 1);
    expectUnavailable(await context.app.inject({ method: 'POST', url: '/api/v1/users/invitations', headers: bearer(owner.token), payload: { email, role: 'viewer' } }));
    const pending = (await context.services.accounts.members.listInvitations(owner.orgId)).filter((invitation) => invitation.email === email);
    expect(pending).toEqual([]);
  });

  it('keeps the password and the sessions when the user.password_changed entry meets an outage', async () => {
    const viewer = await invite(context, owner.token, 'viewer');
    const change = () => context.app.inject({ method: 'POST', url: '/api/v1/auth/password', headers: bearer(viewer.token), payload: { current_password: PASSWORD, new_password: 'another horse battery staple' } });
    failAppends(context.services.audit, 'user.password_changed', 1);
    expectUnavailable(await change());
    // Before: the password was changed and every session revoked, with no entry: this session no longer worked.
    expect((await context.app.inject({ method: 'GET', url: '/api/v1/auth/session', headers: bearer(viewer.token) })).statusCode).toBe(200);
    vi.restoreAllMocks();
    expect((await change()).statusCode).toBe(200);
    expect((await chained(context, owner.orgId, 'user.password_changed')).filter((target) => target === viewer.userId)).toHaveLength(1);
  });

  it('stores no provider key, and keeps the plan, when their entries meet an outage', async () => {
    failAppends(context.services.audit, 'provider_key.set', 1);
    expectUnavailable(await context.app.inject({ method: 'PUT', url: '/api/v1/providers/openai/key', headers: bearer(owner.token), payload: { key: 'sk-test-0123456789abcdefghijklmnop' } }));
    expect((await context.services.accounts.providerKeys.list(owner.orgId)).map((key) => key.provider)).not.toContain('openai');

    const org = await context.createOrg();
    failAppends(context.services.audit, 'org.trial_extended', 1);
    const before = await context.services.accounts.getOrg(org.orgId);
    expectUnavailable(await context.app.inject({ method: 'POST', url: '/api/v1/org/trial/extend', headers: bearer(org.apiKey), payload: { days: 5 } }));
    expect((await context.services.accounts.getOrg(org.orgId))?.trial_ends_at).toBe(before?.trial_ends_at);
  });
});

describe('an invitation whose e-mail cannot be delivered', () => {
  let context: TestContext;
  let owner: Person;
  beforeAll(async () => {
    // Nothing listens on port 1: every delivery is refused at once.
    context = await createTestApp({ env: { SMTP_URL: 'smtp://127.0.0.1:1', SMTP_FROM: 'svc test <svc@example.test>' } });
    owner = await register(context);
  }, 60_000);
  afterAll(async () => context.close());

  it('is stored with its user.invited entry and then revoked with a user.invitation_revoked entry saying why', async () => {
    const email = `viewer-${randomUUID().slice(0, 8)}@example.com`;
    const answer = await context.app.inject({ method: 'POST', url: '/api/v1/users/invitations', headers: bearer(owner.token), payload: { email, role: 'viewer' } });
    expect(answer.statusCode).toBe(502);
    expect(answer.json().error.code).toBe('EMAIL_DELIVERY_FAILED');
    const [invitation] = (await context.services.accounts.members.listInvitations(owner.orgId)).filter((listed) => listed.email === email);
    expect(invitation?.status).toBe('revoked');
    const trail = await context.services.db.withOrg(owner.orgId, (tx) =>
      tx.query<{ action: string; details: Record<string, unknown> }>('SELECT action, details FROM audit_log WHERE target = $1 ORDER BY seq', [invitation!.invitation_id]),
    );
    // Before: nothing was chained, although the invitation had been stored.
    expect(trail.rows.map((row) => [row.action, row.details.reason ?? null])).toEqual([
      ['user.invited', null],
      ['user.invitation_revoked', 'delivery_failed'],
    ]);
  });
});

describe('an invitation whose revocation after a failed delivery loses a lock conflict', () => {
  let context: TestContext;
  let owner: Person;
  let server: Server;
  let deliveries = 0;
  beforeAll(async () => {
    // An SMTP server that hangs up on every connection: each delivery fails, and is counted.
    server = createServer((socket) => {
      deliveries += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    context = await createTestApp({ env: { SMTP_URL: `smtp://127.0.0.1:${port}`, SMTP_FROM: 'svc test <svc@example.test>' } });
    owner = await register(context);
  }, 60_000);
  afterAll(async () => {
    await context.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  afterEach(() => vi.restoreAllMocks());

  it('tries the revocation again alone: one delivery attempt, one invitation, revoked with its entry', async () => {
    const email = `viewer-${randomUUID().slice(0, 8)}@example.com`;
    deliveries = 0;
    failAppends(context.services.audit, 'user.invitation_revoked', 1, lockConflict);
    const answer = await context.app.inject({ method: 'POST', url: '/api/v1/users/invitations', headers: bearer(owner.token), payload: { email, role: 'viewer' } });
    expect(answer.statusCode).toBe(502);
    expect(answer.json().error.code).toBe('EMAIL_DELIVERY_FAILED');
    // Before: the whole invitation was tried again: a second invitation stored (the first revoked
    // by it with no entry) and a second e-mail sent, with another link.
    expect(deliveries).toBe(1);
    const invitations = (await context.services.accounts.members.listInvitations(owner.orgId)).filter((listed) => listed.email === email);
    expect(invitations.map((invitation) => invitation.status)).toEqual(['revoked']);
    const trail = await context.services.db.withOrg(owner.orgId, (tx) =>
      tx.query<{ action: string; details: Record<string, unknown> }>('SELECT action, details FROM audit_log WHERE target = $1 ORDER BY seq', [invitations[0]!.invitation_id]),
    );
    expect(trail.rows.map((row) => [row.action, row.details.reason ?? null])).toEqual([
      ['user.invited', null],
      ['user.invitation_revoked', 'delivery_failed'],
    ]);
  });
});
