/**
 * The `llm_output` leak check: does a model's answer reveal the request's system prompt or a
 * configured secret/canary? Secrets are looked for verbatim and in the shapes extraction attacks
 * ask for: spelled out with separators ("p-a-s-s"), reversed, base64 or hex encoded, case
 * changed. The system prompt is compared by word n-grams (5-grams of the normalized words): a
 * share of the prompt's n-grams reappearing in the output, or a long verbatim run, is a leak.
 * Translation is not detected (it needs a model); T4 is the answer for that. Linear in the text
 * sizes (sets of n-grams; no regular expressions over untrusted input beyond simple scans).
 */
import { LRUCache } from 'lru-cache';
import type { Finding } from './types.ts';

const MAX_TEXT = 65_536;
const NGRAM = 5;
/** Share of the system prompt's n-grams found in the output that counts as a leak. */
const PROMPT_SHARE = 0.3;
/** Or this many of them (a long verbatim passage of a long prompt). */
const PROMPT_COUNT = 8;
const MIN_SECRET = 4;

export interface LeakContext {
  readonly systemPrompt?: string;
  readonly secrets?: readonly string[];
}

function wordsOf(text: string): string[] {
  return text.toLowerCase().normalize('NFKC').split(/[^\p{L}\p{N}]+/u).filter((word) => word.length > 0);
}

function ngrams(words: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (let index = 0; index + NGRAM <= words.length; index++) out.add(words.slice(index, index + NGRAM).join(' '));
  return out;
}

/**
 * A system prompt's n-grams, remembered for the last few prompts: an application sends the same
 * system prompt with every completion, and each answer's leak check (and a stream's tracker) would
 * otherwise read it into n-grams again (80-120 µs for 2 KB). A pure function of the prompt, so the
 * findings are the same; bounded by count and by characters (the sets are read, never changed).
 */
const promptGramCache = new LRUCache<string, ReadonlySet<string>>({ max: 16, maxSize: 262_144, sizeCalculation: (_grams, prompt) => Math.max(1, prompt.length) });
const NO_GRAMS: ReadonlySet<string> = new Set<string>();

function promptGramsOf(systemPrompt: string): ReadonlySet<string> {
  if (systemPrompt.length === 0) return NO_GRAMS;
  const prompt = systemPrompt.slice(0, MAX_TEXT);
  let grams = promptGramCache.get(prompt);
  if (grams === undefined) {
    grams = ngrams(wordsOf(prompt));
    promptGramCache.set(prompt, grams);
  }
  return grams;
}

