/**
 * The collector when its database goes away (issue #38): a finding that cannot be stored is
 * answered 503 — never "accepted" — and its de-duplication marker is cleared, so the sensor keeps
 * it spooled and sends it again; once PostgreSQL is back the same finding is accepted and stored
 * exactly once (threat_events and the audit chain). Real PostgreSQL and Redis started by the test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppInstance } from '../../src/http/build-app.ts';
import type { Services } from '../../src/services.ts';
import { createEnrolmentToken, TestSensor } from '../sensors/sensor-client.ts';
import { faultSupport, type PostgresInstance } from './instances.ts';
import { startFaultSvc, type FaultSvc } from './svc.ts';

const support = faultSupport();
if (!support.ok) process.stdout.write(`[svc fault suite] SKIPPED: ${support.reason}\n`);

let fault: FaultSvc<true>;
let postgres: PostgresInstance;
let services: Services;
let app: AppInstance;

beforeAll(async () => {
  if (!support.ok) return;
  fault = await startFaultSvc({ pgBin: support.pgBin, redis: true });
  ({ postgres, services, app } = fault);
}, 120_000);

afterAll(async () => {
  if (!support.ok) return;
  await fault.close();
});

describe.runIf(support.ok)('collector while PostgreSQL is stopped', () => {
  it('answers 503 for a finding it cannot store, then accepts the same finding once the database is back, stored once', async () => {
    const { org, apiKey } = await services.accounts.createOrg({ name: 'collector-faults', plan: 'enterprise' });
    const sensor = new TestSensor(app);
    expect((await sensor.enrol(await createEnrolmentToken(app, apiKey))).statusCode).toBe(201);
    expect((await sensor.send(sensor.finding({ idempotencyKey: 'before-outage-1' }))).statusCode).toBe(202);

    const during = sensor.finding({ idempotencyKey: 'during-outage-1', data: { request_id: 'req-outage' } });
    postgres.stop();
    let answer;
    try {
      answer = await sensor.send(during);
    } finally {
      postgres.start();
    }
    expect(answer.statusCode).toBe(503);
    expect(answer.json().error.code).toBe('SERVICE_UNAVAILABLE');

    // The sensor's retry: accepted once the database answers again (pool reconnection may take a few tries).
    let retried = await sensor.send(during);
    for (let attempt = 0; attempt < 40 && retried.statusCode === 503; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      retried = await sensor.send(during);
    }
    expect(retried.statusCode).toBe(202);
    expect(retried.json().status).toBe('accepted');
    expect((await sensor.send(during)).json().status).toBe('duplicate');

    await services.detection.flush();
    await services.outbox.replay();
    const rows = await services.db.withOrg(org.id, (tx) => tx.query('SELECT id FROM threat_events WHERE request_id = $1', ['req-outage']));
    expect(rows.rowCount).toBe(1);
    const audit = await services.audit.list(org.id, { action: 'sensor.finding', limit: 100 });
    expect(audit.filter((record) => record.details.idempotency_key === 'during-outage-1')).toHaveLength(1);
  }, 120_000);
});
