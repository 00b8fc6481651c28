/**
 * Configuration: read once from the environment, validated, frozen, passed down.
 *
 * This is the only module that reads `process.env` (callers pass `process.env` in; tests pass
 * a plain object). Every variable of the spec's configuration tables is here, plus PORT, HOST,
 * DATA_DIR and ALLOW_PRIVATE_TARGETS from DESIGN.md. An invalid value stops startup with a
 * `ConfigError` that names every bad variable at once.
 *
 * Embedded default: when none of DATABASE_URL, REDIS_URL and ENVIRONMENT is set, svc runs
 * embedded (PGlite under DATA_DIR, in-memory cache and queue) in development mode, and the
 * secrets are generated on first run and kept under DATA_DIR (see `embedded-secrets.ts`).
 * As soon as ENVIRONMENT is production (its default whenever storage is configured), the
 * storage URLs and both secrets are required, and the embedded schemes are accepted only when
 * given explicitly (`pglite:<dir>`, `memory:`).
 */

import { availableParallelism } from 'node:os';
import { BUILT_IN_PROVIDER_IDS, PROVIDER_CATALOGUE } from './providers.ts';

export type Environment = 'production' | 'staging' | 'development';
export type LogLevel = 'debug' | 'info' | 'warning' | 'error';

export type DatabaseTarget =
  | { kind: 'postgres'; url: string; appUrl: string | null }
  | { kind: 'pglite'; dir: string | null }; // null: in-memory

export type CacheTarget = { kind: 'redis'; url: string } | { kind: 'memory' };

export interface FeatureFlags {
  readonly mcpSecurity: boolean;
  readonly aiGateway: boolean;
  readonly geoBlocking: boolean;
  readonly hipaaBaa: boolean;
  readonly soc2Reports: boolean;
}

export type ServeRole = 'all-in-one' | 'collector';

/** The collector's mutual-TLS listener for sensors (docs/sensors-operations.md, "The sensor listener"). */
export interface SensorListenerConfig {
  readonly host: string;
  readonly port: number;
  /** SENSOR_TLS_CERT_FILE / SENSOR_TLS_KEY_FILE: the operator's server certificate (PEM); null: one issued by the sensor CA at start. */
  readonly certificateFile: string | null;
  readonly keyFile: string | null;
  /** SENSOR_TLS_HOSTNAMES: names and addresses the issued server certificate is for (besides localhost and the loopback addresses). */
  readonly hostnames: readonly string[];
}

