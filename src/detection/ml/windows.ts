/**
 * Sentence windows for the semantic tier (issue #32). One embedding of a whole document dilutes
 * an instruction planted in it, so a long text is scored window by window: sentences (and lines)
 * are packed, in order, into windows of at most `WINDOW_CHARS` characters; a sentence longer than
 * that is cut at white space. Training (scripts/train-semantic.ts) and the tier use this same
 * function, so the classifier sees at serving time the units it was fitted on.
 */

/** Longest window, in characters (about 60 words: one to three sentences). */
export const WINDOW_CHARS = 320;

/** Sentence ends and line breaks; the separator stays with the sentence before it. */
const SENTENCE_END = /[.!?。！？;]+["')\]]*\s+|\n+/g;

/** Splits `text` into windows of whole sentences, each at most `WINDOW_CHARS` long (trimmed, non-empty). */
export function sentenceWindows(text: string, windowChars: number = WINDOW_CHARS): string[] {
  const sentences: string[] = [];
  let last = 0;
  SENTENCE_END.lastIndex = 0;
  for (let match = SENTENCE_END.exec(text); match !== null; match = SENTENCE_END.exec(text)) {
    const end = match.index + match[0].length;
    pushPieces(sentences, text.slice(last, end), windowChars);
    last = end;
  }
  pushPieces(sentences, text.slice(last), windowChars);
  const windows: string[] = [];
  let current = '';
  for (const sentence of sentences) {
    if (current !== '' && current.length + 1 + sentence.length > windowChars) {
      windows.push(current);
      current = '';
    }
    current = current === '' ? sentence : `${current} ${sentence}`;
  }
  if (current !== '') windows.push(current);
  return windows;
}

/** Adds a trimmed sentence, cut at white space into pieces of at most `windowChars`. */
function pushPieces(into: string[], raw: string, windowChars: number): void {
  let sentence = raw.trim();
  while (sentence.length > windowChars) {
    let cut = sentence.lastIndexOf(' ', windowChars);
    if (cut < windowChars / 2) cut = windowChars;
    into.push(sentence.slice(0, cut).trim());
    sentence = sentence.slice(cut).trim();
  }
  if (sentence !== '') into.push(sentence);
}

/**
 * At most `limit` windows, spread over the text: the first and the last always, the rest evenly
 * between them (a planted sentence is as likely in the middle as at either end). Deterministic,
 * so a text costs the same embeddings every time it is seen.
 */
export function spreadWindows(windows: readonly string[], limit: number): string[] {
  if (windows.length <= limit) return [...windows];
  if (limit <= 1) return windows.slice(0, 1);
  const chosen: string[] = [];
  for (let index = 0; index < limit; index += 1) chosen.push(windows[Math.round((index * (windows.length - 1)) / (limit - 1))] as string);
  return chosen;
}
