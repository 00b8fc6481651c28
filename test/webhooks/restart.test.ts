import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { buildApp } from '../../src/http/build-app.ts';
import { createServices, type Services } from '../../src/services.ts';
import { testConfig, usingPostgres } from '../helpers/app.ts';
import { startReceiver, waitFor, type Receiver } from './receiver.ts';

let receiver: Receiver;
let directory: string;

beforeAll(async () => {
  receiver = await startReceiver();
  directory = mkdtempSync(join(tmpdir(), 'svc-webhook-restart-'));
});

afterAll(async () => {
  await receiver?.close();
  rmSync(directory, { recursive: true, force: true });
});

/** The whole app on a database that outlives it: a PGlite directory, or the suite's PostgreSQL. */
async function start() {
  const config = testConfig(usingPostgres ? {} : { DATABASE_URL: `pglite:${join(directory, 'pglite')}` });
  const services = await createServices(config, {
    logDestination: { write: () => undefined } as never,
    defaultMetrics: false,
    webhooks: { policy: { baseDelayMs: 1_500, maxAttempts: 5, timeoutMs: 1_000 } },
  });
  const app = await buildApp(config, services);
  await app.ready();
  return { services, app };
}

async function stop(running: { services: Services; app: { close(): Promise<unknown> } }) {
  await running.app.close();
  await running.services.close();
}

describe('webhook delivery across a full app restart', () => {
  it('finishes a delivery that was waiting for its retry when the app closed, exactly once', async () => {
    receiver.on('/restart-app', { status: 503 }, { status: 200 });
    const first = await start();
    const { org, apiKey } = await first.services.accounts.createOrg({ name: 'restart' });
    const created = await first.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: { authorization: `Bearer ${apiKey}` },
      payload: { url: receiver.url('/restart-app'), events: ['threat.blocked'] },
    });
    expect(created.statusCode).toBe(201);
    const { secret } = created.json() as { secret: string };
    first.services.events.emit(org.id, 'threat.blocked', { request_id: 'r-restart', threat_score: 0.97, decision: 'block' }, { gatewayId: 'gw-r' });
    await waitFor(() => (receiver.received('/restart-app').length === 1 ? true : undefined));
    await stop(first); // the retry is scheduled ~1.5 s later and dies with this process's queue

    const second = await start();
    try {
      await waitFor(() => (receiver.received('/restart-app').length === 2 ? true : undefined), 20_000);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const received = receiver.received('/restart-app');
      expect(received.map((entry) => entry.answered)).toEqual([503, 200]);
      expect(received[0]!.headers['webhook-id']).toBe(received[1]!.headers['webhook-id']);
      expect(new Webhook(secret).verify(received[1]!.body, received[1]!.headers as Record<string, string>)).toMatchObject({
        event: 'threat.blocked',
        org_id: org.id,
        gateway_id: 'gw-r',
      });
      const state = await second.services.db.query<{ state: string; attempts: number }>(
        `SELECT state, attempts FROM webhook_deliveries WHERE org_id = $1`,
        [org.id],
      );
      expect(state.rows).toEqual([{ state: 'confirmed', attempts: 2 }]);
    } finally {
      await stop(second);
    }
  }, 90_000);
});
