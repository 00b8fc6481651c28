/**
 * Pattern packs (spec: Versioning 4; Limits, "pattern pack check weekly; critical updates checked
 * daily"; Self-hosted topology, air-gapped deployments).
 *
 * Security posture: a pack is a signed bundle — `{ signature, signed: { manifest, patterns } }` —
 * and nothing of `signed` is interpreted before its Ed25519 signature verifies, against one of the
 * release signing keys the sensor trusts, over the JCS (RFC 8785) bytes of `signed`. Only then are
 * its manifest and patterns checked (shape, semver rules, the sensor's pins), compiled and
 * analysed for ReDoS (a super-linear pattern refuses the pack); a pack that fails any check
 * changes nothing. A pack older than or equal to the one loaded is refused,
 * so an old signed pack cannot be replayed to take patterns away. Packs are read from a file or a
 * directory (air-gapped), or fetched by a caller-supplied function where the deployment allows
 * outbound calls; this module makes no network call of its own.
 *
 * Semver rules: a routine pack keeps the major, raises the version and is additive (no pattern id
 * of the loaded pack disappears); a critical pack keeps the major and raises the version, may
 * remove patterns (a pattern that misfires), and is applied as soon as a check finds it; a major
 * pack raises the major, names the sensor version it needs (a sensor minor bump) and carries a
 * changelog note of its breaking changes. The sensor's `sensor.yaml` pins a minimum and maximum
 * pack version; a pack outside them is refused.
 */
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import canonicalize from 'canonicalize';
import semver from 'semver';
import { parse as parseYaml } from 'yaml';
import { CATALOGUE, compileCatalogue, regularExpressionsOf, superLinearPatterns, type CatalogueEntry } from '../detection/index.ts';
import { sha256Hex } from '../platform/crypto.ts';

/** The version of svc's own catalogue as the first pack. */
export const BUILT_IN_PACK_VERSION = '1.0.0';
export const PACK_NAME = 'svc-patterns';
/** Spec, Limits: routine packs are checked weekly, critical ones daily. */
export const ROUTINE_CHECK_MS = 7 * 24 * 60 * 60_000;
export const CRITICAL_CHECK_MS = 24 * 60 * 60_000;
/** A pack file larger than this is refused unread. */
export const MAX_PACK_BYTES = 16 * 1024 * 1024;
export const PACK_FILE_SUFFIX = '.pack.json';

export type PackErrorCode =
  | 'PACK_MALFORMED'
  | 'PACK_TOO_LARGE'
  | 'PACK_KEY_UNKNOWN'
  | 'PACK_SIGNATURE_INVALID'
  | 'PACK_NOT_NEWER'
  | 'PACK_KIND_MISMATCH'
  | 'PACK_NOT_ADDITIVE'
  | 'PACK_PIN_OUTSIDE'
  | 'PACK_NEEDS_SENSOR_UPGRADE'
  | 'PACK_PATTERNS_INVALID'
  | 'PACK_PATTERN_SUPERLINEAR'
  | 'SENSOR_CONFIG_INVALID';

/** A refused pack or configuration; `code` is stable. */
export class PackError extends Error {
  constructor(readonly code: PackErrorCode, message: string) {
    super(message);
    this.name = 'PackError';
  }
}

const PatternSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 128 }),
  name: Type.String({ minLength: 1, maxLength: 256 }),
  category: Type.String({ minLength: 1, maxLength: 64 }),
  weight: Type.Number({ exclusiveMinimum: 0, maximum: 1 }),
  pattern: Type.String({ minLength: 1, maxLength: 65_536 }),
  keywords: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { minItems: 1 }),
  kinds: Type.Array(Type.Union([Type.Literal('prompt'), Type.Literal('tool_output'), Type.Literal('http')]), { minItems: 1 }),
  examples: Type.Array(Type.String()),
}, { additionalProperties: false });

const ManifestSchema = Type.Object({
  format: Type.Literal(1),
  name: Type.String({ minLength: 1, maxLength: 128 }),
  version: Type.String({ minLength: 5, maxLength: 64 }),
  kind: Type.Union([Type.Literal('routine'), Type.Literal('critical'), Type.Literal('major')]),
  created_at: Type.String(),
  /** Major packs: the sensor version they need (a sensor minor bump). */
  min_sensor_version: Type.Optional(Type.String({ minLength: 5, maxLength: 64 })),
  /** Major packs: the breaking schema changes. */
  changelog: Type.Optional(Type.String({ maxLength: 65_536 })),
}, { additionalProperties: false });

