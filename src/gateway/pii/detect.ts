/**
 * PII detection: finds e-mail addresses, phone numbers, payment cards, IBANs, US SSNs, IP
 * addresses, secrets and (where cues make it safe) person names in untrusted text.
 *
 * Security posture: every regular expression here runs on attacker-controlled input, so each one
 * is linear-time (no nested or ambiguous quantifiers; every repetition is bounded or separated by
 * a character class the next token cannot match — a test runs them through the recheck ReDoS
 * analyser) and the input is cut at MAX_SCAN_CHARS per text. Precision is favoured over recall
 * where a false positive would corrupt a prompt: payment cards must pass Luhn, IBANs must pass
 * ISO 13616 mod-97, IPv6 candidates must parse, and person names come from cues (honorifics,
 * "my name is", salutations) and from names.ts (name lexicons, common words, places and context).
 * Detection is a pure function of its input (the lexicons are read once, at first use).
 */
import { isIPv4, isIPv6 } from 'node:net';
import { detectNames, namePatterns } from './names.ts';
import { IDENTIFIER_DETECTORS, luhnValid, SSN_CUE, type IdentifierDetector, type IdentifierType } from './identifiers.ts';
import { POSTCODE_DETECTORS } from './postcodes.ts';
import { REGISTRATION_DETECTORS } from './registrations.ts';

export type PiiType = 'EMAIL' | 'PHONE' | 'CARD' | 'IBAN' | 'SSN' | 'IP' | 'SECRET' | 'PERSON' | 'URL' | 'POSTCODE' | IdentifierType;

export const PII_TYPES: readonly PiiType[] = [
  'EMAIL', 'PHONE', 'CARD', 'IBAN', 'SSN', 'IP', 'SECRET', 'PERSON',
  'NATIONAL_ID', 'PASSPORT', 'DRIVER_LICENSE', 'DOB', 'MAC', 'CREDENTIAL_URL', 'CRYPTO_WALLET', 'MRN',
  'URL', 'POSTCODE', 'VEHICLE_ID', 'ORG_ID',
];

export interface PiiSpan {
  type: PiiType;
  /** UTF-16 offsets into the scanned text, end exclusive. */
  start: number;
  end: number;
  value: string;
}

/** Texts longer than this are scanned only up to this many characters (bounded work per message). */
export const MAX_SCAN_CHARS = 262_144;

/** Cheap facts about a text that let detectors which cannot match be skipped. */
interface TextFacts {
  digit: boolean;
  at: boolean;
  colons: boolean;
  /** One of the secret formats' fixed prefixes occurs (SECRET_HINT). */
  secret: boolean;
}

interface Detector {
  type: PiiType;
  pattern: RegExp;
  /** The detector cannot match unless this holds (skips the scan on most prose). */
  needs?: (facts: TextFacts) => boolean;
  /** The detector cannot match unless this occurs in the text (its cue words: one scan, not one per candidate). */
  hint?: RegExp;
  /** Returns the accepted span inside the match (or null to reject it). */
  accept?: (match: RegExpExecArray, text: string) => { start: number; end: number } | null;
}

// Order matters: earlier detectors win overlaps (a card number is not also a phone number).
const SECRET_PATTERNS: readonly RegExp[] = [
  /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,200}/g, // OpenAI / Anthropic style
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, // AWS access key id
  /\bgh[pousr]_[A-Za-z0-9]{36,255}\b/g, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{22,255}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,250}/g, // Slack tokens
  /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,4096}\.eyJ[A-Za-z0-9_-]{5,8192}\.[A-Za-z0-9_-]{10,1024}/g, // JWT
  /\bAIza[0-9A-Za-z_-]{35}\b/g, // Google API key
  /\b(?:sk|rk|pk)_live_[A-Za-z0-9]{16,247}\b/g, // Stripe
  /\bsvc_org_(?:live|test|rstr)_[a-z0-9]{8}_[A-Za-z0-9]{16,128}\b/g, // svc's own keys
];

/** The fixed prefix of every SECRET_PATTERNS entry: one scan decides whether any of them can match. */
const SECRET_HINT = /sk-|AKIA|ASIA|gh[pousr]_|github_pat_|xox[abprs]-|eyJ|AIza|[srp]k_live_|svc_org_/;

