/**
 * Collector replicas share the sensor CA through the database (migration 105): both issue from one
 * CA, a certificate issued by one passes the other's TLS handshake, a revocation at one is refused
 * by the other, and the CA key is stored encrypted with API_ENCRYPTION_KEY. Real PostgreSQL and
 * Redis when DATABASE_URL / REDIS_URL are set (then also two full svc instances on one database).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, type Server } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encryptionKeyFrom } from '../../src/platform/crypto.ts';
import { openDatabase, type Database } from '../../src/platform/db/index.ts';
import { deriveSecret } from '../../src/platform/secrets.ts';
import { createCertificateRequest, createDatabaseCaStorage, generateSensorKey, openCertificateAuthority, type CertificateAuthority } from '../../src/sensors/index.ts';
import { TEST_ENCRYPTION_KEY, TEST_SECRET_KEY } from '../helpers/constants.ts';
import { createTestApp, usingPostgres, type TestContext } from '../helpers/app.ts';

const dirs: string[] = [];

/** A TLS server trusting `ca` for client certificates; resolves to its port. */
async function listen(ca: CertificateAuthority): Promise<{ server: Server; port: number; refresh(): Promise<void> }> {
  const serverCertificate = await ca.issueServerCertificate(['localhost', '127.0.0.1']);
  const server = createServer(await ca.serverOptions(serverCertificate), (socket) => socket.end('hello'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, refresh: async () => server.setSecureContext(await ca.serverOptions(serverCertificate)) };
}

function handshake(port: number, sensor: { caCertificatePem: string; certificatePem: string; privateKeyPem: string }): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', ca: [sensor.caCertificatePem], cert: sensor.certificatePem, key: sensor.privateKeyPem, minVersion: 'TLSv1.3' });
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', () => resolve(false));
    socket.on('close', () => resolve(answer === 'hello'));
  });
}

async function enrol(ca: CertificateAuthority, sensorId: string) {
  const key = generateSensorKey();
  const { token } = await ca.issueEnrolmentToken({ sensorId });
  return { ...(await ca.enrol(token, await createCertificateRequest(key.privateKeyPem))), privateKeyPem: key.privateKeyPem };
}

describe('two collector replicas on one database', { timeout: 120_000 }, () => {
  let context: TestContext;
  const servers: Server[] = [];
  beforeAll(async () => {
    context = await createTestApp();
  }, 120_000);
  afterAll(async () => {
    for (const server of servers) server.close();
    await context?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const storage = () => createDatabaseCaStorage(context.services.db, encryptionKeyFrom(TEST_ENCRYPTION_KEY));

  /**
   * A sensor_ca table for this file alone, where a test empties it. On PostgreSQL every test file
   * shares one database: deleting its CA row would take the CA from under the files running
   * beside this one (a collector opening it then makes a new one, a replica another). There, a
   * schema of the test's own holds the table, ahead of public on the search path; embedded, the
   * app's database is the test's own already.
   */
  async function ownCaTable(): Promise<{ db: Database; close(): Promise<void> }> {
    if (!usingPostgres) return { db: context.services.db, close: async () => undefined };
    const schema = `ca_test_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    await context.services.db.query(`CREATE SCHEMA ${schema}`);
    await context.services.db.query(`CREATE TABLE ${schema}.sensor_ca (LIKE public.sensor_ca INCLUDING ALL)`);
    const url = new URL(process.env.DATABASE_URL!);
    url.searchParams.set('options', `-c search_path=${schema},public`);
    const db = await openDatabase({ kind: 'postgres', url: url.toString(), appUrl: null }, { appRolePassword: deriveSecret(TEST_SECRET_KEY, 'svc/db-app-role') });
    return {
      db,
      async close() {
        await db.close();
        await context.services.db.query(`DROP SCHEMA ${schema} CASCADE`);
      },
    };
  }

  it('issue from one CA: a certificate of either passes the other\'s handshake, and a revocation at one is refused by the other', async () => {
    const [first, second] = await Promise.all([openCertificateAuthority({ shared: storage() }), openCertificateAuthority({ shared: storage() })]);
    expect(second.certificatePem).toBe(first.certificatePem);
    const atFirst = await listen(first);
    const atSecond = await listen(second);
    servers.push(atFirst.server, atSecond.server);

    const fromFirst = await enrol(first, 'sensor-first');
    const fromSecond = await enrol(second, 'sensor-second');
    expect(await handshake(atSecond.port, fromFirst)).toBe(true);
    expect(await handshake(atFirst.port, fromSecond)).toBe(true);
    expect(second.identify(fromFirst.certificatePem)).toBe('sensor-first');

    expect(await first.revoke({ sensorId: 'sensor-first' })).toEqual([fromFirst.serialNumber]);
    // The other replica re-reads the revocations with its next list (every 30 s, or now).
    await atSecond.refresh();
    expect(await handshake(atSecond.port, fromFirst)).toBe(false);
    expect(() => second.identify(fromFirst.certificatePem)).toThrow(expect.objectContaining({ code: 'CERTIFICATE_REVOKED' }));
    expect(await handshake(atSecond.port, fromSecond)).toBe(true);
  });

  it('keeps the CA key encrypted with API_ENCRYPTION_KEY: the row holds no PEM key, and another key cannot open it', async () => {
    await openCertificateAuthority({ shared: storage() });
    const { rows } = await context.services.db.query<{ private_key_encrypted: string }>('SELECT private_key_encrypted FROM sensor_ca WHERE id = 1');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.private_key_encrypted).not.toMatch(/PRIVATE KEY/);
    await expect(openCertificateAuthority({ shared: createDatabaseCaStorage(context.services.db, encryptionKeyFrom('another-master-key-of-enough-length-000')) })).rejects.toMatchObject({ code: 'CA_KEY_LOCKED' });
  });

  it('imports an operator-provided CA from DATA_DIR/sensor-ca when the database holds none', async () => {
    // Only on an empty database: this one has a CA now, which wins over the directory.
    const own = await ownCaTable();
    try {
      const ownStorage = () => createDatabaseCaStorage(own.db, encryptionKeyFrom(TEST_ENCRYPTION_KEY));
      await openCertificateAuthority({ shared: ownStorage() }); // the CA the database holds
      const dir = mkdtempSync(join(tmpdir(), 'svc-operator-ca-'));
      dirs.push(dir);
      const operator = await openCertificateAuthority({ dir });
      const stored = await openCertificateAuthority({ dir, shared: ownStorage() });
      expect(stored.certificatePem).not.toBe(operator.certificatePem);
      await own.db.query('DELETE FROM sensor_ca');
      const imported = await openCertificateAuthority({ dir, shared: ownStorage() });
      expect(imported.certificatePem).toBe(operator.certificatePem);
    } finally {
      await own.close();
    }
  });
});

describe.runIf(usingPostgres)('two svc instances on one PostgreSQL', () => {
  it('open the same sensor CA', async () => {
    const first = await createTestApp();
    const second = await createTestApp();
    try {
      const [a, b] = await Promise.all([first.services.sensorCertificateAuthority(), second.services.sensorCertificateAuthority()]);
      expect(a.certificatePem).toBe(b.certificatePem);
      const sensor = await enrol(a, 'sensor-across');
      expect(b.identify(sensor.certificatePem)).toBe('sensor-across');
    } finally {
      await first.close();
      await second.close();
    }
  }, 120_000);
});
