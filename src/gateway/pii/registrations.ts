/**
 * Registered identifiers of organisations and vehicles for the PII detector.
 *
 * ORG_ID, each validated where the format has a checksum (a random number passes 1 time in 11 to
 * 97) and otherwise taken only after its cue words:
 *   AU ABN (weighted mod 89; grouped 2-3-3-3 or after "ABN"), AU ACN (weighted mod 10, after
 *   "ACN"), IN GSTIN (mod-36 check character), UK VAT number (GB + 9 digits, mod 97 or the
 *   9755 scheme), FR SIREN / SIRET (Luhn, after "SIREN"/"SIRET"), US EIN (NN-NNNNNNN after "EIN",
 *   "employer identification number", "FEIN", "tax ID"), UK company number (8 characters after
 *   "company number", "company registration number", "registered number", "CRN", "Companies
 *   House").
 * VEHICLE_ID: a VIN (17 characters without I, O, Q) whose ISO 3779 / FMVSS 115 check digit holds,
 *   or any well-formed VIN after "VIN", "vehicle identification number" or "chassis number"
 *   (European VINs need not carry the check digit); a registration plate only after its cue words
 *   ("licence plate", "number plate", "registration plate", "plate number", "rego", "vehicle
 *   registration", "Kennzeichen", "kenteken", "immatriculation", "matrícula").
 * These run before cards, SSNs and phones, so that a grouped ABN is never reported as a phone number.
 * Every regular expression is linear (bounded repetitions, no nested quantifiers).
 */
import type { IdentifierDetector } from './identifiers.ts';

const whole = (match: RegExpExecArray) => ({ start: match.index, end: match.index + match[0].length });

function hasCue(text: string, index: number, cue: RegExp, window = 40): boolean {
  return cue.test(text.slice(Math.max(0, index - window), index));
}

const digitsOf = (value: string) => value.replace(/[^0-9A-Za-z]/g, '');

// --------------------------------------------------------------------------------- checksums

export function abnValid(value: string): boolean {
  const digits = digitsOf(value);
  if (!/^\d{11}$/.test(digits)) return false;
  const weights = [10, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19];
  let sum = 0;
  for (let index = 0; index < 11; index++) sum += (digits.charCodeAt(index) - 48 - (index === 0 ? 1 : 0)) * weights[index]!;
  return sum % 89 === 0;
}

export function acnValid(value: string): boolean {
  const digits = digitsOf(value);
  if (!/^\d{9}$/.test(digits)) return false;
  let sum = 0;
  for (let index = 0; index < 8; index++) sum += (digits.charCodeAt(index) - 48) * (8 - index);
  return (10 - (sum % 10)) % 10 === digits.charCodeAt(8) - 48;
}

const BASE36 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
export function gstinValid(value: string): boolean {
  const code = value.toUpperCase();
  if (!/^\d{2}[A-Z]{5}\d{4}[A-Z][1-9A-Z]Z[0-9A-Z]$/.test(code)) return false;
  let sum = 0;
  for (let index = 0; index < 14; index++) {
    const product = BASE36.indexOf(code[index]!) * (index % 2 === 0 ? 1 : 2);
    sum += Math.floor(product / 36) + (product % 36);
  }
  return BASE36[(36 - (sum % 36)) % 36] === code[14];
}

export function ukVatValid(value: string): boolean {
  const digits = digitsOf(value).replace(/^GB/i, '');
  if (!/^\d{9}$/.test(digits)) return false;
  let sum = 0;
  for (let index = 0; index < 7; index++) sum += (digits.charCodeAt(index) - 48) * (8 - index);
  const check = Number(digits.slice(7));
  return (sum + check) % 97 === 0 || (sum + check + 55) % 97 === 0;
}

function luhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let index = digits.length - 1; index >= 0; index--) {
    let digit = digits.charCodeAt(index) - 48;
    if (double) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
    double = !double;
  }
  return sum % 10 === 0;
}

const VIN_VALUES: Readonly<Record<string, number>> = {
  A: 1, B: 2, C: 3, D: 4, E: 5, F: 6, G: 7, H: 8, J: 1, K: 2, L: 3, M: 4, N: 5, P: 7, R: 9, S: 2, T: 3, U: 4, V: 5, W: 6, X: 7, Y: 8, Z: 9,
};
const VIN_WEIGHTS = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2];
/** The North American check digit (position 9) of a VIN. */
export function vinCheckValid(value: string): boolean {
  const vin = value.toUpperCase();
  if (!/^[A-HJ-NPR-Z0-9]{17}$/.test(vin)) return false;
  let sum = 0;
  for (let index = 0; index < 17; index++) {
    const character = vin[index]!;
    const number = character >= '0' && character <= '9' ? character.charCodeAt(0) - 48 : VIN_VALUES[character]!;
    sum += number * VIN_WEIGHTS[index]!;
  }
  const remainder = sum % 11;
  return (remainder === 10 ? 'X' : String(remainder)) === vin[8];
}

// --------------------------------------------------------------------------------- detectors

