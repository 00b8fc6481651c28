/**
 * Grounding tier 3 through the deployment's judge model, against a fake OpenAI upstream on
 * loopback: asked only about uncertain claims, its answer changes the verdict, and a slow judge
 * fails open and says so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJudgeCompletion } from '../../src/gateway/index.ts';
import { createGroundingJudge, parseJudgeAnswer, resolvePolicy, runVerification } from '../../src/verification/index.ts';
import { FAKE_CREDENTIALS, startFakeProvider, type FakeProvider } from '../fakes/providers/index.ts';

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider('openai');
});
afterAll(async () => {
  await fake?.close();
});

const SOURCES = ['The bridge opened in 1932 and carries eight lanes of traffic.'];
const judge = () => createGroundingJudge(createJudgeCompletion({ provider: 'openai', model: 'gpt-4o-mini', timeoutMs: 2_000, baseUrl: fake.baseUrl }, { openai: FAKE_CREDENTIALS.default }, true));
const policy = resolvePolicy({ grounding: { judge: { enabled: true, timeout_ms: 1_000, band: [0, 1] } } });

describe('grounding LLM judge', () => {
  it('turns a lexically clean claim into a finding when the judge answers UNSUPPORTED', async () => {
    fake.reset();
    fake.setBehaviour({ content: 'UNSUPPORTED' });
    const verification = await runVerification({ content: 'The bridge opened in 1932.', finishReason: 'stop', sources: SOURCES }, policy, { judge: judge() });
    expect(verification.layers.grounding).toMatchObject({ verdict: 'fail', info: { tiers: ['lexical', 'llm_judge'], judge: { outcome: 'answered', claims: 1 } } });
    expect(verification.layers.grounding.findings.map((finding) => finding.reason)).toEqual(['judge_unsupported']);
    const prompt = JSON.stringify(fake.requests.at(-1)!.body);
    expect(prompt).toContain('<claim>');
    expect(prompt).toContain('eight lanes');
  });

  it('keeps the lexical verdict and reports a timeout when the judge is too slow', async () => {
    fake.reset();
    fake.setBehaviour({ content: 'UNSUPPORTED', delayMs: 1_500 });
    const verification = await runVerification({ content: 'The bridge opened in 1932.', finishReason: 'stop', sources: SOURCES }, resolvePolicy({ grounding: { judge: { enabled: true, timeout_ms: 100, band: [0, 1] } } }), { judge: judge() });
    expect(verification.layers.grounding).toMatchObject({ verdict: 'pass', info: { judge: { outcome: 'timed_out' } } });
  });

  it('is not asked when the policy leaves the judge off', async () => {
    fake.reset();
    await runVerification({ content: 'The bridge opened in 1932.', finishReason: 'stop', sources: SOURCES }, resolvePolicy(), { judge: judge() });
    expect(fake.requests).toHaveLength(0);
  });

  it('reads only a one-word verdict as an answer', () => {
    expect(parseJudgeAnswer('SUPPORTED')).toBe(true);
    expect(parseJudgeAnswer(' unsupported.')).toBe(false);
    expect(parseJudgeAnswer('I think it is supported')).toBeNull();
  });
});
