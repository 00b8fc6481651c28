/**
 * T5 behavioural baselines — the stateful edge: loads the small state records of `model.ts` from
 * the cache, advances them by one request and stores them back.
 *
 * Posture: same semantics on Redis and in memory. In memory every update is a synchronous
 * read-modify-write (atomic on the event loop). On Redis, replicas share the baselines and an
 * update is a compare-and-set in Lua (the write happens only if the stored record is still the one
 * that was read), retried a few times; after that the observation is scored but not stored,
 * which under-counts rather than corrupts. When Redis is down the cache's memory store is used,
 * so baselines become per replica until it returns. Usernames and endpoints are keyed by hash;
 * IPs appear in keys (they already appear in logs) with the records expiring after a day.
 */
import type { Redis } from 'ioredis';
import type { Cache, MemoryStore } from '../../platform/cache.ts';
import { sha256Hex } from '../../platform/crypto.ts';
import type { Anomaly, BehaviourEvent, BehaviourOptions, EndpointState, IpState, UsernameState } from './model.ts';
import {
  DEFAULT_BEHAVIOUR_OPTIONS,
  combineAnomalies,
  emptyEndpoint,
  emptyIp,
  emptyUsername,
  stepEndpoint,
  stepIp,
  stepLogins,
  stepUsername,
} from './model.ts';

export interface BehaviourResult {
  /** 0..1, combined over the anomalies (0 when there are none). */
  score: number;
  anomalies: Anomaly[];
}

export interface BehaviourBaseline {
  observe(event: BehaviourEvent): Promise<BehaviourResult>;
  /**
   * A failed login or authorization learned after the fact (the backend answered 401/403): counted
   * in the IP's failed-login window, which the credential-stuffing score reads at its next login
   * event. Returns the failures of that IP in the window.
   */
  observeFailure(event: { ip: string; at?: number }): Promise<number>;
}

export interface BehaviourBaselineOptions extends Partial<BehaviourOptions> {
  /** Country of an IP (ISO 3166 alpha-2) or null; default geoip-lite (loaded on first use). */
  lookupCountry?: (ip: string) => string | null;
  /** Key namespace under the cache prefix (default 't5'). */
  namespace?: string;
}

const ENDPOINT_TTL_MS = 7 * 24 * 3_600_000;
const IP_TTL_MS = 24 * 3_600_000;
const USERNAME_TTL_MS = 3_600_000;
const CAS_ATTEMPTS = 5;
const MAX_KEY_PART = 512;

