import { mkdtempSync, rmSync, statSync, readFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, type Server, type TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CertificateError,
  createCertificateRequest,
  generateSensorKey,
  openCertificateAuthority,
  renewalDue,
  renewalTime,
  sensorTlsOptions,
  SENSOR_CERTIFICATE_LIFETIME_MS,
  type CertificateAuthority,
} from '../../src/sensors/certificates.ts';
import { waitFor } from '../helpers/wait.ts';

const HOUR = 60 * 60_000;
const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ca-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof CertificateError) return error.code;
    throw error;
  }
  return 'resolved';
}

/** Enrols a new sensor with `ca` and returns what the sensor holds. */
async function enrolSensor(ca: CertificateAuthority, sensorId?: string): Promise<{ sensorId: string; certificatePem: string; privateKeyPem: string; caCertificatePem: string; serialNumber: string }> {
  const { token } = await ca.issueEnrolmentToken(sensorId === undefined ? {} : { sensorId });
  const key = generateSensorKey();
  const issued = await ca.enrol(token, await createCertificateRequest(key.privateKeyPem));
  return { ...issued, privateKeyPem: key.privateKeyPem };
}

/** Opens a real TLS connection as the sensor; resolves to the sensor id the server saw, or the failure. */
function handshake(port: number, credentials: { caCertificatePem: string; certificatePem: string; privateKeyPem: string }): Promise<{ ok: true; seen: string } | { ok: false }> {
  return new Promise((resolve) => {
    const socket: TLSSocket = connect({ host: '127.0.0.1', port, servername: 'localhost', ...sensorTlsOptions(credentials) });
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('end', () => resolve(answer.startsWith('hello ') ? { ok: true, seen: answer.slice(6) } : { ok: false }));
    socket.on('error', () => resolve({ ok: false }));
    socket.on('close', () => resolve(answer.startsWith('hello ') ? { ok: true, seen: answer.slice(6) } : { ok: false }));
  });
}

describe('the collector certificate authority and mutual TLS', () => {
  let ca: CertificateAuthority;
  let dir: string;
  let server: Server;
  let port: number;
  let refused = 0;
  let contexts = 0;
  let stopBinding: () => void;

  beforeAll(async () => {
    dir = tempDir();
    ca = await openCertificateAuthority({ dir });
    const serverCredentials = await ca.issueServerCertificate(['localhost', '127.0.0.1']);
    server = createServer(await ca.serverOptions(serverCredentials), (socket) => {
      const peer = socket.getPeerX509Certificate();
      socket.end(`hello ${peer === undefined ? '' : ca.identify(peer.raw)}`);
    });
    server.on('tlsClientError', () => {
      refused++;
    });
    // Counts the TLS contexts bindServer gives the server (a new one with each revocation list).
    const setSecureContext = server.setSecureContext.bind(server);
    server.setSecureContext = (options) => {
      setSecureContext(options);
      contexts++;
    };
    stopBinding = await ca.bindServer(server, serverCredentials);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    stopBinding();
    await new Promise((resolve) => server.close(resolve));
  });

  it('accepts a sensor that enrolled with a one-time token and names it by its sensor id', async () => {
    const sensor = await enrolSensor(ca, 'sensor-mcp-1');
    const certificate = new X509Certificate(sensor.certificatePem);
    expect(Date.parse(certificate.validTo) - Date.parse(certificate.validFrom)).toBeLessThanOrEqual(SENSOR_CERTIFICATE_LIFETIME_MS + 5 * 60_000);
    expect(certificate.publicKey.asymmetricKeyType).toBe('ed25519');
    expect(await handshake(port, sensor)).toEqual({ ok: true, seen: 'sensor-mcp-1' });
  });

  it('refuses an expired certificate in the handshake', async () => {
    // The same CA directory, with a clock 25 hours behind: the certificate expired an hour ago.
    const past = await openCertificateAuthority({ dir, now: () => Date.now() - 25 * HOUR });
    const sensor = await enrolSensor(past, 'sensor-expired');
    const before = refused;
    expect(await handshake(port, sensor)).toEqual({ ok: false });
    expect(refused).toBe(before + 1);
    expect(() => ca.identify(sensor.certificatePem)).toThrow(expect.objectContaining({ code: 'CERTIFICATE_EXPIRED' }));
  });

  it('refuses a certificate from another CA in the handshake', async () => {
    const other = await openCertificateAuthority({ dir: tempDir() });
    const stranger = await enrolSensor(other, 'sensor-stranger');
    const before = refused;
    // The stranger trusts our CA for the server, so only the server's check can refuse it.
    expect(await handshake(port, { ...stranger, caCertificatePem: ca.certificatePem })).toEqual({ ok: false });
    expect(refused).toBe(before + 1);
    expect(() => ca.identify(stranger.certificatePem)).toThrow(expect.objectContaining({ code: 'CERTIFICATE_UNKNOWN' }));
  });

  it('refuses a revoked certificate in the handshake once it is revoked, and keeps accepting the others', async () => {
    const revoked = await enrolSensor(ca, 'sensor-revoked');
    const kept = await enrolSensor(ca, 'sensor-kept');
    expect(await handshake(port, revoked)).toEqual({ ok: true, seen: 'sensor-revoked' });
    const contextsAtRevocation = contexts;
    expect(await ca.revoke({ sensorId: 'sensor-revoked' })).toEqual([revoked.serialNumber]);
    // bindServer applies the new revocation list to the listening server once a new CRL is signed:
    // wait for the server's new TLS context (a handshake before it would pass TLS).
    await waitFor(() => (contexts > contextsAtRevocation ? true : undefined));
    const before = refused;
    expect(await handshake(port, revoked)).toEqual({ ok: false });
    expect(refused).toBe(before + 1);
    expect(await handshake(port, kept)).toEqual({ ok: true, seen: 'sensor-kept' });
    expect(ca.certificates().find((record) => record.sensorId === 'sensor-revoked')?.revokedAt).not.toBeNull();
  });

  it('refuses a sensor that presents no certificate', async () => {
    const before = refused;
    const result = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', ca: [ca.certificatePem], minVersion: 'TLSv1.3' });
      let answer = '';
      socket.on('data', (chunk: Buffer) => {
        answer += chunk.toString();
      });
      socket.on('error', () => resolve(false));
      socket.on('close', () => resolve(answer.startsWith('hello')));
    });
    expect(result).toBe(false);
    expect(refused).toBe(before + 1);
  });
});

