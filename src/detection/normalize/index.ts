/**
 * Normalization and evasion handling, applied before any matching. Posture: the scanner must see
 * what the interpreter (an LLM, a browser, a shell, a SQL engine) will eventually see, so the
 * input is bounded, stripped of invisible characters, Unicode-folded (NFKC, NFKD without marks,
 * homoglyphs), decoded layer by layer (URL, HTML entities, escapes, base64, hex, Morse; bounded depth
 * and size), leet-reconstructed, de-split, slug-spelled and unwrapped. Every step that fired is recorded as
 * evidence; every resulting text is a variant the T1 catalogue scans. Pure and synchronous.
 */
import type { Evidence, InspectKind } from '../types.ts';
import { foldConfusables, unicodeFold } from './confusables.ts';
import { base64Decode, controlEscapeDecode, cssEscapeDecode, escapeDecode, hexDecode, hexPunctuationDecode, htmlDecode, iisOverlongDecode, ipDecode, privateUseAsSeparator, shellDeobfuscate, unescapePunctuation, urlDecode } from './decode.ts';
import { entropyProfile, type EntropyProfile } from './entropy.ts';
import { removeInvisible } from './invisible.ts';
import { collapseStutter, reconstructLeet } from './leet.ts';
import { morseDecode } from './morse.ts';
import { spellSlugs } from './slug.ts';
import { joinSplitCharacters } from './split.ts';
import { unwrapPrompt } from './unwrap.ts';

export { shannonEntropy } from './entropy.ts';
export { spellSlugs } from './slug.ts';

/** Characters scanned at most (the rest is ignored and the decision says so). */
export const MAX_SCAN_LENGTH = 65_536;
export const MAX_DECODE_DEPTH = 4;
const MAX_VARIANTS = 10;
const MAX_TOTAL_VARIANT_LENGTH = 4 * MAX_SCAN_LENGTH;

export interface Variant {
  /** "canonical", "decoded:url", "decoded:base64+url", "leet", "char-split", "unwrapped", "tag-characters". */
  readonly name: string;
  /** Lower-cased text to scan. */
  readonly text: string;
}

export interface NormalizationSignals {
  readonly zeroWidth: number;
  readonly bidi: number;
  readonly tagCharacters: number;
  readonly variationSelectors: number;
  readonly homoglyphs: number;
  readonly mixedScriptWords: number;
  readonly unicodeFolded: boolean;
  readonly decodeLayers: number;
  readonly decodeKinds: readonly string[];
  readonly leetTokens: number;
  readonly splitRuns: number;
  readonly wrappers: readonly string[];
  readonly entropy: EntropyProfile;
}

export interface Normalized {
  readonly variants: readonly Variant[];
  readonly evidence: readonly Evidence[];
  readonly signals: NormalizationSignals;
  readonly truncated: boolean;
  readonly length: number;
}

export interface NormalizeOptions {
  readonly kind?: InspectKind;
  readonly maxLength?: number;
  readonly maxDepth?: number;
}

const SQL_COMMENT = /\/\*!?\d{0,6}|\*\//g;

function bound(text: string, maxLength: number): string {
  if (text.length <= maxLength) return text;
  let end = maxLength;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // do not cut a surrogate pair
  return text.slice(0, end);
}

interface CanonicalStep {
  readonly text: string;
  readonly zeroWidth: number;
  readonly bidi: number;
  readonly tags: number;
  readonly tagText: string;
  readonly selectors: number;
  readonly homoglyphs: number;
  readonly mixedScriptWords: number;
  readonly unicodeFolded: boolean;
}

function canonicalize(text: string): CanonicalStep {
  const invisible = removeInvisible(text);
  const unicode = unicodeFold(invisible.text);
  const folded = foldConfusables(unicode.text);
  return {
    text: folded.text,
    zeroWidth: invisible.zeroWidth,
    bidi: invisible.bidi,
    tags: invisible.tags,
    tagText: invisible.tagText,
    selectors: invisible.selectors,
    homoglyphs: folded.folded,
    mixedScriptWords: folded.mixedScriptWords,
    unicodeFolded: unicode.changed,
  };
}

