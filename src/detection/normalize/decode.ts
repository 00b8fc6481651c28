/**
 * Decoders for decode-then-rescan. Posture: lenient on purpose — attackers rely on the target
 * decoding more liberally than the filter (overlong UTF-8 such as %c0%af, IIS %u2215, double
 * encoding, entities without semicolons, url-safe base64 without padding), so each decoder
 * accepts those forms. Every decoder is linear in its input and returns null when nothing
 * changed; the caller bounds depth and total size.
 */


function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  if (code >= 65 && code <= 70) return code - 55;
  return -1;
}

/** Lenient UTF-8: overlong forms decode to their code point; stray bytes map to Latin-1. */
function decodeBytes(bytes: number[]): string {
  let out = '';
  let index = 0;
  while (index < bytes.length) {
    const first = bytes[index] ?? 0;
    const cont = (offset: number): number => {
      const value = bytes[index + offset];
      return value !== undefined && (value & 0xc0) === 0x80 ? value & 0x3f : -1;
    };
    if (first < 0x80) {
      out += String.fromCharCode(first);
      index += 1;
      continue;
    }
    if (first >= 0xc0 && first <= 0xdf && cont(1) >= 0) {
      out += String.fromCharCode(((first & 0x1f) << 6) | cont(1));
      index += 2;
      continue;
    }
    if (first >= 0xe0 && first <= 0xef && cont(1) >= 0 && cont(2) >= 0) {
      const point = ((first & 0x0f) << 12) | (cont(1) << 6) | cont(2);
      out += point >= 0xd800 && point <= 0xdfff ? '\ufffd' : String.fromCharCode(point);
      index += 3;
      continue;
    }
    if (first >= 0xf0 && first <= 0xf7 && cont(1) >= 0 && cont(2) >= 0 && cont(3) >= 0) {
      const point = ((first & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
      out += point <= 0x10ffff ? String.fromCodePoint(point) : '\ufffd';
      index += 4;
      continue;
    }
    out += String.fromCharCode(first);
    index += 1;
  }
  return out;
}

/** Percent-decoding (also %uXXXX and, when `plusAsSpace`, '+'). */
export function urlDecode(input: string, plusAsSpace = true): string | null {
  if (!input.includes('%') && !(plusAsSpace && input.includes('+'))) return null;
  let out = '';
  let bytes: number[] = [];
  let changed = false;
  const flush = () => {
    if (bytes.length > 0) out += decodeBytes(bytes);
    bytes = [];
  };
  for (let index = 0; index < input.length; index++) {
    const code = input.charCodeAt(index);
    if (code === 37 /* % */) {
      const high = hexValue(input.charCodeAt(index + 1));
      const low = hexValue(input.charCodeAt(index + 2));
      if (high >= 0 && low >= 0) {
        bytes.push(high * 16 + low);
        index += 2;
        changed = true;
        continue;
      }
      const next = input.charCodeAt(index + 1);
      if (next === 117 || next === 85 /* u U */) {
        const digits = [2, 3, 4, 5].map((offset) => hexValue(input.charCodeAt(index + offset)));
        if (digits.every((digit) => digit >= 0)) {
          flush();
          out += String.fromCharCode(digits.reduce((sum, digit) => sum * 16 + digit, 0));
          index += 5;
          changed = true;
          continue;
        }
      }
    }
    flush();
    if (plusAsSpace && code === 43) {
      out += ' ';
      changed = true;
    } else out += input[index];
  }
  flush();
  return changed && out !== input ? out : null;
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  lt: '<', gt: '>', amp: '&', quot: '"', apos: "'", nbsp: ' ', tab: '\t', newline: '\n', colon: ':', sol: '/', bsol: '\\',
  lpar: '(', rpar: ')', semi: ';', equals: '=', period: '.', comma: ',', excl: '!', num: '#', dollar: '$', percnt: '%',
  grave: '`', lsqb: '[', rsqb: ']', lbrack: '[', rbrack: ']', lcub: '{', rcub: '}', lbrace: '{', rbrace: '}', vert: '|',
  verbar: '|', ast: '*', plus: '+', quest: '?', commat: '@', hat: '^', lowbar: '_', dash: '-', hyphen: '-',
};
const ENTITY = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-zA-Z]{2,8}));?/g;

