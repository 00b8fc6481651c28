import { describe, expect, it } from 'vitest';
import { createFanOutGate } from '../../src/webhooks/fan-out-gate.ts';

const refusal = (identifier: string) => ({ scope: 'api_key', identifier, window_seconds: 60 });

describe('webhook fan-out gate memory', () => {
  it('stays bounded and keeps coalescing the most recently refused identifiers, forgetting the least recently used first', () => {
    const gate = createFanOutGate(async () => new Set<string>(), { maxKeys: 3 });
    const now = 1_000_000;
    // Four identifiers refused once each: each first refusal of its window becomes an event.
    for (const identifier of ['a', 'b', 'c', 'd']) expect(gate.admit('org', 'rate_limit.exceeded', refusal(identifier), now).admit).toBe(true);
    // The three most recent are still coalesced within their window.
    for (const identifier of ['b', 'c', 'd']) expect(gate.admit('org', 'rate_limit.exceeded', refusal(identifier), now + 1).admit).toBe(false);
    // The least recently used one was forgotten (the bound is 3): its next refusal is an event again.
    expect(gate.admit('org', 'rate_limit.exceeded', refusal('a'), now + 2).admit).toBe(true);
    // Admitting 'a' again evicted 'b', the least recently used now; 'c' and 'd' stay coalesced.
    expect(gate.admit('org', 'rate_limit.exceeded', refusal('c'), now + 3).admit).toBe(false);
    expect(gate.admit('org', 'rate_limit.exceeded', refusal('d'), now + 3).admit).toBe(false);
    expect(gate.admit('org', 'rate_limit.exceeded', refusal('b'), now + 4).admit).toBe(true);
  });

  it('keeps the subscriptions of the most recently seen orgs and reads an evicted org again', async () => {
    const loads: string[] = [];
    const gate = createFanOutGate(
      async (orgId) => {
        loads.push(orgId);
        return new Set(['threat.detected']);
      },
      { maxKeys: 2, subscriptionTtlMs: 60_000 },
    );
    for (const orgId of ['x', 'y', 'z']) await gate.subscribed(orgId);
    await gate.subscribed('z');
    await gate.subscribed('y');
    expect(loads).toEqual(['x', 'y', 'z']);
    await gate.subscribed('x');
    expect(loads).toEqual(['x', 'y', 'z', 'x']);
  });
});
