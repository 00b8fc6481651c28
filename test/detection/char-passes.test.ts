// The per-character passes rewritten for speed (issue #39 item 1, speed-inspect18) answer exactly
// as the plain formulations they replaced: invisible characters removed by a walk that copies the
// kept stretches, the longest \s and \w runs read from a class table, and the English-word share
// read from numeric word keys. And (speed-inspect19) the foreign-override detector's gate, which
// answers as its one case-insensitive Unicode expression does without scanning every offset with it.
// And (speed-inspect20) the keyword automaton's offset lists kept in an array by keyword during a
// pass instead of a map; and the gate again, on ASCII texts dense with the verbs and near misses.
import { describe, expect, it } from 'vitest';
import { buildAutomaton } from '../../src/detection/catalogue/keywords.ts';
import { candidateGateForTest } from '../../src/detection/foreign-override.ts';
import { mergeStartsForTest } from '../../src/detection/catalogue/index.ts';
import { longestRuns } from '../../src/detection/catalogue/windows.ts';
import { removeInvisible } from '../../src/detection/normalize/invisible.ts';
import { readsAsEnglish } from '../../src/detection/ml/semantic-head.ts';

function generator(seed: number) {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  return { next, pick: <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]! };
}

// Invisible and format characters, emoji (pictographs, selectors, joiners), tag characters, lone
// and paired surrogates, every \s character and ordinary letters, digits and punctuation.
const PIECES = [
  '\u200b', '\u200c', '\u200d', '\u2060', '\u2064', '\ufeff', '\u00ad', '\u180e', '\u034f', '\u115f', '\u3164', '\uffa0', '\u17b4',
  '\u200e', '\u202e', '\u2066', '\u061c', '\ufe0f', '\ufe0e', '\ufe00', '\u{e0100}', '\u{e01ef}', '\u{1f600}', '\u2764', '\u2190',
  '\u{e0041}', '\u{e0068}', '\u{e007f}', '\u{e0020}', '\ud83d', '\ude00', '\udb40', '\udc41',
  ' ', '\t', '\n', '\r', '\v', '\f', '\u00a0', '\u1680', '\u2000', '\u200a', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\u0085',
  'a', 'Z', '_', '9', "'", '-', '.', 'é', 'Σ', 'я', 'the ', 'you ', 'please ', "don't ", 'shoulder ', 'Que ', 'de la ', 'x',
];

function randomTexts(count: number, seed: number): string[] {
  const random = generator(seed);
  return Array.from({ length: count }, () => Array.from({ length: 1 + Math.floor(random.next() * 120) }, () => random.pick(PIECES)).join(''));
}

/** The walk removeInvisible replaced: by code point, each kept point appended on its own. */
function removeInvisibleReference(input: string) {
  const zeroWidthSet = new Set([0x200b, 0x200c, 0x200d, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xfeff, 0x00ad, 0x180e, 0x034f, 0x115f, 0x1160, 0x3164, 0xffa0, 0x17b4, 0x17b5]);
  const bidiSet = new Set([0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x061c]);
  const pictograph = (point: number | undefined) => point !== undefined && point >= 0x2190 && !(point >= 0xe0000 && point <= 0xe01ef);
  let zeroWidth = 0;
  let bidi = 0;
  let tags = 0;
  let selectors = 0;
  let tagText = '';
  const out: string[] = [];
  const points = Array.from(input, (char) => char.codePointAt(0) ?? 0);
  for (let index = 0; index < points.length; index++) {
    const point = points[index]!;
    if (point === 0x200d && pictograph(points[index - 1]) && pictograph(points[index + 1])) out.push('\u200d');
    else if (zeroWidthSet.has(point)) zeroWidth++;
    else if (bidiSet.has(point)) bidi++;
    else if (point >= 0xe0000 && point <= 0xe007f) {
      tags++;
      if (point - 0xe0000 >= 0x20 && point - 0xe0000 < 0x7f) tagText += String.fromCharCode(point - 0xe0000);
    } else if ((point >= 0xfe00 && point <= 0xfe0f) || (point >= 0xe0100 && point <= 0xe01ef)) {
      if ((point === 0xfe0f || point === 0xfe0e) && pictograph(points[index - 1])) out.push(String.fromCodePoint(point));
      else selectors++;
    } else out.push(String.fromCodePoint(point));
  }
  return { text: out.join(''), zeroWidth, bidi, tags, tagText, selectors };
}

/** The longest matches of /\s+/g and /\w+/g. */
function longestRunsReference(text: string) {
  const longest = (pattern: RegExp) => Math.max(0, ...[...text.matchAll(pattern)].map((match) => match[0].length));
  return { s: longest(/\s+/g), w: longest(/\w+/g) };
}

