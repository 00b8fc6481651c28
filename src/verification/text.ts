/**
 * Text utilities of the grounding and constraint layers: sentence (claim) splitting with spans,
 * content-word stems, numbers and clock times. Every regular expression here is linear-time
 * (character classes with single quantifiers, no nesting, no backreferences).
 */

export interface Span {
  start: number;
  end: number;
  text: string;
}

const STOPWORDS = new Set(
  (
    'a an the and or but if then else of to in on at by for with from as into onto over under about above below between through during before after ' +
    'is are was were be been being am do does did done doing have has had having will would shall should can could may might must ' +
    'i me my mine we us our ours you your yours he him his she her hers it its they them their theirs this that these those there here ' +
    'what which who whom whose when where why how all any both each few more most other some such only own same so than too very ' +
    'just also again further once up down out off s t also well much many one per via etc eg ie however therefore thus while ' +
    'overall additionally furthermore moreover including include includes included like according based provides provide offers offer ' +
    'mentioned states stated says said article passage text information am pm'
  ).split(/\s+/),
);

export const NEGATIONS = new Set(['not', 'no', 'never', 'none', 'nor', 'neither', 'nobody', 'nothing', 'nowhere', 'without', 'cannot', "n't", 'lack', 'lacks']);

const NUMBER_WORDS: Record<string, number> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19,
  twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90, hundred: 100, thousand: 1000,
  million: 1_000_000, billion: 1_000_000_000, first: 1, second: 2, third: 3, fourth: 4, fifth: 5, half: 0.5, dozen: 12, twice: 2, once: 1,
};

