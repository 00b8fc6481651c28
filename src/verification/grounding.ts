/**
 * Grounding layer: does the response say only what the sources support?
 *
 * Tier 1 (always, when sources are given; pure, ~1 ms): sources and response are normalised
 * (clock times in 24-hour and am/pm forms and ranges, noon/midnight, spelled and compound
 * numbers, roundings at the written precision, ISO dates and month names, state codes, JSON
 * key–value records) and the response is split into claims (sentences, list items; framing such
 * as "Here is a summary:" and list markers are not claims). Each claim is aligned to the source
 * sentences sharing most of its content words and gets findings: numbers and clock times the
 * sources do not hold, a number that contradicts the sentence it restates (same unit, other
 * value), a negation that disagrees with every sentence it restates (scoped: the denied words
 * must be the shared ones; "avoid X" = "do not X"), a boolean or null key–value attribute stated
 * the other way round, a cited passage that does not hold the claim, unknown names, and content
 * words with no support. The response's score is the probability of an unsupported claim from a
 * logistic calibration per task kind (grounding-calibration.ts: data-to-text when a source is
 * JSON, QA when there is a question, summary otherwise); a contradicted or unsupported number or
 * time and a disagreeing negation are decisive (the response scores at least that claim's score).
 * Tier 2 (a local model) and tier 3 (the configured LLM judge, for claims in the
 * uncertain band only, with a timeout that fails open) are optional hooks run by verify.ts; by
 * default only tier 1 runs — no model is loaded and nothing leaves the process.
 *
 * Fails open: grounding is advisory evidence; an internal error yields verdict `error` and does
 * not turn `passed` false.
 */
import { calibratedScore, type GroundingTask } from './grounding-calibration.ts';
import { clockTimes, contentTokens, stemOf, US_STATES, allWords, NEGATIONS, numberMentions, numberSupported, splitClaims, type NumberMention, type Span, type Token } from './text.ts';
import type { Finding, LayerResult, SourceInput, VerifyInput } from './types.ts';

export interface GroundingPolicy {
  /** Claim score at or above which a claim is flagged (0–1). */
  threshold: number;
}

export const DEFAULT_GROUNDING: GroundingPolicy = { threshold: 0.5 };

interface SourceSentence {
  stems: Set<string>;
  /** Content stems inside the scope of a negation ("do not allow the soil to dry" → allow, soil, dry). */
  negatedStems: Set<string>;
  /** Numbers of the sentence with the word that follows each (its unit: "percent", "people"). */
  quantities: Quantity[];
  /** 1-based position of the source the sentence comes from (0: the question). */
  passage: number;
}

interface Quantity {
  value: number;
  unit: string;
}

/** A boolean or null leaf of key–value (JSON) source data: `"OutdoorSeating": false`. */
interface Leaf {
  /** Stems of the leaf's key words, a phrase the claim must hold in order ("outdoor seat", "take out" / "takeout"). */
  phrase: string[];
  /** Stems one of which the claim must also hold when the key belongs to a group (Ambience.casual → atmosphere …). */
  context: string[] | null;
  value: boolean | null;
}

export interface SourceIndex {
  stems: Set<string>;
  numbers: Set<number>;
  numberList: number[];
  times: Set<number>;
  sentences: SourceSentence[];
  /** Stems → sentence indexes (alignment without scanning every sentence). */
  postings: Map<string, number[]>;
  leaves: Leaf[];
  /** Number of sources (passages) given. */
  passages: number;
  /** A source is key–value data (JSON). */
  structured: boolean;
  /** Adjacent content-stem pairs of the source sentences ("stem stem"). */
  pairs: Set<string>;
  /** Opening hours of key–value data by weekday (0 = Monday): [opens, closes] in minutes after midnight. */
  hours: Map<number, [number, number]>;
  /** Each number's bounds as the sources write them: "over 270" → up, "under 270" → down, "270" → exact. */
  bounds: Map<number, Set<Bound>>;
}

type Bound = 'up' | 'down' | 'exact';

/** "more than", "over", "at least" … before a number: a lower bound; "under", "fewer than", "nearly", "up to" … an upper one. */
const UPPER_BOUND_BEFORE = /\b(?:no more than|not more than|less than|fewer than|under|below|at most|up to|nearly|almost|just shy of)\s$/iu;
const LOWER_BOUND_BEFORE = /\b(?:more than|over|above|at least|in excess of|upwards of|exceeding|greater than)\s$/iu;

function boundOf(text: string, start: number): Bound {
  const before = text.slice(Math.max(0, start - 20), start);
  if (UPPER_BOUND_BEFORE.test(before)) return 'down';
  if (LOWER_BOUND_BEFORE.test(before)) return 'up';
  return 'exact';
}

export function sourceText(source: SourceInput): string {
  if (typeof source === 'string') return source;
  return [source.title, source.content].filter((part): part is string => typeof part === 'string').join('\n');
}

const META_STEMS = ['passag', 'passage', 'given', 'provid', 'provided', 'answer', 'question', 'unabl', 'unable', 'inform', 'information', 'mention', 'specific', 'explicit', 'explicitly', 'directly', 'summar', 'summary', 'summariz', 'note', 'hope', 'help', 'base', 'sure', 'pleas', 'document', 'sourc', 'context', 'detail', 'follow', 'following', 'overview', 'brief', 'briefly'].map(stemOf);
const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const ISO_DATE = /\b(\d{4})-(\d{1,2})-(\d{1,2})\b/g;
/** Leading key words that name the record, not the attribute ("RestaurantsTakeOut" names "take out"). */
const GENERIC_KEY_PREFIX = new Set(['restaurant', 'business', 'has', 'is']);
/** Group keys, with the words a claim uses for them ("Ambience" → "atmosphere"). Other groups: their own words. */
const GROUP_WORDS: Readonly<Record<string, string[]>> = {
  ambienc: ['ambienc', 'ambianc', 'atmospher', 'vibe', 'setting', 'feel', 'decor', 'environment', 'mood'],
  parking: ['park', 'parking'],
};
const GROUP_GENERIC = new Set(['attribut', 'attribute', 'info', 'detail', 'data', 'business', 'restaurant']);

