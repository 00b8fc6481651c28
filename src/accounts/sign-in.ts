/**
 * The one place a sign-in completes, whatever proved who the user is: password (no second factor
 * enrolled), TOTP second step, OIDC, SAML, or an accepted invitation. Every method calls
 * `finishSignIn`, so what a signed-in browser receives (today: the session token that password
 * login has always answered) is decided here once.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Accounts, Role } from './accounts.ts';

export type SignInMethod = 'password' | 'totp' | 'oidc' | 'saml' | 'invite';

export interface SignedInUser {
  userId: string;
  orgId: string;
  role: Role;
}

export interface SignInAnswer {
  user_id: string;
  org_id: string;
  role: Role;
  token: string;
  expires_at: string;
}

export async function finishSignIn(
  _request: FastifyRequest,
  _reply: FastifyReply,
  user: SignedInUser,
  _method: SignInMethod,
  services: { accounts: Pick<Accounts, 'users'> },
): Promise<SignInAnswer> {
  const session = await services.accounts.users.issueSession(user);
  return { user_id: user.userId, org_id: user.orgId, role: user.role, ...session };
}
