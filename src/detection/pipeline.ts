/**
 * The detection cascade. An ordered, closed list of tiers (t1 … t5); each tier is a function
 * of (input, policy) that returns a Verdict, declared with its fail mode. Unknown or duplicate
 * tier names fail at construction.
 *
 * Order and escalation:
 *   1. T1 (patterns on normalized variants). T1 > 0.9 → stop: immediate block.
 *   2. T5 (behaviour, when provided) — continuous, runs for every request it is given.
 *   3. T2 and the T3 classifier run only when the running score is in the kind's uncertain band
 *      (http: 0.15 ≤ s ≤ 0.9; prompt/tool_output: 0 ≤ s ≤ 0.9, because T1 silence on natural
 *      language is weak evidence). The T3 signal part (cheap) always runs.
 *   4. T4 (LLM) only when configured and the score after T2/T3 is still in the T4 band
 *      (0.4 ≤ s < 0.7 by default: between alert and block).
 * What a tier found reaches the tiers after it on their context (`findings`), and so do the evasion
 * signals when a tier measured them (`evasionSignals`: T1 does for the address hint's guard, and
 * T3 then takes them rather than measuring them again).
 * Combination: noisy-or of the scores of tiers that matched. An erroring tier is reported as
 * `error`; fail-open tiers then contribute nothing (and the explanation says so), fail-closed
 * tiers raise the score to at least the challenge threshold.
 */
import type { Normalized } from './normalize/index.ts';
import { DEFAULT_THRESHOLDS, IMMEDIATE_BLOCK_SCORE } from './policy.ts';
import { noisyOr, round } from './score.ts';
import type { SignalResult } from './tiers/t3-signals.ts';
import { TIER_NAMES, type Finding, type InspectKind, type ScanInput, type Thresholds, type TierName, type TierReport, type Verdict } from './types.ts';

export interface PipelinePolicy {
  readonly thresholds: Thresholds;
  /** Inclusive band of the running score in which T2/T3 classifier run, per kind. */
  readonly uncertainBand: Readonly<Record<InspectKind, readonly [number, number]>>;
  /** Band in which T4 runs (lower inclusive, upper exclusive). */
  readonly t4Band: readonly [number, number];
  readonly immediateBlockScore: number;
}

export const DEFAULT_PIPELINE_POLICY: PipelinePolicy = Object.freeze({
  thresholds: DEFAULT_THRESHOLDS,
  uncertainBand: Object.freeze({ prompt: [0, 0.9] as const, tool_output: [0, 0.9] as const, http: [0.15, 0.9] as const, tool_definition: [0, 0.9] as const, llm_output: [0, 0.9] as const }),
  t4Band: [0.4, 0.7] as const,
  immediateBlockScore: IMMEDIATE_BLOCK_SCORE,
});

export interface TierContext {
  readonly input: ScanInput;
  readonly normalized: Normalized;
  readonly policy: PipelinePolicy;
  /** Findings of the tiers that already ran. */
  readonly findings: readonly Finding[];
  /** Whether the running score is in the uncertain band (T3 runs its classifier only then). */
  readonly escalate: boolean;
  readonly runningScore: number;
  /** The text's evasion signals, when a tier before this one measured them (TierVerdict). */
  readonly evasionSignals?: SignalResult;
}

/**
 * A tier's verdict, with the text's evasion signals when the tier measured them: the tiers after it
 * read them on their context instead of measuring them again. A tier hands them on only when they
 * hold for those tiers: of the findings before it, the signals read only a catalogue match in a
 * decoded or de-obfuscated variant (`signal.obfuscated-match`), so T1 hands on what it measured when
 * it found nothing in the catalogue.
 */
export type TierVerdict = Verdict & { readonly evasionSignals?: SignalResult };

export type TierFunction = (context: TierContext) => TierVerdict | Promise<TierVerdict>;

export interface TierDefinition {
  readonly name: TierName;
  readonly failMode: 'open' | 'closed';
  /** always: every request; uncertain: only in the uncertain band; last-resort: only in the T4 band. */
  readonly stage: 'always' | 'uncertain' | 'last-resort';
  readonly run: TierFunction;
}