export interface Config {
  readonly environment: Environment;
  /**
   * ROLE (`svc serve --role collector` sets it): all-in-one (default) serves every pillar; collector
   * serves the API, the dashboard and the sensors, and refuses the pillars' traffic (their sensors
   * serve it). The collector role needs DATABASE_URL and REDIS_URL.
   */
  readonly role: ServeRole;
  /**
   * SENSOR_LISTEN (HOST:PORT, or off): the mutual-TLS listener sensors talk to. Default: off in the
   * all-in-one role (sensors may sign over the main port, as before), HOST:8443 in the collector role.
   */
  readonly sensorListener: SensorListenerConfig | null;
  /**
   * SENSOR_ENVIRONMENT_PROVIDER_KEYS (default false): whether a gateway sensor's context may carry
   * the deployment's own provider keys (OPENAI_API_KEY …) for an org that stored none. Off, a
   * gateway sensor gets only its org's stored keys: the sensor opens its context, so an org
   * enrolling one would otherwise hold the operator's keys in clear.
   */
  readonly sensorEnvironmentProviderKeys: boolean;
  /** True when storage was not configured and svc chose PGlite + memory on its own. */
  readonly embedded: boolean;
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly database: DatabaseTarget;
  readonly cache: CacheTarget;
  /** Prefix for every cache key; lets several instances share one Redis without colliding. */
  readonly cachePrefix: string;
  /** null until resolved: embedded mode fills them from DATA_DIR (see resolveEmbeddedSecrets). */
  readonly secretKey: string | null;
  readonly apiEncryptionKey: string | null;
  readonly metricsToken: string | null;
  readonly logLevel: LogLevel;
  readonly allowedOrigins: readonly string[];
  /** WORKERS: processes serving the port; default the cores this process may use (os.availableParallelism()). */
  readonly workers: number;
  /**
   * HEAP_GROWING_PERCENT (default 25; 0: V8's own heuristic, up to 300): how far past the live set
   * each serving process's V8 heap grows before the next full collection (src/platform/heap-growth.ts).
   */
  readonly heapGrowingPercent: number;
  readonly allowPrivateTargets: boolean;
  readonly trustProxy: boolean;
  /**
   * GATEWAY_PATH_SANDBOX (default true): every answer a backend sends through `/gw/{id}` carries
   * `Content-Security-Policy: sandbox …` without allow-same-origin, so a backend's page runs in an
   * opaque origin and cannot reach svc's cookies, storage or API (docs/apisec.md). false only when
   * svc's host name serves gateways and nothing else (no dashboard users sign in on it).
   */
  readonly gatewayPathSandbox: boolean;
  readonly errorMonitoringDsn: string | null;
  readonly analyticsApiKey: string | null;
  /**
   * Upstream provider keys from the environment, by provider id (e.g. OPENAI_API_KEY → openai).
   * The built-in mock providers appear here (with a placeholder key) only when mockProvider is on.
   */
  readonly providerEnvKeys: Readonly<Record<string, string>>;
  /** GATEWAY_MOCK_PROVIDER: the built-in `mock` / `mock_backup` providers are available. Default on in development only. */
  readonly mockProvider: boolean;
  /** Detection T4 (LLM escalation): provider and model to ask, or null when not configured. */
  readonly detectionT4: DetectionT4Config | null;
  /**
   * DETECTION_SEMANTIC (default off): the semantic tier (sentence embedding + learned head, in a
   * worker thread, model loaded on first use) scores prompts, tool outputs and model answers.
   * Off by default because the sealed set did not confirm a gain (docs/detection.md, issue #32).
   */
  readonly detectionSemantic: boolean;
  /** DETECTION_SEMANTIC_TIMEOUT_MS (default 2000): longest wait for the semantic tier's answer; past it the tier fails open. */
  readonly detectionSemanticTimeoutMs: number;
  /**
   * The local model tier (DETECTION_MODEL_DIR): an operator's ONNX text classifier (Llama Prompt
   * Guard 2, ProtectAI's DeBERTa v3 prompt-injection v2, …) run inside T3 in a worker thread,
   * loaded at startup, never downloaded; null = not configured (docs/detection-ml.md).
   */
  readonly detectionModel: DetectionModelConfig | null;
  /**
   * Verification's grounding tier 2 (VERIFICATION_GROUNDING_MODEL_DIR): a local ONNX NLI model
   * loaded at startup, never downloaded; null = not configured (tier 1, and the judge where a
   * policy enables it).
   */
  readonly verificationGroundingModel: GroundingModelConfig | null;
  readonly features: FeatureFlags;
  /**
   * OpenTelemetry traces (platform/telemetry.ts), from the standard OTEL_* variables: exported
   * with OTLP over HTTP (JSON) to `tracesEndpoint` when one is set, off otherwise.
   */
  readonly telemetry: { readonly tracesEndpoint: string | null; readonly serviceName: string; readonly headers: Readonly<Record<string, string>> };
  /** API key ids (MCP_SUPER_ADMIN_KEYS, comma-separated) whose MCP role is super_admin. */
  readonly mcpSuperAdminKeys: readonly string[];
  /**
   * MCP_STDIO_SERVERS: the operator's allow-list of local MCP server commands svc may spawn as
   * stdio upstreams, by name (empty = stdio upstreams off). Org admins register one by name;
   * no command ever comes from an API client (docs/mcp.md "Stdio upstreams").
   */
  readonly mcpStdioServers: Readonly<Record<string, McpStdioCommand>>;
  /**
   * MCP_ALLOWED_ORIGINS: browser origins (`https://app.example.com`) allowed to call the MCP
   * endpoints besides loopback ones; `*` switches the Origin check off. The entries of
   * ALLOWED_ORIGINS other than `*` are allowed too (docs/mcp.md "Origin and Host validation").
   */
  readonly mcpAllowedOrigins: readonly string[];
  /**
   * MCP_ALLOWED_HOSTS: host names (lower case, no port) the MCP endpoints answer under; empty =
   * any `Host`. A same-origin browser request is allowed when its host is listed here.
   */
  readonly mcpAllowedHosts: readonly string[];
  /**
   * PUBLIC_URL: the address users reach svc at (no trailing slash), for links sent by e-mail
   * (invitations) and for the addresses an identity provider sends sign-ins to (the OIDC
   * redirect_uri, the SAML ACS). Default http://HOST:PORT.
   */
  readonly publicUrl: string;
  /**
   * Whether PUBLIC_URL was set. Unset, single sign-on builds its addresses from the request's
   * Host only when that names the loopback (a developer's machine); any other Host is refused
   * (SSO_PUBLIC_URL_REQUIRED), since a Host header is the client's to choose.
   */
  readonly publicUrlSet: boolean;
  /**
   * SMTP_URL (smtp:// or smtps://user:password@host:port) and SMTP_FROM: where invitation
   * e-mails go out; null = not configured (the invitation's link is then returned to the admin
   * who made it, once, to hand over; docs/accounts.md).
   */
  readonly smtp: { readonly url: string; readonly from: string } | null;
  /**
   * Dashboard sessions: SESSION_IDLE_TIMEOUT_MINUTES (default 30) without a request ends one,
   * SESSION_ABSOLUTE_TIMEOUT_HOURS (default 12) after sign-in ends it whatever its use.
   */
  readonly sessions: { readonly idleTimeoutMinutes: number; readonly absoluteTimeoutHours: number };
  /** INVITATION_TTL_HOURS (default 72): how long an invitation link can be accepted. */
  readonly invitationTtlHours: number;
  /**
   * The self-hosted licence (docs/sensors.md, "Licences"): LICENSE_FILE, the signed licence
   * document delivered out of band (null: none; the org plans' sensor limits apply), and the
   * Ed25519 public key it is verified against offline: the release key below, or
   * LICENSE_PUBLIC_KEY, which only a deployment outside production may set (tests and development
   * use the documented dev key pair of test/vectors/sensors/licence.json).
   */
  readonly licence: { readonly file: string | null; readonly publicKey: string };
}

