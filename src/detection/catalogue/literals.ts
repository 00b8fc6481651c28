/**
 * Required literals of a regular expression: a set of strings such that every match of the
 * expression contains at least one of them (the "necessary factors" of RE2's and codesearch's
 * prefilters). T1 runs a pattern part only when one of its literals occurs in the text, so the
 * common case — a text that holds the pattern's keyword ("must") but not the rest of the
 * pattern ("no matter", "regardless") — costs one automaton pass instead of a regex scan of the
 * whole text per part (issue #39: the cost per KB grew with the number of keywords a long text
 * happens to contain).
 *
 * The analysis is conservative: where it cannot prove a requirement it returns null (the part
 * always runs). Zero-width assertions match the empty string; a lookaround never adds a
 * requirement, so a match is judged only by the characters it consumes. The patterns are
 * compiled without the `i` flag and run on lower-cased text, so a literal is compared as is.
 */
import { RegExpParser, type AST } from '@eslint-community/regexpp';
import { buildAutomaton, type KeywordAutomaton, type Marks } from './keywords.ts';

/** Most strings an exact set may hold before it is reduced to a requirement. */
const MAX_EXACT = 64;
/**
 * Most strings a prefix set may hold: a part that opens with an alternation of many words
 * ("\\b(?:bomb|explosive|weapon|…)") is tried at their occurrences rather than at every offset.
 */
const MAX_PREFIXES = 4096;
/** Widest character class spelled out as single-character strings. */
const MAX_CLASS = 8;

interface Info {
  /** Every string the node can match, when known and small; contains "" when it can match empty. */
  readonly exact: ReadonlySet<string> | null;
  /** Strings one of which every match contains; null when none is known. */
  readonly required: ReadonlySet<string> | null;
}

const UNKNOWN: Info = { exact: null, required: null };
const EMPTY: Info = { exact: new Set(['']), required: null };

function fromExact(exact: ReadonlySet<string>): Info {
  return { exact, required: exact.has('') ? null : exact };
}

/** Words so frequent in English that a literal of them selects almost nothing. */
const COMMON_WORDS: ReadonlySet<string> = new Set(('the and of to in a an is it you that for on with as this be are or your our my we i he she they ' +
  'what which who how when where why all any each every first last next new not no do does can will would should from by at ' +
  'if then than so but about into out up more most some other only also just like use make get give tell see one two').split(' '));

/**
 * How rare a string is in ordinary text, roughly: its length, a character outside ASCII (a
 * script other than Latin in an English text) counting three, a very common word one.
 */
function weight(value: string): number {
  if (COMMON_WORDS.has(value.trim())) return 1;
  let sum = 0;
  for (let index = 0; index < value.length; index++) sum += value.charCodeAt(index) < 128 ? 1 : 3;
  return sum;
}

/** Higher is more selective: a heavier lightest string, then fewer strings. */
function quality(set: ReadonlySet<string> | null): number {
  if (set === null || set.size === 0) return -1;
  let lightest = Infinity;
  for (const value of set) lightest = Math.min(lightest, weight(value));
  return lightest === 0 ? -1 : lightest * 1000 - set.size;
}

function better(left: ReadonlySet<string> | null, right: ReadonlySet<string> | null): ReadonlySet<string> | null {
  return quality(right) > quality(left) ? right : left;
}

function cross(left: ReadonlySet<string>, right: ReadonlySet<string>, limit = MAX_EXACT): Set<string> | null {
  if (left.size * right.size > limit) return null;
  const out = new Set<string>();
  for (const a of left) for (const b of right) out.add(a + b);
  return out;
}

function classInfo(node: AST.CharacterClass): Info {
  if (node.negate || node.unicodeSets) return UNKNOWN;
  const out = new Set<string>();
  for (const element of node.elements) {
    if (element.type === 'Character') out.add(String.fromCodePoint(element.value));
    else if (element.type === 'CharacterClassRange') {
      if (element.max.value - element.min.value >= MAX_CLASS) return UNKNOWN;
      for (let code = element.min.value; code <= element.max.value; code++) out.add(String.fromCodePoint(code));
    } else return UNKNOWN;
    if (out.size > MAX_CLASS) return UNKNOWN;
  }
  return out.size === 0 ? UNKNOWN : fromExact(out);
}

