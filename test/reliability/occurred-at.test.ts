/**
 * Evidence written late keeps the time it happened. Threat events and block audit entries recorded
 * while the database is down wait in the outbox's spool and are written when it is back; before
 * fix-occurred-at their stored time was the insert's (threat_events.occurred_at DEFAULT
 * clock_timestamp(), the audit append's `now`), so GET /api/v1/threats and GET /api/v1/audit listed
 * them as having happened after the outage, every event of one replay at nearly the same time.
 * Provenance records likewise (ai_provenance.created_at DEFAULT now()).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBlockAudit } from '../../src/audit/block-writer.ts';
import type { AuditLog } from '../../src/audit/audit-log.ts';
import { createEventWriter, type ThreatEventRow } from '../../src/detection/events.ts';
import type { Database } from '../../src/platform/db/index.ts';
import { createEventBus } from '../../src/platform/events.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createOutbox } from '../../src/platform/outbox.ts';
import { createProvenanceWriter, type ProvenanceRecord } from '../../src/verification/provenance.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { databaseOutage } from './failing-stores.ts';

const directory = mkdtempSync(join(tmpdir(), 'svc-occurred-at-'));
const logger = createLogger('error', { write: () => undefined } as never);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const row = (orgId: string, requestId: string): ThreatEventRow => ({ orgId, requestId, pillar: 'api_security', kind: 'http', threatScore: 0.9, decision: 'block', patterns: [], sessionId: null, gatewayId: null, details: {} });

let context: TestContext;

beforeAll(async () => {
  context = await createTestApp();
}, 60_000);

afterAll(async () => {
  await context?.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('evidence spooled during an outage', () => {
  it('threat events are listed by GET /api/v1/threats at the times they were recorded, not the replay time', async () => {
    const { orgId, apiKey } = await context.createOrg();
    const outbox = createOutbox({ dir: join(directory, 'threats'), logger });
    let down = true;
    const real = context.services.db;
    const db: Pick<Database, 'withOrg'> = { withOrg: (org, work) => (down ? Promise.reject(databaseOutage()) : real.withOrg(org, work)) };
    const writer = createEventWriter(db as Database, logger, outbox);
    const recorded = new Map<string, number>();
    for (const id of ['out-0', 'out-1', 'out-2']) {
      recorded.set(id, Date.now());
      await writer.record(row(orgId, id));
      await writer.flush(); // each one meets the outage and is spooled
      await sleep(300);
    }
    expect(outbox.pending()).toBe(3);
    await sleep(1_000); // the outage goes on
    down = false;
    const recoveredAt = Date.now();
    await outbox.replay();
    expect(outbox.pending()).toBe(0);

    const response = await context.app.inject({ method: 'GET', url: '/api/v1/threats', headers: { authorization: `Bearer ${apiKey}` } });
    expect(response.statusCode).toBe(200);
    const listed = (response.json() as { data: Array<{ request_id: string; occurred_at: string }> }).data;
    expect(listed.map((event) => event.request_id).sort()).toEqual(['out-0', 'out-1', 'out-2']);
    const at = new Map(listed.map((event) => [event.request_id, Date.parse(event.occurred_at)]));
    for (const [id, time] of recorded) {
      // Before the fix: each was stored at the replay's time, after the recovery.
      expect(at.get(id)!).toBeLessThan(recoveredAt);
      expect(Math.abs(at.get(id)! - time)).toBeLessThan(250);
    }
    // Recorded 300 ms apart: distinct times, in the order they were recorded (newest first in the listing).
    expect(listed.map((event) => event.request_id)).toEqual(['out-2', 'out-1', 'out-0']);
    expect(at.get('out-1')! - at.get('out-0')!).toBeGreaterThanOrEqual(250);
    expect(at.get('out-2')! - at.get('out-1')!).toBeGreaterThanOrEqual(250);

    // A listing filtered to the outage's window finds them (a user investigating the incident).
    const window = await context.app.inject({
      method: 'GET',
      url: `/api/v1/threats?from=${encodeURIComponent(new Date(recorded.get('out-0')! - 1_000).toISOString())}&to=${encodeURIComponent(new Date(recoveredAt).toISOString())}`,
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(window.statusCode).toBe(200);
    expect((window.json() as { data: unknown[] }).data).toHaveLength(3);
    await writer.close();
    await outbox.close();
  }, 30_000);

  it('block audit entries are listed by GET /api/v1/audit at the times of their blocks, and the chain verifies', async () => {
    const { orgId, apiKey } = await context.createOrg();
    const outbox = createOutbox({ dir: join(directory, 'audit'), logger });
    let down = true;
    const real = context.services.audit;
    const audit: AuditLog = {
      ...real,
      append: (org, entry, options) => (down ? Promise.reject(databaseOutage()) : real.append(org, entry, options)),
      appendMany: (org, entries, options) => (down ? Promise.reject(databaseOutage()) : real.appendMany(org, entries, options)),
    };
    const events = createEventBus(logger);
    const writer = startBlockAudit({ audit, events, logger, outbox }, { flushMs: 10 });
    const blocked = new Map<string, number>();
    for (const id of ['blk-0', 'blk-1']) {
      blocked.set(id, Date.now());
      await events.emit(orgId, 'threat.blocked', { request_id: id, decision: 'block', threat_score: 0.95 });
      await writer.flush();
      await sleep(300);
    }
    expect(outbox.pending()).toBe(2);
    await sleep(1_000);
    down = false;
    const recoveredAt = Date.now();
    await outbox.replay();
    expect(outbox.pending()).toBe(0);

    const response = await context.app.inject({ method: 'GET', url: '/api/v1/audit?action=threat.blocked', headers: { authorization: `Bearer ${apiKey}` } });
    expect(response.statusCode).toBe(200);
    const listed = (response.json() as { records: Array<{ target: string; occurred_at: string }> }).records;
    expect(listed.map((entry) => entry.target).sort()).toEqual(['blk-0', 'blk-1']);
    for (const entry of listed) {
      const at = Date.parse(entry.occurred_at);
      expect(at).toBeLessThan(recoveredAt);
      expect(Math.abs(at - blocked.get(entry.target)!)).toBeLessThan(250);
    }
    // The entries' times are part of their hashes: the chain still verifies.
    expect(await real.verify(orgId)).toMatchObject({ ok: true });
    await writer.stop();
    await outbox.close();
  }, 30_000);

  it('provenance records keep the time their completions were recorded as created_at', async () => {
    const { orgId } = await context.createOrg();
    const outbox = createOutbox({ dir: join(directory, 'provenance'), logger });
    let down = true;
    const real = context.services.db;
    const db: Pick<Database, 'withOrg'> = { withOrg: (org, work) => (down ? Promise.reject(databaseOutage()) : real.withOrg(org, work)) };
    const writer = createProvenanceWriter({ db: db as Database, audit: context.services.audit, logger, outbox }, { flushMs: 60_000 });
    const record = (requestId: string): ProvenanceRecord => ({
      requestId, contentHash: 'b'.repeat(64), delivered: true, provider: 'openai', model: 'gpt-4o-mini', streamed: false,
      sources: [], checks: {}, passed: true, action: null, retriedFrom: null, riskClass: 'general', sb942ManifestPresent: false,
    });
    const recorded = new Map<string, number>();
    for (const id of ['prov-0', 'prov-1']) {
      recorded.set(id, Date.now());
      writer.record(orgId, record(id));
      await writer.flush();
      await sleep(300);
    }
    expect(outbox.pending()).toBe(2);
    await sleep(1_000);
    down = false;
    const recoveredAt = Date.now();
    await outbox.replay();
    expect(outbox.pending()).toBe(0);
    for (const [id, time] of recorded) {
      const view = await writer.get(orgId, id);
      expect(view).not.toBeNull();
      const at = Date.parse(view!.created_at);
      expect(at).toBeLessThan(recoveredAt);
      expect(Math.abs(at - time)).toBeLessThan(250);
    }
    await writer.close();
    await outbox.close();
  }, 30_000);
});
