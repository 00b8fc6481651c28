/**
 * The collector's mutual-TLS sensor listener (SENSOR_LISTEN) with real TLS handshakes: a sensor
 * with a valid certificate gets through; none, an expired one, another CA's and a revoked one are
 * refused in the handshake; a certificate of sensor A cannot speak for sensor B; the main port then
 * takes only enrolment; and the sensor agent works over mutual TLS, renewing its certificate
 * without losing a finding. Real PostgreSQL and Redis when DATABASE_URL / REDIS_URL are set.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificateRequest, generateSensorKey, openCertificateAuthority, publicKeyText, SENSOR_HEADERS, signRequest, startSensorListener, WIRE_VERSION, type CertificateAuthority, type SensorListener } from '../../src/sensors/index.ts';
import { startSensorAgent } from '../../src/sensors/sensor/agent.ts';
import { createPublicKey } from 'node:crypto';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { TEST_METRICS_TOKEN } from '../helpers/constants.ts';
import { BASE_FINDING, createEnrolmentToken } from './sensor-client.ts';

const HOUR = 3_600_000;
const dataDir = mkdtempSync(join(tmpdir(), 'svc-mtls-'));
const otherDir = mkdtempSync(join(tmpdir(), 'svc-mtls-other-'));
/** The CA's clock offset: tests issue certificates in the past with it. */
let offset = 0;

interface Enrolled {
  id: string;
  privateKeyPem: string;
  certificatePem: string;
  caCertificatePem: string;
}

