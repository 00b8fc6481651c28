/**
 * A lock conflict (SQLSTATE 40P01 / 40001) rolls a live batch write back whole. Like an outage,
 * the records must then wait in the outbox and be written, in order, by its replay — not be
 * written one by one, where a second conflict replaced a block audit entry by an
 * `audit.entry_rejected` marker, dropped a threat event as a rejected row, or lost an MCP audit
 * entry with a log line. (The replay handlers keep such records since review-34b:
 * outbox-lock-conflict.test.ts.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startBlockAudit } from '../../src/audit/index.ts';
import { createEventWriter, type ThreatEventRow } from '../../src/detection/events.ts';
import { createMcp } from '../../src/mcp/service.ts';
import { createCache } from '../../src/platform/cache.ts';
import { createEventBus } from '../../src/platform/events.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createOutbox } from '../../src/platform/outbox.ts';
import { createProvenanceWriter, type ProvenanceRecord } from '../../src/verification/provenance.ts';
import { conflictingAudit, failingDb, provenanceKeys, threatEventKeys } from './failing-stores.ts';

const directory = mkdtempSync(join(tmpdir(), 'svc-live-lock-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const logger = createLogger('error', { write: () => undefined } as never);

describe('a lock conflict on the live block audit write', () => {
  it('spools the entries and chains each once, in order, with the replay (no audit.entry_rejected marker)', async () => {
    const outbox = createOutbox({ dir: join(directory, 'audit'), logger });
    const { audit, chained } = conflictingAudit({ conflicts: 2 }); // the batch, then the first entry written alone
    const events = createEventBus(logger);
    const writer = startBlockAudit({ audit: audit as never, events, logger, outbox }, { flushMs: 60_000 });
    for (let index = 0; index < 3; index++) await events.emit('org-1', 'threat.blocked', { request_id: `r-${index}`, threat_score: 0.95, decision: 'block' });
    await writer.flush();
    // Before the change: the first entry was replaced by an `audit.entry_rejected` marker and lost.
    expect(chained.map((entry) => entry.action)).not.toContain('audit.entry_rejected');
    expect(outbox.pending()).toBe(3);
    // The first replay loses the second conflict and keeps the records; the next one writes them.
    expect(await outbox.replay()).toBe(0);
    await outbox.replay();
    expect(chained.map((entry) => `${entry.action}:${entry.target}`)).toEqual(['threat.blocked:r-0', 'threat.blocked:r-1', 'threat.blocked:r-2']);
    expect(outbox.pending()).toBe(0);
    await writer.stop();
    await outbox.close();
  });

  it('still writes around a refused entry, and spools the entry after it that loses a lock conflict', async () => {
    const outbox = createOutbox({ dir: join(directory, 'audit-refused'), logger });
    // The batch is refused (r-1 cannot be stored); written alone, r-0 goes in, r-1 is refused, r-2 loses a conflict.
    const { audit, chained } = conflictingAudit({ loneConflict: 'r-2', refuse: (entry) => entry.target === 'r-1' && entry.action === 'threat.blocked' });
    const events = createEventBus(logger);
    const writer = startBlockAudit({ audit: audit as never, events, logger, outbox }, { flushMs: 60_000 });
    for (let index = 0; index < 3; index++) await events.emit('org-1', 'threat.blocked', { request_id: `r-${index}`, decision: 'block' });
    await writer.flush();
    expect(outbox.pending()).toBe(1);
    await outbox.replay();
    expect(chained.map((entry) => `${entry.action}:${entry.target}`)).toEqual(['threat.blocked:r-0', 'audit.entry_rejected:r-1', 'threat.blocked:r-2']);
    await writer.stop();
    await outbox.close();
  });
});

describe('a lock conflict on the live threat event write', () => {
  it('spools the rows rather than dropping one as rejected, and the replay stores each', async () => {
    const outbox = createOutbox({ dir: join(directory, 'events'), logger });
    // The batch, then the first row written alone (before the change: that row was dropped).
    const { db, stored } = failingDb({ conflicts: 2, keys: threatEventKeys });
    const writer = createEventWriter(db as never, logger, outbox);
    const row = (index: number): ThreatEventRow => ({ orgId: 'org-1', requestId: `q-${index}`, pillar: 'api_security', kind: 'http', threatScore: 0.9, decision: 'block', patterns: [], sessionId: null, gatewayId: null, details: {} });
    for (let index = 0; index < 3; index++) await writer.record(row(index));
    await writer.flush();
    expect(stored).toEqual([]);
    expect(outbox.pending()).toBe(3);
    // The first replay loses the second conflict and keeps the records; the next one writes them.
    expect(await outbox.replay()).toBe(0);
    await outbox.replay();
    expect(stored).toEqual(['q-0', 'q-1', 'q-2']);
    expect(outbox.pending()).toBe(0);
    await writer.close();
    await outbox.close();
  });
});

describe('a lock conflict on the live MCP audit write', () => {
  it('spools the entries rather than losing one, and the replay chains each once, in order', async () => {
    const outbox = createOutbox({ dir: join(directory, 'mcp'), logger });
    const { audit, chained } = conflictingAudit({ conflicts: 2 }); // the batch, then the first entry written alone
    const db = { withOrg: async (_orgId: string, work: (tx: { query: () => Promise<{ rows: []; rowCount: number }> }) => Promise<unknown>) => work({ query: async () => ({ rows: [], rowCount: 1 }) }) };
    const cache = createCache({ kind: 'memory' }, 'live-lock:');
    const mcp = createMcp({ db: db as never, cache, events: createEventBus(logger), logger, audit: audit as never, outbox, detection: {} as never, checkTarget: async (url) => new URL(url), allowPrivateTargets: true, enabled: true });
    const ids = ['00000000-0000-4000-8000-000000000a01', '00000000-0000-4000-8000-000000000a02', '00000000-0000-4000-8000-000000000a03'];
    for (const id of ids) await mcp.deleteServer('org-1', 'user:1', id);
    await mcp.flush();
    // Before the change: the first entry was logged as rejected and lost, the other two chained.
    expect(chained).toEqual([]);
    expect(outbox.pending()).toBe(3);
    // The first replay loses the second conflict and keeps the records; the next one writes them.
    expect(await outbox.replay()).toBe(0);
    await outbox.replay();
    expect(chained.map((entry) => `${entry.action}:${entry.target}`)).toEqual(ids.map((id) => `mcp.server.delete:${id}`));
    expect(outbox.pending()).toBe(0);
    await mcp.close();
    await cache.close();
    await outbox.close();
  });
});

describe('a lock conflict on the live provenance write', () => {
  it('spools the records rather than losing one, and the replay stores each', async () => {
    const outbox = createOutbox({ dir: join(directory, 'provenance'), logger });
    // The batch's transaction, then the first record's alone (before the change: that record was lost).
    const { db, stored } = failingDb({ conflicts: 2, at: 'withOrg', keys: provenanceKeys });
    const audit = { appendMany: async () => [{ seq: '1', hash: 'a'.repeat(64) }] };
    const writer = createProvenanceWriter({ db: db as never, audit: audit as never, logger, outbox }, { flushMs: 60_000 });
    const record = (index: number): ProvenanceRecord => ({
      requestId: `p-${index}`,
      contentHash: 'b'.repeat(64),
      delivered: true,
      provider: 'openai',
      model: 'gpt-4o-mini',
      streamed: false,
      sources: [],
      checks: {},
      passed: true,
      action: null,
      retriedFrom: null,
      riskClass: 'general',
      sb942ManifestPresent: false,
    });
    for (let index = 0; index < 3; index++) writer.record('org-1', record(index));
    await writer.flush();
    expect(stored).toEqual([]);
    expect(outbox.pending()).toBe(3);
    expect(await outbox.replay()).toBe(0); // the second conflict: kept for the next replay
    await outbox.replay();
    expect(stored).toEqual(['p-0', 'p-1', 'p-2']);
    expect(outbox.pending()).toBe(0);
    await outbox.close();
  });
});