const CAS_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if (current == false and ARGV[1] == '') or current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0`;

let geoLookup: ((ip: string) => string | null) | null = null;

async function defaultLookup(): Promise<(ip: string) => string | null> {
  if (geoLookup !== null) return geoLookup;
  const geoip = (await import('geoip-lite')).default;
  geoLookup = (ip: string) => {
    try {
      return geoip.lookup(ip)?.country || null;
    } catch {
      return null;
    }
  };
  return geoLookup;
}

export function createBehaviourBaseline(cache: Cache, options: BehaviourBaselineOptions = {}): BehaviourBaseline {
  const { lookupCountry, namespace = 't5', ...overrides } = options;
  const settings: BehaviourOptions = { ...DEFAULT_BEHAVIOUR_OPTIONS, ...overrides };
  const key = (kind: string, id: string) => `${cache.prefix}${namespace}:${kind}:${id}`;

  /**
   * Read-modify-write of one record. `update` mutates the parsed state (or a fresh one) and
   * returns what the caller needs from it; it must be pure apart from the state it is given.
   */
  async function update<S, R>(cacheKey: string, ttlMs: number, fresh: () => S, step: (state: S) => R): Promise<R> {
    const client: Redis | null = cache.redis();
    if (client !== null) {
      try {
        let result: R | undefined;
        for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt += 1) {
          const stored = await client.get(cacheKey);
          const state = stored === null ? fresh() : (JSON.parse(stored) as S);
          result = step(state);
          const written = (await client.eval(CAS_SCRIPT, 1, cacheKey, stored ?? '', JSON.stringify(state), String(ttlMs))) as number;
          if (written === 1) return result;
        }
        return result as R;
      } catch {
        // Fall through to memory, as the cache itself does when Redis fails.
      }
    }
    return updateMemory(cache.memory, cacheKey, ttlMs, fresh, step);
  }

  return {
    async observe(event: BehaviourEvent): Promise<BehaviourResult> {
      const at = event.at ?? Date.now();
      const bucket = Math.floor(at / settings.bucketMs);
      const ip = event.ip.slice(0, 64);
      const endpointKey = sha256Hex(event.endpoint.slice(0, MAX_KEY_PART)).slice(0, 32);
      const lookup = lookupCountry ?? (await defaultLookup());
      const country = lookup(ip);
      const login = event.username !== undefined && event.username !== '';
      const usernameKey = login ? sha256Hex(`t5-username:${(event.username as string).slice(0, MAX_KEY_PART).toLowerCase()}`).slice(0, 24) : null;

      const ipStep = await update<IpState, ReturnType<typeof stepIp>>(key('ip', ip), IP_TTL_MS, () => emptyIp(bucket), (state) =>
        stepIp(state, at, usernameKey, event.loginFailed === true, settings),
      );
      const ipsPerUsername =
        usernameKey === null
          ? 0
          : await update<UsernameState, number>(key('user', usernameKey), USERNAME_TTL_MS, emptyUsername, (state) =>
              stepUsername(state, at, sha256Hex(`t5-ip:${ip}`).slice(0, 16), settings),
            );
      const endpointStep = await update<EndpointState, { step: ReturnType<typeof stepEndpoint>; stuffing: ReturnType<typeof stepLogins> | null }>(
        key('endpoint', endpointKey),
        ENDPOINT_TTL_MS,
        () => emptyEndpoint(bucket),
        (state) => ({
          step: stepEndpoint(state, at, country, settings),
          stuffing: login ? stepLogins(state, { distinctUsernames: ipStep.distinctUsernames, failures: ipStep.failures, ipsPerUsername }, settings) : null,
        }),
      );

      const anomalies: Anomaly[] = [];
      const report = (kind: Anomaly['kind'], zScore: number, detail: string) => {
        if (zScore >= settings.reportZ) anomalies.push({ kind, zScore: Math.round(zScore * 100) / 100, detail });
      };
      const { step, stuffing } = endpointStep;
      if (step.rateZ >= ipStep.rateZ) report('rate', step.rateZ, `endpoint received ${step.requestsThisMinute} requests this minute`);
      else report('rate', ipStep.rateZ, 'this IP is sending far more requests per minute than its baseline');
      report(
        'geo',
        step.geoZ,
        step.countryShare === null || step.countryShare < 0.0005
          ? `country ${country ?? '??'} not seen in this endpoint's baseline`
          : `country ${country ?? '??'} is rare for this endpoint (${(step.countryShare * 100).toFixed(2)}% of baseline)`,
      );
      report('time_of_day', step.hourZ, `${step.requestsThisMinute} requests this minute at ${String(step.hour).padStart(2, '0')}:00 UTC, unusual for that hour`);
      if (stuffing !== null) {
        const detail =
          stuffing.which === 'distinctUsernames'
            ? `${ipStep.distinctUsernames} distinct usernames from this IP in the window`
            : stuffing.which === 'failures'
              ? `${ipStep.failures} failed logins from this IP in the window`
              : `one username tried from ${ipsPerUsername} IPs in the window`;
        report('credential_stuffing', stuffing.z, detail);
      }
      return { score: combineAnomalies(anomalies), anomalies };
    },
    async observeFailure(event) {
      const at = event.at ?? Date.now();
      return update<IpState, number>(key('ip', event.ip.slice(0, 64)), IP_TTL_MS, () => emptyIp(Math.floor(at / settings.bucketMs)), (state) => {
        state.failures.push(at);
        state.failures = state.failures.filter((time) => at - time < settings.stuffingWindowMs).slice(-settings.ipWindow);
        return state.failures.length;
      });
    },
  };
}

function updateMemory<S, R>(memory: MemoryStore, cacheKey: string, ttlMs: number, fresh: () => S, step: (state: S) => R): R {
  const stored = memory.get(cacheKey);
  const state = stored === null ? fresh() : (JSON.parse(stored) as S);
  const result = step(state);
  memory.set(cacheKey, JSON.stringify(state), ttlMs);
  return result;
}
