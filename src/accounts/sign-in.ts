/**
 * The one place a sign-in completes, whatever proved who the user is (password, TOTP, OIDC,
 * SAML, an accepted invitation): it opens a server-side session, sets the dashboard cookies and
 * returns the JSON body every sign-in route answers with.
 *
 * Cookies (docs/accounts.md, "Dashboard sessions"):
 *   svc_session  the session token; HttpOnly, Secure, SameSite=Strict, Path=/, Max-Age = the
 *                absolute timeout. Sent by the browser on every same-site request.
 *   svc_csrf     the session's CSRF token; readable by the page (not HttpOnly), Secure,
 *                SameSite=Strict, Path=/. A state-changing request authenticated by svc_session
 *                must carry it in the X-CSRF-Token header (else 403 CSRF_TOKEN_INVALID).
 * The body also carries the token (bearer use by scripts and the CLI) and the CSRF token.
 */
import type { Role } from './access.ts';
import type { Sessions, SignInMethod } from './sessions.ts';

export const SESSION_COOKIE = 'svc_session';
export const CSRF_COOKIE = 'svc_csrf';
export const CSRF_HEADER = 'x-csrf-token';

interface CookieOptions {
  path: string;
  secure: boolean;
  sameSite: 'strict';
  httpOnly: boolean;
  maxAge?: number;
}

/**
 * What finishSignIn uses of Fastify's request and reply (a FastifyRequest and FastifyReply are
 * these; the accounts core imports no Fastify): the root instance's `accountSessions` decoration
 * (src/http/build-app.ts) and @fastify/cookie's reply methods.
 */
/** The user a sign-in method has established (before the session is issued). */
export interface SignedInUser {
  userId: string;
  orgId: string;
  role: Role;
}

/** What every sign-in answers with (the session body). */
export type SignInAnswer = SignInBody;

export interface SignInRequest {
  readonly server: { readonly accountSessions: Sessions };
}
export interface SignInReply {
  setCookie(name: string, value: string, options: CookieOptions): unknown;
  clearCookie(name: string, options: CookieOptions): unknown;
}

export interface SignInBody {
  user_id: string;
  org_id: string;
  role: Role;
  method: SignInMethod;
  token: string;
  expires_at: string;
  csrf_token: string;
}

/** Completes a sign-in: a new session, its cookies on the reply, and the JSON body to answer with. */
export async function finishSignIn(
  request: SignInRequest,
  reply: SignInReply,
  user: { userId: string; orgId: string; role: Role; passwordHash?: string },
  method: SignInMethod,
): Promise<SignInBody> {
  const sessions = request.server.accountSessions;
  // member: the session takes the user's role as it stands now (a change during the credential
  // check applies), and a user removed meanwhile, or whose password changed after the one given
  // (passwordHash: the hash a password sign-in checked) was checked, gets no session.
  const session = await sessions.issue(user, method, { member: true });
  setSessionCookies(reply, session.token, session.csrf_token, Math.floor(sessions.absoluteMs / 1000));
  return {
    user_id: user.userId,
    org_id: user.orgId,
    role: session.role,
    method,
    token: session.token,
    expires_at: session.expires_at,
    csrf_token: session.csrf_token,
  };
}

/** Sets both dashboard cookies. */
export function setSessionCookies(reply: SignInReply, token: string, csrfToken: string, maxAgeSeconds: number): void {
  const common = { path: '/', secure: true, sameSite: 'strict' as const, maxAge: maxAgeSeconds };
  reply.setCookie(SESSION_COOKIE, token, { ...common, httpOnly: true });
  reply.setCookie(CSRF_COOKIE, csrfToken, { ...common, httpOnly: false });
}

/** Clears both dashboard cookies (sign-out, password change elsewhere). */
export function clearSessionCookies(reply: SignInReply): void {
  const common = { path: '/', secure: true, sameSite: 'strict' as const };
  reply.clearCookie(SESSION_COOKIE, { ...common, httpOnly: true });
  reply.clearCookie(CSRF_COOKIE, { ...common, httpOnly: false });
}
