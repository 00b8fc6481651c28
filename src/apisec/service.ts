/**
 * The API-security core: protected gateways (CRUD with SSRF-checked backends and audit entries)
 * and the inline handling of their traffic. No Fastify here: the routes plugin turns an incoming
 * request into a `TrafficRequest` and writes back the `TrafficOutcome`.
 *
 * Order of the traffic path (each step can answer instead of forwarding):
 *   1. backend health — 503 BACKEND_DOWN while the active checks say it is down;
 *   2. geo rules — only with FEATURE_GEO_BLOCKING (stored always, enforced only then);
 *   3. per-gateway rate limit per client IP — 429 RATE_LIMITED, rate_limit.exceeded (once per window);
 *   4. body head buffered (64 KiB) and the request inspected by the detection engine (T1–T3),
 *      with T5 behaviour, the bot class and the analyzer's shadow/zombie risk beside it;
 *   5. response policy — block mode: block → 403 THREAT_BLOCKED with the decision and
 *      threat.blocked (webhooks; the audit chain records it); challenge → proof of work unless the
 *      client holds a clearance; alert → threat.alert and forward; log → forward. Monitor mode
 *      forwards everything and only logs;
 *   6. forward (streaming both ways over pooled keep-alive connections); backend timeout → 504
 *      BACKEND_TIMEOUT, unreachable → 502 BACKEND_UNREACHABLE.
 * Responses are sampled for data classification and feed the analyzer's risk factors.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { Transform, type Readable } from 'node:stream';
import type { AuditLog } from '../audit/index.ts';
import { decide, joinBehaviourScore, type DetectionEngine, type ThreatDecision } from '../detection/index.ts';
import type { Cache } from '../platform/cache.ts';
import { isDatabaseOutage, retryingLockConflicts } from '../platform/db/failures.ts';
import type { Database, Queryable } from '../platform/db/index.ts';
import type { ErrorCode } from '../platform/errors.ts';
import { SvcError } from '../platform/errors.ts';
import type { EventBus } from '../platform/events.ts';
import type { Logger } from '../platform/logger.ts';
import type { Metrics } from '../platform/metrics.ts';
import type { RateLimiter, RateLimitPolicy } from '../platform/rate-limit.ts';
import { LRUCache } from 'lru-cache';
import { createAnalyzer, carriesCredential, type Analyzer, type EndpointView } from './analyzer.ts';
import { bufferHead, hasBody, inspectableBody } from './body.ts';
import { createBotClassifier, type BotClassifier, type BotVerdict } from './bots.ts';
import { blockPage, CHALLENGE_PATH, challengePage, createChallenges, presentedClearance, CLEARANCE_COOKIE, type Challenges } from './challenge.ts';
import { classifyData } from './data-class.ts';
import { sandboxAnswer, BackendError, createForwarder, requestHeaders, type Forwarder } from './forward.ts';
import { createHealthChecker, type HealthChecker } from './health.ts';
import { openApiProblem } from './inventory.ts';
import { createGatewayStore, type GatewayFields, type GatewayStore, type GeoRule } from './store.ts';
import type { BlockDetails, BotAction, BotClass, Gateway, GatewayMode, GatewaySettings } from './types.ts';
import { BOT_CLASSES, DEFAULT_BOT_POLICY, DEFAULT_HEALTH_CHECK, DEFAULT_TIMEOUT_MS } from './types.ts';
import { entryBound } from '../platform/lru.ts';

/** T5 as the detection capability provides it (structural). */
export interface BehaviourLike {
  observe(event: { endpoint: string; ip: string; username?: string }): Promise<{ score: number; anomalies: { kind: string; zScore: number; detail: string }[] }>;
  observeFailure?(event: { ip: string }): Promise<number>;
}

/**
 * Failed authentication answers (401/403 from the backend) per client IP and gateway: at
 * `challengeAfter` failures in the window the client's requests are challenged, at `blockAfter`
 * blocked (block mode; monitor mode logs the decision). Counted in the cache (Redis when
 * configured, so replicas agree) in two fixed buckets of `windowMs`: the count is the current
 * bucket plus the previous one, so a failure counts for between one and two windows.
 */
export interface FailedAuthPolicy {
  readonly windowMs: number;
  readonly challengeAfter: number;
  readonly blockAfter: number;
}

export const DEFAULT_FAILED_AUTH_POLICY: FailedAuthPolicy = { windowMs: 5 * 60_000, challengeAfter: 10, blockAfter: 30 };

export interface ApiSecurityDeps {
  readonly db: Database;
  readonly cache: Cache;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly events: EventBus;
  readonly rateLimiter: RateLimiter;
  readonly engine: DetectionEngine;
  /** The org audit chain (gateway and geo-rule changes are recorded). */
  readonly audit: Pick<AuditLog, 'append'>;
  readonly config: {
    readonly secretKey: string;
    readonly allowPrivateTargets: boolean;
    readonly trustProxy: boolean;
    readonly geoBlocking: boolean;
    /** Host names svc itself answers on; no gateway may claim them. */
    readonly ownHosts?: readonly string[];
    /** Whether backend answers under `/gw/{id}` (svc's own origin) are sandboxed by CSP (default true). */
    readonly gatewayPathSandbox?: boolean;
  };
  readonly checkTarget: (url: string, field?: string) => Promise<URL>;
  /** T5 behavioural baselines (optional). */
  readonly behaviour?: BehaviourLike;
  /** Country of an IP (geo rules); default: geoip-lite, loaded on start() when geo-blocking is on. */
  readonly lookupCountry?: (ip: string) => string | null;
  /** Escalation on repeated 401/403 answers from the backend (default DEFAULT_FAILED_AUTH_POLICY). */
  readonly failedAuthPolicy?: FailedAuthPolicy;
  /** Proof-of-work difficulty in bits (default 16). */
  readonly challengeDifficulty?: number;
  /** Reverse-DNS verification of crawlers (default true). */
  readonly verifyCrawlers?: boolean;
  /** Per-IP limit on database lookups of gateway ids svc has not cached (default GATEWAY_LOOKUP_POLICY). */
  readonly lookupPolicy?: RateLimitPolicy;
  /** Entries of the gateway cache and, apart from it, of the unknown-id cache (default 10 000 each). */
  readonly gatewayCacheSize?: number;
}

export interface TrafficRequest {
  readonly gateway: Gateway;
  readonly method: string;
  /** Path below the gateway's mount point, starting with '/', without the query. */
  readonly path: string;
  /** Query string without '?' ('' when none). */
  readonly query: string;
  readonly headers: IncomingHttpHeaders;
  /** Header names in received order, lower case. */
  readonly headerNames: readonly string[];
  /** Header names in received order as the client spelled them (bot signals; optional). */
  readonly rawHeaderNames?: readonly string[];
  readonly httpVersion: string;
  readonly clientIp: string;
  readonly remoteAddress: string;
  readonly protocol: string;
  readonly host: string;
  readonly body: Readable;
  readonly requestId: string;
  /** Where the gateway is mounted for this request ('/gw/<id>' or the path prefix or ''). */
  readonly mount: string;
}

