import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { generateSecret, signatureHeaders, standardSignature, svcSignature } from '../../src/webhooks/signing.ts';
import { createHmac } from 'node:crypto';

const VECTORS = resolve(import.meta.dirname, '../../../shared/vectors/standard-webhooks/vectors.json');
const haveVectors = existsSync(VECTORS);
if (!haveVectors) console.warn(`[skip] Standard Webhooks vectors not found at ${VECTORS}; conformance test skipped`);

interface VectorFile {
  vectors: Array<{ secret: string; msgId: string; timestamp: number; payload: string; signature: string }>;
  negative: Array<{ name: string; signature: string }>;
}

describe.skipIf(!haveVectors)('Standard Webhooks conformance vector', () => {
  const file = haveVectors ? (JSON.parse(readFileSync(VECTORS, 'utf8')) as VectorFile) : { vectors: [], negative: [] };

  it('produces the published webhook-signature for every vector', () => {
    expect(file.vectors.length).toBeGreaterThan(0);
    for (const vector of file.vectors) {
      expect(standardSignature(vector.secret, vector.msgId, vector.timestamp, vector.payload)).toBe(vector.signature);
    }
  });

  it('never produces any of the negative signatures', () => {
    const vector = file.vectors[0]!;
    const ours = standardSignature(vector.secret, vector.msgId, vector.timestamp, vector.payload);
    for (const negative of file.negative) expect(ours).not.toBe(negative.signature);
  });
});

describe('delivery signatures', () => {
  it('signs so that the standardwebhooks library verifies the delivery', () => {
    const secret = generateSecret();
    const body = JSON.stringify({ event: 'threat.blocked', data: { threat_score: 0.93 } });
    const headers = signatureHeaders(secret, 'msg_abc', body, new Date());
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('makes X-SVC-Signature the sha256=hex HMAC of the raw body with the secret key bytes', () => {
    const secret = generateSecret();
    const body = '{"a":1}';
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    expect(svcSignature(secret, body)).toBe(`sha256=${createHmac('sha256', key).update(body).digest('hex')}`);
    expect(svcSignature(secret, `${body} `)).not.toBe(svcSignature(secret, body));
  });

  it('is rejected by the standardwebhooks library when the body, secret or timestamp is wrong', () => {
    const secret = generateSecret();
    const body = '{"event":"gateway.down"}';
    const headers = signatureHeaders(secret, 'msg_1', body, new Date());
    expect(() => new Webhook(secret).verify(`${body}x`, headers)).toThrow();
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow();
    const stale = signatureHeaders(secret, 'msg_1', body, new Date(Date.now() - 10 * 60_000));
    expect(() => new Webhook(secret).verify(body, stale)).toThrow();
  });

  it('generates a distinct 256-bit secret each time', () => {
    const first = generateSecret();
    expect(first).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(generateSecret()).not.toBe(first);
  });
});
