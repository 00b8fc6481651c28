/**
 * Shared types of the API-security capability: a protected gateway (a reverse proxy in front of
 * an org's API) and the settings its traffic is handled with.
 */

export type GatewayMode = 'monitor' | 'block';
export type BotClass = 'human' | 'automation' | 'bot' | 'scraper' | 'scanner';
export const BOT_CLASSES: readonly BotClass[] = ['human', 'automation', 'bot', 'scraper', 'scanner'];
/** What the gateway does with a request of a bot class (block mode; monitor mode only logs). */
export type BotAction = 'allow' | 'log' | 'challenge' | 'block';

export interface RateLimitSettings {
  /** Requests per minute per client IP through this gateway. */
  readonly requestsPerMinute: number;
  /** Requests per second per client IP (burst), or null for none. */
  readonly burst: number | null;
}

export interface HealthCheckSettings {
  /** Path requested on the backend (GET); any status below 500 counts as healthy. */
  readonly path: string;
  readonly intervalSeconds: number;
  readonly timeoutMs: number;
  /** Consecutive failures before the backend is marked down. */
  readonly unhealthyAfter: number;
}

export interface GatewaySettings {
  readonly rateLimit: RateLimitSettings | null;
  readonly botPolicy: Readonly<Record<BotClass, BotAction>>;
  /** Active health checks, or null: none (the backend is never probed and counts as healthy). */
  readonly healthCheck: HealthCheckSettings | null;
  /** Time allowed for the backend to answer (headers), in milliseconds. */
  readonly timeoutMs: number;
  /**
   * What a blocked or challenged client is told: 'hidden' (default) — a generic answer with the
   * request id only; 'full' — the threat decision (score, patterns, explanation), for APIs whose
   * clients are the operator's own.
   */
  readonly blockDetails: BlockDetails;
}

export type BlockDetails = 'hidden' | 'full';
export const BLOCK_DETAILS: readonly BlockDetails[] = ['hidden', 'full'];

export interface Gateway {
  readonly id: string;
  readonly orgId: string;
  readonly name: string;
  /** Origin and base path the traffic is forwarded to (e.g. http://10.0.0.5:8080/api). */
  readonly backendUrl: string;
  readonly mode: GatewayMode;
  /** Host header value (lower case, no port) under which svc receives this gateway's traffic. */
  readonly hostname: string | null;
  /** Path prefix under which svc receives the traffic (stripped before forwarding). */
  readonly pathPrefix: string | null;
  /** The OpenAPI document (the API inventory), or null. */
  readonly openapi: unknown;
  readonly settings: GatewaySettings;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export const DEFAULT_BOT_POLICY: Readonly<Record<BotClass, BotAction>> = {
  human: 'allow',
  automation: 'allow',
  bot: 'allow',
  scraper: 'log',
  scanner: 'block',
};

/** The defaults of the fields a `health_check` object leaves out (a gateway without one is not checked). */
export const DEFAULT_HEALTH_CHECK: HealthCheckSettings = { path: '/', intervalSeconds: 10, timeoutMs: 2_000, unhealthyAfter: 3 };
export const DEFAULT_TIMEOUT_MS = 30_000;
