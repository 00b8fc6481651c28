/**
 * The literal prefilters of the extraction and foreign-override detectors against the expressions
 * they stand for, on strings generated to match each expression (its assertions left out, so that
 * some near misses come too) and then re-cased, re-spaced or repeated: firstMatches gives exactly
 * the match exec gives, possibleMatches never rules out an expression that matches, and every match
 * of a foreign-override verb holds one of its required literals. A prefilter that skipped an
 * expression wrongly would drop a finding without any other test noticing.
 */
import { RegExpParser, visitRegExpAST } from '@eslint-community/regexpp';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstMatches, possibleMatches, requiredLiterals } from '../../src/detection/catalogue/literals.ts';
import { EXTRACTION_PATTERNS } from '../../src/detection/extraction.ts';
import { FOREIGN_OVERRIDE_PATTERNS } from '../../src/detection/foreign-override.ts';

/** The expression's source without its assertions (\b, lookarounds), which fast-check cannot generate. */
function withoutAssertions(regex: RegExp): string {
  const ast = new RegExpParser().parsePattern(regex.source, 0, regex.source.length, { unicode: regex.unicode });
  const cuts: Array<[number, number]> = [];
  visitRegExpAST(ast, {
    onAssertionEnter(node) {
      if (node.kind !== 'start' && node.kind !== 'end') cuts.push([node.start, node.end]);
    },
  });
  cuts.sort((left, right) => left[0] - right[0]);
  const outermost: Array<[number, number]> = [];
  for (const cut of cuts) if (outermost.length === 0 || cut[0] >= outermost[outermost.length - 1]![1]) outermost.push(cut);
  let source = regex.source;
  for (const [start, end] of outermost.reverse()) source = source.slice(0, start) + source.slice(end);
  return source;
}

/** Re-casings (with the characters that fold only under u: ſ, the Kelvin and Ångström signs, ẞ), other spaces and quotes, repetition. */
const variants: ReadonlyArray<(text: string) => string> = [
  (text) => text,
  (text) => text.toUpperCase(),
  (text) => text.replace(/\b\w/g, (letter) => letter.toUpperCase()),
  (text) => text.replace(/s/g, 'ſ').replace(/k/g, '\u212a').replace(/å/g, '\u212b').replace(/ss/g, 'ẞ'),
  (text) => text.replace(/i/g, 'İ').replace(/I/g, 'ı'),
  (text) => text.replace(/ /g, '\u00a0').replace(/'/g, '\u2019'),
  (text) => text.replace(/ /g, '\n'),
  (text) => `${'your system prompt '.repeat(60)}${text}`,
  (text) => `${text} ${text.toUpperCase()}. ${text}`,
];

const arbitraryFor = (regex: RegExp) =>
  fc.tuple(fc.stringMatching(new RegExp(withoutAssertions(regex), regex.flags.replace(/[gi]/g, '')), { maxLength: 300 }), fc.constantFrom(...variants)).map(([text, variant]) => variant(text));

describe('the extraction prefilters on generated texts', () => {
  const caseOnly = EXTRACTION_PATTERNS.filter((regex) => regex.flags === 'i');
  const unicode = EXTRACTION_PATTERNS.filter((regex) => regex.ignoreCase && regex.unicode).map((regex) => new RegExp(regex.source, 'iu'));

  it('firstMatches finds the match exec finds, for every expression with the i flag alone', () => {
    expect(caseOnly.length).toBeGreaterThan(10);
    const first = firstMatches(caseOnly);
    for (const regex of caseOnly) {
      fc.assert(
        fc.property(arbitraryFor(regex), (text) => {
          const found = first(text);
          caseOnly.forEach((other, index) => {
            const expected = other.exec(text);
            const actual = found(index);
            expect(actual === null ? null : [actual.index, ...actual], `${other} on ${JSON.stringify(text)}`).toEqual(expected === null ? null : [expected.index, ...expected]);
          });
        }),
        { numRuns: 60, seed: 39 },
      );
    }
  });

  it('possibleMatches never rules out a matching expression, for every expression with the i and u flags', () => {
    expect(unicode.length).toBeGreaterThan(10);
    // One at a time: together their literals hold more characters than one automaton takes.
    const mays = unicode.map((regex) => possibleMatches([regex]));
    for (const regex of unicode) {
      fc.assert(
        fc.property(arbitraryFor(regex), (text) => {
          unicode.forEach((other, index) => {
            if (other.test(text)) expect(mays[index]!(text)[0], `${other} on ${JSON.stringify(text)}`).toBe(1);
          });
        }),
        { numRuns: 60, seed: 39 },
      );
    }
  });
});

describe('the foreign-override verb filter on generated texts', () => {
  // Every third expression of the list is a language's verb (verb, qualifier, object per
  // language); the last five are the gate's and the sentence end.
  const verbs = FOREIGN_OVERRIDE_PATTERNS.slice(0, -5).filter((_, index) => index % 3 === 0);

  it('every match of a verb holds one of its required literals', () => {
    expect(verbs.length).toBeGreaterThan(10);
    for (const verb of verbs) {
      const literals = requiredLiterals(verb.source, { unicode: true });
      if (literals === null) continue;
      fc.assert(
        fc.property(arbitraryFor(verb), (raw) => {
          const text = raw.normalize('NFKC').toLowerCase();
          const matches = new RegExp(verb.source, 'u').test(text);
          if (matches) expect(literals.some((literal) => text.includes(literal)), `${verb} on ${JSON.stringify(text)}`).toBe(true);
        }),
        { numRuns: 60, seed: 39 },
      );
    }
  });
});
