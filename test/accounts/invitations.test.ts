/**
 * Invitations delivered by e-mail through a real SMTP server started by the test (smtp-server,
 * from the nodemailer project, on loopback): the link in the received message is accepted once;
 * an expired, reused, revoked or altered link is refused; delivery failure withdraws the
 * invitation; every change is on the audit chain.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { bearer, nextAddress, PASSWORD, register, type Person } from './people.ts';

interface Received {
  to: string[];
  raw: string;
}

const received: Received[] = [];
let smtp: SMTPServer;
let smtpPort: number;
let context: TestContext;
let owner: Person;
const PUBLIC_URL = 'https://svc.example.test';

/** The message body with quoted-printable soft breaks and escapes undone (what a mail client shows). */
function decoded(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

function linkIn(message: Received): string {
  const match = new RegExp(`${PUBLIC_URL.replaceAll('.', '\\.')}/dashboard/accept-invitation#token=([A-Za-z0-9._-]+)`).exec(decoded(message.raw));
  if (match === null) throw new Error(`no invitation link in:\n${message.raw}`);
  return match[1]!;
}

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({ to: session.envelope.rcptTo.map((rcpt) => rcpt.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  smtpPort = (smtp.server.address() as AddressInfo).port;
  context = await createTestApp({ env: { SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, SMTP_FROM: 'svc test <svc@example.test>', PUBLIC_URL } });
  owner = await register(context);
});
afterAll(async () => {
  await context.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

async function inviteByMail(role: 'viewer' | 'operator' | 'admin' = 'viewer') {
  const email = `invitee-${randomUUID().slice(0, 8)}@example.com`;
  const response = await context.app.inject({ method: 'POST', url: '/api/v1/users/invitations', headers: bearer(owner.token), payload: { email, role } });
  expect(response.statusCode, response.body).toBe(201);
  const message = received.find((entry) => entry.to.includes(email));
  expect(message, `no message to ${email}`).toBeDefined();
  return { email, invitation: response.json(), token: linkIn(message!) };
}

const accept = (token: string, password = PASSWORD) =>
  context.app.inject({ method: 'POST', url: '/api/v1/auth/invitations/accept', payload: { token, password }, remoteAddress: nextAddress() });

describe('inviting by e-mail', () => {
  it('sends the link through SMTP and never returns it to the inviter', async () => {
    const { email, invitation } = await inviteByMail('operator');
    expect(invitation).toMatchObject({ email, role: 'operator', status: 'pending', delivery: 'sent', accept_url: null, invited_by: `user:${owner.userId}` });
    const message = received.find((entry) => entry.to.includes(email))!;
    expect(message.raw).toMatch(/^From: svc test <svc@example\.test>/m);
    expect(message.raw).toMatch(/^Subject: You are invited to /m);
  });

  it('lets the invitee accept once: a user with the invited role, signed in with cookies', async () => {
    const { email, token } = await inviteByMail('operator');
    const response = await accept(token);
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toMatchObject({ org_id: owner.orgId, role: 'operator', email, method: 'invite' });
    expect(response.cookies.map((cookie) => cookie.name).sort()).toEqual(['svc_csrf', 'svc_session']);
    const users = (await context.app.inject({ method: 'GET', url: '/api/v1/users', headers: bearer(owner.token) })).json().data as Array<{ email: string; role: string }>;
    expect(users).toContainEqual(expect.objectContaining({ email, role: 'operator' }));
    const login = await context.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: PASSWORD }, remoteAddress: nextAddress() });
    expect(login.statusCode).toBe(200);

    const again = await accept(token, 'another long password');
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('INVITATION_USED');
  });

  it('creates one user when the same link is accepted several times at once: the others are 409 INVITATION_USED', async () => {
    const { email, token } = await inviteByMail('admin');
    const answers = await Promise.all([accept(token), accept(token, 'another long password'), accept(token, 'a third long password')]);
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 409, 409]);
    for (const answer of answers.filter((candidate) => candidate.statusCode === 409)) expect(answer.json().error.code).toBe('INVITATION_USED');
    const users = (await context.app.inject({ method: 'GET', url: '/api/v1/users', headers: bearer(owner.token) })).json().data as Array<{ email: string }>;
    expect(users.filter((user) => user.email === email)).toHaveLength(1);
  });

  it("keeps an org's invitations from another org's admin: not listed, and revoking one is 404 and changes nothing", async () => {
    const { invitation, token } = await inviteByMail('viewer');
    const stranger = await register(context);
    const listed = (await context.app.inject({ method: 'GET', url: '/api/v1/users/invitations', headers: bearer(stranger.token) })).json().data as Array<{ invitation_id: string }>;
    expect(listed.map((entry) => entry.invitation_id)).not.toContain(invitation.invitation_id);
    const revoke = await context.app.inject({ method: 'DELETE', url: `/api/v1/users/invitations/${invitation.invitation_id}`, headers: bearer(stranger.token) });
    expect(revoke.statusCode).toBe(404);
    expect((await accept(token)).statusCode).toBe(201);
  });

  it("refuses the pending invitations of an admin who was removed or demoted since (400 INVITATION_INVALID), and creates no user", async () => {
    const adminOf = async () => {
      const joined = await accept((await inviteByMail('admin')).token);
      expect(joined.statusCode, joined.body).toBe(201);
      return { userId: joined.json().user_id as string, token: joined.json().token as string };
    };
    const removedAdmin = await adminOf();
    const demotedAdmin = await adminOf();
    const pending = [];
    for (const admin of [removedAdmin, demotedAdmin]) {
      const email = `comeback-${randomUUID().slice(0, 8)}@example.com`;
      const invited = await context.app.inject({ method: 'POST', url: '/api/v1/users/invitations', headers: bearer(admin.token), payload: { email, role: 'admin' } });
      expect(invited.statusCode, invited.body).toBe(201);
      pending.push({ email, token: linkIn(received.find((entry) => entry.to.includes(email))!) });
    }
    expect((await context.app.inject({ method: 'DELETE', url: `/api/v1/users/${removedAdmin.userId}`, headers: bearer(owner.token) })).statusCode).toBe(204);
    expect((await context.app.inject({ method: 'PATCH', url: `/api/v1/users/${demotedAdmin.userId}`, headers: bearer(owner.token), payload: { role: 'viewer' } })).statusCode).toBe(200);
    for (const { email, token } of pending) {
      const response = await accept(token);
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json().error).toMatchObject({ code: 'INVITATION_INVALID', reason: 'inviter_lost_rights' });
      const users = (await context.app.inject({ method: 'GET', url: '/api/v1/users', headers: bearer(owner.token) })).json().data as Array<{ email: string }>;
      expect(users.map((user) => user.email)).not.toContain(email);
    }
  });

  it('refuses an expired link (410 INVITATION_EXPIRED) and creates no user', async () => {
    const { email, token, invitation } = await inviteByMail();
    await context.services.db.query(`UPDATE invitations SET expires_at = now() - interval '1 minute' WHERE id = $1`, [invitation.invitation_id]);
    const response = await accept(token);
    expect(response.statusCode).toBe(410);
    expect(response.json().error.code).toBe('INVITATION_EXPIRED');
    expect(await context.services.accounts.members.findByEmail(owner.orgId, email)).toBeNull();
    const listed = (await context.app.inject({ method: 'GET', url: '/api/v1/users/invitations', headers: bearer(owner.token) })).json().data as Array<{ invitation_id: string; status: string }>;
    expect(listed.find((entry) => entry.invitation_id === invitation.invitation_id)?.status).toBe('expired');
  });

  it('refuses an altered link and a revoked one (400 INVITATION_INVALID)', async () => {
    const { token } = await inviteByMail();
    const [header, payload, signature] = token.split('.');
    const altered = `${header}.${payload}.${signature!.slice(0, -2)}${signature!.endsWith('AA') ? 'BB' : 'AA'}`;
    const forged = await accept(altered);
    expect(forged.statusCode).toBe(400);
    expect(forged.json().error.code).toBe('INVITATION_INVALID');

    const revokedOne = await inviteByMail();
    const revoke = await context.app.inject({ method: 'DELETE', url: `/api/v1/users/invitations/${revokedOne.invitation.invitation_id}`, headers: bearer(owner.token) });
    expect(revoke.statusCode).toBe(200);
    expect(revoke.json().status).toBe('revoked');
    const refused = await accept(revokedOne.token);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.code).toBe('INVITATION_INVALID');
  });

  it('refuses to invite an address that already has an account (409 EMAIL_TAKEN)', async () => {
    const response = await context.app.inject({ method: 'POST', url: '/api/v1/users/invitations', headers: bearer(owner.token), payload: { email: owner.email, role: 'viewer' } });
    expect(response.statusCode).toBe(409);
    expect(response.json().error.code).toBe('EMAIL_TAKEN');
  });

  it('writes invitations, acceptance, role changes and removal to the audit chain with their actors', async () => {
    const { token, invitation } = await inviteByMail('viewer');
    const accepted = (await accept(token)).json();
    await context.app.inject({ method: 'PATCH', url: `/api/v1/users/${accepted.user_id}`, headers: bearer(owner.token), payload: { role: 'operator' } });
    await context.app.inject({ method: 'DELETE', url: `/api/v1/users/${accepted.user_id}`, headers: bearer(owner.token) });
    const trail = await context.services.db.withOrg(owner.orgId, (tx) =>
      tx.query<{ action: string; actor: string; target: string; details: Record<string, unknown> }>(
        `SELECT action, actor, target, details FROM audit_log WHERE target IN ($1, $2) ORDER BY seq`,
        [invitation.invitation_id, accepted.user_id],
      ),
    );
    expect(trail.rows.map((row) => [row.action, row.actor])).toEqual([
      ['user.invited', `user:${owner.userId}`],
      ['user.invitation_accepted', `user:${accepted.user_id}`],
      ['user.role_changed', `user:${owner.userId}`],
      ['user.removed', `user:${owner.userId}`],
    ]);
    expect(trail.rows[2]!.details).toMatchObject({ from: 'viewer', to: 'operator' });
  });

  it('withdraws the invitation and answers 502 EMAIL_DELIVERY_FAILED when the SMTP server is down', async () => {
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    const email = `late-${randomUUID().slice(0, 8)}@example.com`;
    const response = await context.app.inject({ method: 'POST', url: '/api/v1/users/invitations', headers: bearer(owner.token), payload: { email, role: 'viewer' } });
    expect(response.statusCode, response.body).toBe(502);
    expect(response.json().error.code).toBe('EMAIL_DELIVERY_FAILED');
    const listed = (await context.app.inject({ method: 'GET', url: '/api/v1/users/invitations', headers: bearer(owner.token) })).json().data as Array<{ email: string; status: string }>;
    expect(listed.filter((entry) => entry.email === email).map((entry) => entry.status)).toEqual(['revoked']);
  });
});

describe('inviting without SMTP', () => {
  it('returns the link once to the inviter instead (delivery not_configured), and it works', async () => {
    const plain = await createTestApp();
    try {
      const admin = await register(plain);
      const response = await plain.app.inject({ method: 'POST', url: '/api/v1/users/invitations', headers: bearer(admin.token), payload: { email: `p-${randomUUID().slice(0, 8)}@example.com`, role: 'viewer' } });
      expect(response.json()).toMatchObject({ delivery: 'not_configured' });
      const url = response.json().accept_url as string;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:8080\/dashboard\/accept-invitation#token=/);
      const listed = (await plain.app.inject({ method: 'GET', url: '/api/v1/users/invitations', headers: bearer(admin.token) })).json();
      expect(JSON.stringify(listed)).not.toContain(url.split('#token=')[1]);
      const accepted = await plain.app.inject({ method: 'POST', url: '/api/v1/auth/invitations/accept', payload: { token: url.split('#token=')[1], password: PASSWORD }, remoteAddress: nextAddress() });
      expect(accepted.statusCode).toBe(201);
    } finally {
      await plain.close();
    }
  });
});
