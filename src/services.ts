/**
 * Composition root: opens storage, runs migrations and builds every capability once, from a
 * resolved config — accounts, the audit log, the detection engine with its tiers (T4's judge
 * from the gateway's adapters when configured), the gateway, webhooks — each through its one
 * factory with explicit dependencies. `buildApp` (src/http/build-app.ts) hands each to its routes
 * plugin; the CLI uses the same root. Nothing here listens on a port, and building starts no
 * background work: `start()` does (the HTTP edge calls it from Fastify's onReady), `close()`
 * stops it and then the storage.
 *
 * To add a capability: build its core here (a field of `Services`, its background work in
 * start()/close()), and register its routes plugin in src/http/capabilities.ts.
 */
import { join } from 'node:path';
import { createAccounts, createSso, createTotp, planAllows, type Accounts, type Sso, type Totp } from './accounts/index.ts';
import { createApiSecurity, type ApiSecurity, type ApiSecurityDeps } from './apisec/index.ts';
import { createCompliance, type Compliance, type ComplianceDeps } from './compliance/index.ts';
import { createAuditLog, startAuditJobs, startBlockAudit, type AuditLog, type BlockAuditWriter } from './audit/index.ts';
import { checkModelDir, createBehaviourBaseline, createDetection, createModelTier, createProfileBaseline, type DetectionEngine, type DetectionOptions, type ModelTier } from './detection/index.ts';
import { createGateway, createJudgeCompletion, createT4Judge, providerIds, resolveTarget, startGatewayJobs, UsageHistory, type GatewayService, type GatewayServiceDeps } from './gateway/index.ts';
import { createGroundingJudge, createVerification, loadGroundingModel, type GroundingModel, type GroundingTiers, type VerificationCore, type VerificationDeps } from './verification/index.ts';
import { createMcp, createMcpOAuth, type Mcp, type McpDeps, type McpOAuth } from './mcp/index.ts';
import { countSensors, createCollector, createDatabaseCaStorage, createGatewayContexts, createLicenceGate, createMcpContextSource, openCertificateAuthority, type CertificateAuthority, type Collector, type LicenceGate } from './sensors/index.ts';
import { createSiem, type Siem, type SiemPolicy } from './siem/index.ts';
import {
  createWebhooks,
  setTokenBudgetUsedRatio,
  startOperationalAlerts,
  type AlertEvaluator,
  type WebhookOptions,
  type Webhooks,
} from './webhooks/index.ts';
import { encryptionKeyFrom } from './platform/crypto.ts';
import { createCache, type Cache } from './platform/cache.ts';
import { createChallenges } from './platform/challenge.ts';
import { createTelemetry, type Telemetry } from './platform/telemetry.ts';
import type { ResolvedConfig } from './platform/config.ts';
import { migrate, openDatabase, type Database } from './platform/db/index.ts';
import { createEventBus, type EventBus } from './platform/events.ts';
import { createLogger, createRequestLog, stdoutDestination, type Logger, type RequestLog } from './platform/logger.ts';
import type { DestinationStream } from 'pino';
import { createMetrics, type Metrics } from './platform/metrics.ts';
import { createOutbox, type Outbox } from './platform/outbox.ts';
import { createQueue, type JobQueue } from './platform/queue.ts';
import { createRateLimiter, type RateLimiter } from './platform/rate-limit.ts';
import { deriveSecret } from './platform/secrets.ts';
import { assertPublicUrl } from './platform/ssrf.ts';
import { createStreamRegistry, type StreamRegistry } from './platform/streams.ts';
import { workerRouting, type WorkerRouting } from './platform/worker-routing.ts';

/** How long start() waits for the webhook re-queue before leaving it to run in the background. */
export const RECOVERY_WAIT_MS = 5_000;