function alternativesInfo(alternatives: readonly AST.Alternative[]): Info {
  const infos = alternatives.map(sequenceInfo);
  let exact: Set<string> | null = new Set();
  for (const info of infos) {
    if (exact === null || info.exact === null) {
      exact = null;
      break;
    }
    for (const value of info.exact) exact.add(value);
    if (exact.size > MAX_EXACT) exact = null;
  }
  if (exact !== null) return fromExact(exact);
  // Each alternative must bring a requirement; their union is the disjunction's.
  const required = new Set<string>();
  for (const info of infos) {
    if (info.required === null) return UNKNOWN;
    for (const value of info.required) required.add(value);
  }
  return { exact: null, required };
}

function sequenceInfo(alternative: AST.Alternative): Info {
  // Runs of elements with exact sets are crossed into longer strings; where a run breaks, its
  // strings (and each element's own requirement) are candidates; the most selective one wins.
  let run: ReadonlySet<string> | null = new Set(['']);
  let best: ReadonlySet<string> | null = null;
  let whole: ReadonlySet<string> | null = new Set(['']);
  for (const element of alternative.elements) {
    const info = elementInfo(element);
    if (info.exact !== null && run !== null) {
      const next = cross(run, info.exact);
      if (next !== null) {
        run = next;
        whole = whole === null ? null : cross(whole, info.exact);
        continue;
      }
    }
    whole = null;
    if (run !== null) best = better(best, fromExact(run).required);
    best = better(best, info.required);
    run = info.exact ?? null;
    if (run === null) run = new Set(['']);
  }
  if (whole !== null) return fromExact(whole);
  if (run !== null) best = better(best, fromExact(run).required);
  return { exact: null, required: best };
}

function elementInfo(node: AST.Element): Info {
  switch (node.type) {
    case 'Character':
      return fromExact(new Set([String.fromCodePoint(node.value)]));
    case 'CharacterClass':
      return classInfo(node);
    case 'Group':
      return node.modifiers === null ? alternativesInfo(node.alternatives) : UNKNOWN;
    case 'CapturingGroup':
      return alternativesInfo(node.alternatives);
    case 'Assertion':
      return EMPTY;
    case 'Quantifier': {
      const inner = elementInfo(node.element);
      if (node.min === 0) {
        if (node.max === 1 && inner.exact !== null) return fromExact(new Set([...inner.exact, '']));
        return UNKNOWN;
      }
      if (node.min === 1 && node.max === 1) return inner;
      // At least one repetition: its requirement holds; the exact set does not (repeated).
      return { exact: null, required: inner.required };
    }
    default:
      // Character sets (\s, \w, .), backreferences: no literal.
      return UNKNOWN;
  }
}

const parser = new RegExpParser({ ecmaVersion: 2025 });

/**
 * The syntax tree of a regular expression's source (without the `v` flag; with `u` when
 * `unicode`), or null when it does not parse. Shared by the catalogue's analyses (this module's
 * literals and prefixes, windows.ts's literal windows).
 */
export function parseSource(source: string, unicode = false): AST.Pattern | null {
  try {
    return parser.parsePattern(source, 0, source.length, { unicode });
  } catch {
    return null;
  }
}

/**
 * Strings one of which every match of `source` (compiled without `v`) contains, or null when the
 * analysis finds none. Never an empty string. With the `i` flag the strings must be looked for
 * case-insensitively too (a regular expression of them with the same flags).
 */
export function requiredLiterals(source: string, options: { unicode?: boolean } = {}): string[] | null {
  const pattern = parseSource(source, options.unicode ?? false);
  if (pattern === null) return null;
  const info = alternativesInfo(pattern.alternatives);
  const required = info.required;
  if (required === null || quality(required) < 0) return null;
  return [...required].sort();
}

/** The ten digits, the strings a match of `\d` (without the `u` and `v` flags' classes) starts with. */
const DIGITS: ReadonlySet<string> = new Set('0123456789');

/** Strings one of which every match of the element starts with (null when unknown or when one is empty). */
function prefixOf(node: AST.Element): ReadonlySet<string> | null {
  if (node.type === 'Group' && node.modifiers === null) return alternativesPrefix(node.alternatives);
  if (node.type === 'CapturingGroup') return alternativesPrefix(node.alternatives);
  if (node.type === 'Quantifier' && node.min >= 1) return prefixOf(node.element);
  if (node.type === 'CharacterSet' && node.kind === 'digit' && !node.negate) return DIGITS;
  const exact = elementInfo(node).exact;
  return exact === null || exact.has('') ? null : exact;
}

