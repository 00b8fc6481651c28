/**
 * T5 behavioural baselines — the pure part: small state records and the functions that advance
 * them by one request and measure how far that request is from the baseline, in standard
 * deviations (z-scores). No I/O here; `baseline.ts` loads and stores the states in the cache.
 *
 * Posture: behaviour is a weak, slow signal. It never blocks on its own account in this module;
 * it yields a 0..1 score and the anomalies behind it for the policy to weigh. Every state is
 * bounded (fixed-size arrays, maps capped by eviction), every update costs O(1) amortised (the
 * only loop over time is the zero-fill of idle minutes, capped at one day and run at most once
 * per minute per key), and usernames are stored only as hashes.
 *
 * Windows. Distributions (countries per endpoint) decay per request so that they describe the
 * last ~10,000 requests of the endpoint; per-IP distributions decay over the last ~1,000 requests
 * of that IP. Rates are counted in one-minute buckets: the rate baseline is an exponentially
 * weighted mean and variance of per-minute counts (about the last 30 minutes), the time-of-day
 * baseline keeps one such mean/variance per hour of the day (UTC, about the last 3 days).
 * Credential stuffing looks at the last 15 minutes: distinct usernames and failed logins per IP,
 * distinct IPs per username, each against the endpoint's running baseline of those counts.
 */

/** Endpoint/IP kinds (protected gateways), then the subject-profile kinds (profile.ts: completions, MCP calls). */
export type AnomalyKind = 'rate' | 'geo' | 'time_of_day' | 'credential_stuffing' | 'size' | 'new_value' | 'sequence';

export interface Anomaly {
  kind: AnomalyKind;
  zScore: number;
  detail: string;
}

export interface BehaviourOptions {
  /** Requests described by an endpoint's distributions (default 10,000). */
  endpointWindow: number;
  /** Requests described by an IP's distributions (default 1,000). */
  ipWindow: number;
  bucketMs: number;
  /** Weight of a closed minute in the rate baseline (default 1/30). */
  rateAlpha: number;
  /** Weight of a closed minute in its hour-of-day baseline (default 1/180, ~3 days). */
  hourAlpha: number;
  /** Length of the credential-stuffing window (default 15 minutes). */
  stuffingWindowMs: number;
  /** z at or above which an anomaly is reported (default 3). */
  reportZ: number;
  /** Closed minutes before rate anomalies are reported (default 10). */
  minRateBuckets: number;
  /** Closed minutes before time-of-day anomalies are reported (default 1,440: one day). */
  minHourBuckets: number;
  /** Requests in the country distribution before geo anomalies are reported (default 200). */
  minGeoRequests: number;
  /** Login events before credential-stuffing anomalies are reported (default 20). */
  minLoginEvents: number;
  /** Largest z-score reported (default 10). */
  maxZ: number;
}

export const DEFAULT_BEHAVIOUR_OPTIONS: BehaviourOptions = {
  endpointWindow: 10_000,
  ipWindow: 1_000,
  bucketMs: 60_000,
  rateAlpha: 1 / 30,
  hourAlpha: 1 / 180,
  stuffingWindowMs: 15 * 60_000,
  reportZ: 3,
  minRateBuckets: 10,
  minHourBuckets: 1_440,
  minGeoRequests: 200,
  minLoginEvents: 20,
  maxZ: 10,
};

const MAX_COUNTRIES = 64;
const MAX_TRACKED = 100;
const MAX_ZERO_FILL = 1_440;

/** Exponentially weighted mean and variance. */
export interface Moments {
  mean: number;
  variance: number;
}

export interface RateState {
  bucket: number;
  count: number;
  closed: number;
  rate: Moments;
}

export interface EndpointState {
  version: 1;
  traffic: RateState;
  /** Per hour of day (UTC): moments of per-minute counts. */
  hours: Moments[];
  /** Decayed country counts over the endpoint window, and their total. */
  countries: Record<string, number>;
  countryTotal: number;
  /** Country counts of the current bucket. */
  bucketCountries: Record<string, number>;
  /** Running baselines of the stuffing counts observed at login events. */
  logins: { events: number; usernamesPerIp: Moments; failuresPerIp: Moments; ipsPerUsername: Moments };
}

