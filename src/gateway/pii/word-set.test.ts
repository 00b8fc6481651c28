import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WordSet } from './word-set.ts';

describe('packed word sets', () => {
  it('answer every membership test as a Set of the same words does', () => {
    const word = fc.string({ unit: fc.constantFrom('a', 'b', 'é', 'ś', 'A', "'", 'z'), maxLength: 6 });
    fc.assert(
      fc.property(fc.array(word, { maxLength: 200 }), fc.array(word, { maxLength: 200 }), (words, probes) => {
        const packed = new WordSet(words);
        const set = new Set(words);
        expect(packed.size).toBe(set.size);
        for (const probe of [...probes, ...words]) expect(packed.has(probe)).toBe(set.has(probe));
        expect([...packed]).toEqual([...set]);
      }),
    );
  });

  it('tell apart words that share a prefix, differ by accent or case, and the empty word', () => {
    const packed = new WordSet(['Ann', 'Anna', 'Annabel', 'Zoë', '']);
    expect(['Ann', 'Anna', 'Annabel', 'Zoë', ''].map((word) => packed.has(word))).toEqual([true, true, true, true, true]);
    expect(['An', 'Annab', 'ann', 'Zoe', 'Annabelle', ' Ann'].some((word) => packed.has(word))).toBe(false);
    expect(new WordSet([]).has('')).toBe(false);
  });
});
