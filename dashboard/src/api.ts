/**
 * The dashboard's one door to svc: every request, and all authentication handling, goes
 * through here. The dashboard reads the same public API a script would (docs/api.md).
 *
 * Credentials, in this order of preference:
 * - the session token that `POST /api/v1/auth/login` or `/register` returned, kept in memory
 *   only (never in localStorage: a script injected into the page could not read it after a
 *   reload) and sent as `Authorization: Bearer`;
 * - a cookie session, when svc set one: every request is sent with `credentials: 'same-origin'`,
 *   and every non-GET request carries `X-CSRF-Token` read from the `svc_csrf` cookie when that
 *   cookie exists (double-submit: a page on another origin cannot read it).
 * A reload therefore keeps the session when svc issued a cookie (it is found again through
 * `GET /api/v1/auth/session`) and asks to sign in again when it did not.
 *
 * Sign-in paths: password (with the TOTP second step when the user enrolled one), single sign-on
 * (OIDC: a full-page redirect to svc's start URL; the callback sets the cookie session and sends
 * the browser back to /dashboard), an accepted invitation.
 */

export interface ErrorEnvelope {
  error: { code: string; message: string; request_id?: string; [detail: string]: unknown };
}

/** A refusal or failure, with svc's stable error code (docs/errors.md). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly requestId: string | null;

  constructor(status: number, code: string, message: string, requestId: string | null) {
    super(message);
    this.status = status;
    this.code = code;
    this.requestId = requestId;
  }
}

export interface Identity {
  org_id: string;
  org_tag: string;
  plan: string;
  scope: 'read' | 'write' | 'admin';
  class: string;
  key_id: string | null;
  user_id: string | null;
  role: string | null;
}

let token: string | null = null;
/** The CSRF token of the cookie session, when svc told it (GET /api/v1/auth/session, a sign-in answer). */
let csrfToken: string | null = null;
const listeners = new Set<() => void>();

/** Called when a request is answered 401: the session ended (expired, revoked, signed out). */
export function onSignedOut(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function cookie(name: string): string | null {
  for (const part of document.cookie.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return decodeURIComponent(value.join('='));
  }
  return null;
}

async function send<T>(method: string, path: string, body?: unknown, options: { signal?: AbortSignal; quiet401?: boolean } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (method !== 'GET' && method !== 'HEAD') {
    const csrf = cookie('svc_csrf') ?? csrfToken;
    if (csrf !== null) headers['x-csrf-token'] = csrf;
  }
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiError(0, 'NETWORK_ERROR', 'svc could not be reached. Check your connection and try again.', null);
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    const envelope = parsed as Partial<ErrorEnvelope> | null;
    const code = envelope?.error?.code ?? `HTTP_${response.status}`;
    const message = envelope?.error?.message ?? `svc answered ${response.status}.`;
    if (response.status === 401 && !options.quiet401) {
      token = null;
      csrfToken = null;
      for (const listener of listeners) listener();
    }
    throw new ApiError(response.status, code, message, envelope?.error?.request_id ?? response.headers.get('x-request-id'));
  }
  return parsed as T;
}

export const api = {
  get: <T>(path: string, signal?: AbortSignal) => send<T>('GET', path, undefined, signal === undefined ? {} : { signal }),
  post: <T>(path: string, body?: unknown) => send<T>('POST', path, body ?? {}),
  put: <T>(path: string, body: unknown) => send<T>('PUT', path, body),
  patch: <T>(path: string, body: unknown) => send<T>('PATCH', path, body),
  delete: <T>(path: string) => send<T>('DELETE', path),
};

interface SessionAnswer {
  token: string;
  expires_at: string;
  csrf_token?: string;
}

/** The password was right and the user has TOTP: a second step is needed. */
export interface MfaChallenge {
  mfa_required: true;
  mfa_token: string;
  expires_at: string;
}

function holdSession(answer: SessionAnswer): void {
  token = answer.token;
  csrfToken = answer.csrf_token ?? null;
}

/**
 * Signs in with e-mail and password; the session token stays in this module's memory. A user with
 * TOTP gets the challenge back, to answer with `signInSecondStep`.
 */
export async function signIn(email: string, password: string): Promise<Identity | MfaChallenge> {
  const answer = await send<SessionAnswer | MfaChallenge>('POST', '/api/v1/auth/login', { email, password }, { quiet401: true });
  if ('mfa_required' in answer && answer.mfa_required) return answer;
  holdSession(answer as SessionAnswer);
  return whoAmI();
}

/** The TOTP second step: a code from the authenticator app, or one of the recovery codes. */
export async function signInSecondStep(mfaToken: string, answer: { code: string } | { recovery_code: string }): Promise<Identity> {
  holdSession(await send<SessionAnswer>('POST', '/api/v1/auth/login/totp', { mfa_token: mfaToken, ...answer }, { quiet401: true }));
  return whoAmI();
}

/** Where a browser starts single sign-on (OIDC) for an organization: a full-page navigation. */
export function singleSignOnUrl(orgId: string): string {
  return `/api/v1/auth/oidc/${encodeURIComponent(orgId)}/start`;
}

/** Creates an organization with its first admin user, and signs in as that user. */
export async function signUp(email: string, password: string, orgName: string): Promise<Identity> {
  holdSession(await send<SessionAnswer>('POST', '/api/v1/auth/register', { email, password, org_name: orgName }, { quiet401: true }));
  return whoAmI();
}

/** Accepts an invitation (the token from the link's fragment) with a new password, and signs in. */
export async function acceptInvitation(invitationToken: string, password: string): Promise<Identity> {
  holdSession(await send<SessionAnswer>('POST', '/api/v1/auth/invitations/accept', { token: invitationToken, password }, { quiet401: true }));
  return whoAmI();
}

/**
 * Changes the signed-in user's password. svc revokes every session of the user and opens a new
 * one for this page, which replaces the old one here.
 */
export async function changePassword(currentPassword: string, newPassword: string): Promise<void> {
  holdSession(await send<SessionAnswer>('POST', '/api/v1/auth/password', { current_password: currentPassword, new_password: newPassword }));
}

export function whoAmI(): Promise<Identity> {
  return send<Identity>('GET', '/api/v1/whoami');
}

/** The identity of a session that survived a reload (a cookie session, or one SSO just set), or null. */
export async function resume(): Promise<Identity | null> {
  try {
    const session = await send<{ csrf_token: string }>('GET', '/api/v1/auth/session', undefined, { quiet401: true });
    csrfToken = session.csrf_token;
    return await whoAmI();
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) return null;
    throw error;
  }
}

/** Ends the session at svc (revoked server-side, cookies cleared), then forgets the in-memory token. */
export async function signOut(): Promise<void> {
  try {
    await send<void>('POST', '/api/v1/auth/logout', undefined, { quiet401: true });
  } catch {
    // Already ended or svc unreachable: the page forgets the session either way.
  }
  token = null;
  csrfToken = null;
  for (const listener of listeners) listener();
}

const SCOPE_RANK = { read: 0, write: 1, admin: 2 } as const;

export function scopeAllows(held: Identity['scope'], needed: keyof typeof SCOPE_RANK): boolean {
  return SCOPE_RANK[held] >= SCOPE_RANK[needed];
}
