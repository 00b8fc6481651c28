/**
 * National identifiers, context-gated identifiers, network and wallet identifiers for the PII
 * detector. Each format with a checksum is validated (precision before recall: a redaction of a
 * random number corrupts a prompt):
 *   UK NINO (prefix rules), ES DNI/NIE (mod-23 letter), IT codice fiscale (check letter),
 *   FR NIR (97 − n mod 97 key, Corsica 2A/2B), IN Aadhaar (Verhoeff; grouped 4-4-4 or with a
 *   cue), IN PAN (holder-type letter), SG NRIC/FIN (weighted check letter), AU TFN (weighted
 *   mod 11, with a cue), CA SIN (Luhn, with a cue), MAC addresses, URLs carrying
 *   user:password, Bitcoin addresses (Base58Check or bech32 checksum), Ethereum addresses (with a
 *   wallet cue: EIP-55 needs Keccak, which node:crypto lacks). Passport and driver's-licence
 *   numbers, dates of birth and medical record numbers are taken only after their cue words.
 * Every regular expression is linear (bounded repetitions, no nested quantifiers).
 */
import { createHash } from 'node:crypto';

export type IdentifierType = 'NATIONAL_ID' | 'PASSPORT' | 'DRIVER_LICENSE' | 'DOB' | 'MAC' | 'CREDENTIAL_URL' | 'CRYPTO_WALLET' | 'MRN' | 'VEHICLE_ID' | 'ORG_ID';

export interface IdentifierDetector {
  readonly type: IdentifierType;
  readonly pattern: RegExp;
  readonly needsDigit: boolean;
  /** The detector is skipped unless this occurs in the text (its cue words). */
  readonly hint?: RegExp;
  readonly accept?: (match: RegExpExecArray, text: string) => { start: number; end: number } | null;
}

const whole = (match: RegExpExecArray) => ({ start: match.index, end: match.index + match[0].length });
/** The span of capture group 1 (the value after its cue). */
function group(match: RegExpExecArray): { start: number; end: number } | null {
  const value = match[1];
  if (value === undefined) return null;
  const start = match.index + match[0].lastIndexOf(value);
  return { start, end: start + value.length };
}

function hasCue(text: string, index: number, cue: RegExp, window = 40): boolean {
  return cue.test(text.slice(Math.max(0, index - window), index));
}

// --------------------------------------------------------------------------------- checksums

const NINO_BAD_FIRST = new Set(['D', 'F', 'I', 'Q', 'U', 'V']);
const NINO_BAD_SECOND = new Set(['D', 'F', 'I', 'O', 'Q', 'U', 'V']);
const NINO_BAD_PREFIX = new Set(['BG', 'GB', 'KN', 'NK', 'NT', 'TN', 'ZZ']);
export function ninoValid(value: string): boolean {
  const compact = value.replace(/ /g, '').toUpperCase();
  if (!/^[A-Z]{2}\d{6}[A-D]$/.test(compact)) return false;
  return !NINO_BAD_FIRST.has(compact[0]!) && !NINO_BAD_SECOND.has(compact[1]!) && !NINO_BAD_PREFIX.has(compact.slice(0, 2));
}

const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';
export function dniValid(value: string): boolean {
  const compact = value.replace(/[ -]/g, '').toUpperCase();
  const nie = /^([XYZ])(\d{7})([A-Z])$/.exec(compact);
  const dni = /^(\d{8})([A-Z])$/.exec(compact);
  if (nie !== null) return DNI_LETTERS[Number(`${'XYZ'.indexOf(nie[1]!)}${nie[2]}`) % 23] === nie[3];
  if (dni !== null) return DNI_LETTERS[Number(dni[1]) % 23] === dni[2];
  return false;
}

const CF_ODD = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23];
export function codiceFiscaleValid(value: string): boolean {
  const code = value.toUpperCase();
  if (!/^[A-Z]{6}[0-9LMNPQRSTUV]{2}[A-EHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z]$/.test(code)) return false;
  let sum = 0;
  for (let index = 0; index < 15; index++) {
    const character = code[index]!;
    const position = /\d/.test(character) ? character.charCodeAt(0) - 48 : character.charCodeAt(0) - 65;
    sum += index % 2 === 0 ? CF_ODD[position]! : position;
  }
  return String.fromCharCode(65 + (sum % 26)) === code[15];
}