const ABN_CUE = /\b(?:abn|australian\s{1,3}business\s{1,3}number)\b/i;
const ACN_CUE = /\b(?:acn|australian\s{1,3}company\s{1,3}number)\b/i;
const SIREN_CUE = /\b(?:siren|siret)\b/i;
const EIN_CUE = /\b(?:f?ein|employer\s{1,3}identification(?:\s{1,3}(?:number|no))?|(?:federal\s{1,3})?tax\s{1,3}id(?:entification)?(?:\s{1,3}(?:number|no))?)\b/i;
const COMPANY_CUE = /\b(?:company\s{1,3}(?:registration\s{1,3})?(?:number|no)|registered\s{1,3}(?:company\s{1,3})?(?:number|no)|crn|companies\s{1,3}house)\b/i;
const VIN_CUE = /\b(?:vin|vehicle\s{1,3}identification(?:\s{1,3}(?:number|no))?|chassis(?:\s{1,3}(?:number|no))?)\b/i;

export const REGISTRATION_DETECTORS: readonly IdentifierDetector[] = [
  {
    type: 'ORG_ID',
    needsDigit: true,
    // IN GSTIN: state code, PAN, entity number, Z, check character.
    pattern: /\b\d{2}[A-Za-z]{5}\d{4}[A-Za-z][1-9A-Za-z][Zz][0-9A-Za-z]\b/g,
    accept: (match) => (gstinValid(match[0]) ? whole(match) : null),
  },
  {
    type: 'ORG_ID',
    needsDigit: true,
    // UK VAT registration number.
    pattern: /\bGB ?\d{3} ?\d{4} ?\d{2}\b/g,
    accept: (match) => (ukVatValid(match[0]) ? whole(match) : null),
  },
  {
    type: 'ORG_ID',
    needsDigit: true,
    // AU ABN: 11 digits, usually grouped 2-3-3-3.
    pattern: /\b\d{2} ?\d{3} ?\d{3} ?\d{3}\b/g,
    accept: (match, text) => {
      if (!abnValid(match[0])) return null;
      return /^\d{2} \d{3} \d{3} \d{3}$/.test(match[0]) || hasCue(text, match.index, ABN_CUE) ? whole(match) : null;
    },
  },
  {
    type: 'ORG_ID',
    needsDigit: true,
    // FR SIRET (14 digits) and SIREN (9), AU ACN (9): each after its cue.
    hint: /\b(?:siren|siret|acn|australian\s{1,3}company)\b/i,
    pattern: /\b\d{3} ?\d{3} ?\d{3}(?: ?\d{5})?\b/g,
    accept: (match, text) => {
      const digits = digitsOf(match[0]);
      if (hasCue(text, match.index, SIREN_CUE) && luhn(digits)) return whole(match);
      if (digits.length === 9 && hasCue(text, match.index, ACN_CUE) && acnValid(digits)) return whole(match);
      return null;
    },
  },
  {
    type: 'ORG_ID',
    needsDigit: true,
    // US EIN, after its cue.
    hint: EIN_CUE,
    pattern: /\b\d{2}-\d{7}\b/g,
    accept: (match, text) => (hasCue(text, match.index, EIN_CUE) ? whole(match) : null),
  },
  {
    type: 'ORG_ID',
    needsDigit: true,
    // UK company number (Companies House): 8 digits, or a two-letter register prefix and 6 digits.
    hint: COMPANY_CUE,
    pattern: /\b(?:\d{8}|(?:SC|NI|OC|SO|NC|LP|SL|NL|FC|IP|RS|SE|R0)\d{6})\b/g,
    accept: (match, text) => (hasCue(text, match.index, COMPANY_CUE) ? whole(match) : null),
  },
  {
    type: 'VEHICLE_ID',
    needsDigit: true,
    pattern: /\b[A-HJ-NPR-Za-hj-npr-z0-9]{17}\b/g,
    accept: (match, text) => {
      const value = match[0];
      if (!/\d/.test(value) || !/[A-Za-z]/.test(value)) return null;
      if (value === value.toUpperCase() && vinCheckValid(value)) return whole(match);
      return hasCue(text, match.index, VIN_CUE) ? whole(match) : null;
    },
  },
  {
    type: 'VEHICLE_ID',
    needsDigit: true,
    // A registration plate after its cue ("licence plate ABC-1234", "rego: 1ABC234").
    hint: /plate|rego|registration|kennzeichen|kenteken|immatriculation|matr[ií]cula/i,
    pattern:
      /\b(?:(?:licen[cs]e|number|registration|reg\.?)[ \t]{1,3}plate(?:[ \t]{1,3}(?:no\.?|number|#))?|plate[ \t]{1,3}(?:no\.?|number|#)|rego|vehicle[ \t]{1,3}registration(?:[ \t]{1,3}(?:no\.?|number|mark))?|kennzeichen|kenteken|immatriculation|matr[ií]cula)[ \t]{0,3}(?:is|was|:|#|-)?[ \t]{0,3}([A-Za-z0-9]{1,8}(?:[ -][A-Za-z0-9]{1,4}){0,2})\b/gi,
    accept: (match) => {
      const value = match[1] ?? '';
      const compact = value.replace(/[ -]/g, '');
      if (compact.length < 4 || compact.length > 9 || !/\d/.test(compact)) return null;
      const start = match.index + match[0].lastIndexOf(value);
      return { start, end: start + value.length };
    },
  },
];
