/**
 * SAML sign-in against a local IdP: the test is the identity provider, with its own RSA key and
 * self-signed certificate (openssl), signing each assertion with xml-crypto (enveloped
 * signature, exclusive C14N, RSA-SHA256) and posting it to the ACS as a browser's form post
 * would. Refused: a bad signature, a tampered assertion, a wrong audience, an expired assertion,
 * a replayed one, an unallowed domain; and SAML is gated to the Enterprise plan.
 */
import { randomUUID } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { samlKeyPair, samlResponse as signedResponse, type AssertionOptions, type SamlKeyPair } from '../helpers/identity-providers.ts';

let context: TestContext;
let idp: SamlKeyPair;
let stranger: SamlKeyPair;
let enterprise: { orgId: string; apiKey: string };
const IDP_ENTITY = 'https://idp.example.test/saml';
const SP_ENTITY = 'https://svc.example.test/saml/sp';
const ACS = 'https://svc.example.test/api/v1/auth/saml/acs';

/** This IdP's response for `email` (signed by its key unless another signer is given). */
const samlResponse = (email: string, options: Partial<AssertionOptions> = {}) =>
  signedResponse(email, { signer: idp, idpEntityId: IDP_ENTITY, audience: SP_ENTITY, acsUrl: ACS, ...options });

/** The browser's form post to the ACS. */
let address = 0;
async function post(orgId: string, samlResponseValue: string) {
  address++;
  return context.app.inject({
    method: 'POST',
    url: `/api/v1/auth/saml/${orgId}/acs`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ SAMLResponse: samlResponseValue, RelayState: '' }).toString(),
    remoteAddress: `10.8.${address >> 8}.${address & 255}`,
  });
}

async function configure(apiKey: string) {
  return context.app.inject({
    method: 'PUT',
    url: '/api/v1/sso/saml',
    headers: { authorization: `Bearer ${apiKey}` },
    payload: { idp_entity_id: IDP_ENTITY, sso_url: 'https://idp.example.test/sso', certificate: idp.cert, allowed_domains: ['corp.example'], default_role: 'operator', sp_entity_id: SP_ENTITY, acs_url: ACS },
  });
}

beforeAll(async () => {
  idp = samlKeyPair('test-idp');
  stranger = samlKeyPair('someone-else');
  context = await createTestApp();
  enterprise = await context.createOrg({ plan: 'enterprise' });
  expect((await configure(enterprise.apiKey)).statusCode).toBe(200);
}, 120_000);

afterAll(async () => {
  await context?.close();
});

