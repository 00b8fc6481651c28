/**
 * The gateway sensor (`svc sensor --class gateway`): the AI gateway's client traffic served by a
 * process with no database and no cache connection (docs/sensors.md, "The gateway sensor"). It
 * runs the gateway's own core and routes (`createGateway`, `gatewayRoutes` with the traffic
 * surface: svc's completions, the OpenAI and Anthropic compatible surfaces, the challenge) with:
 *
 *   - the org's gateway settings, plan, provider credentials and API-key hashes from the
 *     collector's gateway context (collector/gateway-context.ts), sealed to this sensor's key and
 *     held in memory only — never written to the data directory, never logged;
 *   - in-memory stores: settings read from the context, the budget ledger on an in-memory cache
 *     re-based on the collector's count with every new context, usage rows kept until a
 *     heartbeat reports them (`gateway_usage`), after which the collector adds them to its ledger
 *     and usage history;
 *   - the detection engine without a database: every decision other than allow (screening of the
 *     prompt and retrieved content, the response filter) becomes a signed finding emitted through
 *     the sensor agent — a block is answered once its finding is sent or spooled on disk.
 *
 * Clients authenticate with the org's own svc API keys: the bearer (or X-API-Key) is hashed and
 * looked up among the context's hashes, compared in constant time, and the route's scope applies
 * as under `svc serve`. Per-IP and per-session state (session escalation, the challenge's
 * clearances, breakers, spend baselines) stays in this process.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import Fastify, { type FastifyRequest } from 'fastify';
import { ANONYMOUS_POLICY, PLAN_POLICIES, scopeAllows, type AuthContext, type Plan } from '../accounts/index.ts';
import { createDetection, DEFAULT_THRESHOLDS, type DetectionEngine, type InspectRequest, type ThreatDecision } from '../detection/index.ts';
import { createGateway, gatewayRoutes, svcStreamEncoder, type CompletionCall, type CompletionEnvelope, type CompletionHooks, type GatewayEvents, type GatewayService, type GatewaySettings, type UsageHourRow } from '../gateway/index.ts';
import { createCache } from '../platform/cache.ts';
import { createChallenges } from '../platform/challenge.ts';
import { safeEqual, sha256Hex } from '../platform/crypto.ts';
import { SvcError } from '../platform/errors.ts';
import { createEventBus } from '../platform/events.ts';
import type { Logger } from '../platform/logger.ts';
import { createMetrics } from '../platform/metrics.ts';
import { createRateLimiter, type RateLimitPolicy } from '../platform/rate-limit.ts';
import { rateLimitError, setRateLimitHeaders } from '../platform/rate-limit-reply.ts';
import { assertPublicUrl } from '../platform/ssrf.ts';
import { GATEWAY_EVENT_KIND, type GatewayContext, type GatewayUsageReport } from './collector/gateway-context.ts';
import type { SensorAgent } from './sensor/agent.ts';
import { sensorErrorHandler } from './sensor-error-routes.ts';
import type { FindingData, Severity } from './wire.ts';

const SEVERITY_OF: Record<string, Severity> = { block: 'high', challenge: 'medium', alert: 'medium', log: 'low' };

/** The finding a detection decision of the gateway becomes. */
export function gatewayFinding(decision: ThreatDecision, request: Pick<InspectRequest, 'kind' | 'requestId' | 'sessionId'>): FindingData {
  return {
    pillar: 'gateway',
    kind: request.kind,
    severity: SEVERITY_OF[decision.decision] ?? 'low',
    threat_score: Math.min(1, Math.max(0, decision.threat_score)),
    decision: decision.decision,
    patterns: decision.patterns_matched.slice(0, 64).map((pattern) => ({ id: pattern.id.slice(0, 128), name: pattern.name.slice(0, 256), confidence: Math.min(1, Math.max(0, pattern.confidence)) })),
    request_id: (request.requestId ?? 'inspect').slice(0, 128),
    session_id: request.sessionId === undefined ? null : request.sessionId.slice(0, 256),
    gateway_id: 'ai_gateway',
    details: { categories: decision.categories.slice(0, 32), base_score: decision.base_score, session_request_count: decision.session_request_count, session_escalation_factor: decision.session_escalation_factor },
  };
}

