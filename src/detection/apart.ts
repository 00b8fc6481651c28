/**
 * How far one sentence of a text stands from the rest of it by its words (issue #32 item 4,
 * det-b1-11): the cheap stand-in for the semantic tier's embedding distance that det-b1-10
 * measured (docs/detection.md). A planted instruction is about something else than the data it
 * sits in; a data source's own request (an e-mail's ask, a README's step) shares the data's words.
 *
 * The representation is a hashed bag of word stems: each run of letters or digits of four
 * characters or more, lowercased and cut to its first six (so "summary" and "summarise" meet,
 * "the", "and", "you" and other short function words are left out), hashed into 4,096 buckets and
 * weighted by log(1 + count). The distance is 1 − the cosine between the sentence's bag and the
 * bag of the text without it. Linear in the text: every character is read once for the text's
 * bag and once more for the sentence's; no regular expression, no allocation per call.
 */

const BUCKETS = 4096;
const MASK = BUCKETS - 1;
/** Shortest word read (shorter ones are mostly function words). */
const MIN_WORD = 4;
/** Characters of a word that make its stem. */
const STEM = 6;

// Scratch bags, reset after each call through their touched-bucket lists (single-threaded).
const textBag = new Float64Array(BUCKETS);
const sentenceBag = new Float64Array(BUCKETS);
const textTouched = new Int32Array(BUCKETS);
const sentenceTouched = new Int32Array(BUCKETS);

/** Adds the stems of `text[start, end)` to `bag`, listing newly touched buckets in `touched`; returns the new touched count. */
function addStems(text: string, start: number, end: number, bag: Float64Array, touched: Int32Array, count: number): number {
  let hash = 0;
  let length = 0;
  for (let i = start; i <= end; i++) {
    let code = i < end ? text.charCodeAt(i) : 32;
    if (code >= 65 && code <= 90) code += 32;
    if ((code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code > 127) {
      if (length < STEM) hash = (Math.imul(hash, 31) + code) | 0;
      length++;
      continue;
    }
    if (length >= MIN_WORD) {
      const bucket = (hash ^ (hash >>> 12)) & MASK;
      if (bag[bucket] === 0) touched[count++] = bucket;
      bag[bucket]! += 1;
    }
    hash = 0;
    length = 0;
  }
  return count;
}

/**
 * 1 − cosine between the word-stem bag of `text[start, end)` and that of the rest of `text`
 * (0: the sentence's words are the text's; 1: it shares none of them); `undefined` when the
 * sentence or the rest has no word of four letters or more.
 */
export function distanceFromRest(text: string, start: number, end: number): number | undefined {
  const textCount = addStems(text, 0, text.length, textBag, textTouched, 0);
  const sentenceCount = addStems(text, start, end, sentenceBag, sentenceTouched, 0);
  let restNorm = 0;
  for (let i = 0; i < textCount; i++) {
    const bucket = textTouched[i]!;
    restNorm += Math.log1p(Math.max(0, textBag[bucket]! - sentenceBag[bucket]!)) ** 2;
  }
  let dot = 0;
  let sentenceNorm = 0;
  for (let i = 0; i < sentenceCount; i++) {
    const bucket = sentenceTouched[i]!;
    const own = Math.log1p(sentenceBag[bucket]!);
    dot += own * Math.log1p(Math.max(0, textBag[bucket]! - sentenceBag[bucket]!));
    sentenceNorm += own * own;
    sentenceBag[bucket] = 0;
  }
  for (let i = 0; i < textCount; i++) textBag[textTouched[i]!] = 0;
  if (sentenceNorm === 0 || restNorm === 0) return undefined;
  return 1 - dot / Math.sqrt(sentenceNorm * restNorm);
}
