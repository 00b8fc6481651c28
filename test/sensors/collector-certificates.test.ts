/**
 * The collector's CA wired into registration (docs/sensors-operations.md): a sensor that sends a
 * PKCS#10 request for its Ed25519 key gets a 24-hour certificate and the CA certificate; a request
 * for another key enrols nothing; a signed re-registration renews; revoking the sensor revokes its
 * certificate; the registry shows the expiry. Real PostgreSQL and Redis when DATABASE_URL /
 * REDIS_URL are set, PGlite and the memory cache otherwise.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encryptionKeyFrom } from '../../src/platform/crypto.ts';
import { createCertificateRequest, createDatabaseCaStorage, generateSensorKey, openCertificateAuthority, publicKeyText } from '../../src/sensors/index.ts';
import { createPublicKey, createPrivateKey } from 'node:crypto';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { createEnrolmentToken, TestSensor } from './sensor-client.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'svc-collector-ca-'));

/** A test sensor whose key is a PEM pair (as `svc sensor` keeps it), so it can build requests. */
function certificateSensor(context: TestContext) {
  const pem = generateSensorKey();
  const sensor = new TestSensor(context.app, undefined, 'verification');
  Object.assign(sensor, { privateKey: createPrivateKey(pem.privateKeyPem), publicKey: publicKeyText(createPublicKey(pem.publicKeyPem)) });
  return { sensor, pem };
}

describe('the collector issues sensors their certificates', () => {
  let context: TestContext;
  let org: { orgId: string; apiKey: string };

  beforeAll(async () => {
    context = await createTestApp({ env: { DATA_DIR: dataDir } });
    org = await context.createOrg();
  }, 120_000);
  afterAll(async () => {
    await context.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers an enrolment with a certificate request with a 24-hour certificate for the sensor key, issued by the CA it sends', async () => {
    const { sensor, pem } = certificateSensor(context);
    const answer = await sensor.enrol(await createEnrolmentToken(context.app, org.apiKey), { certificate_request: await createCertificateRequest(pem.privateKeyPem) });
    expect(answer.statusCode).toBe(201);
    const { certificate } = answer.json() as { certificate: { certificate_pem: string; ca_certificate_pem: string; expires_at: string } };
    const issued = new X509Certificate(certificate.certificate_pem);
    const ca = new X509Certificate(certificate.ca_certificate_pem);
    expect(issued.verify(ca.publicKey)).toBe(true);
    expect(issued.subject).toBe(`CN=${sensor.id}`);
    expect(issued.publicKey.export({ format: 'der', type: 'spki' }).equals(createPublicKey(pem.publicKeyPem).export({ format: 'der', type: 'spki' }))).toBe(true);
    const lifetime = Date.parse(issued.validTo) - Date.now();
    expect(lifetime).toBeGreaterThan(23.5 * 3_600_000);
    expect(lifetime).toBeLessThanOrEqual(24 * 3_600_000);
    const listed = await context.app.inject({ method: 'GET', url: `/api/v1/sensors/${sensor.id}`, headers: { authorization: `Bearer ${org.apiKey}` } });
    expect(Date.parse(listed.json().certificate_expires_at)).toBe(Date.parse(certificate.expires_at));
  });

  it('refuses a certificate request for another key and leaves the enrolment token usable', async () => {
    const { sensor } = certificateSensor(context);
    const token = await createEnrolmentToken(context.app, org.apiKey);
    const other = generateSensorKey();
    const refused = await sensor.enrol(token, { certificate_request: await createCertificateRequest(other.privateKeyPem) });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'CERTIFICATE_REQUEST_INVALID', reason: 'key_mismatch' });
    const garbage = await sensor.enrol(token, { certificate_request: `-----BEGIN CERTIFICATE REQUEST-----\n${'A'.repeat(80)}\n-----END CERTIFICATE REQUEST-----` });
    expect(garbage.json().error).toMatchObject({ code: 'CERTIFICATE_REQUEST_INVALID', reason: 'malformed' });
    expect((await sensor.enrol(token)).statusCode).toBe(201);
  });

  it('renews through a signed re-registration and revokes every certificate of a revoked sensor', async () => {
    const { sensor, pem } = certificateSensor(context);
    const first = await sensor.enrol(await createEnrolmentToken(context.app, org.apiKey), { certificate_request: await createCertificateRequest(pem.privateKeyPem) });
    expect(first.statusCode).toBe(201);
    const renewed = await sensor.signed('POST', '/sensors/register', { ...sensor.registration(), certificate_request: await createCertificateRequest(pem.privateKeyPem) });
    expect(renewed.statusCode).toBe(200);
    const second = renewed.json().certificate as { certificate_pem: string };
    expect(second.certificate_pem).not.toBe(first.json().certificate.certificate_pem);

    const deleted = await context.app.inject({ method: 'DELETE', url: `/api/v1/sensors/${sensor.id}`, headers: { authorization: `Bearer ${org.apiKey}` } });
    expect(deleted.statusCode).toBe(200);
    // The CA as another collector replica opens it from the database (what its mutual-TLS listener checks) now refuses both certificates.
    const authority = await openCertificateAuthority({ shared: createDatabaseCaStorage(context.services.db, encryptionKeyFrom(context.config.apiEncryptionKey)) });
    expect(() => authority.identify(first.json().certificate.certificate_pem)).toThrow(expect.objectContaining({ code: 'CERTIFICATE_REVOKED' }));
    expect(() => authority.identify(second.certificate_pem)).toThrow(expect.objectContaining({ code: 'CERTIFICATE_REVOKED' }));
  });

  it('refuses to revoke a sensor of another org, leaving its certificate valid', async () => {
    const { sensor, pem } = certificateSensor(context);
    const enrolled = await sensor.enrol(await createEnrolmentToken(context.app, org.apiKey), { certificate_request: await createCertificateRequest(pem.privateKeyPem) });
    const other = await context.createOrg();
    const refused = await context.app.inject({ method: 'DELETE', url: `/api/v1/sensors/${sensor.id}`, headers: { authorization: `Bearer ${other.apiKey}` } });
    expect(refused.statusCode).toBe(404);
    const authority = await openCertificateAuthority({ shared: createDatabaseCaStorage(context.services.db, encryptionKeyFrom(context.config.apiEncryptionKey)) });
    expect(authority.identify(enrolled.json().certificate.certificate_pem)).toBe(sensor.id);
  });
});
