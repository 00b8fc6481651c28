/**
 * Crypto helpers on node:crypto. Posture: authenticated encryption only (AES-256-GCM with a
 * random 96-bit nonce per message), constant-time comparison for every secret, keys derived
 * from configured secrets with HKDF so one configured string never serves two purposes.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

const ENVELOPE_VERSION = 'v1';

/** 32-byte key from API_ENCRYPTION_KEY: base64/hex of exactly 32 bytes is used as is, anything else through HKDF. */
export function encryptionKeyFrom(secret: string): Buffer {
  if (/^[0-9a-f]{64}$/i.test(secret)) return Buffer.from(secret, 'hex');
  const decoded = Buffer.from(secret, 'base64url');
  if (decoded.length === 32 && /^[A-Za-z0-9_\-+/]{43}=?$/.test(secret)) return decoded;
  return Buffer.from(hkdfSync('sha256', secret, 'svc', 'svc/provider-keys', 32));
}

/**
 * Encrypts text; the result is `v1.<nonce>.<ciphertext>.<tag>` (base64url parts). `context` is
 * bound as additional authenticated data, so a ciphertext moved to another row fails to open.
 */
export function encrypt(key: Buffer, plaintext: string, context: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [ENVELOPE_VERSION, nonce.toString('base64url'), ciphertext.toString('base64url'), tag.toString('base64url')].join('.');
}

export function decrypt(key: Buffer, envelope: string, context: string): string {
  const [version, nonce, ciphertext, tag] = envelope.split('.');
  if (version !== ENVELOPE_VERSION || nonce === undefined || ciphertext === undefined || tag === undefined) {
    throw new Error('unrecognized ciphertext envelope');
  }
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}

export function sha256Hex(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A UUID-shaped id derived from text: the same text always gives the same id (records re-sent after a crash). */
export function uuidFromText(text: string): string {
  const hex = sha256Hex(text);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Constant-time equality of two strings (length is not secret). */
export function safeEqual(left: string, right: string): boolean {
  const a = Buffer.from(left, 'utf8');
  const b = Buffer.from(right, 'utf8');
  if (a.length !== b.length) {
    timingSafeEqual(a, a);
    return false;
  }
  return timingSafeEqual(a, b);
}

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Uniform random base62 text (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Shows the last four characters only: `••••abcd`. */
export function mask(secret: string): string {
  return `••••${secret.slice(-4)}`;
}