/** Recent items (hashed usernames or IPs) with last-seen times, capped. */
export type Recent = Record<string, number>;

export interface IpState {
  version: 1;
  traffic: RateState;
  usernames: Recent;
  /** Times of failed logins in the stuffing window (capped). */
  failures: number[];
  requests: number;
}

export interface UsernameState {
  version: 1;
  ips: Recent;
}

export interface BehaviourEvent {
  endpoint: string;
  ip: string;
  /** Epoch milliseconds (default: now). */
  at?: number;
  username?: string;
  loginFailed?: boolean;
}

export function emptyRate(bucket: number): RateState {
  return { bucket, count: 0, closed: 0, rate: { mean: 0, variance: 0 } };
}

export function emptyEndpoint(bucket: number): EndpointState {
  return {
    version: 1,
    traffic: emptyRate(bucket),
    hours: Array.from({ length: 24 }, () => ({ mean: 0, variance: 0 })),
    countries: {},
    countryTotal: 0,
    bucketCountries: {},
    logins: { events: 0, usernamesPerIp: { mean: 0, variance: 0 }, failuresPerIp: { mean: 0, variance: 0 }, ipsPerUsername: { mean: 0, variance: 0 } },
  };
}

export function emptyIp(bucket: number): IpState {
  return { version: 1, traffic: emptyRate(bucket), usernames: {}, failures: [], requests: 0 };
}

export function emptyUsername(): UsernameState {
  return { version: 1, ips: {} };
}

/** Welford-style exponentially weighted update. */
export function updateMoments(moments: Moments, value: number, alpha: number): void {
  const delta = value - moments.mean;
  moments.mean += alpha * delta;
  moments.variance = (1 - alpha) * (moments.variance + alpha * delta * delta);
}

/**
 * z of an observation against moments, with the spread floored at sqrt(mean) (Poisson) and 1,
 * so a perfectly steady baseline does not turn one extra request into an infinite z.
 */
export function zAgainst(moments: Moments, value: number, maxZ: number): number {
  const spread = Math.max(Math.sqrt(moments.variance), Math.sqrt(Math.max(0, moments.mean)), 1);
  return clampZ((value - moments.mean) / spread, maxZ);
}

function clampZ(z: number, maxZ: number): number {
  if (!Number.isFinite(z)) return z > 0 ? maxZ : 0;
  return Math.max(-maxZ, Math.min(maxZ, z));
}

/**
 * Moves a rate state to `bucket`: closes the current bucket and zero-fills idle minutes (at most
 * one day of them), calling `onClosed(bucketIndex, count)` for each closed minute.
 */
export function advanceRate(state: RateState, bucket: number, alpha: number, onClosed?: (bucketIndex: number, count: number) => void): void {
  if (bucket <= state.bucket) return;
  updateMoments(state.rate, state.count, alpha);
  onClosed?.(state.bucket, state.count);
  state.closed += 1;
  const idle = bucket - state.bucket - 1;
  const fill = Math.min(idle, MAX_ZERO_FILL);
  for (let index = bucket - fill; index < bucket; index += 1) {
    updateMoments(state.rate, 0, alpha);
    onClosed?.(index, 0);
  }
  state.closed += fill;
  state.bucket = bucket;
  state.count = 0;
}

export function hourOf(bucket: number, bucketMs: number): number {
  return new Date(bucket * bucketMs).getUTCHours();
}

/**
 * How many standard deviations an event whose baseline probability is `probability` is worth,
 * when `count` such events fall in a period where `expected` were due: the one-sided Poisson
 * tail P(X ≥ count | λ = expected) converted to a normal z. Computed in log space; bounded loop.
 */
