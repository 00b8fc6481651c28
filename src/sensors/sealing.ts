/**
 * Sealing to a sensor's own key (docs/sensors.md, "Gateway context"): what the collector sends a
 * gateway sensor that must stay secret on the wire (provider keys, above all) is a libsodium
 * sealed box (X25519 + XSalsa20-Poly1305, an ephemeral sender key per message) to the X25519 form
 * of the sensor's enrolled Ed25519 key. Only the holder of that sensor's private key can open it,
 * over plain HTTP as over mutual TLS, and nothing new is enrolled or exchanged: the key the
 * collector already verifies the sensor's signatures with is the one it seals to.
 *
 * Security posture: the private key is read from the sensor's PEM and its X25519 form kept in
 * memory only; a box that does not open (another sensor's, tampered) is an error, never garbage.
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import sodium from 'libsodium-wrappers';

let ready: Promise<void> | null = null;
const init = () => (ready ??= sodium.ready);

/** Seals `plaintext` to the sensor whose Ed25519 public key is `publicKeyText` (base64url, 43 characters). */
export async function sealToSensor(publicKeyText: string, plaintext: Buffer): Promise<string> {
  await init();
  const edPublic = Buffer.from(publicKeyText, 'base64url');
  if (edPublic.length !== 32) throw new Error('not an Ed25519 public key');
  const xPublic = sodium.crypto_sign_ed25519_pk_to_curve25519(edPublic);
  return Buffer.from(sodium.crypto_box_seal(plaintext, xPublic)).toString('base64');
}

/** An opener for boxes sealed to this sensor (its Ed25519 private key). */
export async function sensorOpener(privateKey: KeyObject | string): Promise<(sealed: string) => Buffer> {
  await init();
  const key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey;
  const jwk = key.export({ format: 'jwk' });
  if (jwk.crv !== 'Ed25519' || typeof jwk.d !== 'string') throw new Error('not an Ed25519 private key');
  const pair = sodium.crypto_sign_seed_keypair(Buffer.from(jwk.d, 'base64url'));
  const xSecret = sodium.crypto_sign_ed25519_sk_to_curve25519(pair.privateKey);
  const xPublic = sodium.crypto_sign_ed25519_pk_to_curve25519(pair.publicKey);
  return (sealed) => Buffer.from(sodium.crypto_box_seal_open(Buffer.from(sealed, 'base64'), xPublic, xSecret));
}