function identifiers(select: (detector: IdentifierDetector) => boolean): Detector[] {
  return [...REGISTRATION_DETECTORS, ...IDENTIFIER_DETECTORS].filter(select).map((detector): Detector => ({
    type: detector.type,
    pattern: detector.pattern,
    ...(detector.needsDigit ? { needs: (facts: TextFacts) => facts.digit } : {}),
    ...(detector.hint === undefined ? {} : { hint: detector.hint }),
    ...(detector.accept === undefined ? {} : { accept: detector.accept }),
  }));
}

// Specificity: URLs with credentials and wallets before e-mail; national and context-gated
// identifiers before cards, SSNs and phones (a phone number is never reported inside an IBAN or
// a national ID); MAC addresses before IP addresses.
const DETECTORS: readonly Detector[] = [
  ...SECRET_PATTERNS.map((pattern): Detector => ({ type: 'SECRET', pattern, needs: (facts) => facts.secret })),
  ...identifiers((detector) => detector.type === 'CREDENTIAL_URL' || detector.type === 'CRYPTO_WALLET'),
  {
    type: 'EMAIL',
    needs: (facts) => facts.at,
    // Internationalised addresses too (letters of any script in the local part and the domain).
    pattern: /(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}._%+-]{1,64}@[\p{L}\p{N}-]{1,63}(?:\.[\p{L}\p{N}-]{1,63}){1,8}/gu,
    accept: (match) => {
      const value = match[0];
      const at = value.indexOf('@');
      // Trim leading dots of the local part and require a letter TLD.
      let start = match.index;
      while (value[start - match.index] === '.' && start - match.index < at) start += 1;
      const tld = value.slice(value.lastIndexOf('.') + 1);
      if (!/^(?:\p{L}{2,24}|xn--[a-z0-9-]{2,59})$/iu.test(tld)) return null;
      return { start, end: match.index + value.length };
    },
  },
  {
    type: 'EMAIL',
    // Obfuscated with bracketed words or signs: "name [at] example [dot] com", "name(at)example.com".
    hint: /[[({<] ?(?:at|AT|@) ?[\])}>]/,
    pattern: /(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}._%+-]{1,64} ?[[({<] ?(?:at|AT|@) ?[\])}>] ?[\p{L}\p{N}-]{1,63}(?:(?: ?[[({<] ?(?:dot|DOT|\.) ?[\])}>] ?|\.)[\p{L}\p{N}-]{1,63}){1,4}/gu,
    accept: (match) => (/^\p{L}{2,24}$/u.test(lastLabel(match[0])) ? { start: match.index, end: match.index + match[0].length } : null),
  },
  {
    type: 'EMAIL',
    // Spelled out: "jane.doe at example dot com" (a known top-level domain, not "look at this dot product").
    hint: / (?:dot|DOT) [\p{L}\p{N}]/u,
    pattern: /(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}._%+-]{1,64} (?:at|AT) [\p{L}\p{N}-]{1,63}(?: (?:dot|DOT) [\p{L}\p{N}-]{1,63}){1,3}\b/gu,
    accept: (match) => {
      const words = match[0].split(' ');
      const domain = (words[2] ?? '').toLowerCase();
      if (SPELLED_NOT_DOMAIN.has(domain) || SPELLED_NOT_DOMAIN.has((words[0] ?? '').toLowerCase())) return null;
      const tld = lastLabel(match[0]).toLowerCase();
      const labels = (words.length - 3) / 2; // labels after the domain
      if (!SPELLED_TLDS.has(tld) && !(tld.length === 2 && labels >= 2)) return null;
      return { start: match.index, end: match.index + match[0].length };
    },
  },
  {
    type: 'URL',
    // A web address with its scheme or "www." (the path and query too: they can carry names and tokens).
    pattern: /(?<![\p{L}\p{N}@/.+-])(?:(?:https?|ftps?|wss?):\/\/|www\.)[^\s<>"'`\\{}|^]{2,2048}/giu,
    accept: (match) => {
      let end = match.index + match[0].length;
      const value = match[0];
      // Trailing sentence punctuation and an unbalanced closing bracket are not part of the address.
      let cut = value.length;
      for (;;) {
        const last = value[cut - 1] ?? '';
        if ('.,;:!?*'.includes(last)) cut -= 1;
        else if (last === ')' && count(value.slice(0, cut), '(') < count(value.slice(0, cut), ')')) cut -= 1;
        else if (last === ']' && count(value.slice(0, cut), '[') < count(value.slice(0, cut), ']')) cut -= 1;
        else break;
        if (cut === 0) return null;
      }
      end = match.index + cut;
      if (!/[\p{L}\p{N}]\.[\p{L}\p{N}]|:\/\/\[|:\/\/localhost/u.test(value.slice(0, cut))) return null; // a host with a dot
      return { start: match.index, end };
    },
  },
  {
    type: 'IBAN',
    needs: (facts) => facts.digit,
    pattern: /\b[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{4}){2,7}(?: ?[A-Za-z0-9]{1,3})?\b/g,
    accept: (match) => (ibanValid(match[0]) ? { start: match.index, end: match.index + match[0].length } : null),
  },
  ...identifiers((detector) => ['ORG_ID', 'VEHICLE_ID', 'NATIONAL_ID', 'PASSPORT', 'DRIVER_LICENSE', 'MRN', 'DOB'].includes(detector.type)),
  {
    type: 'CARD',
    needs: (facts) => facts.digit,
    pattern: /\b\d(?:[ -]?\d){11,18}\b/g,
    accept: (match) => {
      const digits = match[0].replace(/[ -]/g, '');
      if (digits.length < 12 || digits.length > 19 || !luhnValid(digits)) return null;
      if (digits.length === 12 && !/^(?:5[0678]|6)/.test(digits)) return null; // 12 digits: Maestro only
      return { start: match.index, end: match.index + match[0].length };
    },
  },
  {
    type: 'SSN',
    needs: (facts) => facts.digit,
    pattern: /\b\d{3}-\d{2}-\d{4}\b/g,
    accept: (match) => {
      const [area, group, serial] = match[0].split('-') as [string, string, string];
      if (area === '000' || area === '666' || area.startsWith('9') || group === '00' || serial === '0000') return null;
      return { start: match.index, end: match.index + match[0].length };
    },
  },
  {
    type: 'SSN',
    needs: (facts) => facts.digit,
    // Spaced ("123 45 6789", a grouping nothing else uses), or dotted or nine bare digits after an SSN cue.
    pattern: /\b\d{3}([ .]?)\d{2}\1\d{4}\b/g,
    accept: (match, text) => {
      const digits = match[0].replace(/ /g, '');
      const area = digits.slice(0, 3);
      if (area === '000' || area === '666' || area.startsWith('9') || digits.slice(3, 5) === '00' || digits.endsWith('0000')) return null;
      const lead = text.slice(Math.max(0, match.index - 40), match.index);
      if (!SSN_CUE.test(lead) && (match[1] !== ' ' || ADDRESS_UNIT.test(lead))) return null; // "Suite 680 36 4022": a unit and a house number
      return { start: match.index, end: match.index + match[0].length };
    },
  },
  ...identifiers((detector) => detector.type === 'MAC'),
  {
    type: 'IP',
    needs: (facts) => facts.digit,
    pattern: /\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b/g,
    accept: (match, text) => {
      if (!isIPv4(match[0])) return null;
      // "1.2.3.4.5" is a version string, not an address.
      const after = text.charCodeAt(match.index + match[0].length);
      const afterNext = text.charCodeAt(match.index + match[0].length + 1);
      if (after === 46 && afterNext >= 48 && afterNext <= 57) return null;
      return { start: match.index, end: match.index + match[0].length };
    },
  },
  {
    type: 'IP',
    needs: (facts) => facts.colons,
    pattern: /[0-9A-Fa-f:]{2,39}(?:%[0-9A-Za-z]{1,15})?/g,
    accept: (match) => {
      const value = match[0];
      let colons = 0;
      for (const character of value) if (character === ':') colons += 1;
      if (colons < 2 || !isIPv6(value.split('%')[0] ?? '')) return null;
      if (!/[0-9A-Fa-f]/.test(value)) return null; // "::" alone
      return { start: match.index, end: match.index + value.length };
    },
  },
  ...POSTCODE_DETECTORS.map((detector): Detector => ({
    type: 'POSTCODE',
    pattern: detector.pattern,
    needs: (facts) => facts.digit,
    ...(detector.hint === undefined ? {} : { hint: detector.hint }),
    ...(detector.accept === undefined ? {} : { accept: detector.accept }),
  })),
  {
    type: 'PHONE',
    needs: (facts) => facts.digit,
    pattern: /(?:\+\(?|\(|\b)\d[\d ().-]{5,22}\d(?: ?(?:x|ext\.?) ?\d{1,6})?\b/g,
    accept: (match, text) => phoneSpan(match, text),
  },
  {
    type: 'PERSON',
    // Honorific or cue, then one to three capitalised words.
    pattern:
      /\b(?:(?:Mr|Mrs|Ms|Mx|Miss|Dr|Prof|Sir|Madam|Dame|Lord|Lady)\.?|[Mm]y name is|[Nn]ame:|[Nn]amed|[Cc]alled|[Dd]ear|[Rr]egards,|[Ss]incerely,|[Tt]hanks,|[Ss]igned,?)[ \t]{1,4}(\p{Lu}[\p{Ll}'’-]{1,24}(?:[ \t]\p{Lu}\.?(?=[ \t]))?(?:[ \t]{1,2}\p{Lu}[\p{Ll}'’-]{1,24}){0,2})/gu,
    accept: (match) => {
      const name = match[1];
      if (name === undefined) return null;
      const firstWord = name.split(/[ \t]/)[0] ?? '';
      if (NOT_NAMES.has(firstWord.toLowerCase())) return null;
      // An honorific is part of the name's span ("Mr. Anselm Vukić"); other cues are not.
      const start = /^(?:Mr|Mrs|Ms|Mx|Miss|Dr|Prof|Sir|Madam|Dame|Lord|Lady)\b/.test(match[0]) ? match.index : match.index + match[0].length - name.length;
      return { start, end: match.index + match[0].length };
    },
  },
];

/** Capitalised words that follow our cues without being names ("Dear Sir", "called Monday"). */
const NOT_NAMES = new Set([
  'sir', 'madam', 'customer', 'team', 'all', 'everyone', 'friends', 'colleagues', 'support', 'user', 'client',
  'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday', 'today', 'tomorrow', 'yesterday',
  'the', 'a', 'an', 'this', 'that', 'it', 'i', 'you', 'he', 'she', 'we', 'they', 'my', 'our', 'your', 'hiring', 'manager',
  'mr', 'mrs', 'ms', 'mx', 'dr', 'prof', // "Dear Mr. Holmes": the name after the title is found with it
]);

/** Words that end a spelled-out "x at y dot z" as ordinary English, not an address. */
const SPELLED_NOT_DOMAIN = new Set(['the', 'a', 'an', 'this', 'that', 'these', 'those', 'my', 'your', 'our', 'his', 'her', 'their', 'its', 'home', 'work', 'least', 'most', 'all', 'first', 'last', 'once', 'night', 'noon', 'look', 'looking', 'arrive', 'arrived', 'stay', 'stayed', 'meet', 'met', 'be', 'is', 'was']);
/** Top-level domains a spelled-out address may end with on its own ("… dot com"). */
const SPELLED_TLDS = new Set(['com', 'org', 'net', 'edu', 'gov', 'mil', 'int', 'io', 'info', 'biz', 'ai', 'app', 'dev', 'me', 'us', 'uk', 'de', 'fr', 'ca', 'au', 'nl', 'es', 'it', 'ch', 'se', 'jp', 'cn', 'ru', 'br', 'mx', 'co']);

function lastLabel(value: string): string {
  return /[\p{L}\p{N}-]{1,63}$/u.exec(value)?.[0] ?? '';
}

function count(value: string, character: string): number {
  let total = 0;
  for (const each of value) if (each === character) total += 1;
  return total;
}

/** Detects PII in `text`; spans are sorted and never overlap. */
export function detectPii(input: string, types: ReadonlySet<PiiType> | null = null): PiiSpan[] {
  const text = input.length > MAX_SCAN_CHARS ? input.slice(0, MAX_SCAN_CHARS) : input;
  const taken: PiiSpan[] = [];
  const colon = text.indexOf(':');
  const facts: TextFacts = { digit: /\d/.test(text), at: text.includes('@'), colons: colon >= 0 && text.indexOf(':', colon + 1) >= 0, secret: SECRET_HINT.test(text) };

  for (const detector of DETECTORS) {
    if (types !== null && !types.has(detector.type)) continue;
    if (detector.needs !== undefined && !detector.needs(facts)) continue;
    if (detector.hint !== undefined && !detector.hint.test(text)) continue;
    const pattern = detector.pattern;
    pattern.lastIndex = 0;
    let match: RegExpExecArray | null;
    while ((match = pattern.exec(text)) !== null) {
      if (match[0].length === 0) {
        pattern.lastIndex += 1;
        continue;
      }
      const accepted = detector.accept === undefined ? { start: match.index, end: match.index + match[0].length } : detector.accept(match, text);
      if (accepted === null || overlaps(taken, accepted.start, accepted.end)) continue;
      taken.push({ type: detector.type, start: accepted.start, end: accepted.end, value: text.slice(accepted.start, accepted.end) });
    }
  }
  for (const span of detectPrivateKeys(text)) if (!overlaps(taken, span.start, span.end)) taken.push(span);
  if (types === null || types.has('PERSON')) {
    // Names come sorted and can be many (a pasted list): one sweep over the spans taken so far,
    // sorted by start (they never overlap, so their ends are sorted too), not a scan per name.
    const names = detectNames(text);
    if (names.length > 0) {
      taken.sort(byStart);
      const held = taken.length;
      let next = 0;
      for (const span of names) {
        while (next < held && taken[next]!.end <= span.start) next += 1;
        if (next < held && taken[next]!.start < span.end) continue;
        taken.push({ type: 'PERSON', start: span.start, end: span.end, value: text.slice(span.start, span.end) });
      }
    }
  }
  return taken.sort(byStart);
}

// Module functions rather than per-call closures: under tsx (esbuild keepNames) each named
// closure created per call costs an Object.defineProperty, and detectPii runs on every message.
function overlaps(taken: readonly PiiSpan[], start: number, end: number): boolean {
  for (const span of taken) if (start < span.end && span.start < end) return true;
  return false;
}

function byStart(left: PiiSpan, right: PiiSpan): number {
  return left.start - right.start;
}

/** PEM private-key blocks, found with indexOf (no regex over a multi-kilobyte body). */
function detectPrivateKeys(text: string): PiiSpan[] {
  const spans: PiiSpan[] = [];
  let from = 0;
  for (;;) {
    const begin = text.indexOf('-----BEGIN ', from);
    if (begin === -1) break;
    const headerEnd = text.indexOf('-----', begin + 11);
    if (headerEnd === -1 || headerEnd - begin > 60) break;
    const label = text.slice(begin + 11, headerEnd);
    if (!label.endsWith('PRIVATE KEY')) {
      from = headerEnd + 5;
      continue;
    }
    const footer = `-----END ${label}-----`;
    const end = text.indexOf(footer, headerEnd);
    const stop = end === -1 ? text.length : end + footer.length; // unterminated: redact to the end
    spans.push({ type: 'SECRET', start: begin, end: stop, value: text.slice(begin, stop) });
    from = stop;
  }
  return spans;
}

/** A field label or word that names an identifier (the number after it is no phone number). */
const IDENTIFIER_LABEL =
  /(?:^|[^a-z])(?:id|ids|uid|uuid|sku|isbn|issn|doi|order|invoice|account|acct|abn|acn|ein|vat|gst|gstin|tax|serial|model|part|ref|reference|tracking|ticket|case|policy|routing|item|product|transaction|txn|confirmation|booking|reservation|receipt|member|membership|employee|student|claim|batch|lot|version|build|release|items|license|licence|passport|permit|registration|contract|shipment|parcel|container|barcode|ean|upc|gtin|imei|iccid|imsi|asin)(?:[ _-]{0,2}(?:no|nr|num|number|id|ids|code|key))?\.?(?:[ \t]{1,2}(?:is|was))?[*_`"']{0,2}[ \t]{0,2}[:=#]?[*_`"']{0,2}[ \t]{0,2}[[{(]?[ \t]{0,2}[`"']?$/i;
/**
 * Whether the number at [start, end) is the value of an identifier's field: after an identifier
 * label, an element of a list under such a label ("item_ids": ["2872451762", "9534205511"]), or a
 * key of a JSON object ({"9534205511": {…}}); a label that says phone keeps it a phone number.
 */
function identifierField(text: string, start: number, end: number): boolean {
  if (/^["']?[ \t]{0,2}:/.test(text.slice(end, end + 4)) && /["']$/.test(text.slice(start - 1, start))) return true;
  let label = text.slice(Math.max(0, start - 32), start);
  const lead = text.slice(Math.max(0, start - 240), start);
  const open = lead.lastIndexOf('[');
  if (open >= 0 && /^[\s"'\d,.()+-]*$/.test(lead.slice(open + 1))) label = lead.slice(Math.max(0, open - 32), open + 1);
  return IDENTIFIER_LABEL.test(label) && !PHONE_LABEL.test(label);
}

/** A label that says the number is a phone number after all ("contact_phone_id", "Phone ID"). */
const PHONE_LABEL = /(?:phone|tel|mobile|cell|fax|whatsapp)[\w -]{0,16}[*_`"']{0,2}[ \t]{0,2}[:=#]?[*_`"']{0,2}[ \t]{0,2}[[{(]?[ \t]{0,2}[`"']?$/i;
const PHONE_CUE = /(?:phone|tel|telephone|mobile|cell|fax|call|calls|text|whatsapp|number|no\.|#)\s{0,3}:?\s{0,3}$/i;
const ADDRESS_UNIT = /(?:apt|apartment|suite|ste|unit|flat|no)\.?\s{1,3}$/i;
/** A word after the number that is not a phone label ("office", "fax", "mobile" …): a street name. */
const STREET_NAME_AFTER = /^ {1,2}(?!(?:office|fax|mobile|home|work|desk|cell|tel|phone|ext|or|and|is|to|for|at|between|until|before|after)\b)\p{L}\p{L}/iu;

function nationalFormat(groups: readonly string[], text: string, start: number, end: number): boolean {
  if (groups.length !== 2) return false;
  const [area, number] = groups as [string, string];
  if (/^0\d{1,4}$/.test(area) && number.length >= 6 && number.length <= 8) return true;
  if (/^\d{2}$/.test(area) && number.length === 6) {
    const lead = text.slice(Math.max(0, start - 24), start);
    return PHONE_CUE.test(lead) || /^[ -]?(?:office|fax|mobile|home|work|cell)\b/i.test(text.slice(end, end + 8));
  }
  return false;
}

function phoneSpan(match: RegExpExecArray, text: string): { start: number; end: number } | null {
  let value = match[0];
  let start = match.index;
  // A "(" only belongs to the number when it closes inside it.
  if (value.startsWith('(') && !value.includes(')')) {
    value = value.slice(1);
    start += 1;
  }
  const core = value.replace(/ ?(?:x|ext\.?) ?\d{1,6}$/, '');
  const digits = core.replace(/\D/g, '');
  if (digits.length < 7 || digits.length > 15) return null;
  // The value of an identifier's field ("product_id": "1762337868", "Order #2045 8812 33",
  // "ISBN 978-0-306-40615-7") is that identifier, not a phone number, unless the label says phone.
  if (identifierField(text, start, match.index + match[0].length)) return null;
  const groups = core.split(/[^\d]+/).filter((group) => group !== '');
  const hasPlus = core.startsWith('+');
  const hasParenthesis = core.includes('(');
  if (groups.length === 1) {
    // Bare digit runs: only with a + or 10+ digits (not an order number or a year).
    if (!hasPlus && digits.length < 10) return null;
  } else {
    // Long groups only with a + or in the national trunk-prefix form ("07-51938264",
    // "0412 3098765", "031-5172046"), or an area code and a six-digit number after a phone cue
    // or before an "office" label ("call 84 519063", "47 260518-Office").
    if (groups.some((group) => group.length > 5) && !hasPlus && !nationalFormat(groups, text, start, match.index + match[0].length)) return null;
    if (/^\d{4}-\d{2}-\d{2}/.test(core) || /^\d{1,2}[./-]\d{1,2}[./-]\d{2,4}$/.test(core)) return null; // dates
    // A range of two numbers of the same length, the second larger ("1000-1250 words", "2019 - 2020").
    const range = /^(\d{3,4}) ?[-–] ?(\d{3,4})$/.exec(core.trim());
    if (range !== null && range[1]!.length === range[2]!.length && !range[1]!.startsWith('0') && Number(range[1]) < Number(range[2]) && !PHONE_CUE.test(text.slice(Math.max(0, start - 24), start))) return null;
    if (/^\d{1,3}(?:\.\d{1,3}){3}$/.test(core)) return null; // dotted quads are addresses, not phones
    // A decimal number ("116.4074", a coordinate, a price, a measurement) unless a phone cue precedes it.
    if (/^\d+\.\d+$/.test(core) && !PHONE_CUE.test(text.slice(Math.max(0, start - 24), start))) return null;
    const first = groups[0] ?? '';
    if (!hasPlus && !hasParenthesis && first.length < 2) return null; // "3.14159 26"
    if (!hasPlus && !hasParenthesis && first.length === 5 && !first.startsWith('0')) return null; // "17151 2450 Main St"
    // Short space-separated groups in an address: a house and unit number before the street name
    // ("5172 408 Harbour Drive") or after "Apt."/"Suite" ("Apt. 417 26 309"), unless a phone cue precedes.
    if (!hasPlus && !hasParenthesis && digits.length < 10 && /^[\d ]+$/.test(core.trim())) {
      const after = text.slice(match.index + match[0].length, match.index + match[0].length + 12);
      const lead = text.slice(Math.max(0, start - 24), start);
      if (!PHONE_CUE.test(lead) && (STREET_NAME_AFTER.test(after) || ADDRESS_UNIT.test(lead))) return null;
    }
  }
  if (/[(][^)]*$/.test(core) || /^[^(]*[)]/.test(core)) return null; // unbalanced parenthesis
  // Surrounding characters: not glued to letters (part of an identifier).
  const before = text[start - 1];
  if (before !== undefined && /[A-Za-z_]/.test(before)) return null;
  // A minus sign glued to a decimal number ("-74.0060"): a signed value, not a phone.
  if (before === '-' && !/\d/.test(text[start - 2] ?? '') && /^\d+\.\d+$/.test(core) && !PHONE_CUE.test(text.slice(Math.max(0, start - 25), start - 1))) return null;
  // Trim trailing separators that the character class may have taken.
  let end = start + value.length;
  while (end > start && /[ .(-]/.test(text[end - 1] ?? '')) end -= 1;
  return { start, end };
}


const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BR: 29, CH: 21, CR: 22, CY: 28, CZ: 24,
  DE: 22, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18, GR: 27,
  GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LI: 21, LT: 20, LU: 20,
  LV: 21, MC: 27, MD: 24, ME: 22, MK: 19, MR: 27, MT: 31, MU: 30, NL: 18, NO: 15, PK: 24, PL: 28, PS: 29, PT: 25,
  QA: 29, RO: 24, RS: 22, SA: 24, SE: 24, SI: 19, SK: 24, SM: 27, TN: 24, TR: 26, UA: 29, VG: 24, XK: 20,
};

/** ISO 13616: country length and mod-97 == 1. */
export function ibanValid(candidate: string): boolean {
  const iban = candidate.replace(/ /g, '').toUpperCase();
  const expected = IBAN_LENGTHS[iban.slice(0, 2)];
  if (expected !== undefined && iban.length !== expected) return false;
  if (iban.length < 15 || iban.length > 34) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const character of rearranged) {
    const code = character.charCodeAt(0);
    const value = code >= 65 ? code - 55 : code - 48;
    remainder = value >= 10 ? (remainder * 100 + value) % 97 : (remainder * 10 + value) % 97;
  }
  return remainder === 1;
}

/** Every pattern, for the ReDoS test. */
export function piiPatterns(): readonly RegExp[] {
  return [...DETECTORS.map((detector) => detector.pattern), SECRET_HINT, ...namePatterns()];
}
