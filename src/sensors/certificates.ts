/**
 * The collector's certificate authority and the sensor's side of mutual TLS (spec: Authentication
 * 5, Limits "sensor certificate lifetime 24 hours").
 *
 * Security posture: the CA is kept either in shared storage (the collector's database, so replicas
 * share it: collector/ca-store.ts, the key encrypted with API_ENCRYPTION_KEY) or in a CA directory
 * (mode 0700), where the key is written with mode 0600, refused at load when group or others can
 * read it, and encrypted at rest (PKCS#8, AES-256-CBC) whenever a passphrase is given. A sensor enrols once with a one-time
 * token (random 256 bits, stored only as its SHA-256, single use, expiring) and a PKCS#10 request
 * that proves it holds its Ed25519 key; the CA — not the request — chooses the subject (the
 * sensor id the token was issued for). Certificates live 24 hours; a sensor renews with a request
 * for the SAME key its current, unexpired, unrevoked certificate names (a certificate is public,
 * so renewal must not let its holder swap keys). The TLS options this module builds for the
 * collector require a client certificate from this CA and carry the CA's revocation list, so an
 * expired, unknown or revoked certificate fails in the handshake, before any request is read.
 * Certificates are issued with @peculiar/x509 and checked with node:crypto / node:tls.
 */
import 'reflect-metadata';
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, randomUUID, webcrypto, X509Certificate, type KeyObject } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { SecureContextOptions, TlsOptions, ConnectionOptions, Server as TlsServer } from 'node:tls';
import * as x509 from '@peculiar/x509';
import { randomBase62, sha256Hex } from '../platform/crypto.ts';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
type CryptoKey = webcrypto.CryptoKey;

/** Spec, Limits: a sensor certificate is valid for 24 hours. */
export const SENSOR_CERTIFICATE_LIFETIME_MS = 24 * 60 * 60_000;
/** A sensor renews once two thirds of its certificate's life have passed (16 h of 24 h). */
export const RENEW_AT_FRACTION = 2 / 3;
/** An enrolment token is good for one enrolment within this time (default; configurable per token). */
export const ENROLMENT_TOKEN_TTL_MS = 24 * 60 * 60_000;
/** The collector's own server certificate (issued by the same CA). */
export const SERVER_CERTIFICATE_LIFETIME_MS = 30 * 24 * 60 * 60_000;
/** notBefore is backdated by this much so that a sensor whose clock is a little behind accepts it. */
const BACKDATE_MS = 5 * 60_000;
/** The revocation list is re-signed with this validity; the collector re-applies it well before (CRL_REFRESH_MS). */
const CRL_VALIDITY_MS = 48 * 60 * 60_000;
export const CRL_REFRESH_MS = 6 * 60 * 60_000;
const CA_LIFETIME_MS = 10 * 365 * 24 * 60 * 60_000;

const ED25519 = { name: 'Ed25519' } as const;
const SENSOR_URI_PREFIX = 'urn:svc:sensor:';

export type CertificateErrorCode =
  | 'ENROLMENT_TOKEN_INVALID'
  | 'ENROLMENT_TOKEN_EXPIRED'
  | 'ENROLMENT_TOKEN_USED'
  | 'CERTIFICATE_REQUEST_INVALID'
  | 'CERTIFICATE_UNKNOWN'
  | 'CERTIFICATE_EXPIRED'
  | 'CERTIFICATE_REVOKED'
  | 'RENEWAL_KEY_MISMATCH'
  | 'CA_KEY_EXPOSED'
  | 'CA_KEY_LOCKED';

/** A refusal by the CA; `code` is stable (the collector's routes map it to an HTTP answer). */
export class CertificateError extends Error {
  constructor(readonly code: CertificateErrorCode, message: string) {
    super(message);
    this.name = 'CertificateError';
  }
}

export interface IssuedCertificate {
  readonly sensorId: string;
  /** Lower-case hexadecimal, as node:crypto's X509Certificate.serialNumber prints it (upper case there). */
  readonly serialNumber: string;
  readonly certificatePem: string;
  /** The CA certificate the sensor must trust for the collector's server certificate. */
  readonly caCertificatePem: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
}

export interface IssuedRecord {
  readonly sensorId: string;
  readonly serialNumber: string;
  readonly notAfter: string;
  readonly revokedAt: string | null;
}

