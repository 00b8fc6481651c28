import { describe, expect, it } from 'vitest';
import { detectLeak, promptLeakTracker } from '../../src/detection/leak.ts';

// Every string below was written for this test (none is taken from a corpus).
const FIRST = 'You are the billing helper of Northwind Outfitters. Only discuss invoices, refunds and shipping fees, and never mention the discount code list kept for staff.';
const SECOND = 'You are a gardening tutor for a community allotment. Explain soil, compost and crop rotation to beginners in short friendly steps with one example each.';

const ids = (findings: readonly { id: string }[]) => findings.map((finding) => finding.id);

describe('system prompt n-grams remembered between answers', () => {
  it('judges each answer against its own system prompt when prompts alternate', () => {
    // The first prompt recited: a leak against it, none against the second, and again against the first.
    expect(ids(detectLeak(FIRST, { systemPrompt: FIRST }))).toContain('leak.system-prompt');
    expect(ids(detectLeak(FIRST, { systemPrompt: SECOND }))).not.toContain('leak.system-prompt');
    expect(ids(detectLeak(SECOND, { systemPrompt: SECOND }))).toContain('leak.system-prompt');
    expect(ids(detectLeak(FIRST, { systemPrompt: FIRST }))).toContain('leak.system-prompt');
    expect(detectLeak('Invoices are emailed on the first of each month.', { systemPrompt: FIRST })).toEqual([]);
  });

  it('gives a streamed answer the same finding after the prompt was read for a JSON answer', () => {
    detectLeak('Refunds take five days.', { systemPrompt: FIRST });
    const tracker = promptLeakTracker(FIRST);
    const words = FIRST.split(' ');
    const found = words.flatMap((word, index) => tracker.push(index === 0 ? word : ` ${word}`));
    expect(ids([...found, ...tracker.push(' ')])).toContain('leak.system-prompt');
    expect(promptLeakTracker(SECOND).push(`${FIRST} `)).toEqual([]);
  });
});