export interface PipelineResult {
  readonly score: number;
  readonly findings: readonly Finding[];
  readonly reports: readonly TierReport[];
  readonly immediateBlock: boolean;
  /** Tiers that failed open (the explanation names them). */
  readonly failedOpen: readonly TierName[];
}

export interface Pipeline {
  readonly tiers: readonly TierName[];
  run(input: ScanInput, normalized: Normalized, policy?: PipelinePolicy): Promise<PipelineResult>;
}

const EXECUTION_ORDER: readonly TierName[] = ['t1', 't5', 't2', 't3', 't4'];

function skipped(reason: string, failMode: 'open' | 'closed'): Verdict {
  return { outcome: 'skipped', score: 0, findings: [], failMode, reason };
}

export function createPipeline(definitions: readonly TierDefinition[]): Pipeline {
  const byName = new Map<TierName, TierDefinition>();
  for (const definition of definitions) {
    if (!(TIER_NAMES as readonly string[]).includes(definition.name)) throw new Error(`detection pipeline: unknown tier "${String(definition.name)}"`);
    if (byName.has(definition.name)) throw new Error(`detection pipeline: tier "${definition.name}" listed twice`);
    byName.set(definition.name, definition);
  }
  if (!byName.has('t1')) throw new Error('detection pipeline: t1 is required');
  const ordered = EXECUTION_ORDER.filter((name) => byName.has(name)).map((name) => byName.get(name)!);

  return {
    tiers: ordered.map((definition) => definition.name),
    async run(input, normalized, policy = DEFAULT_PIPELINE_POLICY) {
      const findings: Finding[] = [];
      const reports: TierReport[] = [];
      const matchedScores: number[] = [];
      const failedOpen: TierName[] = [];
      let closedFloor = 0;
      let immediateBlock = false;
      let evasionSignals: SignalResult | undefined;
      const running = () => Math.max(noisyOr(matchedScores), closedFloor);
      const [low, high] = policy.uncertainBand[input.kind];

      for (const definition of ordered) {
        const score = running();
        const escalate = score >= low && score <= high;
        let verdict: TierVerdict;
        const started = performance.now();
        if (immediateBlock) verdict = skipped('T1 blocked immediately', definition.failMode);
        else if (definition.stage === 'uncertain' && !escalate) verdict = skipped('score outside the uncertain band', definition.failMode);
        else if (definition.stage === 'last-resort' && !(score >= policy.t4Band[0] && score < policy.t4Band[1])) verdict = skipped('score outside the T4 band', definition.failMode);
        else {
          try {
            verdict = await definition.run({ input, normalized, policy, findings: [...findings], escalate, runningScore: score, ...(evasionSignals === undefined ? {} : { evasionSignals }) });
          } catch (error) {
            verdict = { outcome: 'error', score: 0, findings: [], failMode: definition.failMode, error: error instanceof Error ? error.name : 'error' };
          }
        }
        const latency = Math.round((performance.now() - started) * 1000) / 1000;
        if (verdict.evasionSignals !== undefined) evasionSignals = verdict.evasionSignals;
        if (verdict.outcome === 'match') {
          matchedScores.push(verdict.score);
          findings.push(...verdict.findings);
        } else if (verdict.outcome === 'error') {
          // A fail-open tier may say why it could not answer (e.g. the semantic tier saturated).
          findings.push(...verdict.findings);
          if (verdict.failMode === 'closed') closedFloor = Math.max(closedFloor, policy.thresholds.challenge);
          else failedOpen.push(definition.name);
        }
        const detail = verdict.outcome === 'skipped' ? verdict.reason : verdict.outcome === 'error' ? `${verdict.error} (fail ${verdict.failMode})` : undefined;
        reports.push({ tier: definition.name, outcome: verdict.outcome, score: round(verdict.score), latency_ms: latency, ...(detail === undefined ? {} : { detail }) });
        if (definition.name === 't1' && verdict.outcome === 'match' && verdict.score > policy.immediateBlockScore) immediateBlock = true;
      }
      return { score: round(running()), findings, reports, immediateBlock, failedOpen };
    },
  };
}