export interface CertificateAuthority {
  readonly certificatePem: string;
  /** A one-time enrolment token for a sensor id (a new UUID when none is given). Only the hash is kept. */
  issueEnrolmentToken(options?: { sensorId?: string; ttlMs?: number }): Promise<{ token: string; sensorId: string; expiresAt: Date }>;
  /** Spends the token and issues a 24-hour certificate for the request's Ed25519 key. */
  enrol(token: string, requestPem: string): Promise<IssuedCertificate>;
  /** A new 24-hour certificate for the same sensor and key; the current one must be valid. */
  renew(currentCertificatePem: string, requestPem: string): Promise<IssuedCertificate>;
  /** Revokes one certificate (by serial) or every unexpired certificate of a sensor (by id). Returns the serials revoked. */
  revoke(target: { serialNumber: string } | { sensorId: string }): Promise<string[]>;
  /** The signed revocation list (PEM), valid for 48 hours from now. */
  revocationListPem(): Promise<string>;
  /** Issued certificates not yet expired (for the sensor registry: certificate expiry). */
  certificates(): readonly IssuedRecord[];
  /** A server certificate for the collector's listener, for these DNS names and IP addresses. */
  issueServerCertificate(hosts: readonly string[]): Promise<{ certificatePem: string; keyPem: string; notAfter: Date }>;
  /**
   * Options for the collector's TLS (or HTTPS) server: TLS 1.3, a client certificate from this CA
   * required, the revocation list applied — refusals happen in the handshake.
   */
  serverOptions(server: { certificatePem: string; keyPem: string }): Promise<TlsOptions & { requestCert: true; rejectUnauthorized: true }>;
  /**
   * Keeps a listening server's revocation list current: applies it now, after every revocation and
   * every CRL_REFRESH_MS. Returns a function that stops it.
   */
  bindServer(target: Pick<TlsServer, 'setSecureContext'>, server: { certificatePem: string; keyPem: string }): Promise<() => void>;
  /** Checks a presented certificate as the handshake does (issuer, validity, revocation): the sensor id, or a CertificateError. */
  identify(certificate: string | Buffer): string;
}

/**
 * Storage every collector replica shares (the database: collector/ca-store.ts): the CA's key pair
 * and the certificates it issued, so that replicas issue from one CA, accept each other's
 * certificates and refuse each other's revocations.
 */
export interface SharedCaStorage {
  /** The stored key pair; `create` makes one when none is stored (when replicas race, the first stored wins). */
  keyPair(create: () => Promise<{ keyPem: string; certificatePem: string }>): Promise<{ keyPem: string; certificatePem: string }>;
  recordIssued(record: IssuedRecord): Promise<void>;
  /** Marks unexpired, unrevoked certificates revoked; returns their serials. */
  revoke(target: { serialNumber: string } | { sensorId: string }, at: string): Promise<string[]>;
  /** Certificates not yet expired, revoked or not. */
  issued(): Promise<IssuedRecord[]>;
}

/** With shared storage, a replica re-reads the revocations of the others this often (and on its own at once). */
export const SHARED_CRL_REFRESH_MS = 30_000;

export interface CertificateAuthorityOptions {
  /**
   * Directory holding the CA (created with mode 0700). Load an operator-provided CA by placing
   * ca-key.pem and ca-cert.pem there. With `shared`, only read: an operator-provided CA found there
   * is imported into the shared storage when it holds none yet.
   */
  readonly dir?: string;
  /** Storage shared by collector replicas; the CA then keeps nothing on disk. */
  readonly shared?: SharedCaStorage;
  /** Encrypts the CA key at rest (PKCS#8, AES-256-CBC). Without it the key is protected by mode 0600 only. */
  readonly passphrase?: string;
  readonly commonName?: string;
  /** Clock in milliseconds (tests issue certificates in the past with it). */
  readonly now?: () => number;
}

interface TokenRecord {
  readonly hash: string;
  readonly sensorId: string;
  readonly expiresAt: string;
  usedAt: string | null;
}

interface State {
  tokens: TokenRecord[];
  issued: IssuedRecord[];
}

const KEY_FILE = 'ca-key.pem';
const CERT_FILE = 'ca-cert.pem';
const STATE_FILE = 'state.json';