export function poissonTailZ(count: number, expected: number, maxZ: number): number {
  if (count <= 0 || count <= expected) return 0;
  const k = Math.min(count, 1_000);
  const lambda = Math.max(expected, 1e-12);
  // log P(X = k) = -λ + k log λ - log k!
  let logFactorial = 0;
  for (let index = 2; index <= k; index += 1) logFactorial += Math.log(index);
  const logFirst = -lambda + k * Math.log(lambda) - logFactorial;
  // Tail = P(X = k) * Σ_m λ^m k! / (k + m)!, a quickly converging series when λ < k.
  let term = 1;
  let series = 1;
  for (let m = 1; m < 200; m += 1) {
    term *= lambda / (k + m);
    series += term;
    if (term < 1e-12 * series) break;
  }
  const logTail = Math.min(0, logFirst + Math.log(series));
  return zFromLogTail(logTail, maxZ);
}

/** Normal quantile for a one-sided tail given as a natural log (asymptotic; accurate to ~0.05 for tail < 0.1). */
export function zFromLogTail(logTail: number, maxZ: number): number {
  if (logTail >= Math.log(0.5)) return 0;
  if (logTail > Math.log(0.1)) {
    // Linear interpolation between (0.5 → 0) and (0.1 → 1.2816) in log-tail.
    return (1.2816 * (Math.log(0.5) - logTail)) / (Math.log(0.5) - Math.log(0.1));
  }
  const t = -2 * logTail;
  return clampZ(Math.sqrt(Math.max(0, t - Math.log(t) - Math.log(2 * Math.PI))), maxZ);
}

/** Drops entries older than the window and keeps at most MAX_TRACKED (the most recent). */
export function pruneRecent(recent: Recent, now: number, windowMs: number): Recent {
  const kept = Object.entries(recent).filter(([, seen]) => now - seen < windowMs);
  kept.sort((left, right) => right[1] - left[1]);
  return Object.fromEntries(kept.slice(0, MAX_TRACKED));
}

export interface EndpointStep {
  rateZ: number;
  hourZ: number;
  geoZ: number;
  hour: number;
  requestsThisMinute: number;
  countryShare: number | null;
}

/**
 * Advances the endpoint state by one request (in place) and measures it against the baseline
 * as it stood before this request.
 */
export function stepEndpoint(state: EndpointState, at: number, country: string | null, options: BehaviourOptions): EndpointStep {
  const bucket = Math.floor(at / options.bucketMs);
  const before = state.traffic.bucket;
  advanceRate(state.traffic, bucket, options.rateAlpha, (index, count) => {
    const moments = state.hours[hourOf(index, options.bucketMs)];
    if (moments !== undefined) updateMoments(moments, count, options.hourAlpha);
  });
  if (bucket > before) state.bucketCountries = {};
  state.traffic.count += 1;
  const count = state.traffic.count;
  const hour = hourOf(bucket, options.bucketMs);

  const rateZ = state.traffic.closed >= options.minRateBuckets ? zAgainst(state.traffic.rate, count, options.maxZ) : 0;
  const hourMoments = state.hours[hour] as Moments;
  const hourZ = state.traffic.closed >= options.minHourBuckets ? zAgainst(hourMoments, count, options.maxZ) : 0;

  let geoZ = 0;
  let countryShare: number | null = null;
  if (country !== null) {
    const inBucket = (state.bucketCountries[country] ?? 0) + 1;
    if (state.countryTotal >= options.minGeoRequests) {
      const known = Object.keys(state.countries).length;
      // Additive smoothing: an unseen country gets half a request's worth of probability.
      const probability = ((state.countries[country] ?? 0) + 0.5) / (state.countryTotal + 0.5 * (known + 1));
      countryShare = (state.countries[country] ?? 0) / state.countryTotal;
      // The larger of: how surprising this one request's country is, and how surprising the
      // number of requests from it in this minute is (a flood from a known but rare country).
      geoZ = Math.max(zFromLogTail(Math.log(probability), options.maxZ), poissonTailZ(inBucket, probability * count, options.maxZ));
    }
    state.bucketCountries[country] = inBucket;
    // Per-request decay: the distribution describes about the last `endpointWindow` requests.
    const keep = 1 - 1 / options.endpointWindow;
    state.countryTotal = state.countryTotal * keep + 1;
    for (const key of Object.keys(state.countries)) state.countries[key] = (state.countries[key] as number) * keep;
    state.countries[country] = (state.countries[country] ?? 0) + 1;
    const keys = Object.keys(state.countries);
    if (keys.length > MAX_COUNTRIES) {
      keys.sort((left, right) => (state.countries[left] as number) - (state.countries[right] as number));
      for (const key of keys.slice(0, keys.length - MAX_COUNTRIES)) delete state.countries[key];
    }
  }
  return { rateZ, hourZ, geoZ, hour, requestsThisMinute: count, countryShare };
}