/**
 * The release key that signs licences (Ed25519, raw public key, base64url). Its private half is
 * never in the repository; only the release process holds it.
 */
export const RELEASE_LICENSE_PUBLIC_KEY = 'GghkYkecWzA2UDFcCh3BsUEIT3qP6Q_VFF1V3e30evw';

export interface McpStdioCommand {
  readonly command: string;
  readonly args: readonly string[];
  /** The child's whole environment: PATH and HOME of svc's, plus the entry's `env` (nothing else of svc's). */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string | null;
  /** Org ids allowed to register it; null = every org. */
  readonly orgs: readonly string[] | null;
}

export interface DetectionT4Config {
  readonly provider: string;
  readonly model: string;
  /** Hard deadline of one T4 call; past it T4 fails open and the decision says so. */
  readonly timeoutMs: number;
  /** Replaces the provider's default base URL (self-hosted judge model). */
  readonly baseUrl: string | null;
}

/** The kinds of inspected text the local model tier may read (DETECTION_MODEL_KINDS). */
export const DETECTION_MODEL_KINDS = ['prompt', 'tool_output', 'llm_output', 'tool_definition'] as const;

export interface DetectionModelConfig {
  /** The model directory as given (resolved against the working directory when loaded). */
  readonly dir: string;
  /** DETECTION_MODEL_LABELS: the labels whose probability is the attack probability; null = those named like one (INJECTION, JAILBREAK, MALICIOUS, …). */
  readonly attackLabels: readonly string[] | null;
  /** DETECTION_MODEL_THRESHOLD (default 0.5): attack probability at or above which the model's reading is a finding that blocks. */
  readonly threshold: number;
  /** DETECTION_MODEL_KINDS (default prompt,tool_output): the kinds of text the model reads. */
  readonly kinds: readonly (typeof DETECTION_MODEL_KINDS)[number][];
  /** DETECTION_MODEL_TIMEOUT_MS (default 1000): longest wait for the model's answer; past it the tier fails open. */
  readonly timeoutMs: number;
}

export interface GroundingModelConfig {
  /** The model directory as given (resolved against the working directory when loaded). */
  readonly dir: string;
  /** Per-claim budget; past it the claim keeps its lexical score and the layer's info says so. */
  readonly timeoutMs: number;
}

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Provider ids and the environment variable that carries each one's key (from the provider catalogue). */
export const PROVIDER_ENV_VARIABLES: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(PROVIDER_CATALOGUE.flatMap((entry) => (entry.envVariable === null ? [] : [[entry.id, entry.envVariable]]))),
);

type Env = Readonly<Record<string, string | undefined>>;

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warning', 'error'];
const ENVIRONMENTS: readonly Environment[] = ['production', 'staging', 'development'];

