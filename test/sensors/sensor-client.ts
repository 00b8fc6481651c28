/**
 * A test sensor speaking wire contract v1 over app.inject(): its own Ed25519 key, enrolment with a
 * one-time token, signed findings (single and batch) and signed heartbeats and configuration pulls.
 */
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import type { AppInstance } from '../../src/http/build-app.ts';
import { buildFinding, FINDING_MEDIA_TYPE, publicKeyText, SENSOR_HEADERS, signFinding, signRequest, WIRE_VERSION, type FindingData, type FindingInput } from '../../src/sensors/index.ts';

export const BASE_FINDING: FindingData = {
  pillar: 'gateway',
  kind: 'prompt',
  severity: 'high',
  threat_score: 0.8,
  decision: 'block',
  patterns: [{ id: 'pi.ignore-previous', name: 'Ignore previous instructions', confidence: 0.9 }],
  request_id: 'req-1',
  session_id: null,
};

export async function createEnrolmentToken(app: AppInstance, apiKey: string): Promise<string> {
  const answer = await app.inject({ method: 'POST', url: '/api/v1/sensors/enrolment-tokens', headers: { authorization: `Bearer ${apiKey}` }, payload: { name: 'test' } });
  if (answer.statusCode !== 201) throw new Error(`enrolment token: ${answer.statusCode} ${answer.body}`);
  return answer.json().token as string;
}

export class TestSensor {
  readonly privateKey: KeyObject;
  readonly publicKey: string;
  id = '';

  constructor(readonly app: AppInstance, readonly name = `sensor-${randomUUID().slice(0, 6)}`, readonly sensorClass: 'mcp' | 'gateway' | 'verification' = 'gateway') {
    const pair = generateKeyPairSync('ed25519');
    this.privateKey = pair.privateKey;
    this.publicKey = publicKeyText(pair.publicKey);
  }

  registration(extra: Record<string, unknown> = {}) {
    return { name: this.name, class: this.sensorClass, capabilities: ['inspect'], version: '0.1.0', wire_version: WIRE_VERSION, public_key: this.publicKey, ...extra };
  }

  async enrol(token: string, extra: Record<string, unknown> = {}) {
    const answer = await this.app.inject({ method: 'POST', url: '/sensors/register', payload: { enrolment_token: token, ...this.registration(extra) } });
    if (answer.statusCode < 300) this.id = answer.json().sensor_id as string;
    return answer;
  }

  /** A signed request (heartbeat, configuration pull, re-registration). */
  signed(method: 'GET' | 'POST', url: string, payload?: unknown, now = Date.now()) {
    const body = payload === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(payload));
    const headers = { ...signRequest(this.id, this.privateKey, method, url, body, now), ...(payload === undefined ? {} : { 'content-type': 'application/json' }) };
    return this.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: body }) });
  }

  finding(overrides: Omit<Partial<FindingInput>, 'data'> & { data?: Partial<FindingData> } = {}) {
    const { data, ...rest } = overrides;
    const event = buildFinding({ sensorId: this.id, correlationId: 'corr-1', ...rest, data: { ...BASE_FINDING, ...data } });
    return { event, ...signFinding(event, this.privateKey) };
  }

  send(signed: { body: Buffer; signature: string }, headers: Record<string, string> = {}) {
    return this.app.inject({
      method: 'POST',
      url: '/findings',
      headers: { 'content-type': FINDING_MEDIA_TYPE, [SENSOR_HEADERS.sensorId]: this.id, [SENSOR_HEADERS.signature]: signed.signature, ...headers },
      payload: signed.body,
    });
  }

  sendBatch(items: readonly { body: Buffer; signature: string }[]) {
    return this.app.inject({
      method: 'POST',
      url: '/findings/batch',
      headers: { 'content-type': 'application/json', [SENSOR_HEADERS.sensorId]: this.id },
      payload: { findings: items.map((item) => ({ event: item.body.toString('utf8'), signature: item.signature })) },
    });
  }
}
