import { describe, expect, it } from 'vitest';
import { databaseFailure, retryingLockConflicts } from './failures.ts';

const failure = (code: string) => Object.assign(new Error(code), { code });
const quick = { attempts: 3, minMs: 1, maxMs: 4 };

/** A write whose first `failures` calls throw what `failure` makes; counts its calls. */
function flaky(failures: number, make: () => Error) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    work: async () => {
      calls += 1;
      if (calls <= failures) throw make();
      return 'stored';
    },
  };
}

describe('retryingLockConflicts', () => {
  it('tries a write again while it loses a deadlock or a serialization failure, within its attempts', async () => {
    const deadlocked = flaky(2, () => failure('40P01'));
    expect(await retryingLockConflicts(deadlocked.work, quick)).toBe('stored');
    expect(deadlocked.calls).toBe(3);
    const serialized = flaky(1, () => failure('40001'));
    expect(await retryingLockConflicts(serialized.work, quick)).toBe('stored');
    expect(serialized.calls).toBe(2);
  });

  it('throws the conflict of the last attempt when it persists', async () => {
    const persistent = flaky(10, () => failure('40P01'));
    await expect(retryingLockConflicts(persistent.work, quick)).rejects.toMatchObject({ code: '40P01' });
    expect(persistent.calls).toBe(3);
  });

  it('does not try again a write the database refused or could not reach', async () => {
    for (const code of ['22003', 'ECONNREFUSED', '23505']) {
      const refused = flaky(1, () => failure(code));
      await expect(retryingLockConflicts(refused.work, quick)).rejects.toMatchObject({ code });
      expect(refused.calls).toBe(1);
    }
  });

  it('hands a failure that is not an Error, or is a TypeError, to the caller as it was thrown, and tries a lock conflict among them again', async () => {
    // p-retry turns a thrown non-Error into a TypeError of its own and never retries a TypeError: an outage thrown as a
    // plain object lost its code (the caller took it for a refusal), and a conflict thrown so was not tried again.
    const outage = { code: 'ECONNREFUSED' };
    const refused = flaky(1, () => outage as unknown as Error);
    await expect(retryingLockConflicts(refused.work, quick)).rejects.toBe(outage);
    expect(refused.calls).toBe(1);
    const conflict = flaky(2, () => ({ code: '40P01' }) as unknown as Error);
    expect(await retryingLockConflicts(conflict.work, quick)).toBe('stored');
    expect(conflict.calls).toBe(3);
    const typed = flaky(2, () => Object.assign(new TypeError('40001'), { code: '40001' }));
    expect(await retryingLockConflicts(typed.work, quick)).toBe('stored');
    expect(typed.calls).toBe(3);
    const persistent = { code: '40001' };
    const lasting = flaky(10, () => persistent as unknown as Error);
    await expect(retryingLockConflicts(lasting.work, quick)).rejects.toBe(persistent);
    expect(lasting.calls).toBe(3);
    const text = flaky(1, () => 'not an error' as unknown as Error);
    await expect(retryingLockConflicts(text.work, quick)).rejects.toBe('not an error');
  });
});

describe('databaseFailure', () => {
  it('answers a lost lock conflict like an outage: 503 SERVICE_UNAVAILABLE with Retry-After, for the client to retry', () => {
    for (const code of ['40P01', '40001']) {
      const mapped = databaseFailure(failure(code));
      // Before: null (answered 500 INTERNAL_ERROR).
      expect(mapped).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, details: { dependency: 'database', reason: 'lock_conflict' } });
      expect(Number(mapped?.headers?.['Retry-After'])).toBeGreaterThan(0);
    }
    expect(databaseFailure(failure('ECONNREFUSED'))).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    expect(databaseFailure(failure('22003'))).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    expect(databaseFailure(failure('23505'))).toBeNull();
  });
});