export function loadConfig(env: Env): Config {
  const problems: string[] = [];
  const text = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };

  const bool = (name: string, fallback: boolean): boolean => {
    const value = text(name);
    if (value === undefined) return fallback;
    if (/^(1|true|yes|on)$/i.test(value)) return true;
    if (/^(0|false|no|off)$/i.test(value)) return false;
    problems.push(`${name} must be true or false (got "${value}")`);
    return fallback;
  };

  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const value = text(name);
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
      problems.push(`${name} must be an integer between ${min} and ${max} (got "${value}")`);
      return fallback;
    }
    return parsed;
  };

  const databaseUrl = text('DATABASE_URL');
  const redisUrl = text('REDIS_URL');
  const environmentText = text('ENVIRONMENT');
  const embedded = databaseUrl === undefined && redisUrl === undefined && environmentText === undefined;

  let environment: Environment = embedded ? 'development' : 'production';
  if (environmentText !== undefined) {
    if ((ENVIRONMENTS as readonly string[]).includes(environmentText)) environment = environmentText as Environment;
    else problems.push(`ENVIRONMENT must be one of ${ENVIRONMENTS.join(', ')} (got "${environmentText}")`);
  }
  const strict = environment === 'production';

  const dataDir = text('DATA_DIR') ?? './data';

  let database: DatabaseTarget = { kind: 'pglite', dir: `${dataDir}/pglite` };
  if (databaseUrl === undefined) {
    if (strict) problems.push('DATABASE_URL is required in production (postgres://… or, explicitly, pglite:<dir>)');
  } else if (/^postgres(ql)?:\/\//i.test(databaseUrl)) {
    const appUrl = text('DATABASE_APP_URL') ?? null;
    if (appUrl !== null && !/^postgres(ql)?:\/\//i.test(appUrl)) problems.push('DATABASE_APP_URL must be a postgres:// URL');
    database = { kind: 'postgres', url: databaseUrl, appUrl };
  } else if (databaseUrl.startsWith('pglite:')) {
    const location = databaseUrl.slice('pglite:'.length);
    if (location === '') problems.push('DATABASE_URL pglite: needs a directory or "memory"');
    database = { kind: 'pglite', dir: location === 'memory' ? null : location };
  } else {
    problems.push('DATABASE_URL must start with postgres://, postgresql:// or pglite:');
  }

  let cache: CacheTarget = { kind: 'memory' };
  if (redisUrl === undefined) {
    if (strict) problems.push('REDIS_URL is required in production (redis://… or, explicitly, memory:)');
  } else if (/^rediss?:\/\//i.test(redisUrl)) {
    cache = { kind: 'redis', url: redisUrl };
  } else if (redisUrl === 'memory:') {
    cache = { kind: 'memory' };
  } else {
    problems.push('REDIS_URL must start with redis://, rediss:// or be memory:');
  }

  const secretKey = text('SECRET_KEY') ?? null;
  if (secretKey === null) {
    if (strict) problems.push('SECRET_KEY is required in production (32 or more characters)');
  } else if (secretKey.length < 32) {
    problems.push('SECRET_KEY must be at least 32 characters');
  }

  const apiEncryptionKey = text('API_ENCRYPTION_KEY') ?? null;
  if (apiEncryptionKey === null) {
    if (strict) problems.push('API_ENCRYPTION_KEY is required in production (32 or more characters, or 32 bytes in base64/hex)');
  } else if (apiEncryptionKey.length < 32) {
    problems.push('API_ENCRYPTION_KEY must be at least 32 characters');
  }

  const metricsToken = text('METRICS_TOKEN') ?? null;
  if (metricsToken !== null && metricsToken.length < 16) problems.push('METRICS_TOKEN must be at least 16 characters');

  let logLevel: LogLevel = 'info';
  const logLevelText = text('LOG_LEVEL');
  if (logLevelText !== undefined) {
    const normalized = logLevelText.toLowerCase() === 'warn' ? 'warning' : logLevelText.toLowerCase();
    if ((LOG_LEVELS as readonly string[]).includes(normalized)) logLevel = normalized as LogLevel;
    else problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevelText}")`);
  }

  const allowedOrigins = (text('ALLOWED_ORIGINS') ?? '*')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
  for (const origin of allowedOrigins) {
    if (origin !== '*' && !/^https?:\/\/[^\s/]+$/.test(origin)) {
      problems.push(`ALLOWED_ORIGINS entry "${origin}" must be * or an origin like https://app.example.com`);
    }
  }

  const providerEnvKeys: Record<string, string> = {};
  for (const [provider, variable] of Object.entries(PROVIDER_ENV_VARIABLES)) {
    const value = text(variable);
    if (value !== undefined) providerEnvKeys[provider] = value;
  }
  // The built-in mock providers need no key: a placeholder makes them routable when switched on.
  const mockProvider = bool('GATEWAY_MOCK_PROVIDER', environment === 'development');
  if (mockProvider) for (const id of BUILT_IN_PROVIDER_IDS) providerEnvKeys[id] = 'mock';

  const detectionSemantic = bool('DETECTION_SEMANTIC', false);
  const detectionSemanticTimeoutMs = integer('DETECTION_SEMANTIC_TIMEOUT_MS', 2_000, 50, 60_000);
  let detectionT4: DetectionT4Config | null = null;
  const t4Provider = text('DETECTION_T4_PROVIDER');
  const t4Model = text('DETECTION_T4_MODEL');
  const t4TimeoutMs = integer('DETECTION_T4_TIMEOUT_MS', 2_000, 100, 30_000);
  const t4BaseUrl = text('DETECTION_T4_BASE_URL') ?? null;
  if (t4Provider !== undefined || t4Model !== undefined) {
    if (t4Provider === undefined || t4Model === undefined) {
      problems.push('DETECTION_T4_PROVIDER and DETECTION_T4_MODEL must be set together');
    } else if (!(t4Provider in PROVIDER_ENV_VARIABLES) && t4Provider !== 'openai_compatible') {
      problems.push(`DETECTION_T4_PROVIDER must be one of ${[...Object.keys(PROVIDER_ENV_VARIABLES), 'openai_compatible'].join(', ')} (got "${t4Provider}")`);
    } else if (t4Provider === 'openai_compatible' && t4BaseUrl === null) {
      problems.push('DETECTION_T4_BASE_URL is required when DETECTION_T4_PROVIDER is openai_compatible');
    } else if (t4Provider !== 'ollama' && t4Provider !== 'openai_compatible' && providerEnvKeys[t4Provider] === undefined) {
      problems.push(`DETECTION_T4_PROVIDER ${t4Provider} needs its key in ${PROVIDER_ENV_VARIABLES[t4Provider]}`);
    } else if (t4BaseUrl !== null && !/^https?:\/\/[^\s]+$/i.test(t4BaseUrl)) {
      problems.push('DETECTION_T4_BASE_URL must be an http(s) URL');
    } else {
      detectionT4 = { provider: t4Provider, model: t4Model, timeoutMs: t4TimeoutMs, baseUrl: t4BaseUrl };
    }
  }

  // Browser origins allowed on the MCP endpoints (besides loopback ones), normalized by URL.
  const originOf = (value: string): string | null => {
    if (!/^https?:\/\/[^\s/?#]+$/i.test(value)) return null;
    try {
      return new URL(value).origin;
    } catch {
      return null;
    }
  };
  const mcpAllowedOrigins: string[] = [];
  for (const origin of (text('MCP_ALLOWED_ORIGINS') ?? '').split(',').map((item) => item.trim()).filter((item) => item !== '')) {
    const normalized = origin === '*' ? '*' : originOf(origin);
    if (normalized === null) problems.push(`MCP_ALLOWED_ORIGINS entry "${origin}" must be * or an origin like https://app.example.com (scheme, host, optional port; no path)`);
    else mcpAllowedOrigins.push(normalized);
  }
  for (const origin of allowedOrigins) {
    const normalized = origin === '*' ? null : originOf(origin);
    if (normalized !== null) mcpAllowedOrigins.push(normalized);
  }
  const mcpAllowedHosts: string[] = [];
  for (const host of (text('MCP_ALLOWED_HOSTS') ?? '').split(',').map((item) => item.trim().toLowerCase()).filter((item) => item !== '')) {
    if (!/^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?$|^\[[0-9a-f:.]+\]$/.test(host)) problems.push(`MCP_ALLOWED_HOSTS entry "${host}" must be a host name like mcp.example.com (no scheme, no port)`);
    else mcpAllowedHosts.push(host);
  }

  let detectionModel: DetectionModelConfig | null = null;
  const modelDir = text('DETECTION_MODEL_DIR');
  const modelVariables = ['DETECTION_MODEL_LABELS', 'DETECTION_MODEL_THRESHOLD', 'DETECTION_MODEL_KINDS', 'DETECTION_MODEL_TIMEOUT_MS'];
  if (modelDir !== undefined) {
    const labels = (text('DETECTION_MODEL_LABELS') ?? '').split(',').map((label) => label.trim()).filter((label) => label !== '');
    const thresholdText = text('DETECTION_MODEL_THRESHOLD');
    const threshold = thresholdText === undefined ? 0.5 : Number(thresholdText);
    if (!(threshold > 0 && threshold < 1)) problems.push(`DETECTION_MODEL_THRESHOLD must be a number between 0 and 1, exclusive (got "${thresholdText}")`);
    const kinds = (text('DETECTION_MODEL_KINDS') ?? 'prompt,tool_output').split(',').map((kind) => kind.trim()).filter((kind) => kind !== '');
    const badKinds = kinds.filter((kind) => !(DETECTION_MODEL_KINDS as readonly string[]).includes(kind));
    if (kinds.length === 0 || badKinds.length > 0) problems.push(`DETECTION_MODEL_KINDS must list some of ${DETECTION_MODEL_KINDS.join(', ')} (got "${text('DETECTION_MODEL_KINDS') ?? ''}")`);
    const timeoutMs = integer('DETECTION_MODEL_TIMEOUT_MS', 1_000, 50, 60_000);
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(modelDir)) problems.push('DETECTION_MODEL_DIR must be a local directory path, not a URL (svc never downloads a model)');
    else detectionModel = { dir: modelDir, attackLabels: labels.length === 0 ? null : labels, threshold, kinds: kinds as DetectionModelConfig['kinds'], timeoutMs };
  } else {
    const stray = modelVariables.filter((name) => text(name) !== undefined);
    if (stray.length > 0) problems.push(`${stray.join(', ')} ${stray.length === 1 ? 'is' : 'are'} set but DETECTION_MODEL_DIR is not (they configure the local model tier)`);
  }

  let verificationGroundingModel: GroundingModelConfig | null = null;
  const groundingModelDir = text('VERIFICATION_GROUNDING_MODEL_DIR');
  const groundingModelTimeoutMs = integer('VERIFICATION_GROUNDING_MODEL_TIMEOUT_MS', 250, 10, 10_000);
  if (groundingModelDir !== undefined) {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(groundingModelDir)) problems.push('VERIFICATION_GROUNDING_MODEL_DIR must be a local directory path, not a URL (svc never downloads a model)');
    else verificationGroundingModel = { dir: groundingModelDir, timeoutMs: groundingModelTimeoutMs };
  } else if (text('VERIFICATION_GROUNDING_MODEL_TIMEOUT_MS') !== undefined) {
    problems.push('VERIFICATION_GROUNDING_MODEL_TIMEOUT_MS is set but VERIFICATION_GROUNDING_MODEL_DIR is not (the budget applies to a local grounding model)');
  }

  const mcpStdioServers: Record<string, McpStdioCommand> = {};
  const stdioText = text('MCP_STDIO_SERVERS');
  if (stdioText !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(stdioText);
    } catch {
      parsed = undefined;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      problems.push('MCP_STDIO_SERVERS must be a JSON object: { "<name>": { "command": "…", "args": ["…"], "env": { … }, "cwd": "…", "orgs": ["<org id>"] } }');
    } else {
      for (const [name, entry] of Object.entries(parsed as Record<string, unknown>)) {
        const item = (entry ?? {}) as { command?: unknown; args?: unknown; env?: unknown; cwd?: unknown; orgs?: unknown };
        const strings = (value: unknown): value is string[] => Array.isArray(value) && value.every((part) => typeof part === 'string');
        if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name)) problems.push(`MCP_STDIO_SERVERS name "${name}" must be 1-100 characters [A-Za-z0-9._-]`);
        else if (typeof item.command !== 'string' || item.command === '') problems.push(`MCP_STDIO_SERVERS.${name}.command must be a non-empty string`);
        else if (item.args !== undefined && !strings(item.args)) problems.push(`MCP_STDIO_SERVERS.${name}.args must be an array of strings`);
        else if (item.env !== undefined && (item.env === null || typeof item.env !== 'object' || !Object.values(item.env).every((value) => typeof value === 'string'))) problems.push(`MCP_STDIO_SERVERS.${name}.env must be an object of strings`);
        else if (item.cwd !== undefined && typeof item.cwd !== 'string') problems.push(`MCP_STDIO_SERVERS.${name}.cwd must be a string`);
        else if (item.orgs !== undefined && !strings(item.orgs)) problems.push(`MCP_STDIO_SERVERS.${name}.orgs must be an array of org ids`);
        else {
          const base: Record<string, string> = {};
          for (const variable of ['PATH', 'HOME'] as const) if (env[variable] !== undefined) base[variable] = env[variable]!;
          mcpStdioServers[name] = { command: item.command, args: item.args ?? [], env: { ...base, ...(item.env as Record<string, string> | undefined) }, cwd: (item.cwd as string | undefined) ?? null, orgs: (item.orgs as string[] | undefined) ?? null };
        }
      }
    }
  }

  const port = integer('PORT', 8080, 0, 65535);
  const host = text('HOST') ?? '127.0.0.1';
  let publicUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const publicUrlText = text('PUBLIC_URL');
  if (publicUrlText !== undefined) {
    if (/^https?:\/\/[^\s/?#]+(?:\/[^\s?#]*)?$/i.test(publicUrlText)) publicUrl = publicUrlText.replace(/\/+$/, '');
    else problems.push(`PUBLIC_URL must be an http(s) URL without query or fragment, like https://svc.example.com (got "${publicUrlText}")`);
  }
  let smtp: Config['smtp'] = null;
  const smtpUrl = text('SMTP_URL');
  const smtpFrom = text('SMTP_FROM') ?? 'svc <no-reply@localhost>';
  if (smtpUrl !== undefined) {
    if (/^smtps?:\/\/[^\s]+$/i.test(smtpUrl)) smtp = { url: smtpUrl, from: smtpFrom };
    else problems.push('SMTP_URL must be an smtp:// or smtps:// URL (smtp://user:password@host:587)');
  } else if (text('SMTP_FROM') !== undefined) {
    problems.push('SMTP_FROM is set but SMTP_URL is not (the sender applies to the SMTP server)');
  }
  const licenseFile = text('LICENSE_FILE') ?? null;
  const licensePublicKey = text('LICENSE_PUBLIC_KEY');
  if (licensePublicKey !== undefined) {
    if (strict) problems.push('LICENSE_PUBLIC_KEY may replace the release key only outside production (ENVIRONMENT=staging or development)');
    else if (!/^[A-Za-z0-9_-]{43}$/.test(licensePublicKey)) problems.push('LICENSE_PUBLIC_KEY must be a raw Ed25519 public key in base64url (43 characters)');
  }
  if (licenseFile !== null && /^[a-z][a-z0-9+.-]*:\/\//i.test(licenseFile)) problems.push('LICENSE_FILE must be a local file path, not a URL (licences arrive out of band)');

  const roleText = text('ROLE') ?? 'all-in-one';
  const role: ServeRole = roleText === 'collector' ? 'collector' : 'all-in-one';
  if (roleText !== 'collector' && roleText !== 'all-in-one') problems.push(`ROLE (svc serve --role) must be all-in-one or collector (got "${roleText}")`);
  if (role === 'collector' && (database.kind !== 'postgres' || cache.kind !== 'redis')) problems.push('the collector role (svc serve --role collector) needs DATABASE_URL (PostgreSQL) and REDIS_URL: it is the one process every sensor and replica shares');
  let sensorListener: SensorListenerConfig | null = null;
  const sensorListenText = text('SENSOR_LISTEN') ?? (role === 'collector' ? `${host.includes(':') ? `[${host}]` : host}:8443` : 'off');
  if (!/^(off|none|false)$/i.test(sensorListenText)) {
    const match = /^\[?([^\]\s]+?)\]?:(\d{1,5})$/.exec(sensorListenText);
    if (match === null || Number(match[2]) > 65_535) problems.push(`SENSOR_LISTEN must be HOST:PORT (like 0.0.0.0:8443) or off (got "${sensorListenText}")`);
    else {
      const certificateFile = text('SENSOR_TLS_CERT_FILE') ?? null;
      const keyFile = text('SENSOR_TLS_KEY_FILE') ?? null;
      if ((certificateFile === null) !== (keyFile === null)) problems.push('SENSOR_TLS_CERT_FILE and SENSOR_TLS_KEY_FILE go together (the server certificate and its key, PEM)');
      const hostnames = (text('SENSOR_TLS_HOSTNAMES') ?? '').split(',').map((item) => item.trim()).filter((item) => item !== '');
      for (const name of hostnames) if (!/^[A-Za-z0-9.:-]{1,253}$/.test(name)) problems.push(`SENSOR_TLS_HOSTNAMES entry "${name}" must be a host name or an IP address`);
      sensorListener = { host: match[1]!, port: Number(match[2]), certificateFile, keyFile, hostnames };
    }
  }

  const config: Config = {
    environment,
    embedded,
    role,
    sensorListener,
    port,
    host,
    publicUrl,
    publicUrlSet: publicUrlText !== undefined,
    smtp,
    sessions: {
      idleTimeoutMinutes: integer('SESSION_IDLE_TIMEOUT_MINUTES', 30, 1, 1_440),
      absoluteTimeoutHours: integer('SESSION_ABSOLUTE_TIMEOUT_HOURS', 12, 1, 720),
    },
    invitationTtlHours: integer('INVITATION_TTL_HOURS', 72, 1, 720),
    dataDir,
    database,
    cache,
    cachePrefix: text('CACHE_PREFIX') ?? 'svc:',
    secretKey,
    apiEncryptionKey,
    metricsToken,
    logLevel,
    allowedOrigins,
    mcpSuperAdminKeys: (text('MCP_SUPER_ADMIN_KEYS') ?? '').split(',').map((item) => item.trim()).filter((item) => item !== ''),
    mcpStdioServers,
    mcpAllowedOrigins: [...new Set(mcpAllowedOrigins)],
    mcpAllowedHosts,
    telemetry: telemetryConfig(text, problems),
    licence: { file: licenseFile, publicKey: licensePublicKey !== undefined && !strict ? licensePublicKey : RELEASE_LICENSE_PUBLIC_KEY },
    // One worker per core the process may use: more workers than cores only add context switches
    // (issue #39: WORKERS=4 on 2 vCPUs served 0.45–0.56× the requests of WORKERS=1).
    workers: integer('WORKERS', Math.min(256, availableParallelism()), 1, 256),
    // A full collection once the heap is 25% over what survived the last one, instead of V8's up
    // to 300%: the embedded server's RSS under load (issue #39 item 6, docs/benchmarks.md).
    heapGrowingPercent: integer('HEAP_GROWING_PERCENT', 25, 0, 300),
    allowPrivateTargets: bool('ALLOW_PRIVATE_TARGETS', false),
    sensorEnvironmentProviderKeys: bool('SENSOR_ENVIRONMENT_PROVIDER_KEYS', false),
    trustProxy: bool('TRUST_PROXY', false),
    gatewayPathSandbox: bool('GATEWAY_PATH_SANDBOX', true),
    errorMonitoringDsn: text('ERROR_MONITORING_DSN') ?? null,
    analyticsApiKey: text('ANALYTICS_API_KEY') ?? null,
    providerEnvKeys,
    mockProvider,
    detectionT4,
    detectionSemantic,
    detectionSemanticTimeoutMs,
    detectionModel,
    verificationGroundingModel,
    features: {
      mcpSecurity: bool('FEATURE_MCP_SECURITY', true),
      aiGateway: bool('FEATURE_AI_GATEWAY', true),
      geoBlocking: bool('FEATURE_GEO_BLOCKING', false),
      hipaaBaa: bool('FEATURE_HIPAA_BAA', false),
      soc2Reports: bool('FEATURE_SOC2_REPORTS', false),
    },
  };

  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

/** A config whose secrets are known: what the rest of svc receives. */
export type ResolvedConfig = Config & {
  readonly secretKey: string;
  readonly apiEncryptionKey: string;
  readonly metricsToken: string;
};

export function withSecrets(config: Config, secrets: { secretKey: string; apiEncryptionKey: string; metricsToken: string }): ResolvedConfig {
  return deepFreeze({
    ...config,
    secretKey: config.secretKey ?? secrets.secretKey,
    apiEncryptionKey: config.apiEncryptionKey ?? secrets.apiEncryptionKey,
    metricsToken: config.metricsToken ?? secrets.metricsToken,
  });
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value as Record<string, unknown>)) deepFreeze(inner);
  }
  return value;
}

