export { detectPii, ibanValid, piiPatterns, PII_TYPES, MAX_SCAN_CHARS } from './detect.ts';
export { luhnValid } from './identifiers.ts';
export { nameLexicons as loadPiiLexicons } from './names.ts';
export type { PiiSpan, PiiType } from './detect.ts';
export { messageSpans, redactMessages, restorePlaceholders, createStreamRestorer, SPAN_CACHE } from './redact.ts';
export type { PiiMode, RedactionResult, RedactionSummary } from './redact.ts';