function alternativesPrefix(alternatives: readonly AST.Alternative[]): ReadonlySet<string> | null {
  const out = new Set<string>();
  for (const alternative of alternatives) {
    const prefixes = elementsPrefix(alternative.elements, 0);
    if (prefixes === null) return null;
    for (const value of prefixes) out.add(value);
  }
  return out.size === 0 ? null : out;
}

function elementsPrefix(elements: readonly AST.Element[], from: number): ReadonlySet<string> | null {
  // Zero-width assertions and exact elements extend the prefix; the first other element ends it
  // (its own prefix still applies when it has one).
  let run: ReadonlySet<string> = new Set(['']);
  for (let index = from; index < elements.length; index++) {
    const element = elements[index]!;
    const exact = elementInfo(element).exact;
    if (exact !== null) {
      const next = cross(run, exact);
      if (next === null) break;
      run = next;
      continue;
    }
    let prefixes = prefixOf(element);
    if (prefixes === null && element.type === 'Quantifier' && element.min === 0) {
      // An optional element: a match that takes it starts with its prefix, one that skips it
      // with the prefix of what follows it ("(?:the\s+)?user": "the" or "user").
      const taken = prefixOf(element.element);
      const skipped = taken === null ? null : elementsPrefix(elements, index + 1);
      if (taken !== null && skipped !== null) prefixes = new Set([...taken, ...skipped]);
    }
    if (prefixes !== null) run = cross(run, prefixes, MAX_PREFIXES) ?? run;
    break;
  }
  return run.has('') ? null : run;
}

/**
 * Strings one of which every match of `source` starts with (after zero-width assertions), or
 * null when unknown. T1 tries such a part only where one of them occurs, with a sticky copy of
 * the expression, instead of scanning every position of the text.
 */
export function requiredPrefixes(source: string): string[] | null {
  const pattern = parseSource(source);
  if (pattern === null) return null;
  const prefixes = alternativesPrefix(pattern.alternatives);
  return prefixes === null ? null : [...prefixes].sort();
}

/**
 * Which of `literals` occur in a text under the `iu` flags' case folding, as flags by index:
 * flag i is 1 exactly when `new RegExp(escape(literals[i]), 'iu').test(text)`. One automaton pass:
 * the irregexp engine tries a case-insensitive alternation of many words at every offset (about a
 * microsecond per character for a hundred words). Each text character is mapped to the literal
 * character it equals under the expression's case folding (found once, by testing the Basic
 * Multilingual Plane against the literal characters with the `iu` flags; no character outside it
 * folds to one inside); any other character to U+0001. With `flags` 'i', the same under the `i`
 * flag alone (an expression without `u` compares code units, case-folded by upper-casing).
 */
export function caseInsensitiveLiterals(literals: readonly string[], flags: 'i' | 'iu' = 'iu'): (text: string) => Uint8Array {
  const { slots, find } = caseInsensitiveSlots(literals, flags);
  return (text) => {
    const found = find(text);
    return Uint8Array.from(slots, (slot) => found[slot]!);
  };
}

/**
 * caseInsensitiveLiterals without the copy: `find` flags slots, and literal i occurs exactly
 * when `find(text)[slots[i]]` is 1 (literals equal under the folding share a slot).
 */
export function caseInsensitiveSlots(literals: readonly string[], flags: 'i' | 'iu' = 'iu'): { slots: readonly number[]; find(text: string): Uint8Array; starts?(text: string, track: Uint8Array, limit: number): Marks } {
  const characters = [...new Set(literals.join(''))];
  if (characters.some((character) => character.length !== 1 || character.charCodeAt(0) < 2)) {
    const regexes = literals.map((literal) => new RegExp(literal.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), flags));
    return { slots: literals.map((_, index) => index), find: (text) => Uint8Array.from(regexes, (regex) => (regex.test(text) ? 1 : 0)) };
  }
  const fold = foldTable(characters, flags);
  const folded = literals.map((literal) => Array.from(literal, (character) => String.fromCharCode(fold[character.charCodeAt(0)]!)).join(''));
  const distinct = [...new Set(folded)];
  const automaton = buildAutomaton(distinct);
  return {
    slots: folded.map((value) => distinct.indexOf(value)),
    find: (text) => automaton.mark(text, undefined, fold).found,
    // With the offsets where the slots flagged in `track` start (automaton.mark's `limit`).
    starts: (text, track, limit) => automaton.mark(text, track, fold, limit),
  };
}

/**
 * Each code unit of the Basic Multilingual Plane mapped to the first of `characters` (single code
 * units) it equals under the flags' case folding, or to U+0001 (caseInsensitiveSlots).
 */
