/**
 * T5 subject profiles — the pure part of the baselines of AI-gateway completions and MCP tool
 * calls. A subject is whoever the traffic is attributed to (an org's API key or end user; an
 * org's role on one MCP server). Its profile holds, in one small record:
 *
 *   - rate: per-minute counts (exponentially weighted moments, as the endpoint baseline's), and
 *     one such moments pair per hour of the day (UTC);
 *   - sizes: per named measure (prompt characters, estimated tokens, argument bytes, …) the
 *     moments of ln(1 + value), so "20× the usual" is a fixed distance whatever the usual is;
 *   - values: per named feature (model, tools declared, tool called, tool-to-tool transition) the
 *     decayed share of observations that carried each value, as the endpoint's countries are.
 *
 * Each observation is measured against the profile as it stood before it, then folded in. The
 * same z-scores, cold-start counts, decay and caps as model.ts; the helpers are model.ts's.
 *
 * Posture: weak, slow evidence (the caller weighs it: `withBehaviour`). Only upward deviations
 * of sizes count (a smaller prompt is not a threat). Every record is bounded: at most
 * MAX_FEATURES sizes and value features, MAX_VALUES values per feature (the rarest evicted).
 */
import type { Anomaly, BehaviourOptions, Moments, RateState } from './model.ts';
import { DEFAULT_BEHAVIOUR_OPTIONS, advanceRate, emptyRate, hourOf, updateMoments, zAgainst, zFromLogTail } from './model.ts';

export interface ProfileOptions extends Pick<BehaviourOptions, 'bucketMs' | 'rateAlpha' | 'hourAlpha' | 'reportZ' | 'minRateBuckets' | 'minHourBuckets' | 'maxZ'> {
  /** Observations a profile's sizes describe (default 1,000, the spec's per-IP window). */
  window: number;
  /**
   * Observations a profile's value shares describe (default 10,000, the endpoint window: an unseen
   * value is as surprising as the habit is long — with one value so far, z reaches 3 after ~450
   * observations, as an unseen country does on an endpoint).
   */
  valueWindow: number;
  /** Observations of a size measure before its anomalies are reported (default 50). */
  minSizeObservations: number;
  /** Observations of a value feature before a new or rare value is reported (default 50). */
  minValueObservations: number;
  /** Smallest spread of ln(1 + size), in nats (default 0.5: a steady profile reports from ~4.5× its usual size, z 6 at 20×). */
  sizeSpreadFloor: number;
  /** Calls in one minute below which no rate anomaly is reported (default 10). */
  minBurst: number;
}

export const DEFAULT_PROFILE_OPTIONS: ProfileOptions = {
  bucketMs: DEFAULT_BEHAVIOUR_OPTIONS.bucketMs,
  rateAlpha: DEFAULT_BEHAVIOUR_OPTIONS.rateAlpha,
  hourAlpha: DEFAULT_BEHAVIOUR_OPTIONS.hourAlpha,
  reportZ: DEFAULT_BEHAVIOUR_OPTIONS.reportZ,
  minRateBuckets: DEFAULT_BEHAVIOUR_OPTIONS.minRateBuckets,
  minHourBuckets: DEFAULT_BEHAVIOUR_OPTIONS.minHourBuckets,
  maxZ: DEFAULT_BEHAVIOUR_OPTIONS.maxZ,
  window: 1_000,
  valueWindow: 10_000,
  minSizeObservations: 50,
  minValueObservations: 50,
  sizeSpreadFloor: 0.5,
  minBurst: 10,
};

const MAX_FEATURES = 16;
const MAX_VALUES = 64;
const MAX_VALUES_PER_EVENT = 32;
const MAX_VALUE_LENGTH = 200;

/** Moments of ln(1 + size) and how many observations they hold. */
export interface SizeMoments extends Moments {
  n: number;
}

/** Decayed number of observations carrying each value, and of observations in all. */
export interface ValueShares {
  total: number;
  counts: Record<string, number>;
}

export interface ProfileState {
  version: 1;
  traffic: RateState;
  hours: Moments[];
  sizes: Record<string, SizeMoments>;
  values: Record<string, ValueShares>;
}

/** One observation of a subject, as the profile reads it. */
export interface ProfileObservation {
  /** Epoch milliseconds. */
  at: number;
  /** Named sizes (non-negative numbers), e.g. prompt_chars. */
  sizes?: Readonly<Record<string, number>>;
  /** Named features and the values this observation carries, e.g. model: ['openai/gpt-4o']. */
  values?: Readonly<Record<string, readonly string[]>>;
  /** How the subject is named in explanations (default "this subject"). */
  label?: string;
}

export function emptyProfile(bucket: number): ProfileState {
  return { version: 1, traffic: emptyRate(bucket), hours: Array.from({ length: 24 }, () => ({ mean: 0, variance: 0 })), sizes: {}, values: {} };
}

/** Which anomaly kind a value feature reports: a transition between steps is a sequence. */
export const SEQUENCE_FEATURE = 'sequence';

/**
 * Advances a profile by one observation (in place) and returns the anomalies of that
 * observation against the profile as it stood before it (z at or above reportZ only).
 */