describe('enrolment tokens', () => {
  it('are single use', async () => {
    const ca = await openCertificateAuthority({ dir: tempDir() });
    const { token } = await ca.issueEnrolmentToken();
    const request = await createCertificateRequest(generateSensorKey().privateKeyPem);
    const results = await Promise.all([codeOf(ca.enrol(token, request)), codeOf(ca.enrol(token, request))]);
    expect(results.sort()).toEqual(['ENROLMENT_TOKEN_USED', 'resolved']);
  });

  it('expire', async () => {
    let clock = Date.now();
    const ca = await openCertificateAuthority({ dir: tempDir(), now: () => clock });
    const { token } = await ca.issueEnrolmentToken({ ttlMs: HOUR });
    clock += HOUR + 1;
    expect(await codeOf(ca.enrol(token, await createCertificateRequest(generateSensorKey().privateKeyPem)))).toBe('ENROLMENT_TOKEN_EXPIRED');
  });

  it('are stored only as a hash', async () => {
    const dir = tempDir();
    const ca = await openCertificateAuthority({ dir });
    const { token } = await ca.issueEnrolmentToken();
    const stored = readFileSync(join(dir, 'state.json'), 'utf8');
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(token.slice(-20));
  });

  it('refuse a token this CA never issued, and a request not signed by its key', async () => {
    const ca = await openCertificateAuthority({ dir: tempDir() });
    expect(await codeOf(ca.enrol('svc_enrol_guess', await createCertificateRequest(generateSensorKey().privateKeyPem)))).toBe('ENROLMENT_TOKEN_INVALID');
    const { token } = await ca.issueEnrolmentToken();
    const request = await createCertificateRequest(generateSensorKey().privateKeyPem);
    const body = request.split('\n').slice(1, -2).join('');
    const bytes = Buffer.from(body, 'base64');
    bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 0x01; // inside the signature
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${bytes.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    expect(await codeOf(ca.enrol(token, tampered))).toBe('CERTIFICATE_REQUEST_INVALID');
  });
});

describe('renewal', () => {
  it('is due two thirds into the 24-hour life and issues a new certificate for the same key', async () => {
    let clock = Date.now();
    const ca = await openCertificateAuthority({ dir: tempDir(), now: () => clock });
    const sensor = await enrolSensor(ca, 'sensor-renew');
    expect(renewalDue(sensor.certificatePem, clock + 15 * HOUR)).toBe(false);
    expect(renewalDue(sensor.certificatePem, clock + 16 * HOUR)).toBe(true);
    expect(renewalTime(sensor.certificatePem).getTime()).toBeGreaterThan(clock + 15 * HOUR);
    clock += 16 * HOUR;
    const renewed = await ca.renew(sensor.certificatePem, await createCertificateRequest(sensor.privateKeyPem));
    expect(renewed.sensorId).toBe('sensor-renew');
    expect(renewed.notAfter.getTime()).toBe(clock + SENSOR_CERTIFICATE_LIFETIME_MS);
    expect(ca.identify(renewed.certificatePem)).toBe('sensor-renew');
  });

  it('refuses a request for a different key, an expired certificate and a revoked one', async () => {
    let clock = Date.now();
    const ca = await openCertificateAuthority({ dir: tempDir(), now: () => clock });
    const sensor = await enrolSensor(ca, 'sensor-a');
    expect(await codeOf(ca.renew(sensor.certificatePem, await createCertificateRequest(generateSensorKey().privateKeyPem)))).toBe('RENEWAL_KEY_MISMATCH');
    const revoked = await enrolSensor(ca, 'sensor-b');
    await ca.revoke({ serialNumber: revoked.serialNumber });
    expect(await codeOf(ca.renew(revoked.certificatePem, await createCertificateRequest(revoked.privateKeyPem)))).toBe('CERTIFICATE_REVOKED');
    clock += 25 * HOUR;
    expect(await codeOf(ca.renew(sensor.certificatePem, await createCertificateRequest(sensor.privateKeyPem)))).toBe('CERTIFICATE_EXPIRED');
  });
});

describe('the CA across a collector restart', () => {
  it('keeps its revocations, its spent tokens and its unspent ones', async () => {
    const dir = tempDir();
    const ca = await openCertificateAuthority({ dir });
    const revoked = await enrolSensor(ca, 'sensor-gone');
    await ca.revoke({ sensorId: 'sensor-gone' });
    const spent = await ca.issueEnrolmentToken();
    await ca.enrol(spent.token, await createCertificateRequest(generateSensorKey().privateKeyPem));
    const unspent = await ca.issueEnrolmentToken({ sensorId: 'sensor-later' });

    const restarted = await openCertificateAuthority({ dir });
    expect(restarted.certificatePem).toBe(ca.certificatePem);
    expect(() => restarted.identify(revoked.certificatePem)).toThrow(expect.objectContaining({ code: 'CERTIFICATE_REVOKED' }));
    expect(new X509Certificate(restarted.certificatePem).subject).toContain('svc sensor CA');
    expect(await restarted.revocationListPem()).toMatch(/^-----BEGIN X509 CRL-----/);
    expect(await codeOf(restarted.enrol(spent.token, await createCertificateRequest(generateSensorKey().privateKeyPem)))).toBe('ENROLMENT_TOKEN_USED');
    expect((await restarted.enrol(unspent.token, await createCertificateRequest(generateSensorKey().privateKeyPem))).sensorId).toBe('sensor-later');
  });
});

describe('the CA key at rest', () => {
  it('is written with mode 0600 and, with a passphrase, encrypted', async () => {
    const dir = tempDir();
    const ca = await openCertificateAuthority({ dir, passphrase: 'correct horse battery staple' });
    expect(statSync(join(dir, 'ca-key.pem')).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(dir, 'ca-key.pem'), 'utf8')).toContain('BEGIN ENCRYPTED PRIVATE KEY');
    // Reopened with the passphrase it is the same CA; without it, it does not open.
    const again = await openCertificateAuthority({ dir, passphrase: 'correct horse battery staple' });
    expect(again.certificatePem).toBe(ca.certificatePem);
    expect(await codeOf(openCertificateAuthority({ dir }))).toBe('CA_KEY_LOCKED');
  });

  it('is refused when group or others can read it', async () => {
    const dir = tempDir();
    await openCertificateAuthority({ dir });
    chmodSync(join(dir, 'ca-key.pem'), 0o644);
    expect(await codeOf(openCertificateAuthority({ dir }))).toBe('CA_KEY_EXPOSED');
  });
});