const SignedSchema = Type.Object({ manifest: ManifestSchema, patterns: Type.Array(PatternSchema) }, { additionalProperties: false });

export type PackManifest = Static<typeof ManifestSchema>;
export type PackKind = PackManifest['kind'];

export interface PatternPack {
  readonly manifest: PackManifest;
  readonly patterns: readonly CatalogueEntry[];
  /** The release key that signed it (hex SHA-256 of its raw public key, first 16 characters). */
  readonly keyId: string;
}

/** The id a release key is named by in a pack's signature. */
export function releaseKeyId(publicKey: KeyObject | string): string {
  const key = typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey;
  return sha256Hex(key.export({ format: 'der', type: 'spki' })).slice(0, 16);
}

function jcs(value: unknown): Buffer {
  const text = canonicalize(value);
  if (text === undefined) throw new PackError('PACK_MALFORMED', 'The pack cannot be canonicalized.');
  return Buffer.from(text, 'utf8');
}

/** Builds and signs a pack (the release process; tests sign with a key of their own). */
export function signPack(input: { manifest: PackManifest; patterns: readonly CatalogueEntry[] }, privateKeyPem: string): Buffer {
  const privateKey = createPrivateKey(privateKeyPem);
  const signed = { manifest: input.manifest, patterns: input.patterns };
  const signature = sign(null, jcs(signed), privateKey);
  const keyId = releaseKeyId(createPublicKey(privateKey));
  return Buffer.from(`${JSON.stringify({ signature: { alg: 'Ed25519', key_id: keyId, value: signature.toString('base64') }, signed }, null, 1)}\n`, 'utf8');
}

/**
 * Verifies a pack's signature against the trusted release keys, then its shape. Throws a PackError;
 * reads nothing of the signed part before the signature verifies.
 */
export function verifyPack(bytes: Uint8Array, trustedKeys: readonly (KeyObject | string)[]): PatternPack {
  if (bytes.length > MAX_PACK_BYTES) throw new PackError('PACK_TOO_LARGE', `A pack is at most ${MAX_PACK_BYTES} bytes.`);
  let document: unknown;
  try {
    document = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw new PackError('PACK_MALFORMED', 'The pack is not JSON.');
  }
  const envelope = document as { signature?: { alg?: unknown; key_id?: unknown; value?: unknown }; signed?: unknown } | null;
  const signature = envelope?.signature;
  if (typeof envelope !== 'object' || envelope === null || typeof signature !== 'object' || signature === null || signature.alg !== 'Ed25519' || typeof signature.key_id !== 'string' || typeof signature.value !== 'string' || typeof envelope.signed !== 'object' || envelope.signed === null) {
    throw new PackError('PACK_MALFORMED', 'A pack is {"signature": {"alg": "Ed25519", "key_id", "value"}, "signed": {…}}.');
  }
  const keys = trustedKeys.map((key) => (typeof key === 'string' ? createPublicKey(key) : key));
  const key = keys.find((candidate) => releaseKeyId(candidate) === signature.key_id);
  if (key === undefined) throw new PackError('PACK_KEY_UNKNOWN', `The pack is signed by key ${signature.key_id}, which is not a trusted release key.`);
  const value = Buffer.from(signature.value, 'base64');
  if (value.length !== 64 || !verify(null, jcs(envelope.signed), key, value)) throw new PackError('PACK_SIGNATURE_INVALID', 'The pack\'s signature does not verify against its release key.');
  if (!Value.Check(SignedSchema, envelope.signed)) {
    const first = Value.Errors(SignedSchema, envelope.signed).First();
    throw new PackError('PACK_MALFORMED', `The signed pack does not have the pack shape${first === undefined ? '' : ` (${first.path || '/'}: ${first.message})`}.`);
  }
  const signed = envelope.signed;
  if (semver.valid(signed.manifest.version) === null) throw new PackError('PACK_MALFORMED', 'manifest.version is not a semantic version.');
  return { manifest: signed.manifest, patterns: signed.patterns as unknown as CatalogueEntry[], keyId: signature.key_id };
}

// ---------------------------------------------------------------------------------------------
// sensor.yaml

const SensorFileSchema = Type.Object({
  packs: Type.Optional(Type.Object({
    min_version: Type.Optional(Type.String()),
    max_version: Type.Optional(Type.String()),
    /** Air-gapped: a pack file or a directory of *.pack.json files. */
    path: Type.Optional(Type.String({ minLength: 1 })),
    /** Where the deployment may call out: the update source (fetched by the caller's function). */
    url: Type.Optional(Type.String({ minLength: 1 })),
  }, { additionalProperties: false })),
  telemetry: Type.Optional(Type.Boolean()),
}, { additionalProperties: false });

