import { check } from 'recheck';
import { describe, expect, it } from 'vitest';
import { CATALOGUE, compileCatalogue } from '../../src/detection/index.ts';
import { splitPattern } from '../../src/detection/catalogue/index.ts';
import { normalize } from '../../src/detection/normalize/index.ts';
import { scanVariants } from '../../src/detection/tiers/t1.ts';

const catalogue = compileCatalogue();

describe('pattern catalogue', () => {
  it('has unique ids and compiles every pattern', () => {
    expect(catalogue.size).toBe(CATALOGUE.length);
    expect(new Set(CATALOGUE.map((entry) => entry.id)).size).toBe(CATALOGUE.length);
  });

  it('rejects a catalogue entry with upper-case keywords at compile time', () => {
    const [first] = CATALOGUE;
    expect(() => compileCatalogue([{ ...first!, keywords: ['Ignore'] }])).toThrow();
  });

  it('matches every example written for each pattern, through the keyword prefilter', () => {
    const misses: string[] = [];
    for (const entry of CATALOGUE) {
      expect(entry.examples.length).toBeGreaterThan(0);
      for (const example of entry.examples) {
        const kind = entry.kinds[0]!;
        const result = scanVariants(catalogue, kind, normalize(example, { kind }).variants);
        if (!result.findings.some((finding) => finding.id === entry.id)) misses.push(`${entry.id}: ${example}`);
      }
    }
    expect(misses).toEqual([]);
  });

  it('contains no regular expression that the recheck ReDoS analyser finds vulnerable', { timeout: 900_000 }, async () => {
    const vulnerable: string[] = [];
    for (const entry of CATALOGUE) {
      for (const part of splitPattern(entry.pattern).parts) {
        const diagnostics = await check(part, 'm', { timeout: 5_000 });
        if (diagnostics.status === 'vulnerable') vulnerable.push(`${entry.id} (${diagnostics.complexity.type}): ${part.slice(0, 60)}`);
      }
    }
    expect(vulnerable).toEqual([]);
  });
});