export interface Services {
  readonly config: ResolvedConfig;
  /** OpenTelemetry traces: off (and free) unless an OTLP endpoint is configured. */
  readonly telemetry: Telemetry;
  readonly logger: Logger;
  /** One line per request with exactly the spec's fields (see logger.ts). */
  readonly requestLog: RequestLog;
  readonly db: Database;
  readonly cache: Cache;
  readonly queue: JobQueue;
  readonly metrics: Metrics;
  readonly rateLimiter: RateLimiter;
  readonly events: EventBus;
  /** Long-lived responses (streams) that shutdown ends before the HTTP server closes (platform/streams.ts). */
  readonly streams: StreamRegistry;
  readonly accounts: Accounts;
  /** Sign-in beyond the password: TOTP second factor and the org's SSO connections (OIDC, SAML). */
  readonly signIn: { readonly totp: Totp; readonly sso: Sso };
  /** Durable local spool for evidence the database could not take (platform/outbox.ts). */
  readonly outbox: Outbox;
  /** The per-org audit chain (one instance: routes, CLI, background jobs and the block writer share it). */
  readonly audit: AuditLog;
  /** The detection engine with its tiers. */
  readonly detection: DetectionEngine;
  /** The AI gateway (screens completions through `detection`). */
  readonly gateway: GatewayService;
  readonly webhooks: Webhooks;
  /** SIEM export: per-org sinks streaming findings and audit entries (syslog, HEC). */
  readonly siem: Siem;
  /** Verification of AI responses (the gateway's completion verifier, guard API, policy, provenance). */
  readonly verification: VerificationCore;
  /** API security: protected gateways (reverse proxy), analyzer, bots, health checks, geo rules. */
  readonly apisec: ApiSecurity;
  /** The MCP security pillar: servers registry, inspecting proxy, pins, quarantine, sessions. */
  readonly mcp: Mcp;
  /** The org's OAuth authorization server for its MCP endpoints (RFC 9728). */
  readonly mcpOAuth: McpOAuth;
  /** Compliance and privacy: threats read API, decisions, appeals, grievances, model catalog, privacy, unlearning, audit export. */
  readonly compliance: Compliance;
  /** The deployment's licence (LICENSE_FILE), verified offline against the release key. */
  readonly licence: LicenceGate;
  /** The collector network sensors enrol with and send findings to (docs/sensors.md). */
  readonly collector: Collector;
  /** The sensors' CA (the mutual-TLS sensor listener's trust and server certificate). */
  readonly sensorCertificateAuthority: () => Promise<CertificateAuthority>;
  /** SSRF check of a user-supplied URL under this deployment's ALLOW_PRIVATE_TARGETS. */
  checkTarget(url: string, field?: string): Promise<URL>;
  /** How a request reaches session state another worker holds in memory (inert in one process). */
  readonly routing: WorkerRouting;
  /**
   * Starts the background work: gateway health checks and breaker sync, webhook workers (and
   * re-enqueues pending deliveries), audit checkpoint/purge jobs, the block audit writer,
   * operational alerts, the Redis latency probe. Idempotent. A server calls it once (the HTTP
   * edge's onReady hook); the CLI does not.
   */
  start(): Promise<void>;
  /** Stops the background work, then closes storage. Idempotent. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  /** Where log lines go (default: buffered standard output). */
  logDestination?: DestinationStream;
  /** Run migrations on open (default true). */
  migrate?: boolean;
  /** PGlite only: start from a migrated snapshot (tests). */
  pgliteSnapshot?: Blob;
  /** Collect prom-client's default process metrics (default true). */
  defaultMetrics?: boolean;
  /** This process is a cluster worker: /metrics answers for every worker (src/platform/cluster-metrics.ts). */
  clusterWorker?: boolean;
  /** Test and bench seams: dependencies of the detection engine to add or replace (T2, T5, policy, …). */
  detection?: Partial<DetectionOptions>;
  /** Test and bench seams: gateway dependencies to replace (invokers, policies, cost function, timers). */
  gateway?: Partial<GatewayServiceDeps>;
  /** Test seams: the webhook delivery policy. */
  webhooks?: WebhookOptions;
  /** Test and bench seams: API-security dependencies to replace (challenge difficulty, crawler DNS checks, T5, geo lookup). */
  apisec?: Partial<ApiSecurityDeps>;
  /** Test and bench seams: MCP dependencies to replace (session TTL and clock, detection engine). */
  mcp?: Partial<McpDeps>;
  /**
   * Test and bench seams: verification's grounding tiers to add or replace (a `localModel` given
   * here is used instead of loading VERIFICATION_GROUNDING_MODEL_DIR) and the provenance writer's
   * timing.
   */
  verification?: { tiers?: GroundingTiers; provenance?: VerificationDeps['provenance'] };
  /** Test seams: the SIEM exporter's retry policy, batch size and pass interval. */
  siem?: Partial<SiemPolicy>;
  /** Test seams: the compliance capability's clock and unlearning hooks. */
  compliance?: Partial<Pick<ComplianceDeps, 'now' | 'unlearning'>>;
  /** Test and bench seams: the collector's clock, wire version, CA and audit chain (a stand-in that loses lock conflicts). */
  collector?: { now?: () => number; wireVersion?: number; certificateAuthority?: () => Promise<CertificateAuthority>; audit?: AuditLog };
}