export interface SensorPackSettings {
  readonly minVersion: string | null;
  readonly maxVersion: string | null;
  readonly path: string | null;
  readonly url: string | null;
  /** Opt-in; false unless sensor.yaml says `telemetry: true`. */
  readonly telemetry: boolean;
}

/** Reads the pack part of a sensor.yaml (text). Every bad field is named in one error. */
export function parseSensorYaml(text: string): SensorPackSettings {
  let document: unknown;
  try {
    document = parseYaml(text) ?? {};
  } catch (error) {
    throw new PackError('SENSOR_CONFIG_INVALID', `sensor.yaml is not YAML: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!Value.Check(SensorFileSchema, document)) {
    const problems = [...Value.Errors(SensorFileSchema, document)].map((error) => `${error.path || '/'}: ${error.message}`);
    throw new PackError('SENSOR_CONFIG_INVALID', `sensor.yaml: ${problems.join('; ')}`);
  }
  const packs = document.packs ?? {};
  const bad = (['min_version', 'max_version'] as const).filter((field) => packs[field] !== undefined && semver.valid(packs[field]) === null);
  if (bad.length > 0) throw new PackError('SENSOR_CONFIG_INVALID', `sensor.yaml: packs.${bad.join(', packs.')} must be a semantic version (1.2.0).`);
  if (packs.min_version !== undefined && packs.max_version !== undefined && semver.gt(packs.min_version, packs.max_version)) {
    throw new PackError('SENSOR_CONFIG_INVALID', 'sensor.yaml: packs.min_version is above packs.max_version.');
  }
  return { minVersion: packs.min_version ?? null, maxVersion: packs.max_version ?? null, path: packs.path ?? null, url: packs.url ?? null, telemetry: document.telemetry ?? false };
}

// ---------------------------------------------------------------------------------------------
// Loading into the running engine

/** What a loader needs of the detection engine: detection's `DetectionEngine` satisfies it. */
export interface CatalogueTarget {
  replaceCatalogue(entries: readonly CatalogueEntry[]): void;
}

export interface LoadedPack {
  readonly version: string;
  readonly kind: PackKind | 'built-in';
  readonly patterns: number;
  readonly keyId: string | null;
}

export interface PackLoader {
  /** The pack in use (svc's own catalogue, version BUILT_IN_PACK_VERSION, until another is loaded). */
  readonly current: LoadedPack;
  /** Checks a pack against the rules without loading it: the verified pack, or a PackError. */
  check(bytes: Uint8Array): Promise<PatternPack>;
  /** Verifies, checks and swaps the pack into the engine (no restart). Throws a PackError; nothing changes then. */
  load(bytes: Uint8Array): Promise<LoadedPack>;
}

/**
 * Regular expressions of svc's own catalogue: the catalogue's test has found them linear-time, so
 * a pack that carries them unchanged is not analysed for them again; nor for one found safe by an
 * earlier check in this process.
 */
const linearExpressions = new Set(CATALOGUE.flatMap((entry) => regularExpressionsOf(entry.pattern)));

export interface PackLoaderOptions {
  readonly engine: CatalogueTarget;
  readonly trustedKeys: readonly (KeyObject | string)[];
  /** The sensor's own version (package.json). */
  readonly sensorVersion: string;
  readonly settings?: Pick<SensorPackSettings, 'minVersion' | 'maxVersion'>;
}

export function createPackLoader(options: PackLoaderOptions): PackLoader {
  let current: LoadedPack = { version: BUILT_IN_PACK_VERSION, kind: 'built-in', patterns: CATALOGUE.length, keyId: null };
  let currentIds = new Set(CATALOGUE.map((entry) => entry.id));
  const minVersion = options.settings?.minVersion ?? null;
  const maxVersion = options.settings?.maxVersion ?? null;

  const requireNewer = (version: string) => {
    if (!semver.gt(version, current.version)) throw new PackError('PACK_NOT_NEWER', `Pack ${version} is not newer than the loaded pack ${current.version}.`);
  };

  async function check(bytes: Uint8Array): Promise<PatternPack> {
    const pack = verifyPack(bytes, options.trustedKeys);
    const { version, kind } = pack.manifest;
    requireNewer(version);
    if ((minVersion !== null && semver.lt(version, minVersion)) || (maxVersion !== null && semver.gt(version, maxVersion))) {
      throw new PackError('PACK_PIN_OUTSIDE', `Pack ${version} is outside the versions sensor.yaml pins (${minVersion ?? 'any'} to ${maxVersion ?? 'any'}).`);
    }
    const majorBump = semver.major(version) > semver.major(current.version);
    if (majorBump !== (kind === 'major')) {
      throw new PackError('PACK_KIND_MISMATCH', majorBump ? `Pack ${version} raises the major version but is marked ${kind}.` : `A major pack must raise the major version (loaded: ${current.version}).`);
    }
    if (kind === 'routine') {
      const missing = [...currentIds].filter((id) => !pack.patterns.some((pattern) => pattern.id === id));
      if (missing.length > 0) throw new PackError('PACK_NOT_ADDITIVE', `A routine pack only adds patterns; this one removes ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}.`);
    }
    if (kind === 'major') {
      const needed = pack.manifest.min_sensor_version;
      if (needed === undefined || semver.valid(needed) === null || (pack.manifest.changelog ?? '').trim() === '') {
        throw new PackError('PACK_MALFORMED', 'A major pack names min_sensor_version and carries a changelog note of its breaking changes.');
      }
      if (semver.lt(options.sensorVersion, needed)) throw new PackError('PACK_NEEDS_SENSOR_UPGRADE', `Pack ${version} needs sensor ${needed} or later; this sensor is ${options.sensorVersion}.`);
    }
    try {
      compileCatalogue(pack.patterns);
    } catch (error) {
      throw new PackError('PACK_PATTERNS_INVALID', `The pack's patterns do not compile: ${error instanceof Error ? error.message : String(error)}`);
    }
    // T1 runs these expressions over untrusted text: one with a super-linear worst case would let
    // a crafted request hold the sensor's thread, however validly the pack is signed. The same
    // analysis the catalogue's test runs (detection's superLinearPatterns).
    const vulnerable = await superLinearPatterns(pack.patterns, { known: (expression) => linearExpressions.has(expression), found: (expression) => linearExpressions.add(expression) });
    if (vulnerable.length > 0) {
      const named = vulnerable.slice(0, 5).map((pattern) => `${pattern.id} (${pattern.complexity})`).join(', ');
      throw new PackError('PACK_PATTERN_SUPERLINEAR', `The pack has patterns whose matching time can grow super-linearly with the input (ReDoS): ${named}${vulnerable.length > 5 ? ', …' : ''}.`);
    }
    return pack;
  }

  return {
    get current() {
      return current;
    },
    check,
    async load(bytes) {
      const pack = await check(bytes);
      // Another load may have finished while this one was being analysed.
      requireNewer(pack.manifest.version);
      options.engine.replaceCatalogue(pack.patterns);
      current = { version: pack.manifest.version, kind: pack.manifest.kind, patterns: pack.patterns.length, keyId: pack.keyId };
      currentIds = new Set(pack.patterns.map((pattern) => pattern.id));
      return current;
    },
  };
}

