/**
 * The sensor CA's shared storage in the database (migration 105): what lets collector replicas on
 * one PostgreSQL issue from one CA and honour each other's revocations. The CA's private key is
 * encrypted at rest with API_ENCRYPTION_KEY, as provider keys are (AES-256-GCM, bound to the
 * context 'sensor-ca'); a database copied without that key holds no usable CA key.
 */
import { decrypt, encrypt } from '../../platform/crypto.ts';
import type { Database } from '../../platform/db/index.ts';
import { CertificateError, type IssuedRecord, type SharedCaStorage } from '../certificates.ts';

const CONTEXT = 'sensor-ca';

interface CertificateRow {
  serial_number: string;
  sensor_id: string;
  not_after: Date | string;
  revoked_at: Date | string | null;
}

const iso = (value: Date | string) => new Date(value).toISOString();

export function createDatabaseCaStorage(db: Database, encryptionKey: Buffer): SharedCaStorage {
  async function stored(): Promise<{ keyPem: string; certificatePem: string } | null> {
    const { rows } = await db.query<{ certificate_pem: string; private_key_encrypted: string }>('SELECT certificate_pem, private_key_encrypted FROM sensor_ca WHERE id = 1');
    const row = rows[0];
    if (row === undefined) return null;
    try {
      return { keyPem: decrypt(encryptionKey, row.private_key_encrypted, CONTEXT), certificatePem: row.certificate_pem };
    } catch {
      throw new CertificateError('CA_KEY_LOCKED', 'The stored sensor CA key does not open with API_ENCRYPTION_KEY: the key it was stored with is needed.');
    }
  }

  return {
    async keyPair(create) {
      const existing = await stored();
      if (existing !== null) return existing;
      const created = await create();
      // Replicas starting together: the first row stored is the CA of all of them.
      await db.query('INSERT INTO sensor_ca (id, certificate_pem, private_key_encrypted) VALUES (1, $1, $2) ON CONFLICT (id) DO NOTHING', [created.certificatePem, encrypt(encryptionKey, created.keyPem, CONTEXT)]);
      return (await stored())!;
    },
    async recordIssued(record: IssuedRecord) {
      // A day past their expiry, certificates leave the list (no revocation list needs them).
      await db.query("DELETE FROM sensor_certificates WHERE not_after < now() - interval '1 day'");
      await db.query('INSERT INTO sensor_certificates (serial_number, sensor_id, not_after, revoked_at) VALUES ($1, $2, $3, $4)', [record.serialNumber, record.sensorId, record.notAfter, record.revokedAt]);
    },
    async revoke(target, at) {
      const [column, value] = 'serialNumber' in target ? ['serial_number', target.serialNumber] : ['sensor_id', target.sensorId];
      const { rows } = await db.query<{ serial_number: string }>(
        `UPDATE sensor_certificates SET revoked_at = $2 WHERE ${column} = $1 AND revoked_at IS NULL AND not_after > now() RETURNING serial_number`,
        [value, at],
      );
      return rows.map((row) => row.serial_number);
    },
    async issued() {
      const { rows } = await db.query<CertificateRow>('SELECT serial_number, sensor_id, not_after, revoked_at FROM sensor_certificates WHERE not_after > now() ORDER BY not_after LIMIT 100000');
      return rows.map((row) => ({ serialNumber: row.serial_number, sensorId: row.sensor_id, notAfter: iso(row.not_after), revokedAt: row.revoked_at === null ? null : iso(row.revoked_at) }));
    },
  };
}