export async function createServices(config: ResolvedConfig, options: ServiceOptions = {}): Promise<Services> {
  // The local grounding model loads first: a missing directory or package stops startup
  // (GroundingModelError) before any storage is opened, and never downloads anything.
  let groundingModel: GroundingModel | undefined = options.verification?.tiers?.localModel;
  if (groundingModel === undefined && config.verificationGroundingModel !== null) {
    groundingModel = await loadGroundingModel(config.verificationGroundingModel.dir, { timeoutMs: config.verificationGroundingModel.timeoutMs });
  }
  // The local detection model too: its worker loads it now, and a directory that is not a usable
  // model stops startup (DetectionModelError, DETECTION_MODEL_UNAVAILABLE) rather than leaving a
  // protection the operator believes is on switched off.
  let detectionModel: ModelTier | undefined;
  if (options.detection?.model === undefined && config.detectionModel !== null) {
    const settings = config.detectionModel;
    await checkModelDir(settings.dir, { attackLabels: settings.attackLabels });
    detectionModel = createModelTier(settings, { timeoutMs: settings.timeoutMs });
    try {
      await detectionModel.ready();
    } catch (error) {
      await detectionModel.close();
      throw error;
    }
  }
  const destination = options.logDestination ?? stdoutDestination();
  const logger = createLogger(config.logLevel, destination);
  const requestLog = createRequestLog(config.logLevel, destination);
  // A licence file that does not verify stops startup (LicenceError) before storage is opened.
  const licence = createLicenceGate(config.licence, logger);
  const db = await openDatabase(
    config.database.kind === 'pglite' && config.database.dir !== null
      ? { kind: 'pglite', dir: config.database.dir }
      : config.database,
    {
      appRolePassword: deriveSecret(config.secretKey, 'svc/db-app-role'),
      ...(options.pgliteSnapshot ? { pgliteSnapshot: options.pgliteSnapshot } : {}),
    },
  );
  try {
    if (options.migrate ?? true) await migrate(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  const cache = createCache(config.cache, config.cachePrefix);
  const queue = createQueue(config.cache.kind === 'redis' ? config.cache.url : null, config.cachePrefix);
  const metrics = createMetrics({ defaultMetrics: options.defaultMetrics ?? true, dbPoolSize: () => db.poolSize(), clusterWorker: options.clusterWorker ?? false });
  const events = createEventBus(logger);
  const streams = createStreamRegistry();
  const rateLimiter = createRateLimiter(cache);
  const checkTarget = (url: string, field?: string) => assertPublicUrl(url, { allowPrivate: config.allowPrivateTargets, ...(field ? { field } : {}) });

  // Capabilities, each built once through its factory. Order follows the arrows only.
  const accounts = createAccounts({ db, config, logger, sensorCount: (orgId) => countSensors(db, orgId) });
  const outbox = createOutbox({ dir: join(config.dataDir, 'outbox'), logger, metrics });
  const audit = createAuditLog({ config, db, queue, logger });
  const signIn = {
    totp: createTotp({ db, config, audit }),
    sso: createSso({ db, cache, audit, accounts, config, checkTarget: (url, field) => checkTarget(url, field) }),
  };
  const detection = createDetection({
    cache,
    db,
    logger,
    outbox,
    metrics,
    // Findings per month: log- and alert-band findings are not stored past the plan's quota.
    findingsQuota: accounts.findings,
    // T4 (LLM escalation) asks the configured judge model through the gateway's provider adapters.
    ...(config.detectionT4 === null ? {} : { t4: createT4Judge(config.detectionT4, config.providerEnvKeys, config.allowPrivateTargets) }),
    semantic: config.detectionSemantic ? { timeoutMs: config.detectionSemanticTimeoutMs } : false,
    ...(detectionModel === undefined ? {} : { model: detectionModel }),
    ...options.detection,
  });
  const telemetry = createTelemetry(config.telemetry);
  const gateway = createGateway({
    db,
    cache,
    logger,
    metrics,
    envKeys: config.providerEnvKeys,
    orgKeys: accounts.providerKeys,
    events,
    detection,
    checkTarget: (url) => checkTarget(url, 'base_url'),
    allowPrivateTargets: config.allowPrivateTargets,
    onBudgetUsage: (orgId, ratio) => setTokenBudgetUsedRatio(metrics.registry, orgId, ratio),
    challenges: createChallenges({ key: Buffer.from(config.secretKey) }),
    ...(telemetry.enabled ? { tracer: telemetry.tracer } : {}),
    behaviour: createProfileBaseline(cache, { namespace: 'ai-t5' }),
    ...options.gateway,
  });
  const webhooks = createWebhooks({ config, db, queue, logger, events, outbox }, options.webhooks);
  const siem = createSiem({ db, logger, config, ...(options.siem === undefined ? {} : { policy: options.siem }) });
  // A plan without SIEM export disables the org's sinks, in the plan change's transaction.
  accounts.onPlanChanged((tx, orgId, plan) => siem.planChanged(tx, orgId, planAllows(plan, 'siem_export')));
  // Grounding tier 2 is the local model loaded above (when configured); tier 3 asks the same
  // judge model as detection's T4, for orgs whose policy enables it.
  const tiers: GroundingTiers = {
    ...(groundingModel === undefined ? {} : { localModel: groundingModel }),
    ...(config.detectionT4 === null ? {} : { judge: createGroundingJudge(createJudgeCompletion(config.detectionT4, config.providerEnvKeys, config.allowPrivateTargets)) }),
    ...(options.verification?.tiers?.judge === undefined ? {} : { judge: options.verification.tiers.judge }),
  };
  if (groundingModel !== undefined) logger.info({ model: groundingModel.id, budget_ms: groundingModel.timeoutMs }, 'verification grounding model loaded (tier 2)');
  const verification = createVerification({
    db,
    logger,
    audit,
    outbox,
    tiers,
    ...(options.verification?.provenance === undefined ? {} : { provenance: options.verification.provenance }),
  });
  const apisec = createApiSecurity({
    db,
    cache,
    logger,
    metrics,
    events,
    rateLimiter,
    audit,
    engine: detection,
    config: { secretKey: config.secretKey, allowPrivateTargets: config.allowPrivateTargets, trustProxy: config.trustProxy, geoBlocking: config.features.geoBlocking, ownHosts: [config.host], gatewayPathSandbox: config.gatewayPathSandbox },
    checkTarget: (url, field) => checkTarget(url, field),
    behaviour: createBehaviourBaseline(cache, { namespace: 'apisec-t5' }),
    ...options.apisec,
  });
  const routing = workerRouting(options.clusterWorker === true ? {} : { workerId: null });
  const mcpOAuth = createMcpOAuth({ db, audit, checkTarget: (url, field) => checkTarget(url, field) });
  const mcp = createMcp({
    db,
    metrics,
    cache,
    events,
    logger,
    audit,
    outbox,
    detection,
    checkTarget,
    allowPrivateTargets: config.allowPrivateTargets,
    enabled: config.features.mcpSecurity,
    stdioServers: config.mcpStdioServers,
    localId: routing.localId,
    behaviour: createProfileBaseline(cache, { namespace: 'mcp-t5' }),
    ...options.mcp,
  });

  const compliance = createCompliance({
    db,
    cache,
    queue,
    audit,
    providerEnvKeys: config.providerEnvKeys,
    secretKey: config.secretKey,
    features: { soc2Reports: config.features.soc2Reports, hipaaBaa: config.features.hipaaBaa },
    planOf: async (orgId) => (await accounts.getOrg(orgId))?.effective_plan ?? 'community',
    logger,
    metrics,
    flushEvidence: async () => {
      await Promise.all([detection.flush(), verification.provenance.flush()]);
    },
    ...options.compliance,
  });

  // The sensors' CA, opened (created on first use) when a sensor first asks for a certificate.
  let sensorAuthority: Promise<CertificateAuthority> | undefined;
  const openSensorAuthority = options.collector?.certificateAuthority ?? (() => (sensorAuthority ??= openCertificateAuthority({ dir: join(config.dataDir, 'sensor-ca'), shared: createDatabaseCaStorage(db, encryptionKeyFrom(config.apiEncryptionKey)) }).catch((error: unknown) => {
    sensorAuthority = undefined;
    throw error;
  })));
  const collector = createCollector({
    db,
    cache,
    logger,
    metrics,
    audit,
    detection,
    mcp,
    events,
    licence,
    planOf: async (orgId) => (await accounts.getOrg(orgId))?.effective_plan ?? 'community',
    // What MCP sensors serve from: the org's servers, definitions, key hashes and thresholds.
    mcpContext: createMcpContextSource({
      mcp,
      keys: (orgId) => accounts.activeKeyHashes(orgId),
      thresholds: (orgId) => detection.thresholds.get(orgId),
      superAdminKeys: config.mcpSuperAdminKeys,
      allowPrivateTargets: config.allowPrivateTargets,
      enabled: config.features.mcpSecurity,
    }),
    certificateAuthority: openSensorAuthority,
    // Gateway sensors' context: the org's gateway settings, credentials and key hashes, and their spend reported back.
    gatewayContexts: createGatewayContexts({
      db,
      settingsOf: (orgId) => gateway.settings.get(orgId),
      providerTarget: async (orgId, provider) => {
        // The deployment's environment keys reach a sensor (which opens its context) only when the
        // operator says so: otherwise any org that enrols a gateway sensor would read them.
        const target = await resolveTarget(accounts.providerKeys, config.sensorEnvironmentProviderKeys ? config.providerEnvKeys : {}, orgId, provider);
        return target === null ? null : { key: target.apiKey, baseUrl: target.baseUrl ?? null };
      },
      providers: providerIds,
      orgOf: async (orgId) => {
        const org = await accounts.getOrg(orgId);
        return org === null ? null : { plan: org.effective_plan, tag: org.tag };
      },
      budgetUsage: (orgId) => gateway.budget.usage(orgId),
      recordAnomaly: (orgId, anomaly) => gateway.history.addAnomaly(orgId, anomaly),
      recordUsage: async (orgId, report) => {
        for (const row of report.budget) await gateway.budget.adjust(orgId, row.day, row.tokens, row.micro_usd);
        await gateway.history.add(report.hours.map((row) => ({ orgId, hour: row.hour, provider: row.provider, model: row.model, requests: row.requests, promptTokens: row.prompt_tokens, completionTokens: row.completion_tokens, costUsd: row.cost_usd })));
      },
    }),
    ...options.collector,
  });

  // Background work, owned by start()/close().
  let redisProbe: NodeJS.Timeout | undefined;
  let stopAuditJobs: (() => void) | undefined;
  let stopGatewayJobs: (() => void) | undefined;
  let blockAudit: BlockAuditWriter | undefined;
  let alerts: AlertEvaluator | undefined;
  let started = false;
  let closed = false;
  return {
    config,
    telemetry,
    logger,
    requestLog,
    db,
    cache,
    queue,
    metrics,
    rateLimiter,
    events,
    streams,
    accounts,
    signIn,
    outbox,
    audit,
    detection,
    gateway,
    webhooks,
    siem,
    verification,
    apisec,
    mcp,
    mcpOAuth,
    compliance,
    licence,
    collector,
    sensorCertificateAuthority: openSensorAuthority,
    checkTarget,
    routing,
    async start() {
      if (started || closed) return;
      started = true;
      // Every outbox handler is registered before the outbox starts (the block audit writer's here): from then on a
      // spooled record of a kind none takes is set aside rather than waited for (platform/outbox.ts).
      blockAudit = startBlockAudit({ audit, events, logger, outbox });
      outbox.start();
      redisProbe = setInterval(() => {
        void cache.ping().then((seconds) => {
          if (seconds !== null) metrics.redisLatency.observe(seconds);
        });
      }, 5_000);
      redisProbe.unref();
      gateway.start();
      webhooks.start();
      siem.start();
      await apisec.start();
      stopAuditJobs = startAuditJobs({ audit, db, queue, logger });
      stopGatewayJobs = startGatewayJobs({ history: new UsageHistory(db), queue, logger });
      await compliance.start();
      // A cluster worker keeps its token budget gauge; the primary evaluates the merged metrics.
      alerts = startOperationalAlerts({ metrics, logger, events }, { evaluate: options.clusterWorker !== true });
      // Pending deliveries of a previous run (or another replica) are queued again on start. A
      // large backlog or a slow queue must not keep svc from starting: after RECOVERY_WAIT_MS the
      // re-queue goes on in the background (a warning says so), and close() waits for it.
      const recovery = webhooks.recover().then(
        (pending) => {
          if (pending > 0) logger.info({ pending }, 'webhook deliveries re-enqueued');
        },
        (error: unknown) => logger.warn({ code: (error as { code?: unknown } | null)?.code ?? null, message: error instanceof Error ? error.message.slice(0, 200) : null }, 'webhook re-queue failed; the sweep queues pending deliveries as they fall due'),
      );
      let waited: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        recovery.then(() => true),
        new Promise<false>((resolve) => {
          waited = setTimeout(() => resolve(false), RECOVERY_WAIT_MS);
          waited.unref();
        }),
      ]);
      clearTimeout(waited);
      if (!finished) logger.warn({ waited_ms: RECOVERY_WAIT_MS }, 'webhook re-queue continues in the background; svc is serving');
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(redisProbe);
      // Each step gets a bounded time, so one stuck dependency cannot hold shutdown forever.
      const step = async (name: string, run: () => Promise<void> | void) => {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            Promise.resolve().then(run),
            new Promise<void>((_, reject) => {
              timer = setTimeout(() => reject(new Error(`${name} did not close within 10 s`)), 10_000);
            }),
          ]);
        } catch (error) {
          logger.error({ err: error, step: name }, 'close step failed');
        } finally {
          clearTimeout(timer);
        }
      };
      await step('operational alerts', () => alerts?.stop());
      await step('block audit writer', () => blockAudit?.stop());
      await step('audit jobs', () => stopAuditJobs?.());
      await step('gateway jobs', () => stopGatewayJobs?.());
      await step('compliance', () => compliance.close());
      await step('mcp', () => mcp.close());
      await step('webhooks', () => webhooks.close());
      await step('siem', () => siem.close());
      await step('apisec', () => apisec.close());
      await step('gateway', () => gateway.close());
      await step('verification provenance', () => verification.close());
      await step('detection', () => detection.close());
      await step('detection model', () => detectionModel?.close());
      await step('outbox', () => outbox.close());
      await step('accounts', () => accounts.close());
      await step('queue', () => queue.close());
      await step('cache', () => cache.close());
      await step('database', () => db.close());
      await step('telemetry', () => telemetry.close());
      metrics.close();
      requestLog.flush();
      logger.flush();
    },
  };
}

/** Where the CLI's local socket lives for an embedded data directory. */
export function controlSocketPath(config: ResolvedConfig): string {
  return join(config.dataDir, 'svc.sock');
}