/** Stems of a key's words: camelCase, snake_case and kebab-case split ("OutdoorSeating" → outdoor, seat). */
function keyWords(key: string): string[] {
  return key
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '')
    .map(stemOf);
}

function contextOf(parent: string): string[] | null {
  const words = keyWords(parent).filter((word) => !GROUP_GENERIC.has(word));
  if (words.length === 0) return null;
  const known = words.flatMap((word) => GROUP_WORDS[word] ?? []);
  return known.length > 0 ? known : words;
}

/** Indexes sources (and the question: what it asks is not a fabrication). */
export function indexSources(sources: readonly SourceInput[], question: string | null = null): SourceIndex {
  const index: SourceIndex = { stems: new Set(), numbers: new Set(), numberList: [], times: new Set(), sentences: [], postings: new Map(), leaves: [], passages: sources.length, structured: false, pairs: new Set(), hours: new Map(), bounds: new Map() };
  const texts = sources.map(sourceText);
  if (question) texts.push(question);
  for (const [position, text] of texts.entries()) {
    const passage = position < sources.length ? position + 1 : 0;
    const times = clockTimes(text);
    for (const time of times) index.times.add(time.value);
    const numbers = numberMentions(text, times);
    for (const number of numbers) {
      index.numbers.add(number.value);
      const bounds = index.bounds.get(number.value) ?? new Set<Bound>();
      bounds.add(boundOf(text, number.start));
      index.bounds.set(number.value, bounds);
    }
    // Time parts count as numbers too ("open 9 to 5" against "9:0-17:0").
    for (const time of times) {
      index.numbers.add(Math.floor(time.value / 60));
      index.numbers.add(Math.floor(time.value / 60) % 12 || 12);
    }
    // ISO dates are also written with the month's name ("2022-01-09" → January 9, 2022).
    for (const match of text.matchAll(ISO_DATE)) {
      const month = MONTHS[Number(match[2]) - 1];
      if (month !== undefined) index.stems.add(stemOf(month));
    }
    // State abbreviations stand for their names ("CA" → california) and back.
    for (const match of text.matchAll(/\b[A-Z]{2}\b/g)) {
      const name = US_STATES[match[0]];
      if (name !== undefined) for (const word of name.split(' ')) index.stems.add(stemOf(word));
    }
    const lower = text.toLowerCase();
    for (const [code, name] of Object.entries(US_STATES)) if (lower.includes(name)) index.stems.add(code.toLowerCase());
    if (passage > 0 && collectLeaves(text, index.leaves, index.hours)) index.structured = true;
    for (const sentence of splitClaims(text)) {
      const tokens = contentTokens(sentence.text);
      for (let position = 1; position < tokens.length; position += 1) index.pairs.add(`${tokens[position - 1]!.stem} ${tokens[position]!.stem}`);
      const stems = new Set(tokens.map((token) => token.stem));
      const id = index.sentences.length;
      const quantities = numbers.filter((number) => number.start >= sentence.start && number.end <= sentence.end).map((number) => ({ value: number.value, unit: unitAfter(text, number.end) }));
      index.sentences.push({ stems, negatedStems: negatedStems(sentence.text), quantities, passage });
      for (const stem of stems) {
        index.stems.add(stem);
        const list = index.postings.get(stem);
        if (list === undefined) index.postings.set(stem, [id]);
        else if (list[list.length - 1] !== id) list.push(id);
      }
    }
  }
  // A record's weekly hours say how many days a week it opens ("seven days a week").
  if (index.hours.size > 0) index.numbers.add(index.hours.size);
  // Words an answer uses about itself and its passages ("based on the given passages") are not content.
  for (const stem of META_STEMS) index.stems.add(stem);
  index.numberList = [...index.numbers];
  return index;
}

/** Boolean and null leaves of a source that is JSON (Data2txt-style records); nothing otherwise. */
function collectLeaves(text: string, leaves: Leaf[], hours: Map<number, [number, number]>): boolean {
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return false;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return false;
  }
  const visit = (value: unknown, key: string, depth: number, parent: string): void => {
    if (depth > 6 || leaves.length > 500) return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item, key, depth + 1, parent);
      return;
    }
    if (value !== null && typeof value === 'object') {
      for (const [child, inner] of Object.entries(value)) visit(inner, child, depth + 1, key);
      return;
    }
    const day = WEEKDAYS.indexOf(key.toLowerCase());
    if (day >= 0 && typeof value === 'string') {
      const range = /^\s*(\d{1,2}):(\d{1,2})\s*-\s*(\d{1,2}):(\d{1,2})\s*$/.exec(value);
      if (range !== null) hours.set(day, [(Number(range[1]) % 24) * 60 + Number(range[2]), (Number(range[3]) % 24) * 60 + Number(range[4])]);
      return;
    }
    const truth = leafTruth(value);
    if (truth === undefined || key === '') return;
    const phrase = keyWords(key);
    while (phrase.length > 1 && GENERIC_KEY_PREFIX.has(phrase[0]!)) phrase.shift();
    if (phrase.length === 0 || phrase.length > 3 || (phrase.length === 1 && phrase[0]!.length < 3)) return;
    leaves.push({ phrase, context: contextOf(parent), value: truth });
  };
  visit(data, '', 0, '');
  return data !== null && typeof data === 'object';
}