/** Letters and digits only, lower-cased: "P-a s.s" → "pass". */
function compact(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

function decodedViews(output: string): string[] {
  const views: string[] = [];
  for (const token of output.match(/[A-Za-z0-9+/=_-]{8,}/g) ?? []) {
    if (views.length >= 64) break;
    if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(token) && token.length % 4 !== 1) {
      const decoded = Buffer.from(token.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8');
      if (/^[\x20-\x7e\s]{4,}$/.test(decoded)) views.push(decoded);
    }
    if (/^(?:[0-9a-fA-F]{2}){4,}$/.test(token)) views.push(Buffer.from(token, 'hex').toString('utf8'));
  }
  return views;
}

/** Findings for an output that leaks the system prompt or a secret. */
export function detectLeak(output: string, context: LeakContext): Finding[] {
  return leakDetector(context)(output);
}

/**
 * detectLeak with the context's own work done once (the prompt's n-grams, the secrets' needles):
 * for a streamed answer checked many times against the same context.
 */
export function leakDetector(context: LeakContext): (output: string) => Finding[] {
  const secrets = (context.secrets ?? []).filter((secret) => compact(secret).length >= MIN_SECRET).map((secret) => ({ plain: secret.toLowerCase(), needle: compact(secret) }));
  const prompt = context.systemPrompt ?? '';
  const promptGrams = promptGramsOf(prompt);
  return (output) => {
    const text = output.length > MAX_TEXT ? output.slice(0, MAX_TEXT) : output;
    const findings: Finding[] = [];
    if (secrets.length > 0) {
      const lower = text.toLowerCase();
      const compacted = compact(text);
      const reversed = [...compacted].reverse().join('');
      const decoded = decodedViews(text).map((view) => compact(view));
      for (const { plain, needle } of secrets) {
        let how: string | null = null;
        if (lower.includes(plain)) how = 'verbatim';
        else if (compacted.includes(needle)) how = 'spelled or split';
        else if (reversed.includes(needle)) how = 'reversed';
        else if (decoded.some((view) => view.includes(needle))) how = 'encoded';
        if (how !== null) {
          findings.push({ id: 'leak.secret', name: `Output reveals a configured secret (${how})`, category: 'exfiltration', confidence: 0.95, tier: 't1' });
          break;
        }
      }
    }
    if (promptGrams.size > 0) {
      const outputGrams = ngrams(wordsOf(text));
      // Reversed word order and reversed letters are the usual "say it backwards" shapes.
      const reversedGrams = ngrams(wordsOf([...text].reverse().join('')));
      let shared = 0;
      let sharedReversed = 0;
      for (const gram of promptGrams) {
        if (outputGrams.has(gram)) shared++;
        if (reversedGrams.has(gram)) sharedReversed++;
      }
      const best = Math.max(shared, sharedReversed);
      const share = best / promptGrams.size;
      if (share >= PROMPT_SHARE || best >= PROMPT_COUNT) {
        findings.push({ id: 'leak.system-prompt', name: `Output reveals the system prompt (${Math.round(share * 100)} % of its phrases)`, category: 'system-prompt-extraction', confidence: share >= 0.5 || best >= 2 * PROMPT_COUNT ? 0.9 : 0.7, tier: 't1' });
      }
    }
    return findings;
  };
}

/**
 * The system-prompt half of detectLeak for a streamed answer, fed delta by delta: each word that
 * arrives completes at most one n-gram (and one reversed), looked up in the prompt's, so the whole
 * answer so far is judged at every delta in time proportional to its length, with no window. Text
 * is taken up to its last white space (a word, or a letter and the mark or symbol NFKC folds into
 * it, may go on in the next delta) and tokenised as detectLeak tokenises the whole: forwards, and
 * reversed then read back, so the reversed phrases are detectLeak's too.
 */
export function promptLeakTracker(systemPrompt: string): { push(text: string): Finding[] } {
  const promptGrams = promptGramsOf(systemPrompt);
  const seen = new Set<string>();
  const seenReversed = new Set<string>();
  const forward: string[] = [];
  const backward: string[] = [];
  let carry = '';
  const take = (segment: string) => {
    for (const word of wordsOf(segment)) {
      forward.push(word);
      if (forward.length > NGRAM) forward.shift();
      if (forward.length === NGRAM) {
        const gram = forward.join(' ');
        if (promptGrams.has(gram)) seen.add(gram);
      }
    }
    // The segment's words as detectLeak's reversed text has them, back in reading order.
    const reversedWords = wordsOf([...segment].reverse().join('')).reverse();
    for (const word of reversedWords) {
      backward.push(word);
      if (backward.length > NGRAM) backward.shift();
      if (backward.length === NGRAM) {
        const gram = [...backward].reverse().join(' ');
        if (promptGrams.has(gram)) seenReversed.add(gram);
      }
    }
  };
  return {
    push(text) {
      if (promptGrams.size === 0) return [];
      const joined = carry + text;
      // Up to the last white space, looked for in the new text only (backwards); a run without any
      // is read anyway past CARRY_MAX.
      let cut = text.length;
      while (cut > 0 && !/\s/.test(text[cut - 1]!)) cut -= 1;
      let end = cut === 0 ? 0 : carry.length + cut;
      if (end === 0 && joined.length > CARRY_MAX) end = joined.length;
      carry = joined.slice(end);
      if (end > 0) take(joined.slice(0, end));
      const best = Math.max(seen.size, seenReversed.size);
      const share = best / promptGrams.size;
      if (share < PROMPT_SHARE && best < PROMPT_COUNT) return [];
      return [{ id: 'leak.system-prompt', name: `Output reveals the system prompt (${Math.round(share * 100)} % of its phrases)`, category: 'system-prompt-extraction', confidence: share >= 0.5 || best >= 2 * PROMPT_COUNT ? 0.9 : 0.7, tier: 't1' }];
    },
  };
}

/** Characters without white space a streamed answer may hold back before they are read as words anyway. */
const CARRY_MAX = 4_096;
