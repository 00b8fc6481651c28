/**
 * Evidence written late keeps the time it happened. Threat events and block audit entries recorded
 * while the database is down wait in the outbox's spool and are written when it is back; before
 * fix-occurred-at their stored time was the insert's (threat_events.occurred_at DEFAULT
 * clock_timestamp(), the audit append's `now`), so GET /api/v1/threats and GET /api/v1/audit listed
 * them as having happened after the outage, every event of one replay at nearly the same time.
 * Provenance records likewise (ai_provenance.created_at DEFAULT now()).
 */
import { describe, expect, it } from 'vitest';
import { startBlockAudit } from '../../src/audit/block-writer.ts';
import type { AuditLog } from '../../src/audit/audit-log.ts';
import { createEventWriter } from '../../src/detection/events.ts';
import { createEventBus } from '../../src/platform/events.ts';
import { createProvenanceWriter, type ProvenanceRecord } from '../../src/verification/provenance.ts';
import { databaseOutage, outageTestbed, quietLogger as logger, recordThroughOutage, switchedDatabase, threatRow } from './failing-stores.ts';

const testbed = outageTestbed('svc-occurred-at-');

describe('evidence spooled during an outage', () => {
  it('threat events are listed by GET /api/v1/threats at the times they were recorded, not the replay time', async () => {
    const { context } = testbed;
    const { orgId, apiKey } = await context.createOrg();
    const outbox = testbed.outbox('threats');
    const database = switchedDatabase(context.services.db);
    const writer = createEventWriter(database.db, logger, outbox);
    const { recorded, recoveredAt } = await recordThroughOutage({
      outbox, ids: ['out-0', 'out-1', 'out-2'],
      record: (id) => writer.record(threatRow(orgId, id)), flush: () => writer.flush(), recover: () => (database.down = false),
    });

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
    const { context } = testbed;
    const { orgId, apiKey } = await context.createOrg();
    const outbox = testbed.outbox('audit');
    let down = true;
    const real = context.services.audit;
    const audit: AuditLog = {
      ...real,
      append: (org, entry, options) => (down ? Promise.reject(databaseOutage()) : real.append(org, entry, options)),
      appendMany: (org, entries, options) => (down ? Promise.reject(databaseOutage()) : real.appendMany(org, entries, options)),
    };
    const events = createEventBus(logger);
    const writer = startBlockAudit({ audit, events, logger, outbox }, { flushMs: 10 });
    const { recorded: blocked, recoveredAt } = await recordThroughOutage({
      outbox, ids: ['blk-0', 'blk-1'],
      record: (id) => events.emit(orgId, 'threat.blocked', { request_id: id, decision: 'block', threat_score: 0.95 }), flush: () => writer.flush(), recover: () => (down = false),
    });

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
    const { context } = testbed;
    const { orgId } = await context.createOrg();
    const outbox = testbed.outbox('provenance');
    const database = switchedDatabase(context.services.db);
    const writer = createProvenanceWriter({ db: database.db, audit: context.services.audit, logger, outbox }, { flushMs: 60_000 });
    const record = (requestId: string): ProvenanceRecord => ({
      requestId, contentHash: 'b'.repeat(64), delivered: true, provider: 'openai', model: 'gpt-4o-mini', streamed: false,
      sources: [], checks: {}, passed: true, action: null, retriedFrom: null, riskClass: 'general', sb942ManifestPresent: false,
    });
    const { recorded, recoveredAt } = await recordThroughOutage({
      outbox, ids: ['prov-0', 'prov-1'],
      record: (id) => writer.record(orgId, record(id)), flush: () => writer.flush(), recover: () => (database.down = false),
    });
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
