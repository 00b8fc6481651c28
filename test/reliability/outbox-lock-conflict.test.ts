/**
 * A lock conflict (SQLSTATE 40P01 / 40001) rolls a replay call's one transaction back whole: the
 * records must stay in the outbox for the next replay (mend-34), for the block audit writer's
 * records as for any other kind — not be written one by one, where a second conflict turned an
 * entry into an `audit.entry_rejected` marker and lost it (review-34b).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startBlockAudit } from '../../src/audit/index.ts';
import { createEventWriter, type ThreatEventRow } from '../../src/detection/events.ts';
import { createEventBus } from '../../src/platform/events.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createOutbox } from '../../src/platform/outbox.ts';
import { conflictingAudit, failingDb, threatEventKeys } from './failing-stores.ts';

const directory = mkdtempSync(join(tmpdir(), 'svc-outbox-lock-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const logger = createLogger('error', { write: () => undefined } as never);

describe('a lock conflict during the block audit replay', () => {
  it('keeps the entries in the spool and chains each once, in order, with the next replay', async () => {
    const outbox = createOutbox({ dir: join(directory, 'audit'), logger });
    const { audit, chained } = conflictingAudit({ conflicts: 2 }); // the next two writes lose a lock conflict, whichever they are
    const writer = startBlockAudit({ audit: audit as never, events: createEventBus(logger), logger, outbox });
    const entries = Array.from({ length: 3 }, (_, index) => ({ orgId: 'org-1', entry: { id: `00000000-0000-4000-8000-00000000000${index}`, actor: 'system:response-policy', action: 'threat.blocked', target: `r-${index}`, outcome: 'blocked', details: {} } }));
    await outbox.appendMany('block_audit_entry', entries);
    expect(await outbox.replay()).toBe(0);
    expect(outbox.pending()).toBe(3);
    await outbox.replay();
    await outbox.replay();
    // On main the first entry was replaced by an `audit.entry_rejected` marker (its target kept) and lost.
    expect(chained.map((entry) => `${entry.action}:${entry.target}`)).toEqual(['threat.blocked:r-0', 'threat.blocked:r-1', 'threat.blocked:r-2']);
    expect(outbox.pending()).toBe(0);
    await writer.stop();
    await outbox.close();
  });

  it('keeps threat events in the spool rather than dropping them as rejected rows', async () => {
    const outbox = createOutbox({ dir: join(directory, 'events'), logger });
    // The batch, then the first row written alone (main dropped that row).
    const { db, stored } = failingDb({ conflicts: 2, keys: threatEventKeys });
    const writer = createEventWriter(db as never, logger, outbox);
    const row = (index: number): ThreatEventRow => ({ id: `00000000-0000-4000-8000-00000000010${index}`, orgId: 'org-1', requestId: `q-${index}`, pillar: 'api_security', kind: 'http', threatScore: 0.9, decision: 'block', patterns: [], sessionId: null, gatewayId: null, details: {} });
    await outbox.appendMany('threat_event', [0, 1, 2].map(row));
    for (let attempt = 0; attempt < 3; attempt++) await outbox.replay();
    expect(stored).toEqual(['q-0', 'q-1', 'q-2']);
    expect(outbox.pending()).toBe(0);
    await writer.close();
    await outbox.close();
  });
});
