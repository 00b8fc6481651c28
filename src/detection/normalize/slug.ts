/**
 * Sentences spelled as slugs: words joined by hyphens, underscores or plus signs inside a URL's
 * path, query or fragment, or any other run without spaces ("…/settings#you-must-create-a-token-
 * and-ignore-all-text-below"). A browser shows such a link as text and a web agent reads it as a
 * sentence, so the scanner reads it as one too: in every run of at least MIN_WORDS words joined by
 * one of these separators, the separators become spaces. Same length, so offsets hold. Short slugs
 * ("/blog/how-to-ignore-files") are spelled as well; they read as the titles they are.
 * A character loop, no regular expression.
 */

/** Fewest words joined by separators for a run to be read as a sentence. */
const MIN_WORDS = 6;

const isSeparator = (code: number) => code === 45 || code === 95 || code === 43; // - _ +
const isLetter = (code: number) => (code >= 97 && code <= 122) || (code >= 65 && code <= 90);
/** Characters that end a run: whitespace and the delimiters of a URL's parts and of markup. */
const isBreak = (code: number) =>
  code <= 32 || code === 47 || code === 35 || code === 63 || code === 38 || code === 61 || code === 40 || code === 41 || code === 91 || code === 93 || code === 60 || code === 62 || code === 34 || code === 39 || code === 96 || code === 124;

/** Replaces the separators of sentence-like slugs with spaces; null when there is none. */
export function spellSlugs(input: string): { text: string; runs: number } | null {
  let out: string[] | null = null;
  let runs = 0;
  let start = 0;
  const length = input.length;
  for (let index = 0; index <= length; index++) {
    if (index < length && !isBreak(input.charCodeAt(index))) continue;
    if (index - start >= MIN_WORDS * 2) {
      // Count the words of the run: letter-bearing pieces between separators.
      let words = 0;
      let letters = false;
      let separators = 0;
      for (let position = start; position < index; position++) {
        const code = input.charCodeAt(position);
        if (isSeparator(code)) {
          if (letters) words++;
          letters = false;
          separators++;
        } else if (isLetter(code)) letters = true;
      }
      if (letters) words++;
      if (words >= MIN_WORDS && separators >= MIN_WORDS - 1) {
        out ??= input.split('');
        for (let position = start; position < index; position++) if (isSeparator(input.charCodeAt(position))) out[position] = ' ';
        runs++;
      }
    }
    start = index + 1;
  }
  return out === null ? null : { text: out.join(''), runs };
}
