/**
 * Hostile input on the sensor wire: whatever a client sends to the five routes, the answer is a
 * 4xx with a catalogue code (never a 5xx), and a finding as large as the contract allows is
 * stored with its audit entry.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/platform/errors.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { createEnrolmentToken, TestSensor } from './sensor-client.ts';

let context: TestContext;
let sensor: TestSensor;
let orgId: string;

beforeAll(async () => {
  context = await createTestApp();
  const org = await context.createOrg();
  orgId = org.orgId;
  sensor = new TestSensor(context.app);
  expect((await sensor.enrol(await createEnrolmentToken(context.app, org.apiKey))).statusCode).toBe(201);
}, 120_000);
afterAll(async () => context.close());

describe('the sensor wire under hostile input', () => {
  it('answers every random body, header and content type on the five routes with a 4xx and a catalogue code', async () => {
    const routes = [
      { method: 'POST', url: '/sensors/register' },
      { method: 'POST', url: '/sensors/heartbeat' },
      { method: 'POST', url: '/findings' },
      { method: 'POST', url: '/findings/batch' },
      { method: 'GET', url: '/sensors/x/config' },
    ] as const;
    const text = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('', '\u0000', 'null', '[]', '{"findings":[]}', '{"findings":[{"event":"{}","signature":"x"}]}', 'x'.repeat(5_000)));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.oneof(text, fc.json()),
        fc.constantFrom('application/json', 'application/cloudevents+json', 'text/plain', undefined),
        fc.record({ id: fc.oneof(fc.constant(sensor.id), fc.uuid(), text), signature: fc.oneof(text, fc.base64String({ maxLength: 90 })), timestamp: fc.oneof(text, fc.constant(String(Date.now()))) }),
        async (route, body, contentType, headers) => {
          const answer = await context.app.inject({
            method: route.method,
            url: route.url.replace('/x/', `/${encodeURIComponent(headers.id).slice(0, 80) || 'x'}/`),
            headers: {
              ...(contentType === undefined ? {} : { 'content-type': contentType }),
              'x-svc-sensor-id': headers.id.replace(/[^\x20-\x7e]/g, ''),
              'x-svc-signature': headers.signature.replace(/[^\x20-\x7e]/g, ''),
              'x-svc-timestamp': headers.timestamp.replace(/[^\x20-\x7e]/g, ''),
            },
            ...(route.method === 'GET' ? {} : { payload: body }),
          });
          expect(answer.statusCode).toBeGreaterThanOrEqual(400);
          expect(answer.statusCode).toBeLessThan(500);
          expect(Object.keys(ERRORS)).toContain(answer.json().error.code);
        },
      ),
      { numRuns: 150, seed: 3838 },
    );
  }, 120_000);

  it('stores a finding at the contract bounds (64 patterns of long multi-byte ids) with its audit entry', async () => {
    const patterns = Array.from({ length: 64 }, (_, index) => ({ id: `${index}-${'模'.repeat(120)}`, name: '名'.repeat(100), confidence: 0.5 }));
    const answer = await sensor.send(sensor.finding({ idempotencyKey: 'bounds-00001', correlationId: '関'.repeat(256), data: { request_id: 'req-bounds', session_id: '会'.repeat(256), patterns } }));
    expect(answer.statusCode).toBe(202);
    const audit = await context.services.audit.list(orgId, { action: 'sensor.finding' });
    expect(audit.find((record) => record.details.idempotency_key === 'bounds-00001')?.details.pattern_count).toBe(64);
  });

  it('accepts and audits a finding whose X-SVC-Timestamp is absurd, reporting the skew within bounds', async () => {
    const answer = await sensor.send(sensor.finding({ idempotencyKey: 'absurd-clock-01', data: { request_id: 'req-absurd-clock' } }), { 'x-svc-timestamp': '1' + '0'.repeat(200) });
    expect(answer.statusCode).toBe(202);
    expect(Number.isSafeInteger(answer.json().clock_skew_ms)).toBe(true);
    const audit = await context.services.audit.list(orgId, { action: 'sensor.finding' });
    expect(audit.some((record) => record.details.idempotency_key === 'absurd-clock-01')).toBe(true);
  });
});