/**
 * The detection engine with findings going to the collector: each decision other than allow is
 * emitted (a block awaited, so it is answered only once it is sent or on disk). A sensor the
 * collector paused passes traffic through without inspecting it (the pushed `paused`).
 */
export function sensingEngine(engine: DetectionEngine, agent: Pick<SensorAgent, 'emit' | 'config'>, logger: Logger): DetectionEngine {
  return {
    ...engine,
    async inspect(request) {
      if (agent.config().paused) return uninspected(request.kind);
      const decision = await engine.inspect(request);
      if (decision.decision === 'allow' || request.orgId === undefined || request.record === false) return decision;
      const emitted = agent.emit(request.sessionId ?? request.requestId ?? randomUUID(), gatewayFinding(decision, request)).catch((error: unknown) => {
        logger.error({ err: error, request_id: request.requestId }, 'gateway finding not emitted');
        return 'rejected' as const;
      });
      if (decision.decision === 'block') await emitted;
      return decision;
    },
  };
}

/**
 * The finding of the gateway's PII handling: a request refused for personal data (block,
 * medium) or an answered one whose personal data was redacted before it left (log, low); one
 * pattern `pii.<type>` per type found. No content, no value: types and counts only.
 */
export function piiFinding(requestId: string, sessionId: string | undefined, mode: 'block' | 'redact', counts: Readonly<Record<string, number>>): FindingData {
  const types = Object.keys(counts).sort().slice(0, 64);
  const named = (type: string) => type.toLowerCase();
  return {
    pillar: 'gateway',
    kind: 'pii',
    severity: mode === 'block' ? 'medium' : 'low',
    threat_score: 0,
    decision: mode === 'block' ? 'block' : 'log',
    patterns: types.map((type) => ({ id: `pii.${named(type)}`.slice(0, 128), name: `Personal data: ${named(type)}`.slice(0, 256), confidence: 1 })),
    request_id: requestId.slice(0, 128),
    session_id: sessionId === undefined ? null : sessionId.slice(0, 256),
    gateway_id: 'ai_gateway',
    details: { mode, counts: Object.fromEntries(types.map((type) => [named(type), counts[type] ?? 0])) },
  };
}

/**
 * The gateway with its PII handling reported: every other member is the gateway's own (through
 * the prototype); `completion` emits a PII finding for a refusal (awaited, as a block) and for an
 * answer whose request was redacted — a JSON answer once it is answered, a stream at its end.
 */
export function piiReportingGateway(gateway: GatewayService, agent: Pick<SensorAgent, 'emit' | 'config'>, logger: Logger): GatewayService {
  const report = (finding: FindingData, correlationId: string) =>
    agent.emit(correlationId, finding).catch((error: unknown) => {
      logger.error({ err: error, request_id: finding.request_id }, 'gateway PII finding not emitted');
      return 'rejected' as const;
    });
  const reporting = Object.create(gateway) as GatewayService;
  reporting.completion = async <C>(call: CompletionCall<C>): Promise<CompletionEnvelope | undefined> => {
    const { requestId } = call.caller;
    const redacted = (filter: Record<string, unknown> | null | undefined) => {
      const pii = (filter as { pii?: { mode: string; redacted: Record<string, number>; total: number } } | null | undefined)?.pii;
      if (pii !== undefined && pii.total > 0 && !agent.config().paused) void report(piiFinding(requestId, call.sessionId, 'redact', pii.redacted), call.sessionId ?? requestId);
    };
    // A stream's response filter is known to its encoder's end: reported there, as a JSON answer's is.
    const hooks: CompletionHooks<C> = {
      ...call.hooks,
      takeOver: (context) => {
        const target = call.hooks.takeOver(context);
        const encoder = target.encoder ?? svcStreamEncoder(requestId);
        return {
          ...target,
          encoder: {
            ...encoder,
            end: (summary) => {
              redacted(summary.responseFilter);
              return encoder.end(summary);
            },
          },
        };
      },
    };
    let answer: CompletionEnvelope | undefined;
    try {
      answer = await gateway.completion({ ...call, hooks });
    } catch (error) {
      if (error instanceof SvcError && error.code === 'PII_BLOCKED' && !agent.config().paused) {
        const types = (error.details?.pii_types as string[] | undefined) ?? [];
        await report(piiFinding(requestId, call.sessionId, 'block', Object.fromEntries(types.map((type) => [type, 1]))), call.sessionId ?? requestId);
      }
      throw error;
    }
    redacted(answer?.response_filter as Record<string, unknown> | null | undefined);
    return answer;
  };
  return reporting;
}