/** Writes a file readable by its owner only (0600), fsync'd, replacing the old one in one rename. */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  const handle = await open(temporary, 'w', 0o600);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, path);
  // A temporary file left by a crash keeps its mode when reopened: the result is 0600 whatever it was.
  await chmod(path, 0o600);
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Serial numbers compared as lower-case hexadecimal without leading zeros. */
function normalSerial(serial: string): string {
  return serial.toLowerCase().replace(/^0+(?=.)/, '');
}

function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}

async function importSigningKey(key: KeyObject): Promise<CryptoKey> {
  return webcrypto.subtle.importKey('pkcs8', key.export({ format: 'der', type: 'pkcs8' }), ED25519, false, ['sign']) as Promise<CryptoKey>;
}

async function importPublicKey(key: KeyObject): Promise<CryptoKey> {
  return webcrypto.subtle.importKey('spki', key.export({ format: 'der', type: 'spki' }), ED25519, true, ['verify']) as Promise<CryptoKey>;
}

/** RFC 5280 §5.2.3 CRL number: increases with every list; the signing time in milliseconds does. */
function crlNumber(at: number): x509.Extension {
  let hex = Math.floor(at).toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  if (Number.parseInt(hex.slice(0, 2), 16) >= 0x80) hex = `00${hex}`;
  const value = Buffer.from(hex, 'hex');
  return new x509.Extension('2.5.29.20', false, Buffer.concat([Buffer.from([0x02, value.length]), value]));
}

/** Reads and checks a PKCS#10 request: well formed, Ed25519, signed by its own key. */
async function readRequest(requestPem: string): Promise<x509.Pkcs10CertificateRequest> {
  let request: x509.Pkcs10CertificateRequest;
  try {
    request = new x509.Pkcs10CertificateRequest(requestPem);
  } catch {
    throw new CertificateError('CERTIFICATE_REQUEST_INVALID', 'The certificate request is not a PEM or DER PKCS#10 request.');
  }
  if (request.publicKey.algorithm.name !== 'Ed25519') throw new CertificateError('CERTIFICATE_REQUEST_INVALID', 'The certificate request must be for an Ed25519 key.');
  if (!(await request.verify())) throw new CertificateError('CERTIFICATE_REQUEST_INVALID', 'The certificate request is not signed by the key it names.');
  return request;
}

/**
 * The public key (SPKI, DER) a PKCS#10 request is for, once the request is checked (well formed,
 * Ed25519, signed by that key): the collector compares it with the key the sensor registers.
 */
export async function certificateRequestKey(requestPem: string): Promise<Buffer> {
  const request = await readRequest(requestPem);
  return Buffer.from(request.publicKey.rawData);
}

async function readKeyFile(keyPath: string, passphrase: string | undefined): Promise<KeyObject> {
  const mode = (await stat(keyPath)).mode & 0o777;
  if ((mode & 0o077) !== 0) throw new CertificateError('CA_KEY_EXPOSED', `${keyPath} is readable by group or others (mode ${mode.toString(8)}); chmod 600 it.`);
  try {
    return createPrivateKey({ key: await readFile(keyPath, 'utf8'), ...(passphrase === undefined ? {} : { passphrase }) });
  } catch {
    throw new CertificateError('CA_KEY_LOCKED', `${keyPath} cannot be read: it is encrypted and the passphrase is missing or wrong, or it is not a PEM private key.`);
  }
}

/** A new Ed25519 CA key and its self-signed certificate (10 years). */
async function createCaKeyPair(commonName: string, started: number): Promise<{ privateKey: KeyObject; certificatePem: string }> {
  const pair = generateKeyPairSync('ed25519');
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: `CN=${commonName}`,
    notBefore: new Date(started - BACKDATE_MS),
    notAfter: new Date(started + CA_LIFETIME_MS),
    keys: { privateKey: await importSigningKey(pair.privateKey), publicKey: await importPublicKey(pair.publicKey) },
    signingAlgorithm: ED25519,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(await importPublicKey(pair.publicKey)),
    ],
  });
  return { privateKey: pair.privateKey, certificatePem: certificate.toString('pem') };
}