/**
 * Reads at most MAX_PACK_BYTES + 1 bytes of a regular file (null for anything else): a pack file
 * is untrusted until verified, so a huge one (or one growing while it is read) never lands in
 * memory whole; one byte over the limit is enough for verifyPack to refuse it (PACK_TOO_LARGE).
 */
async function readBounded(path: string): Promise<Uint8Array | null> {
  const handle = await open(path, 'r');
  try {
    const info = await handle.stat();
    if (!info.isFile()) return null;
    const buffer = Buffer.alloc(Math.min(info.size, MAX_PACK_BYTES) + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

/**
 * Every pack at a path: the file itself, or each *.pack.json file in the directory (air-gapped
 * delivery; larger than MAX_PACK_BYTES or not a regular file: skipped). No file is read past the
 * limit: a single oversized file comes back cut at one byte over it, so the check refuses it as
 * PACK_TOO_LARGE.
 */
export async function readPackFiles(path: string): Promise<Uint8Array[]> {
  const info = await stat(path);
  if (!info.isDirectory()) {
    const bytes = await readBounded(path);
    return bytes === null ? [] : [bytes];
  }
  const names = (await readdir(path)).filter((name) => name.endsWith(PACK_FILE_SUFFIX)).sort();
  const out: Uint8Array[] = [];
  for (const name of names) {
    const bytes = await readBounded(join(path, name));
    if (bytes === null || bytes.length > MAX_PACK_BYTES) continue;
    out.push(bytes);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The update checks

export interface PackCheckResult {
  readonly scope: 'routine' | 'critical';
  readonly loaded: LoadedPack | null;
  /** Packs seen and refused, with the reason (the newest first). */
  readonly refused: readonly { version: string | null; code: PackErrorCode }[];
}

export interface PackUpdaterOptions {
  readonly loader: PackLoader;
  /** Where packs come from: a path (air-gapped), or the caller's fetch of `settings.url` (only where calls out are allowed). */
  readonly source: () => Promise<readonly Uint8Array[]>;
  readonly onResult?: (result: PackCheckResult) => void;
  readonly onError?: (error: unknown) => void;
  readonly routineEveryMs?: number;
  readonly criticalEveryMs?: number;
}

export interface PackUpdater {
  /** Runs one check now: 'critical' considers critical packs only; 'routine' every kind. */
  check(scope: 'routine' | 'critical'): Promise<PackCheckResult>;
  /** Runs a routine check now (boot), then starts the weekly routine check and the daily critical check (timers, unref'd). */
  start(): void;
  stop(): void;
}

/** The weekly and daily checks. Timers are global ones, so a fake clock (vi.useFakeTimers) drives them in tests. */
export function createPackUpdater(options: PackUpdaterOptions): PackUpdater {
  const timers: ReturnType<typeof setInterval>[] = [];
  let running: Promise<PackCheckResult> | null = null;

  async function runCheck(scope: 'routine' | 'critical'): Promise<PackCheckResult> {
    const candidates: { pack: PatternPack | null; bytes: Uint8Array; error: PackError | null }[] = [];
    for (const bytes of await options.source()) {
      try {
        candidates.push({ pack: await options.loader.check(bytes), bytes, error: null });
      } catch (error) {
        if (!(error instanceof PackError)) throw error;
        candidates.push({ pack: null, bytes, error });
      }
    }
    // A refused pack's version is what its file claims (it may not be signed): for the report only.
    const refused = candidates.flatMap((candidate): { version: string | null; code: PackErrorCode }[] => {
      if (candidate.error === null || candidate.error.code === 'PACK_NOT_NEWER') return [];
      let version: string | null = null;
      try {
        const claimed = (JSON.parse(Buffer.from(candidate.bytes).toString('utf8')) as { signed?: { manifest?: { version?: unknown } } }).signed?.manifest?.version;
        version = typeof claimed === 'string' ? claimed : null;
      } catch {
        version = null;
      }
      return [{ version, code: candidate.error.code }];
    });
    // The newest acceptable pack of the scope; packs build on each other, so it carries the earlier ones' patterns.
    const eligible = candidates
      .filter((candidate): candidate is { pack: PatternPack; bytes: Uint8Array; error: null } => candidate.pack !== null && (scope === 'routine' || candidate.pack.manifest.kind === 'critical'))
      .sort((left, right) => semver.rcompare(left.pack.manifest.version, right.pack.manifest.version));
    let loaded: LoadedPack | null = null;
    for (const candidate of eligible) {
      try {
        loaded = await options.loader.load(candidate.bytes);
        break;
      } catch (error) {
        if (!(error instanceof PackError)) throw error;
        refused.push({ version: candidate.pack.manifest.version, code: error.code });
      }
    }
    const result: PackCheckResult = { scope, loaded, refused };
    options.onResult?.(result);
    return result;
  }

  function check(scope: 'routine' | 'critical'): Promise<PackCheckResult> {
    // One check at a time; a check asked for while one runs waits for it, then runs.
    const previous = running ?? Promise.resolve(null);
    const next = previous.catch(() => null).then(() => runCheck(scope));
    running = next;
    void next.catch(() => undefined).finally(() => {
      if (running === next) running = null;
    });
    return next;
  }

  const tick = (scope: 'routine' | 'critical') => (): void => {
    check(scope).catch((error: unknown) => options.onError?.(error));
  };

  return {
    check,
    start() {
      if (timers.length > 0) return;
      tick('routine')();
      timers.push(setInterval(tick('routine'), options.routineEveryMs ?? ROUTINE_CHECK_MS), setInterval(tick('critical'), options.criticalEveryMs ?? CRITICAL_CHECK_MS));
      for (const timer of timers) timer.unref();
    },
    stop() {
      for (const timer of timers.splice(0)) clearInterval(timer);
    },
  };
}

/** The pack of svc's own catalogue (what scripts/build-pattern-pack.ts writes). */
export function builtInPack(privateKeyPem: string, version: string = BUILT_IN_PACK_VERSION, now: Date = new Date()): Buffer {
  return signPack({ manifest: { format: 1, name: PACK_NAME, version, kind: 'routine', created_at: now.toISOString() }, patterns: CATALOGUE }, privateKeyPem);
}