/** An idempotency key's characters (wire.ts): anything else in a part becomes '_'. */
const keyPart = (text: string, most = 64) => text.replace(/[^A-Za-z0-9._:-]/g, '_').slice(0, most);

/**
 * The finding that carries a gateway event to the collector, and its idempotency key. The key
 * names what `svc serve` raises once in a deployment — a budget warning once per org and UTC day,
 * a cost anomaly once per org and hour — so every sensor of the org that raises it sends the same
 * key and the collector, which de-duplicates by key for 24 hours, delivers one webhook; a
 * provider going down is one per sensor and outage (breakers are per process, as they are per
 * replica under `svc serve`). null for an event that is not forwarded.
 */
export function gatewayEventFinding(sensorId: string, orgId: string, event: string, data: Record<string, unknown>, now = Date.now()): { data: FindingData; idempotencyKey: string } | null {
  let period: string;
  if (event === 'budget.warning') period = new Date(now).toISOString().slice(0, 10);
  else if (event === 'cost.anomaly') period = typeof data.hour_start === 'string' ? data.hour_start : new Date(Math.floor(now / 3_600_000) * 3_600_000).toISOString();
  else if (event === 'gateway.down') period = `${keyPart(sensorId, 36)}:${keyPart(String(data.gateway_name), 48)}:${keyPart(String(data.first_failure_at), 32)}`;
  else return null;
  return {
    idempotencyKey: `gw-event:${event}:${keyPart(orgId, 36)}:${keyPart(period, 120)}`,
    data: {
      pillar: 'gateway', kind: GATEWAY_EVENT_KIND, severity: event === 'gateway.down' ? 'high' : 'medium', threat_score: 0, decision: 'log', patterns: [],
      request_id: event, session_id: null, gateway_id: 'ai_gateway', details: { event, data },
    },
  };
}

/**
 * The gateway's events, sent to the collector over the signed channel (spooled while it is
 * away) for its webhook delivery, and logged here as well. Not a detection: the pushed severity
 * threshold and muted patterns do not apply.
 */
export function forwardingEvents(agent: Pick<SensorAgent, 'emit' | 'sensorId'>, logger: Logger): GatewayEvents {
  return {
    emit(orgId, event, data) {
      logger.warn({ org_id: orgId, event, data }, `gateway event ${event}`);
      const finding = gatewayEventFinding(agent.sensorId, orgId, event, data);
      if (finding === null) return;
      void agent.emit(event, finding.data, { idempotencyKey: finding.idempotencyKey, unfiltered: true }).catch((error: unknown) => {
        logger.error({ err: error, event }, 'gateway event not sent to the collector');
      });
    },
  };
}

/** The decision of what a paused sensor lets through without inspecting it. */
function uninspected(kind: InspectRequest['kind']): ThreatDecision {
  return {
    allowed: true, threat_score: 0, decision: 'allow', explanation: 'Not inspected: the sensor is paused by its collector.', patterns_matched: [], session_escalation_factor: 1,
    session_request_count: 0, base_score: 0, kind, categories: [], tiers: [], evidence: [], thresholds: DEFAULT_THRESHOLDS, latency_ms: 0,
  };
}