/** Creates the CA in `dir` (or the shared storage) on first use, or loads it. */
export async function openCertificateAuthority(options: CertificateAuthorityOptions): Promise<CertificateAuthority> {
  const now = options.now ?? Date.now;
  const shared = options.shared;
  if (options.dir === undefined && shared === undefined) throw new TypeError('openCertificateAuthority needs a directory or shared storage');
  const dir = options.dir ?? '';
  if (shared === undefined) {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chmod(dir, 0o700);
  }
  const keyPath = join(dir, KEY_FILE);
  const certPath = join(dir, CERT_FILE);
  const statePath = join(dir, STATE_FILE);

  let caKey: KeyObject;
  let caCertificatePem: string;
  if (shared !== undefined) {
    const pair = await shared.keyPair(async () => {
      if (options.dir !== undefined && (await exists(keyPath))) {
        const imported = await readKeyFile(keyPath, options.passphrase);
        return { keyPem: imported.export({ format: 'pem', type: 'pkcs8' }).toString(), certificatePem: await readFile(certPath, 'utf8') };
      }
      const created = await createCaKeyPair(options.commonName ?? 'svc sensor CA', now());
      return { keyPem: created.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), certificatePem: created.certificatePem };
    });
    try {
      caKey = createPrivateKey(pair.keyPem);
    } catch {
      throw new CertificateError('CA_KEY_LOCKED', 'The stored CA key is not a PEM private key.');
    }
    caCertificatePem = pair.certificatePem;
  } else if (await exists(keyPath)) {
    caKey = await readKeyFile(keyPath, options.passphrase);
    caCertificatePem = await readFile(certPath, 'utf8');
  } else {
    const pair = await createCaKeyPair(options.commonName ?? 'svc sensor CA', now());
    caKey = pair.privateKey;
    caCertificatePem = pair.certificatePem;
    const keyPem = options.passphrase === undefined
      ? pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()
      : pair.privateKey.export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: options.passphrase }).toString();
    await writeFileAtomic(certPath, caCertificatePem);
    await writeFileAtomic(keyPath, keyPem);
  }
  const signingKey = await importSigningKey(caKey);
  const caCertificate = new x509.X509Certificate(caCertificatePem);
  const caNode = new X509Certificate(caCertificatePem);

  // With shared storage, tokens live in memory (the collector spends each at once) and the issued
  // certificates in the storage, mirrored here for identify() and re-read with every revocation list.
  const state: State = shared === undefined && (await exists(statePath)) ? JSON.parse(await readFile(statePath, 'utf8')) as State : { tokens: [], issued: shared === undefined ? [] : await shared.issued() };
  const save = (): Promise<void> => (shared === undefined ? writeFileAtomic(statePath, JSON.stringify(state, null, 1)) : Promise.resolve());
  // One change at a time: a token is spent (and saved) before a second request can read it.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  const revocationListeners = new Set<() => void>();

  function prune(): void {
    const at = now();
    state.issued = state.issued.filter((record) => Date.parse(record.notAfter) > at);
    state.tokens = state.tokens.filter((record) => Date.parse(record.expiresAt) > at);
  }

  async function issue(sensorId: string, publicKey: x509.PublicKey): Promise<IssuedCertificate> {
    const issuedAt = now();
    const serialNumber = normalSerial(randomSerial());
    const notBefore = new Date(issuedAt - BACKDATE_MS);
    const notAfter = new Date(issuedAt + SENSOR_CERTIFICATE_LIFETIME_MS);
    const certificate = await x509.X509CertificateGenerator.create({
      serialNumber,
      subject: `CN=${sensorId}`,
      issuer: caCertificate.subject,
      notBefore,
      notAfter,
      publicKey,
      signingKey,
      signingAlgorithm: ED25519,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
        new x509.SubjectAlternativeNameExtension([{ type: 'url', value: `${SENSOR_URI_PREFIX}${sensorId}` }]),
        await x509.AuthorityKeyIdentifierExtension.create(caCertificate, false),
      ],
    });
    prune();
    const record = { sensorId, serialNumber, notAfter: notAfter.toISOString(), revokedAt: null };
    await shared?.recordIssued(record);
    state.issued.push(record);
    await save();
    return { sensorId, serialNumber, certificatePem: certificate.toString('pem'), caCertificatePem, notBefore, notAfter };
  }

  function identify(certificate: string | Buffer): string {
    let node: X509Certificate;
    try {
      node = new X509Certificate(certificate);
    } catch {
      throw new CertificateError('CERTIFICATE_UNKNOWN', 'The certificate is not a PEM or DER X.509 certificate.');
    }
    if (!node.checkIssued(caNode) || !node.verify(caNode.publicKey)) throw new CertificateError('CERTIFICATE_UNKNOWN', 'The certificate was not issued by this collector\'s CA.');
    const at = now();
    if (Date.parse(node.validTo) <= at || Date.parse(node.validFrom) > at) throw new CertificateError('CERTIFICATE_EXPIRED', 'The certificate is outside its validity period.');
    const serialNumber = normalSerial(node.serialNumber);
    const record = state.issued.find((entry) => entry.serialNumber === serialNumber);
    if (record === undefined) {
      // Shared storage: another replica issued it since this one last read the list; the CA's signature proves it is ours.
      const uri = shared === undefined ? undefined : (node.subjectAltName ?? '').split(', ').find((name) => name.startsWith(`URI:${SENSOR_URI_PREFIX}`));
      if (uri === undefined) throw new CertificateError('CERTIFICATE_UNKNOWN', 'The certificate is not among those this CA issued.');
      return uri.slice(`URI:${SENSOR_URI_PREFIX}`.length);
    }
    if (record.revokedAt !== null) throw new CertificateError('CERTIFICATE_REVOKED', 'The certificate has been revoked.');
    return record.sensorId;
  }

  async function revocationListPem(): Promise<string> {
    if (shared !== undefined) state.issued = await shared.issued();
    prune();
    const at = now();
    const list = await x509.X509CrlGenerator.create({
      issuer: caCertificate.subject,
      thisUpdate: new Date(at - BACKDATE_MS),
      nextUpdate: new Date(at + CRL_VALIDITY_MS),
      entries: state.issued.filter((record) => record.revokedAt !== null).map((record) => ({ serialNumber: record.serialNumber, revocationDate: new Date(record.revokedAt!) })),
      extensions: [await x509.AuthorityKeyIdentifierExtension.create(caCertificate, false), crlNumber(at)],
      signingKey,
      signingAlgorithm: ED25519,
    });
    // OpenSSL (node:tls) reads only the "X509 CRL" label; the library writes "CRL".
    return x509.PemConverter.encode(list.rawData, 'X509 CRL');
  }

  async function serverOptions(server: { certificatePem: string; keyPem: string }): Promise<TlsOptions & { requestCert: true; rejectUnauthorized: true }> {
    return {
      key: server.keyPem,
      cert: server.certificatePem,
      ca: [caCertificatePem],
      crl: [await revocationListPem()],
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.3',
    };
  }

  return {
    certificatePem: caCertificatePem,
    issueEnrolmentToken: (tokenOptions = {}) => serial(async () => {
      const sensorId = tokenOptions.sensorId ?? randomUUID();
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(sensorId)) throw new CertificateError('CERTIFICATE_REQUEST_INVALID', 'A sensor id is 1–128 letters, digits, dots, hyphens or underscores.');
      const token = `svc_enrol_${randomBase62(43)}`;
      const expiresAt = new Date(now() + (tokenOptions.ttlMs ?? ENROLMENT_TOKEN_TTL_MS));
      prune();
      state.tokens.push({ hash: sha256Hex(token), sensorId, expiresAt: expiresAt.toISOString(), usedAt: null });
      await save();
      return { token, sensorId, expiresAt };
    }),
    enrol: (token, requestPem) => serial(async () => {
      // The token is 256 random bits: looking its hash up in a list leaks nothing usable by timing.
      const record = state.tokens.find((entry) => entry.hash === sha256Hex(token));
      if (record === undefined) throw new CertificateError('ENROLMENT_TOKEN_INVALID', 'The enrolment token is not one this collector issued.');
      if (record.usedAt !== null) throw new CertificateError('ENROLMENT_TOKEN_USED', 'The enrolment token has already been used; ask for a new one.');
      if (Date.parse(record.expiresAt) <= now()) throw new CertificateError('ENROLMENT_TOKEN_EXPIRED', 'The enrolment token has expired; ask for a new one.');
      const request = await readRequest(requestPem);
      record.usedAt = new Date(now()).toISOString();
      await save();
      return issue(record.sensorId, request.publicKey);
    }),
    renew: (currentCertificatePem, requestPem) => serial(async () => {
      const sensorId = identify(currentCertificatePem);
      const request = await readRequest(requestPem);
      const current = new X509Certificate(currentCertificatePem).publicKey.export({ format: 'der', type: 'spki' });
      const requested = Buffer.from(request.publicKey.rawData);
      if (!current.equals(requested)) throw new CertificateError('RENEWAL_KEY_MISMATCH', 'A renewal is for the key of the current certificate; enrol again to change keys.');
      return issue(sensorId, request.publicKey);
    }),
    revoke: (target) => serial(async () => {
      const at = new Date(now()).toISOString();
      const revoked: string[] = shared === undefined ? [] : await shared.revoke('serialNumber' in target ? { serialNumber: normalSerial(target.serialNumber) } : target, at);
      for (const record of state.issued) {
        const matches = 'serialNumber' in target ? record.serialNumber === normalSerial(target.serialNumber) : record.sensorId === target.sensorId;
        if (matches && record.revokedAt === null) {
          (record as { revokedAt: string | null }).revokedAt = at;
          if (!revoked.includes(record.serialNumber)) revoked.push(record.serialNumber);
        }
      }
      if (revoked.length > 0) {
        await save();
        for (const listener of revocationListeners) listener();
      }
      return revoked;
    }),
    revocationListPem,
    certificates: () => {
      prune();
      return state.issued.map((record) => ({ ...record }));
    },
    async issueServerCertificate(hosts) {
      const pair = generateKeyPairSync('ed25519');
      const issuedAt = now();
      const notAfter = new Date(issuedAt + SERVER_CERTIFICATE_LIFETIME_MS);
      const certificate = await x509.X509CertificateGenerator.create({
        serialNumber: randomSerial(),
        subject: `CN=${hosts[0] ?? 'svc collector'}`,
        issuer: caCertificate.subject,
        notBefore: new Date(issuedAt - BACKDATE_MS),
        notAfter,
        publicKey: await importPublicKey(pair.publicKey),
        signingKey,
        signingAlgorithm: ED25519,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
          new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
          new x509.SubjectAlternativeNameExtension(hosts.map((host) => (/^[\d.]+$|:/.test(host) ? { type: 'ip' as const, value: host } : { type: 'dns' as const, value: host }))),
        ],
      });
      return { certificatePem: certificate.toString('pem'), keyPem: pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), notAfter };
    },
    serverOptions,
    async bindServer(target, server) {
      const apply = async (): Promise<void> => target.setSecureContext(await serverOptions(server) as SecureContextOptions);
      await apply();
      const listener = (): void => void apply();
      revocationListeners.add(listener);
      const timer = setInterval(listener, shared === undefined ? CRL_REFRESH_MS : SHARED_CRL_REFRESH_MS);
      timer.unref();
      return () => {
        revocationListeners.delete(listener);
        clearInterval(timer);
      };
    },
    identify,
  };
}

