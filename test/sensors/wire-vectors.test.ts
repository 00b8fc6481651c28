import { createPrivateKey, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RELEASE_LICENSE_PUBLIC_KEY } from '../../src/platform/config.ts';
import { buildFinding, canonicalBytes, LicenceError, publicKeyFromText, signFinding, verifyLicence, verifySignature, wireVersionStanding, type FindingInput } from '../../src/sensors/index.ts';

const vectors = resolve(import.meta.dirname, '../vectors/sensors');
const finding = JSON.parse(readFileSync(resolve(vectors, 'finding-v1.json'), 'utf8')) as {
  sensor_key: { jwk: Record<string, string>; public_key: string };
  input: Omit<FindingInput, 'time'> & { time: string };
  event: Record<string, unknown>;
  jcs: string;
  signature: string;
};
const licences = JSON.parse(readFileSync(resolve(vectors, 'licence-dev.json'), 'utf8')) as { dev_key: { public_key: string }; valid: unknown; expired: unknown };

describe('wire contract v1 test vectors', () => {
  it('builds the vector event with the cloudevents SDK from its inputs: subject is the correlation_id, with idempotency key, nonce and wire version', () => {
    const event = buildFinding({ ...finding.input, time: new Date(finding.input.time) });
    expect(event).toEqual(finding.event);
    expect(event.specversion).toBe('1.0');
    expect(event.subject).toBe(finding.input.correlationId);
    expect(event.idempotencykey).toBe(finding.input.idempotencyKey);
    expect(event.nonce).toBe(finding.input.nonce);
    expect(event.wireversion).toBe(1);
  });

  it('canonicalizes the event to exactly the vector JCS bytes', () => {
    expect(canonicalBytes(finding.event).toString('utf8')).toBe(finding.jcs);
  });

  it('signs the JCS bytes to exactly the vector signature (Ed25519 is deterministic) and verifies it with the public key', () => {
    const privateKey = createPrivateKey({ key: finding.sensor_key.jwk, format: 'jwk' });
    expect(signFinding(finding.event as never, privateKey).signature).toBe(finding.signature);
    const publicKey = publicKeyFromText(finding.sensor_key.public_key)!;
    expect(publicKey.equals(createPublicKey(privateKey))).toBe(true);
    expect(verifySignature(Buffer.from(finding.jcs, 'utf8'), finding.signature, publicKey)).toBe(true);
  });

  it('does not verify the vector bytes with one byte changed, or a signature of other bytes', () => {
    const publicKey = publicKeyFromText(finding.sensor_key.public_key)!;
    const tampered = Buffer.from(finding.jcs.replace('"threat_score":0.82', '"threat_score":0.12'), 'utf8');
    expect(verifySignature(tampered, finding.signature, publicKey)).toBe(false);
    expect(verifySignature(Buffer.from(finding.jcs, 'utf8'), `${finding.signature.slice(0, -2)}AA`, publicKey)).toBe(false);
    expect(verifySignature(Buffer.from(finding.jcs, 'utf8'), 'not-a-signature', publicKey)).toBe(false);
  });

  it('accepts wire versions N and N-1 and refuses N+1 and older ones', () => {
    expect(wireVersionStanding(1, 1)).toBe('accepted');
    expect(wireVersionStanding(2, 1)).toBe('newer');
    expect(wireVersionStanding(1, 2)).toBe('accepted');
    expect(wireVersionStanding(2, 2)).toBe('accepted');
    expect(wireVersionStanding(3, 2)).toBe('newer');
    expect(wireVersionStanding(1, 3)).toBe('older');
    expect(wireVersionStanding('1', 1)).toBe('invalid');
  });
});

describe('licence documents', () => {
  it('verifies the dev licences against the dev key, with their plan, sensor count and expiry', () => {
    const valid = verifyLicence(JSON.stringify(licences.valid), licences.dev_key.public_key);
    expect(valid).toMatchObject({ plan: 'starter', sensors: 3, expires_at: '2099-01-01T00:00:00.000Z' });
    expect(verifyLicence(JSON.stringify(licences.expired), licences.dev_key.public_key).expires_at).toBe('2026-01-02T00:00:00.000Z');
  });

  it('refuses a dev licence against the release key, and a licence whose fields were changed after signing', () => {
    expect(() => verifyLicence(JSON.stringify(licences.valid), RELEASE_LICENSE_PUBLIC_KEY)).toThrow(LicenceError);
    const raised = structuredClone(licences.valid) as { licence: { sensors: number } };
    raised.licence.sensors = 300;
    try {
      verifyLicence(JSON.stringify(raised), licences.dev_key.public_key);
      expect.unreachable();
    } catch (error) {
      expect((error as LicenceError).reason).toBe('signature');
    }
  });
});