/** true / false / null of a leaf value (strings such as "False", "u'no'", "None" too); undefined for other values. */
function leafTruth(value: unknown): boolean | null | undefined {
  if (value === null) return null;
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  const word = value.replace(/^u?['"]|['"]$/g, '').trim().toLowerCase();
  if (word === 'true' || word === 'yes') return true;
  if (word === 'false' || word === 'no') return false;
  if (word === 'none' || word === 'null') return null;
  return undefined;
}

/** Unit spellings that name the same unit. */
const UNIT_ALIASES: Readonly<Record<string, string>> = {
  min: 'minut', mins: 'minut', minute: 'minut', hr: 'hour', hrs: 'hour', sec: 'second', secs: 'second', yr: 'year', yrs: 'year',
  percentag: '%', pct: '%', km: 'kilometr', kilometer: 'kilometr', kg: 'kilogram', lb: 'pound', lbs: 'pound', mi: 'mil', tsp: 'teaspoon', tbsp: 'tablespoon',
  dollar: '$', usd: '$',
};
/** Words that may sit between a number and its unit ("three more minutes", "10 additional days"). */
const UNIT_FILLERS = new Set(['more', 'additional', 'extra', 'further', 'full', 'whole', 'other', 'total', 'consecutive', 'straight', 'hundred', 'thousand', 'million', 'billion', 'trillion']);

function unitAfter(text: string, end: number): string {
  const after = /^\s?(%|[\p{L}]+)(?:\s([\p{L}]+))?/u.exec(text.slice(end, end + 40));
  if (after === null) return '';
  let word = after[1]!.toLowerCase();
  if (UNIT_FILLERS.has(word) && after[2] !== undefined) word = after[2].toLowerCase();
  if (word === '%' || word === 'percent' || word === 'per') return '%';
  const stem = stemOf(word);
  return UNIT_ALIASES[word] ?? UNIT_ALIASES[stem] ?? stem;
}

/** Words that deny what follows them without a "not": "avoid allowing" = "do not allow". */
const IMPLICIT_NEGATIONS = new Set(['avoid', 'avoids', 'avoided', 'avoiding', 'avoidance', 'prevent', 'prevents', 'prevented', 'preventing', 'refuse', 'refuses', 'refused', 'unaware', 'unable', 'fail', 'fails', 'failed', 'absent', 'lacking', 'lacked']);
/** A negation word followed by one of these is an idiom that asserts ("not only", "last but not least"). */
const NOT_NEGATING_NEXT = new Set(['only', 'just', 'least', 'to', 'merely', 'simply']);
const NEGATION_SCOPE = 5;
const COMPARATIVES = new Set(['more', 'less', 'fewer', 'later', 'earlier', 'longer', 'greater', 'higher', 'lower']);

/**
 * Content stems inside the scope of a negation: up to five words after "not" / "no" / "n't" /
 * "never" / an implicit negation ("avoid", "refused", "unaware"), stopping at punctuation or
 * "but". Idioms that assert ("not only", "with or without", "whether or not") and bounds on a
 * quantity ("no more than", "not later than") open no scope.
 */
export function negatedStems(text: string): Set<string> {
  const stems = new Set<string>();
  const words: string[] = [];
  for (const match of text.toLowerCase().matchAll(/[\p{L}]+(?:['’]t)?|[,;:.!?()]/gu)) {
    const word = match[0];
    if (word.endsWith("n't") || word.endsWith('n’t')) words.push(word.slice(0, -3), "n't");
    else words.push(word);
  }
  for (let position = 0; position < words.length; position += 1) {
    const word = words[position]!;
    if (!NEGATIONS.has(word) && !IMPLICIT_NEGATIONS.has(word)) continue;
    const next = words[position + 1];
    if (next !== undefined && NOT_NEGATING_NEXT.has(next) && word === 'not') continue;
    // "no more than 60 days", "not less than", "no later than": a bound on a quantity, not a denial.
    if ((word === 'no' || word === 'not') && next !== undefined && COMPARATIVES.has(next) && words[position + 2] === 'than') continue;
    if (word === 'or' || (word === 'not' && words[position - 1] === 'or') || (word === 'without' && words[position - 1] === 'or')) continue;
    for (let offset = 1; offset <= NEGATION_SCOPE; offset += 1) {
      const inner = words[position + offset];
      if (inner === undefined || /^[,;:.!?()]$/.test(inner) || inner === 'but') break;
      for (const token of contentTokens(inner)) stems.add(token.stem);
    }
  }
  return stems;
}

/**
 * The claim and the source sentence disagree on negation: one denies part of the content they
 * share and the other denies none of it ("is open to cars" against "is not open to cars"). A
 * negation elsewhere in the sentence ("we do not know X, but Y") does not count against a claim
 * about Y, and the same denial in other words ("avoid allowing" / "don't allow") agrees.
 */
function negationDisagrees(claimStems: ReadonlySet<string>, claimNegated: ReadonlySet<string>, sentence: SourceSentence): boolean {
  let claimDenies = 0;
  let sourceDenies = 0;
  for (const stem of claimStems) {
    if (!sentence.stems.has(stem)) continue;
    if (claimNegated.has(stem)) claimDenies += 1;
    if (sentence.negatedStems.has(stem)) sourceDenies += 1;
  }
  // One side denies (at least two words of) the shared content and the other denies none of it; a shared negation, however worded, agrees.
  return (claimDenies === 0 && sourceDenies >= 2) || (sourceDenies === 0 && claimDenies >= 2);
}

export interface ClaimAssessment extends Span {
  score: number;
  /** Unsupported share of the claim's content words. */
  unsupportedShare: number;
  /** Share of the claim's distinct content stems held by the one source sentence that holds most (1 when the claim has none). */
  alignment: number;
  /** Share of the claim's adjacent content-stem pairs that appear adjacent in no source sentence. */
  novelPairs: number;
  findings: Finding[];
}

const P_NUMBER = 0.65;
const P_TIME = 0.6;
const P_NAME = 0.4;
const P_NEGATION = 0.5;
const P_CONTRADICTION = 0.6;
const P_UNKNOWN_VALUE = 0.45;
const P_CITATION = 0.5;

const REFERENCE_BEFORE = /(?:passages?|sources?|documents?|steps?|items?|options?|parts?|sections?|chapters?|no\.|numbers?|#)\s?(?:\d{1,3}\s?(?:,|and|or|&|-|to)\s?){0,4}$/iu;

const ANSWER_COUNT_BEFORE = /(?:summari[sz]ed in(?:to)?|broken down into|divided into|here (?:are|is)(?: the)?|the following)\s$/iu;
const ANSWER_PARTS_AFTER = /^\s(?:simple |easy |main |key |basic )?(?:steps|points|tips|ways|methods|parts|stages|options|things|ideas)\b/iu;

function isMarker(text: string, number: NumberMention): boolean {
  const before = text.slice(Math.max(0, number.start - 32), number.start);
  if (REFERENCE_BEFORE.test(before)) return true;
  // Part of a name written with a hyphen ("COVID-19", "B-52").
  if (/\p{Lu}-$/u.test(before)) return true;
  if (text[number.start - 1] === '[' && text[number.end] === ']') return true;
  // The answer counting its own parts ("can be summarized in 10 steps", "here are 5 tips").
  if (ANSWER_COUNT_BEFORE.test(before) && ANSWER_PARTS_AFTER.test(text.slice(number.end, number.end + 16))) return true;
  // At the start of the claim (after a bullet), followed by "." / ")" / ":".
  return /^[\s*•-]*$/u.test(text.slice(0, number.start)) && /^[.):]/.test(text.slice(number.end, number.end + 1)) && number.raw.length <= 2;
}

/** Clause boundaries inside a claim: a negation does not reach past them. */
const CLAUSE = /[;:]|,?\s(?:but|however|while|whereas|although|though|except|yet)\s|,\s(?=(?:they|it|we|there|he|she)\s)|\s(?:and|but)\s(?=(?:it|its|it's|it’s|they|their|the)\s)/giu;
const AFTER_NEGATION = /^(?:\s+\S+){0,2}?\s+(?:not|unavailable|never|n't)\b|^(?:\s+\S+){0,1}?\s*n['’]t\b/iu;
/** "garage, street, and valet parking are not": the clause ends by denying its list. */
const CLAUSE_ENDS_DENIED = /\s(?:are|is|were|was)\s(?:not|n't)(?:\s(?:available|offered|provided|an option))?\W*$/iu;
const FRAMING = /^(?:(?:sure|certainly|okay|ok)\b[,!.]?\s*)?(?:here(?:'s|’s| is| are)|below is|the following is)\b[^:]{0,120}\b(?:summary|answer|overview|response|description|version)\b[^:]{0,60}:?$/iu;
const CLOSING = /^(?:[*-]\s*)?(?:i hope (?:this|that) helps|hope (?:this|that) helps|let me know|feel free|if you have any (?:other |more |further )?questions|(?:i am|i'm|i’m) (?:unable|not able|sorry)|unable to answer|sorry\b|i cannot|i can't|i can’t|(?:and,? )?(?:of course,? )?(?:don't|don’t|do not) forget to (?:have fun|enjoy)|enjoy(?:!| your| the | it\b)|happy \p{L}+ing\b)/iu;
const ABSTENTION = /^[^.]{0,80}\b(?:passages?|sources?|documents?|context|information provided|text)\b[^.]{0,40}\b(?:do(?:es)? not|don't|doesn't|don’t|doesn’t)\s(?:\w+\s)?(?:provide|contain|mention|include|specify|say|give|state|offer|address|discuss)\b/iu;
/** "None of the passages provide …", "There is no mention of … in the passages": talk about the passages too. */
const ABSTENTION_NONE = /^[^.]{0,60}\bnone of the (?:given |provided |above |retrieved )?(?:passages|sources|documents)\b[^.]{0,40}\b(?:provides?|contains?|mentions?|includes?|specif(?:y|ies)|says?|gives?|states?|offers?|address(?:es)?|discuss(?:es)?)\b|^[^.]{0,80}\b(?:unable|not able|cannot|can't|can’t) (?:to )?(?:answer|determine|tell|say)\b[^.]{0,40}\b(?:based on|from|in) (?:the )?(?:given |provided |above )?(?:passages|sources|documents|context)\b|^[^.]{0,40}\bthere (?:is|was|are) no (?:mention|information|indication|reference|details?)\b[^.]{0,80}\b(?:in|from) the (?:given |provided |above |retrieved )?(?:passages?|sources?|documents?|context|text)\b/iu;
const CITATION = /\b(?:passage|source|document)\s+(\d{1,2})\b|\[(\d{1,2})\]/giu;

/** Scores every claim of the content against the index (pure). */
export function assessClaims(content: string, index: SourceIndex): ClaimAssessment[] {
  const claims: ClaimAssessment[] = [];
  for (const claim of splitClaims(content)) {
    // "Here is a summary of the article in 60 words:" speaks about the answer, not the sources.
    if (claim.text.length <= 160 && FRAMING.test(claim.text)) continue;
    // Closing lines and abstentions ("I hope this helps", "The passages do not mention …") claim nothing about the world.
    if (claim.text.length <= 240 && (CLOSING.test(claim.text) || ABSTENTION.test(claim.text) || ABSTENTION_NONE.test(claim.text))) continue;
    // A bare list marker ("1.", "2)") claims nothing.
    if (!/\p{L}/u.test(claim.text)) continue;
    const findings: Finding[] = [];
    let keep = 1;
    const tokens = contentTokens(claim.text, claim.start);
    const unsupported: Token[] = tokens.filter((token) => !index.stems.has(token.stem));
    const times = clockTimes(claim.text);
    for (const time of times) {
      if (!index.times.has(time.value)) {
        findings.push({ start: claim.start + time.start, end: claim.start + time.end, reason: 'time_not_in_sources', detail: time.raw });
        keep *= 1 - P_TIME;
      }
    }
    // List markers and references ("1. Add …", "Step 3:", "Passage 2", "[4]") number the answer, not the world.
    const numbers = numberMentions(claim.text, times).filter((number) => !isMarker(claim.text, number));
    const aligned = alignAll(tokens, index);
    for (const number of numbers) {
      if (!numberSupported(number.value, index.numbers, index.numberList, number.raw)) {
        findings.push({ start: claim.start + number.start, end: claim.start + number.end, reason: 'number_not_in_sources', detail: number.raw });
        keep *= 1 - P_NUMBER;
      } else if (contradictsAligned(number, unitAfter(claim.text, number.end), aligned, index, numbers, claim.text) || boundContradicts(number, claim.text, index)) {
        // The number is somewhere in the sources, but the sentence this claim restates gives another for the same thing.
        findings.push({ start: claim.start + number.start, end: claim.start + number.end, reason: 'number_contradicts_source', detail: number.raw });
        keep *= 1 - P_CONTRADICTION;
      }
    }
    for (const token of unsupported) {
      if (token.capitalized) {
        findings.push({ start: token.start, end: token.end, reason: 'name_not_in_sources', detail: token.raw });
        keep *= 1 - P_NAME;
      }
    }
    // Negation: the source sentences this claim restates all say the opposite (one that agrees is enough).
    if (tokens.length >= 3 && aligned.length > 0 && aligned[0]!.overlap >= 0.8) {
      const claimStems = new Set(tokens.map((token) => token.stem));
      const claimNegated = negatedStems(claim.text);
      const close = aligned.filter((item) => item.overlap >= 0.8);
      if (close.every((item) => negationDisagrees(claimStems, claimNegated, item.sentence))) {
        findings.push({ start: claim.start, end: claim.end, reason: 'negation_disagrees_with_source' });
        keep *= 1 - P_NEGATION;
      }
    }
    // Key–value data: a claim naming a false (or null) attribute as present, or a true one as absent.
    for (const finding of leafFindings(claim, tokens, index.leaves)) {
      findings.push(finding);
      keep *= 1 - (finding.reason === 'value_contradicts_source' ? P_CONTRADICTION : P_UNKNOWN_VALUE);
    }
    const hours = hoursFinding(claim, times, index.hours);
    if (hours !== null) {
      findings.push(hours);
      keep *= 1 - P_CONTRADICTION;
    }
    const citation = citationMismatch(claim, tokens, index);
    if (citation !== null) {
      findings.push(citation);
      keep *= 1 - P_CITATION;
    }
    const share = tokens.length === 0 ? 0 : unsupported.length / tokens.length;
    // Content words with no support: weight grows with the share and the count.
    const words = Math.min(1, share * 1.1) * Math.min(1, unsupported.length / 3);
    if (words >= 0.25) {
      const first = unsupported[0]!;
      const last = unsupported[unsupported.length - 1]!;
      findings.push({ start: first.start, end: last.end, reason: 'content_not_in_sources', detail: unsupported.slice(0, 6).map((token) => token.raw).join(' ') });
    }
    keep *= 1 - words * 0.8;
    claims.push({ ...claim, score: round(1 - keep), unsupportedShare: share, alignment: aligned[0]?.overlap ?? (tokens.length === 0 ? 1 : 0), novelPairs: novelPairShare(tokens, index), findings });
  }
  return claims;
}

function novelPairShare(tokens: readonly Token[], index: SourceIndex): number {
  if (tokens.length < 2) return 0;
  let novel = 0;
  for (let position = 1; position < tokens.length; position += 1) if (!index.pairs.has(`${tokens[position - 1]!.stem} ${tokens[position]!.stem}`)) novel += 1;
  return novel / (tokens.length - 1);
}

interface Alignment {
  sentence: SourceSentence;
  /** Share of the claim's distinct stems the sentence holds. */
  overlap: number;
  shared: number;
}

/** Source sentences sharing content stems with the claim, best first (at most 8). */
function alignAll(tokens: readonly Token[], index: SourceIndex): Alignment[] {
  const stems = new Set(tokens.map((item) => item.stem));
  if (stems.size === 0) return [];
  const counts = new Map<number, number>();
  for (const stem of stems) for (const id of index.postings.get(stem) ?? []) counts.set(id, (counts.get(id) ?? 0) + 1);
  const ranked = [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 8);
  return ranked.map(([id, count]) => ({ sentence: index.sentences[id]!, overlap: count / stems.size, shared: count }));
}

/**
 * A number contradicts the source when the best-aligned sentence that states a number of the
 * same unit ("12 percent", "300 people") states other numbers only.
 */
function contradictsAligned(number: NumberMention, unit: string, aligned: readonly Alignment[], index: SourceIndex, claimNumbers: readonly NumberMention[], claimText: string): boolean {
  if (unit === '' || !Number.isFinite(number.value)) return false;
  const top = aligned[0]?.overlap ?? 0;
  for (const item of aligned) {
    // Only the sentences the claim restates (as well aligned as the best one) speak for the same quantity.
    if (item.overlap < 0.5 || item.shared < 3 || item.overlap < top - 0.1) break;
    const same = item.sentence.quantities.filter((quantity) => quantity.unit === unit);
    if (same.length === 0) continue;
    const values = same.map((quantity) => quantity.value);
    // The claim restates the sentence's number too: this one is about something else ("1,500 hours … only 600 hours").
    if (claimNumbers.some((other) => other !== number && unitAfter(claimText, other.end) === unit && values.includes(other.value))) return false;
    return !numberSupported(number.value, new Set(values), values, number.raw) && index.numbers.has(number.value);
  }
  return false;
}

/**
 * "over 270" where the sources write this number only as "under 270" (or "fewer than", "nearly"
 * …), or the other way round: the bound is reversed. A bare number on either side ("270", "about
 * 270") and the same bound in other words ("more than" / "over") agree.
 */
function boundContradicts(number: NumberMention, claimText: string, index: SourceIndex): boolean {
  const bound = boundOf(claimText, number.start);
  if (bound === 'exact') return false;
  const known = index.bounds.get(number.value);
  if (known === undefined) return false;
  return !known.has(bound) && !known.has('exact');
}

function leafFindings(claim: Span, tokens: readonly Token[], leaves: readonly Leaf[]): Finding[] {
  if (leaves.length === 0 || tokens.length === 0) return [];
  const findings: Finding[] = [];
  const words = [...claim.text.matchAll(/[\p{L}\p{N}]+/gu)].map((match) => ({ stem: stemOf(match[0].toLowerCase()), start: match.index, end: match.index + match[0].length }));
  const stems = new Set(words.map((word) => word.stem));
  const reported = new Set<number>();
  for (const leaf of leaves) {
    if (leaf.context !== null && !leaf.context.some((stem) => stems.has(stem))) continue;
    const at = phraseAt(words, leaf.phrase);
    if (at === null || reported.has(at.start)) continue;
    const token: Token = { stem: leaf.phrase.join(' '), raw: claim.text.slice(at.start, at.end), start: claim.start + at.start, end: claim.start + at.end, capitalized: false };
    const negated = negatedAt(claim, token);
    let reason: string | null = null;
    if (leaf.value === null) reason = 'value_not_in_sources';
    else if (leaf.value === negated) reason = 'value_contradicts_source';
    if (reason === null) continue;
    reported.add(at.start);
    findings.push({ start: token.start, end: token.end, reason, detail: token.raw });
  }
  return findings;
}

/** Where the claim's words hold the phrase in order ("take out"), or as one word ("takeout"). */
function phraseAt(words: ReadonlyArray<{ stem: string; start: number; end: number }>, phrase: readonly string[]): { start: number; end: number } | null {
  const joined = phrase.join('');
  for (let position = 0; position < words.length; position += 1) {
    if (phrase.length > 1 && words[position]!.stem === joined) return words[position]!;
    let matched = 0;
    while (matched < phrase.length && words[position + matched]?.stem === phrase[matched]) matched += 1;
    if (matched === phrase.length) return { start: words[position]!.start, end: words[position + matched - 1]!.end };
  }
  return null;
}

/** Whether the clause around the token denies it ("does not offer outdoor seating", "valet is not available"). */
function negatedAt(claim: Span, token: Token): boolean {
  const at = token.start - claim.start;
  let from = 0;
  let to = claim.text.length;
  for (const match of claim.text.matchAll(CLAUSE)) {
    if (match.index + match[0].length <= at) from = match.index + match[0].length;
    else if (match.index >= at + token.raw.length) {
      to = match.index;
      break;
    }
  }
  const before = allWords(claim.text.slice(from, at));
  if (before.some((word, position) => NEGATIONS.has(word) || (word === 'than' && before[position - 1] === 'rather'))) return true;
  const rest = claim.text.slice(at + token.raw.length, to);
  return AFTER_NEGATION.test(rest) || CLAUSE_ENDS_DENIED.test(rest);
}

const DAY = '(mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?s?';
/** Weekday groups: "Monday to Friday", "Mon-Fri", "Tuesday through Thursday", "Sundays", "weekdays", "weekends", "daily". */
const DAY_GROUP = new RegExp(`\\b${DAY}(?:\\s?(?:-|–|to|through|thru)\\s?${DAY})?\\b|\\b(weekdays|weekends?|daily|every day|seven days a week)\\b`, 'giu');

function dayIndex(word: string): number {
  return ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].indexOf(word.slice(0, 3).toLowerCase());
}

/** The weekdays a group names. */
function daysOf(match: RegExpMatchArray): number[] {
  const word = match[3]?.toLowerCase();
  if (word !== undefined) {
    if (word === 'weekdays') return [0, 1, 2, 3, 4];
    if (word.startsWith('weekend')) return [5, 6];
    return [0, 1, 2, 3, 4, 5, 6];
  }
  const first = dayIndex(match[1]!);
  if (match[2] === undefined) return [first];
  const last = dayIndex(match[2]);
  const days: number[] = [];
  for (let day = first; days.length < 7; day = (day + 1) % 7) {
    days.push(day);
    if (day === last) break;
  }
  return days;
}

/** Segments of a claim that each state one thing ("…, with extended hours until 9 pm on Fridays"). */
const HOURS_SEGMENT = /,\s*(?:and|with|while|but|except)\b|;|\s(?:while|with|except|but)\s/giu;
const OPEN_WORDS = /\b(?:open|opens|operates?|operating|serves?|serving)\b/iu;
const CLOSED_WORDS = /\b(?:closed?|closes|not open)\b/iu;
/** The hours of a part of the business (happy hour, brunch, the kitchen) are not its opening hours. */
const SUB_SERVICE = /\b(?:happy hour|brunch|breakfast|lunch|dinner|kitchen|delivery|bar)\b/iu;

/**
 * Opening hours stated for weekdays the record gives other hours for: a group of days ("Tuesday
 * to Saturday", "weekends") and a range of two clock times in the same segment of the claim,
 * where a day of the group has another range in the record and is not named again as an
 * exception ("11 am to 8 pm daily, until 9 pm on Fridays" agrees); or "open" on a day the
 * record gives no hours for.
 */
function hoursFinding(claim: Span, times: readonly NumberMention[], hours: ReadonlyMap<number, [number, number]>): Finding | null {
  if (hours.size === 0 || SUB_SERVICE.test(claim.text)) return null;
  const cuts = [0, ...[...claim.text.matchAll(HOURS_SEGMENT)].map((match) => match.index), claim.text.length];
  const segmentOf = (position: number) => cuts.findIndex((cut, index) => position >= cut && position < (cuts[index + 1] ?? Number.POSITIVE_INFINITY));
  // Day groups of one segment together ("Saturdays and Sundays", "Monday, Tuesday and Friday").
  const groups = new Map<number, { days: Set<number>; start: number; end: number }>();
  for (const match of claim.text.matchAll(DAY_GROUP)) {
    const segment = segmentOf(match.index);
    const group = groups.get(segment) ?? { days: new Set<number>(), start: match.index, end: match.index + match[0].length };
    for (const day of daysOf(match)) group.days.add(day);
    group.end = match.index + match[0].length;
    groups.set(segment, group);
  }
  for (const [segment, group] of groups) {
    const text = claim.text.slice(cuts[segment] ?? 0, cuts[segment + 1] ?? claim.text.length);
    // Open on a day the record gives no hours for (it is closed then).
    if (OPEN_WORDS.test(text) && !CLOSED_WORDS.test(text)) {
      const missing = [...group.days].find((day) => !hours.has(day));
      if (missing !== undefined) return { start: claim.start + group.start, end: claim.start + group.end, reason: 'hours_contradict_source', detail: claim.text.slice(group.start, group.end) };
    }
    const inside = times.filter((time) => segmentOf(time.start) === segment);
    if (inside.length !== 2) continue;
    const [open, close] = [inside[0]!.value % 1440, inside[1]!.value % 1440];
    // Every day of the group has the range, or is named again in another segment (its exception: "until 9 pm on Fridays").
    const elsewhere = new Set<number>();
    for (const [other, item] of groups) if (other !== segment) for (const day of item.days) elsewhere.add(day);
    const wrong = [...group.days].find((day) => {
      const known = hours.get(day);
      const same = known !== undefined && known[0] % 1440 === open && known[1] % 1440 === close;
      return !same && !elsewhere.has(day);
    });
    if (wrong !== undefined) return { start: claim.start + group.start, end: claim.start + group.end, reason: 'hours_contradict_source', detail: claim.text.slice(group.start, group.end) };
  }
  return null;
}

/** "Passage 2 says …" where the claim matches another passage far better than passage 2. */
function citationMismatch(claim: Span, tokens: readonly Token[], index: SourceIndex): Finding | null {
  if (index.passages < 2) return null;
  const cited = [...claim.text.matchAll(CITATION)];
  if (cited.length !== 1) return null;
  const number = Number(cited[0]![1] ?? cited[0]![2]);
  if (number < 1 || number > index.passages) return null;
  const words = tokens.filter((token) => token.stem !== 'passag' && token.stem !== 'sourc' && token.stem !== 'document');
  if (words.length < 4) return null;
  let own = 0;
  let other = 0;
  for (const item of alignAll(words, index)) {
    if (item.sentence.passage === number) own = Math.max(own, item.overlap);
    else if (item.sentence.passage > 0) other = Math.max(other, item.overlap);
  }
  if (other < 0.6 || own >= other * 0.5) return null;
  const match = cited[0]!;
  return { start: claim.start + match.index, end: claim.start + match.index + match[0].length, reason: 'citation_not_matching_source', detail: match[0] };
}

/** The kind of grounding task, from the input's shape: key–value sources, a question, or neither. */
export function taskOf(index: SourceIndex, question: string | null | undefined): GroundingTask {
  if (index.structured) return 'data2txt';
  return question !== null && question !== undefined && question.trim() !== '' ? 'qa' : 'summary';
}

/** The grounding layer over its input (tier 1 only; verify.ts adds the optional tiers). */
export function groundingLayer(input: VerifyInput, policy: GroundingPolicy): LayerResult {
  if (input.sources === undefined || input.sources.length === 0) return { verdict: 'skipped', score: 0, findings: [], ms: 0, fails: 'open' };
  const index = indexSources(input.sources, input.question ?? null);
  const claims = assessClaims(input.content, index);
  const task = taskOf(index, input.question);
  return groundingResult(claims, responseShare(input.content, index), policy.threshold, { tiers: ['lexical'], claims: claims.length, task }, task);
}

/** Share of the response's content words with no support anywhere in the sources. */
export function responseShare(content: string, index: SourceIndex): number {
  const tokens = contentTokens(content);
  if (tokens.length === 0) return 0;
  let missing = 0;
  for (const token of tokens) if (!index.stems.has(token.stem)) missing += 1;
  return missing / tokens.length;
}

const DECISIVE = new Set(['hours_contradict_source', 'number_contradicts_source', 'number_not_in_sources', 'time_not_in_sources', 'negation_disagrees_with_source']);
const CONTRADICTIONS = new Set(['hours_contradict_source', 'number_contradicts_source', 'value_contradicts_source', 'negation_disagrees_with_source', 'citation_not_matching_source']);

/**
 * The response's features for the per-task calibration (grounding-calibration.ts, FEATURE_NAMES):
 * worst claim, unsupported share, counts of each kind of finding, mean claim score, share of
 * claims at 0.5 or more, and the number of claims.
 */
export function groundingFeatures(claims: readonly ClaimAssessment[], share: number): number[] {
  const count = (test: (reason: string) => boolean) => {
    let total = 0;
    for (const claim of claims) for (const finding of claim.findings) if (test(finding.reason)) total += 1;
    return Math.log1p(total);
  };
  let worst = 0;
  let sum = 0;
  let high = 0;
  let weakest = 1;
  let novel = 0;
  let worstNovel = 0;
  for (const claim of claims) {
    worst = Math.max(worst, claim.score);
    sum += claim.score;
    if (claim.score >= 0.5) high += 1;
    weakest = Math.min(weakest, claim.alignment);
    novel += claim.novelPairs;
    worstNovel = Math.max(worstNovel, claim.novelPairs);
  }
  const n = Math.max(1, claims.length);
  return [
    worst,
    share,
    count((reason) => reason === 'number_not_in_sources'),
    count((reason) => reason === 'time_not_in_sources'),
    count((reason) => reason === 'name_not_in_sources'),
    count((reason) => CONTRADICTIONS.has(reason)),
    count((reason) => reason === 'value_not_in_sources'),
    count((reason) => reason === 'content_not_in_sources'),
    sum / n,
    high / n,
    Math.log1p(claims.length) / 3,
    1 - weakest,
    novel / n,
    worstNovel,
  ];
}

/**
 * The task's calibrated probability that the response holds an unsupported claim; a number that
 * contradicts the very sentence its claim restates is decisive (the response scores at least that
 * claim's score).
 */
export function calibratedResponseScore(task: GroundingTask, claims: readonly ClaimAssessment[], share: number, weights?: readonly number[]): number {
  let score = calibratedScore(task, groundingFeatures(claims, share), weights);
  for (const claim of claims) if (claim.findings.some((finding) => DECISIVE.has(finding.reason))) score = Math.max(score, claim.score);
  return score;
}

/**
 * The layer result. With a task (tier 1 alone decided), the score is the task's calibrated
 * probability that the response holds an unsupported claim; without one (a model or the judge
 * rescored claims), score = 1 − (1 − worst claim) × (1 − unsupported share of the response).
 * A passing response carries no findings; a failing one those of `groundingFindings`.
 */
export function groundingResult(claims: readonly ClaimAssessment[], share: number, threshold: number, info: Record<string, unknown>, task?: GroundingTask): LayerResult {
  let worst = 0;
  for (const claim of claims) worst = Math.max(worst, claim.score);
  const score = task === undefined ? round(1 - (1 - worst) * (1 - share)) : round(calibratedResponseScore(task, claims, share));
  if (score < threshold) return { verdict: 'pass', score, findings: [], ms: 0, fails: 'open', info };
  return { verdict: 'fail', score, findings: groundingFindings(claims, threshold), ms: 0, fails: 'open', info };
}

/**
 * The findings of a failed response: those of the claims at or above the threshold; when no
 * single claim crosses it (the response as a whole is unsupported), those of the worst claim.
 */
export function groundingFindings(claims: readonly ClaimAssessment[], threshold: number): Finding[] {
  const findings: Finding[] = [];
  for (const claim of claims) {
    if (claim.score >= threshold) findings.push(...(claim.findings.length > 0 ? claim.findings : [{ start: claim.start, end: claim.end, reason: 'claim_not_supported' }]));
  }
  if (findings.length === 0) {
    const top = claims.reduce<ClaimAssessment | null>((best, claim) => (best === null || claim.score > best.score ? claim : best), null);
    if (top !== null) findings.push(...(top.findings.length > 0 ? top.findings : [{ start: top.start, end: top.end, reason: 'response_mostly_unsupported' }]));
  }
  return findings;
}

/** The lexical-overlap baseline the benchmark compares with: share of response words absent from the sources. */
export function lexicalOverlapScore(content: string, sources: readonly SourceInput[]): number {
  const known = new Set<string>();
  for (const source of sources) for (const word of sourceText(source).toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) known.add(word);
  const words = content.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  if (words.length === 0) return 0;
  let missing = 0;
  for (const word of words) if (!known.has(word)) missing += 1;
  return missing / words.length;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