// ---------------------------------------------------------------------------------------------
// The sensor's side

/** A new Ed25519 key pair for a sensor (PEM; the private key stays on the sensor, mode 0600). */
export function generateSensorKey(): { privateKeyPem: string; publicKeyPem: string } {
  const pair = generateKeyPairSync('ed25519');
  return {
    privateKeyPem: pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicKeyPem: pair.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
  };
}

/** A PKCS#10 request for the sensor's key (its signature proves the sensor holds the key). */
export async function createCertificateRequest(privateKeyPem: string): Promise<string> {
  const privateKey = createPrivateKey(privateKeyPem);
  const publicKey = createPublicKey(privateKey);
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    name: 'CN=svc sensor',
    keys: { privateKey: await importSigningKey(privateKey), publicKey: await importPublicKey(publicKey) },
    signingAlgorithm: ED25519,
  });
  return request.toString('pem');
}

/** When a certificate should be renewed: two thirds into its life (16 hours for 24). */
export function renewalTime(certificatePem: string): Date {
  const certificate = new X509Certificate(certificatePem);
  const from = Date.parse(certificate.validFrom);
  const to = Date.parse(certificate.validTo);
  return new Date(from + (to - from) * RENEW_AT_FRACTION);
}

/** True once a certificate has reached its renewal time. */
export function renewalDue(certificatePem: string, now: number = Date.now()): boolean {
  return now >= renewalTime(certificatePem).getTime();
}

/** Options for a sensor's connection to the collector: its certificate and key, and only the collector's CA trusted. */
export function sensorTlsOptions(credentials: { caCertificatePem: string; certificatePem: string; privateKeyPem: string }): ConnectionOptions {
  return { ca: [credentials.caCertificatePem], cert: credentials.certificatePem, key: credentials.privateKeyPem, minVersion: 'TLSv1.3' };
}
