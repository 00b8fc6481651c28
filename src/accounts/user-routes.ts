/**
 * Users and roles, invitations, and the dashboard session (docs/accounts.md).
 * Listing users needs read; invitations, role changes and removal need admin (and a super_admin
 * user where super_admin is granted, changed or removed); accepting an invitation is public (the
 * signed link is the credential); the session routes need a dashboard session.
 */
import { Type } from '@sinclair/typebox';
import { retryingLockConflicts } from '../platform/db/failures.ts';
import type { Queryable } from '../platform/db/index.ts';
import { SvcError } from '../platform/errors.ts';
import { auditActor, type RoutesPlugin } from '../platform/http-plugin.ts';
import { ROLES, type AuthContext } from './access.ts';
import { LOGIN_POLICY } from './plans.ts';
import { auth, strictTier, type AccountRoutesOptions } from './routes.ts';
import { clearSessionCookies, finishSignIn } from './sign-in.ts';

const RoleSchema = Type.Union(ROLES.map((role) => Type.Literal(role)));
const Password = Type.String({ minLength: 12, maxLength: 256 });
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

/** What these routes read of a request (the accounts core imports no Fastify; a FastifyRequest is one). */
interface CallerRequest {
  readonly id: string;
  readonly auth: AuthContext | null;
}

/** The caller's dashboard session; 403 SESSION_REQUIRED for an API key or another token. */
function sessionOf(request: CallerRequest): AuthContext & { sessionId: string; userId: string } {
  const caller = auth(request);
  if (caller.kind !== 'user' || caller.sessionId === undefined || caller.userId === null) {
    throw new SvcError('SESSION_REQUIRED', { details: { credential: caller.kind } });
  }
  return caller as AuthContext & { sessionId: string; userId: string };
}

