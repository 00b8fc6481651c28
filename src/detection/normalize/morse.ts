/**
 * Morse-code decoding for natural-language inputs (".. --. -. --- .-. ." = "ignore"): an
 * instruction spelled in Morse passes every word pattern, and models read Morse. A run of at least
 * MIN_LETTERS dot/dash groups, letters separated by one space and words by two or more spaces, a
 * slash or a bar, is replaced by its decoding. One linear pass with no regular expressions; a run
 * with too many unknown groups is left alone (a row of dashes in a table is not Morse).
 */

const CODE: Readonly<Record<string, string>> = {
  '.-': 'a', '-...': 'b', '-.-.': 'c', '-..': 'd', '.': 'e', '..-.': 'f', '--.': 'g', '....': 'h', '..': 'i', '.---': 'j',
  '-.-': 'k', '.-..': 'l', '--': 'm', '-.': 'n', '---': 'o', '.--.': 'p', '--.-': 'q', '.-.': 'r', '...': 's', '-': 't',
  '..-': 'u', '...-': 'v', '.--': 'w', '-..-': 'x', '-.--': 'y', '--..': 'z',
  '-----': '0', '.----': '1', '..---': '2', '...--': '3', '....-': '4', '.....': '5', '-....': '6', '--...': '7', '---..': '8', '----.': '9',
  '.-.-.-': '.', '--..--': ',', '..--..': '?', '-.-.--': '!', '.----.': "'", '-..-.': '/', '-....-': '-', '---...': ':', '-.-.-.': ';',
  '.-..-.': '"', '-.--.': '(', '-.--.-': ')', '-...-': '=', '.-.-.': '+', '.--.-.': '@',
};

/** Fewer dot/dash groups than this in a run: not treated as Morse. */
export const MIN_LETTERS = 8;
/** Share of groups in a run that must be valid Morse letters. */
const MIN_VALID_SHARE = 0.8;

function symbol(code: number): '.' | '-' | null {
  if (code === 0x2e || code === 0xb7 || code === 0x2022 || code === 0x2219) return '.'; // . · • ∙
  if (code === 0x2d || code === 0x5f || code === 0x2212 || code === 0x2013 || code === 0x2014) return '-'; // - _ − – —
  return null;
}

function isGap(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x2f || code === 0x7c; // space, tab, / |
}

export interface MorseResult {
  readonly text: string;
  readonly runs: number;
}

/** Decodes every Morse run of `text`; null when there is none. */
export function morseDecode(text: string): MorseResult | null {
  // Cheap native prefilter: Morse of any real text has a dot next to a dash somewhere.
  if (!text.includes('.-') && !text.includes('-.') && !/[·•∙−–—]/.test(text)) return null;
  let output = '';
  let copied = 0;
  let runs = 0;
  let index = 0;
  while (index < text.length) {
    if (symbol(text.charCodeAt(index)) === null) {
      index += 1;
      continue;
    }
    // A candidate run: dot/dash groups separated by gaps.
    const start = index;
    let end = index;
    let groups = 0;
    let valid = 0;
    let decoded = '';
    let group = '';
    let gap = '';
    let cursor = index;
    for (; cursor <= text.length; cursor += 1) {
      const code = cursor < text.length ? text.charCodeAt(cursor) : -1;
      const mark = code < 0 ? null : symbol(code);
      if (mark !== null) {
        if (group === '' && gap !== '') decoded += gap.length >= 2 || gap.includes('/') || gap.includes('|') ? ' ' : '';
        gap = '';
        group += mark;
        continue;
      }
      if (group !== '') {
        groups += 1;
        const letter = group.length <= 6 ? CODE[group] : undefined;
        if (letter !== undefined) valid += 1;
        decoded += letter ?? '?';
        group = '';
        end = cursor;
      }
      if (code >= 0 && isGap(code) && gap.length < 8) gap += String.fromCharCode(code);
      else break;
    }
    if (groups >= MIN_LETTERS && valid >= MIN_VALID_SHARE * groups) {
      output += `${text.slice(copied, start)} ${decoded} `;
      copied = end;
      runs += 1;
    }
    index = Math.max(end, start + 1);
  }
  if (runs === 0) return null;
  return { text: output + text.slice(copied), runs };
}