export interface DecisionSummary {
  score: number;
  decision: string;
  pattern: string | null;
}

export type TrafficOutcome =
  | { kind: 'forward'; status: number; headers: Record<string, string | string[]>; body: Readable; summary: DecisionSummary | null }
  | { kind: 'error'; status: number; code: ErrorCode; message?: string; details?: Record<string, unknown>; headers?: Record<string, string>; summary: DecisionSummary | null }
  | { kind: 'html'; status: number; headers: Record<string, string>; html: string; summary: DecisionSummary | null }
  | { kind: 'json'; status: number; headers: Record<string, string | string[]>; body: Record<string, unknown>; summary: DecisionSummary | null };

export interface GatewayInput {
  name?: string;
  backend_url?: string;
  mode?: GatewayMode;
  hostname?: string | null;
  path_prefix?: string | null;
  openapi?: unknown;
  rate_limit?: { requests_per_minute: number; burst?: number | null } | null;
  bot_policy?: Partial<Record<BotClass, BotAction>>;
  health_check?: { path?: string; interval_seconds?: number; timeout_ms?: number; unhealthy_after?: number } | null;
  timeout_ms?: number;
  block_details?: BlockDetails;
}

interface PreflightResult {
  outcome: TrafficOutcome | null;
  rateHeaders: Record<string, string>;
}

export interface ApiSecurity {
  readonly store: GatewayStore;
  create(orgId: string, actor: string, input: GatewayInput): Promise<Gateway>;
  update(orgId: string, actor: string, id: string, input: GatewayInput): Promise<Gateway>;
  remove(orgId: string, actor: string, id: string): Promise<void>;
  view(gateway: Gateway): Record<string, unknown>;
  endpoints(orgId: string, id: string): Promise<EndpointView[]>;
  createGeoRule(orgId: string, actor: string, input: { rule_name: string; action: 'block'; countries: string[]; response_code?: number; log?: boolean; gateway_id?: string | null }): Promise<GeoRule>;
  removeGeoRule(orgId: string, actor: string, id: string): Promise<void>;
  /**
   * A gateway by id for traffic (cached for a few seconds), or null. With a client IP, a lookup
   * that has to reach the database is charged to that IP first (SvcError RATE_LIMITED past it).
   */
  resolve(id: string, clientIp?: string): Promise<Gateway | null>;
  /** The gateway `resolve` would answer from its cache without waiting; undefined when it would have to look (or answer null). */
  resolveCached(id: string): Gateway | undefined;
  /** The gateway whose hostname/path prefix receives this request (synchronous, from the routing table). */
  route(host: string, path: string): { gateway: Gateway; mount: string } | null;
  handle(request: TrafficRequest): Promise<TrafficOutcome>;
  /** Checks a WebSocket handshake; null means forward it, otherwise the refusal. */
  /** Scores an upgrade handshake; `body` is the body it carried (read whole, at most 64 KiB), inspected like any request's. */
  inspectHandshake(request: Omit<TrafficRequest, 'body'>, body?: Buffer): Promise<TrafficOutcome | null>;
  readonly forwarder: Forwarder;
  readonly health: HealthChecker;
  readonly analyzer: Analyzer;
  readonly bots: BotClassifier;
  readonly challenges: Challenges;
  start(): Promise<void>;
  close(): Promise<void>;
}

const HOSTNAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const PATH_PREFIX = /^(?:\/[A-Za-z0-9._~-]{1,64}){1,8}$/;
const RESERVED_PREFIXES = ['/api', '/gw', '/health', '/metrics', '/openapi.json', '/dashboard', '/mcp', '/sensors', '/findings', '/__svc'];
/** Host names that always mean "this machine": never a gateway's. */
const LOCAL_HOSTS = ['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback'];
/**
 * Lookups of gateway ids svc has not cached, per client IP (the traffic routes carry no
 * credential, so this is what stands between a flood of made-up ids and the database).
 */
export const GATEWAY_LOOKUP_POLICY: RateLimitPolicy = {
  windows: [
    { name: 'minute', windowMs: 60_000, limit: 300 },
    { name: 'burst', windowMs: 1_000, limit: 50 },
  ],
  concurrency: 0,
  headerWindow: 'minute',
};
/** How long an id that is no gateway is remembered as such. */
const UNKNOWN_GATEWAY_MS = 30_000;
const ROUTE_REFRESH_MS = 10_000;
const GATEWAY_CACHE_MS = 5_000;
/**
 * While the database is down, a gateway (and its org's geo rules) this process read from it
 * within this time is served from that last known configuration; the database is asked again
 * every GATEWAY_CACHE_MS. A gateway not read within it, or never seen by this process, is
 * refused (503 SERVICE_UNAVAILABLE) until the database is back.
 */
export const GATEWAY_STALE_ON_OUTAGE_MS = 24 * 60 * 60_000;
const DECISION_RANK: Record<string, number> = { allow: 0, log: 1, alert: 2, challenge: 3, block: 4 };
const LOGIN_PATH = /(?:^|\/)(?:login|signin|sign-in|log-in|auth(?:enticate)?|token|session|oauth)(?:\/|$)/i;
const SAMPLE_BYTES = 65_536;
const SAMPLED_TYPES = /json|xml|text\/|x-www-form-urlencoded/i;

/** Whether a request path is one of svc's own (never rewritten onto a gateway). */
export function isReservedPath(url: string): boolean {
  const lower = url.toLowerCase();
  return RESERVED_PREFIXES.some((reserved) => lower === reserved || lower.startsWith(`${reserved}/`) || lower.startsWith(`${reserved}?`));
}

/**
 * Why a gateway may not claim this (normalized) hostname, or null: IP literals (including the
 * numeric forms URL parsers accept, e.g. 2130706433 or 0x7f.1), localhost and *.localhost, and the
 * hosts svc itself answers on.
 */
export function forbiddenHostname(hostname: string, ownHosts: readonly string[]): string | null {
  const lastLabel = hostname.slice(hostname.lastIndexOf('.') + 1);
  if (isIP(hostname) !== 0 || /^(?:0x[0-9a-f]*|[0-9]+)$/.test(lastLabel)) return 'hostname must be a DNS name, not an IP address';
  if (LOCAL_HOSTS.includes(hostname) || hostname.endsWith('.localhost')) return 'hostname must not be localhost or *.localhost';
  if (ownHosts.some((own) => own.toLowerCase().replace(/\.$/, '') === hostname)) return "hostname must not be one of svc's own hosts";
  return null;
}