/** Claims: sentences and list items with their spans (trailing whitespace excluded). */
export function splitClaims(text: string): Span[] {
  const spans: Span[] = [];
  // A boundary: sentence punctuation followed by whitespace, or a line break.
  // A period glued to the next sentence's capitalised word ("a side.Hold the steak") is a boundary too.
  // One punctuation mark, not a run: "?!" ends at its last mark, and a long run of dots stays linear.
  const boundary = /[.!?]["')\]]?\s+|\n+|[.!?](?=\p{Lu}\p{Ll})/gu;
  let start = 0;
  for (let match = boundary.exec(text); match !== null; match = boundary.exec(text)) {
    const end = match.index + match[0].trimEnd().length;
    // Do not split after common abbreviations or single initials ("Dr.", "U.S.", "J.").
    const before = text.slice(Math.max(start, match.index - 4), match.index + 1);
    if (match[0][0] === '.' && /(?:^|[\s.-])(?:[A-Z]|Dr|Mr|Ms|Mrs|St|Ste|Mt|Ft|vs|No|Jr|Sr|Inc|Co|Corp|Gen|Gov|Sen|Rep|Lt|Col|Sgt|Capt|Prof)\.$/.test(before)) continue;
    push(spans, text, start, end);
    start = match.index + match[0].length;
  }
  push(spans, text, start, text.length);
  return spans;
}

function push(spans: Span[], text: string, start: number, end: number): void {
  let from = start;
  while (from < end && /\s/.test(text[from]!)) from += 1;
  let to = end;
  while (to > from && /\s/.test(text[to - 1]!)) to -= 1;
  if (to - from < 2) return;
  spans.push({ start: from, end: to, text: text.slice(from, to) });
}

export interface Token {
  /** Lower-case stem. */
  stem: string;
  raw: string;
  start: number;
  end: number;
  /** Starts with a capital letter and is not the first word of its claim. */
  capitalized: boolean;
}

const WORD = /[\p{L}][\p{L}\p{M}'’]*/gu;

/** Content words (stopwords removed) with spans, stemmed. camelCase keys are split (Data2txt JSON). */
export function contentTokens(text: string, offset = 0): Token[] {
  const tokens: Token[] = [];
  let first = true;
  for (const match of text.matchAll(WORD)) {
    const raw = match[0];
    const index = match.index;
    const parts = raw.length > 3 && /[a-z][A-Z]/.test(raw) ? raw.split(/(?<=[a-z])(?=[A-Z])/) : [raw];
    let cursor = index;
    for (const part of parts) {
      const lower = part.toLowerCase().replace(/['’]s$/, '');
      const stem = stemOf(lower);
      // A word that opens a sentence, a list item or what follows a colon is capitalised by position, not as a name.
      // After a colon a word is capitalised as the start of what follows ("Step 2: Sauté …", "the answer is: Try …").
      // A title-case word just inside a parenthesis or quotation ("(Recommended)", "“Yes”") is capitalised as a label; an acronym there ("(FAA)") stays a name.
      const opens = first || (cursor === index && (/(?:^|[•*:]|\d[.)]|\s-)\s*$/u.test(text.slice(Math.max(0, index - 4), index)) || (/[("“]$/u.test(text.slice(Math.max(0, index - 1), index)) && /\p{Ll}/u.test(part))));
      const capitalized = !opens && /^\p{Lu}/u.test(part);
      first = false;
      if (!STOPWORDS.has(lower) && lower.length > 1 && !Object.hasOwn(NUMBER_WORDS, lower)) {
        tokens.push({ stem, raw: part, start: offset + cursor, end: offset + cursor + part.length, capitalized });
      }
      cursor += part.length;
    }
  }
  return tokens;
}

/** US state abbreviations ↔ names: addresses are written both ways. */
export const US_STATES: Readonly<Record<string, string>> = {
  AL: 'alabama', AK: 'alaska', AZ: 'arizona', AR: 'arkansas', CA: 'california', CO: 'colorado', CT: 'connecticut', DE: 'delaware',
  FL: 'florida', GA: 'georgia', HI: 'hawaii', ID: 'idaho', IL: 'illinois', IN: 'indiana', IA: 'iowa', KS: 'kansas', KY: 'kentucky',
  LA: 'louisiana', ME: 'maine', MD: 'maryland', MA: 'massachusetts', MI: 'michigan', MN: 'minnesota', MS: 'mississippi',
  MO: 'missouri', MT: 'montana', NE: 'nebraska', NV: 'nevada', NH: 'new hampshire', NJ: 'new jersey', NM: 'new mexico',
  NY: 'new york', NC: 'north carolina', ND: 'north dakota', OH: 'ohio', OK: 'oklahoma', OR: 'oregon', PA: 'pennsylvania',
  RI: 'rhode island', SC: 'south carolina', SD: 'south dakota', TN: 'tennessee', TX: 'texas', UT: 'utah', VT: 'vermont',
  VA: 'virginia', WA: 'washington', WV: 'west virginia', WI: 'wisconsin', WY: 'wyoming', DC: 'district columbia',
};

/** A light suffix stemmer: enough to match plural/tense variants on both sides. */
export function stemOf(word: string): string {
  let stem = word.replace(/’/g, "'");
  if (stem.length > 5 && stem.endsWith('ies')) return `${stem.slice(0, -3)}y`;
  for (const suffix of ['ingly', 'edly', 'ing', 'ed', 'es', 's', 'ly']) {
    if (stem.length - suffix.length >= 4 && stem.endsWith(suffix)) {
      stem = stem.slice(0, -suffix.length);
      break;
    }
  }
  if (stem.length > 4 && stem.endsWith('e')) stem = stem.slice(0, -1);
  return stem;
}

/** Every word (stopwords included) lower-cased: for negation and phrase checks. */
export function allWords(text: string): string[] {
  const words: string[] = [];
  for (const match of text.toLowerCase().matchAll(/[\p{L}]+(?:['’]t)?/gu)) {
    const word = match[0];
    if (word.endsWith("n't") || word.endsWith('n’t')) words.push(word.slice(0, -3), "n't");
    else words.push(word);
  }
  return words;
}

export interface NumberMention {
  value: number;
  start: number;
  end: number;
  raw: string;
}

const NUMERAL = /\d[\d,]*(?:\.\d+)?/g;
/**
 * Clock times: `5 PM`, `5:30 p.m.`, `5.30pm`, `17:00`, `17:0` (Data2txt hours), `noon`, `midnight`,
 * and the first end of a range that carries its meridiem only once (`5-9 pm`, `5 to 9 p.m.`,
 * `11:30am–2pm`): the meridiem of the second end applies to the first when the first has none.
 */
const CLOCK = /\b(\d{1,2})(?:[:.](\d{1,2}))?\s?([AaPp])\.?[Mm]\.?(?![\p{L}])|\b(\d{1,2}):(\d{1,2})\b|\b(noon|midday|midnight)\b/giu;
const RANGE_START = /\b(\d{1,2})(?::(\d{2}))?\s?(?:-|–|—|to|until|till)\s?$/iu;

/** Clock times in minutes after midnight ("5 PM", "17:00", "17:0") with spans. */
export function clockTimes(text: string): NumberMention[] {
  const times: NumberMention[] = [];
  for (const match of text.matchAll(CLOCK)) {
    let hours: number;
    let minutes: number;
    if (match[6] !== undefined) {
      const word = match[6].toLowerCase();
      times.push({ value: word === 'midnight' ? 0 : 720, start: match.index, end: match.index + match[0].length, raw: match[0] });
      continue;
    }
    if (match[3] !== undefined) {
      const pm = match[3].toLowerCase() === 'p';
      hours = (Number(match[1]) % 12) + (pm ? 12 : 0);
      minutes = Number(match[2] ?? 0);
      // "5-9 pm": the range's first end takes the meridiem (unless that would make it later than the second).
      const before = text.slice(Math.max(0, match.index - 12), match.index);
      const range = RANGE_START.exec(before);
      if (range !== null) {
        const startAt = match.index - before.length + range.index;
        if (!times.some((time) => time.start <= startAt && time.end > startAt)) {
          let first = (Number(range[1]) % 12) + (pm ? 12 : 0);
          if (first * 60 > hours * 60 + minutes) first -= 12;
          const raw = range[0].replace(/\s?(?:-|–|—|to|until|till)\s?$/iu, '');
          times.push({ value: ((first + 24) % 24) * 60 + Number(range[2] ?? 0), start: startAt, end: startAt + raw.length, raw });
        }
      }
    } else {
      hours = Number(match[4]);
      minutes = Number(match[5]);
    }
    times.push({ value: (hours % 24) * 60 + minutes, start: match.index, end: match.index + match[0].length, raw: match[0] });
  }
  return times.sort((a, b) => a.start - b.start);
}

/** Number words that combine ("twenty-five", "two hundred and ten") and ordinals ("fifth"). */
const ORDINAL_WORDS: Record<string, number> = {
  sixth: 6, seventh: 7, eighth: 8, ninth: 9, tenth: 10, eleventh: 11, twelfth: 12, twentieth: 20, thirtieth: 30, hundredth: 100,
};
const SCALES = new Set([100, 1000, 1_000_000, 1_000_000_000]);
const LONE_SCALES = new Set(['hundred', 'thousand', 'million', 'billion', 'dozen']);

function wordValue(word: string): number | undefined {
  // Own keys only: "constructor" is no number.
  if (Object.hasOwn(NUMBER_WORDS, word)) return NUMBER_WORDS[word];
  return Object.hasOwn(ORDINAL_WORDS, word) ? ORDINAL_WORDS[word] : undefined;
}

/** Numbers written with digits or as words, outside clock times. */
export function numberMentions(text: string, exclude: readonly NumberMention[] = []): NumberMention[] {
  const numbers: NumberMention[] = [];
  const inside = (position: number) => exclude.some((time) => position >= time.start && position < time.end);
  for (const match of text.matchAll(NUMERAL)) {
    if (inside(match.index)) continue;
    const raw = match[0].replace(/[,.]+$/, '');
    const value = Number(raw.replace(/,/g, ''));
    if (Number.isFinite(value)) numbers.push({ value, start: match.index, end: match.index + raw.length, raw });
  }
  // Runs of number words joined by spaces, hyphens or "and" make one number.
  let run: { total: number; current: number; start: number; end: number; words: number; lone: string } | null = null;
  const close = () => {
    if (run === null) return;
    const value = run.total + run.current;
    const lone = run.words === 1 ? run.lone : '';
    // "one", "once", "second" are seldom numbers; a scale word alone ("multi-billion", "hundreds of") is no specific number.
    if (lone !== 'one' && lone !== 'once' && lone !== 'second' && !LONE_SCALES.has(lone)) numbers.push({ value, start: run.start, end: run.end, raw: text.slice(run.start, run.end) });
    run = null;
  };
  for (const match of text.matchAll(/[\p{L}]+/gu)) {
    const word = match[0].toLowerCase();
    const value = wordValue(word);
    const gap = run === null ? '' : text.slice(run.end, match.index).toLowerCase();
    const joined = run !== null && (/^[\s-]$/.test(gap) || gap === ' and ');
    if (value === undefined) {
      if (!(joined && word === 'and')) close();
      continue;
    }
    if (run !== null && !joined) close();
    if (run === null) {
      run = { total: 0, current: value, start: match.index, end: match.index + word.length, words: 1, lone: word };
      continue;
    }
    if (SCALES.has(value)) {
      run.current = (run.current === 0 ? 1 : run.current) * value;
      if (value >= 1000) [run.total, run.current] = [run.total + run.current, 0];
    } else if (run.current % 10 === 0 && run.current % 100 !== 0 && value < 10) run.current += value;
    else if (run.current >= 100 && run.current % 100 === 0 && value < 100) run.current += value;
    else if (run.current === 0 && run.total > 0) run.current = value;
    else {
      close();
      run = { total: 0, current: value, start: match.index, end: match.index + word.length, words: 1, lone: word };
      continue;
    }
    run.end = match.index + word.length;
    run.words += 1;
  }
  close();
  return numbers;
}

/** Decimal places written in a numeral ("3.50" → 2). */
function decimalsOf(raw: string): number {
  const dot = raw.indexOf('.');
  return dot < 0 ? 0 : raw.length - dot - 1;
}

/**
 * A number is supported when the sources hold it, or when it is the source's value rounded to the
 * precision the claim is written with (3.5 for 3.45, 2,000 for 1,987, not 2019 for 2020),
 * or the same quantity in another form (0.25 ↔ 25 %, 1.5 (million) ↔ 1,500,000).
 */
export function numberSupported(value: number, known: ReadonlySet<number>, knownList: readonly number[], raw = String(value)): boolean {
  if (known.has(value)) return true;
  const digits = raw.replace(/,/g, '');
  const decimals = decimalsOf(digits);
  const zeros = decimals === 0 ? (/0+$/.exec(digits)?.[0].length ?? 0) : 0;
  // Tolerance: half a unit of the last written digit (round tens only from hundreds on: "20" is not "17").
  const tolerance = decimals > 0 ? 0.5 * 10 ** -decimals : zeros >= 2 ? 0.5 * 10 ** zeros : 0;
  for (const candidate of knownList) {
    if (candidate === 0) continue;
    if (tolerance > 0 && Math.abs(candidate - value) <= tolerance + 1e-9) return true;
    // Percent/fraction forms: 0.25 ↔ 25 (%).
    if (Math.abs(value * 100 - candidate) < 1e-9 || Math.abs(candidate * 100 - value) < 1e-9) return true;
    // Scaled units: 1.5 (million) ↔ 1,500,000; 1.5 ↔ 1,530,000 at the written precision.
    for (const scale of [1_000, 1_000_000, 1_000_000_000]) {
      if (candidate < scale) continue;
      if (Math.abs(value * scale - candidate) <= Math.max(tolerance, decimals === 0 ? 0.5 : 0) * scale + 1e-9) return true;
    }
  }
  return false;
}