export function normalize(input: string, options: NormalizeOptions = {}): Normalized {
  const kind = options.kind ?? 'prompt';
  const maxLength = options.maxLength ?? MAX_SCAN_LENGTH;
  const maxDepth = options.maxDepth ?? MAX_DECODE_DEPTH;
  const bounded = bound(input, maxLength);
  const evidence: Evidence[] = [];
  const variants: Variant[] = [];
  const seen = new Set<string>();
  let totalLength = 0;

  const add = (name: string, text: string): boolean => {
    const lower = bound(text, maxLength).toLowerCase();
    if (seen.has(lower) || variants.length >= MAX_VARIANTS || totalLength + lower.length > MAX_TOTAL_VARIANT_LENGTH) return false;
    seen.add(lower);
    totalLength += lower.length;
    variants.push({ name, text: lower });
    return true;
  };

  if (bounded.length < input.length) evidence.push({ transform: 'truncated', detail: `scanned the first ${bounded.length} of ${input.length} characters` });

  const first = canonicalize(bounded);
  let zeroWidth = first.zeroWidth;
  let bidi = first.bidi;
  let tagCharacters = first.tags;
  let homoglyphs = first.homoglyphs;
  let selectors = first.selectors;
  let unicodeFolded = first.unicodeFolded;
  const mixedScriptWords = first.mixedScriptWords;

  const canonical = first.text;
  add('canonical', canonical);
  if (first.tagText.length > 0) add('tag-characters', first.tagText);

  // Decode layer by layer; each layer is canonicalized again (encoded fullwidth, encoded ZWSP…).
  const decodeKinds = new Set<string>();
  let decodeLayers = 0;
  let current = canonical;
  for (let depth = 1; depth <= maxDepth; depth++) {
    let next = current;
    const kinds: string[] = [];
    const steps: readonly (readonly [string, (text: string) => string | null])[] = [
      ['iis', (text) => (kind === 'http' ? iisOverlongDecode(text) : null)],
      ['url', (text) => urlDecode(text, kind === 'http')],
      ['hex-byte', (text) => (kind === 'http' ? hexPunctuationDecode(text) : null)],
      ['ip', (text) => (kind === 'http' ? ipDecode(text) : null)],
      ['unescape', (text) => (kind === 'http' ? unescapePunctuation(text) : null)],
      ['private-use', (text) => (kind === 'http' ? privateUseAsSeparator(text) : null)],
      ['html', htmlDecode],
      ['escape', escapeDecode],
      ['base64', base64Decode],
      ['hex', hexDecode],
    ];
    for (const [name, decode] of steps) {
      const decoded = decode(next);
      if (decoded !== null && decoded !== next) {
        next = bound(decoded, maxLength);
        kinds.push(name);
      }
    }
    if (kinds.length === 0) break;
    const step = canonicalize(next);
    zeroWidth += step.zeroWidth;
    bidi += step.bidi;
    tagCharacters += step.tags;
    homoglyphs += step.homoglyphs;
    selectors += step.selectors;
    unicodeFolded ||= step.unicodeFolded;
    next = step.text;
    for (const name of kinds) decodeKinds.add(name);
    decodeLayers = depth;
    evidence.push({ transform: `decode:${kinds.join('+')}`, detail: `layer ${depth}` });
    add(`decoded:${kinds.join('+')}`, next);
    if (step.tagText.length > 0) add('tag-characters', step.tagText);
    if (next === current) break;
    current = next;
  }

  // Shell quoting/expansion tricks, read as the shell reads them (HTTP only, own variant).
  const shell = kind === 'http' ? shellDeobfuscate(current) : null;
  if (shell !== null) {
    evidence.push({ transform: 'shell-unquote', detail: 'shell quotes, empty expansions and $IFS removed' });
    add('shell', shell);
  }
  // Leet and split reconstruction are for natural language; on HTTP values they only add noise.
  const leet = kind === 'http' ? null : reconstructLeet(current);
  if (leet !== null) {
    evidence.push({ transform: 'leet', detail: `${leet.tokens} token(s) reconstructed` });
    add('leet', leet.text);
  }
  const stutter = kind === 'http' ? null : collapseStutter(current);
  if (stutter !== null) {
    evidence.push({ transform: 'stutter', detail: `${stutter.words} word(s) with doubled first or last letters collapsed` });
    add('stutter', stutter.text);
  }
  const split = kind === 'http' ? null : joinSplitCharacters(current);
  if (split !== null) {
    evidence.push({ transform: 'char-split', detail: `${split.runs} split run(s) joined` });
    add('char-split', split.text);
    const splitLeet = reconstructLeet(split.text);
    if (splitLeet !== null) add('char-split+leet', splitLeet.text);
  }
  // Sentences spelled as slugs ("#you-must-ignore-all-text-below"): natural language only.
  const slugs = kind === 'http' ? null : spellSlugs(current);
  if (slugs !== null) {
    evidence.push({ transform: 'slug-spelled', detail: `${slugs.runs} run(s) of words joined by hyphens, underscores or plus signs read as text` });
    add('slug-spelled', slugs.text);
  }
  // Morse code (".. --. -. --- .-. ."): natural language only, its own variant.
  const morse = kind === 'http' ? null : morseDecode(current);
  if (morse !== null) {
    evidence.push({ transform: 'decode:morse', detail: `${morse.runs} Morse run(s) decoded` });
    add('decoded:morse', morse.text);
  }
  // SQL inline comments used as separators ("union/**/select", "/*!50000select*/").
  if (kind === 'http') {
    for (const variant of [...variants]) if (variant.text.includes('/*')) add(`${variant.name}+sql-uncommented`, variant.text.replace(SQL_COMMENT, ' '));
    // CSS and control escapes get their own variants: decoding them in place would corrupt
    // Windows paths ("c:\\new\\bad").
    for (const variant of [...variants]) {
      const css = cssEscapeDecode(variant.text);
      if (css !== null) add(`${variant.name}+css`, css);
      const control = controlEscapeDecode(variant.text);
      if (control !== null) add(`${variant.name}+control`, control);
    }
  }
  const unwrapped = kind === 'http' ? { text: null, wrappers: [] as string[] } : unwrapPrompt(canonical);
  if (unwrapped.text !== null) add('unwrapped', unwrapped.text);
  for (const wrapper of unwrapped.wrappers) evidence.push({ transform: `wrapper:${wrapper}`, detail: 'wrapper recognised' });

  if (zeroWidth > 0) evidence.push({ transform: 'zero-width', detail: `removed ${zeroWidth} invisible character(s)` });
  if (bidi > 0) evidence.push({ transform: 'bidi-controls', detail: `removed ${bidi} bidirectional control(s)` });
  if (tagCharacters > 0) evidence.push({ transform: 'tag-characters', detail: `decoded ${tagCharacters} Unicode tag character(s)` });
  if (selectors > 0) evidence.push({ transform: 'variation-selectors', detail: `removed ${selectors} variation selector(s)` });
  if (unicodeFolded) evidence.push({ transform: 'unicode-nfkc', detail: 'compatibility forms and diacritics folded' });
  if (homoglyphs > 0) evidence.push({ transform: 'homoglyph', detail: `folded ${homoglyphs} lookalike character(s); ${mixedScriptWords} mixed-script word(s)` });

  const entropy = entropyProfile(canonical);
  if (entropy.highEntropyTokens > 0) evidence.push({ transform: 'entropy', detail: `${entropy.highEntropyTokens} long high-entropy token(s), max ${entropy.maxToken.toFixed(2)} bits/char` });

  return {
    variants,
    evidence,
    truncated: bounded.length < input.length,
    length: bounded.length,
    signals: {
      zeroWidth,
      bidi,
      tagCharacters,
      variationSelectors: selectors,
      homoglyphs,
      mixedScriptWords,
      unicodeFolded,
      decodeLayers,
      decodeKinds: [...decodeKinds],
      leetTokens: leet?.tokens ?? 0,
      splitRuns: split?.runs ?? 0,
      wrappers: unwrapped.wrappers,
      entropy,
    },
  };
}
