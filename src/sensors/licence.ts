/**
 * Licences of a self-hosted deployment (docs/sensors.md, "Licences"): a signed document naming the
 * plan, how many sensors it allows and when it expires, delivered out of band as a file
 * (LICENSE_FILE) and verified offline — no call leaves the deployment — against the release
 * Ed25519 public key (config.licence.publicKey).
 *
 * Security posture: the signature is checked over the JCS (RFC 8785) bytes of the `licence` object
 * before any of its fields is trusted; a file that does not verify stops startup (LicenceError)
 * rather than silently running unlicensed. An expired licence does not stop the collector (the
 * dashboard and API stay up to renew it), but every ingest and registration is refused with
 * `license_expired` until a valid file replaces it; the file is read again when it changes (checked
 * at most every 10 s), so a renewal needs no restart. Signing (`signLicence`) takes the private key
 * from its caller: no private key is part of svc.
 */
import { readFileSync, statSync } from 'node:fs';
import { sign, type KeyObject } from 'node:crypto';
import { PLANS, type Plan } from '../accounts/index.ts';
import { SvcError } from '../platform/errors.ts';
import { canonicalBytes, publicKeyFromText, verifySignature } from './wire.ts';

export const LICENCE_FORMAT = 'svc.licence.v1';

export interface Licence {
  readonly id: string;
  readonly licensee: string;
  readonly plan: Plan;
  /** Sensors the deployment may register; 0 = unlimited. */
  readonly sensors: number;
  readonly issued_at: string;
  readonly expires_at: string;
}

export interface SignedLicence {
  readonly format: typeof LICENCE_FORMAT;
  readonly licence: Licence;
  /** Ed25519 over the JCS bytes of `licence`, base64url. */
  readonly signature: string;
}

export class LicenceError extends Error {
  constructor(readonly reason: 'unreadable' | 'malformed' | 'signature' | 'fields', message: string) {
    super(message);
    this.name = 'LicenceError';
  }
}

/** Signs a licence (the release tool's job; tests use the documented dev key pair). */
export function signLicence(licence: Licence, privateKey: KeyObject): SignedLicence {
  return { format: LICENCE_FORMAT, licence, signature: sign(null, canonicalBytes(licence), privateKey).toString('base64url') };
}

/** Verifies a licence document against the release public key; throws LicenceError naming what is wrong. */
export function verifyLicence(text: string, publicKeyText: string): Licence {
  const publicKey = publicKeyFromText(publicKeyText);
  if (publicKey === null) throw new LicenceError('malformed', 'the licence public key is not a raw Ed25519 key in base64url');
  let document: Partial<SignedLicence>;
  try {
    document = JSON.parse(text) as Partial<SignedLicence>;
  } catch {
    throw new LicenceError('malformed', 'the licence file is not JSON');
  }
  if (document === null || typeof document !== 'object' || document.format !== LICENCE_FORMAT || typeof document.signature !== 'string' || typeof document.licence !== 'object' || document.licence === null) {
    throw new LicenceError('malformed', `the licence file is not a ${LICENCE_FORMAT} document ({ format, licence, signature })`);
  }
  if (!verifySignature(canonicalBytes(document.licence), document.signature, publicKey)) {
    throw new LicenceError('signature', 'the licence signature does not verify against the release key');
  }
  const licence = document.licence;
  const validDate = (value: unknown) => typeof value === 'string' && !Number.isNaN(Date.parse(value));
  if (
    typeof licence.id !== 'string' ||
    typeof licence.licensee !== 'string' ||
    !(PLANS as readonly string[]).includes(licence.plan as string) ||
    !Number.isInteger(licence.sensors) ||
    licence.sensors < 0 ||
    !validDate(licence.issued_at) ||
    !validDate(licence.expires_at)
  ) {
    throw new LicenceError('fields', 'the licence is signed but its fields are not valid (id, licensee, plan, sensors, issued_at, expires_at)');
  }
  return licence;
}

export type LicenceState = { readonly state: 'none' } | { readonly state: 'valid' | 'expired'; readonly licence: Licence };

export interface LicenceGate {
  /** The licence in force and whether it is valid now. */
  current(now?: number): LicenceState;
  /** Throws `license_expired` when a licence is configured and no longer valid. */
  check(now?: number): void;
}

const RELOAD_EVERY_MS = 10_000;

/**
 * The deployment's licence from its file (read at startup, throwing LicenceError when it does not
 * verify; read again when the file changes). Without a file there is no licence: the collector
 * applies the org plans' limits.
 */
export function createLicenceGate(settings: { readonly file: string | null; readonly publicKey: string }, logger?: { warn(object: object, message: string): void }): LicenceGate {
  if (settings.file === null) {
    return { current: () => ({ state: 'none' }), check: () => undefined };
  }
  const file = settings.file;
  const read = (): Licence => {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new LicenceError('unreadable', `the licence file ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    return verifyLicence(text, settings.publicKey);
  };
  let licence = read();
  let modified = statSync(file).mtimeMs;
  let checkedAt = Date.now();
  const refresh = (now: number) => {
    if (now - checkedAt < RELOAD_EVERY_MS) return;
    checkedAt = now;
    try {
      const mtime = statSync(file).mtimeMs;
      if (mtime === modified) return;
      licence = read();
      modified = mtime;
    } catch (error) {
      // A replacement that does not verify leaves the licence in force as it was.
      logger?.warn({ reason: error instanceof LicenceError ? error.reason : 'unreadable' }, 'licence file changed but does not verify; the previous licence stays in force');
    }
  };
  const current = (now = Date.now()): LicenceState => {
    refresh(now);
    return { state: Date.parse(licence.expires_at) > now ? 'valid' : 'expired', licence };
  };
  return {
    current,
    check(now = Date.now()) {
      const state = current(now);
      if (state.state === 'expired') throw new SvcError('license_expired', { details: { expired_at: state.licence.expires_at, licence_id: state.licence.id } });
    },
  };
}
