import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { CATALOGUE, createDetectionEngine, type CatalogueEntry } from '../../src/detection/index.ts';
import {
  BUILT_IN_PACK_VERSION,
  CRITICAL_CHECK_MS,
  createPackLoader,
  createPackUpdater,
  MAX_PACK_BYTES,
  PackError,
  parseSensorYaml,
  readPackFiles,
  releaseKeyId,
  ROUTINE_CHECK_MS,
  signPack,
  verifyPack,
  type PackKind,
  type PackManifest,
} from '../../src/sensors/packs.ts';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-packs-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function keyPair(): { privateKeyPem: string; publicKeyPem: string } {
  const pair = generateKeyPairSync('ed25519');
  return { privateKeyPem: pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), publicKeyPem: pair.publicKey.export({ format: 'pem', type: 'spki' }).toString() };
}

const release = keyPair();

/** A pattern no built-in entry has: a made-up phrase an attacker of this test would send. */
const CANARY: CatalogueEntry = {
  id: 'pack.test-canary',
  name: 'Test canary phrase',
  category: 'prompt-injection',
  weight: 0.97,
  pattern: String.raw`\bopen the vault of marmalade\b`,
  keywords: ['marmalade'],
  kinds: ['prompt', 'tool_output'],
  examples: ['now open the vault of marmalade'],
};
const CANARY_TEXT = 'Please open the vault of marmalade and give me what is inside.';

function manifest(version: string, kind: PackKind, extra: Partial<PackManifest> = {}): PackManifest {
  return { format: 1, name: 'svc-patterns', version, kind, created_at: '2026-11-29T00:00:00.000Z', ...extra };
}

function pack(version: string, kind: PackKind, patterns: readonly CatalogueEntry[] = [...CATALOGUE, CANARY], extra: Partial<PackManifest> = {}, key = release.privateKeyPem): Buffer {
  return signPack({ manifest: manifest(version, kind, extra), patterns }, key);
}

async function codeOf(work: () => unknown): Promise<string> {
  try {
    await work();
  } catch (error) {
    if (error instanceof PackError) return error.code;
    throw error;
  }
  return 'loaded';
}

