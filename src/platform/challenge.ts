/**
 * The Challenge band of the response policy, made concrete: a proof-of-work puzzle (SHA-256 with a
 * difficulty in leading zero bits, like Anubis and mCaptcha), answered by a browser's inline
 * script or by an API client, that yields a short-lived signed clearance. Used by the protected
 * gateways (scope: the gateway, client: the IP address) and the AI gateway (scope: the org,
 * client: the credential).
 *
 * Posture: stateless and unforgeable. A challenge token is an HMAC-signed statement
 * (scope, client, id, difficulty, expiry) under a key derived from SECRET_KEY; the answer is a
 * nonce such that SHA-256(token ":" nonce) starts with `difficulty` zero bits. Each challenge id is
 * accepted once (the cache remembers used ids until they expire). The clearance is another signed
 * statement (scope, client, expiry): it is valid only for the same client and scope, for
 * CLEARANCE_TTL_MS, and lets a request of the challenge band through — never one that scores in
 * the block band. Signatures are compared in constant time. No third party is involved.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { safeEqual } from './crypto.ts';

/** The header a client presents a clearance in (the protected gateways also take a cookie). */
export const CLEARANCE_HEADER = 'x-svc-clearance';
export const CHALLENGE_TTL_MS = 5 * 60_000;
export const CLEARANCE_TTL_MS = 15 * 60_000;
export const DEFAULT_DIFFICULTY = 16;

export interface Challenge {
  readonly id: string;
  /** The signed token the client hashes and sends back. */
  readonly token: string;
  readonly algorithm: 'sha256';
  readonly difficulty: number;
  readonly expiresAt: Date;
}

interface ChallengeClaims {
  g: string;
  ip: string;
  id: string;
  d: number;
  exp: number;
}

interface ClearanceClaims {
  g: string;
  ip: string;
  exp: number;
}

export type ChallengeOutcome =
  | { ok: true; clearance: string; expiresAt: Date; challengeId: string }
  | { ok: false; reason: 'malformed' | 'signature' | 'expired' | 'client' | 'gateway' | 'work' | 'replayed' };

/**
 * `scope` is where the clearance is valid (a protected gateway's id, `ai_gateway:<org>`), `client`
 * who earned it (an IP address, `key:<id>`). A failed check names what did not match: `gateway`
 * for the scope, `client` for the client.
 */
export interface Challenges {
  issue(scope: string, client: string, now?: number): Challenge;
  /** Checks an answer; `markUsed` returns false when the id was already used. */
  verify(input: { scope: string; client: string; token: string; nonce: string; markUsed: (id: string, ttlMs: number) => Promise<boolean>; now?: number }): Promise<ChallengeOutcome>;
  /** Whether a clearance is valid for this scope and client now. */
  cleared(clearance: string, scope: string, client: string, now?: number): boolean;
}

function sign(key: Buffer, claims: object): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const signature = createHmac('sha256', key).update(payload).digest('base64url');
  return `${payload}.${signature}`;
}

function open<T>(key: Buffer, token: string): T | null {
  if (token.length > 1_024) return null;
  const dot = token.indexOf('.');
  if (dot <= 0) return null;
  const payload = token.slice(0, dot);
  const expected = createHmac('sha256', key).update(payload).digest('base64url');
  if (!safeEqual(expected, token.slice(dot + 1))) return null;
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as T;
  } catch {
    return null;
  }
}

/** Leading zero bits of a digest. */
export function leadingZeroBits(digest: Buffer): number {
  let bits = 0;
  for (const byte of digest) {
    if (byte === 0) {
      bits += 8;
      continue;
    }
    bits += Math.clz32(byte) - 24;
    break;
  }
  return bits;
}

/** Solves a challenge (tests, and a reference for client authors). */
export function solveChallenge(token: string, difficulty: number): string {
  for (let nonce = 0; ; nonce += 1) {
    if (leadingZeroBits(createHash('sha256').update(`${token}:${nonce}`).digest()) >= difficulty) return String(nonce);
  }
}

export function createChallenges(options: { key: Buffer; difficulty?: number }): Challenges {
  const challengeKey = createHmac('sha256', options.key).update('challenge').digest();
  const clearanceKey = createHmac('sha256', options.key).update('clearance').digest();
  const difficulty = options.difficulty ?? DEFAULT_DIFFICULTY;
  return {
    issue(scope, client, now = Date.now()) {
      const id = randomBytes(12).toString('base64url');
      const exp = now + CHALLENGE_TTL_MS;
      const token = sign(challengeKey, { g: scope, ip: client, id, d: difficulty, exp } satisfies ChallengeClaims);
      return { id, token, algorithm: 'sha256', difficulty, expiresAt: new Date(exp) };
    },
    async verify({ scope, client, token, nonce, markUsed, now = Date.now() }) {
      if (!/^\d{1,16}$/.test(nonce)) return { ok: false, reason: 'malformed' };
      const claims = open<ChallengeClaims>(challengeKey, token);
      if (claims === null || typeof claims.exp !== 'number' || typeof claims.d !== 'number') return { ok: false, reason: 'signature' };
      if (claims.exp <= now) return { ok: false, reason: 'expired' };
      if (claims.g !== scope) return { ok: false, reason: 'gateway' };
      if (claims.ip !== client) return { ok: false, reason: 'client' };
      if (leadingZeroBits(createHash('sha256').update(`${token}:${nonce}`).digest()) < claims.d) return { ok: false, reason: 'work' };
      if (!(await markUsed(claims.id, claims.exp - now))) return { ok: false, reason: 'replayed' };
      const exp = now + CLEARANCE_TTL_MS;
      return { ok: true, clearance: sign(clearanceKey, { g: scope, ip: client, exp } satisfies ClearanceClaims), expiresAt: new Date(exp), challengeId: claims.id };
    },
    cleared(clearance, scope, client, now = Date.now()) {
      const claims = open<ClearanceClaims>(clearanceKey, clearance);
      return claims !== null && claims.g === scope && claims.ip === client && typeof claims.exp === 'number' && claims.exp > now;
    },
  };
}
