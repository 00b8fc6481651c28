/**
 * Webhooks capability: subscriptions, signed durable deliveries with retries and circuit break
 * (core: `createWebhooks(deps, options)`, background work started by `webhooks.start()`), the
 * operational alerts, and the routes plugin.
 */
export { createWebhooks } from './webhooks.ts';
export type { Webhooks, DeliveryView, WebhookEndpoint, WebhookOptions, WebhookServices, FailureSummary, EndpointState } from './webhooks.ts';
export { WEBHOOK_EVENTS, ENVELOPE_VERSION, buildEnvelope, isWebhookEvent } from './events.ts';
export type { Envelope, WebhookEvent } from './events.ts';
export { DEFAULT_POLICY, decide, backoffDelay, parseRetryAfter } from './retry-policy.ts';
export type { DeliveryPolicy, StatusClass } from './retry-policy.ts';
export { svcSignature, standardSignature, signatureHeaders } from './signing.ts';
export { webhookRoutes, type WebhookRoutesOptions } from './routes.ts';
export {
  ALERT_THRESHOLDS,
  evaluateAlerts,
  histogramQuantile,
  sampleRegistry,
  setTokenBudgetUsedRatio,
  startAlertEvaluator,
  startOperationalAlerts,
  tokenBudgetGauge,
  trackTokenBudget,
} from './operational-alerts.ts';
export type { AlertEvaluator, AlertName, AlertSample, FiringAlert } from './operational-alerts.ts';
