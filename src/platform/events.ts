/**
 * In-process event bus between capabilities. Producers (rate limiter, detection, gateway) emit
 * named events for an org; consumers (webhooks, alert evaluation) subscribe. Emission never
 * throws and never waits for consumers: a failing consumer is logged, the request goes on.
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
}

export type EventListener = (event: SvcEvent) => void | Promise<void>;

export interface EventBus {
  emit(orgId: string, event: EventName, data: Record<string, unknown>, options?: { gatewayId?: string | null }): void;
  subscribe(listener: EventListener): () => void;
}

export function createEventBus(logger: Logger): EventBus {
  const listeners = new Set<EventListener>();
  return {
    emit(orgId, event, data, options = {}) {
      const payload: SvcEvent = { orgId, event, data, gatewayId: options.gatewayId ?? null, at: new Date() };
      for (const listener of listeners) {
        try {
          const result = listener(payload);
          if (result instanceof Promise) result.catch((error: unknown) => logger.error({ err: error, event }, 'event listener failed'));
        } catch (error) {
          logger.error({ err: error, event }, 'event listener failed');
        }
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