describe('pattern packs', () => {
  it('load a routine pack into the running engine without a restart, and its new pattern detects', async () => {
    const engine = createDetectionEngine();
    const before = await engine.inspect({ kind: 'prompt', content: CANARY_TEXT });
    expect(before.patterns_matched.map((pattern) => pattern.id)).not.toContain('pack.test-canary');
    expect(before.decision).not.toBe('block');

    const loader = createPackLoader({ engine, trustedKeys: [release.publicKeyPem], sensorVersion: '0.1.0' });
    expect(loader.current).toMatchObject({ version: BUILT_IN_PACK_VERSION, kind: 'built-in' });
    expect(await loader.load(pack('1.1.0', 'routine'))).toEqual({ version: '1.1.0', kind: 'routine', patterns: CATALOGUE.length + 1, keyId: releaseKeyId(release.publicKeyPem) });

    // The same engine instance, the same text (the analysis of the earlier catalogue is not reused).
    const after = await engine.inspect({ kind: 'prompt', content: CANARY_TEXT });
    expect(after.patterns_matched.map((pattern) => pattern.id)).toContain('pack.test-canary');
    expect(after.decision).toBe('block');
    expect(engine.catalogue.byId('pack.test-canary')?.name).toBe('Test canary phrase');
  });

  it('refuse a pack signed by another key, and one whose signed part was changed', async () => {
    const engine = createDetectionEngine();
    const loader = createPackLoader({ engine, trustedKeys: [release.publicKeyPem], sensorVersion: '0.1.0' });
    const stranger = keyPair();
    expect(await codeOf(() => loader.load(pack('1.1.0', 'routine', undefined, {}, stranger.privateKeyPem)))).toBe('PACK_KEY_UNKNOWN');
    // Another key claiming the release key's id: the signature does not verify.
    const forged = JSON.parse(pack('1.1.0', 'routine', undefined, {}, stranger.privateKeyPem).toString()) as { signature: { key_id: string } };
    forged.signature.key_id = releaseKeyId(release.publicKeyPem);
    expect(await codeOf(() => loader.load(Buffer.from(JSON.stringify(forged))))).toBe('PACK_SIGNATURE_INVALID');
    // A genuine pack with a pattern weakened after signing.
    const tampered = JSON.parse(pack('1.1.0', 'routine').toString()) as { signed: { patterns: { weight: number }[] } };
    tampered.signed.patterns[0]!.weight = 0.01;
    expect(await codeOf(() => loader.load(Buffer.from(JSON.stringify(tampered))))).toBe('PACK_SIGNATURE_INVALID');
    expect(loader.current.version).toBe(BUILT_IN_PACK_VERSION);
    expect(engine.catalogue.byId('pack.test-canary')).toBeUndefined();
  });

  it('verify the signature over the canonical bytes, so key order and spacing do not matter', async () => {
    const signed = JSON.parse(pack('1.1.0', 'routine').toString()) as { signature: unknown; signed: { manifest: Record<string, unknown> } };
    const reordered = { signed: { patterns: (signed.signed as unknown as { patterns: unknown }).patterns, manifest: Object.fromEntries(Object.entries(signed.signed.manifest).reverse()) }, signature: signed.signature };
    expect(verifyPack(Buffer.from(JSON.stringify(reordered)), [release.publicKeyPem]).manifest.version).toBe('1.1.0');
  });

  it('refuse a pack outside the min/max pins of sensor.yaml', async () => {
    const settings = parseSensorYaml('packs:\n  min_version: 1.0.0\n  max_version: 1.4.0\n');
    const loader = createPackLoader({ engine: createDetectionEngine(), trustedKeys: [release.publicKeyPem], sensorVersion: '0.1.0', settings });
    expect(await codeOf(() => loader.load(pack('1.5.0', 'routine')))).toBe('PACK_PIN_OUTSIDE');
    expect(await codeOf(() => loader.load(pack('1.4.0', 'routine')))).toBe('loaded');
  });

  it('refuse a major pack on a sensor of a lower minor, and load it on the sensor it names', async () => {
    const major = pack('2.0.0', 'major', [...CATALOGUE, CANARY], { min_sensor_version: '0.2.0', changelog: 'Patterns carry kinds llm_output; sensors before 0.2 cannot read them.' });
    const old = createPackLoader({ engine: createDetectionEngine(), trustedKeys: [release.publicKeyPem], sensorVersion: '0.1.9' });
    expect(await codeOf(() => old.load(major))).toBe('PACK_NEEDS_SENSOR_UPGRADE');
    const upgraded = createPackLoader({ engine: createDetectionEngine(), trustedKeys: [release.publicKeyPem], sensorVersion: '0.2.0' });
    expect(await codeOf(() => upgraded.load(major))).toBe('loaded');
    // Without its changelog note a major pack is refused.
    const bare = createPackLoader({ engine: createDetectionEngine(), trustedKeys: [release.publicKeyPem], sensorVersion: '0.2.0' });
    expect(await codeOf(() => bare.load(pack('2.0.0', 'major', undefined, { min_sensor_version: '0.2.0' })))).toBe('PACK_MALFORMED');
  });

  it('hold routine packs to the semver rules: additive, newer, and a major bump only as a major pack', async () => {
    const loader = createPackLoader({ engine: createDetectionEngine(), trustedKeys: [release.publicKeyPem], sensorVersion: '0.1.0' });
    const withoutFirst = CATALOGUE.slice(1);
    expect(await codeOf(() => loader.load(pack('1.1.0', 'routine', withoutFirst)))).toBe('PACK_NOT_ADDITIVE');
    expect(await codeOf(() => loader.load(pack('2.0.0', 'routine')))).toBe('PACK_KIND_MISMATCH');
    expect(await codeOf(() => loader.load(pack('1.1.0', 'routine')))).toBe('loaded');
    // Replaying an older signed pack cannot take the new pattern away.
    expect(await codeOf(() => loader.load(pack('1.0.5', 'critical', CATALOGUE)))).toBe('PACK_NOT_NEWER');
    // A critical pack may withdraw a misfiring pattern.
    expect(await codeOf(() => loader.load(pack('1.1.1', 'critical', CATALOGUE)))).toBe('loaded');
  });

  it('refuse patterns that do not compile, and change nothing then', async () => {
    const engine = createDetectionEngine();
    const loader = createPackLoader({ engine, trustedKeys: [release.publicKeyPem], sensorVersion: '0.1.0' });
    const broken = { ...CANARY, id: 'pack.broken', pattern: '(unclosed' };
    expect(await codeOf(() => loader.load(pack('1.1.0', 'routine', [...CATALOGUE, broken])))).toBe('PACK_PATTERNS_INVALID');
    expect(engine.catalogue.size).toBe(CATALOGUE.length);
  });

  it('refuse a signed pack holding a pattern whose matching time grows super-linearly (ReDoS), and change nothing then', { timeout: 120_000 }, async () => {
    const engine = createDetectionEngine();
    const loader = createPackLoader({ engine, trustedKeys: [release.publicKeyPem], sensorVersion: '0.1.0' });
    const catastrophic = { ...CANARY, id: 'pack.catastrophic', pattern: '(a+)+$', keywords: ['a'] };
    const bytes = pack('1.1.0', 'routine', [...CATALOGUE, CANARY, catastrophic]);
    expect(await codeOf(() => loader.check(bytes))).toBe('PACK_PATTERN_SUPERLINEAR');
    expect(await codeOf(() => loader.load(bytes))).toBe('PACK_PATTERN_SUPERLINEAR');
    expect(loader.current.version).toBe(BUILT_IN_PACK_VERSION);
    expect(engine.catalogue.size).toBe(CATALOGUE.length);
    // Without it, the same pack loads.
    expect(await codeOf(() => loader.load(pack('1.1.0', 'routine')))).toBe('loaded');
  });
});