export function htmlDecode(input: string): string | null {
  if (!input.includes('&')) return null;
  let changed = false;
  const out = input.replace(ENTITY, (whole, decimal: string | undefined, hex: string | undefined, name: string | undefined) => {
    let point: number | undefined;
    if (decimal !== undefined) point = Number(decimal);
    else if (hex !== undefined) point = Number.parseInt(hex, 16);
    if (point !== undefined) {
      if (point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) return whole;
      changed = true;
      return String.fromCodePoint(point);
    }
    const mapped = name === undefined ? undefined : NAMED_ENTITIES[name.toLowerCase()];
    if (mapped === undefined) return whole;
    changed = true;
    return mapped;
  });
  return changed ? out : null;
}

const ESCAPE = /\\(?:x([0-9a-fA-F]{2})|u\{([0-9a-fA-F]{1,6})\}|u([0-9a-fA-F]{4}))/g;

/** JavaScript/C/JSON escapes: \xHH, \uHHHH, \u{H…}. */
export function escapeDecode(input: string): string | null {
  if (!input.includes('\\')) return null;
  let changed = false;
  const out = input.replace(ESCAPE, (whole, x: string | undefined, braced: string | undefined, u: string | undefined) => {
    const point = Number.parseInt(x ?? braced ?? u ?? '', 16);
    if (!Number.isFinite(point) || point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) return whole;
    changed = true;
    return String.fromCodePoint(point);
  });
  return changed ? out : null;
}

/** True when decoded bytes look like text a human or interpreter would read. */
export function looksLikeText(text: string): boolean {
  if (text.length < 4) return false;
  let printable = 0;
  let letters = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 0xfffd) continue;
    if ((code >= 0x20 && code < 0x7f) || code === 9 || code === 10 || code === 13) printable++;
    else if (code >= 0xa0 && code !== 0xfffd) printable += 0.5; // non-Latin text counts half
    if ((code >= 65 && code <= 90) || (code >= 97 && code <= 122)) letters++;
  }
  return printable / text.length >= 0.9 && letters / text.length >= 0.3;
}

// Base64 (standard or url-safe) runs of at least 16 characters; bounded to 64 KB by the caller.
const BASE64_RUN = /[A-Za-z0-9+/_-]{16,}={0,2}/g;
const ONLY_WORD = /^[A-Za-z]+$/;
const ONLY_DIGITS = /^[0-9]+$/;

export function base64Decode(input: string): string | null {
  let changed = false;
  const out = input.replace(BASE64_RUN, (run) => {
    if (ONLY_WORD.test(run) && run.length < 40) return run; // long plain words are not payloads
    if (ONLY_DIGITS.test(run)) return run;
    const decoded = Buffer.from(run, 'base64').toString('utf8');
    if (!looksLikeText(decoded)) return run;
    changed = true;
    return ` ${decoded} `;
  });
  return changed ? out : null;
}

// Hex runs of at least 12 digits (6 bytes), optionally 0x-prefixed.
const HEX_RUN = /(?:0x)?[0-9a-fA-F]{12,}/g;

export function hexDecode(input: string): string | null {
  let changed = false;
  const out = input.replace(HEX_RUN, (run) => {
    const digits = run.startsWith('0x') || run.startsWith('0X') ? run.slice(2) : run;
    if (digits.length % 2 !== 0 || ONLY_DIGITS.test(digits)) return run;
    let decoded = '';
    for (let index = 0; index < digits.length; index += 2) {
      decoded += String.fromCharCode(hexValue(digits.charCodeAt(index)) * 16 + hexValue(digits.charCodeAt(index + 1)));
    }
    if (!looksLikeText(decoded)) return run;
    changed = true;
    return ` ${decoded} `;
  });
  return changed ? out : null;
}