describe('the mutual-TLS sensor listener', { timeout: 180_000 }, () => {
  let context: TestContext;
  let listener: SensorListener;
  let authority: CertificateAuthority;
  let apiKey: string;
  let mainUrl: string;

  beforeAll(async () => {
    const opened = openCertificateAuthority({ dir: join(dataDir, 'sensor-ca'), now: () => Date.now() + offset });
    context = await createTestApp({ env: { DATA_DIR: dataDir, SENSOR_LISTEN: '127.0.0.1:0' }, services: { collector: { certificateAuthority: () => opened } } });
    authority = await opened;
    ({ apiKey } = await context.createOrg({ plan: 'enterprise' }));
    await context.app.listen({ host: '127.0.0.1', port: 0 });
    mainUrl = `http://127.0.0.1:${(context.app.server.address() as { port: number }).port}`;
    listener = await startSensorListener({ config: context.config.sensorListener!, authority: await context.services.sensorCertificateAuthority(), target: context.app.server, logger: context.services.logger, metrics: context.services.metrics });
  }, 120_000);
  afterAll(async () => {
    await listener?.close();
    await context?.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(otherDir, { recursive: true, force: true });
  });

  /** Enrols a sensor on the main port (no certificate needed there) with a certificate request. */
  async function enrol(): Promise<Enrolled> {
    const key = generateSensorKey();
    const token = await createEnrolmentToken(context.app, apiKey);
    const answer = await context.app.inject({
      method: 'POST',
      url: '/sensors/register',
      payload: { enrolment_token: token, name: 'mtls', class: 'verification', capabilities: ['verify'], version: '0.1.0', wire_version: WIRE_VERSION, public_key: publicKeyText(createPublicKey(key.publicKeyPem)), certificate_request: await createCertificateRequest(key.privateKeyPem) },
    });
    expect(answer.statusCode).toBe(201);
    const json = answer.json() as { sensor_id: string; certificate: { certificate_pem: string; ca_certificate_pem: string } };
    return { id: json.sensor_id, privateKeyPem: key.privateKeyPem, certificatePem: json.certificate.certificate_pem, caCertificatePem: json.certificate.ca_certificate_pem };
  }

  /** A signed heartbeat over the listener, presenting `certificate` (or none) and signed as `as`. */
  async function heartbeat(as: Enrolled, certificate: { certificatePem: string; privateKeyPem: string } | null) {
    const path = '/sensors/heartbeat';
    const agent = new Agent({ connect: { ca: [as.caCertificatePem], ...(certificate === null ? {} : { cert: certificate.certificatePem, key: certificate.privateKeyPem }), servername: 'localhost' } });
    const body = Buffer.from(JSON.stringify({ load: 0, queue_depth: 0, last_finding_at: null }));
    try {
      const answer = await fetch(`${listener.url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...signRequest(as.id, createPrivateKey(as.privateKeyPem), 'POST', path, body) }, dispatcher: agent });
      return { status: answer.status, json: (await answer.json()) as { error?: { code: string }; sensor_id?: string } };
    } finally {
      await agent.close();
    }
  }

  /** The request must fail, and the listener must count a refused handshake. */
  async function refusedInHandshake(attempt: () => Promise<unknown>): Promise<void> {
    const before = listener.refusedHandshakes();
    await expect(attempt()).rejects.toThrow();
    await expect.poll(() => listener.refusedHandshakes()).toBeGreaterThan(before);
  }

  it('lets a sensor with a valid certificate through and answers its heartbeat', async () => {
    const sensor = await enrol();
    expect(await heartbeat(sensor, sensor)).toMatchObject({ status: 200, json: { sensor_id: sensor.id } });
  });

  it('refuses in the handshake a connection without a certificate, with an expired one, with another CA\'s, and with a revoked one', async () => {
    const sensor = await enrol();
    await refusedInHandshake(() => heartbeat(sensor, null));

    // The same CA, its clock 25 hours behind: a certificate for the sensor's key that expired an hour ago.
    offset = -25 * HOUR;
    const { token } = await authority.issueEnrolmentToken({ sensorId: sensor.id });
    const expired = await authority.enrol(token, await createCertificateRequest(sensor.privateKeyPem));
    offset = 0;
    expect(Date.parse(new X509Certificate(expired.certificatePem).validTo)).toBeLessThan(Date.now());
    await refusedInHandshake(() => heartbeat(sensor, { certificatePem: expired.certificatePem, privateKeyPem: sensor.privateKeyPem }));

    const other = await openCertificateAuthority({ dir: otherDir });
    const { token: otherToken } = await other.issueEnrolmentToken({ sensorId: sensor.id });
    const stranger = await other.enrol(otherToken, await createCertificateRequest(sensor.privateKeyPem));
    await refusedInHandshake(() => heartbeat(sensor, { certificatePem: stranger.certificatePem, privateKeyPem: sensor.privateKeyPem }));

    // Revoking the sensor revokes its certificate: the listener's revocation list is updated at once.
    const kept = await enrol();
    expect((await heartbeat(sensor, sensor)).status).toBe(200);
    const revoked = await context.app.inject({ method: 'DELETE', url: `/api/v1/sensors/${sensor.id}`, headers: { authorization: `Bearer ${apiKey}` } });
    expect(revoked.statusCode).toBe(200);
    // The new revocation list is applied to the listener as soon as it is signed.
    await expect.poll(() => heartbeat(sensor, sensor).then(() => 'answered', () => 'refused')).toBe('refused');
    await refusedInHandshake(() => heartbeat(sensor, sensor));
    expect((await heartbeat(kept, kept)).status).toBe(200);
    const metrics = await context.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` } });
    expect(Number(/^svc_sensor_handshakes_refused_total (\d+)/m.exec(metrics.body)?.[1])).toBe(listener.refusedHandshakes());
  });

  it('refuses a request signed as sensor B over the certificate of sensor A', async () => {
    const sensorA = await enrol();
    const sensorB = await enrol();
    // B's own key signs correctly; only the certificate is A's.
    expect(await heartbeat(sensorB, sensorA)).toMatchObject({ status: 403, json: { error: { code: 'SENSOR_IDENTITY_MISMATCH' } } });
    const findings = await fetch(`${listener.url}/findings`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json', [SENSOR_HEADERS.sensorId]: sensorB.id, [SENSOR_HEADERS.signature]: 'x' },
      dispatcher: new Agent({ connect: { ca: [sensorA.caCertificatePem], cert: sensorA.certificatePem, key: sensorA.privateKeyPem, servername: 'localhost' } }),
    });
    expect(findings.status).toBe(403);
    expect(((await findings.json()) as { error: { code: string } }).error.code).toBe('SENSOR_IDENTITY_MISMATCH');
    expect((await heartbeat(sensorB, sensorB)).status).toBe(200);
  });

  it('serves only the sensor wire on the listener, and only enrolment on the main port', async () => {
    const sensor = await enrol();
    const agent = new Agent({ connect: { ca: [sensor.caCertificatePem], cert: sensor.certificatePem, key: sensor.privateKeyPem, servername: 'localhost' } });
    expect((await fetch(`${listener.url}/api/v1/sensors`, { headers: { authorization: `Bearer ${apiKey}` }, dispatcher: agent })).status).toBe(404);
    await agent.close();
    const body = Buffer.from(JSON.stringify({ load: 0, queue_depth: 0, last_finding_at: null }));
    const plain = await context.app.inject({ method: 'POST', url: '/sensors/heartbeat', headers: { 'content-type': 'application/json', ...signRequest(sensor.id, createPrivateKey(sensor.privateKeyPem), 'POST', '/sensors/heartbeat', body) }, payload: body });
    expect(plain.statusCode).toBe(403);
    expect(plain.json().error.code).toBe('SENSOR_MTLS_REQUIRED');
  });

  it("serves with an operator's server certificate, which a sensor trusts with --collector-ca and not through the pinned sensor CA", async () => {
    const operatorCa = await openCertificateAuthority({ dir: join(otherDir, 'operator-ca') });
    const issued = await operatorCa.issueServerCertificate(['localhost', '127.0.0.1']);
    const files = { certificate: join(otherDir, 'server.pem'), key: join(otherDir, 'server-key.pem'), ca: join(otherDir, 'operator-ca.pem') };
    writeFileSync(files.certificate, issued.certificatePem);
    writeFileSync(files.key, issued.keyPem, { mode: 0o600 });
    writeFileSync(files.ca, operatorCa.certificatePem);
    const operated = await startSensorListener({ config: { host: '127.0.0.1', port: 0, certificateFile: files.certificate, keyFile: files.key, hostnames: [] }, authority, target: context.app.server, logger: context.services.logger });
    try {
      const token = await createEnrolmentToken(context.app, apiKey);
      const start = (dataDir: string, collectorCaFile?: string) => startSensorAgent({
        collectorUrl: operated.url, enrolmentUrl: mainUrl, dataDir, sensorClass: 'verification', name: 'operator-tls', version: '0.1.0', capabilities: ['verify'], heartbeatMs: 3_600_000, logger: context.services.logger,
        enrolmentToken: token, ...(collectorCaFile === undefined ? {} : { collectorCaFile }),
      });
      const trusting = await start(join(dataDir, 'operator-trusting'), files.ca);
      try {
        expect(await trusting.heartbeat()).toBe(true);
        expect(await trusting.emit('corr-operator', { ...BASE_FINDING, pillar: 'verification', kind: 'verification', request_id: 'operator-1' })).toBe('sent');
      } finally {
        await trusting.close();
      }
      // The same sensor without --collector-ca trusts only the sensor CA it pinned: the operator's server is not it.
      const pinned = await start(join(dataDir, 'operator-trusting'));
      try {
        expect(await pinned.heartbeat()).toBe(false);
      } finally {
        await pinned.close();
      }
    } finally {
      await operated.close();
    }
  });

  it('carries a sensor agent over mutual TLS: enrolment on the main port, findings on the listener, and a renewal that loses no finding', async () => {
    const token = await createEnrolmentToken(context.app, apiKey);
    const sensorDir = join(dataDir, 'agent');
    // Certificates issued 17 hours ago: due for renewal (two thirds of 24 hours), not yet expired.
    offset = -17 * HOUR;
    const agent = await startSensorAgent({ collectorUrl: listener.url.replace('127.0.0.1', 'localhost'), enrolmentUrl: mainUrl, dataDir: sensorDir, sensorClass: 'verification', name: 'agent-mtls', version: '0.1.0', capabilities: ['verify'], enrolmentToken: token, heartbeatMs: 3_600_000, logger: context.services.logger });
    try {
      const first = new X509Certificate(readFileSync(join(sensorDir, 'certificate.pem')));
      expect(first.subjectAltName).toContain(agent.sensorId);
      expect(await agent.emit('corr-mtls', { ...BASE_FINDING, pillar: 'verification', kind: 'verification', request_id: 'mtls-1' })).toBe('sent');
      offset = 0;
      // The first heartbeat after the renewal time renews the certificate; findings keep flowing on the new one.
      expect(await agent.heartbeat()).toBe(true);
      const renewed = new X509Certificate(readFileSync(join(sensorDir, 'certificate.pem')));
      expect(renewed.serialNumber).not.toBe(first.serialNumber);
      expect(Date.parse(renewed.validTo)).toBeGreaterThan(Date.now() + 23 * HOUR);
      expect(await agent.emit('corr-mtls', { ...BASE_FINDING, pillar: 'verification', kind: 'verification', request_id: 'mtls-2' })).toBe('sent');
      expect(await agent.heartbeat()).toBe(true);
      const audit = await context.app.inject({ method: 'GET', url: '/api/v1/audit?action=sensor.finding&limit=50', headers: { authorization: `Bearer ${apiKey}` } });
      const targets = (audit.json() as { records: Array<{ target: string; actor: string }> }).records.filter((record) => record.actor === `sensor:${agent.sensorId}`).map((record) => record.target);
      expect(targets.sort()).toEqual(['mtls-1', 'mtls-2']);
    } finally {
      offset = 0;
      await agent.close();
    }
  });
});
