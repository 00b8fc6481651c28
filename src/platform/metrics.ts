/**
 * Metrics registry (prom-client) with the ten names the spec fixes, exactly, and svc's own beside
 * them (svc_ai_cost_usd_total). Each app instance
 * owns its registry (tests build several apps in one process). Label values never carry
 * secrets or user content: only ids, methods, status codes and enumerations.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { shareMetricsWithPrimary } from './cluster-metrics.ts';

export interface Metrics {
  readonly registry: Registry;
  readonly requests: Counter<'gateway' | 'method' | 'status'>;
  readonly requestDuration: Histogram<'gateway' | 'method'>;
  readonly threats: Counter<'decision'>;
  readonly threatScore: Histogram<string>;
  readonly rateLimitHits: Counter<'scope' | 'gateway'>;
  readonly sessionEscalations: Counter<'tier'>;
  readonly gatewayHealth: Gauge<'gateway_id' | 'kind'>;
  readonly dbPoolSize: Gauge<string>;
  readonly redisLatency: Histogram<string>;
  readonly aiTokens: Counter<'model' | 'provider'>;
  /** svc_mcp_events_total: what the MCP pillar recorded (tool calls and their outcome, quarantines, poisoning, …). */
  readonly mcpEvents: Counter<'action' | 'outcome'>;
  /** svc_ai_cost_usd_total: listed-price cost of AI gateway completions (unpriced models add nothing). */
  readonly aiCost: Counter<'model' | 'provider'>;
  /** svc_outbox_unreplayable_total: spooled evidence records of a kind no handler takes, set aside (platform/outbox.ts). */
  readonly outboxUnreplayable: Counter<string>;
  /** The exposition a scrape answers: this registry, or in a cluster worker every worker's merged. */
  text(): Promise<string>;
  /** Stops answering the primary's collections (cluster workers). */
  close(): void;
}

/**
 * `clusterWorker`: this process is one of WORKERS replicas; a scrape answers the sum of all of
 * them, collected by the primary. Gauges say how replicas combine: pool sizes add up, a backend's
 * health is the lowest any replica sees.
 */
export function createMetrics(options: { defaultMetrics?: boolean; dbPoolSize?: () => number; clusterWorker?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const poolSize = options.dbPoolSize;
  const shared = options.clusterWorker === true ? shareMetricsWithPrimary(registry) : null;
  return {
    registry,
    text: shared === null ? () => registry.metrics() : shared.text,
    close: () => shared?.close(),
    requests: new Counter({
      name: 'svc_requests_total',
      help: 'HTTP requests served, by gateway (api for the svc API itself), method and status.',
      labelNames: ['gateway', 'method', 'status'],
      registers: [registry],
    }),
    requestDuration: new Histogram({
      name: 'svc_request_duration_seconds',
      help: 'Time from request received to response sent, in seconds.',
      labelNames: ['gateway', 'method'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
      registers: [registry],
    }),
    threats: new Counter({
      name: 'svc_threats_total',
      help: 'Scored requests whose decision was block, challenge, alert or log.',
      labelNames: ['decision'],
      registers: [registry],
    }),
    threatScore: new Histogram({
      name: 'svc_threat_score',
      help: 'Threat scores of inspected requests (0 to 1).',
      buckets: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1],
      registers: [registry],
    }),
    rateLimitHits: new Counter({
      name: 'svc_rate_limit_hits_total',
      help: 'Requests refused by a rate limit, by scope (per_key, per_user, per_ip, login, register, concurrency) and gateway.',
      labelNames: ['scope', 'gateway'],
      registers: [registry],
    }),
    sessionEscalations: new Counter({
      name: 'svc_session_escalations_total',
      help: 'Requests whose score was multiplied by a session escalation factor, by escalation tier.',
      labelNames: ['tier'],
      registers: [registry],
    }),
    gatewayHealth: new Gauge({
      name: 'svc_gateway_health',
      help: 'Health of each protected API gateway backend (kind api_gateway) and each AI-gateway upstream provider target (kind ai_provider): 1 healthy, 0 unhealthy.',
      labelNames: ['gateway_id', 'kind'],
      aggregator: 'min',
      registers: [registry],
    }),
    dbPoolSize: new Gauge({
      name: 'svc_db_pool_size',
      help: 'Open connections to the relational database.',
      aggregator: 'sum',
      registers: [registry],
      collect() {
        if (poolSize) this.set(poolSize());
      },
    }),
    redisLatency: new Histogram({
      name: 'svc_redis_latency_seconds',
      help: 'Round-trip time of key-value cache pings, in seconds.',
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
      registers: [registry],
    }),
    aiTokens: new Counter({
      name: 'svc_ai_tokens_total',
      help: 'Tokens processed by the AI gateway, by model and provider.',
      labelNames: ['model', 'provider'],
      registers: [registry],
    }),
    mcpEvents: new Counter({
      name: 'svc_mcp_events_total',
      help: 'Events of the MCP pillar by action (mcp.tool_call, mcp.quarantine, mcp.tool_poisoning, …) and outcome (success, blocked, denied, quarantined, …), as written to the audit chain.',
      labelNames: ['action', 'outcome'],
      registers: [registry],
    }),
    aiCost: new Counter({
      name: 'svc_ai_cost_usd_total',
      help: "Cost of AI-gateway completions in US dollars at the providers' list prices, by model and provider (unpriced models add nothing).",
      labelNames: ['model', 'provider'],
      registers: [registry],
    }),
    outboxUnreplayable: new Counter({
      name: 'svc_outbox_unreplayable_total',
      help: 'Spooled evidence records of a kind no handler of this process takes (e.g. a file adopted from another version), set aside under DATA_DIR/outbox/unreplayable/ instead of replayed.',
      registers: [registry],
    }),
  };
}
