/**
 * Users for the accounts tests, made the way people are: register (the org's first admin), then
 * invitations accepted over HTTP. Each sign-up and acceptance comes from an address of its own
 * (the strict per-IP registration tier would otherwise refuse the fourth).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Role } from '../../src/accounts/index.ts';
import type { TestContext } from '../helpers/app.ts';

export const PASSWORD = 'correct horse battery staple';

let addresses = 0;
/** A benchmarking-range address (198.18.0.0/15, RFC 2544) not used before in this process. */
export function nextAddress(): string {
  addresses++;
  return `198.18.${Math.floor(addresses / 250)}.${(addresses % 250) + 1}`;
}

export interface Person {
  userId: string;
  orgId: string;
  email: string;
  role: Role;
  token: string;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Registers a new org; its first user is an admin. */
export async function register(context: TestContext): Promise<Person & { orgTag: string }> {
  const email = `owner-${randomUUID().slice(0, 8)}@example.com`;
  const response = await context.app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    payload: { email, password: PASSWORD, org_name: `org ${randomUUID().slice(0, 6)}` },
    remoteAddress: nextAddress(),
  });
  expect(response.statusCode, response.body).toBe(201);
  const body = response.json();
  return { userId: body.user_id, orgId: body.org_id, orgTag: body.org_tag, email, role: body.role, token: body.token };
}

/** The accept_url's token (svc without SMTP returns the link to the inviter). */
export function tokenOf(acceptUrl: string): string {
  const match = /#token=([A-Za-z0-9._-]+)$/.exec(acceptUrl);
  if (match === null) throw new Error(`no token in ${acceptUrl}`);
  return match[1]!;
}

/** Invites (by the given credential) and accepts: a new user of the role. */
export async function invite(context: TestContext, inviterToken: string, role: Role): Promise<Person> {
  const email = `${role}-${randomUUID().slice(0, 8)}@example.com`;
  const invited = await context.app.inject({ method: 'POST', url: '/api/v1/users/invitations', headers: bearer(inviterToken), payload: { email, role } });
  expect(invited.statusCode, invited.body).toBe(201);
  return accept(context, tokenOf(invited.json().accept_url));
}

export async function accept(context: TestContext, token: string): Promise<Person> {
  const accepted = await context.app.inject({ method: 'POST', url: '/api/v1/auth/invitations/accept', payload: { token, password: PASSWORD }, remoteAddress: nextAddress() });
  expect(accepted.statusCode, accepted.body).toBe(201);
  const body = accepted.json();
  return { userId: body.user_id, orgId: body.org_id, email: body.email, role: body.role, token: body.token };
}
