/**
 * API-security capability: protected gateways — an inline reverse proxy in front of an org's API
 * that inspects every request with the detection engine and applies the response policy — with
 * the traffic analyzer (endpoint discovery, shadow and zombie endpoints, risk), bot
 * classification, data classification, T5 behavioural baselines, backend health checks and
 * geo-blocking rules. The composition root builds the core with `createApiSecurity(deps)`; the HTTP
 * edge registers `apiSecurityRoutes` with it. Outside code uses only these exports.
 */
export { createApiSecurity, forbiddenHostname, isReservedPath, GATEWAY_LOOKUP_POLICY, DEFAULT_FAILED_AUTH_POLICY } from './service.ts';
export type { ApiSecurity, ApiSecurityDeps, FailedAuthPolicy, GatewayInput, TrafficOutcome, TrafficRequest } from './service.ts';
export type { Gateway, GatewayMode, BotClass, BotAction } from './types.ts';
export { classifyUserAgent, createBotClassifier } from './bots.ts';
export { normalizePath, recognizeProtocol, noiseOf } from './paths.ts';
export { createAnalyzer, MAX_ENDPOINTS, MAX_PATTERNS } from './analyzer.ts';
export { classifyData } from './data-class.ts';
export type { DataClass } from './data-class.ts';
export { solveChallenge, challengePage, CLEARANCE_COOKIE, CLEARANCE_HEADER, CHALLENGE_PATH } from './challenge.ts';
export { INSPECTION_LIMIT } from './body.ts';
export { apiSecurityRoutes, type ApiSecurityRoutesOptions } from './routes.ts';
