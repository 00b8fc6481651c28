-- The sensors' certificate authority, shared by every collector replica on one database (issue
-- #38, docs/sensors-operations.md): its key pair, and the certificates it issued with their
-- revocations, so that replicas issue from one CA, accept each other's certificates and refuse
-- each other's revocations in the TLS handshake. Deployment-wide (not org-scoped): the CA serves
-- every org's sensors; only the collector's owner connection reads these tables.
CREATE TABLE sensor_ca (
  id smallint PRIMARY KEY CHECK (id = 1),
  certificate_pem text NOT NULL,
  -- The CA's Ed25519 private key (PKCS#8 PEM) encrypted with API_ENCRYPTION_KEY, as provider keys
  -- are (AES-256-GCM, the envelope of src/platform/crypto.ts, bound to the context 'sensor-ca').
  private_key_encrypted text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sensor_certificates (
  -- Lower-case hexadecimal without leading zeros.
  serial_number text PRIMARY KEY,
  sensor_id text NOT NULL,
  not_after timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX sensor_certificates_sensor ON sensor_certificates (sensor_id);
CREATE INDEX sensor_certificates_not_after ON sensor_certificates (not_after);