export const userRoutes: RoutesPlugin<Omit<AccountRoutesOptions, 'features'>> = async (app, services) => {
  const { accounts, audit } = services;
  const { members, sessions } = accounts;
  /**
   * A change's audit entry, appended in the change's own transaction (`tx`): the change and its
   * entry are stored together or not at all (the routes run the whole under retryingLockConflicts).
   */
  const record = (tx: Queryable, request: CallerRequest, action: string, target: string | null, details: Record<string, unknown> = {}, actor?: { orgId: string; name: string }) => {
    const caller = request.auth;
    const orgId = actor?.orgId ?? caller?.orgId;
    if (orgId === undefined) return Promise.resolve();
    return audit.append(orgId, { actor: actor?.name ?? auditActor(caller), action, target, outcome: 'success', details: { request_id: request.id, ...details } }, { tx }).then(() => undefined);
  };

  app.get('/api/v1/users', { config: { scope: 'read' }, schema: { tags: ['accounts'] } }, async (request) => ({
    data: await members.list(auth(request).orgId),
  }));

  app.patch(
    '/api/v1/users/:id',
    {
      config: { scope: 'admin' },
      schema: { tags: ['accounts'], params: IdParams, body: Type.Object({ role: RoleSchema }, { additionalProperties: false }) },
    },
    async (request) => {
      const { user } = await retryingLockConflicts(() =>
        members.changeRole(auth(request).orgId, auth(request), request.params.id, request.body.role, async (tx, changed) => {
          if (changed.previousRole !== changed.user.role) await record(tx, request, 'user.role_changed', changed.user.user_id, { from: changed.previousRole, to: changed.user.role });
        }),
      );
      return user;
    },
  );

  app.delete('/api/v1/users/:id', { config: { scope: 'admin' }, schema: { tags: ['accounts'], params: IdParams } }, async (request, reply) => {
    await retryingLockConflicts(() =>
      members.remove(auth(request), request.params.id, (tx, { user, sessionsRevoked }) => record(tx, request, 'user.removed', user.user_id, { role: user.role, sessions_revoked: sessionsRevoked })),
    );
    reply.status(204);
  });

  app.post(
    '/api/v1/users/invitations',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['accounts'],
        description: 'Invites an e-mail address with a role. With SMTP configured the link is e-mailed; without, it is returned once in accept_url.',
        body: Type.Object({ email: Type.String({ format: 'email', maxLength: 320 }), role: RoleSchema }, { additionalProperties: false }),
      },
    },
    async (request, reply) => {
      const caller = auth(request);
      const org = await accounts.getOrg(caller.orgId);
      if (org === null) throw new SvcError('NOT_FOUND');
      // Not wrapped in retryingLockConflicts: invite retries each of its transactions itself, and a
      // retry of the whole would send the e-mail again (with another link) after a failed revocation.
      const { invitation, delivery, acceptUrl } = await members.invite(
        caller,
        { email: request.body.email, role: request.body.role, orgName: org.name },
        (tx, invited) => record(tx, request, 'user.invited', invited.invitation.invitation_id, { email: invited.invitation.email, role: invited.invitation.role, delivery: invited.delivery, expires_at: invited.invitation.expires_at }),
        // The e-mail was not delivered: the invitation is revoked with an entry saying why.
        (tx, revoked) => record(tx, request, 'user.invitation_revoked', revoked.invitation_id, { email: revoked.email, role: revoked.role, reason: 'delivery_failed' }),
      );
      reply.status(201);
      return { ...invitation, delivery, accept_url: acceptUrl };
    },
  );

  app.get('/api/v1/users/invitations', { config: { scope: 'admin' }, schema: { tags: ['accounts'] } }, async (request) => ({
    data: await members.listInvitations(auth(request).orgId),
  }));

  app.delete('/api/v1/users/invitations/:id', { config: { scope: 'admin' }, schema: { tags: ['accounts'], params: IdParams } }, async (request) => {
    return retryingLockConflicts(() =>
      members.revokeInvitation(auth(request).orgId, request.params.id, (tx, invitation) => record(tx, request, 'user.invitation_revoked', invitation.invitation_id, { email: invitation.email, role: invitation.role })),
    );
  });

  app.post(
    '/api/v1/auth/invitations/accept',
    {
      config: { public: true },
      schema: {
        tags: ['accounts'],
        description: "Accepts an invitation: the token from the link's fragment and the invitee's password; signs the new user in.",
        body: Type.Object({ token: Type.String({ minLength: 1, maxLength: 4096 }), password: Password }, { additionalProperties: false }),
      },
    },
    async (request, reply) => {
      await strictTier(services, request, reply, 'invitation', LOGIN_POLICY, 'LOGIN_BLOCKED');
      const accepted = await retryingLockConflicts(() =>
        members.accept(request.body.token, request.body.password, (tx, user) =>
          record(tx, request, 'user.invitation_accepted', user.invitationId, { user_id: user.userId, role: user.role }, { orgId: user.orgId, name: `user:${user.userId}` }),
        ),
      );
      const body = await finishSignIn(request, reply, { userId: accepted.userId, orgId: accepted.orgId, role: accepted.role }, 'invite');
      reply.status(201);
      return { ...body, email: accepted.email };
    },
  );

  app.get(
    '/api/v1/auth/session',
    { config: { scope: 'read' }, schema: { tags: ['accounts'], description: 'The dashboard session of the caller: user, role, org, plan, timeouts and the CSRF token.' } },
    async (request) => {
      const caller = sessionOf(request);
      const [state, org, user] = await Promise.all([
        sessions.state(caller.orgId, caller.sessionId),
        accounts.getOrg(caller.orgId),
        members.get(caller.orgId, caller.userId),
      ]);
      if (state === null || org === null) throw new SvcError('AUTH_INVALID');
      return {
        user: { user_id: caller.userId, email: user?.email ?? null, role: state.role },
        role: state.role,
        org: { id: org.id, tag: org.tag, name: org.name, plan: org.plan, effective_plan: org.effective_plan, trial_ends_at: org.trial_ends_at },
        plan: org.effective_plan,
        session: { session_id: state.sessionId, method: state.method, created_at: state.createdAt, expires_at: state.expiresAt, idle_expires_at: state.idleExpiresAt },
        csrf_token: sessions.csrfToken(state.sessionId),
      };
    },
  );

  app.post('/api/v1/auth/logout', { config: { scope: 'read' }, schema: { tags: ['accounts'], description: 'Ends the dashboard session (revoked server-side) and clears its cookies.' } }, async (request, reply) => {
    const caller = sessionOf(request);
    await sessions.revoke(caller.orgId, caller.sessionId);
    clearSessionCookies(reply);
    reply.status(204);
  });

  app.post(
    '/api/v1/auth/password',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['accounts'],
        description: "Changes the caller's password: every session of the user is revoked, and a new one is opened for this caller.",
        body: Type.Object({ current_password: Type.String({ maxLength: 256 }), new_password: Password }, { additionalProperties: false }),
      },
    },
    async (request, reply) => {
      const caller = sessionOf(request);
      // The strict sign-in tier, per user: the current password cannot be guessed through here.
      await strictTier(services, request, reply, 'password', LOGIN_POLICY, 'LOGIN_BLOCKED', caller.userId);
      await retryingLockConflicts(() =>
        members.changePassword(caller.orgId, caller.userId, request.body.current_password, request.body.new_password, (tx, revoked) => record(tx, request, 'user.password_changed', caller.userId, { sessions_revoked: revoked })),
      );
      return finishSignIn(request, reply, { userId: caller.userId, orgId: caller.orgId, role: caller.role ?? 'viewer' }, 'password');
    },
  );
};
