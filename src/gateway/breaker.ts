/**
 * Per-provider circuit breakers.
 *
 * Posture: a failing upstream must not take svc down with it nor burn the customer's time —
 * when the failure rate over a sliding window reaches the threshold (and enough requests were
 * seen to judge), the breaker opens and requests skip that provider at once; after `openMs` it
 * lets a bounded number of probe requests through (half-open); enough probe successes close it,
 * any probe failure re-opens it. Only failures that say something about the provider count
 * (5xx, 529, timeouts, network); an org's bad key, its rate limit (429) or a malformed request
 * does not, since one breaker serves every org that uses the provider.
 *
 * `CircuitBreaker` is a pure state machine over an injected clock. `BreakerRegistry` holds one
 * per breaker key (provider id, or provider@host for a custom base URL), reports transitions to
 * a listener (metrics gauge, events) and shares "open" states across replicas through Redis when
 * one is connected: an opening is written to a key with the open deadline and to one hash of
 * open breakers (`gw:breakers-open`, breaker key → deadline), and every replica adopts every
 * opening in that hash on its periodic sync (default every second) — also for breakers it has
 * never used itself, so a replica that never called the provider does not call it while another
 * replica's breaker is open. Without Redis the registry is per process, which is exactly the
 * embedded single-process case.
 */
import type { Redis } from 'ioredis';

export type BreakerStateName = 'closed' | 'open' | 'half_open';

export interface BreakerPolicy {
  /** Sliding window over which the failure rate is computed, ms. */
  windowMs: number;
  /** Fewest requests in the window before the rate may open the breaker. */
  minRequests: number;
  /** Failure rate (0..1) at or above which the breaker opens. */
  failureRateThreshold: number;
  /** Time the breaker stays open before probing, ms. */
  openMs: number;
  /** Probes allowed in flight while half-open. */
  halfOpenMaxProbes: number;
  /** Probe successes that close the breaker. */
  halfOpenSuccesses: number;
}

export const DEFAULT_BREAKER_POLICY: BreakerPolicy = {
  windowMs: 30_000,
  minRequests: 10,
  failureRateThreshold: 0.5,
  openMs: 15_000,
  halfOpenMaxProbes: 2,
  halfOpenSuccesses: 2,
};

const BUCKETS = 10;

export type Admission = 'allowed' | 'probe' | 'rejected';

export interface BreakerSnapshot {
  state: BreakerStateName;
  requests: number;
  failures: number;
  failureRate: number;
  openUntil: number | null;
  probesInFlight: number;
  lastFailureAt: number | null;
  consecutiveFailures: number;
  /** Start of the current run of consecutive failures. */
  firstFailureAt: number | null;
}

/** One breaker. Every method takes `now` so the machine is deterministic under test. */
export class CircuitBreaker {
  private stateName: BreakerStateName = 'closed';
  private readonly buckets: Array<{ start: number; ok: number; failed: number }> = [];
  private openUntil = 0;
  private probesInFlight = 0;
  private probeSuccesses = 0;
  private lastFailureAt: number | null = null;
  private consecutiveFailures = 0;
  private firstFailureAt: number | null = null;

  constructor(
    readonly policy: BreakerPolicy = DEFAULT_BREAKER_POLICY,
    private readonly onTransition: (from: BreakerStateName, to: BreakerStateName) => void = () => undefined,
  ) {}

  state(now: number): BreakerStateName {
    if (this.stateName === 'open' && now >= this.openUntil) this.transition('half_open');
    return this.stateName;
  }

  /** Asks to send a request. A 'probe' admission must be followed by `record(..., true)`. */
  admit(now: number): Admission {
    const state = this.state(now);
    if (state === 'closed') return 'allowed';
    if (state === 'open') return 'rejected';
    if (this.probesInFlight >= this.policy.halfOpenMaxProbes) return 'rejected';
    this.probesInFlight += 1;
    return 'probe';
  }

  /** Whether a request would be admitted, without taking a probe slot (routing uses it). */
  available(now: number): boolean {
    const state = this.state(now);
    return state === 'closed' || (state === 'half_open' && this.probesInFlight < this.policy.halfOpenMaxProbes);
  }

  /** Records the outcome of an admitted request. `success: null` releases a probe without verdict (aborted). */
  record(success: boolean | null, now: number, probe = false): void {
    if (probe) this.probesInFlight = Math.max(0, this.probesInFlight - 1);
    if (success === null) return;
    if (success) {
      this.consecutiveFailures = 0;
      this.firstFailureAt = null;
    } else {
      if (this.consecutiveFailures === 0) this.firstFailureAt = now;
      this.consecutiveFailures += 1;
      this.lastFailureAt = now;
    }
    if (this.stateName === 'half_open') {
      if (!success) return this.open(now);
      this.probeSuccesses += 1;
      if (this.probeSuccesses >= this.policy.halfOpenSuccesses) this.close();
      return;
    }
    if (this.stateName === 'open') return; // a late answer of a request admitted before opening
    const bucket = this.bucket(now);
    if (success) bucket.ok += 1;
    else bucket.failed += 1;
    if (!success) {
      const { requests, failures } = this.counts(now);
      if (requests >= this.policy.minRequests && failures / requests >= this.policy.failureRateThreshold) this.open(now);
    }
  }