/** The usage a sensor recorded and has not reported yet: budget deltas per day, usage rows per hour, provider and model. */
class UsageBuffer {
  private readonly budget = new Map<string, { day: string; tokens: number; micro_usd: number }>();
  private readonly hours = new Map<string, GatewayUsageReport['hours'][number] & { requests: number }>();

  addBudget(rows: ReadonlyArray<{ day: string; tokens: number; micro_usd: number }>): void {
    for (const row of rows) {
      const held = this.budget.get(row.day);
      if (held === undefined) this.budget.set(row.day, { ...row });
      else {
        held.tokens += row.tokens;
        held.micro_usd += row.micro_usd;
      }
    }
  }

  addHours(rows: ReadonlyArray<GatewayUsageReport['hours'][number]>): void {
    for (const row of rows) {
      const key = `${row.hour} ${row.provider} ${row.model}`;
      const held = this.hours.get(key);
      if (held === undefined) this.hours.set(key, { ...row });
      else this.hours.set(key, { ...held, requests: held.requests + row.requests, prompt_tokens: held.prompt_tokens + row.prompt_tokens, completion_tokens: held.completion_tokens + row.completion_tokens, cost_usd: Math.round((held.cost_usd + row.cost_usd) * 1e10) / 1e10 });
    }
  }

  /** What is held for `day` (not reported yet). */
  unreported(day: string): { tokens: number; micro_usd: number } {
    const held = this.budget.get(day);
    return held === undefined ? { tokens: 0, micro_usd: 0 } : { tokens: held.tokens, micro_usd: held.micro_usd };
  }

  /** Up to what one heartbeat may carry (8 days, 1 000 rows); the rest waits for the next. */
  take(): GatewayUsageReport | null {
    if (this.budget.size === 0 && this.hours.size === 0) return null;
    const budget = [...this.budget.entries()].slice(0, 8);
    const hours = [...this.hours.entries()].slice(0, 1_000);
    for (const [key] of budget) this.budget.delete(key);
    for (const [key] of hours) this.hours.delete(key);
    return { budget: budget.map(([, row]) => row), hours: hours.map(([, row]) => row) };
  }
}

export interface GatewaySensorOptions {
  readonly agent: SensorAgent;
  readonly logger: Logger;
  /** The usage buffer the agent's heartbeat reports from (createGatewayUsage). */
  readonly usage: GatewayUsage;
  /** --allow-private-targets: org base URLs may name private addresses (checked again at every call, as under `svc serve`). */
  readonly allowPrivateTargets: boolean;
  /** The rate limiter's clock (tests hold it still); Date.now by default. */
  readonly now?: () => number;
}

export type GatewayUsage = ReturnType<typeof createGatewayUsage>;

/** The usage buffer and its heartbeat hook (given to the agent before the sensor is built). */
export function createGatewayUsage() {
  const buffer = new UsageBuffer();
  return {
    buffer,
    heartbeatReport: {
      take: () => {
        const report = buffer.take();
        return report === null ? null : { gateway_usage: report };
      },
      settled: (taken: Record<string, unknown>, delivered: boolean) => {
        if (delivered) return;
        const report = taken.gateway_usage as GatewayUsageReport;
        buffer.addBudget(report.budget);
        buffer.addHours(report.hours);
      },
    },
  };
}

const DAY_MS = 86_400_000;

/** The credential text from Authorization: Bearer or X-API-Key; '' when malformed; null when absent. */
function presented(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header === 'string' && header.length > 0) return /^Bearer[ ]+(\S{1,4096})[ ]*$/i.exec(header)?.[1] ?? '';
  const apiKey = request.headers['x-api-key'];
  return typeof apiKey === 'string' && apiKey.length > 0 ? apiKey.trim() : null;
}

