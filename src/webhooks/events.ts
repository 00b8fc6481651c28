/**
 * Webhook events and the envelope every delivery carries. The envelope is the spec's:
 * { event, version, timestamp (ISO 8601 UTC with milliseconds), org_id, gateway_id, data }.
 * `gateway_id` is the API-security gateway the event concerns, or the pillar name ("api",
 * "ai_gateway", "mcp") when the event is not tied to one gateway.
 */

/** Payload schema version of the envelope (spec: Versioning 2). */
export const ENVELOPE_VERSION = '1';

/**
 * Events a subscription may name. threat.alert is the Alert policy band (score 0.4 to 0.6):
 * the request goes on and this notification is sent; its data fields are threat.blocked's.
 */
export const WEBHOOK_EVENTS = [
  'threat.blocked',
  'threat.alert',
  'gateway.down',
  'rate_limit.exceeded',
  'budget.warning',
  'budget.exhausted',
  'cost.anomaly',
] as const;

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export function isWebhookEvent(value: string): value is WebhookEvent {
  return (WEBHOOK_EVENTS as readonly string[]).includes(value);
}

export interface Envelope {
  event: WebhookEvent;
  version: string;
  timestamp: string;
  org_id: string;
  gateway_id: string;
  data: Record<string, unknown>;
}

export function buildEnvelope(orgId: string, event: WebhookEvent, data: Record<string, unknown>, gatewayId: string | null, at: Date): Envelope {
  return { event, version: ENVELOPE_VERSION, timestamp: at.toISOString(), org_id: orgId, gateway_id: gatewayId ?? 'api', data };
}
