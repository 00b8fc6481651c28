/**
 * The hourly usage rows (the dashboard's charts) are gathered for a second and added in one
 * statement; while the database is out they wait for the next batch instead of being dropped
 * (the review of the one-second batch: a second of every org's rows lost per failed statement).
 */
import { describe, expect, it } from 'vitest';
import type { PreparedCompletion, Viable } from '../../src/gateway/admission.ts';
import { Settlement } from '../../src/gateway/settlement.ts';
import type { UsageHourRow } from '../../src/gateway/usage-history.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createMetrics } from '../../src/platform/metrics.ts';

function settlementWith(add: (rows: readonly UsageHourRow[]) => Promise<void>): Settlement {
  return new Settlement({
    logger: createLogger('error', { write: () => undefined } as never),
    metrics: createMetrics({ defaultMetrics: false }),
    events: { emit: () => undefined } as never,
    budget: {} as never,
    spend: {} as never,
    costOf: () => 0.002,
    history: { add, addAnomaly: async () => undefined } as never,
  });
}

const call = (orgId: string) => ({ caller: { orgId }, reservation: null, tokenLimit: 0 }) as unknown as PreparedCompletion;
const openai = { provider: 'openai', model: 'gpt-4o-mini' } as unknown as Viable;
const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 };

describe('hourly usage rows while the database is out', () => {
  it('keeps the rows of a batch the database refused and adds them, merged with newer calls, to the next batch', async () => {
    const stored: UsageHourRow[][] = [];
    let refuse = true;
    const settlement = settlementWith(async (rows) => {
      if (refuse) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      stored.push(rows.map((row) => ({ ...row })));
    });
    settlement.account(call('org-a'), openai, 'gpt-4o-mini', usage);
    settlement.account(call('org-b'), openai, 'gpt-4o-mini', usage);
    await settlement.settled();
    expect(stored).toEqual([]);

    refuse = false;
    settlement.account(call('org-a'), openai, 'gpt-4o-mini', usage);
    await settlement.settled();
    const rows = stored.flat();
    expect(rows.find((row) => row.orgId === 'org-a')).toMatchObject({ requests: 2, promptTokens: 20, completionTokens: 10 });
    expect(rows.find((row) => row.orgId === 'org-b')).toMatchObject({ requests: 1, promptTokens: 10, completionTokens: 5 });
    expect(rows.reduce((sum, row) => sum + row.costUsd, 0)).toBeCloseTo(0.006, 10);
  });

  it('keeps the rows of a batch a lock conflict rolled back (another worker\'s batch) and adds them to the next batch', async () => {
    const stored: UsageHourRow[][] = [];
    let conflicts = 2;
    const settlement = settlementWith(async (rows) => {
      if (conflicts > 0) {
        conflicts -= 1;
        throw Object.assign(new Error('deadlock detected'), { code: conflicts === 1 ? '40P01' : '40001' });
      }
      stored.push(rows.map((row) => ({ ...row })));
    });
    settlement.account(call('org-a'), openai, 'gpt-4o-mini', usage);
    await settlement.settled();
    await settlement.settled();
    expect(stored).toEqual([]);
    settlement.account(call('org-a'), openai, 'gpt-4o-mini', usage);
    await settlement.settled();
    expect(stored.flat()).toEqual([expect.objectContaining({ orgId: 'org-a', requests: 2, promptTokens: 20, completionTokens: 10 })]);
  });

  it('drops, and does not retry, rows the database refused for another reason than an outage', async () => {
    const stored: UsageHourRow[][] = [];
    let fail = true;
    const settlement = settlementWith(async (rows) => {
      if (fail) throw Object.assign(new Error('value out of range'), { code: '22003' });
      stored.push([...rows]);
    });
    settlement.account(call('org-a'), openai, 'gpt-4o-mini', usage);
    await settlement.settled();
    fail = false;
    await settlement.settled();
    expect(stored).toEqual([]);
  });
});