  /** Forces the open state until `until` (a remote replica opened it). */
  forceOpen(until: number, now: number): void {
    if (until <= now) return;
    if (this.stateName !== 'open') {
      this.openUntil = until;
      this.probesInFlight = 0;
      this.probeSuccesses = 0;
      this.transition('open');
    } else if (until > this.openUntil) this.openUntil = until;
  }

  /** A successful active health check while open: go half-open at once. */
  healthCheckPassed(now: number): void {
    if (this.state(now) === 'open') {
      this.openUntil = now;
      this.state(now);
    }
  }

  snapshot(now: number): BreakerSnapshot {
    const { requests, failures } = this.counts(now);
    const state = this.state(now);
    return {
      state,
      requests,
      failures,
      failureRate: requests === 0 ? 0 : failures / requests,
      openUntil: state === 'open' ? this.openUntil : null,
      probesInFlight: this.probesInFlight,
      lastFailureAt: this.lastFailureAt,
      consecutiveFailures: this.consecutiveFailures,
      firstFailureAt: this.firstFailureAt,
    };
  }

  get openDeadline(): number {
    return this.openUntil;
  }

  private open(now: number): void {
    this.openUntil = now + this.policy.openMs;
    this.probesInFlight = 0;
    this.probeSuccesses = 0;
    this.transition('open');
  }

  private close(): void {
    this.buckets.length = 0;
    this.probeSuccesses = 0;
    this.transition('closed');
  }

  private transition(to: BreakerStateName): void {
    const from = this.stateName;
    if (from === to) return;
    this.stateName = to;
    if (to === 'half_open') this.probeSuccesses = 0;
    this.onTransition(from, to);
  }

  private bucket(now: number) {
    const width = this.policy.windowMs / BUCKETS;
    const start = now - (now % width);
    const last = this.buckets[this.buckets.length - 1];
    if (last !== undefined && last.start === start) return last;
    const bucket = { start, ok: 0, failed: 0 };
    this.buckets.push(bucket);
    while (this.buckets.length > BUCKETS + 1) this.buckets.shift();
    return bucket;
  }

  private counts(now: number): { requests: number; failures: number } {
    let requests = 0;
    let failures = 0;
    for (const bucket of this.buckets) {
      if (bucket.start <= now - this.policy.windowMs) continue;
      requests += bucket.ok + bucket.failed;
      failures += bucket.failed;
    }
    return { requests, failures };
  }
}

export interface BreakerTransition {
  key: string;
  from: BreakerStateName;
  to: BreakerStateName;
  at: number;
  /** True when the transition was adopted from another replica. */
  remote: boolean;
}

/** All breakers of this process, keyed by breaker key, optionally shared through Redis. */
export class BreakerRegistry {
  private readonly breakers = new Map<string, CircuitBreaker>();
  private syncing = false;
  private adopting = false;

  constructor(
    private readonly options: {
      policy?: BreakerPolicy;
      now?: () => number;
      /** Redis client while connected, else null. */
      redis?: () => Redis | null;
      keyPrefix?: string;
      onTransition?: (transition: BreakerTransition) => void;
    } = {},
  ) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  get(key: string): CircuitBreaker {
    let breaker = this.breakers.get(key);
    if (breaker === undefined) {
      breaker = new CircuitBreaker(this.options.policy ?? DEFAULT_BREAKER_POLICY, (from, to) => this.transitioned(key, from, to));
      this.breakers.set(key, breaker);
    }
    return breaker;
  }

  keys(): string[] {
    return [...this.breakers.keys()];
  }

  snapshot(): Array<{ key: string } & BreakerSnapshot> {
    const now = this.now();
    return [...this.breakers.entries()].map(([key, breaker]) => ({ key, ...breaker.snapshot(now) }));
  }

  private transitioned(key: string, from: BreakerStateName, to: BreakerStateName): void {
    const remote = this.adopting;
    this.options.onTransition?.({ key, from, to, at: this.now(), remote });
    if (remote) return;
    const redis = this.options.redis?.() ?? null;
    if (redis === null) return;
    const redisKey = this.redisKey(key);
    if (to === 'open') {
      const until = this.get(key).openDeadline;
      const ttl = Math.max(1, until - this.now());
      redis.multi().set(redisKey, String(until), 'PX', ttl).hset(this.openSetKey(), key, String(until)).exec().catch(() => undefined);
    } else if (to === 'closed') {
      redis.multi().del(redisKey).hdel(this.openSetKey(), key).exec().catch(() => undefined);
    }
  }

  private redisKey(key: string): string {
    return `${this.options.keyPrefix ?? ''}gw:breaker:${key}`;
  }

  /** Hash of the breakers some replica opened: breaker key → open deadline (ms). */
  private openSetKey(): string {
    return `${this.options.keyPrefix ?? ''}gw:breakers-open`;
  }

  /** Adopts openings written by other replicas, known breakers or not (no-op without Redis). */
  async sync(): Promise<void> {
    const redis = this.options.redis?.() ?? null;
    if (redis === null || this.syncing) return;
    this.syncing = true;
    try {
      const open = await redis.hgetall(this.openSetKey());
      const now = this.now();
      Object.entries(open).forEach(([key, value]) => {
        const until = Number(value);
        if (!Number.isFinite(until) || until <= now) return;
        this.adopting = true;
        try {
          this.get(key).forceOpen(until, now);
        } finally {
          this.adopting = false;
        }
      });
    } catch {
      // Redis hiccup: local breakers keep working on their own.
    } finally {
      this.syncing = false;
    }
  }
}
