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
    // Five- and six-byte forms (obsolete, only ever overlong): "%f8%80%80%80%af" is "/" to
    // lenient decoders; anything that is not ASCII becomes U+FFFD.
    if (first >= 0xf8 && first <= 0xfd) {
      const length = first >= 0xfc ? 6 : 5;
      let point = first & (length === 6 ? 0x01 : 0x03);
      let valid = true;
      for (let offset = 1; offset < length; offset++) {
        const value = cont(offset);
        if (value < 0) {
          valid = false;
          break;
        }
        point = point * 64 + value;
      }
      if (valid) {
        out += point < 0x80 ? String.fromCharCode(point) : '\ufffd';
        index += length;
        continue;
      }
    }
    // A lead byte without its continuation: overlong-encoding probes such as %c0%2f are read as
    // IIS-style decoders read them (the stray C0/C1/E0 lead is dropped); others map to Latin-1.
    if (first !== 0xc0 && first !== 0xc1 && first !== 0xe0) out += String.fromCharCode(first);
    index += 1;
  }
  return out;
}

/** Whether `input` holds a percent escape urlDecode decodes (%HH or %uHHHH): without one (and a plus read as a space), it changes nothing. */
function hasPercentEscape(input: string): boolean {
  for (let index = input.indexOf('%'); index >= 0; index = input.indexOf('%', index + 1)) {
    if (hexValue(input.charCodeAt(index + 1)) >= 0 && hexValue(input.charCodeAt(index + 2)) >= 0) return true;
    const next = input.charCodeAt(index + 1);
    if ((next === 117 || next === 85) && [2, 3, 4, 5].every((offset) => hexValue(input.charCodeAt(index + offset)) >= 0)) return true;
  }
  return false;
}

/** Percent-decoding (also %uXXXX and, when `plusAsSpace`, '+'). */
export function urlDecode(input: string, plusAsSpace = true): string | null {
  if (!(plusAsSpace && input.includes('+')) && !hasPercentEscape(input)) return null;
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

const ONLY_WORD = /^[A-Za-z]+$/;

function capitalShare(word: string): number {
  let capitals = 0;
  for (let index = 0; index < word.length; index++) {
    const code = word.charCodeAt(index);
    if (code >= 65 && code <= 90) capitals++;
  }
  return capitals / word.length;
}
const ONLY_DIGITS = /^[0-9]+$/;

function isBase64Char(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 43 || code === 47 || code === 95 || code === 45;
}

/**
 * Replaces each maximal run of characters of class `member` (MEMBER_BASE64 or MEMBER_HEX, all
 * ASCII: isBase64Char, isHexChar) at least `minimum` long with
 * `replace(run)` when it returns a string. One linear pass, no regular expression.
 */
function replaceRuns(input: string, member: number, minimum: number, replace: (run: string) => string | null): string | null {
  let out = '';
  let last = 0;
  let changed = false;
  let index = 0;
  while (index < input.length) {
    if (!isMember(input.charCodeAt(index), member)) {
      index++;
      continue;
    }
    const start = index;
    while (index < input.length && isMember(input.charCodeAt(index), member)) index++;
    let end = index;
    while (end < input.length && end - index < 2 && input.charCodeAt(end) === 61 /* = */) end++;
    if (index - start < minimum) continue;
    const replacement = replace(input.slice(start, end));
    if (replacement === null) continue;
    out += input.slice(last, start) + replacement;
    last = end;
    index = end;
    changed = true;
  }
  return changed ? out + input.slice(last) : null;
}

// Base64 (standard or url-safe) runs of at least 16 characters and hex runs of at least 12
// digits; bounded to 64 KB by the caller. Most text has neither: one pass over it answers both
// questions, and the answer for the last text asked about is kept for the other decoder.
const RUN_CLASS = new Uint8Array(128);
/** replaceRuns' classes in RUN_CLASS: isBase64Char, and isHexChar with the "x" of 0x (both accept ASCII only). */
const MEMBER_BASE64 = 4;
const MEMBER_HEX = 8;
for (let code = 0; code < 128; code++) {
  if (isBase64Char(code)) RUN_CLASS[code]! |= 1 | MEMBER_BASE64;
  if (isHexChar(code) && code !== 120 && code !== 88) RUN_CLASS[code]! |= 2; // digits only, not the "x" of 0x
  if (isHexChar(code)) RUN_CLASS[code]! |= MEMBER_HEX;
}

function isMember(code: number, member: number): boolean {
  return code < 128 && (RUN_CLASS[code]! & member) !== 0;
}
let hintedText: string | undefined;
let hintedRuns = 0;

/** Bit 1: a base64 run of 16 or more characters; bit 2: a hex run of 12 or more digits. */
function longRuns(input: string): number {
  if (input === hintedText) return hintedRuns;
  let base64 = 0;
  let hex = 0;
  let found = 0;
  for (let index = 0; index < input.length && found !== 3; index++) {
    const code = input.charCodeAt(index);
    const kind = code < 128 ? RUN_CLASS[code]! : 0;
    if ((kind & 1) === 0) base64 = 0;
    else if (++base64 >= 16) found |= 1;
    if ((kind & 2) === 0) hex = 0;
    else if (++hex >= 12) found |= 2;
  }
  hintedText = input;
  hintedRuns = found;
  return found;
}

export function base64Decode(input: string): string | null {
  if ((longRuns(input) & 1) === 0) return null;
  return replaceRuns(input, MEMBER_BASE64, 16, (run) => {
    const body = run.replace(/=+$/, '');
    // Long plain words are not payloads; a letters-only run with base64's case mix (about as many
    // capitals as small letters, unlike camelCase) still is: "XyQkTkRfRlVOQyQkXwo".
    if (ONLY_WORD.test(body) && body.length < 40 && capitalShare(body) < 0.3) return null;
    if (ONLY_DIGITS.test(body)) return null;
    const decoded = Buffer.from(run, 'base64').toString('utf8');
    return looksLikeText(decoded) ? ` ${decoded} ` : null;
  });
}

function isHexChar(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 97 && code <= 102) || (code >= 65 && code <= 70) || code === 120 || code === 88;
}