function foldTable(characters: readonly string[], flags: 'i' | 'iu'): Uint16Array {
  const fold = new Uint16Array(0x10000).fill(1);
  const escaped = characters.map((character) => character.replace(/[\]\\^-]/g, '\\$&'));
  const each = escaped.map((character) => new RegExp(`^[${character}]$`, flags));
  // Every code unit of the plane in one string (under `u` without the surrogates: a lone one in a
  // text never matches a literal's character), read by one global scan of the class.
  const plane = flags === 'iu' ? BMP_WITHOUT_SURROGATES : BMP;
  for (const match of plane.matchAll(new RegExp(`[${escaped.join('')}]`, `${flags}g`))) {
    const character = match[0];
    // The representative is the first literal character it folds with.
    const index = each.findIndex((regex) => regex.test(character));
    fold[character.charCodeAt(0)] = characters[index]!.charCodeAt(0);
  }
  return fold;
}

/** One pass for several literal lists, each under its own case folding (caseInsensitiveFamilies). */
export interface JointSlots {
  /** Per list, per literal: its slot in `mark`'s flags (literals equal under their folding share one). */
  readonly slots: readonly (readonly number[])[];
  /**
   * automaton.mark over the joint slots (`track` and `limit` as there); null where the text holds
   * a character that the joint pass cannot answer for (one that folds with a literal's character
   * under one list's flags and with another code unit's than that character's under the other's,
   * such as U+017F, which the `iu` flags fold with "s" and the `i` flag does not): the caller then
   * reads each list by itself (caseInsensitiveSlots).
   */
  mark(text: string, track: Uint8Array | undefined, limit: number): Marks | null;
}

/**
 * caseInsensitiveSlots for several lists of literals at once, each list with its flags ('i' or
 * 'iu'): one automaton pass instead of one per list. Each code unit is mapped to the tuple of its
 * folds (one per list), numbered; a literal's character c of list k is written as the tuple of c
 * itself, which stands for every code unit whose fold under list k is c, except those whose tuple
 * differs from c's elsewhere. Those few code units (U+017F and U+212A against ASCII letters, for
 * the `i` and `iu` flags) are tracked as one-character keywords of their own, and a text holding
 * one is answered null. Null where a list has a character outside the plane or below U+0002, or
 * where there are more distinct tuples than the automaton's alphabet allows.
 */
export function caseInsensitiveFamilies(lists: readonly (readonly string[])[], flags: readonly ('i' | 'iu')[]): JointSlots | null {
  const characterLists = lists.map((literals) => [...new Set(literals.join(''))]);
  if (characterLists.some((characters) => characters.some((character) => character.length !== 1 || character.charCodeAt(0) < 2))) return null;
  const folds = characterLists.map((characters, index) => foldTable(characters, flags[index]!));
  // Number the tuples: code 1 is "no list's character" (every fold U+0001). A tuple is numbered by
  // its first code unit, the space and the lower-case letters read first, where that is ASCII (so
  // that the automaton's columns for prose's letters stay together), else by a free code.
  const keyOf = (unit: number): string | null => {
    let key = '';
    let any = false;
    for (const fold of folds) {
      key += String.fromCharCode(fold[unit]!);
      any ||= fold[unit] !== 1;
    }
    return any ? key : null;
  };
  const codeOf = new Map<string, number>();
  const pending: string[] = [];
  const order = [...' abcdefghijklmnopqrstuvwxyz'].map((character) => character.charCodeAt(0));
  for (let unit = 0; unit < 0x10000; unit++) order.push(unit);
  for (const unit of order) {
    const key = keyOf(unit);
    if (key === null || codeOf.has(key)) continue;
    if (unit >= 2 && unit < 128) codeOf.set(key, unit);
    else {
      codeOf.set(key, 0);
      pending.push(key);
    }
  }
  const taken = new Set(codeOf.values());
  let free = 2;
  for (const key of pending) {
    while (taken.has(free)) free++;
    codeOf.set(key, free);
    taken.add(free);
  }
  const map = new Uint16Array(0x10000);
  for (let unit = 0; unit < 0x10000; unit++) {
    const key = keyOf(unit);
    map[unit] = key === null ? 1 : codeOf.get(key)!;
  }
  // A code unit is answered exactly when, for every list where it folds to a literal character c,
  // its tuple is c's own.
  const strays = new Set<number>();
  for (let unit = 0; unit < 0x10000; unit++) {
    for (const fold of folds) {
      const to = fold[unit]!;
      if (to !== 1 && map[to] !== map[unit]) strays.add(map[unit]!);
    }
  }
  const written = lists.map((literals) => literals.map((literal) => Array.from(literal, (character) => String.fromCharCode(map[character.charCodeAt(0)]!)).join('')));
  const strayKeys = [...strays].map((code) => String.fromCharCode(code));
  // A stray tuple that is also some literal character's own cannot be told apart.
  if (written.some((list) => list.some((literal) => Array.from(literal).some((character) => strays.has(character.charCodeAt(0)))))) return null;
  const distinct = [...new Set([...written.flat(), ...strayKeys])];
  let automaton: KeywordAutomaton;
  try {
    automaton = buildAutomaton(distinct);
  } catch {
    return null;
  }
  const strayIds = strayKeys.map((key) => distinct.indexOf(key));
  return {
    slots: written.map((list) => list.map((value) => distinct.indexOf(value))),
    mark(text, track, limit) {
      const marks = automaton.mark(text, track, map, limit);
      for (const id of strayIds) if (marks.found[id] === 1) return null;
      return marks;
    },
  };
}

