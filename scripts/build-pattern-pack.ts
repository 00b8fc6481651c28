/**
 * Builds svc's own pattern catalogue (src/detection/catalogue) as a signed pattern pack, the first
 * pack a sensor loads (docs/sensors-operations.md, "Pattern packs").
 *
 *   npx tsx scripts/build-pattern-pack.ts --generate-key DIR
 *       writes DIR/release-key.pem (private, mode 0600) and DIR/release-key.pub.pem
 *   npx tsx scripts/build-pattern-pack.ts --key DIR/release-key.pem [--version 1.0.0] [--out FILE]
 *       writes the signed pack (default: svc-patterns-<version>.pack.json in the working directory)
 *
 * The release key signs packs in the release process; a key generated here is a development key
 * (tests use one of their own). The script prints one JSON line: the file, version, key id and
 * pattern count.
 */
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BUILT_IN_PACK_VERSION, builtInPack, PACK_NAME, releaseKeyId } from '../src/sensors/packs.ts';

const { values } = parseArgs({
  options: {
    'generate-key': { type: 'string' },
    key: { type: 'string' },
    version: { type: 'string', default: BUILT_IN_PACK_VERSION },
    out: { type: 'string' },
  },
});

if (values['generate-key'] !== undefined) {
  const dir = values['generate-key'];
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pair = generateKeyPairSync('ed25519');
  writeFileSync(join(dir, 'release-key.pem'), pair.privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600, flag: 'wx' });
  writeFileSync(join(dir, 'release-key.pub.pem'), pair.publicKey.export({ format: 'pem', type: 'spki' }), { flag: 'wx' });
  process.stdout.write(`${JSON.stringify({ private_key: join(dir, 'release-key.pem'), public_key: join(dir, 'release-key.pub.pem'), key_id: releaseKeyId(pair.publicKey) })}\n`);
} else if (values.key !== undefined) {
  const privateKeyPem = readFileSync(values.key, 'utf8');
  const pack = builtInPack(privateKeyPem, values.version);
  const out = values.out ?? `${PACK_NAME}-${values.version}.pack.json`;
  writeFileSync(out, pack);
  const parsed = JSON.parse(pack.toString('utf8')) as { signed: { patterns: unknown[] } };
  process.stdout.write(`${JSON.stringify({ file: out, version: values.version, key_id: releaseKeyId(createPublicKey(privateKeyPem)), patterns: parsed.signed.patterns.length })}\n`);
} else {
  process.stderr.write('usage: build-pattern-pack.ts --generate-key DIR | --key PRIVATE_KEY.pem [--version X.Y.Z] [--out FILE]\n');
  process.exit(2);
}
