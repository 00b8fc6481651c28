/**
 * MCP audit entries are stamped as the other evidence writers stamp theirs (threat events,
 * provenance records): with `recordedAt()`, the time the entry was made, to the microsecond and
 * strictly increasing within the process. The stamp travels with the entry through the journal and
 * the spool, so entries chained later (after an outage) keep the order they were made in. Before
 * mend-rel-36 they carried `new Date().toISOString()`: entries made within one millisecond carried
 * the same time, and a wall clock stepped back a little reversed their order.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createMcp } from '../../src/mcp/service.ts';
import { createCache } from '../../src/platform/cache.ts';
import { createEventBus } from '../../src/platform/events.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createOutbox } from '../../src/platform/outbox.ts';
import { conflictingAudit } from './failing-stores.ts';

const directory = mkdtempSync(join(tmpdir(), 'svc-mcp-audit-time-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
afterEach(() => vi.useRealTimers());
const logger = createLogger('error', { write: () => undefined } as never);

describe('MCP audit entries made within one millisecond', () => {
  it('carry distinct times, increasing in the order they were made, within that millisecond', async () => {
    const outbox = createOutbox({ dir: join(directory, 'mcp'), logger });
    const { audit, chained } = conflictingAudit({});
    const db = { withOrg: async (_orgId: string, work: (tx: { query: () => Promise<{ rows: []; rowCount: number }> }) => Promise<unknown>) => work({ query: async () => ({ rows: [], rowCount: 1 }) }) };
    const cache = createCache({ kind: 'memory' }, 'mcp-audit-time:');
    const mcp = createMcp({ db: db as never, cache, events: createEventBus(logger), logger, audit: audit as never, outbox, detection: {} as never, checkTarget: async (url) => new URL(url), allowPrivateTargets: true, enabled: true });
    const instant = Date.parse('2031-05-04T03:02:01.234Z');
    vi.useFakeTimers({ toFake: ['Date'], now: instant }); // the wall clock stands still: one millisecond for every entry
    const ids = ['00000000-0000-4000-8000-000000000b01', '00000000-0000-4000-8000-000000000b02', '00000000-0000-4000-8000-000000000b03'];
    for (const id of ids) await mcp.deleteServer('org-1', 'user:1', id);
    vi.useRealTimers();
    await mcp.flush();
    expect(chained.map((entry) => entry.target)).toEqual(ids);
    const times = chained.map((entry) => entry.occurredAt!);
    for (const time of times) expect(Math.floor(Date.parse(time))).toBe(instant);
    // Before: three times the same string.
    expect(new Set(times).size).toBe(3);
    expect([...times].sort()).toEqual(times);
    await mcp.close();
    await cache.close();
    await outbox.close();
  });
});
