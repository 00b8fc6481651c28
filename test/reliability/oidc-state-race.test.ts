/**
 * One OIDC callback sent several times at once (a browser's double submit, a retried redirect,
 * or a captured callback raced against its owner): the state is single use, so exactly one is
 * signed in and the others are refused as SSO_STATE_INVALID before svc exchanges the code again
 * (rel-41: each read the state before any deleted it, and the provider's refusal of the reused
 * code came back as SSO_ASSERTION_INVALID provider_error).
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { startOidcProvider, type OidcProvider } from '../helpers/identity-providers.ts';

let context: TestContext;
let base: string;
let idp: OidcProvider;
let org: { orgId: string; apiKey: string };

beforeAll(async () => {
  idp = await startOidcProvider();
  context = await createTestApp({ env: { TRUST_PROXY: 'true' } });
  await context.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(context.app.server.address() as AddressInfo).port}`;
  org = await context.createOrg();
  await idp.register([`${base}/api/v1/auth/oidc/${org.orgId}/callback`]);
  const saved = await fetch(`${base}/api/v1/sso/oidc`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ issuer: idp.issuer, ...idp.client, allowed_domains: ['corp.example'], default_role: 'viewer' }),
  });
  expect(saved.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await context?.close();
  await idp?.close();
});

describe('one OIDC callback sent at once several times', () => {
  it('signs in once: one 200, every other answer 400 SSO_STATE_INVALID unknown_or_used', async () => {
    for (let round = 0; round < 3; round += 1) {
      const address = `10.12.0.${round + 1}`;
      const start = await fetch(`${base}/api/v1/auth/oidc/${org.orgId}/start`, { redirect: 'manual', headers: { 'x-forwarded-for': address } });
      expect(start.status).toBe(302);
      const cookie = start.headers.getSetCookie()[0]!.split(';')[0]!;
      const callback = await idp.signIn(start.headers.get('location')!, `raced-${round}@corp.example`, `${base}/api/v1/auth/oidc/${org.orgId}/callback`);
      const answers = await Promise.all(
        Array.from({ length: 5 }, async () => {
          const answer = await fetch(callback, { headers: { 'x-forwarded-for': address, cookie } });
          const body = (await answer.json()) as { error?: { code: string; reason: string } };
          return answer.status === 200 ? '200' : `${answer.status} ${body.error?.code} ${body.error?.reason}`;
        }),
      );
      expect(answers.sort()).toEqual(['200', ...Array<string>(4).fill('400 SSO_STATE_INVALID unknown_or_used')]);
    }
  }, 60_000);
});
