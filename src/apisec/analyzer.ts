/**
 * Traffic analyzer: endpoint discovery from live traffic, compared with the gateway's API
 * inventory (its OpenAPI document), and a 0–100 risk score per endpoint.
 *
 * - Every request is reduced to an endpoint: (gateway, method, template). The template is the
 *   inventory's when a documented operation matches, else the normalized path (paths.ts).
 * - Static assets, health probes and scanner noise are filtered out (never endpoints).
 * - An endpoint exists once the backend answered it with something other than 404, 405, 410,
 *   501 or a 5xx: a scanner's 404s never become endpoints.
 * - Shadow: exists, the gateway has an inventory, and no documented operation matches.
 *   Zombie: matches an operation documented as deprecated, and still answers.
 * - Risk (0–100): authentication (most successful calls carried no credential: +30), HTTPS
 *   (reached over plain HTTP: +15), rate limiting (the gateway has none: +15), data in responses
 *   (Restricted +30, Confidential +20, Internal +5) and traffic (up to +10, logarithmic).
 *   In block mode a shadow or zombie endpoint above 50 is blocked.
 * Bounded: at most 5,000 endpoints and 10,000 path→template patterns (lru-cache, least recently
 * used evicted first), per replica; figures describe what this replica saw.
 */
import { LRUCache } from 'lru-cache';
import type { DataClass } from './data-class.ts';
import { maxClass } from './data-class.ts';
import { buildInventory, type Inventory, type InventoryOperation } from './inventory.ts';
import { noiseOf, normalizePath, recognizeProtocol, type ApiProtocol, type NoiseKind } from './paths.ts';
import type { Gateway } from './types.ts';
import { entryBound } from '../platform/lru.ts';

export const MAX_ENDPOINTS = 5_000;
export const MAX_PATTERNS = 10_000;
export const RISK_BLOCK_ABOVE = 50;

export interface EndpointRecord {
  readonly gatewayId: string;
  readonly method: string;
  readonly template: string;
  protocol: ApiProtocol;
  documented: boolean;
  deprecated: boolean;
  firstSeen: Date;
  lastSeen: Date;
  requests: number;
  /** Responses showing the endpoint exists. */
  answered: number;
  /** Successful (2xx/3xx) responses, and those among them to requests without a credential. */
  succeeded: number;
  unauthenticated: number;
  insecure: number;
  dataClass: DataClass;
  dataFound: Set<string>;
}

export interface RiskFactors {
  readonly unauthenticated: boolean;
  readonly insecure_transport: boolean;
  readonly no_rate_limit: boolean;
  readonly data_class: DataClass;
  readonly traffic: number;
}

export interface EndpointView {
  method: string;
  path: string;
  protocol: ApiProtocol;
  status: 'documented' | 'shadow' | 'zombie' | 'unknown';
  risk_score: number;
  risk_factors: RiskFactors;
  requests: number;
  first_seen: string;
  last_seen: string;
  data_types: string[];
}

export interface RequestObservation {
  readonly key: string | null;
  readonly template: string;
  readonly protocol: ApiProtocol;
  readonly noise: NoiseKind | null;
  readonly operation: InventoryOperation | null;
  /** Block mode only: the endpoint is shadow or zombie and its risk is above 50. */
  readonly riskBlock: { status: 'shadow' | 'zombie'; risk: number } | null;
}

export interface Analyzer {
  observeRequest(gateway: Gateway, request: { method: string; path: string; headers: Readonly<Record<string, string | string[] | undefined>> }): RequestObservation;
  observeResponse(gateway: Gateway, key: string | null, response: { status: number; authenticated: boolean; secure: boolean; dataClass?: DataClass; dataFound?: readonly string[] }): void;
  endpoints(gateway: Gateway): EndpointView[];
  forget(gatewayId: string): void;
}

const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'x-api-key', 'api-key', 'x-auth-token', 'x-access-token'];

/** Whether a request carries a credential of any usual kind (header names only). */
export function carriesCredential(headers: Readonly<Record<string, string | string[] | undefined>>, query = ''): boolean {
  for (const name of CREDENTIAL_HEADERS) if (headers[name] !== undefined) return true;
  return /(?:^|&)(?:api_?key|access_token|token|key)=/i.test(query);
}

function exists(status: number): boolean {
  return status < 500 && status !== 404 && status !== 405 && status !== 410 && status !== 501;
}

const DATA_POINTS: Record<DataClass, number> = { Restricted: 30, Confidential: 20, Internal: 5, Public: 0 };

export function riskOf(record: EndpointRecord, gateway: Gateway): { score: number; factors: RiskFactors } {
  const unauthenticated = record.succeeded > 0 && record.unauthenticated / record.succeeded > 0.5;
  const insecure = record.insecure > 0;
  const noRateLimit = gateway.settings.rateLimit === null;
  const traffic = Math.min(10, Math.round(Math.log10(record.requests + 1) * 4));
  const score = Math.min(100, (unauthenticated ? 30 : 0) + (insecure ? 15 : 0) + (noRateLimit ? 15 : 0) + DATA_POINTS[record.dataClass] + traffic);
  return { score, factors: { unauthenticated, insecure_transport: insecure, no_rate_limit: noRateLimit, data_class: record.dataClass, traffic } };
}