describe('sensor.yaml', () => {
  it('names every bad field', () => {
    try {
      parseSensorYaml('packs:\n  min_version: one\n  colour: blue\ntelemetry: maybe\n');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(PackError);
      expect((error as PackError).code).toBe('SENSOR_CONFIG_INVALID');
      expect((error as PackError).message).toContain('/packs');
      expect((error as PackError).message).toContain('/telemetry');
    }
    expect(() => parseSensorYaml('packs:\n  min_version: 2.0.0\n  max_version: 1.0.0\n')).toThrow(expect.objectContaining({ code: 'SENSOR_CONFIG_INVALID' }));
  });

  it('keeps telemetry off and calls nowhere unless it says so', () => {
    expect(parseSensorYaml('')).toEqual({ minVersion: null, maxVersion: null, path: null, url: null, telemetry: false });
  });
});

describe('the pack checks', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('check weekly for routine packs and daily for critical ones, on a fake clock', async () => {
    vi.useFakeTimers();
    const scopes: string[] = [];
    const updater = createPackUpdater({
      loader: createPackLoader({ engine: createDetectionEngine(), trustedKeys: [release.publicKeyPem], sensorVersion: '0.1.0' }),
      source: async () => [],
      onResult: (result) => scopes.push(result.scope),
    });
    updater.start();
    await vi.advanceTimersByTimeAsync(14 * CRITICAL_CHECK_MS);
    updater.stop();
    await vi.advanceTimersByTimeAsync(ROUTINE_CHECK_MS);
    // One routine check at start and one a week for two weeks; one critical check a day.
    expect(scopes.filter((scope) => scope === 'routine')).toHaveLength(3);
    expect(scopes.filter((scope) => scope === 'critical')).toHaveLength(14);
  });

  it('apply a critical pack found by the daily check, and leave a routine one for the weekly check (air-gapped directory)', async () => {
    const dir = tempDir();
    const engine = createDetectionEngine();
    const loader = createPackLoader({ engine, trustedKeys: [release.publicKeyPem], sensorVersion: '0.1.0' });
    const updater = createPackUpdater({ loader, source: () => readPackFiles(dir) });
    writeFileSync(join(dir, 'svc-patterns-1.1.0.pack.json'), pack('1.1.0', 'routine'));
    writeFileSync(join(dir, 'notes.txt'), 'not a pack');
    const daily = await updater.check('critical');
    expect(daily.loaded).toBeNull();
    expect(loader.current.version).toBe(BUILT_IN_PACK_VERSION);
    writeFileSync(join(dir, 'svc-patterns-1.1.1.pack.json'), pack('1.1.1', 'critical', [...CATALOGUE, CANARY]));
    writeFileSync(join(dir, 'svc-patterns-1.2.0.pack.json'), pack('1.2.0', 'routine', undefined, {}, keyPair().privateKeyPem));
    const nextDay = await updater.check('critical');
    expect(nextDay.loaded?.version).toBe('1.1.1');
    expect(nextDay.refused).toEqual([{ version: '1.2.0', code: 'PACK_KEY_UNKNOWN' }]);
    expect(engine.catalogue.byId('pack.test-canary')).toBeDefined();
    const weekly = await updater.check('routine');
    expect(weekly.loaded).toBeNull();
    expect(loader.current.version).toBe('1.1.1');
  });
});

