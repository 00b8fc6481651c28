/**
 * What stands between the event bus and the webhook tables, so that a flood of events costs no
 * database writes on the request path:
 *
 * - `rate_limit.exceeded` is coalesced per org, scope and identifier per window: the first
 *   refusal of a window becomes one webhook event (with `coalesced: true` and the window); the
 *   refusals after it in the same window are only counted in memory, and the next window's event
 *   carries how many were folded into the previous one (`refusals_since_last_event`).
 *   Coalescing is per instance: N replicas send at most N events per window.
 * - An org with no active endpoint subscribed to an event is skipped without a write: the set of
 *   subscribed events per org is read once and kept for `subscriptionTtlMs` (and forgotten when
 *   this instance changes the org's endpoints).
 */
import { LRUCache } from 'lru-cache';
import { entryBound } from '../platform/lru.ts';

export interface FanOutGate {
  /** False when the event must not become a webhook event now (coalesced). */
  admit(orgId: string, event: string, data: Record<string, unknown>, now?: number): { admit: boolean; data: Record<string, unknown> };
  /** The events the org's active endpoints subscribe to (cached). */
  subscribed(orgId: string): Promise<ReadonlySet<string>>;
  forget(orgId: string): void;
}

const DEFAULT_WINDOW_MS = 60_000;
const MAX_KEYS = 100_000;

export function createFanOutGate(loadSubscriptions: (orgId: string) => Promise<ReadonlySet<string>>, options: { subscriptionTtlMs?: number; maxKeys?: number } = {}): FanOutGate {
  const subscriptionTtlMs = options.subscriptionTtlMs ?? 10_000;
  const maxKeys = options.maxKeys ?? MAX_KEYS;
  // Both bounded, least recently used out: a window evicted early costs one extra event, a subscription set one extra read.
  const windows = new LRUCache<string, { endsAt: number; folded: number }>(entryBound(maxKeys));
  const subscriptions = new LRUCache<string, { at: number; events: Promise<ReadonlySet<string>> }>(entryBound(maxKeys));

  return {
    admit(orgId, event, data, now = Date.now()) {
      if (event !== 'rate_limit.exceeded') return { admit: true, data };
      const windowMs = typeof data.window_seconds === 'number' && data.window_seconds > 0 ? data.window_seconds * 1000 : DEFAULT_WINDOW_MS;
      const key = `${orgId}\u0000${String(data.scope)}\u0000${String(data.identifier)}`;
      const current = windows.get(key);
      if (current !== undefined && current.endsAt > now) {
        current.folded += 1;
        return { admit: false, data };
      }
      windows.set(key, { endsAt: now + windowMs, folded: 0 });
      return {
        admit: true,
        data: { ...data, coalesced: true, coalesce_window_seconds: Math.round(windowMs / 1000), refusals_since_last_event: current?.folded ?? 0 },
      };
    },
    async subscribed(orgId) {
      const now = Date.now();
      const cached = subscriptions.get(orgId);
      if (cached !== undefined && now - cached.at < subscriptionTtlMs) return cached.events;
      const events = loadSubscriptions(orgId);
      subscriptions.set(orgId, { at: now, events });
      events.catch(() => subscriptions.delete(orgId));
      return events;
    },
    forget(orgId) {
      subscriptions.delete(orgId);
    },
  };
}
