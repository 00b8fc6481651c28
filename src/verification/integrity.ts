/**
 * Integrity layer: the content's SHA-256 (what the provenance record and audit entry carry),
 * completeness (a `length` finish or a cut stream is flagged; `content_filter` too) and
 * well-formed text: lone UTF-16 surrogates and U+FFFD (an upstream decoding failure), C0/C1
 * control characters other than tab and line breaks, and invisible or direction-changing
 * characters that can smuggle text past a reader (zero-width characters, bidi embeddings,
 * overrides and isolates, Unicode tag characters used for "ASCII smuggling", supplementary
 * variation selectors). Fails closed: an internal error counts as a failure.
 */
import { hash } from 'node:crypto';
import type { Finding, LayerResult, VerifyInput } from './types.ts';

export interface IntegrityPolicy {
  flag_truncation: boolean;
  flag_invisible: boolean;
}

/** SHA-256 of the UTF-8 encoding, hex (one-shot `crypto.hash`: no Hash object per call). */
export function sha256Hex(content: string): string {
  return hash('sha256', content, 'hex');
}

// One class per reason; each is a plain character class (linear).
const SUSPECT = /[\u200B-\u200D\u2060-\u2064\uFEFF\u00AD\u180E]+|[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]+|(?:\uDB40[\uDC00-\uDC7F])+|(?:\uDB40[\uDD00-\uDDEF])+|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|\uFFFD+|[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]+/g;

function reasonOf(text: string): string {
  const code = text.charCodeAt(0);
  if (code === 0xdb40) return (text.charCodeAt(1) & 0xff00) === 0xdc00 ? 'unicode_tag_characters' : 'invisible_characters';
  if (code >= 0xd800 && code <= 0xdfff) return 'invalid_encoding';
  if (code === 0xfffd) return 'replacement_character';
  if ((code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069) || code === 0x200e || code === 0x200f || code === 0x061c) return 'bidi_control';
  if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return 'control_character';
  return 'invisible_characters';
}

/** Findings over the text itself (also used per window when streaming). */
export function textFindings(content: string, offset = 0): Finding[] {
  const findings: Finding[] = [];
  // Fast path: plain printable text has none of these code units.
  if (!/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2069\uD800-\uDFFF\uFEFF\uFFFD]/.test(content)) return findings;
  for (const match of content.matchAll(SUSPECT)) {
    const reason = reasonOf(match[0]);
    // A lone BOM at the very start is harmless.
    if (reason === 'invisible_characters' && match.index === 0 && match[0] === '\uFEFF') continue;
    findings.push({ start: offset + match.index, end: offset + match.index + match[0].length, reason });
  }
  return findings;
}

export function integrityLayer(input: VerifyInput, policy: IntegrityPolicy): LayerResult {
  const findings: Finding[] = [];
  const end = input.content.length;
  if (policy.flag_truncation) {
    if (input.cut === true) findings.push({ start: end, end, reason: 'stream_cut' });
    else if (input.finishReason === 'length') findings.push({ start: end, end, reason: 'truncated_max_tokens' });
    else if (input.finishReason === 'content_filter') findings.push({ start: end, end, reason: 'stopped_by_provider_filter' });
  }
  if (policy.flag_invisible) findings.push(...textFindings(input.content));
  return {
    verdict: findings.length > 0 ? 'fail' : 'pass',
    score: findings.length > 0 ? 1 : 0,
    findings,
    ms: 0,
    fails: 'closed',
    info: { content_sha256: sha256Hex(input.content) },
  };
}