function invalid(field: string, message: string): SvcError {
  return new SvcError('VALIDATION_FAILED', { message, details: { field } });
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

export function createApiSecurity(deps: ApiSecurityDeps): ApiSecurity {
  const store = createGatewayStore(deps.db);
  const audit = deps.audit;
  const forwarder = createForwarder({ allowPrivate: deps.config.allowPrivateTargets });
  // Health checks go through the forwarder's guarded dispatcher: a backend host that later
  // resolves to a private or metadata address is never probed.
  const health = createHealthChecker({ events: deps.events, metrics: deps.metrics, dispatcher: forwarder.dispatcher });
  const analyzer = createAnalyzer();
  // Behind a trusted proxy the header order and spelling are the proxy's, not the client's.
  const bots = createBotClassifier({ verifyCrawlers: deps.verifyCrawlers ?? true, headerShape: !deps.config.trustProxy });
  const challenges = createChallenges({ key: Buffer.from(deps.config.secretKey), ...(deps.challengeDifficulty === undefined ? {} : { difficulty: deps.challengeDifficulty }) });
  // `at`: until when (minus GATEWAY_CACHE_MS) the entry is answered without asking the database;
  // `readAt`: when the database last said so (the stale-on-outage window counts from it).
  const gateways = new LRUCache<string, { gateway: Gateway; at: number; readAt: number }>(entryBound(deps.gatewayCacheSize ?? 10_000));
  // Ids that are no gateway, apart from the real ones: a flood of made-up ids evicts only its own kind.
  const unknownIds = new LRUCache<string, true>({ ...entryBound(deps.gatewayCacheSize ?? 10_000), ttl: UNKNOWN_GATEWAY_MS });
  const lookupPolicy = deps.lookupPolicy ?? GATEWAY_LOOKUP_POLICY;
  const ownHosts = (deps.config.ownHosts ?? []).filter((host) => host !== '');
  let routes: { host: string | null; prefix: string | null; gateway: Gateway }[] = [];
  let routeTimer: NodeJS.Timeout | null = null;
  let lookupCountry = deps.lookupCountry ?? null;
  const geoRules = new LRUCache<string, { rules: GeoRule[]; at: number; readAt: number }>(entryBound(10_000));
  const samples = new LRUCache<string, number>(entryBound(5_000));
  const failedAuth = deps.failedAuthPolicy ?? DEFAULT_FAILED_AUTH_POLICY;
  const failureKey = (gatewayId: string, ip: string, bucket: number) => `${deps.cache.prefix}apisec:authfail:${gatewayId}:${ip.slice(0, 64)}:${bucket}`;
  const failuresOf = async (gatewayId: string, ip: string): Promise<number> => {
    const bucket = Math.floor(Date.now() / failedAuth.windowMs);
    const [current, previous] = await Promise.all([deps.cache.get(failureKey(gatewayId, ip, bucket)), deps.cache.get(failureKey(gatewayId, ip, bucket - 1))]);
    return Number(current ?? 0) + Number(previous ?? 0);
  };
  /** failuresOf without waiting, when the counts live in this process (no Redis connected); else null. */
  const failuresNow = (gatewayId: string, ip: string): number | null => {
    if (deps.cache.redis() !== null) return null;
    const bucket = Math.floor(Date.now() / failedAuth.windowMs);
    return deps.cache.memory.count(failureKey(gatewayId, ip, bucket)) + deps.cache.memory.count(failureKey(gatewayId, ip, bucket - 1));
  };
  const recordFailure = (gatewayId: string, ip: string): void => {
    const bucket = Math.floor(Date.now() / failedAuth.windowMs);
    void deps.cache.incr(failureKey(gatewayId, ip, bucket), failedAuth.windowMs * 2).catch(() => undefined);
    void deps.behaviour?.observeFailure?.({ ip }).catch(() => undefined);
  };

  const refreshRoutes = async (): Promise<void> => {
    const list = await store.routed();
    routes = list
      .map((gateway) => ({ host: gateway.hostname, prefix: gateway.pathPrefix, gateway }))
      // Most specific first: hostname and prefix, then longer prefixes.
      .sort((left, right) => Number(right.host !== null) - Number(left.host !== null) || (right.prefix?.length ?? 0) - (left.prefix?.length ?? 0));
  };

  // The parsed backend URL of each gateway record (records are replaced, never changed, on update).
  const backends = new WeakMap<Gateway, URL>();
  const backendOf = (gateway: Gateway): URL => {
    let url = backends.get(gateway);
    if (url === undefined) {
      url = new URL(gateway.backendUrl);
      backends.set(gateway, url);
    }
    return url;
  };

  const remember = (gateway: Gateway | null, id: string) => {
    if (gateway === null) {
      gateways.delete(id);
      unknownIds.set(id, true);
    } else {
      unknownIds.delete(id);
      const now = Date.now();
      gateways.set(id, { gateway, at: now, readAt: now });
    }
  };

  const validate = async (input: GatewayInput, current: Gateway | null): Promise<GatewayFields> => {
    const name = input.name ?? current?.name;
    if (name === undefined || name.trim() === '') throw invalid('name', 'name is required (1–200 characters)');
    const backendRaw = input.backend_url ?? current?.backendUrl;
    if (backendRaw === undefined) throw invalid('backend_url', 'backend_url is required (an http or https URL)');
    const backend = await deps.checkTarget(backendRaw, 'backend_url');
    if (backend.search !== '' || backend.hash !== '') throw invalid('backend_url', 'backend_url must not carry a query or fragment');
    const mode = input.mode ?? current?.mode ?? 'monitor';
    let hostname = input.hostname === undefined ? (current?.hostname ?? null) : input.hostname;
    if (hostname !== null) {
      hostname = hostname.trim().toLowerCase().replace(/\.$/, '');
      if (!HOSTNAME.test(hostname)) throw invalid('hostname', 'hostname must be a DNS name without port, e.g. api.example.com');
      const forbidden = forbiddenHostname(hostname, ownHosts);
      if (forbidden !== null) throw invalid('hostname', forbidden);
    }
    let pathPrefix = input.path_prefix === undefined ? (current?.pathPrefix ?? null) : input.path_prefix;
    if (pathPrefix !== null) {
      pathPrefix = pathPrefix.replace(/\/+$/, '');
      if (!PATH_PREFIX.test(pathPrefix)) throw invalid('path_prefix', 'path_prefix must look like /shop or /v2/orders (up to 8 segments of letters, digits, . _ ~ -)');
      const lower = pathPrefix.toLowerCase();
      // svc's own paths are never rewritten onto a gateway (not even on its hostname).
      if (RESERVED_PREFIXES.some((reserved) => lower.startsWith(reserved))) {
        throw invalid('path_prefix', `path_prefix must not start with one of svc's own paths (${RESERVED_PREFIXES.join(', ')})`);
      }
    }
    const openapi = input.openapi === undefined ? (current?.openapi ?? null) : input.openapi;
    if (openapi !== null) {
      const problem = openApiProblem(openapi);
      if (problem !== null) throw invalid('openapi', `openapi ${problem}`);
    }
    const previous = current?.settings;
    const rateLimit =
      input.rate_limit === undefined
        ? (previous?.rateLimit ?? null)
        : input.rate_limit === null
          ? null
          : { requestsPerMinute: input.rate_limit.requests_per_minute, burst: input.rate_limit.burst ?? null };
    const healthCheck =
      input.health_check === undefined
        ? (previous?.healthCheck ?? null)
        : input.health_check === null
          ? null
          : {
              path: input.health_check.path ?? DEFAULT_HEALTH_CHECK.path,
              intervalSeconds: input.health_check.interval_seconds ?? DEFAULT_HEALTH_CHECK.intervalSeconds,
              timeoutMs: input.health_check.timeout_ms ?? DEFAULT_HEALTH_CHECK.timeoutMs,
              unhealthyAfter: input.health_check.unhealthy_after ?? DEFAULT_HEALTH_CHECK.unhealthyAfter,
            };
    if (healthCheck !== null && !healthCheck.path.startsWith('/')) throw invalid('health_check.path', 'health_check.path must start with /');
    const settings: GatewaySettings = {
      rateLimit,
      botPolicy: { ...DEFAULT_BOT_POLICY, ...previous?.botPolicy, ...input.bot_policy },
      healthCheck,
      timeoutMs: input.timeout_ms ?? previous?.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      blockDetails: input.block_details ?? previous?.blockDetails ?? 'hidden',
    };
    return { name: name.trim(), backendUrl: backend.toString().replace(/\/$/, backend.pathname === '/' ? '' : '/').replace(/\/$/, ''), mode, hostname, pathPrefix, openapi, settings };
  };

  // A change's entry is appended in the change's transaction (the store's `within`), the whole
  // tried again on a lost lock conflict: both are stored or neither (an outage answers 503).
  const note = (orgId: string, actor: string, action: string, target: string, details: Record<string, unknown>, tx: Queryable) =>
    audit.append(orgId, { actor, action, target, outcome: 'success', details }, { tx });

  const summaryOf = (decision: ThreatDecision | null, final: string, pattern: string | null, score: number): DecisionSummary => ({
    score: decision?.threat_score ?? score,
    decision: final,
    pattern: pattern ?? decision?.patterns_matched[0]?.id ?? null,
  });

  /** Resolves once the event's evidence is on disk (a block is answered after it). */
  const blockedEvent = (request: Omit<TrafficRequest, 'body'>, decision: ThreatDecision | null, score: number, patternIds: string[], event: 'threat.blocked' | 'threat.alert', action: string): Promise<void> => {
    return deps.events.emit(
      request.gateway.orgId,
      event,
      {
        request_id: request.requestId,
        threat_score: score,
        decision: action,
        pattern_ids: patternIds,
        session_id: headerText(request.headers['x-session-id'])?.slice(0, 256) ?? '',
        session_request_count: decision?.session_request_count ?? 1,
        session_escalation_factor: decision?.session_escalation_factor ?? 1,
        source_ip: request.clientIp,
        method: request.method,
        path: request.path.slice(0, 2_048),
        user_agent: headerText(request.headers['user-agent'])?.slice(0, 512) ?? '',
      },
      { gatewayId: request.gateway.id },
    );
  };

  const rateLimitPolicy = (gateway: Gateway): RateLimitPolicy | null => {
    const settings = gateway.settings.rateLimit;
    if (settings === null) return null;
    const windows = [{ name: 'minute', windowMs: 60_000, limit: settings.requestsPerMinute }];
    if (settings.burst !== null) windows.push({ name: 'burst', windowMs: 1_000, limit: settings.burst });
    return { windows, concurrency: 0, headerWindow: 'minute' };
  };

  const rulesOf = async (orgId: string): Promise<GeoRule[]> => {
    const cached = geoRules.get(orgId);
    const now = Date.now();
    if (cached !== undefined && now - cached.at < GATEWAY_CACHE_MS) return cached.rules;
    let rules: GeoRule[];
    try {
      rules = await store.geoRulesOf(orgId);
    } catch (error) {
      // Database down: the rules last read stay in force (see GATEWAY_STALE_ON_OUTAGE_MS).
      if (cached === undefined || now - cached.readAt >= GATEWAY_STALE_ON_OUTAGE_MS || !isDatabaseOutage(error)) throw error;
      geoRules.set(orgId, { ...cached, at: now });
      return cached.rules;
    }
    geoRules.set(orgId, { rules, at: now, readAt: now });
    return rules;
  };

  const PASSED: { outcome: null; rateHeaders: Record<string, string> } = Object.freeze({ outcome: null, rateHeaders: Object.freeze({}) as Record<string, string> });

  /**
   * Steps 1–3, shared by HTTP and WebSocket handshakes. A plain value when nothing needs the
   * cache or the database (healthy backend, no geo rules to read, no rate limit), so the common
   * path costs no event-loop turn.
   */
  const preflight = (request: Omit<TrafficRequest, 'body'>): PreflightResult | Promise<PreflightResult> => {
    const { gateway } = request;
    if (!health.isHealthy(gateway.id)) {
      return { outcome: { kind: 'error', status: 503, code: 'BACKEND_DOWN', headers: { 'retry-after': '5' }, summary: null }, rateHeaders: {} };
    }
    if (!(deps.config.geoBlocking && lookupCountry !== null) && gateway.settings.rateLimit === null) return PASSED;
    return preflightAsync(request);
  };

  const preflightAsync = async (request: Omit<TrafficRequest, 'body'>): Promise<PreflightResult> => {
    const { gateway } = request;
    const rateHeaders: Record<string, string> = {};
    if (deps.config.geoBlocking && lookupCountry !== null) {
      const rules = (await rulesOf(gateway.orgId)).filter((rule) => rule.gatewayId === null || rule.gatewayId === gateway.id);
      if (rules.length > 0) {
        const country = lookupCountry(request.clientIp);
        const rule = country === null ? undefined : rules.find((candidate) => candidate.countries.includes(country));
        if (rule !== undefined) {
          const summary = { score: 1, decision: 'block', pattern: `geo.${rule.id}` };
          return {
            outcome: { kind: 'error', status: rule.responseCode, code: 'GEO_BLOCKED', details: { rule_name: rule.ruleName, country }, summary: rule.log ? summary : null },
            rateHeaders,
          };
        }
      }
    }
    const policy = rateLimitPolicy(gateway);
    if (policy !== null) {
      const decision = await deps.rateLimiter.hit(`gw:${gateway.id}:ip:${request.clientIp}`, policy);
      rateHeaders['x-ratelimit-limit'] = String(decision.limit);
      rateHeaders['x-ratelimit-remaining'] = String(decision.remaining);
      rateHeaders['x-ratelimit-reset'] = String(decision.resetAt);
      if (!decision.allowed) {
        deps.metrics.rateLimitHits.inc({ scope: 'per_ip', gateway: gateway.id });
        const window = policy.windows.find((candidate) => candidate.name === decision.refusedBy) ?? policy.windows[0]!;
        // One event per client and window: a flood of refusals must not become a flood of webhooks.
        const first = await deps.cache.setIfAbsent(`apisec:rl-event:${gateway.id}:${request.clientIp}:${window.name}`, '1', window.windowMs).catch(() => false);
        if (first) {
          deps.events.emit(
            gateway.orgId,
            'rate_limit.exceeded',
            { scope: 'per_ip', identifier: request.clientIp, limit: window.limit, window_seconds: Math.round(window.windowMs / 1_000), retry_after: decision.retryAfter },
            { gatewayId: gateway.id },
          );
        }
        return {
          outcome: { kind: 'error', status: 429, code: 'RATE_LIMITED', headers: { ...rateHeaders, 'retry-after': String(decision.retryAfter) }, summary: null },
          rateHeaders,
        };
      }
    }
    return { outcome: null, rateHeaders };
  };

  /** Scores a request (detection + T5 + bots + analyzer) and applies the response policy. */
  const policy = async (
    request: Omit<TrafficRequest, 'body'>,
    body: string | undefined,
  ): Promise<{ outcome: TrafficOutcome | null; summary: DecisionSummary; analyzerKey: string | null; bot: BotVerdict; afterDispatch?: () => void }> => {
    const { gateway } = request;
    const target = request.query === '' ? request.path : `${request.path}?${request.query}`;
    const observation = analyzer.observeRequest(gateway, { method: request.method, path: request.path, headers: request.headers });
    const bot = bots.classify({ userAgent: headerText(request.headers['user-agent']), headerNames: request.headerNames, ...(request.rawHeaderNames === undefined ? {} : { rawHeaderNames: request.rawHeaderNames }), headers: request.headers, clientIp: request.clientIp, scope: gateway.id, path: request.path, httpVersion: request.httpVersion });
    const sessionId = headerText(request.headers['x-session-id'])?.slice(0, 256);
    const inspecting = deps.engine.inspect({
        kind: 'http',
        request: { method: request.method, path: target, headers: request.headers, ...(body === undefined ? {} : { body }) },
        orgId: gateway.orgId,
        requestId: request.requestId,
        sourceIp: request.clientIp,
        gatewayId: gateway.id,
        pillar: 'api_security',
        ...(sessionId === undefined || sessionId === '' ? {} : { sessionId }),
      });
    const counted = failuresNow(gateway.id, request.clientIp);
    let decision: ThreatDecision;
    let failures: number;
    if (counted !== null) {
      decision = await inspecting;
      failures = counted;
    } else [decision, failures] = await Promise.all([inspecting, failuresOf(gateway.id, request.clientIp).catch(() => 0)]);
    const behaviourKey = deps.behaviour === undefined ? null : observation.key;
    const observeBehaviour = (endpoint: string) =>
      deps.behaviour!.observe({ endpoint, ip: request.clientIp, ...(usernameOf(request, body) ?? {}) }).catch(() => null);
    if (behaviourKey === null) return answerAfterEvidence(settle(request, decision, null, failures, bot, observation));
    // T5 waits for the backend's answer when it cannot change what happens to the request: a
    // monitor-mode gateway, or nothing above alert without it and a detection score that even a
    // full behaviour score cannot lift to challenge. Its anomalies then join the decision (the
    // log line, the threat.alert event) while the backend answers, off the request's latency.
    const without = actionOf(decision, null, failures, bot, observation, gateway);
    if (gateway.mode === 'monitor' || (DECISION_RANK[without.action]! <= DECISION_RANK.alert! && !behaviourCanEscalate(decision))) {
      const summary = summaryOf(decision, without.action, without.pattern, without.score);
      summary.score = without.score;
      const afterDispatch = () => {
        setImmediate(() => {
          void observeBehaviour(behaviourKey).then((behaviour) => {
            const full = settle(request, decision, behaviour, failures, bot, observation);
            Object.assign(summary, full.summary);
          });
        });
      };
      return { outcome: null, summary, analyzerKey: observation.key, bot, afterDispatch };
    }
    return answerAfterEvidence(settle(request, decision, await observeBehaviour(behaviourKey), failures, bot, observation));
  };

  /** A block is answered once its evidence (audit entry, webhook event) is on disk: a SIGKILL after the answer loses none of it. */
  const answerAfterEvidence = async <T extends { held?: Promise<void> }>(settled: T): Promise<T> => {
    if (settled.held !== undefined) await settled.held;
    return settled;
  };

  /** The action before any answer is built: detection with T5 beside it, then bots, failed logins and endpoint risk. */
  const actionOf = (
    decision: ThreatDecision,
    behaviour: { score: number; anomalies: { kind: string }[] } | null,
    failures: number,
    bot: BotVerdict,
    observation: { riskBlock: { status: string; risk: number } | null },
    gateway: Gateway,
  ): { score: number; action: string; pattern: string | null; patternIds: string[] } => {
    // Behaviour is weak evidence: at most half its score joins the detection score, so on its own
    // it can reach the alert band but never challenge or block.
    let score = decision.decision_score ?? decision.threat_score;
    const patternIds = decision.patterns_matched.map((pattern) => pattern.id);
    if (behaviour !== null && behaviour.score > 0) {
      score = joinBehaviourScore(score, behaviour.score);
      for (const anomaly of behaviour.anomalies) patternIds.push(`t5.${anomaly.kind}`);
    }
    let action: string = behaviour !== null && behaviour.score > 0 ? decide(score, decision.thresholds) : decision.decision;
    let pattern: string | null = null;
    const botAction = gateway.settings.botPolicy[bot.class];
    if (botAction !== 'allow' && DECISION_RANK[botAction]! > DECISION_RANK[action]!) {
      action = botAction;
      pattern = `bot.${bot.class}`;
      patternIds.unshift(pattern);
    }
    const failureAction = failures >= failedAuth.blockAfter ? 'block' : failures >= failedAuth.challengeAfter ? 'challenge' : null;
    if (failureAction !== null && DECISION_RANK[failureAction]! > DECISION_RANK[action]!) {
      action = failureAction;
      pattern = 't5.failed_auth';
      patternIds.unshift(pattern);
    }
    if (observation.riskBlock !== null && action !== 'block') {
      action = 'block';
      pattern = `apisec.${observation.riskBlock.status}-endpoint`;
      patternIds.unshift(pattern);
    }
    return { score, action, pattern, patternIds };
  };

  /** Whether a full behaviour score could lift this detection score to challenge or block. */
  const behaviourCanEscalate = (decision: ThreatDecision): boolean => {
    const highest = joinBehaviourScore(decision.decision_score ?? decision.threat_score, 1);
    return DECISION_RANK[decide(highest, decision.thresholds)]! > DECISION_RANK.alert!;
  };

  /** Applies the response policy to a scored request: the answer (or null: forward), its summary and events. */
  const settle = (
    request: Omit<TrafficRequest, 'body'>,
    decision: ThreatDecision,
    behaviour: { score: number; anomalies: { kind: string }[] } | null,
    failures: number,
    bot: BotVerdict,
    observation: { key: string | null; riskBlock: { status: string; risk: number } | null },
  ): { outcome: TrafficOutcome | null; summary: DecisionSummary; analyzerKey: string | null; bot: BotVerdict; held?: Promise<void> } => {
    const { gateway } = request;
    const { score, patternIds, action, pattern } = actionOf(decision, behaviour, failures, bot, observation, gateway);
    // The log line names one pattern: the policy's own, else the engine's first, else the first T5 anomaly.
    const behaviourPattern = behaviour !== null && behaviour.anomalies.length > 0 ? `t5.${behaviour.anomalies[0]!.kind}` : null;
    const summary = summaryOf(decision, action, pattern ?? (decision.patterns_matched.length === 0 ? behaviourPattern : null), score);
    summary.score = score;
    if (gateway.mode === 'monitor' || action === 'allow' || action === 'log') return { outcome: null, summary, analyzerKey: observation.key, bot };
    if (action === 'alert') {
      blockedEvent(request, decision, score, patternIds, 'threat.alert', 'alert');
      return { outcome: null, summary, analyzerKey: observation.key, bot };
    }
    if (action === 'challenge') {
      const clearance = presentedClearance(request.headers);
      if (clearance !== null && challenges.cleared(clearance, gateway.id, request.clientIp)) {
        summary.decision = 'challenge_passed';
        return { outcome: null, summary, analyzerKey: observation.key, bot };
      }
      return { outcome: challengeOutcome(request, decision, summary), summary, analyzerKey: observation.key, bot };
    }
    const explain = (id: string) =>
      id.startsWith('bot.')
        ? `bot class ${bot.class} (${bot.reasons.join('; ')})`
        : id === 't5.failed_auth'
          ? `${failures} authentication failures (401/403 from the backend) from this client within ${Math.round(failedAuth.windowMs / 60_000)}-${Math.round((2 * failedAuth.windowMs) / 60_000)} minutes`
          : `risk ${observation.riskBlock?.risk ?? ''} above ${50} on an endpoint outside the inventory`;
    const held = blockedEvent(request, decision, score, patternIds, 'threat.blocked', 'block');
    if (gateway.settings.blockDetails === 'hidden') return { held, outcome: hiddenBlock(request, summary), summary, analyzerKey: observation.key, bot };
    return {
      held,
      outcome: {
        kind: 'error',
        status: 403,
        code: 'THREAT_BLOCKED',
        details: blockDetails({
          allowed: false,
          threat_score: score,
          decision: 'block',
          explanation: pattern === null ? decision.explanation : `${pattern}: ${explain(pattern)}`,
          patterns_matched: pattern === null ? decision.patterns_matched : [{ id: pattern, name: pattern, confidence: 1 }, ...decision.patterns_matched],
          session_escalation_factor: decision.session_escalation_factor,
          session_request_count: decision.session_request_count,
        }),
        summary,
      },
      summary,
      analyzerKey: observation.key,
      bot,
    };
  };

  /** A block that tells the client nothing but the request id: a page for a browser, the error code for an API client. */
  const hiddenBlock = (request: Omit<TrafficRequest, 'body'>, summary: DecisionSummary): TrafficOutcome => {
    const accept = headerText(request.headers.accept) ?? '';
    if (accept.includes('text/html')) {
      return { kind: 'html', status: 403, headers: { 'cache-control': 'no-store', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'" }, html: blockPage(request.requestId), summary };
    }
    return { kind: 'error', status: 403, code: 'THREAT_BLOCKED', summary };
  };

  const challengeOutcome = (request: Omit<TrafficRequest, 'body'>, decision: ThreatDecision, summary: DecisionSummary): TrafficOutcome => {
    const challenge = challenges.issue(request.gateway.id, request.clientIp);
    const verifyUrl = `${request.mount}${CHALLENGE_PATH}`;
    const accept = headerText(request.headers.accept) ?? '';
    if (request.method === 'GET' && accept.includes('text/html')) {
      return {
        kind: 'html',
        status: 403,
        headers: { 'cache-control': 'no-store', 'content-security-policy': "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'", 'x-svc-challenge': challenge.id },
        html: challengePage(challenge, verifyUrl, request.requestId),
        summary,
      };
    }
    return {
      kind: 'error',
      status: 403,
      code: 'CHALLENGE_REQUIRED',
      details: {
        challenge: { id: challenge.id, token: challenge.token, algorithm: challenge.algorithm, difficulty: challenge.difficulty, expires_at: challenge.expiresAt.toISOString(), verify_url: verifyUrl },
        ...(request.gateway.settings.blockDetails === 'full' ? blockDetails({ threat_score: summary.score, decision: 'challenge', patterns_matched: decision.patterns_matched }) : {}),
      },
      summary,
    };
  };

  const verifyChallenge = async (request: TrafficRequest): Promise<TrafficOutcome> => {
    const { head } = await bufferHead(request.body, 4_096);
    let value: unknown;
    try {
      value = JSON.parse(head.toString('utf8'));
    } catch {
      return { kind: 'error', status: 400, code: 'INVALID_JSON', summary: null };
    }
    // `null`, a number or an array is valid JSON but not the object asked for.
    const parsed: { token?: unknown; nonce?: unknown } = value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {};
    if (typeof parsed.token !== 'string' || (typeof parsed.nonce !== 'string' && typeof parsed.nonce !== 'number')) {
      return { kind: 'error', status: 400, code: 'VALIDATION_FAILED', message: 'Send { "token": <challenge token>, "nonce": <answer> }.', details: { field: typeof parsed.token !== 'string' ? 'token' : 'nonce' }, summary: null };
    }
    const result = await challenges.verify({
      scope: request.gateway.id,
      client: request.clientIp,
      token: parsed.token,
      nonce: String(parsed.nonce),
      markUsed: (id, ttlMs) => deps.cache.setIfAbsent(`apisec:challenge-used:${id}`, '1', Math.max(ttlMs, 1_000)),
    });
    if (!result.ok) return { kind: 'error', status: 403, code: 'CHALLENGE_FAILED', details: { reason: result.reason }, summary: null };
    const maxAge = Math.floor((result.expiresAt.getTime() - Date.now()) / 1_000);
    const secure = request.protocol === 'https' ? '; Secure' : '';
    return {
      kind: 'json',
      status: 200,
      headers: { 'set-cookie': `${CLEARANCE_COOKIE}=${result.clearance}; Max-Age=${maxAge}; Path=${request.mount === '' ? '/' : request.mount}; HttpOnly; SameSite=Lax${secure}`, 'cache-control': 'no-store' },
      body: { clearance: result.clearance, expires_at: result.expiresAt.toISOString(), challenge_id: result.challengeId },
      summary: null,
    };
  };

  const shouldSample = (key: string | null): boolean => {
    if (key === null) return false;
    const seen = (samples.get(key) ?? 0) + 1;
    samples.set(key, seen);
    return seen <= 5 || seen % 20 === 0;
  };

  /** Passes the body through untouched while keeping a copy of its head for classification. */
  const tap = (body: Readable, onDone: (head: Buffer) => void): Readable => {
    const chunks: Buffer[] = [];
    let size = 0;
    const transform = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        if (size < SAMPLE_BYTES) {
          chunks.push(chunk);
          size += chunk.length;
        }
        callback(null, chunk);
      },
      flush(callback) {
        callback();
        try {
          onDone(Buffer.concat(chunks).subarray(0, SAMPLE_BYTES));
        } catch {
          // classification is best effort
        }
      },
    });
    body.on('error', (error) => transform.destroy(error));
    return body.pipe(transform);
  };

  const api: ApiSecurity = {
    store,
    forwarder,
    health,
    analyzer,
    bots,
    challenges,
    async create(orgId, actor, input) {
      const fields = await validate(input, null);
      const gateway = await retryingLockConflicts(() =>
        store.create(orgId, fields, (tx, created) =>
          note(orgId, actor, 'gateway.create', created.id, { name: created.name, backend_url: created.backendUrl, mode: created.mode, hostname: created.hostname, path_prefix: created.pathPrefix }, tx),
        ),
      );
      remember(gateway, gateway.id);
      if (gateway.hostname !== null || gateway.pathPrefix !== null) await refreshRoutes();
      return gateway;
    },
    async update(orgId, actor, id, input) {
      const changed = Object.keys(input).filter((key) => key !== 'openapi').concat(input.openapi === undefined ? [] : ['openapi']);
      // Validation (which may resolve DNS) happens before the row is locked, merging the change into
      // the gateway as read then; the write goes ahead only if the locked row is still that one.
      // Changed meanwhile (another PATCH), the attempt fails as a lost lock conflict and the whole is
      // made again from a fresh read: the fields the other change set are kept, not written back
      // with the values this one had read.
      const gateway = await retryingLockConflicts(async () => {
        const current = await store.get(orgId, id);
        const prepared = await validate(input, current);
        return store.update(
          orgId,
          id,
          (locked) => {
            if (JSON.stringify(locked) !== JSON.stringify(current)) throw Object.assign(new Error('the gateway changed since it was read'), { code: '40001' });
            return prepared;
          },
          (tx, updated) => note(orgId, actor, 'gateway.update', id, { changed, mode: updated.mode }, tx),
        );
      });
      remember(gateway, gateway.id);
      analyzer.forget(id);
      await refreshRoutes();
      return gateway;
    },
    async remove(orgId, actor, id) {
      await retryingLockConflicts(() => store.remove(orgId, id, (tx, removed) => note(orgId, actor, 'gateway.delete', id, { name: removed.name }, tx)));
      remember(null, id);
      health.forget(id);
      analyzer.forget(id);
      await refreshRoutes();
    },
    view(gateway) {
      const state = health.state(gateway.id);
      const settings = gateway.settings;
      return {
        id: gateway.id,
        name: gateway.name,
        backend_url: gateway.backendUrl,
        mode: gateway.mode,
        hostname: gateway.hostname,
        path_prefix: gateway.pathPrefix,
        endpoint: `/gw/${gateway.id}`,
        openapi: gateway.openapi === null ? null : { operations: countOperations(gateway.openapi) },
        rate_limit: settings.rateLimit === null ? null : { requests_per_minute: settings.rateLimit.requestsPerMinute, burst: settings.rateLimit.burst },
        bot_policy: settings.botPolicy,
        health_check: settings.healthCheck === null ? null : { path: settings.healthCheck.path, interval_seconds: settings.healthCheck.intervalSeconds, timeout_ms: settings.healthCheck.timeoutMs, unhealthy_after: settings.healthCheck.unhealthyAfter },
        timeout_ms: settings.timeoutMs,
        block_details: settings.blockDetails,
        health: state === null ? { status: 'unknown' } : { status: state.healthy ? 'healthy' : 'down', consecutive_failures: state.consecutiveFailures, last_status: state.lastStatus, last_checked_at: state.lastCheckedAt?.toISOString() ?? null },
        created_at: gateway.createdAt.toISOString(),
        updated_at: gateway.updatedAt.toISOString(),
      };
    },
    async endpoints(orgId, id) {
      return analyzer.endpoints(await store.get(orgId, id));
    },
    async createGeoRule(orgId, actor, input) {
      const countries = [...new Set(input.countries.map((country) => country.toUpperCase()))];
      const fields = { gatewayId: input.gateway_id ?? null, ruleName: input.rule_name, action: input.action, countries, responseCode: input.response_code ?? 403, log: input.log ?? true };
      const rule = await retryingLockConflicts(() =>
        store.createGeoRule(orgId, fields, (tx, created) =>
          note(orgId, actor, 'geo_rule.create', created.id, { rule_name: created.ruleName, countries, response_code: created.responseCode, gateway_id: created.gatewayId, enforced: deps.config.geoBlocking }, tx),
        ),
      );
      geoRules.delete(orgId);
      return rule;
    },
    async removeGeoRule(orgId, actor, id) {
      await retryingLockConflicts(() => store.removeGeoRule(orgId, id, (tx, removed) => note(orgId, actor, 'geo_rule.delete', id, { rule_name: removed.ruleName }, tx)));
      geoRules.delete(orgId);
    },
    async resolve(id, clientIp) {
      const cached = gateways.get(id);
      if (cached !== undefined && Date.now() - cached.at < GATEWAY_CACHE_MS) return cached.gateway;
      if (unknownIds.has(id)) return null;
      if (clientIp !== undefined) {
        const gate = await deps.rateLimiter.hit(`gwlookup:${clientIp}`, lookupPolicy);
        if (!gate.allowed) {
          deps.metrics.rateLimitHits.inc({ scope: 'per_ip', gateway: 'lookup' });
          throw new SvcError('RATE_LIMITED', { headers: { 'Retry-After': String(gate.retryAfter) }, details: { retry_after: gate.retryAfter } });
        }
      }
      let gateway: Gateway | null;
      try {
        gateway = await store.findById(id);
      } catch (error) {
        // Database down: the gateway is served from the configuration last read, for a while
        // (GATEWAY_STALE_ON_OUTAGE_MS), and the database is asked again after GATEWAY_CACHE_MS.
        const now = Date.now();
        if (cached === undefined || now - cached.readAt >= GATEWAY_STALE_ON_OUTAGE_MS || !isDatabaseOutage(error)) throw error;
        if (gateways.get(id) === cached) gateways.set(id, { ...cached, at: now });
        return cached.gateway;
      }
      remember(gateway, id);
      return gateway;
    },
    resolveCached(id) {
      const cached = gateways.get(id);
      return cached !== undefined && Date.now() - cached.at < GATEWAY_CACHE_MS ? cached.gateway : undefined;
    },
    route(host, path) {
      if (routes.length === 0) return null;
      // svc's own paths stay svc's on every host: a gateway never receives /api/v1/… (and the
      // credentials that come with it).
      if (isReservedPath(path)) return null;
      const bareHost = host.toLowerCase().replace(/:\d+$/, '');
      for (const route of routes) {
        if (route.host !== null && route.host !== bareHost) continue;
        if (route.prefix === null) return { gateway: route.gateway, mount: '' };
        if (path === route.prefix || path.startsWith(`${route.prefix}/`) || path.startsWith(`${route.prefix}?`)) return { gateway: route.gateway, mount: route.prefix };
      }
      return null;
    },
    async inspectHandshake(request, body) {
      const pending = preflight(request);
      const first = pending instanceof Promise ? await pending : pending;
      if (first.outcome !== null) return first.outcome;
      const scored = await policy(request, body === undefined || body.length === 0 ? undefined : inspectableBody(body, headerText(request.headers['content-type'])));
      scored.afterDispatch?.();
      return scored.outcome;
    },
    async handle(request) {
      if (request.path === CHALLENGE_PATH && request.method === 'POST') return verifyChallenge(request);
      const pending = preflight(request);
      const first = pending instanceof Promise ? await pending : pending;
      if (first.outcome !== null) {
        request.body.resume();
        return first.outcome;
      }
      const contentType = headerText(request.headers['content-type']);
      let forwardBody: Readable | Buffer | null = null;
      let inspected: string | undefined;
      if (hasBody(request.headers)) {
        const buffered = await bufferHead(request.body);
        forwardBody = buffered.forward;
        inspected = inspectableBody(buffered.head, contentType);
      }
      const scored = await policy(request, inspected);
      if (scored.outcome !== null) {
        if (forwardBody !== null && !Buffer.isBuffer(forwardBody)) forwardBody.resume();
        return addHeaders(scored.outcome, first.rateHeaders);
      }
      const { gateway } = request;
      const backend = backendOf(gateway);
      const headers = requestHeaders(request.headers, backend.host, { remoteAddress: request.remoteAddress, protocol: request.protocol, host: request.host, trustProxy: deps.config.trustProxy });
      try {
        const sending = forwarder.send({
          backend,
          method: request.method,
          pathAndQuery: request.query === '' ? request.path : `${request.path}?${request.query}`,
          headers,
          body: forwardBody,
          timeoutMs: gateway.settings.timeoutMs,
        });
        scored.afterDispatch?.();
        const answer = await sending;
        if (answer.status === 401 || answer.status === 403) recordFailure(gateway.id, request.clientIp);
        const authenticated = carriesCredential(request.headers, request.query);
        const secure = request.protocol === 'https';
        const responseType = headerText(answer.headers['content-type']);
        let body = answer.body;
        if (scored.analyzerKey !== null && responseType !== undefined && SAMPLED_TYPES.test(responseType) && shouldSample(scored.analyzerKey)) {
          body = tap(answer.body, (head) => {
            const classification = classifyData(head.toString('utf8'), responseType);
            analyzer.observeResponse(gateway, scored.analyzerKey, { status: answer.status, authenticated, secure, dataClass: classification.dataClass, dataFound: classification.found });
          });
        } else {
          analyzer.observeResponse(gateway, scored.analyzerKey, { status: answer.status, authenticated, secure });
        }
        // answer.headers is this response's own copy (forward.ts): svc's headers join it in place.
        for (const name in first.rateHeaders) answer.headers[name] = first.rateHeaders[name]!;
        if (request.mount.startsWith('/gw/') && deps.config.gatewayPathSandbox !== false) sandboxAnswer(answer.headers);
        return { kind: 'forward', status: answer.status, headers: answer.headers, body, summary: scored.summary };
      } catch (error) {
        if (forwardBody !== null && !Buffer.isBuffer(forwardBody)) forwardBody.destroy();
        if (error instanceof BackendError) {
          if (error.reason === 'timeout') return { kind: 'error', status: 504, code: 'BACKEND_TIMEOUT', details: { timeout_ms: gateway.settings.timeoutMs }, summary: scored.summary };
          return { kind: 'error', status: 502, code: 'BACKEND_UNREACHABLE', details: { cause: error.causeCode }, summary: scored.summary };
        }
        throw error;
      }
    },
    async start() {
      await refreshRoutes();
      routeTimer = setInterval(() => void refreshRoutes().catch((error: unknown) => deps.logger.warn({ err: error }, 'gateway routes refresh failed')), ROUTE_REFRESH_MS);
      routeTimer.unref();
      health.start(() => store.all());
      if (deps.config.geoBlocking && lookupCountry === null) {
        const geoip = (await import('geoip-lite')).default;
        lookupCountry = (ip) => geoip.lookup(ip)?.country ?? null;
      }
    },
    async close() {
      if (routeTimer !== null) clearInterval(routeTimer);
      routeTimer = null;
      await health.close();
      await forwarder.close();
    },
  };
  return api;
}