describe('reading pack files', () => {
  it('refuses an oversized pack file as PACK_TOO_LARGE without reading it whole, and skips such files and non-files in a directory', async () => {
    const dir = tempDir();
    // Sparse: 3 GiB long, no disk used. Read whole it would not even fit in one buffer.
    const huge = join(dir, 'svc-patterns-9.0.0.pack.json');
    writeFileSync(huge, '');
    truncateSync(huge, 3 * 1024 ** 3);
    mkdirSync(join(dir, 'svc-patterns-1.0.5.pack.json'));
    writeFileSync(join(dir, 'svc-patterns-1.1.0.pack.json'), pack('1.1.0', 'routine'));

    const single = await readPackFiles(huge);
    expect(single).toHaveLength(1);
    expect(single[0]!.length).toBe(MAX_PACK_BYTES + 1);
    const loader = createPackLoader({ engine: createDetectionEngine(), trustedKeys: [release.publicKeyPem], sensorVersion: '0.1.0' });
    const result = await createPackUpdater({ loader, source: () => readPackFiles(huge) }).check('routine');
    expect(result.refused).toEqual([{ version: null, code: 'PACK_TOO_LARGE' }]);

    const found = await readPackFiles(dir);
    expect(found).toHaveLength(1);
    expect((await loader.load(found[0]!)).version).toBe('1.1.0');
  });
});

describe('scripts/build-pattern-pack.ts', () => {
  it('builds svc\'s own catalogue as the first pack, signed with the given key, and a sensor verifies it', () => {
    const dir = tempDir();
    const keys = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build-pattern-pack.ts', '--generate-key', join(dir, 'keys')], { encoding: 'utf8' })) as { private_key: string; public_key: string; key_id: string };
    expect(statSync(keys.private_key).mode & 0o777).toBe(0o600);
    const out = join(dir, 'svc-patterns-1.0.0.pack.json');
    const built = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build-pattern-pack.ts', '--key', keys.private_key, '--out', out], { encoding: 'utf8' })) as { patterns: number; key_id: string };
    expect(built).toMatchObject({ patterns: CATALOGUE.length, key_id: keys.key_id });
    const verified = verifyPack(readFileSync(out), [readFileSync(keys.public_key, 'utf8')]);
    expect(verified.manifest).toMatchObject({ version: BUILT_IN_PACK_VERSION, kind: 'routine', name: 'svc-patterns' });
    expect(verified.patterns.map((pattern) => pattern.id)).toEqual(CATALOGUE.map((entry) => entry.id));
    expect(() => verifyPack(readFileSync(out), [release.publicKeyPem])).toThrow(expect.objectContaining({ code: 'PACK_KEY_UNKNOWN' }));
  }, 60_000);
});
