/**
 * The gateway benchmark's verification phase (issue #18: "without `sources` and with the default
 * policy, verification adds ≤ 0.1 ms at p50 to a non-streaming completion").
 *
 * Two orgs of the same svc, identical but for verification (on with the default policy / off),
 * each on its own keep-alive connection. A difference of a few hundredths of a millisecond is
 * far below the spread of single requests and of the machine's drift, so the two are compared in
 * pairs rather than as two separate distributions:
 *   - every round sends `perRound` requests to each org, alternating one by one (A B A B …, and
 *     B A B A … in the next round, so neither side always goes first);
 *   - the round's figure is p50(verified) − p50(unverified) over that round's requests;
 *   - the result is the median of the per-round differences, their interquartile range, and a
 *     distribution-free 95 % confidence interval of that median (order statistics of the
 *     binomial, no assumption about the shape of the differences).
 * The target is met when the upper end of the interval is ≤ 0.1 ms, not just the point figure.
 */
import { Pool } from 'undici';
import { percentile, round3, type ProbeTarget } from './lib.ts';

export interface PairedOptions {
  rounds: number;
  perRound: number;
  warmup: number;
}

export interface PairedResult {
  /** Median of the per-round differences of p50 (verified − unverified), ms. */
  added_p50_ms: number;
  /** 25th and 75th percentiles of the per-round differences, ms. */
  iqr_ms: [number, number];
  /** Distribution-free 95 % confidence interval of the median difference, ms. */
  ci95_ms: [number, number];
  /** Difference of the pooled p50s (all rounds together), ms: the older way, for comparison. */
  pooled_p50_difference_ms: number;
  verified_p50_ms: number;
  unverified_p50_ms: number;
  rounds: number;
  requests_per_round_each: number;
  per_round_ms: number[];
}

const sorted = (values: readonly number[]) => [...values].sort((left, right) => left - right);

/**
 * Ranks (1-based) bounding a ≥ 95 % confidence interval of the median of n values: the largest
 * k with P(Binomial(n, ½) < k) ≤ 2.5 %, giving [x(k), x(n − k + 1)].
 */
export function medianIntervalRanks(n: number): [number, number] {
  if (n < 6) return [1, n];
  let cumulative = 0;
  let probability = 0.5 ** n; // P(X = 0)
  let k = 0;
  while (cumulative + probability <= 0.025) {
    cumulative += probability;
    k += 1;
    probability = (probability * (n - k + 1)) / k;
  }
  return [Math.max(1, k), n - Math.max(1, k) + 1];
}

export function summarizePaired(perRound: readonly number[], verified: readonly number[], unverified: readonly number[], perRoundCount: number): PairedResult {
  const differences = sorted(perRound);
  const [low, high] = medianIntervalRanks(differences.length);
  const verifiedP50 = percentile(sorted(verified), 50);
  const unverifiedP50 = percentile(sorted(unverified), 50);
  const middle = differences.length % 2 === 1 ? differences[(differences.length - 1) / 2]! : (differences[differences.length / 2 - 1]! + differences[differences.length / 2]!) / 2;
  return {
    added_p50_ms: round3(middle),
    iqr_ms: [round3(percentile(differences, 25)), round3(percentile(differences, 75))],
    ci95_ms: [round3(differences[low - 1]!), round3(differences[high - 1]!)],
    pooled_p50_difference_ms: round3(verifiedP50 - unverifiedP50),
    verified_p50_ms: round3(verifiedP50),
    unverified_p50_ms: round3(unverifiedP50),
    rounds: differences.length,
    requests_per_round_each: perRoundCount,
    per_round_ms: perRound.map(round3),
  };
}

/** Times `verified` against `unverified` in alternating pairs (see the module comment). */
export async function measureVerificationCost(verified: ProbeTarget, unverified: ProbeTarget, options: PairedOptions): Promise<PairedResult> {
  const pools = [new Pool(verified.origin, { connections: 1, pipelining: 1 }), new Pool(unverified.origin, { connections: 1, pipelining: 1 })] as const;
  const targets = [verified, unverified] as const;
  const once = async (side: 0 | 1): Promise<number> => {
    const target = targets[side];
    const started = process.hrtime.bigint();
    const response = await pools[side].request({ path: target.path, method: target.method ?? 'POST', headers: target.headers ?? {}, ...(target.body === undefined ? {} : { body: target.body }) });
    const body = await response.body.text();
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    if (response.statusCode !== 200) throw new Error(`${target.name}: status ${response.statusCode}`);
    // The two orgs must differ in verification and nothing else.
    const hasVerification = !body.includes('"verification":null');
    if (hasVerification !== (side === 0)) throw new Error(`${target.name}: verification ${hasVerification ? 'present' : 'absent'} against expectation`);
    return elapsed;
  };
  try {
    for (let index = 0; index < options.warmup; index += 1) {
      await once(0);
      await once(1);
    }
    const all: [number[], number[]] = [[], []];
    const perRound: number[] = [];
    for (let round = 0; round < options.rounds; round += 1) {
      const samples: [number[], number[]] = [[], []];
      const first: 0 | 1 = round % 2 === 0 ? 0 : 1;
      const second: 0 | 1 = first === 0 ? 1 : 0;
      for (let index = 0; index < options.perRound; index += 1) {
        samples[first].push(await once(first));
        samples[second].push(await once(second));
      }
      perRound.push(percentile(sorted(samples[0]), 50) - percentile(sorted(samples[1]), 50));
      all[0].push(...samples[0]);
      all[1].push(...samples[1]);
    }
    return summarizePaired(perRound, all[0], all[1], options.perRound);
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
  }
}