/**
 * Which of `regexes` may match a text, from one case-insensitive automaton pass over their
 * required clauses (requiredClauses): flag i is 0 only when no top-level alternative of
 * regexes[i] has a literal of each of its clauses in the text, so that the expression cannot
 * match it; an expression without clauses is always flagged. The expressions share their flags,
 * `i` or `iu` (others that do not change what a literal matches, such as `g`, may be added).
 */
export function possibleMatches(regexes: readonly RegExp[]): (text: string) => Uint8Array {
  const unicode = regexes.map((regex) => regex.unicode);
  if (regexes.some((regex) => !regex.ignoreCase || regex.flags.includes('v') || regex.unicode !== unicode[0])) throw new Error('possibleMatches: the expressions must share the i or iu flags');
  const forms = regexes.map((regex) => requiredClauses(regex.source, { unicode: regex.unicode }));
  const literals = [...new Set(forms.flatMap((form) => form ?? []).flat(2))];
  const { slots, find } = caseInsensitiveSlots(literals, unicode[0] === true ? 'iu' : 'i');
  const slotOf = new Map(literals.map((literal, index) => [literal, slots[index]!]));
  const clauses = forms.map((form) => (form === null ? null : form.map((clauseList) => clauseList.map((clause) => [...new Set(clause.map((literal) => slotOf.get(literal)!))]))));
  const holds = (found: Uint8Array, clause: readonly number[]): boolean => {
    for (const slot of clause) if (found[slot] === 1) return true;
    return false;
  };
  return (text) => {
    const found = find(text);
    return Uint8Array.from(clauses, (alternatives) => (alternatives === null || alternatives.some((clauseList) => clauseList.every((clause) => holds(found, clause))) ? 1 : 0));
  };
}

/** Each code unit once, in order (the Basic Multilingual Plane, with and without the surrogates). */
const BMP = String.fromCharCode(...Array.from({ length: 0x10000 }, (_, code) => code));
const BMP_WITHOUT_SURROGATES = BMP.slice(0, 0xd800) + BMP.slice(0xe000);

/** Above one start per this many characters, an expression is run over the whole text instead. */
const DENSE_START_SPACING = 48;

/**
 * `regexes[i].exec(text)` for each of `regexes` (flag `i` without `u`, neither `g` nor `y`), found
 * with less work: null without running the expression where possibleMatches shows it cannot match,
 * and where every match starts with one of its required prefixes (requiredPrefixes), a sticky
 * copy tried only at the offsets where a prefix occurs (case-folded as the `i` flag folds), in
 * ascending order: the first offset where it matches is where the expression's own scan finds its
 * first match, and the match is the same. Where the prefixes occur more than once per
 * DENSE_START_SPACING characters the expression scans the text itself. One automaton pass per text.
 */
export function firstMatches(regexes: readonly RegExp[]): (text: string) => (index: number) => RegExpExecArray | null {
  const plan = firstMatchPlan(regexes);
  const { slots, starts } = caseInsensitiveSlots(plan.literals, 'i');
  const bound = plan.bind(slots);
  return (text) => {
    if (starts === undefined) return (index) => regexes[index]!.exec(text);
    return bound.first(text, starts(text, bound.track, bound.limit(text)));
  };
}

/**
 * firstMatches in two halves, for a caller that finds the literals in a pass it shares
 * (caseInsensitiveFamilies): `literals` (each to be found as the `i` flag folds); `bind(slots)`,
 * with literal i flagged at slots[i] of the marks, gives the slots to track, the limit for a
 * text, and `first(text, marks)`, where marks is automaton.mark's answer for them.
 */
