/**
 * Invisible-character handling. Posture: characters a human reviewer cannot see are removed
 * before matching, and counted, because their only common use in prompts and API parameters is
 * to split keywords past filters or to smuggle text (Unicode tag characters, "ASCII smuggling").
 * Tag characters (U+E0000 block) are not just dropped: their ASCII shadow is decoded so the
 * hidden message is scanned too. Emoji joiners (U+200D between two pictographs) are kept.
 */

export interface InvisibleResult {
  readonly text: string;
  /** Zero-width and format characters removed (U+200B..U+200F, U+2060..U+2064, U+FEFF, U+00AD, …). */
  readonly zeroWidth: number;
  /** Bidirectional controls removed (U+202A..U+202E, U+2066..U+2069, U+061C). */
  readonly bidi: number;
  /** Tag characters removed (U+E0000..U+E007F). */
  readonly tags: number;
  /** ASCII text hidden in tag characters ('' when none). */
  readonly tagText: string;
  /** Variation selectors removed (U+FE00..U+FE0F, U+E0100..U+E01EF) when used outside emoji. */
  readonly selectors: number;
}

const ZERO_WIDTH = new Set([0x200b, 0x200c, 0x200d, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xfeff, 0x00ad, 0x180e, 0x034f, 0x115f, 0x1160, 0x3164, 0xffa0, 0x17b4, 0x17b5]);
const BIDI = new Set([0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x061c]);

// Cheap test so that plain text skips the code-point walk.
const HAS_CANDIDATE = /[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\u3164\ufe00-\ufe0f\ufeff\uffa0\udb40]/;

function isPictograph(codePoint: number | undefined): boolean {
  return codePoint !== undefined && codePoint >= 0x2190 && !(codePoint >= 0xe0000 && codePoint <= 0xe01ef);
}

export function removeInvisible(input: string): InvisibleResult {
  if (!HAS_CANDIDATE.test(input)) return { text: input, zeroWidth: 0, bidi: 0, tags: 0, tagText: '', selectors: 0 };
  let zeroWidth = 0;
  let bidi = 0;
  let tags = 0;
  let selectors = 0;
  let tagText = '';
  // Walked by code point (a surrogate pair is one point, a lone surrogate its own); the points
  // kept are copied as stretches of the input between the points removed, not one by one.
  let out = '';
  let kept = 0;
  let previous: number | undefined;
  for (let index = 0; index < input.length; ) {
    const point = input.codePointAt(index)!;
    const width = point > 0xffff ? 2 : 1;
    const next = index + width < input.length ? input.codePointAt(index + width) : undefined;
    const remove = point === 0x200d ? !(isPictograph(previous) && isPictograph(next)) && ZERO_WIDTH.has(point) : removed(point, previous);
    if (remove) {
      if (ZERO_WIDTH.has(point)) zeroWidth++;
      else if (BIDI.has(point)) bidi++;
      else if (point >= 0xe0000 && point <= 0xe007f) {
        tags++;
        const shadow = point - 0xe0000;
        if (shadow >= 0x20 && shadow < 0x7f) tagText += String.fromCharCode(shadow);
      } else selectors++;
      out += input.slice(kept, index);
      kept = index + width;
    }
    previous = point;
    index += width;
  }
  return { text: kept === 0 ? input : out + input.slice(kept), zeroWidth, bidi, tags, tagText, selectors };
}

/** Whether a code point other than U+200D is removed (`previous`: the point before it). */
function removed(point: number, previous: number | undefined): boolean {
  if (point < 0xad) return false;
  if (ZERO_WIDTH.has(point) || BIDI.has(point)) return true;
  if (point >= 0xe0000 && point <= 0xe007f) return true;
  if ((point >= 0xfe00 && point <= 0xfe0f) || (point >= 0xe0100 && point <= 0xe01ef)) return !((point === 0xfe0f || point === 0xfe0e) && isPictograph(previous));
  return false;
}