// Hex runs of at least 12 digits (6 bytes), optionally 0x-prefixed.
export function hexDecode(input: string): string | null {
  if ((longRuns(input) & 2) === 0) return null;
  return replaceRuns(input, MEMBER_HEX, 12, (run) => {
    const digits = run.startsWith('0x') || run.startsWith('0X') ? run.slice(2) : run;
    if (digits.length % 2 !== 0 || ONLY_DIGITS.test(digits) || /[xX=]/.test(digits)) return null;
    let decoded = '';
    for (let index = 0; index < digits.length; index += 2) {
      decoded += String.fromCharCode(hexValue(digits.charCodeAt(index)) * 16 + hexValue(digits.charCodeAt(index + 1)));
    }
    return looksLikeText(decoded) ? ` ${decoded} ` : null;
  });
}


// Single 0xHH tokens for path punctuation ("0x2e0x2e/", "..0x5c"): filter-evasion spellings.
const HEX_PUNCTUATION = /0x(2e|2f|5c|3a|3c|3e|27|22|00)/gi;

export function hexPunctuationDecode(input: string): string | null {
  if (!input.includes('0x') && !input.includes('0X')) return null;
  let changed = false;
  const out = input.replace(HEX_PUNCTUATION, (_whole, byte: string) => {
    changed = true;
    return String.fromCharCode(Number.parseInt(byte, 16));
  });
  return changed ? out : null;
}

// Numeric host spellings after a scheme or userinfo ("http://2130706433", "http:0251.0376.0251.0376",
// "//0x7f.1"), read with inet_aton rules and rewritten as dotted decimal.
const NUMERIC_HOST = /(\/\/|@|https?:)((?:0x[0-9a-f]{1,8}|[0-9]{1,10})(?:\.(?:0x[0-9a-f]{1,8}|[0-9]{1,10})){0,3})(?![0-9a-z.])/gi;

function parsePart(part: string): number {
  if (/^0x/i.test(part)) return Number.parseInt(part.slice(2), 16);
  if (part.length > 1 && part.startsWith('0')) return /^[0-7]+$/.test(part) ? Number.parseInt(part, 8) : Number.NaN;
  return Number(part);
}

