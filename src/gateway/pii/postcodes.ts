/**
 * Postcodes for the PII detector. A bare group of four or five digits is a year, a price or a
 * quantity far more often than a postcode, so only formats that cannot be mistaken are taken
 * anywhere, and the ambiguous ones need their place in an address or a cue:
 *   anywhere:   UK ("SW1A 1AA", outward and inward code with the space), Canada ("K1A 0B1");
 *   after a cue ("ZIP", "zip code", "postcode", "postal code", "PLZ", "CEP", "code postal",
 *               "PIN code"): any common shape — 3–5 digits, optionally + a 2–4-digit group
 *               ("90010-170", "394 13", "3610-114"), 4 digits + 2 letters (NL "7412 SL");
 *   after a US state code ("Springfield, IL 62704", "CA 94105-1234"): 5 digits (+4);
 *   after a place: a run of capitalised words (or one upper-case word) after "in", "at", "from",
 *               "near" or a comma, followed by the code and not by another digit ("in Aalborg 9100",
 *               "Lisboa, Quinta de São Tiago 3610-114"); 19xx/20xx alone is a year, not taken;
 *   last on a line of a postal address (a line before it carries a house number, "Apt." or
 *               "Suite"), alone or after a place and region code ("…⏎ SK⏎ 53650", "Aalborg NO 9100").
 * Every regular expression is linear (bounded repetitions, disjoint neighbours).
 */
export interface PostcodeDetector {
  readonly pattern: RegExp;
  /** The detector is skipped unless this occurs in the text. */
  readonly hint?: RegExp;
  readonly accept?: (match: RegExpExecArray, text: string) => { start: number; end: number } | null;
}

const US_STATES = new Set(
  'AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY PR GU VI AS MP'.split(' '),
);

/** The code's shapes after a cue or in an address (the group is the code). */
const SHAPE = String.raw`(\d{4} ?[A-Z]{2}(?![A-Za-z])|\d{3,5}(?:[ -]\d{2,4})?|\d{2}-\d{3})`;

const POSTCODE_CUE = /\b(?:zip(?:[ \t]{1,2}code)?|post(?:al)?[ \t]{0,2}code|plz|cep|code[ \t]{1,2}postal|c\.p\.|pin[ \t]{1,2}code)[ \t]{0,3}(?:is|was|:|#|-)?[ \t]{0,3}$/i;
/** A line of a postal address before the code: a house number with a word, or a unit. */
const ADDRESS_LINE = /(?:^|\n)[ \t]{0,8}(?:\d{1,6}[A-Za-z]?[ \t]{1,3}\p{L}|.{0,80}\b(?:apt|apartment|suite|unit|flat|ul|rue|via|calle|straße|strasse)\b)/iu;
const YEAR = /^(?:19|20)\d{2}$/;

/** A unit or box word: the number after it is a suite, flat or box number, not a postcode. */
const UNIT_BEFORE = /\b(?:apt|apartment|suite|ste|unit|flat|floor|fl|room|rm|box|bldg|building|number|#)\.?[ \t]{0,2}$|\b(?:no|nr)\.[ \t]{0,2}$/i;

function span(match: RegExpExecArray, value: string, text = ''): { start: number; end: number } | null {
  const start = match.index + match[0].lastIndexOf(value);
  if (text !== '' && UNIT_BEFORE.test(text.slice(Math.max(0, start - 12), start))) return null;
  return { start, end: start + value.length };
}

export const POSTCODE_DETECTORS: readonly PostcodeDetector[] = [
  // UK: outward code (A9, A99, A9A, AA9, AA99, AA9A) + space + inward code (9AA).
  { pattern: /\b(?:[A-PR-UWYZ][A-HK-Y]?\d[A-Z\d]?|GIR) \d[ABD-HJLNP-UW-Z]{2}\b/g },
  // Canada.
  { pattern: /\b[ABCEGHJ-NPRSTVXY]\d[ABCEGHJ-NPRSTV-Z] ?\d[ABCEGHJ-NPRSTV-Z]\d\b/g },
  {
    // After a cue.
    hint: /zip|post|plz|cep|c\.p\.|pin/i,
    pattern: new RegExp(String.raw`\b${SHAPE}\b`, 'g'),
    accept: (match, text) => (POSTCODE_CUE.test(text.slice(Math.max(0, match.index - 20), match.index)) ? span(match, match[1]!) : null),
  },
  {
    // After a US state code.
    pattern: /\b([A-Z]{2})[ \t]{1,2}(\d{5}(?:-\d{4})?)\b(?![-.]?\d)/g,
    accept: (match) => (US_STATES.has(match[1]!) ? span(match, match[2]!) : null),
  },
  {
    // After a place name introduced by a preposition or a comma.
    pattern: new RegExp(String.raw`(?:\b(?:in|at|from|near)|,)[ \t]{1,2}((?:\p{Lu}[\p{L}'’-]{1,30}[ \t](?:(?:de|da|do|dos|das|del|di|du|la|le|van|von|am|an|sur|upon|on)[ \t])?){1,4})(?:[A-Z][ \t])?${SHAPE}\b(?![-.,]?\d)`, 'gu'),
    accept: (match, text) => {
      const code = match[2]!;
      if (YEAR.test(code)) return null;
      return span(match, code, text);
    },
  },
  {
    // Last on a line of a postal address, alone or after a place name and region code.
    pattern: new RegExp(String.raw`(?:^|[ \t])${SHAPE}[ \t]{0,4}$`, 'gm'),
    accept: (match, text) => {
      const code = match[1]!;
      if (YEAR.test(code)) return null;
      const lineStart = text.lastIndexOf('\n', match.index - 1) + 1;
      const before = text.slice(Math.max(0, lineStart - 200), match.index);
      const sameLine = text.slice(lineStart, match.index);
      // The code alone on its line, or after a capitalised place and an optional region code.
      const alone = sameLine.trim() === '';
      const afterPlace = /\p{Lu}[\p{L}'’-]{1,30}(?:[ \t]{1,2}[A-Z]{2})?[ \t]{0,2}$/u.test(sameLine);
      if (!alone && !afterPlace) return null;
      return ADDRESS_LINE.test(before) ? span(match, code, text) : null;
    },
  },
];