export interface IpStep {
  rateZ: number;
  distinctUsernames: number;
  failures: number;
}

/** Advances an IP's state by one request. `usernameKey` is a hash, never the raw name. */
export function stepIp(state: IpState, at: number, usernameKey: string | null, loginFailed: boolean, options: BehaviourOptions): IpStep {
  const bucket = Math.floor(at / options.bucketMs);
  advanceRate(state.traffic, bucket, options.rateAlpha);
  state.traffic.count += 1;
  state.requests += 1;
  const rateZ = state.traffic.closed >= options.minRateBuckets ? zAgainst(state.traffic.rate, state.traffic.count, options.maxZ) : 0;
  if (usernameKey !== null) {
    state.usernames[usernameKey] = at;
    state.usernames = pruneRecent(state.usernames, at, options.stuffingWindowMs);
  }
  if (loginFailed) state.failures.push(at);
  state.failures = state.failures.filter((time) => at - time < options.stuffingWindowMs).slice(-options.ipWindow);
  return { rateZ, distinctUsernames: Object.keys(state.usernames).length, failures: state.failures.length };
}

export function stepUsername(state: UsernameState, at: number, ipKey: string, options: BehaviourOptions): number {
  state.ips[ipKey] = at;
  state.ips = pruneRecent(state.ips, at, options.stuffingWindowMs);
  return Object.keys(state.ips).length;
}

export interface StuffingCounts {
  distinctUsernames: number;
  failures: number;
  ipsPerUsername: number;
}

/**
 * Credential-stuffing z: the largest of the three counts' z against the endpoint's running login
 * baseline (updated afterwards, so an attack cannot instantly become its own baseline — its
 * weight per event is 1/100).
 */
export function stepLogins(state: EndpointState, counts: StuffingCounts, options: BehaviourOptions): { z: number; which: keyof StuffingCounts } {
  const logins = state.logins;
  const ready = logins.events >= options.minLoginEvents;
  const candidates: Array<[keyof StuffingCounts, number]> = [
    ['distinctUsernames', ready ? zAgainst(logins.usernamesPerIp, counts.distinctUsernames, options.maxZ) : 0],
    ['failures', ready ? zAgainst(logins.failuresPerIp, counts.failures, options.maxZ) : 0],
    ['ipsPerUsername', ready ? zAgainst(logins.ipsPerUsername, counts.ipsPerUsername, options.maxZ) : 0],
  ];
  const alpha = Math.max(1 / 100, 1 / (logins.events + 1));
  updateMoments(logins.usernamesPerIp, counts.distinctUsernames, alpha);
  updateMoments(logins.failuresPerIp, counts.failures, alpha);
  updateMoments(logins.ipsPerUsername, counts.ipsPerUsername, alpha);
  logins.events += 1;
  candidates.sort((left, right) => right[1] - left[1]);
  const [which, z] = candidates[0] as [keyof StuffingCounts, number];
  return { z, which };
}

/** Maps one z to 0..1: nothing below 2 standard deviations, ~0.4 at 3, ~0.86 at 6. */
export function anomalyScore(z: number): number {
  return 1 - Math.exp(-Math.max(0, z - 2) / 2);
}

/** Combines per-kind scores as independent evidence: 1 - Π(1 - s). */
export function combineAnomalies(anomalies: readonly Anomaly[]): number {
  let clean = 1;
  for (const anomaly of anomalies) clean *= 1 - anomalyScore(anomaly.zScore);
  return Math.round((1 - clean) * 1000) / 1000;
}
