/**
 * In-process event bus between capabilities. Producers (rate limiter, detection, gateway) emit
 * named events for an org; consumers (webhooks, alert evaluation) subscribe. Emission never
 * throws and never waits for consumers: a failing consumer is logged, the request goes on.
 * The one thing an emitter may wait for is the evidence a listener journals for the event
 * (`hold`, during the listener's synchronous part): `emit` returns a promise of it, and the
 * answer to a blocked request is sent once it settles.
 */
import type { Logger } from './logger.ts';

export type EventName =
  | 'threat.blocked'
  | 'threat.alert'
  | 'gateway.down'
  | 'rate_limit.exceeded'
  | 'budget.warning'
  | 'budget.exhausted'
  | 'cost.anomaly'
  | (string & {});

export interface SvcEvent {
  orgId: string;
  event: EventName;
  data: Record<string, unknown>;
  gatewayId: string | null;
  at: Date;
  /** A listener's record of this event is on disk once `durable` settles (the emitter may wait for it). */
  hold(durable: Promise<unknown>): void;
}

export type EventListener = (event: SvcEvent) => void | Promise<void>;

export interface EventBus {
  /** Resolves once every listener's held evidence is on disk (at once when none held any); never rejects. */
  emit(orgId: string, event: EventName, data: Record<string, unknown>, options?: { gatewayId?: string | null }): Promise<void>;
  subscribe(listener: EventListener): () => void;
}

const SETTLED = Promise.resolve();

export function createEventBus(logger: Logger): EventBus {
  const listeners = new Set<EventListener>();
  return {
    emit(orgId, event, data, options = {}) {
      const held: Promise<unknown>[] = [];
      const payload: SvcEvent = { orgId, event, data, gatewayId: options.gatewayId ?? null, at: new Date(), hold: (durable) => void held.push(durable) };
      for (const listener of listeners) {
        try {
          const result = listener(payload);
          if (result instanceof Promise) result.catch((error: unknown) => logger.error({ err: error, event }, 'event listener failed'));
        } catch (error) {
          logger.error({ err: error, event }, 'event listener failed');
        }
      }
      return held.length === 0 ? SETTLED : Promise.allSettled(held).then(() => undefined);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