/**
 * The decision in a 403's details: `threat`, as on every THREAT_BLOCKED and CHALLENGE_REQUIRED
 * (docs/errors.md), and `decision`, the name this API answered with first (docs/apisec.md).
 */
function blockDetails<T extends object>(threat: T): { threat: T; decision: T } {
  return { threat, decision: threat };
}

function addHeaders(outcome: TrafficOutcome, headers: Record<string, string>): TrafficOutcome {
  if (Object.keys(headers).length === 0) return outcome;
  if (outcome.kind === 'error') return { ...outcome, headers: { ...headers, ...outcome.headers } };
  if (outcome.kind === 'html') return { ...outcome, headers: { ...headers, ...outcome.headers } };
  return outcome;
}

function countOperations(document: unknown): number {
  const paths = (document as { paths?: Record<string, Record<string, unknown>> }).paths ?? {};
  let count = 0;
  for (const item of Object.values(paths)) {
    if (typeof item !== 'object' || item === null) continue;
    for (const method of ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']) if (typeof item[method] === 'object') count += 1;
  }
  return count;
}

/** The username of a login request (JSON or form body), for T5 credential-stuffing baselines. */
function usernameOf(request: Omit<TrafficRequest, 'body'>, body: string | undefined): { username: string } | null {
  if (request.method !== 'POST' || body === undefined || !LOGIN_PATH.test(request.path)) return null;
  const head = body.slice(0, 4_096);
  const json = /"(?:username|user|login|email)"\s*:\s*"([^"\\]{1,256})"/i.exec(head);
  if (json?.[1] !== undefined) return { username: json[1] };
  const form = /(?:^|&)(?:username|user|login|email)=([^&]{1,256})/i.exec(head);
  if (form?.[1] !== undefined) {
    try {
      return { username: decodeURIComponent(form[1].replace(/\+/g, ' ')) };
    } catch {
      return { username: form[1] };
    }
  }
  return null;
}

export { BOT_CLASSES };