export function canonicalIp(host: string): string | null {
  const parts = host.split('.').map(parsePart);
  if (parts.some((part) => !Number.isFinite(part) || part < 0)) return null;
  const limits = [[0xffffffff], [0xff, 0xffffff], [0xff, 0xff, 0xffff], [0xff, 0xff, 0xff, 0xff]][parts.length - 1];
  if (limits === undefined || parts.some((part, index) => part > limits[index]!)) return null;
  let value = 0;
  const last = parts.length - 1;
  parts.forEach((part, index) => {
    value += index === last ? part : part * 2 ** (8 * (3 - index));
  });
  if (value > 0xffffffff) return null;
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

export function ipDecode(input: string): string | null {
  let changed = false;
  const out = input.replace(NUMERIC_HOST, (whole, prefix: string, host: string) => {
    const canonical = canonicalIp(host);
    if (canonical === null || canonical === host) return whole;
    changed = true;
    return `${prefix === 'http:' || prefix === 'https:' ? `${prefix}//` : prefix}${canonical}`;
  });
  return changed ? out : null;
}

// Backslash-escaped path punctuation ("\.\.\/"), a filter-evasion spelling.
const ESCAPED_PUNCTUATION = /\\([./\\])/g;

export function unescapePunctuation(input: string): string | null {
  if (!input.includes('\\.') && !input.includes('\\/')) return null;
  const out = input.replace(ESCAPED_PUNCTUATION, '$1');
  return out === input ? null : out;
}

// Private-use code points (e.g. %uF025, %uEFC8) used by traversal fuzzers as separators that
// some Windows best-fit mappings turn into "/" or "\\"; read as "/" in the HTTP scan variant.
const PRIVATE_USE = /[\ue000-\uf8ff]/g;

export function privateUseAsSeparator(input: string): string | null {
  const out = input.replace(PRIVATE_USE, '/');
  return out === input ? null : out;
}

// CSS escapes ("\\0075\\0072\\006C", "\\3c"), which browsers decode inside style attributes.
const CSS_ESCAPE = /\\([0-9a-f]{2,6})\s?/gi;

export function cssEscapeDecode(input: string): string | null {
  if (!input.includes('\\')) return null;
  let changed = false;
  const out = input.replace(CSS_ESCAPE, (whole, hex: string) => {
    const point = Number.parseInt(hex, 16);
    if (point === 0 || point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) return whole;
    changed = true;
    return String.fromCodePoint(point);
  });
  return changed ? out : null;
}

// C-style control escapes ("\\nid\\n"): newline smuggling into shells and headers.
const CONTROL_ESCAPE = /\\([nrt0])/g;
const CONTROL: Readonly<Record<string, string>> = { n: '\n', r: '\r', t: '\t', '0': '\u0000' };

export function controlEscapeDecode(input: string): string | null {
  if (!input.includes('\\')) return null;
  const out = input.replace(CONTROL_ESCAPE, (_whole, name: string) => CONTROL[name] ?? '');
  return out === input ? null : out;
}

// IIS-style lenient hex: a decoder that does not validate digits reads "%c0%9v", "%c1%pc" or
// "%bg%qf" as the overlong pairs C0 AF ("/") and C1 9C ("\\"). Only such pairs (a C0/C1 lead and
// a continuation byte, at least one digit out of range) are rewritten.
const IIS_PAIR = /%([0-9a-z]{2})%([0-9a-z]{2})/gi;

function iisDigit(code: number): number {
  const lower = code | 0x20;
  if (code >= 48 && code <= 57) return code - 48;
  if (lower >= 97 && lower <= 122) return lower - 87;
  return -1;
}

function iisByte(pair: string): number {
  return (iisDigit(pair.charCodeAt(0)) * 16 + iisDigit(pair.charCodeAt(1))) & 0xff;
}

export function iisOverlongDecode(input: string): string | null {
  if (!input.includes('%')) return null;
  let changed = false;
  const out = input.replace(IIS_PAIR, (whole, lead: string, next: string) => {
    if (/^[0-9a-f]{2}$/i.test(lead) && /^[0-9a-f]{2}$/i.test(next)) return whole;
    const first = iisByte(lead);
    const second = iisByte(next);
    if ((first !== 0xc0 && first !== 0xc1) || (second & 0xc0) !== 0x80) return whole;
    changed = true;
    return String.fromCharCode(((first & 0x1f) << 6) | (second & 0x3f));
  });
  return changed ? out : null;
}

// Shell quoting and expansion tricks that split a command word without changing what the shell
// runs: "c'a't", "ca\\t", "c$@at", "c${x}url", "cat${IFS}/etc/pa[s]swd". Read as the shell reads them
// in an HTTP scan variant of its own (only empty quote pairs and quotes inside a word are
// dropped, so JSON and SQL quoting keep their shape; the original is scanned as well).
const SHELL_IFS = /\$\{ifs\}|\$ifs(?:\$\d|\b)/gi;
// Empty expansions: $@, $*, ${var}, empty substitutions ($(), ``, <(), >()), special parameters
// ($$, $!, $?, $-, $_, $1…$9) and a short unset variable glued to the end of a word ("uname$u").
const SHELL_EMPTY = /\$(?:[@*]|\{[a-z_][a-z0-9_]{0,20}\}|\(\)|(?<=[a-z]\$)(?:[$!?_-]|[1-9])(?=[a-z/])|(?<=[a-z]\$)[a-z_][a-z0-9_]{0,10}(?=[\s;|&'"]|$))|\x60\x60|[<>]\(\)|''|""|['"](?<=[a-z]['"])(?=[a-z])|\\(?=[a-z/])/gi;
// Quotes around a whole command word ("'curl' x", '"time" who'): dropped at the word's edges.
const SHELL_WORD_QUOTE = /['"](?:(?<=(?:^|[\s;|&=(\x60])['"])(?=[a-z])|(?<=[a-z0-9]['"])(?=[\s;|&)]|$))/gim;
const SHELL_CLASS = /\[([a-z0-9.?])\/{0,10}\]/gi;

export function shellDeobfuscate(input: string): string | null {
  if (!/[$'"\\[\x60<>]/.test(input)) return null;
  const out = input.replace(SHELL_IFS, ' ').replace(SHELL_EMPTY, '').replace(SHELL_WORD_QUOTE, '').replace(SHELL_CLASS, '$1');
  return out === input ? null : out;
}
