/**
 * Homoglyph (confusable) folding: maps characters that look like ASCII letters, digits and
 * punctuation to that ASCII character, after NFKC has already folded fullwidth, mathematical
 * and circled forms. The table covers the lookalikes attackers use in practice (Cyrillic, Greek,
 * Armenian, Latin small capitals and IPA, enclosed/regional-indicator letters, dash/quote/slash
 * variants); it is a scanning aid, never shown to users.
 */

const PAIRS: readonly (readonly [string, string])[] = [
  // Cyrillic
  ['а', 'a'], ['в', 'b'], ['с', 'c'], ['ԁ', 'd'], ['е', 'e'], ['ё', 'e'], ['һ', 'h'], ['і', 'i'], ['ї', 'i'], ['ј', 'j'], ['к', 'k'],
  ['ӏ', 'l'], ['м', 'm'], ['н', 'h'], ['о', 'o'], ['р', 'p'], ['ԛ', 'q'], ['г', 'r'], ['ѕ', 's'], ['т', 't'], ['ц', 'u'], ['ѵ', 'v'],
  ['ԝ', 'w'], ['х', 'x'], ['у', 'y'], ['ү', 'y'], ['з', '3'], ['п', 'n'], ['ь', 'b'], ['ɡ', 'g'],
  ['А', 'a'], ['В', 'b'], ['С', 'c'], ['Ԁ', 'd'], ['Е', 'e'], ['Ё', 'e'], ['Һ', 'h'], ['І', 'i'], ['Ї', 'i'], ['Ј', 'j'], ['К', 'k'],
  ['Ӏ', 'l'], ['М', 'm'], ['Н', 'h'], ['О', 'o'], ['Р', 'p'], ['Ԛ', 'q'], ['Ѕ', 's'], ['Т', 't'], ['Ѵ', 'v'], ['Ԝ', 'w'], ['Х', 'x'],
  ['У', 'y'], ['Ү', 'y'], ['З', '3'],
  // Greek
  ['α', 'a'], ['β', 'b'], ['ϲ', 'c'], ['δ', 'd'], ['ε', 'e'], ['η', 'n'], ['ι', 'i'], ['κ', 'k'], ['ν', 'v'], ['ο', 'o'], ['ρ', 'p'],
  ['ϱ', 'p'], ['τ', 't'], ['υ', 'u'], ['χ', 'x'], ['γ', 'y'], ['ω', 'w'], ['ς', 's'], ['ϳ', 'j'],
  ['Α', 'a'], ['Β', 'b'], ['Ϲ', 'c'], ['Ε', 'e'], ['Ζ', 'z'], ['Η', 'h'], ['Ι', 'i'], ['Κ', 'k'], ['Μ', 'm'], ['Ν', 'n'], ['Ο', 'o'],
  ['Ρ', 'p'], ['Τ', 't'], ['Υ', 'y'], ['Χ', 'x'], ['Ϝ', 'f'],
  // Armenian, Cherokee and others
  ['օ', 'o'], ['ս', 'u'], ['ց', 'g'], ['ո', 'n'], ['հ', 'h'], ['Ꭺ', 'a'], ['Ᏼ', 'b'], ['Ꮯ', 'c'], ['Ꭼ', 'e'], ['Ꮋ', 'h'], ['Ꭻ', 'j'],
  ['Ꮶ', 'k'], ['Ꮇ', 'm'], ['Ꮲ', 'p'], ['Ꮪ', 's'], ['Ꭲ', 't'], ['Ꮃ', 'w'], ['Ꮓ', 'z'],
  // Latin extensions, small capitals, IPA
  ['ı', 'i'], ['ȷ', 'j'], ['ɑ', 'a'], ['ɩ', 'i'], ['ɪ', 'i'], ['ʀ', 'r'], ['ɴ', 'n'], ['ᴀ', 'a'], ['ʙ', 'b'], ['ᴄ', 'c'], ['ᴅ', 'd'],
  ['ᴇ', 'e'], ['ɢ', 'g'], ['ʜ', 'h'], ['ᴊ', 'j'], ['ᴋ', 'k'], ['ʟ', 'l'], ['ᴍ', 'm'], ['ᴏ', 'o'], ['ᴘ', 'p'], ['ꜱ', 's'], ['ᴛ', 't'],
  ['ᴜ', 'u'], ['ᴠ', 'v'], ['ᴡ', 'w'], ['ʏ', 'y'], ['ᴢ', 'z'], ['ƅ', 'b'], ['ɓ', 'b'], ['ƈ', 'c'], ['ɗ', 'd'], ['ƒ', 'f'], ['ɦ', 'h'],
  ['ɭ', 'l'], ['ɱ', 'm'], ['ɲ', 'n'], ['ɵ', 'o'], ['ø', 'o'], ['Ø', 'o'], ['ƿ', 'p'], ['ʂ', 's'], ['ƭ', 't'], ['ʋ', 'v'], ['ɯ', 'w'],
  ['ƴ', 'y'], ['ʐ', 'z'], ['ß', 'ss'], ['æ', 'ae'], ['œ', 'oe'], ['đ', 'd'], ['ħ', 'h'], ['ł', 'l'], ['ŧ', 't'],
  // Punctuation and symbols
  ['‘', "'"], ['’', "'"], ['‛', "'"], ['′', "'"], ['ʼ', "'"], ['ʹ', "'"], ['ˈ', "'"], ['`', '`'], ['“', '"'], ['”', '"'], ['„', '"'],
  ['″', '"'], ['‐', '-'], ['‑', '-'], ['‒', '-'], ['–', '-'], ['—', '-'], ['―', '-'], ['−', '-'], ['⁃', '-'], ['∕', '/'], ['⁄', '/'],
  ['∖', '\\'], ['⧵', '\\'], ['⧸', '/'], ['‹', '<'], ['›', '>'], ['˂', '<'], ['˃', '>'], ['ᐸ', '<'], ['ᐳ', '>'], ['〈', '<'], ['〉', '>'],
  ['⟨', '<'], ['⟩', '>'], ['ǀ', '|'], ['∣', '|'], ['꞉', ':'], ['∶', ':'], ['ː', ':'], ['·', '.'], ['・', '.'], ['。', '.'], ['，', ','],
  ['、', ','], ['؛', ';'], ['；', ';'], ['＂', '"'], ['«', '"'], ['»', '"'], ['\u00a0', ' '],
];