/** Builds the gateway sensor (its HTTP server, not listening) and the context it keeps up to date. */
export function buildGatewaySensor(options: GatewaySensorOptions) {
  const { agent, logger, usage } = options;
  let context: GatewayContext | null = null;
  let keys = new Map<string, GatewayContext['api_keys'][number]>();
  let etag: string | null = null;
  let pulling: Promise<void> | null = null;

  const settingsOf = (): GatewaySettings => {
    const settings = context?.settings;
    if (settings === undefined) return { routing: null, piiMode: 'redact', piiRestore: false, dailyUsdCap: null };
    return { routing: settings.routing as GatewaySettings['routing'], piiMode: settings.pii_mode as GatewaySettings['piiMode'], piiRestore: settings.pii_restore, dailyUsdCap: settings.daily_usd_cap };
  };

  const cache = createCache({ kind: 'memory' }, 'sensor:');
  // `svc serve`'s limiter on the sensor's memory cache: limits are per sensor (docs/sensors.md).
  const limiter = createRateLimiter(cache);
  const clock = options.now ?? Date.now;
  const slots = new WeakMap<FastifyRequest, () => void>();
  const metrics = createMetrics({ defaultMetrics: false });
  const events = createEventBus(logger);
  const detection = sensingEngine(createDetection({ cache, logger, semantic: false }), agent, logger);
  const core: GatewayService = createGateway({
    stores: {
      settings: {
        get: async () => settingsOf(),
        update: () => Promise.reject(new SvcError('FEATURE_DISABLED', { message: 'A gateway sensor takes its settings from its collector: change them there.', details: { feature: 'gateway_settings_at_sensor' } })),
      },
      // Budget changes made here are reported to the collector on the next heartbeat.
      budget: { load: async () => [], add: async (rows) => usage.buffer.addBudget(rows.map((row) => ({ day: row.day, tokens: row.tokens, micro_usd: row.microUsd }))) },
      history: {
        add: async (rows: readonly UsageHourRow[]) =>
          usage.buffer.addHours(rows.map((row) => ({ hour: row.hour, provider: row.provider, model: row.model, requests: row.requests, prompt_tokens: row.promptTokens, completion_tokens: row.completionTokens, cost_usd: row.costUsd }))),
        addAnomaly: async () => undefined,
        buckets: async () => [],
        anomalies: async () => [],
      },
    },
    cache,
    logger,
    metrics,
    envKeys: {},
    orgKeys: {
      get: async (_orgId, provider) => {
        const stored = context?.providers[provider];
        return stored === undefined ? null : { key: stored.key, baseUrl: stored.base_url };
      },
    },
    events: forwardingEvents(agent, logger),
    detection,
    checkTarget: (url) => assertPublicUrl(url, { allowPrivate: options.allowPrivateTargets, field: 'base_url' }),
    allowPrivateTargets: options.allowPrivateTargets,
    challenges: createChallenges({ key: randomBytes(32) }),
  });
  const gateway = piiReportingGateway(core, agent, logger);

  /** Applies a context the collector sealed to this sensor. */
  async function apply(sealed: string, nextEtag: string): Promise<void> {
    const opened = JSON.parse(agent.open(sealed).toString('utf8')) as GatewayContext;
    if (typeof opened.org_id !== 'string' || !Array.isArray(opened.api_keys) || typeof opened.providers !== 'object' || opened.providers === null) throw new Error('gateway context malformed');
    context = opened;
    keys = new Map(opened.api_keys.map((key) => [key.hash, key]));
    etag = nextEtag;
    // The collector's count of today, plus what this sensor spent and has not reported yet.
    await core.budget.persist();
    const today = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
    if (opened.budget.day === today) {
      const held = usage.buffer.unreported(today);
      core.budget.rebase(opened.org_id, today, opened.budget.tokens + held.tokens, opened.budget.micro_usd + held.micro_usd);
    }
    logger.info({ etag, providers: Object.keys(opened.providers), keys: keys.size }, 'gateway context applied');
  }

  /** Pulls the context when the collector's etag is not the one applied. */
  function refresh(wanted: string | null = null): Promise<void> {
    if (wanted !== null && wanted === etag) return Promise.resolve();
    pulling ??= (async () => {
      try {
        const directive = await agent.pullConfig();
        const gatewayPart = directive?.gateway as { etag?: string; sealed?: string } | undefined;
        if (gatewayPart?.sealed !== undefined && gatewayPart.etag !== undefined) await apply(gatewayPart.sealed, gatewayPart.etag);
        else if (directive !== null) logger.warn('the collector sent no gateway context');
      } catch (error) {
        logger.error({ err: (error as Error).message }, 'gateway context not applied; serving with the last one');
      } finally {
        pulling = null;
      }
    })();
    return pulling;
  }

  const app = Fastify({ loggerInstance: logger, disableRequestLogging: true, bodyLimit: 4 * 1_048_576, genReqId: () => randomUUID(), ajv: { customOptions: { allErrors: false, coerceTypes: false, removeAdditional: false } } });
  app.decorateRequest('auth', null);
  app.decorateRequest('threat', null);
  app.decorateRequest('traceContext', null);
  app.setErrorHandler(sensorErrorHandler(logger, 'gateway', 'INVALID_JSON'));

  // The org's key, its hash looked up and compared in constant time; then `svc serve`'s rate
  // limits in this process's memory (per key with the plan's row, per IP without a valid key);
  // then the route's scope.
  app.addHook('onRequest', async (request, reply) => {
    const scope = (request.routeOptions.config as { scope?: string } | undefined)?.scope;
    if (scope === undefined) return;
    if (context === null) throw new SvcError('SERVICE_UNAVAILABLE', { message: 'The sensor has no configuration from its collector yet; retry shortly.', details: { reason: 'no_gateway_context' } });
    const credential = presented(request);
    const hash = credential === null ? null : sha256Hex(credential);
    const found = hash === null ? undefined : keys.get(hash);
    const key = found !== undefined && hash !== null && safeEqual(found.hash, hash) ? found : undefined;
    const plan = context.plan as Plan;
    const [identity, policy]: [string, RateLimitPolicy] = key === undefined ? [`ip:${request.ip}`, ANONYMOUS_POLICY] : [`key:${key.key_id}`, PLAN_POLICIES[plan] ?? ANONYMOUS_POLICY];
    const decision = limiter.hitNow(identity, policy, clock()) ?? (await limiter.hit(identity, policy, clock()));
    setRateLimitHeaders(reply, decision);
    if (decision.holdsSlot) {
      // Given back once, when the answer is sent or the client goes away (whichever is first).
      let held = true;
      const release = () => {
        if (held) limiter.releaseNow(identity);
        held = false;
      };
      slots.set(request, release);
      reply.raw.on('close', release);
    }
    if (!decision.allowed) throw rateLimitError(decision, decision.refusedBy === 'concurrency' ? 'CONCURRENCY_LIMITED' : 'RATE_LIMITED');
    if (credential === null) throw new SvcError('AUTH_MISSING');
    if (key === undefined) throw new SvcError('AUTH_INVALID');
    if (!scopeAllows(key.scope as AuthContext['scope'], scope as AuthContext['scope'])) throw new SvcError('SCOPE_INSUFFICIENT', { details: { required: scope } });
    request.auth = { kind: 'api_key', orgId: context.org_id, orgTag: context.org_tag, plan, scope: key.scope as AuthContext['scope'], keyClass: key.class as AuthContext['keyClass'], keyId: key.key_id, userId: null, role: null };
  });

  app.addHook('onResponse', async (request) => slots.get(request)?.());

  app.get('/health', async () => ({ status: 'ok', sensor_id: agent.sensorId, class: 'gateway', paused: agent.config().paused, context: etag === null ? null : { etag, providers: Object.keys(context?.providers ?? {}) } }));
  void app.register(gatewayRoutes, { gateway, events, enabled: true, surface: 'traffic' });
  app.addHook('onReady', () => core.start());
  app.addHook('onClose', async () => {
    await core.close();
    await detection.close();
    cache.close();
  });

  return { app, gateway, detection, refresh, onDirective: (directive: Record<string, unknown>) => void refresh((directive.gateway as { etag?: string } | undefined)?.etag ?? null) };
}

/** svc's error envelope, as `svc serve` answers it (schema failures as VALIDATION_FAILED). */
