/**
 * Secrets resolution. Security posture: in production both secrets come from the environment
 * and nothing is written to disk. In embedded mode (and only when the variables are absent)
 * they are generated once with a CSPRNG and kept in DATA_DIR/secrets.json, mode 0600, so that a
 * restart can still decrypt provider keys and verify the audit chain. The metrics bearer token
 * is METRICS_TOKEN when set, otherwise derived from SECRET_KEY (HMAC, label "svc/metrics-token")
 * so that `svc metrics-token` can print it without storing another secret.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { withSecrets, type Config, type ResolvedConfig } from './config.ts';

interface StoredSecrets {
  secret_key: string;
  api_encryption_key: string;
}

export function resolveSecrets(config: Config): ResolvedConfig {
  let secretKey = config.secretKey;
  let apiEncryptionKey = config.apiEncryptionKey;
  if (secretKey === null || apiEncryptionKey === null) {
    // loadConfig only lets this happen outside production.
    const stored = loadOrCreateStoredSecrets(config.dataDir);
    secretKey ??= stored.secret_key;
    apiEncryptionKey ??= stored.api_encryption_key;
  }
  const metricsToken = config.metricsToken ?? deriveSecret(secretKey, 'svc/metrics-token');
  return withSecrets(config, { secretKey, apiEncryptionKey, metricsToken });
}

/** A sub-secret for one purpose, so one leaked purpose never reveals SECRET_KEY. */
export function deriveSecret(secretKey: string, label: string): string {
  return createHmac('sha256', secretKey).update(label).digest('base64url');
}

function loadOrCreateStoredSecrets(dataDir: string): StoredSecrets {
  const path = join(dataDir, 'secrets.json');
  if (existsSync(path)) {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<StoredSecrets>;
    if (typeof parsed.secret_key === 'string' && typeof parsed.api_encryption_key === 'string') {
      return parsed as StoredSecrets;
    }
    throw new Error(`${path} is damaged: it must hold secret_key and api_encryption_key`);
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const secrets: StoredSecrets = {
    secret_key: randomBytes(48).toString('base64url'),
    api_encryption_key: randomBytes(32).toString('base64url'),
  };
  writeFileSync(path, JSON.stringify(secrets, null, 2), { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
  return secrets;
}
