/**
 * Fault suite, SIEM export: findings of requests blocked while PostgreSQL is stopped go through
 * the evidence outbox (journal, spool, replay) and, while the SIEM (Debian's rsyslogd) is down
 * too, wait in the sink's queue; once both are back, every finding reaches rsyslog exactly once.
 * Skips with a visible notice where the engines cannot be started.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppInstance } from '../../src/http/build-app.ts';
import type { Services } from '../../src/services.ts';
import { rsyslogAvailable, startRsyslog, type Rsyslog } from '../siem/receivers.ts';
import { faultSupport, type PostgresInstance } from './instances.ts';
import { blockedInspection, startFaultSvc, type FaultSvc } from './svc.ts';

const support = faultSupport();
const runnable = support.ok && rsyslogAvailable();
if (!runnable) process.stdout.write(`[svc fault suite] SIEM SKIPPED: ${support.ok ? 'rsyslogd is not installed' : support.reason}\n`);

let fault: FaultSvc<false>;
let postgres: PostgresInstance;
let rsyslog: Rsyslog;
let services: Services;
let app: AppInstance;
let apiKey: string;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  if (!runnable) return;
  [fault, rsyslog] = await Promise.all([
    startFaultSvc({ pgBin: (support as { pgBin: string }).pgBin, redis: false, services: { siem: { baseDelayMs: 100, maxDelayMs: 500, intervalMs: 100, timeoutMs: 5_000, batch: 50 } } }),
    startRsyslog(),
  ]);
  ({ postgres, services, app } = fault);
  const created = await services.accounts.createOrg({ name: 'siem-faults', plan: 'pro' });
  apiKey = created.apiKey;
  const sink = await app.inject({
    method: 'POST',
    url: '/api/v1/siem/sinks',
    headers: { authorization: `Bearer ${apiKey}` },
    payload: { name: 'rsyslog', kind: 'syslog', host: '127.0.0.1', port: rsyslog.port, format: 'json', streams: ['findings'] },
  });
  expect(sink.statusCode).toBe(201);
}, 120_000);

afterAll(async () => {
  if (!runnable) return;
  await fault?.close();
  await rsyslog?.destroy();
});

const block = (requestId: string) => blockedInspection(app, apiKey, requestId);

describe.skipIf(!runnable)('SIEM export through database and SIEM outages', () => {
  it('delivers every finding exactly once after PostgreSQL and the SIEM were both down', async () => {
    const marker = `siem-${Date.now()}`;
    const blocked: string[] = [];
    let sequence = 0;
    const fire = async () => {
      const id = `${marker}-${sequence++}`;
      const response = await block(id);
      if (response.statusCode === 200 && response.json().decision === 'block') blocked.push(id);
    };
    for (let index = 0; index < 5; index++) await fire();
    await services.detection.flush();

    await rsyslog.stop();
    postgres.stop();
    const downUntil = Date.now() + 4_000;
    while (Date.now() < downUntil) {
      await Promise.all(Array.from({ length: 5 }, fire));
      await sleep(100);
    }
    postgres.start();
    for (let index = 0; index < 10; index++) await fire();
    await services.detection.flush();
    await sleep(1_500); // the SIEM stays down a while after the database is back
    await rsyslog.start();

    const received = () => {
      const seen = new Map<string, number>();
      for (const line of rsyslog.lines()) {
        if (line.msgId !== 'finding') continue;
        const requestId = (JSON.parse(line.msg) as { request_id?: string }).request_id;
        if (requestId?.startsWith(marker)) seen.set(requestId, (seen.get(requestId) ?? 0) + 1);
      }
      return seen;
    };
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && received().size < blocked.length) {
      await services.outbox.replay().catch(() => 0);
      await sleep(200);
    }
    await sleep(1_000); // anything sent twice would have arrived by now
    const counts = received();
    const missing = blocked.filter((id) => !counts.has(id)).length;
    const duplicated = [...counts.values()].filter((count) => count > 1).length;
    process.stdout.write(`[svc fault suite] SIEM through PostgreSQL and rsyslog down: ${blocked.length} blocked, ${counts.size} findings at rsyslog, ${missing} missing, ${duplicated} duplicated\n`);
    expect(blocked.length).toBeGreaterThan(20);
    expect(missing).toBe(0);
    expect(duplicated).toBe(0);
    expect(counts.size).toBe(blocked.length);
  }, 180_000);
});
