/**
 * Events the gateway raises for other capabilities (webhooks) to deliver. The webhooks engineer
 * plugs a real bus in through `GatewayServiceOptions.events`; the default writes a log line.
 */
import type { Logger } from '../platform/logger.ts';

export type GatewayEventName = 'budget.warning' | 'budget.exhausted' | 'cost.anomaly' | 'gateway.down';

export interface GatewayEvents {
  emit(orgId: string, event: GatewayEventName, data: Record<string, unknown>, options?: { gatewayId?: string | null }): void;
}

/**
 * The AI gateway's events name the pillar as their gateway (the webhook envelope's `gateway_id`
 * is `ai_gateway`): they concern the org's AI gateway, not one API-security gateway.
 */
export const AI_GATEWAY_EVENT = { gatewayId: 'ai_gateway' } as const;

export function loggingEvents(logger: Pick<Logger, 'warn'>): GatewayEvents {
  return {
    emit(orgId, event, data) {
      logger.warn({ org_id: orgId, event, data }, `gateway event ${event}`);
    },
  };
}