function statusOf(record: EndpointRecord, hasInventory: boolean): EndpointView['status'] {
  if (!hasInventory) return 'unknown';
  if (!record.documented) return 'shadow';
  return record.deprecated ? 'zombie' : 'documented';
}

export function createAnalyzer(options: { maxEndpoints?: number; maxPatterns?: number } = {}): Analyzer {
  const endpoints = new LRUCache<string, EndpointRecord>(entryBound(options.maxEndpoints ?? MAX_ENDPOINTS));
  const patterns = new LRUCache<string, string>(entryBound(options.maxPatterns ?? MAX_PATTERNS));
  const inventories = new Map<string, { version: number; inventory: Inventory | null }>();

  const inventoryOf = (gateway: Gateway): Inventory | null => {
    const version = gateway.updatedAt.getTime();
    const cached = inventories.get(gateway.id);
    if (cached !== undefined && cached.version === version) return cached.inventory;
    const inventory = gateway.openapi === null || gateway.openapi === undefined ? null : buildInventory(gateway.openapi);
    inventories.set(gateway.id, { version, inventory });
    return inventory;
  };

  return {
    observeRequest(gateway, request) {
      const question = request.path.indexOf('?');
      const bare = question < 0 ? request.path : request.path.slice(0, question);
      const protocol = recognizeProtocol(request.method, request.path, request.headers);
      const noise = noiseOf(bare);
      const inventory = inventoryOf(gateway);
      const operation = inventory?.match(request.method, bare) ?? null;
      let template: string;
      if (operation !== null) template = operation.template;
      else {
        const patternKey = `${gateway.id} ${bare.length > 2_048 ? bare.slice(0, 2_048) : bare}`;
        const cached = patterns.get(patternKey);
        template = cached ?? normalizePath(bare);
        if (cached === undefined) patterns.set(patternKey, template);
      }
      if (noise !== null && operation === null) return { key: null, template, protocol, noise, operation, riskBlock: null };
      const key = `${gateway.id} ${request.method} ${template}`;
      const now = new Date();
      let record = endpoints.get(key);
      if (record === undefined) {
        record = {
          gatewayId: gateway.id, method: request.method, template, protocol, documented: operation !== null, deprecated: operation?.deprecated ?? false,
          firstSeen: now, lastSeen: now, requests: 0, answered: 0, succeeded: 0, unauthenticated: 0, insecure: 0, dataClass: 'Public', dataFound: new Set(),
        };
        endpoints.set(key, record);
      }
      record.requests += 1;
      record.lastSeen = now;
      let riskBlock: RequestObservation['riskBlock'] = null;
      if (gateway.mode === 'block' && inventory !== null && record.answered > 0 && (!record.documented || record.deprecated)) {
        const risk = riskOf(record, gateway).score;
        if (risk > RISK_BLOCK_ABOVE) riskBlock = { status: record.documented ? 'zombie' : 'shadow', risk };
      }
      return { key, template, protocol, noise, operation, riskBlock };
    },
    observeResponse(gateway, key, response) {
      if (key === null) return;
      const record = endpoints.get(key);
      if (record === undefined) return;
      if (!exists(response.status)) return;
      record.answered += 1;
      if (response.status < 400) {
        record.succeeded += 1;
        if (!response.authenticated) record.unauthenticated += 1;
      }
      if (!response.secure) record.insecure += 1;
      if (response.dataClass !== undefined) record.dataClass = maxClass(record.dataClass, response.dataClass);
      if (response.dataFound !== undefined) for (const item of response.dataFound) if (record.dataFound.size < 16) record.dataFound.add(item);
      void gateway;
    },
    endpoints(gateway) {
      const hasInventory = inventoryOf(gateway) !== null;
      const views: EndpointView[] = [];
      for (const record of endpoints.values()) {
        if (record.gatewayId !== gateway.id || record.answered === 0) continue;
        const { score, factors } = riskOf(record, gateway);
        views.push({
          method: record.method, path: record.template, protocol: record.protocol, status: statusOf(record, hasInventory), risk_score: score, risk_factors: factors,
          requests: record.requests, first_seen: record.firstSeen.toISOString(), last_seen: record.lastSeen.toISOString(), data_types: [...record.dataFound],
        });
      }
      return views.sort((left, right) => right.risk_score - left.risk_score || left.path.localeCompare(right.path));
    },
    forget(gatewayId) {
      inventories.delete(gatewayId);
      for (const [key, record] of endpoints.entries()) if (record.gatewayId === gatewayId) endpoints.delete(key);
    },
  };
}