export function firstMatchPlan(regexes: readonly RegExp[]): {
  literals: readonly string[];
  bind(slots: readonly number[]): { track: Uint8Array; limit(text: string): number; first(text: string, marks: Marks): (index: number) => RegExpExecArray | null };
} {
  if (regexes.some((regex) => regex.flags !== 'i')) throw new Error('firstMatches: the expressions must have the i flag alone');
  const forms = regexes.map((regex) => requiredClauses(regex.source));
  const prefixes = regexes.map((regex) => requiredPrefixes(regex.source));
  const sticky = regexes.map((regex) => new RegExp(regex.source, 'iy'));
  const literals = [...new Set([...forms.flatMap((form) => form ?? []).flat(2), ...prefixes.flatMap((list) => list ?? [])])];
  const holds = (found: Uint8Array, clause: readonly number[]): boolean => {
    for (const slot of clause) if (found[slot] === 1) return true;
    return false;
  };
  return {
    literals,
    bind(slots) {
      const slotOf = new Map(literals.map((literal, index) => [literal, slots[index]!]));
      const clauses = forms.map((form) => (form === null ? null : form.map((clauseList) => clauseList.map((clause) => [...new Set(clause.map((literal) => slotOf.get(literal)!))]))));
      const prefixSlots = prefixes.map((list) => (list === null ? null : [...new Set(list.map((literal) => slotOf.get(literal)!))]));
      const track = new Uint8Array(Math.max(0, ...slots) + 1);
      for (const list of prefixSlots) for (const slot of list ?? []) track[slot] = 1;
      return {
        track,
        limit: (text) => Math.max(16, text.length / DENSE_START_SPACING),
        first(text, marks) {
          const limit = Math.max(16, text.length / DENSE_START_SPACING);
          return (index) => {
            const alternatives = clauses[index]!;
            if (alternatives !== null && !alternatives.some((clauseList) => clauseList.every((clause) => holds(marks.found, clause)))) return null;
            const offsets = prefixSlots[index] === null ? null : mergeOffsets(prefixSlots[index]!, marks.starts, limit);
            if (offsets === null) return regexes[index]!.exec(text);
            const regex = sticky[index]!;
            for (const offset of offsets) {
              regex.lastIndex = offset;
              const match = regex.exec(text);
              if (match !== null) return match;
            }
            return null;
          };
        },
      };
    },
  };
}

/** The offsets of the slots' starts, ascending and distinct; null when more than `limit`. */
function mergeOffsets(slots: readonly number[], starts: ReadonlyMap<number, readonly number[]>, limit: number): readonly number[] | null {
  const all: number[] = [];
  for (const slot of slots) {
    const list = starts.get(slot);
    if (list === undefined) continue;
    if (list.length > limit) return null;
    for (const offset of list) all.push(offset);
  }
  if (all.length > limit) return null;
  all.sort((left, right) => left - right);
  let write = 0;
  for (let read = 0; read < all.length; read++) if (read === 0 || all[read] !== all[read - 1]) all[write++] = all[read]!;
  all.length = write;
  return all;
}

/**
 * A requirement in disjunctive form: every match of the expression satisfies one of the
 * alternatives, and an alternative is satisfied when each of its clauses (a list of strings) has
 * one string in the text. Null when some top-level alternative has no clause.
 */
export function requiredClauses(source: string, options: { unicode?: boolean } = {}): string[][][] | null {
  const pattern = parseSource(source, options.unicode ?? false);
  if (pattern === null) return null;
  const forms: string[][][] = [];
  for (const alternative of pattern.alternatives) {
    // Runs of exact elements crossed into strings (as in sequenceInfo), each run and each other
    // element's requirement a clause.
    const sets: (ReadonlySet<string> | null)[] = [];
    let run: ReadonlySet<string> = new Set(['']);
    for (const element of alternative.elements) {
      const info = elementInfo(element);
      const next = info.exact === null ? null : cross(run, info.exact);
      if (next !== null) {
        run = next;
        continue;
      }
      sets.push(fromExact(run).required, info.required);
      run = info.exact ?? new Set(['']);
    }
    sets.push(fromExact(run).required);
    const clauses = sets.filter((set): set is ReadonlySet<string> => quality(set) >= 0).map((set) => [...set].sort());
    if (clauses.length === 0) return null;
    forms.push(clauses);
  }
  return forms;
}
