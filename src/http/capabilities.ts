/**
 * The capabilities whose routes the app serves, in registration order. One line each; each
 * capability exports its plugin from its index.ts.
 */
import { registerGatewayRoutes } from '../gateway/index.ts';
import { registerAuditRoutes } from '../audit/index.ts';
import { registerWebhookRoutes } from '../webhooks/index.ts';
import { registerDetectionRoutes } from '../detection/index.ts';
import { registerApiSecurityRoutes } from '../apisec/index.ts';
import type { CapabilityPlugin } from './app-types.ts';

export const CAPABILITY_PLUGINS: readonly CapabilityPlugin[] = [
  registerDetectionRoutes,
  registerGatewayRoutes,
  registerAuditRoutes,
  registerWebhookRoutes,
  registerApiSecurityRoutes,
];
