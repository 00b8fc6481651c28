/**
 * The signed audit export bundle's format and its offline verification (no database, no
 * network): `svc compliance verify-export FILE`.
 *
 * A bundle is one JSON document `{ manifest, signature, parts }`. `manifest` lists every part
 * with the SHA-256 of its canonical JSON (RFC 8785, JCS) and the deployment's Ed25519 public
 * key; `signature` is Ed25519 over the JCS of the manifest. Verification checks the manifest's
 * signature first (a changed hash, key or part list breaks it), then each part in manifest order
 * against its hash, and names the first part that does not verify. A PDF export carries the
 * same JSON bundle verbatim (uncompressed, between BEGIN/END markers) beside its rendered pages;
 * verification reads it from there. The deployment key is derived from SECRET_KEY, so every
 * replica signs with the same key; `--public-key` pins the key expected.
 */
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import canonicalize from 'canonicalize';

export const BUNDLE_FORMAT = 'svc.ai-audit-export.v1';
export const PDF_BEGIN = '%%SVC-AUDIT-EXPORT-BEGIN\n';
export const PDF_END = '\n%%SVC-AUDIT-EXPORT-END';

export interface ManifestPart {
  name: string;
  sha256: string;
  media_type: 'application/json';
}

export interface Manifest {
  format: typeof BUNDLE_FORMAT;
  framework: string;
  org_id: string;
  generated_at: string;
  deployment_key: { algorithm: 'Ed25519'; public_key: string; key_id: string };
  parts: ManifestPart[];
}

export interface Bundle {
  manifest: Manifest;
  signature: string;
  parts: Record<string, unknown>;
}

export interface DeploymentKey {
  privateKey: KeyObject;
  publicKey: string;
  keyId: string;
}

const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The deployment's Ed25519 key from a 32-byte seed (derived from SECRET_KEY by the caller). */
export function deploymentKey(seed: Buffer): DeploymentKey {
  if (seed.length !== 32) throw new Error('an Ed25519 seed is 32 bytes');
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const raw = createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(-32);
  return { privateKey, publicKey: raw.toString('base64'), keyId: createHash('sha256').update(raw).digest('hex').slice(0, 16) };
}

export function canonical(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('value cannot be canonicalized');
  return text;
}

export const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

export function signBundle(key: DeploymentKey, header: Omit<Manifest, 'format' | 'deployment_key' | 'parts'>, parts: Array<[string, unknown]>): Bundle {
  const manifest: Manifest = {
    format: BUNDLE_FORMAT,
    ...header,
    deployment_key: { algorithm: 'Ed25519', public_key: key.publicKey, key_id: key.keyId },
    parts: parts.map(([name, value]) => ({ name, sha256: sha256(canonical(value)), media_type: 'application/json' })),
  };
  const signature = sign(null, Buffer.from(canonical(manifest), 'utf8'), key.privateKey).toString('base64');
  return { manifest, signature, parts: Object.fromEntries(parts) };
}

export interface ExportVerification {
  ok: boolean;
  container: 'json' | 'pdf';
  framework: string | null;
  org_id: string | null;
  key_id: string | null;
  key_pinned: boolean;
  checked: number;
  parts: Array<{ name: string; ok: boolean }>;
  first_bad: { part: string; reason: string } | null;
}

function fail(result: Omit<ExportVerification, 'ok' | 'first_bad'>, part: string, reason: string): ExportVerification {
  return { ...result, ok: false, first_bad: { part, reason } };
}

/** Verifies an export file's bytes (JSON bundle or PDF carrying one). */
export function verifyExport(bytes: Buffer, options: { publicKey?: string } = {}): ExportVerification {
  const isPdf = bytes.subarray(0, 5).toString('latin1') === '%PDF-';
  const base: Omit<ExportVerification, 'ok' | 'first_bad'> = { container: isPdf ? 'pdf' : 'json', framework: null, org_id: null, key_id: null, key_pinned: false, checked: 0, parts: [] };
  let text: string;
  if (isPdf) {
    const raw = bytes.toString('latin1');
    const begin = raw.indexOf(PDF_BEGIN);
    const end = raw.indexOf(PDF_END, begin + PDF_BEGIN.length);
    if (begin < 0 || end < 0) return fail(base, 'bundle', 'no_embedded_bundle');
    text = bytes.subarray(Buffer.byteLength(raw.slice(0, begin + PDF_BEGIN.length), 'latin1'), end).toString('utf8');
  } else {
    text = bytes.toString('utf8');
  }
  let bundle: Bundle;
  try {
    bundle = JSON.parse(text) as Bundle;
  } catch {
    return fail(base, 'bundle', 'not_json');
  }
  const manifest = bundle?.manifest;
  if (typeof bundle !== 'object' || bundle === null || typeof manifest !== 'object' || manifest === null || !Array.isArray(manifest.parts) || typeof bundle.signature !== 'string' || typeof bundle.parts !== 'object' || bundle.parts === null) {
    return fail(base, 'manifest', 'malformed');
  }
  const described = { ...base, framework: typeof manifest.framework === 'string' ? manifest.framework : null, org_id: typeof manifest.org_id === 'string' ? manifest.org_id : null, key_id: manifest.deployment_key?.key_id ?? null };
  if (manifest.format !== BUNDLE_FORMAT || manifest.deployment_key?.algorithm !== 'Ed25519' || typeof manifest.deployment_key.public_key !== 'string') return fail(described, 'manifest', 'unsupported_format');
  const publicRaw = Buffer.from(manifest.deployment_key.public_key, 'base64');
  if (publicRaw.length !== 32) return fail(described, 'manifest', 'public_key_invalid');
  const pinned = options.publicKey !== undefined;
  if (pinned && Buffer.from(options.publicKey!, 'base64').toString('base64') !== publicRaw.toString('base64')) return fail({ ...described, key_pinned: true }, 'manifest', 'public_key_not_pinned_key');
  const publicKey = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), publicRaw]), format: 'der', type: 'spki' });
  let signatureOk = false;
  try {
    signatureOk = verify(null, Buffer.from(canonical(manifest), 'utf8'), publicKey, Buffer.from(bundle.signature, 'base64'));
  } catch {
    signatureOk = false;
  }
  const checkedBase = { ...described, key_pinned: pinned };
  if (!signatureOk) return fail(checkedBase, 'manifest', 'signature_invalid');
  const results: Array<{ name: string; ok: boolean }> = [];
  const listed = new Set<string>();
  for (const part of manifest.parts) {
    listed.add(part.name);
    const present = Object.prototype.hasOwnProperty.call(bundle.parts, part.name);
    const ok = present && sha256(canonical(bundle.parts[part.name])) === part.sha256;
    results.push({ name: part.name, ok });
    if (!ok) return fail({ ...checkedBase, checked: results.length, parts: results }, part.name, present ? 'sha256_mismatch' : 'missing');
  }
  const unlisted = Object.keys(bundle.parts).find((name) => !listed.has(name));
  if (unlisted !== undefined) return fail({ ...checkedBase, checked: results.length, parts: results }, unlisted, 'not_in_manifest');
  return { ...checkedBase, ok: true, checked: results.length, parts: results, first_bad: null };
}