const TABLE = new Map<number, string>();
for (const [from, to] of PAIRS) TABLE.set(from.codePointAt(0) ?? 0, to);

function mapRange(point: number): string | undefined {
  // Enclosed alphanumeric supplement: squared, negative circled/squared Latin capitals, regional indicators.
  if (point >= 0x1f130 && point <= 0x1f149) return String.fromCharCode(97 + point - 0x1f130);
  if (point >= 0x1f150 && point <= 0x1f169) return String.fromCharCode(97 + point - 0x1f150);
  if (point >= 0x1f170 && point <= 0x1f189) return String.fromCharCode(97 + point - 0x1f170);
  if (point >= 0x1f1e6 && point <= 0x1f1ff) return String.fromCharCode(97 + point - 0x1f1e6);
  return TABLE.get(point);
}

export interface FoldResult {
  readonly text: string;
  /** Characters replaced by their ASCII lookalike. */
  readonly folded: number;
  /** Words mixing Latin letters with letters of another script (a classic homoglyph tell). */
  readonly mixedScriptWords: number;
}

const NON_ASCII = /[^\x00-\x7f]/;
const WORD = /[\p{L}\p{N}]+/gu;
const LATIN = /[a-z]/i;
const OTHER_SCRIPT = /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}\p{Script=Cherokee}]/u;

export function foldConfusables(input: string): FoldResult {
  if (!NON_ASCII.test(input)) return { text: input, folded: 0, mixedScriptWords: 0 };
  let mixedScriptWords = 0;
  // A mixed-script word needs a letter of another script somewhere in the text.
  if (OTHER_SCRIPT.test(input)) {
    for (const match of input.matchAll(WORD)) {
      const word = match[0];
      if (word.length > 1 && LATIN.test(word) && OTHER_SCRIPT.test(word)) mixedScriptWords++;
    }
  }
  // By code point, copying the runs between replaced characters whole.
  let folded = 0;
  let out = '';
  let last = 0;
  for (let index = 0; index < input.length; index++) {
    const unit = input.charCodeAt(index);
    if (unit < 0x80) continue;
    const point = input.codePointAt(index)!;
    const width = point > 0xffff ? 2 : 1;
    const mapped = mapRange(point);
    if (mapped !== undefined) {
      out += input.slice(last, index) + mapped;
      last = index + width;
      folded++;
    }
    index += width - 1;
  }
  return { text: folded === 0 ? input : out + input.slice(last), folded, mixedScriptWords };
}

const COMBINING = /\p{M}+/gu;

/** NFKC, then NFKD with combining marks dropped ("ïgnörê" → "ignore"), for scanning only. */
export function unicodeFold(input: string): { text: string; changed: boolean } {
  if (!NON_ASCII.test(input)) return { text: input, changed: false };
  const text = input.normalize('NFKC').normalize('NFKD').replace(COMBINING, '');
  return { text, changed: text !== input };
}