describe('SAML sign-in', () => {
  it('publishes SP metadata naming the entity id and the ACS', async () => {
    const metadata = await context.app.inject({ method: 'GET', url: `/api/v1/auth/saml/${enterprise.orgId}/metadata` });
    expect(metadata.statusCode).toBe(200);
    expect(metadata.headers['content-type']).toMatch(/samlmetadata\+xml/);
    expect(metadata.body).toContain(`entityID="${SP_ENTITY}"`);
    expect(metadata.body).toContain(`Location="${ACS}"`);
  });

  it('starts SP-initiated sign-in by redirecting to the IdP with an AuthnRequest from this SP', async () => {
    const start = await context.app.inject({ method: 'GET', url: `/api/v1/auth/saml/${enterprise.orgId}/start` });
    expect(start.statusCode).toBe(302);
    const location = new URL(start.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe('https://idp.example.test/sso');
    const request = inflateRawSync(Buffer.from(location.searchParams.get('SAMLRequest')!, 'base64')).toString('utf8');
    expect(request).toContain(`AssertionConsumerServiceURL="${ACS}"`);
    expect(request).toContain(`>${SP_ENTITY}</saml:Issuer>`);
  });

  it('signs in a new user of an allowed domain with the configured role, then the same user again', async () => {
    const email = `saml-${randomUUID().slice(0, 8)}@corp.example`;
    const first = await post(enterprise.orgId, samlResponse(email));
    expect(first.statusCode).toBe(200);
    expect(first.json().role).toBe('operator');
    expect(first.json().org_id).toBe(enterprise.orgId);
    const whoami = await context.app.inject({ method: 'GET', url: '/api/v1/whoami', headers: { authorization: `Bearer ${first.json().token as string}` } });
    expect(whoami.json().user_id).toBe(first.json().user_id);
    const second = await post(enterprise.orgId, samlResponse(email.toUpperCase()));
    expect(second.statusCode).toBe(200);
    expect(second.json().user_id).toBe(first.json().user_id);
  });

  it('refuses an assertion signed with another key, and a signed one altered afterwards', async () => {
    const email = `saml-${randomUUID().slice(0, 8)}@corp.example`;
    const forged = await post(enterprise.orgId, samlResponse(email, { signer: stranger }));
    expect(forged.statusCode).toBe(401);
    expect(forged.json().error.code).toBe('SSO_ASSERTION_INVALID');
    expect(forged.json().error.reason).toBe('signature');
    const tampered = await post(enterprise.orgId, samlResponse(email, { tamper: (xml) => xml.replaceAll(email, `boss@corp.example`) }));
    expect(tampered.statusCode).toBe(401);
    expect(tampered.json().error.code).toBe('SSO_ASSERTION_INVALID');
  });

  it('refuses an assertion for another audience', async () => {
    const answer = await post(enterprise.orgId, samlResponse(`saml-${randomUUID().slice(0, 8)}@corp.example`, { audience: 'https://another-sp.example.test' }));
    expect(answer.statusCode).toBe(401);
    expect(answer.json().error.code).toBe('SSO_ASSERTION_INVALID');
    expect(answer.json().error.reason).toBe('audience');
  });

  it('refuses an assertion the IdP issued for another assertion consumer service', async () => {
    // Signed by the right IdP for the right audience, but for another ACS (another org's here).
    const answer = await post(enterprise.orgId, samlResponse(`saml-${randomUUID().slice(0, 8)}@corp.example`, { acsUrl: `https://svc.example.test/api/v1/auth/saml/${randomUUID()}/acs` }));
    expect(answer.statusCode).toBe(401);
    expect(answer.json().error).toMatchObject({ code: 'SSO_ASSERTION_INVALID', reason: 'recipient' });
  });

  it('refuses an expired assertion and one not yet valid', async () => {
    const email = `saml-${randomUUID().slice(0, 8)}@corp.example`;
    const expired = await post(enterprise.orgId, samlResponse(email, { notBefore: new Date(Date.now() - 20 * 60_000), notOnOrAfter: new Date(Date.now() - 10 * 60_000) }));
    expect(expired.statusCode).toBe(401);
    expect(expired.json().error.code).toBe('SSO_ASSERTION_INVALID');
    expect(expired.json().error.reason).toBe('expired');
    const early = await post(enterprise.orgId, samlResponse(email, { notBefore: new Date(Date.now() + 10 * 60_000), notOnOrAfter: new Date(Date.now() + 20 * 60_000) }));
    expect(early.statusCode).toBe(401);
    expect(early.json().error.reason).toBe('expired');
  });

  it('refuses an assertion posted a second time', async () => {
    const response = samlResponse(`saml-${randomUUID().slice(0, 8)}@corp.example`);
    expect((await post(enterprise.orgId, response)).statusCode).toBe(200);
    const replayed = await post(enterprise.orgId, response);
    expect(replayed.statusCode).toBe(401);
    expect(replayed.json().error.code).toBe('SSO_REPLAYED');
  });

  it('creates no user for a domain that is not allowed', async () => {
    const answer = await post(enterprise.orgId, samlResponse(`saml-${randomUUID().slice(0, 8)}@elsewhere.example`));
    expect(answer.statusCode).toBe(403);
    expect(answer.json().error.code).toBe('SSO_DOMAIN_NOT_ALLOWED');
  });

  it('gates SAML to Enterprise: a Pro org can neither configure it nor sign in through it', async () => {
    const pro = await context.createOrg({ plan: 'pro' });
    const saved = await configure(pro.apiKey);
    expect(saved.statusCode).toBe(403);
    expect(saved.json().error.code).toBe('PLAN_UPGRADE_REQUIRED');
    expect(saved.json().error.feature).toBe('sso_saml');
    expect(saved.json().error.plan).toBe('pro');
    // A connection saved while the org was Enterprise stops working after a downgrade.
    const downgraded = await context.createOrg({ plan: 'enterprise' });
    expect((await configure(downgraded.apiKey)).statusCode).toBe(200);
    await context.services.db.query(`UPDATE orgs SET plan = 'pro' WHERE id = $1`, [downgraded.orgId]);
    const answer = await post(downgraded.orgId, samlResponse(`saml-${randomUUID().slice(0, 8)}@corp.example`));
    expect(answer.statusCode).toBe(403);
    expect(answer.json().error.code).toBe('PLAN_UPGRADE_REQUIRED');
  });

  it('refuses a certificate that is not one', async () => {
    const answer = await context.app.inject({
      method: 'PUT',
      url: '/api/v1/sso/saml',
      headers: { authorization: `Bearer ${enterprise.apiKey}` },
      payload: { idp_entity_id: IDP_ENTITY, sso_url: 'https://idp.example.test/sso', certificate: 'not a certificate' },
    });
    expect(answer.statusCode).toBe(400);
    expect(answer.json().error.code).toBe('VALIDATION_FAILED');
  });
});
