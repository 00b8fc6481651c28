/**
 * Data classification of request and response bodies into the spec's four tiers, from the AI
 * gateway's PII detectors (through its index) plus field names of structured bodies:
 *
 * - Restricted: payment cards (Luhn-checked), IBANs, US social security numbers, secrets and
 *   credentials (API keys, tokens, passwords), health data and government identifiers (by field
 *   name: diagnosis, medication, patient, passport, national_id, tax_id, driver_license, …).
 * - Confidential: personal data — e-mail addresses, phone numbers, person names, birth dates,
 *   postal addresses, salaries (by detector or field name).
 * - Internal: IP addresses, internal identifiers and other structured data (JSON or XML objects)
 *   with none of the above.
 * - Public: everything else (plain text, HTML, empty).
 * The highest tier found wins. Bounded: the detectors scan at most their MAX_SCAN_CHARS.
 */
import { detectPii, type PiiType } from '../gateway/index.ts';

export type DataClass = 'Restricted' | 'Confidential' | 'Internal' | 'Public';
export const DATA_CLASS_ORDER: readonly DataClass[] = ['Public', 'Internal', 'Confidential', 'Restricted'];

const RESTRICTED_TYPES = new Set<PiiType>(['CARD', 'IBAN', 'SSN', 'SECRET']);
const CONFIDENTIAL_TYPES = new Set<PiiType>(['EMAIL', 'PHONE', 'PERSON']);
const RESTRICTED_FIELD = /"(?:password|passwd|pass_?phrase|secret|client_secret|api_?key|access_?token|refresh_?token|private_?key|card_?number|cvv|cvc|pan|iban|ssn|social_security|passport(?:_number)?|national_id|tax_?id|driver_?s?_?licen[cs]e|diagnos[ie]s|medical_record|medication|prescription|patient(?:_id)?|health_condition|icd_?10)"\s*:/i;
const CONFIDENTIAL_FIELD = /"(?:e_?mail|phone(?:_number)?|mobile|first_?name|last_?name|full_?name|birth_?date|date_of_birth|dob|address|street|postal_?code|zip_?code|salary|gender)"\s*:/i;

export interface Classification {
  readonly dataClass: DataClass;
  /** PII types and field hints found (no values). */
  readonly found: readonly string[];
}

export function maxClass(left: DataClass, right: DataClass): DataClass {
  return DATA_CLASS_ORDER.indexOf(left) >= DATA_CLASS_ORDER.indexOf(right) ? left : right;
}

export function classifyData(text: string, contentType: string | undefined): Classification {
  if (text.length === 0) return { dataClass: 'Public', found: [] };
  const found = new Set<string>();
  let dataClass: DataClass = 'Public';
  const structured = /json|xml/i.test(contentType ?? '') || /^\s*[[{<]/.test(text.slice(0, 16));
  if (structured) dataClass = 'Internal';
  for (const span of detectPii(text)) {
    if (span.type === 'URL') continue; // a link alone says nothing about the data's class
    found.add(span.type);
    if (RESTRICTED_TYPES.has(span.type)) dataClass = 'Restricted';
    else if (CONFIDENTIAL_TYPES.has(span.type)) dataClass = maxClass(dataClass, 'Confidential');
    else dataClass = maxClass(dataClass, 'Internal');
  }
  if (structured) {
    const head = text.slice(0, 262_144);
    const restricted = RESTRICTED_FIELD.exec(head);
    if (restricted !== null) {
      found.add(`field:${restricted[0].slice(1, restricted[0].indexOf('"', 1)).toLowerCase()}`);
      dataClass = 'Restricted';
    }
    const confidential = CONFIDENTIAL_FIELD.exec(head);
    if (confidential !== null) {
      found.add(`field:${confidential[0].slice(1, confidential[0].indexOf('"', 1)).toLowerCase()}`);
      dataClass = maxClass(dataClass, 'Confidential');
    }
  }
  return { dataClass, found: [...found] };
}
