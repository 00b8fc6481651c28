/**
 * Webhook signatures. Security posture: each endpoint has its own random 256-bit secret, shown
 * once at creation and stored encrypted (AES-256-GCM). Every delivery carries two signatures
 * made with the secret's key bytes (the base64 part after "whsec_", decoded):
 *   X-SVC-Signature: sha256=<lower-case hex HMAC-SHA256 of the raw body>
 *   webhook-id / webhook-timestamp / webhook-signature: v1,<base64 HMAC-SHA256 of
 *     "<webhook-id>.<webhook-timestamp>.<raw body>"> (Standard Webhooks), which lets receivers
 *     reject replays older than their tolerance (5 minutes in the reference libraries).
 * Receivers must compare in constant time and before parsing the body.
 */
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The HMAC key bytes of a `whsec_<base64>` secret. */
export function secretKeyBytes(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('webhook secret must start with whsec_');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/** Value of X-SVC-Signature: `sha256=<hex>`. */
export function svcSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secretKeyBytes(secret)).update(body, 'utf8').digest('hex')}`;
}

/** Value of webhook-signature: `v1,<base64>` over `id.timestamp.body`. */
export function standardSignature(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretKeyBytes(secret)).update(`${messageId}.${timestampSeconds}.${body}`, 'utf8').digest('base64');
  return `v1,${mac}`;
}

export function signatureHeaders(secret: string, messageId: string, body: string, now: Date): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardSignature(secret, messageId, timestamp, body),
    'x-svc-signature': svcSignature(secret, body),
  };
}