export function stepProfile(state: ProfileState, observation: ProfileObservation, options: ProfileOptions): Anomaly[] {
  const anomalies: Anomaly[] = [];
  const label = observation.label ?? 'this subject';
  // The detail is written only for a z-score that is reported (most are not: every completion
  // and tools/call steps a profile, and the strings were built for each feature each time).
  const report = (kind: Anomaly['kind'], zScore: number, detail: () => string) => {
    if (zScore >= options.reportZ) anomalies.push({ kind, zScore: Math.round(zScore * 100) / 100, detail: detail() });
  };

  // Rate and hour of day (as stepEndpoint does for an endpoint).
  const bucket = Math.floor(observation.at / options.bucketMs);
  advanceRate(state.traffic, bucket, options.rateAlpha, (index, count) => {
    const moments = state.hours[hourOf(index, options.bucketMs)];
    if (moments !== undefined) updateMoments(moments, count, options.hourAlpha);
  });
  state.traffic.count += 1;
  const count = state.traffic.count;
  if (count >= options.minBurst) {
    const hour = hourOf(bucket, options.bucketMs);
    if (state.traffic.closed >= options.minRateBuckets) {
      report('rate', zAgainst(state.traffic.rate, count, options.maxZ), () => `${count} calls this minute from ${label}, usually ${state.traffic.rate.mean.toFixed(1)} a minute`);
    }
    const hourMoments = state.hours[hour];
    if (state.traffic.closed >= options.minHourBuckets && hourMoments !== undefined) {
      report('time_of_day', zAgainst(hourMoments, count, options.maxZ), () => `${count} calls this minute from ${label} at ${String(hour).padStart(2, '0')}:00 UTC, unusual for that hour`);
    }
  }

  // Sizes: one-sided z of ln(1 + value) against the subject's moments, then folded in.
  for (const [name, raw] of Object.entries(observation.sizes ?? {})) {
    if (!Number.isFinite(raw) || raw < 0) continue;
    let moments = state.sizes[name];
    if (moments === undefined) {
      if (Object.keys(state.sizes).length >= MAX_FEATURES) continue;
      moments = { n: 0, mean: 0, variance: 0 };
      state.sizes[name] = moments;
    }
    const value = Math.log1p(raw);
    if (moments.n >= options.minSizeObservations) {
      const z = Math.min(options.maxZ, (value - moments.mean) / Math.max(Math.sqrt(moments.variance), options.sizeSpreadFloor));
      const usual = Math.expm1(moments.mean);
      report('size', z, () => `${name} ${Math.round(raw)} is ${(raw / Math.max(usual, 1)).toFixed(1)}× the usual ${Math.round(usual)} of ${label}`);
    }
    // Early observations weigh equally; later ones 1/window, so an anomaly cannot become its own baseline at once.
    const alpha = moments.n === 0 ? 1 : Math.max(1 / options.window, 1 / (moments.n + 1));
    if (moments.n === 0) moments.mean = value;
    else updateMoments(moments, value, alpha);
    moments.n += 1;
  }

  // Values: how surprising each value's share is (the endpoint's country formula), then decayed and counted.
  for (const [name, carried] of Object.entries(observation.values ?? {})) {
    let shares = state.values[name];
    if (shares === undefined) {
      if (Object.keys(state.values).length >= MAX_FEATURES) continue;
      shares = { total: 0, counts: {} };
      state.values[name] = shares;
    }
    const distinct = [...new Set(carried.slice(0, MAX_VALUES_PER_EVENT).map((value) => value.slice(0, MAX_VALUE_LENGTH)))];
    if (shares.total >= options.minValueObservations) {
      const known = Object.keys(shares.counts).length;
      for (const value of distinct) {
        const seen = shares.counts[value] ?? 0;
        // Additive smoothing: an unseen value gets half an observation's worth of probability.
        const probability = (seen + 0.5) / (shares.total + 0.5 * (known + 1));
        const share = seen / shares.total;
        report(name === SEQUENCE_FEATURE ? 'sequence' : 'new_value', zFromLogTail(Math.log(probability), options.maxZ), () => {
          const what = name === SEQUENCE_FEATURE ? `call sequence ${value}` : `${name} ${value}`;
          return share < 0.0005 ? `${what} never seen for ${label}` : `${what} is rare for ${label} (${(share * 100).toFixed(2)}% of its baseline)`;
        });
      }
    }
    // Per-observation decay: the shares describe about the last `valueWindow` observations.
    const keep = 1 - 1 / options.valueWindow;
    shares.total = shares.total * keep + 1;
    for (const key of Object.keys(shares.counts)) shares.counts[key] = (shares.counts[key] as number) * keep;
    for (const value of distinct) shares.counts[value] = (shares.counts[value] ?? 0) + 1;
    const keys = Object.keys(shares.counts);
    if (keys.length > MAX_VALUES) {
      keys.sort((left, right) => (shares.counts[left] as number) - (shares.counts[right] as number));
      for (const key of keys.slice(0, keys.length - MAX_VALUES)) delete shares.counts[key];
    }
  }
  return anomalies;
}