export function nirValid(value: string): boolean {
  const compact = value.replace(/ /g, '').toUpperCase();
  if (!/^[12]\d{4}(?:\d{2}|2A|2B)\d{6}\d{2}$/.test(compact)) return false;
  const body = compact.slice(0, 13).replace('2A', '19').replace('2B', '18');
  const key = Number(compact.slice(13));
  return 97 - Number(BigInt(body) % 97n) === key;
}

const VERHOEFF_D = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6], [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
  [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1], [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
  [8, 7, 6, 5, 9, 3, 2, 1, 0, 4], [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
];
const VERHOEFF_P = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4], [5, 8, 0, 3, 7, 9, 6, 1, 4, 2], [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
  [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1], [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
];
export function verhoeffValid(digits: string): boolean {
  let check = 0;
  const reversed = [...digits].reverse();
  for (let index = 0; index < reversed.length; index++) check = VERHOEFF_D[check]![VERHOEFF_P[index % 8]![reversed[index]!.charCodeAt(0) - 48]!]!;
  return check === 0;
}

export function nricValid(value: string): boolean {
  const code = value.toUpperCase();
  const match = /^([STFGM])(\d{7})([A-Z])$/.exec(code);
  if (match === null) return false;
  const weights = [2, 7, 6, 5, 4, 3, 2];
  let sum = 0;
  for (let index = 0; index < 7; index++) sum += (match[2]!.charCodeAt(index) - 48) * weights[index]!;
  const prefix = match[1]!;
  if (prefix === 'T' || prefix === 'G') sum += 4;
  if (prefix === 'M') sum += 3;
  const table = prefix === 'S' || prefix === 'T' ? 'JZIHGFEDCBA' : prefix === 'M' ? 'KLJNPQRTUWX' : 'XWUTRQPNMLK';
  return table[prefix === 'M' ? 10 - (sum % 11) : sum % 11] === match[3];
}

export function tfnValid(value: string): boolean {
  const digits = value.replace(/[ -]/g, '');
  if (!/^\d{8,9}$/.test(digits)) return false;
  const weights = digits.length === 9 ? [1, 4, 3, 7, 5, 8, 6, 9, 10] : [10, 7, 8, 4, 6, 3, 5, 1];
  let sum = 0;
  for (let index = 0; index < digits.length; index++) sum += (digits.charCodeAt(index) - 48) * weights[index]!;
  return sum % 11 === 0;
}

const HETU_CHECK = '0123456789ABCDEFHJKLMNPRSTUVWXY';
/** FI henkilötunnus: DDMMYY, century sign, individual number, mod-31 check character. */
export function hetuValid(value: string): boolean {
  const match = /^(\d{6})[-+A-FU-Y](\d{3})([0-9A-Y])$/.exec(value.toUpperCase());
  if (match === null || !plausibleDate(match[1]!.slice(0, 2), match[1]!.slice(2, 4))) return false;
  return HETU_CHECK[Number(match[1]! + match[2]!) % 31] === match[3];
}

/** KR resident registration number: YYMMDD-SNNNNNC, weighted mod 11. */
export function rrnValid(value: string): boolean {
  const digits = value.replace('-', '');
  if (!/^\d{13}$/.test(digits) || !plausibleDate(digits.slice(4, 6), digits.slice(2, 4))) return false;
  const weights = [2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5];
  let sum = 0;
  for (let index = 0; index < 12; index++) sum += (digits.charCodeAt(index) - 48) * weights[index]!;
  return (11 - (sum % 11)) % 10 === digits.charCodeAt(12) - 48;
}

/** SE personnummer: YYMMDD-NNNC (or + over 100), Luhn over the ten digits. */
export function personnummerValid(value: string): boolean {
  const digits = value.replace(/[-+]/, '');
  if (!/^\d{10}$/.test(digits) || !plausibleDate(digits.slice(4, 6), digits.slice(2, 4), 60)) return false;
  return luhnValid(digits);
}

/** UK NHS number: 10 digits, weighted mod 11. */
export function nhsValid(value: string): boolean {
  const digits = value.replace(/[ -]/g, '');
  if (!/^\d{10}$/.test(digits)) return false;
  let sum = 0;
  for (let index = 0; index < 9; index++) sum += (digits.charCodeAt(index) - 48) * (10 - index);
  const check = 11 - (sum % 11);
  return check !== 10 && (check === 11 ? 0 : check) === digits.charCodeAt(9) - 48;
}

/** PL PESEL: 11 digits, weights 1-3-7-9. */
export function peselValid(value: string): boolean {
  if (!/^\d{11}$/.test(value)) return false;
  const weights = [1, 3, 7, 9, 1, 3, 7, 9, 1, 3];
  let sum = 0;
  for (let index = 0; index < 10; index++) sum += (value.charCodeAt(index) - 48) * weights[index]!;
  return (10 - (sum % 10)) % 10 === value.charCodeAt(10) - 48;
}

/** A day and month that can be a date (a day offset marks temporary numbers: SE +60). */
function plausibleDate(day: string, month: string, dayOffset = 0): boolean {
  let dayNumber = Number(day);
  if (dayNumber > dayOffset) dayNumber -= dayOffset;
  const monthNumber = Number(month);
  return dayNumber >= 1 && dayNumber <= 31 && monthNumber >= 1 && monthNumber <= 12;
}

/** Luhn checksum over a digit string (payment cards, CA SIN). */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let index = digits.length - 1; index >= 0; index--) {
    let digit = digits.charCodeAt(index) - 48;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return sum % 10 === 0;
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
export function base58CheckValid(value: string): boolean {
  let number = 0n;
  for (const character of value) {
    const digit = BASE58.indexOf(character);
    if (digit < 0) return false;
    number = number * 58n + BigInt(digit);
  }
  let hex = number.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  let leading = 0;
  while (value[leading] === '1') leading++;
  const bytes = Buffer.concat([Buffer.alloc(leading), Buffer.from(hex, 'hex')]);
  if (bytes.length !== 25) return false;
  const payload = bytes.subarray(0, 21);
  const checksum = createHash('sha256').update(createHash('sha256').update(payload).digest()).digest().subarray(0, 4);
  return checksum.equals(bytes.subarray(21));
}

const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
export function bech32Valid(value: string): boolean {
  const lower = value.toLowerCase();
  const separator = lower.lastIndexOf('1');
  if (separator < 1 || lower.length - separator < 7) return false;
  const values: number[] = [];
  for (const character of lower.slice(0, separator)) values.push(character.charCodeAt(0) >> 5);
  values.push(0);
  for (const character of lower.slice(0, separator)) values.push(character.charCodeAt(0) & 31);
  for (const character of lower.slice(separator + 1)) {
    const digit = BECH32.indexOf(character);
    if (digit < 0) return false;
    values.push(digit);
  }
  const generators = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let check = 1;
  for (const digit of values) {
    const top = check >>> 25;
    check = ((check & 0x1ffffff) << 5) ^ digit;
    for (let index = 0; index < 5; index++) if (((top >>> index) & 1) === 1) check ^= generators[index]!;
  }
  return check === 1 || check === 0x2bc830a3; // bech32 (segwit v0) or bech32m (taproot)
}

// --------------------------------------------------------------------------------- detectors

const AADHAAR_CUE = /\b(?:aadhaar|aadhar|uidai|uid)\b/i;
const TFN_CUE = /\b(?:tfn|tax\s{1,3}file\s{1,3}(?:number|no))\b/i;
const SIN_CUE = /\b(?:sin|social\s{1,3}insurance\s{1,3}(?:number|no))\b/i;
const WALLET_CUE = /\b(?:wallet|eth|ether|ethereum|address|send|transfer|pay|deposit)\b/i;
const MONTH = '(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
export const SSN_CUE = /\b(?:ssn|social\s{1,3}security(?:\s{1,3}(?:number|no|#))?)\b/i;
const NHS_CUE = /\bnhs\b/i;
const PESEL_CUE = /\bpesel\b/i;
/** A generic national identity cue: the value after it is taken when it has five digits or more. */
const NATIONAL_ID_CUE =
  /\b(?:national\s{1,3}(?:id(?:entity|entification)?|insurance|registration)(?:\s{1,3}(?:card|number|no|code))?|(?:identity|id)\s{1,3}card(?:\s{1,3}(?:number|no))?|citizen(?:ship)?\s{1,3}(?:id|number|card)|personal\s{1,3}(?:id(?:entity|entification)?|identity)\s{1,3}(?:number|no|code)|(?:resident|civil)\s{1,3}(?:registration|id|identity)(?:\s{1,3}(?:number|no))?|personnummer|henkilötunnus|cpr(?:\s{1,3}(?:number|nr|no))?|bsn|burgerservicenummer|cnp|egn|oib|jmbg|curp|rut|cpf|cuit|mykad|emirates\s{1,3}id|tc\s{1,3}kimlik|hkid|id\s{1,3}(?:number|no))[ \t]{0,3}(?:is|was|:|#|-|nr\.?|no\.?)?[ \t]{0,3}$/i;
/** The generic cue's distinctive words, for skipping texts without any. */
const NATIONAL_ID_HINT = /\b(?:national|identity|id|citizen|citizenship|personal|resident|civil|personnummer|henkilötunnus|cpr|bsn|burgerservicenummer|cnp|egn|oib|jmbg|curp|rut|cpf|cuit|mykad|emirates|tc)\b/i;
const PASSPORT_CUE = /\b(?:passport|passeport|pasaporte|passaporto|reisepass|paspoort|pasaport)\b/i;
const BIRTH_CUE = /\b(?:born|birth|birthdate|birthday|d\.?o\.?b\b|b-day|geboren|geburtsdatum|né|née|nacid[oa]|fecha\s{1,3}de\s{1,3}nacimiento|date\s{1,3}de\s{1,3}naissance)/i;

/** Order matters: earlier detectors win overlaps (more specific formats first). */
export const IDENTIFIER_DETECTORS: readonly IdentifierDetector[] = [
  {
    type: 'CREDENTIAL_URL',
    needsDigit: false,
    // The lookbehind starts a scheme only at the beginning of its run of scheme characters: with
    // `\b`, every letter after a `+`, `.` or `-` started a new attempt ("a+a+a+…" costs 20 steps
    // per character). Host characters exclude `@`, so the userinfo's end is unambiguous.
    pattern: /(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{1,20}:\/\/[^\s:@/?#]{1,64}:[^\s@/?#]{1,128}@[^\s/?#:@]{1,255}/gi,
    accept: whole,
  },
  {
    type: 'CRYPTO_WALLET',
    needsDigit: true,
    pattern: /\b(?:[13][1-9A-HJ-NP-Za-km-z]{25,34}|bc1[02-9ac-hj-np-z]{11,71}|BC1[02-9AC-HJ-NP-Z]{11,71}|0x[0-9a-fA-F]{40})\b/g,
    accept: (match, text) => {
      const value = match[0];
      if (value.startsWith('0x')) return hasCue(text, match.index, WALLET_CUE) ? whole(match) : null;
      if (/^bc1/i.test(value)) return bech32Valid(value) ? whole(match) : null;
      return base58CheckValid(value) ? whole(match) : null;
    },
  },
  {
    type: 'NATIONAL_ID',
    needsDigit: true,
    // IT codice fiscale.
    pattern: /\b[A-Za-z]{6}[0-9LMNPQRSTUVlmnpqrstuv]{2}[A-Za-z][0-9LMNPQRSTUVlmnpqrstuv]{2}[A-Za-z][0-9LMNPQRSTUVlmnpqrstuv]{3}[A-Za-z]\b/g,
    accept: (match) => (codiceFiscaleValid(match[0]) ? whole(match) : null),
  },
  {
    type: 'NATIONAL_ID',
    needsDigit: true,
    // FR NIR (sécurité sociale), 15 characters with optional spaces.
    pattern: /\b[12] ?\d{2} ?\d{2} ?(?:\d{2}|2[ABab]) ?\d{3} ?\d{3} ?\d{2}\b/g,
    accept: (match) => (nirValid(match[0]) ? whole(match) : null),
  },
  {
    type: 'NATIONAL_ID',
    needsDigit: true,
    // IN Aadhaar: 12 digits, not starting 0/1, Verhoeff; grouped 4-4-4 or after a cue.
    pattern: /\b[2-9]\d{3}[ -]?\d{4}[ -]?\d{4}\b/g,
    accept: (match, text) => {
      const digits = match[0].replace(/[ -]/g, '');
      if (!verhoeffValid(digits)) return null;
      return /[ -]/.test(match[0]) || hasCue(text, match.index, AADHAAR_CUE) ? whole(match) : null;
    },
  },
  {
    type: 'NATIONAL_ID',
    needsDigit: true,
    // UK NINO.
    pattern: /\b[A-Za-z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-Da-d]\b/g,
    accept: (match) => (ninoValid(match[0]) ? whole(match) : null),
  },
  {
    type: 'NATIONAL_ID',
    needsDigit: true,
    // ES DNI and NIE.
    pattern: /\b(?:[XYZxyz][ -]?\d{7}|\d{8})[ -]?[A-Za-z]\b/g,
    accept: (match) => (dniValid(match[0]) ? whole(match) : null),
  },
  {
    type: 'NATIONAL_ID',
    needsDigit: true,
    // IN PAN: holder-type letter in fourth place.
    pattern: /\b[A-Z]{3}[ABCFGHLJPTK][A-Z]\d{4}[A-Z]\b/g,
    accept: whole,
  },
  {
    type: 'NATIONAL_ID',
    needsDigit: true,
    // SG NRIC / FIN.
    pattern: /\b[STFGMstfgm]\d{7}[A-Za-z]\b/g,
    accept: (match) => (nricValid(match[0]) ? whole(match) : null),
  },
  {
    type: 'NATIONAL_ID',
    needsDigit: true,
    // AU TFN and CA SIN, each with its cue.
    pattern: /\b\d{3}[ -]?\d{3}[ -]?\d{2,3}\b/g,
    accept: (match, text) => {
      const digits = match[0].replace(/[ -]/g, '');
      if (hasCue(text, match.index, TFN_CUE) && tfnValid(digits)) return whole(match);
      // 3-3-3 is also a common phone grouping (Spain): the SIN needs its cue.
      if (digits.length === 9 && luhnValid(digits) && hasCue(text, match.index, SIN_CUE)) return whole(match);
      return null;
    },
  },
  {
    type: 'NATIONAL_ID',
    needsDigit: true,
    // US ITIN: 9NN-GG-NNNN with the IRS group ranges (an SSN never starts with 9).
    pattern: /\b9\d{2}[- ](?:5\d|6[0-5]|7\d|8[0-8]|9[0-24-9])[- ]\d{4}\b/g,
    accept: whole,
  },
  {
    type: 'NATIONAL_ID',
    needsDigit: true,
    // FI henkilötunnus.
    pattern: /\b\d{6}[-+A-FU-Ya-fu-y]\d{3}[0-9A-Ya-y]\b/g,
    accept: (match) => (hetuValid(match[0]) ? whole(match) : null),
  },
  {
    type: 'NATIONAL_ID',
    needsDigit: true,
    // KR resident registration number.
    pattern: /\b\d{6}-[1-8]\d{6}\b/g,
    accept: (match) => (rrnValid(match[0]) ? whole(match) : null),
  },
  {
    type: 'NATIONAL_ID',
    needsDigit: true,
    // SE personnummer (YYMMDD-NNNC).
    pattern: /\b\d{6}[-+]\d{4}\b/g,
    accept: (match) => (personnummerValid(match[0]) ? whole(match) : null),
  },
  {
    type: 'NATIONAL_ID',
    needsDigit: true,
    // UK NHS number (3-3-4, like a phone number: only after "NHS") and PL PESEL (after "PESEL").
    hint: /\b(?:nhs|pesel)\b/i,
    pattern: /\b\d{3}[ -]?\d{3}[ -]?\d{4,5}\b/g,
    accept: (match, text) => {
      const digits = match[0].replace(/[ -]/g, '');
      if (digits.length === 10 && nhsValid(digits) && hasCue(text, match.index, NHS_CUE)) return whole(match);
      if (digits.length === 11 && digits === match[0] && peselValid(digits) && hasCue(text, match.index, PESEL_CUE)) return whole(match);
      return null;
    },
  },
  {
    type: 'NATIONAL_ID',
    needsDigit: true,
    // Any other national identity number right after its cue ("ID card number: X1234567",
    // "BSN 123456782", "CPF 123.456.789-09"): five digits or more, 6–20 characters.
    hint: NATIONAL_ID_HINT,
    pattern: /\b[A-Za-z0-9][A-Za-z0-9./-]{4,18}[A-Za-z0-9]\b/g,
    accept: (match, text) => {
      const value = match[0];
      if ((value.match(/\d/g)?.length ?? 0) < 5) return null;
      return NATIONAL_ID_CUE.test(text.slice(Math.max(0, match.index - 48), match.index)) ? whole(match) : null;
    },
  },
  {
    type: 'MAC',
    needsDigit: true,
    pattern: /\b(?:[0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}\b|\b(?:[0-9A-Fa-f]{2}-){5}[0-9A-Fa-f]{2}\b|\b[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\b/g,
    accept: whole,
  },
  {
    type: 'PASSPORT',
    needsDigit: true,
    pattern: /\bpassport(?:[ \t]{1,3}(?:no\.?|number|num|#|id))?[ \t]{0,3}(?:is|was|:|#|-)?[ \t]{0,3}([A-Za-z0-9]{6,9})\b/gi,
    accept: (match) => (/\d/.test(match[1] ?? '') ? group(match) : null),
  },
  {
    type: 'PASSPORT',
    needsDigit: true,
    // A passport-number shape within a few words after a passport cue ("passport, number
    // X12345678", "Reisepass: C01X00T47").
    hint: PASSPORT_CUE,
    pattern: /\b[A-Za-z]{0,2}\d[A-Za-z0-9]{4,8}\b/g,
    accept: (match, text) => {
      const value = match[0];
      if (value.length < 6 || value.length > 9 || (value.match(/\d/g)?.length ?? 0) < 4) return null;
      const lead = text.slice(Math.max(0, match.index - 40), match.index);
      return PASSPORT_CUE.test(lead) && !/[.!?]\s/.test(lead.slice(lead.search(PASSPORT_CUE))) ? whole(match) : null;
    },
  },
  {
    type: 'DRIVER_LICENSE',
    needsDigit: true,
    pattern: /\b(?:driver'?s?|driving)[ \t]{1,3}licen[cs]e(?:[ \t]{1,3}(?:no\.?|number|num|#|id))?[ \t]{0,3}(?:is|was|:|#|-)?[ \t]{0,3}([A-Za-z0-9][A-Za-z0-9-]{4,18}[A-Za-z0-9])\b/gi,
    accept: (match) => (/\d/.test(match[1] ?? '') ? group(match) : null),
  },
  {
    type: 'DRIVER_LICENSE',
    needsDigit: true,
    // After "DL", "DL#" or "licence/license number/no." (the driver's cue above takes the rest).
    hint: /\bdl\b|licen[cs]e/i,
    pattern: /\b(?:dl|licen[cs]e[ \t]{1,3}(?:no\.?|number|num|#))[ \t]{0,3}(?:is|was|:|#|-)?[ \t]{0,3}([A-Za-z]{0,2}\d[A-Za-z0-9-]{4,18}[A-Za-z0-9])\b/gi,
    accept: (match) => ((match[1]!.match(/\d/g)?.length ?? 0) >= 5 ? group(match) : null),
  },
  {
    type: 'MRN',
    needsDigit: true,
    pattern: /\b(?:mrn|medical[ \t]{1,3}record(?:[ \t]{1,3}(?:no\.?|number|#))?|patient[ \t]{1,3}(?:id|number|no\.?)|hospital[ \t]{1,3}(?:number|no\.?))[ \t]{0,3}(?:is|was|:|#|-)?[ \t]{0,3}([A-Za-z0-9][A-Za-z0-9-]{3,14}[A-Za-z0-9])\b/gi,
    accept: (match) => (/\d/.test(match[1] ?? '') ? group(match) : null),
  },
  {
    type: 'DOB',
    needsDigit: true,
    // A date with a birth cue in the 48 characters before it ("born on 2/7/1961", "Please tell
    // me your date of birth. It's 3/23/1940", "DOB: 1990-03-14", "birthday is March 3rd, 1990").
    hint: BIRTH_CUE,
    pattern: new RegExp(
      `\\b(?:\\d{1,2}[/.-]\\d{1,2}[/.-](?:\\d{4}|\\d{2})|\\d{4}[/.-]\\d{1,2}[/.-]\\d{1,2}|\\d{1,2}-${MONTH}-(?:\\d{4}|\\d{2})|\\d{1,2}(?:st|nd|rd|th)?[ \\t]{1,2}(?:of[ \\t]{1,2})?${MONTH}\\.?,?[ \\t]{1,2}\\d{4}|${MONTH}\\.?[ \\t]{1,2}\\d{1,2}(?:st|nd|rd|th)?,?[ \\t]{1,2}\\d{4})(?:\\b|(?=T\\d))`,
      'gi',
    ),
    accept: (match, text) => (BIRTH_CUE.test(text.slice(Math.max(0, match.index - 48), match.index)) ? whole(match) : null),
  },
];
