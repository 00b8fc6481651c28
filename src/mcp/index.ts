/**
 * MCP security capability: an inspecting MCP proxy with a servers registry, pinned tool
 * definitions, role authorization, injection scanning, quarantine, sessions and compound chains.
 * `createMcp(deps)` builds the core (no Fastify); `mcpRoutes` is its routes plugin.
 */
export { createMcp, SESSION_TTL_MS } from './service.ts';
export type { Mcp, McpDeps, McpServerView, ServerInput } from './service.ts';
export { mcpRoutes } from './routes.ts';
export { createMcpOAuth } from './oauth.ts';
export type { McpOAuth, McpOAuthRole, McpOAuthSettings } from './oauth.ts';
export type { McpRouteOptions } from './routes.ts';
export { MCP_ROLES, roleAllows, roleOf } from './authorization.ts';
export type { McpRole } from './authorization.ts';
export { TOOL_CATEGORIES, cleanText, definitionHash, definitionText, inferCategory, sha256Jcs } from './definitions.ts';
export type { ToolCategory } from './definitions.ts';
export { COMPOUND_PATTERNS, CHAIN_WINDOW_MS, createChainCorrelator } from './chains.ts';
export type { CompoundFinding } from './chains.ts';
export { createInspector, contentSignals } from './inspection.ts';
export { MCP_REFUSALS } from './jsonrpc.ts';
export { poisonLevel, toolShape } from './pinning.ts';
export { createPinning } from './pinning.ts';
export { createProxy } from './proxy.ts';
export type { CallAudit, ProxyCaller } from './proxy.ts';
export type { ChainCorrelator, Observation } from './chains.ts';
export type { DefinitionRecord, McpServerRecord } from './store.ts';
export { createMemoryStore } from './memory-store.ts';
export type { MemoryStore as McpMemoryStore } from './memory-store.ts';
export { checkOrigin } from './origin.ts';
export type { McpFinding } from './inspection.ts';
