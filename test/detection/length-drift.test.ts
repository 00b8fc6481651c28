/**
 * Decisions that do not drift with length (issue #32, "benign FPR at 8 KB equals that at 1 KB";
 * issue #39 item 1): a long text every record of which is allowed on its own is allowed when the
 * records are joined (no accumulation), and an instruction planted in the middle of ~8 KB of
 * ordinary records is refused whenever it is refused on its own. The texts (test/detection/
 * long-texts.ts) were written for this test: fifteen formats of tool results, a prompt of tasks
 * and a model answer, with records carrying weak tells of their own (Alert at most alone).
 */
import { describe, expect, it } from 'vitest';
import { createDetection } from '../../src/detection/index.ts';
import { LONG_TEXTS } from './long-texts.ts';

const refused = (decision: string) => decision === 'challenge' || decision === 'block';

describe('decisions and length: the whole is judged as its records are', () => {
  const engine = createDetection({ analysisCache: false });

  it('allows fifteen ~8 KB benign texts whose every record is allowed alone, weak tells included', { timeout: 300_000 }, async () => {
    let weakTells = 0;
    for (const text of LONG_TEXTS) {
      const joined = text.records.join('\n\n');
      expect(joined.length, text.name).toBeGreaterThan(7_500);
      for (const record of text.records) {
        const alone = await engine.inspect({ kind: text.kind, content: record });
        expect(alone.allowed, `${text.name}: ${record.slice(0, 60)}`).toBe(true);
        if (alone.decision === 'alert') weakTells += 1;
      }
      const decision = await engine.inspect({ kind: text.kind, content: joined });
      expect(decision.allowed, text.name).toBe(true);
    }
    // The records do carry tells the detectors see (else the joined texts prove nothing).
    expect(weakTells).toBeGreaterThanOrEqual(5);
  });

  it('refuses an instruction planted in the middle of each ~8 KB text whenever it refuses it alone', { timeout: 300_000 }, async () => {
    let refusedAlone = 0;
    for (const text of LONG_TEXTS) {
      const middle = Math.floor(text.records.length / 2);
      const planted = [...text.records.slice(0, middle), text.attack, ...text.records.slice(middle)].join('\n\n');
      const alone = await engine.inspect({ kind: text.kind, content: text.attack });
      if (!refused(alone.decision)) continue;
      refusedAlone += 1;
      const decision = await engine.inspect({ kind: text.kind, content: planted });
      expect(refused(decision.decision), text.name).toBe(true);
    }
    expect(refusedAlone).toBeGreaterThanOrEqual(12);
  });
});
