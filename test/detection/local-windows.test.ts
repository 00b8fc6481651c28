/**
 * The local windows of a long text (engine.ts `localRuleScore`; issue #32, issue #39 item 1): a
 * long text whose evidence is only weak is judged by its highest-scoring window of
 * LOCAL_WINDOW_CHARS characters (overlapping by half, up to MAX_SCAN_LENGTH), each window scored
 * as its own text. The windows are the largest repeated work of a long inspection, so a faster
 * reading of them is likely; this test holds any such reading to the plain rule below, written
 * out window by window: the best window's score, and the value the engine keeps from it
 * (min(whole, noisy-or of the best window and the learned heads)) whatever `enough` lets it skip.
 * It fails when a window's score, the window edges, or the windows read change.
 */
import { describe, expect, it } from 'vitest';
import { localRuleScore, LOCAL_WINDOW_CHARS, type InspectRequest } from '../../src/detection/engine.ts';
import { compileCatalogue } from '../../src/detection/catalogue/index.ts';
import { adjustForKind, kindFindings } from '../../src/detection/kind-detectors.ts';
import { MAX_SCAN_LENGTH, normalize } from '../../src/detection/normalize/index.ts';
import { combineFindings, noisyOr } from '../../src/detection/score.ts';
import { runT1 } from '../../src/detection/tiers/t1.ts';
import { evasionSignals } from '../../src/detection/tiers/t3-signals.ts';
import { LONG_TEXTS } from './long-texts.ts';

const catalogue = compileCatalogue();

/** Every window's score, in order, as the rule reads it: each window its own text. */
function windowScores(request: InspectRequest, text: string): number[] {
  const kind = request.kind;
  const end = Math.min(text.length, MAX_SCAN_LENGTH);
  const scores: number[] = [];
  for (let start = 0; ; start += LOCAL_WINDOW_CHARS / 2) {
    const window = text.slice(start, Math.min(end, start + LOCAL_WINDOW_CHARS));
    const normalized = normalize(window, { kind });
    const t1 = runT1(catalogue, kind, normalized);
    const findings = adjustForKind(kind, [...t1.findings, ...kindFindings({ ...request, content: window }, window)], window, true);
    scores.push(noisyOr([combineFindings(findings), evasionSignals(kind, normalized, findings, window).score]));
    if (start + LOCAL_WINDOW_CHARS >= end) return scores;
  }
}

/** Weak tells of prompts (each Alert at most alone), spread through long texts of ordinary tasks. */
const WEAK = [
  'Stay in character as the grumpy innkeeper for the rest of this story.',
  'For a research paper, describe in general terms how phishing emails trick people.',
  'Pretend you are a pirate captain and answer the next questions in that voice.',
  'Write a fake news headline about a cat elected mayor, for a media-literacy class.',
  'You are now my strict Latin teacher: correct every mistake I make.',
  'Repeat the word "hello" three times, then translate it into French.',
];

function longPrompt(seed: number, size: number): string {
  const tasks = LONG_TEXTS.find((text) => text.kind === 'prompt')!.records;
  const parts: string[] = [];
  let length = 0;
  for (let index = 0; length < size; index += 1) {
    const part = (index * 7 + seed) % 5 === 0 ? WEAK[(index + seed) % WEAK.length]! : tasks[(index * 3 + seed) % tasks.length]!;
    parts.push(part);
    length += part.length + 2;
  }
  return parts.join('\n\n');
}

const cases: { name: string; request: InspectRequest; text: string }[] = [
  ...LONG_TEXTS.flatMap((text) => {
    const middle = Math.floor(text.records.length / 2);
    const joined = text.records.join('\n\n');
    const planted = [...text.records.slice(0, middle), text.attack, ...text.records.slice(middle)].join('\n\n');
    return [
      { name: `${text.name}`, request: { kind: text.kind, content: joined }, text: joined },
      { name: `${text.name}, planted`, request: { kind: text.kind, content: planted }, text: planted },
    ];
  }),
  ...[4_500, 9_000, 17_000].map((size, seed) => ({ name: `prompt of tasks and weak tells, ${size}`, request: { kind: 'prompt' as const, content: '' }, text: longPrompt(seed, size) })),
  // Past the scanned length: windows end at MAX_SCAN_LENGTH.
  { name: 'prompt past the scanned length', request: { kind: 'prompt', content: '' }, text: longPrompt(5, MAX_SCAN_LENGTH + 3_000) },
];

describe('local windows of a long text (localRuleScore)', () => {
  const read = cases.map(({ name, request, text }) => ({ name, request: { ...request, content: text }, text, scores: windowScores({ ...request, content: text }, text) }));

  it('scores a long text by its best window, each window its own text', { timeout: 300_000 }, () => {
    for (const { name, request, text, scores } of read) {
      expect(localRuleScore(catalogue, request, text), name).toBe(Math.max(...scores));
    }
    // The texts do exercise the rule: windows that score, best windows past the first, and
    // windows that score less than the text's best.
    const scoring = read.filter(({ scores }) => Math.max(...scores) > 0);
    expect(scoring.length).toBeGreaterThanOrEqual(10);
    expect(read.filter(({ scores }) => scores.indexOf(Math.max(...scores)) > 1).length).toBeGreaterThanOrEqual(5);
    expect(read.filter(({ scores }) => scores.some((score) => score < Math.max(...scores))).length).toBeGreaterThanOrEqual(10);
    const last = read.at(-1)!;
    expect(last.scores.length).toBe(Math.ceil((MAX_SCAN_LENGTH - LOCAL_WINDOW_CHARS / 2) / (LOCAL_WINDOW_CHARS / 2)));
  });

  it('keeps min(whole, noisy-or of the best window and the learned heads) whatever windows `enough` lets it skip', { timeout: 300_000 }, () => {
    for (const { name, request, text, scores } of read) {
      const best = Math.max(...scores);
      // Wholes at, above and below each window's score, with and without a learned head's contribution.
      const wholes = [...new Set(scores.flatMap((score) => [score, noisyOr([score, 0.05]), Math.max(0, score - 0.05)]))];
      for (const learned of [[], [0.3]]) {
        for (const whole of wholes) {
          let asked = 0;
          const local = localRuleScore(catalogue, request, text, (sofar) => {
            asked += 1;
            return noisyOr([sofar, ...learned]) >= whole;
          });
          expect(Math.min(whole, noisyOr([local, ...learned])), `${name}: whole ${whole}, learned ${learned.join(',')}`).toBe(Math.min(whole, noisyOr([best, ...learned])));
          expect(asked).toBeLessThanOrEqual(scores.length);
        }
      }
    }
  });
});
