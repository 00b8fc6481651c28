/**
 * T5 behavioural baselines — the stateful edge: loads the small state records of `model.ts` from
 * the cache, advances them by one request and stores them back.
 *
 * Posture: the records are kept by `store.ts` (a compare-and-set on Redis, so replicas share the
 * baselines; bounded in-process LRUs otherwise, endpoints, IPs and usernames apart, so a flood of
 * addresses cannot evict endpoint baselines): an in-process update is synchronous and costs no
 * serialisation, which keeps T5 cheap on the proxy's path. Usernames and endpoints are
 * keyed by hash in Redis; IPs appear in keys (they already appear in logs) with the records
 * expiring after a day.
 */
import { LRUCache } from 'lru-cache';
import type { Cache } from '../../platform/cache.ts';
import { sha256Hex } from '../../platform/crypto.ts';
import { createStateStore } from './store.ts';
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
import { entryBound } from '../../platform/lru.ts';

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
  /** Entries of the in-process state LRUs (IPs and usernames each; endpoints a tenth), default 100,000. */
  memoryEntries?: number;
}

const ENDPOINT_TTL_MS = 7 * 24 * 3_600_000;
const IP_TTL_MS = 24 * 3_600_000;
const USERNAME_TTL_MS = 3_600_000;
const MAX_KEY_PART = 512;

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
  const { lookupCountry, namespace = 't5', memoryEntries = 100_000, ...overrides } = options;
  const settings: BehaviourOptions = { ...DEFAULT_BEHAVIOUR_OPTIONS, ...overrides };
  // One record per endpoint, IP and username; in memory each kind has its own LRU (endpoints a tenth).
  const store = createStateStore(cache, namespace, {
    ip: { ttlMs: IP_TTL_MS, memoryEntries },
    user: { ttlMs: USERNAME_TTL_MS, memoryEntries },
    endpoint: { ttlMs: ENDPOINT_TTL_MS, memoryEntries: Math.floor(memoryEntries / 10) },
  });
  // Endpoint keys repeat: their hash is remembered (bounded like the endpoint states).
  const endpointHashes = new LRUCache<string, string>(entryBound(Math.max(1, Math.floor(memoryEntries / 10))));
  const endpointHash = (endpoint: string): string => {
    let hash = endpointHashes.get(endpoint);
    if (hash === undefined) {
      hash = sha256Hex(endpoint.slice(0, MAX_KEY_PART)).slice(0, 32);
      endpointHashes.set(endpoint, hash);
    }
    return hash;
  };
  let country: ((ip: string) => string | null) | null = lookupCountry ?? geoLookup;
  // The country of an address is looked up once per hour at most (geoip-lite's range search is
  // the costliest step of an update otherwise); bounded like the IP states' working set.
  const countries = new LRUCache<string, { country: string | null }>({ ...entryBound(Math.max(1, Math.floor(memoryEntries / 10))), ttl: 3_600_000, ttlAutopurge: false });
  const countryOf = (lookup: (ip: string) => string | null, ip: string): string | null => {
    let known = countries.get(ip);
    if (known === undefined) {
      known = { country: lookup(ip) };
      countries.set(ip, known);
    }
    return known.country;
  };

  return {
    async observe(event: BehaviourEvent): Promise<BehaviourResult> {
      const at = event.at ?? Date.now();
      const bucket = Math.floor(at / settings.bucketMs);
      const ip = event.ip.slice(0, 64);
      const endpointKey = endpointHash(event.endpoint);
      country ??= await defaultLookup();
      const countryCode = countryOf(country, ip);
      const login = event.username !== undefined && event.username !== '';
      const usernameKey = login ? sha256Hex(`t5-username:${(event.username as string).slice(0, MAX_KEY_PART).toLowerCase()}`).slice(0, 24) : null;

      // Each update is a plain value in memory: awaiting only what is a promise (Redis) keeps the
      // in-process path free of extra event-loop turns.
      const ipUpdate = store.update<IpState, ReturnType<typeof stepIp>>('ip', ip, () => emptyIp(bucket), (state) => stepIp(state, at, usernameKey, event.loginFailed === true, settings));
      const ipStep = ipUpdate instanceof Promise ? await ipUpdate : ipUpdate;
      let ipsPerUsername = 0;
      if (usernameKey !== null) {
        const userUpdate = store.update<UsernameState, number>('user', usernameKey, emptyUsername, (state) => stepUsername(state, at, sha256Hex(`t5-ip:${ip}`).slice(0, 16), settings));
        ipsPerUsername = userUpdate instanceof Promise ? await userUpdate : userUpdate;
      }
      const endpointUpdate = store.update<EndpointState, { step: ReturnType<typeof stepEndpoint>; stuffing: ReturnType<typeof stepLogins> | null }>(
        'endpoint',
        endpointKey,
        () => emptyEndpoint(bucket),
        (state) => ({
          step: stepEndpoint(state, at, countryCode, settings),
          stuffing: login ? stepLogins(state, { distinctUsernames: ipStep.distinctUsernames, failures: ipStep.failures, ipsPerUsername }, settings) : null,
        }),
      );
      const endpointStep = endpointUpdate instanceof Promise ? await endpointUpdate : endpointUpdate;

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
          ? `country ${countryCode ?? '??'} not seen in this endpoint's baseline`
          : `country ${countryCode ?? '??'} is rare for this endpoint (${(step.countryShare * 100).toFixed(2)}% of baseline)`,
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
      return store.update<IpState, number>('ip', event.ip.slice(0, 64), () => emptyIp(Math.floor(at / settings.bucketMs)), (state) => {
        state.failures.push(at);
        state.failures = state.failures.filter((time) => at - time < settings.stuffingWindowMs).slice(-settings.ipWindow);
        return state.failures.length;
      });
    },
  };
}
