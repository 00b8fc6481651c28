import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Database } from '../../src/platform/db/index.ts';
import type { Services } from '../../src/services.ts';
import { createAuditLog, runAuditVerify, startAuditJobs, startBlockAudit, type AuditLog } from '../../src/audit/index.ts';
import { createEventBus } from '../../src/platform/events.ts';
import { InProcessQueue } from '../../src/platform/queue.ts';
import { ZERO_HASH } from '../../src/audit/chain.ts';
import { createTestServices } from '../helpers/app.ts';
import { createTestOrg, memoryLogger } from './database.ts';

let services: Services;
let database: Database;
let audit: AuditLog;

beforeAll(async () => {
  services = await createTestServices();
  database = services.db;
  audit = services.audit;
});

afterAll(async () => {
  await services?.close();
});

async function buildChain(orgId: string, length: number): Promise<void> {
  for (let index = 1; index <= length; index++) {
    await audit.append(orgId, {
      actor: `key:${index % 3}`,
      action: index % 2 === 0 ? 'config.thresholds.set' : 'threat.blocked',
      target: index % 4 === 0 ? null : `request-${index}`,
      outcome: 'success',
      details: { index, score: index / 10, nested: { list: [index, 'x'] } },
    });
  }
}

describe('audit hash chain', () => {
  it('starts each org chain from the all-zero hash and links every record to the previous one', async () => {
    const orgId = await createTestOrg(database);
    const first = (await audit.append(orgId, { actor: 'user:1', action: 'key.create', target: 'key-1', outcome: 'success' }))!;
    const second = (await audit.append(orgId, { actor: 'user:1', action: 'key.revoke', target: 'key-1', outcome: 'success' }))!;
    expect(first.seq).toBe(1);
    expect(first.prevHash).toBe(ZERO_HASH);
    expect(second.prevHash).toBe(first.hash);
    expect(await audit.verify(orgId)).toEqual({ ok: true, checked: 2, first_bad: null });
  });

  it('keeps one chain per org so that another org appending does not move this chain', async () => {
    const orgA = await createTestOrg(database);
    const orgB = await createTestOrg(database);
    await buildChain(orgA, 3);
    await buildChain(orgB, 5);
    expect((await audit.verify(orgA)).checked).toBe(3);
    expect((await audit.verify(orgB)).checked).toBe(5);
  });

  it('never forks the chain when many writers append at the same time', async () => {
    const orgId = await createTestOrg(database);
    const records = await Promise.all(
      Array.from({ length: 25 }, (_, index) => audit.append(orgId, { actor: `writer:${index}`, action: 'concurrent', outcome: 'success' })),
    );
    expect(new Set(records.map((record) => record!.seq)).size).toBe(25);
    expect(Math.max(...records.map((record) => record!.seq))).toBe(25);
    expect(await audit.verify(orgId)).toEqual({ ok: true, checked: 25, first_bad: null });
  });

  it('verifies a single entry and the last N entries', async () => {
    const orgId = await createTestOrg(database);
    await buildChain(orgId, 8);
    expect(await audit.verify(orgId, { level: 'entry', seq: 5 })).toEqual({ ok: true, checked: 1, first_bad: null });
    expect(await audit.verify(orgId, { level: 'last', n: 3 })).toEqual({ ok: true, checked: 3, first_bad: null });
    expect(await audit.verify(orgId, { level: 'entry', seq: 99 })).toMatchObject({ ok: false, first_bad: { seq: 99, reason: 'not_found' } });
    await database.query(`UPDATE audit_log SET outcome = 'failure' WHERE org_id = $1 AND seq = 7`, [orgId]);
    expect(await audit.verify(orgId, { level: 'entry', seq: 7 })).toMatchObject({ ok: false, first_bad: { seq: 7, reason: 'hash_mismatch' } });
    expect(await audit.verify(orgId, { level: 'entry', seq: 5 })).toMatchObject({ ok: true });
    expect(await audit.verify(orgId, { level: 'last', n: 1 })).toMatchObject({ ok: true, checked: 1 });
    expect(await audit.verify(orgId, { level: 'last', n: 2 })).toMatchObject({ ok: false, first_bad: { seq: 7, reason: 'hash_mismatch' } });
  });

  it('refuses to let the application role rewrite or delete audit records', async () => {
    const orgId = await createTestOrg(database);
    await buildChain(orgId, 2);
    await expect(database.withOrg(orgId, (tx) => tx.query(`UPDATE audit_log SET outcome = 'x' WHERE org_id = $1`, [orgId]))).rejects.toThrow();
    await expect(database.withOrg(orgId, (tx) => tx.query(`DELETE FROM audit_log WHERE org_id = $1`, [orgId]))).rejects.toThrow();
  });

  it('rejects entries that could not be verified after a round trip through the database', async () => {
    const orgId = await createTestOrg(database);
    await expect(audit.append(orgId, { actor: '', action: 'x', outcome: 'success' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(audit.append(orgId, { actor: 'a', action: 'x', outcome: 'success', details: { big: 2 ** 60 } })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
  });

  it('detects a forged checkpoint', async () => {
    const orgId = await createTestOrg(database);
    await buildChain(orgId, 3);
    await audit.checkpoint(orgId);
    await database.query(`UPDATE audit_checkpoints SET seq = 2 WHERE org_id = $1`, [orgId]);
    expect(await audit.verify(orgId)).toMatchObject({ ok: false, first_bad: { seq: 2, reason: 'checkpoint_signature_invalid' } });
  });
});

describe('audit verify command', () => {
  it('verifies one org or every org and names the org of the first bad record', async () => {
    const good = await createTestOrg(database);
    const bad = await createTestOrg(database);
    await buildChain(good, 3);
    await buildChain(bad, 3);
    expect(await runAuditVerify(audit, { orgId: good })).toMatchObject({ ok: true, checked: 3, first_bad: null, orgs: 1 });
    expect(await runAuditVerify(audit, { orgId: good, last: 2 })).toMatchObject({ ok: true, checked: 2 });
    await database.query(`UPDATE audit_log SET target = 'x' WHERE org_id = $1 AND seq = 3`, [bad]);
    const all = await runAuditVerify(audit);
    expect(all.ok).toBe(false);
    expect(all.orgs).toBeGreaterThanOrEqual(2);
    // Other tests of this file tampered with their own orgs too: look this one up.
    expect(all.results.find((result) => result.org_id === bad)).toMatchObject({ ok: false, first_bad: { seq: 3, reason: 'hash_mismatch' } });
    expect(all.results.find((result) => result.org_id === good)).toMatchObject({ ok: true });
    const firstBadOrg = all.results.find((result) => !result.ok)!;
    expect(all.first_bad).toEqual({ org_id: firstBadOrg.org_id, ...firstBadOrg.first_bad });
  });
});

describe('batched appends and block entries', () => {
  it('appends many entries under one lock, checkpointing when a batch crosses a multiple of 100', async () => {
    const orgId = await createTestOrg(database);
    await buildChain(orgId, 95);
    const records = await audit.appendMany(orgId, Array.from({ length: 10 }, (_, index) => ({ actor: 'a', action: 'batch', outcome: 'success', details: { index } })));
    expect(records.map((record) => record.seq)).toEqual([96, 97, 98, 99, 100, 101, 102, 103, 104, 105]);
    const checkpoints = await database.query<{ seq: number }>('SELECT seq::int AS seq FROM audit_checkpoints WHERE org_id = $1', [orgId]);
    expect(checkpoints.rows).toEqual([{ seq: 100 }]);
    expect(await audit.verify(orgId)).toEqual({ ok: true, checked: 105, first_bad: null });
  });

  it('stores entries whose text holds quotes, backslashes, dollar quotes and NUL as given, and the chain verifies', async () => {
    // Whatever text an entry holds (a quote, a dollar quote, NUL) must not end a literal, change a
    // value or lose an entry, on either engine.
    const orgId = await createTestOrg(database);
    const awkward = ["it's", 'back\\slash \\x27', '$svc_audit_rows$', '$$', '$svc_audit_rows$x$svc_audit_rows$', 'nul\u0000here', "'); DROP TABLE audit_log; --", 'emoji 🙂 \u00e9'];
    const entries = awkward.map((text, index) => ({ actor: `user:${text}`, action: 'odd.text', target: text, outcome: 'success', details: { text, index, nested: { [text]: [text] } } }));
    const appended = await audit.appendMany(orgId, entries);
    expect(appended.map((record) => record.seq)).toEqual(awkward.map((_, index) => index + 1));
    const stored = (await audit.list(orgId, { limit: 100 })).sort((a, b) => a.seq - b.seq);
    expect(stored.map((record) => record.target)).toEqual(awkward.map((text) => text.replaceAll('\0', '\uFFFD')));
    expect(stored.map((record) => record.details)).toEqual(appended.map((record) => record.details));
    expect(stored.map((record) => record.hash)).toEqual(appended.map((record) => record.hash));
    expect(await audit.verify(orgId)).toEqual({ ok: true, checked: awkward.length, first_bad: null });
    // One at a time too (the evidence writer's single entry per flush).
    for (const entry of entries) await audit.appendMany(orgId, [entry]);
    expect(await audit.verify(orgId)).toEqual({ ok: true, checked: 2 * awkward.length, first_bad: null });
  });

  it('writes one audit entry per threat.blocked event, in batches, and finds them by session', async () => {
    const orgId = await createTestOrg(database);
    const { logger } = memoryLogger('error');
    const events = createEventBus(logger);
    const writer = startBlockAudit({ audit, events, logger }, { batch: 40 });
    for (let index = 0; index < 130; index++) {
      events.emit(orgId, 'threat.blocked', { request_id: `r-${index}`, threat_score: 0.95, decision: 'block', pattern_ids: ['p1'], session_id: index < 5 ? 'sess-A' : 'sess-B' }, { gatewayId: 'gw-1' });
    }
    await writer.stop();
    expect(await audit.verify(orgId)).toEqual({ ok: true, checked: 130, first_bad: null });
    const sessionA = await audit.list(orgId, { sessionId: 'sess-A' });
    expect(sessionA.map((record) => record.target).sort()).toEqual(['r-0', 'r-1', 'r-2', 'r-3', 'r-4']);
    expect(sessionA[0]).toMatchObject({ actor: 'system:response-policy', action: 'threat.blocked', outcome: 'blocked', details: { gateway_id: 'gw-1', threat_score: 0.95 } });
  });

  it('drops block entries beyond its backlog bound and says so in the log', async () => {
    const orgId = await createTestOrg(database);
    const { logger, lines } = memoryLogger('warning');
    const events = createEventBus(logger);
    const writer = startBlockAudit({ audit, events, logger }, { maxBacklog: 10, flushMs: 10_000 });
    for (let index = 0; index < 25; index++) events.emit(orgId, 'threat.blocked', { request_id: `r-${index}` });
    await writer.stop();
    // The 10 entries, then one that records the gap in the chain itself (issue #14).
    expect((await audit.verify(orgId)).checked).toBe(11);
    const gap = (await audit.list(orgId, { action: 'audit.entries_dropped' }))[0];
    expect(gap?.details).toMatchObject({ count: 15, reason: 'backlog_full' });
    expect(lines.some((line) => line.includes('"dropped":15'))).toBe(true);
  });
});

describe('audit background jobs', () => {
  it('checkpoints every chain whose head moved when the checkpoint job runs on the queue', async () => {
    const orgId = await createTestOrg(database);
    await buildChain(orgId, 3);
    const queue = new InProcessQueue();
    const { logger, lines } = memoryLogger('info');
    const stop = startAuditJobs({ audit: createAuditLog({ config: services.config, db: database, logger }), db: database, queue, logger });
    try {
      await queue.enqueue('audit.checkpoint', {});
      await queue.idle();
      const checkpoints = await database.query<{ seq: number; kind: string }>('SELECT seq::int AS seq, kind FROM audit_checkpoints WHERE org_id = $1', [orgId]);
      expect(checkpoints.rows).toEqual([{ seq: 3, kind: 'periodic' }]);
      expect(lines.some((line) => line.includes('"audit_checkpoint"') && line.includes(orgId))).toBe(true);
      await queue.enqueue('audit.purge', {});
      await queue.idle();
      expect((await audit.verify(orgId)).ok).toBe(true);
    } finally {
      stop();
      await queue.close();
    }
  });
});

describe('audit retention purge', () => {
  it('deletes records older than 2,555 days after checkpointing, and the rest still verifies', async () => {
    const orgId = await createTestOrg(database);
    const now = new Date('2030-06-01T00:00:00.000Z');
    const old = new Date(now.getTime() - 2_600 * 86_400_000);
    for (let index = 0; index < 4; index++) await audit.append(orgId, { actor: 'a', action: 'old', outcome: 'success' }, { now: old });
    for (let index = 0; index < 3; index++) await audit.append(orgId, { actor: 'a', action: 'recent', outcome: 'success' }, { now });
    const result = await audit.purge(now);
    expect(result.deleted).toBeGreaterThanOrEqual(4);
    const remaining = await audit.list(orgId);
    expect(remaining.map((record) => record.seq)).toEqual([7, 6, 5]);
    expect(await audit.verify(orgId)).toEqual({ ok: true, checked: 3, first_bad: null });
    // Deleting the newest remaining records is still detected after the purge.
    await database.query('DELETE FROM audit_log WHERE org_id = $1 AND seq = 7', [orgId]);
    expect(await audit.verify(orgId)).toMatchObject({ ok: false, first_bad: { seq: 7, reason: 'missing_records' } });
  });

  it('detects deletion of the oldest records that was not done by the purge', async () => {
    const orgId = await createTestOrg(database);
    await buildChain(orgId, 4);
    await database.query('DELETE FROM audit_log WHERE org_id = $1 AND seq = 1', [orgId]);
    expect(await audit.verify(orgId)).toMatchObject({ ok: false, first_bad: { seq: 1, reason: 'seq_gap' } });
  });
});

type Tamper =
  | { kind: 'edit'; index: number; field: 'actor' | 'details' | 'occurred_at' | 'hash' | 'prev_hash' }
  | { kind: 'delete'; index: number }
  | { kind: 'reorder'; index: number; other: number }
  | { kind: 'truncate'; count: number };

const chainAndTamper = fc.integer({ min: 2, max: 12 }).chain((length) =>
  fc.tuple(
    fc.constant(length),
    fc.oneof(
      fc.record({
        kind: fc.constant('edit' as const),
        index: fc.integer({ min: 1, max: length }),
        field: fc.constantFrom('actor' as const, 'details' as const, 'occurred_at' as const, 'hash' as const, 'prev_hash' as const),
      }),
      fc.record({ kind: fc.constant('delete' as const), index: fc.integer({ min: 1, max: length - 1 }) }),
      fc
        .tuple(fc.integer({ min: 1, max: length }), fc.integer({ min: 1, max: length }))
        .filter(([a, b]) => a !== b)
        .map(([a, b]) => ({ kind: 'reorder' as const, index: Math.min(a, b), other: Math.max(a, b) })),
      fc.record({ kind: fc.constant('truncate' as const), count: fc.integer({ min: 1, max: length }) }),
    ),
    fc.boolean(),
  ),
);

async function tamper(orgId: string, change: Tamper): Promise<void> {
  switch (change.kind) {
    case 'edit': {
      const statement = {
        actor: `UPDATE audit_log SET actor = actor || '!' WHERE org_id = $1 AND seq = $2`,
        details: `UPDATE audit_log SET details = details || '{"tampered": true}'::jsonb WHERE org_id = $1 AND seq = $2`,
        occurred_at: `UPDATE audit_log SET occurred_at = occurred_at + interval '1 millisecond' WHERE org_id = $1 AND seq = $2`,
        hash: `UPDATE audit_log SET hash = repeat('a', 64) WHERE org_id = $1 AND seq = $2`,
        prev_hash: `UPDATE audit_log SET prev_hash = repeat('b', 64) WHERE org_id = $1 AND seq = $2`,
      }[change.field];
      await database.query(statement, [orgId, change.index]);
      return;
    }
    case 'delete':
      await database.query('DELETE FROM audit_log WHERE org_id = $1 AND seq = $2', [orgId, change.index]);
      return;
    case 'reorder':
      await database.transaction(async (tx) => {
        await tx.query('UPDATE audit_log SET seq = -1 WHERE org_id = $1 AND seq = $2', [orgId, change.index]);
        await tx.query('UPDATE audit_log SET seq = $3 WHERE org_id = $1 AND seq = $2', [orgId, change.other, change.index]);
        await tx.query('UPDATE audit_log SET seq = $2 WHERE org_id = $1 AND seq = -1', [orgId, change.other]);
      });
      return;
    case 'truncate': {
      const { rows } = await database.query<{ max: number }>('SELECT max(seq)::int AS max FROM audit_log WHERE org_id = $1', [orgId]);
      await database.query('DELETE FROM audit_log WHERE org_id = $1 AND seq > $2', [orgId, (rows[0]?.max ?? 0) - change.count]);
      // A thorough attacker also rewinds the (unsigned) head row; the signed checkpoint still tells.
      await database.query(
        `UPDATE audit_chain_heads h SET seq = greatest(h.seq - $2, 0),
           hash = coalesce((SELECT l.hash FROM audit_log l WHERE l.org_id = h.org_id AND l.seq = h.seq - $2), repeat('0', 64))
         WHERE h.org_id = $1`,
        [orgId, change.count],
      );
    }
  }
}

function expectedFirstBad(length: number, change: Tamper): number {
  switch (change.kind) {
    case 'edit':
    case 'delete':
    case 'reorder':
      return change.index;
    case 'truncate':
      return length - change.count + 1;
  }
}

describe('audit chain tamper evidence (property)', () => {
  it('reports the first tampered sequence number for any edit, deletion, reordering or truncation', async () => {
    await fc.assert(
      fc.asyncProperty(chainAndTamper, async ([length, change, viaLastN]) => {
        const orgId = await createTestOrg(database);
        await buildChain(orgId, length);
        expect(await audit.verify(orgId)).toMatchObject({ ok: true, checked: length });
        await audit.checkpoint(orgId);
        await tamper(orgId, change);
        const full = await audit.verify(orgId);
        expect(full.ok).toBe(false);
        expect(full.first_bad?.seq).toBe(expectedFirstBad(length, change));
        if (viaLastN) {
          // "last N" covering the whole chain reports the same first bad record.
          const last = await audit.verify(orgId, { level: 'last', n: length });
          expect(last.ok).toBe(false);
          expect(last.first_bad?.seq).toBe(expectedFirstBad(length, change));
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);

  it('reports the lowest tampered sequence number when several records are edited or deleted', async () => {
    const several = fc.integer({ min: 2, max: 12 }).chain((length) =>
      fc.tuple(
        fc.constant(length),
        fc.uniqueArray(
          fc.record({ index: fc.integer({ min: 1, max: length }), remove: fc.boolean(), field: fc.constantFrom('actor' as const, 'details' as const, 'hash' as const) }),
          { minLength: 2, maxLength: 4, selector: (change) => change.index },
        ),
      ),
    );
    await fc.assert(
      fc.asyncProperty(several, async ([length, changes]) => {
        const orgId = await createTestOrg(database);
        await buildChain(orgId, length);
        await audit.checkpoint(orgId);
        for (const change of changes) {
          await tamper(orgId, change.remove ? { kind: 'delete', index: change.index } : { kind: 'edit', index: change.index, field: change.field });
        }
        const result = await audit.verify(orgId);
        expect(result.ok).toBe(false);
        expect(result.first_bad?.seq).toBe(Math.min(...changes.map((change) => change.index)));
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});