/** The English reading as /[a-z']+/g finds the words, each looked up as a string. */
function readsAsEnglishReference(text: string): boolean {
  const english = new Set('the a an and or but of to in on at for with from by is are was were be been this that these those it its you your i me my we our they their he she his her not no do does did have has had will would can could should must please what which who how when where if then than as so all any'.split(' '));
  const words = text.slice(0, 4096).toLowerCase().match(/[a-z']+/g) ?? [];
  const common = words.filter((word) => english.has(word)).length;
  return words.length < 4 ? common > 0 : common / words.length >= 0.15;
}

describe('per-character passes (speed-inspect18)', () => {
  const texts = [
    ...randomTexts(4000, 18),
    'Family: \u{1f468}\u200d\u{1f469}\u200d\u{1f467}, heart \u2764\ufe0f, text\ufe0f, ig\u200bnore, \u202eevil, \u{e0049}\u{e0067}\u{e006e}\u{e006f}\u{e0072}\u{e0065}',
    '\ud83d lone high, lone low \ude00 and a pair \u{1f600}\u200d',
    '\u200d at the start and at the end \u200d',
    '',
  ];

  it('removes invisible characters, counts them and keeps emoji joiners and selectors as the code-point walk does', () => {
    for (const text of texts) expect(removeInvisible(text)).toEqual(removeInvisibleReference(text));
    // A text with nothing to remove comes back as it is.
    expect(removeInvisible('plain text, nothing hidden').text).toBe('plain text, nothing hidden');
    expect(removeInvisible('ig\u200bno\u00adre \u{e0041}').text).toBe('ignore ');
  });

  it('measures the longest whitespace and word runs as /\\s+/ and /\\w+/ do', () => {
    for (const text of texts) expect(longestRuns(text)).toEqual(longestRunsReference(text));
  });

  it('reads English by its function words as a lookup of each /[a-z\']+/ word does', () => {
    for (const text of texts) expect(readsAsEnglish(text)).toBe(readsAsEnglishReference(text));
    // Longer than the longest function word, a prefix of one, and with apostrophes.
    for (const text of ['shoulder wouldn thes pleased', "please don't you", "the'", 'ab', 'the the the the the']) expect(readsAsEnglish(text)).toBe(readsAsEnglishReference(text));
  });
});

describe('the foreign-override gate', () => {
  const { isCandidate, CANDIDATE } = candidateGateForTest;
  const verbs = ['abaikan', 'lupakan', 'acuhkan', 'hiraukan', 'pedulikan', 'pansinin', 'kalimutan', 'balewalain', 'isantabi', 'zignoruj', 'ignoruj', 'zapomnij', 'yok say', 'unut'];

  it('answers as the expression for every code point alone and inside ASCII text (U+017F and U+212A fold to ASCII)', () => {
    for (let point = 0; point <= 0x10ffff; point += point < 0x3000 ? 1 : 97) {
      const character = String.fromCodePoint(point);
      for (const text of [character, `plain ${character} text`]) expect(isCandidate(text), point.toString(16)).toBe(CANDIDATE.test(text));
    }
    for (const text of ['\ud800', 'a\udfff b', '\u{1f600}', 'yok \u017fay', 'abai\u212aan', 'ABAI\u212aAN', '\u017f\u212a', 'YOK SAY', 'UnUt', 'u n u t', 'İgnoruj', '']) {
      expect(isCandidate(text), text).toBe(CANDIDATE.test(text));
    }
  });

  it('answers as the expression on random texts of the verbs in mixed case, with the two folding letters', () => {
    const random = generator(19);
    const pieces = [...'abikunlpzjogyrs KSIUNT.\n', '\u017f', '\u212a', '\u0130', '\u0301'];
    for (let count = 0; count < 20_000; count++) {
      let text = '';
      const length = 1 + Math.floor(random.next() * 30);
      for (let index = 0; index < length; index++) {
        text += random.next() < 0.08
          ? random.pick(verbs).replace(/./g, (letter) => (random.next() < 0.3 ? letter.toUpperCase() : letter === 's' && random.next() < 0.3 ? '\u017f' : letter === 'k' && random.next() < 0.3 ? '\u212a' : letter))
          : random.next() < 0.02 ? random.pick(pieces.slice(-2)) : random.pick(pieces.slice(0, -2));
      }
      expect(isCandidate(text), JSON.stringify(text)).toBe(CANDIDATE.test(text));
    }
  });

  it('answers as the expression on ASCII texts of the verbs in any case, overlapping, near misses, at either end', () => {
    const random = generator(29);
    // Letters of the verbs and their neighbours in case, so that prefixes, near misses ("ignoru",
    // "yok  say", "unu t") and overlaps ("zignoruj" holds "ignoruj") occur often.
    const pieces = [...'abikunlpzjogyrsmthAKIUNZJGY .,\n\t-_\'0', 'ignoru', 'yok  say', 'unu t', 'zapomni', 'aba', 'hirau'];
    let matched = 0;
    for (let count = 0; count < 20_000; count++) {
      let text = '';
      const length = Math.floor(random.next() * 40);
      for (let index = 0; index < length; index++) {
        text += random.next() < 0.06
          ? random.pick(verbs).replace(/./g, (letter) => (random.next() < 0.4 ? letter.toUpperCase() : letter))
          : random.pick(pieces);
      }
      const expected = CANDIDATE.test(text);
      if (expected) matched++;
      expect(isCandidate(text), JSON.stringify(text)).toBe(expected);
    }
    // Both answers are well represented.
    expect(matched).toBeGreaterThan(3_000);
    expect(matched).toBeLessThan(17_000);
  });
});

describe('the keyword automaton\'s offsets', () => {
  /** Every occurrence of every keyword by indexOf, the former map-building order: ids by the end of their first occurrence. */
  function reference(keywords: readonly string[], text: string, track: Uint8Array | undefined, limit: number) {
    const found = new Uint8Array(keywords.length);
    const events: { id: number; start: number; end: number }[] = [];
    keywords.forEach((keyword, id) => {
      for (let at = text.indexOf(keyword); at >= 0; at = text.indexOf(keyword, at + 1)) {
        found[id] = 1;
        events.push({ id, start: at, end: at + keyword.length });
      }
    });
    // The automaton reports an occurrence when its last character is read; ids ending at one
    // character in the order of its output list, which the entries' order below does not test.
    events.sort((left, right) => left.end - right.end || left.id - right.id);
    const starts = new Map<number, number[]>();
    for (const { id, start } of events) {
      if (track === undefined || track[id] !== 1) continue;
      const list = starts.get(id);
      if (list === undefined) starts.set(id, [start]);
      else if (list.length <= limit) list.push(start);
    }
    return { found: [...found], starts: [...starts].sort((left, right) => left[0] - right[0]) };
  }

  it('are every tracked occurrence, ascending, stopped above the limit, pass after pass of one automaton', () => {
    const random = generator(31);
    const alphabet = [...'abcab ', 'ab', 'ba', 'abc', '\u0130', '\ud800'];
    for (let round = 0; round < 200; round++) {
      const keywords = [...new Set(Array.from({ length: 1 + Math.floor(random.next() * 12) }, () => Array.from({ length: 1 + Math.floor(random.next() * 4) }, () => random.pick([...'abc ', '\u0130'])).join('')))];
      const automaton = buildAutomaton(keywords);
      // Several passes of one automaton (its scratch must start empty each time), with and without tracking.
      for (let pass = 0; pass < 6; pass++) {
        const text = Array.from({ length: Math.floor(random.next() * 80) }, () => random.pick(alphabet)).join('');
        const track = random.next() < 0.2 ? undefined : Uint8Array.from(keywords, () => (random.next() < 0.7 ? 1 : 0));
        const limit = random.next() < 0.5 ? Infinity : Math.floor(random.next() * 6);
        const expected = reference(keywords, text, track, limit);
        const marks = automaton.mark(text, track, undefined, limit);
        const base = automaton.markBase(text, track, limit);
        for (const result of [marks, base]) {
          expect([...result.found], JSON.stringify({ keywords, text })).toEqual(expected.found);
          expect([...result.starts].sort((left, right) => left[0] - right[0]), JSON.stringify({ keywords, text, limit })).toEqual(expected.starts);
        }
        // Entries in the order their first offset came, as the map filled during a pass had them.
        const firstSeen = [...marks.starts.keys()];
        expect(firstSeen).toEqual([...firstSeen].sort((left, right) => marks.starts.get(left)![0]! + keywords[left]!.length - (marks.starts.get(right)![0]! + keywords[right]!.length) || 0));
        expect([...base.starts.keys()]).toEqual(firstSeen);
      }
    }
  });
});

describe('the merged prefix offsets of a part', () => {
  /** The former formulation: every offset of every list, sorted, duplicates dropped. */
  function reference(ids: readonly number[], starts: ReadonlyMap<number, readonly number[]>, limit: number): readonly number[] | null {
    const lists = ids.flatMap((id) => (starts.has(id) ? [starts.get(id)!] : []));
    const total = lists.reduce((sum, list) => sum + list.length, 0);
    if (total > limit) return null;
    if (lists.length <= 1) return lists[0] ?? [];
    return [...new Set(lists.flat())].sort((left, right) => left - right);
  }

  it('is the ascending, distinct union of the literals\' ascending offsets, or null above the limit', () => {
    const random = generator(23);
    for (let count = 0; count < 5_000; count++) {
      const starts = new Map<number, number[]>();
      const literals = 1 + Math.floor(random.next() * 7);
      for (let id = 0; id < literals; id++) {
        if (random.next() < 0.15) continue;
        const list: number[] = [];
        // Dense or sparse, often sharing offsets with the other lists.
        const step = 1 + Math.floor(random.next() * (random.next() < 0.5 ? 4 : 60));
        for (let at = Math.floor(random.next() * step); at < 400; at += 1 + Math.floor(random.next() * step)) list.push(at);
        starts.set(id, list);
      }
      const ids = Array.from({ length: literals + 1 }, (_, id) => id).filter(() => random.next() < 0.85);
      const limit = random.next() < 0.2 ? 20 : 10_000;
      expect(mergeStartsForTest(ids, starts, limit)).toEqual(reference(ids, starts, limit));
    }
  });
});