/**
 * What the CLI's API commands need to reach a running svc (src/api-commands.ts): SVC_URL (else
 * http://HOST:PORT of this machine's svc) and SVC_KEY. Nothing else of the server's config.
 */
export function loadClientConfig(env: Env): { url: string; apiKey: string | null } {
  const value = (name: string): string | undefined => {
    const text = env[name];
    return text === undefined || text.trim() === '' ? undefined : text.trim();
  };
  const host = value('HOST') ?? '127.0.0.1';
  const url = value('SVC_URL') ?? `http://${host.includes(':') ? `[${host}]` : host}:${value('PORT') ?? '8080'}`;
  return { url, apiKey: value('SVC_KEY') ?? null };
}

/**
 * The standard OpenTelemetry variables svc honours: OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER
 * (otlp | none), OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL) or OTEL_EXPORTER_OTLP_ENDPOINT
 * (a base URL; /v1/traces is appended), OTEL_EXPORTER_OTLP_HEADERS (k=v,k=v) and
 * OTEL_SERVICE_NAME (default svc). Traces are off unless an endpoint is set.
 */
function telemetryConfig(text: (name: string) => string | undefined, problems: string[]): Config['telemetry'] {
  const off = /^true$/i.test(text('OTEL_SDK_DISABLED') ?? '') || (text('OTEL_TRACES_EXPORTER') ?? 'otlp').toLowerCase() === 'none';
  const exporter = (text('OTEL_TRACES_EXPORTER') ?? 'otlp').toLowerCase();
  if (exporter !== 'otlp' && exporter !== 'none') problems.push(`OTEL_TRACES_EXPORTER must be otlp or none (got "${exporter}")`);
  const base = text('OTEL_EXPORTER_OTLP_ENDPOINT');
  let endpoint = text('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`);
  if (endpoint !== undefined && !/^https?:\/\/[^\s]+$/i.test(endpoint)) {
    problems.push(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL (got "${endpoint}")`);
    endpoint = undefined;
  }
  const headers: Record<string, string> = {};
  for (const pair of (text('OTEL_EXPORTER_OTLP_HEADERS') ?? '').split(',')) {
    const equals = pair.indexOf('=');
    if (equals > 0) headers[decodeURIComponent(pair.slice(0, equals).trim())] = decodeURIComponent(pair.slice(equals + 1).trim());
  }
  return { tracesEndpoint: off || endpoint === undefined ? null : endpoint, serviceName: text('OTEL_SERVICE_NAME') ?? 'svc', headers };
}
