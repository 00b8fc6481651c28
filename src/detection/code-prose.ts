/**
 * The natural-language parts of a text that is source code (issue #32, bench/code-fp.ts).
 *
 * A coding agent reads files through MCP tools and a developer pastes code into a prompt. In code,
 * the prose is in the comments, the docstrings and the string literals; identifiers, operators
 * and keywords are not English, and detectors that read a whole text as prose (the n-gram intent
 * classifier, the adversarial-suffix signal) read them as token noise or as request-shaped
 * n-grams. An instruction planted in code for a model to read is prose too — a comment, a
 * docstring, a string, or a line that is not code — so reading code by its prose keeps it read.
 *
 * One pass over the characters, no regular expression over the untrusted text.
 */
import { isWhitespace, locallyBalanced } from './ml/gibberish.ts';

/** Longest text read for its code shape; a longer text is read as it is. */
const MAX_CODE_CHARS = 262_144;
/** At least this many lines shaped like code … */
const MIN_CODE_LINES = 4;
/** … and at least this share of the lines that are neither comment nor string alone. */
const MIN_CODE_SHARE = 0.5;
/** A run of this many plain words outside strings and comments is a line of prose, not code. */
const PROSE_RUN = 6;

/** Words that open a statement or declaration in the languages a coding agent reads most. */
const KEYWORDS: ReadonlySet<string> = new Set([
  'abstract', 'async', 'await', 'break', 'case', 'catch', 'class', 'const', 'continue', 'declare', 'def', 'default', 'del', 'delete', 'do', 'elif',
  'else', 'enum', 'except', 'export', 'extends', 'finally', 'fn', 'for', 'from', 'func', 'function', 'global', 'if', 'impl', 'import', 'interface',
  'lambda', 'let', 'module', 'namespace', 'new', 'nonlocal', 'package', 'pass', 'private', 'protected', 'pub', 'public', 'raise', 'readonly',
  'return', 'static', 'struct', 'switch', 'throw', 'try', 'type', 'typeof', 'use', 'var', 'void', 'while', 'with', 'yield',
]);

/** Characters that end a line of code: a statement, a block, a call or a list left open or closed. */
const CODE_ENDS = ';{}()[],:=>';

export interface CodeProse {
  /** The prose: comments, strings with a space in them, and the lines that are not code, one per line. */
  readonly prose: string;
  /** The same from the first line shaped like code on: the code's prose without the words before it. */
  readonly inner: string;
  /** Lines shaped like code, and all non-blank lines. */
  readonly codeLines: number;
  readonly lines: number;
}

interface LineParts {
  /** The characters outside strings and comments, strings left as their quotes. */
  code: string;
  /** Comment text (with its marker) and string contents that hold a space. */
  prose: string[];
}

type State = { kind: 'none' } | { kind: 'block' } | { kind: 'string'; quote: string };

/** Whether `text` holds a whitespace character. */
function hasWhitespace(text: string): boolean {
  for (let k = 0; k < text.length; k += 1) if (isWhitespace(text.charCodeAt(k))) return true;
  return false;
}

/**
 * Splits one line into its code and its prose, carrying a block comment (`/* … *\/`), a triple-
 * quoted string or a template literal over lines in `state`. The code between two marks (a
 * comment, a quote) and a string's text are taken as slices of the line, not built a character at
 * a time: this runs on every prompt and tool output the classifier reads.
 */
function splitLine(line: string, state: State): { parts: LineParts; state: State } {
  let code = '';
  const prose: string[] = [];
  const length = line.length;
  let index = 0;
  let current = state;
  // The text of a string left open at the line's end (a string's text runs to its closing quote).
  let open = '';
  while (index < length) {
    if (current.kind === 'block') {
      const end = line.indexOf('*/', index);
      if (end === -1) {
        prose.push(line.slice(index));
        return { parts: { code, prose }, state: current };
      }
      prose.push(line.slice(index, end));
      index = end + 2;
      current = { kind: 'none' };
      continue;
    }
    if (current.kind === 'string') {
      const quote = current.quote;
      const first = quote.charCodeAt(0);
      let at = index;
      let closed = -1;
      while (at < length) {
        const c = line.charCodeAt(at);
        // A backslash takes the character after it into the string.
        if (c === 92) {
          at += 2;
          continue;
        }
        if (c === first && (quote.length === 1 || line.startsWith(quote, at))) {
          closed = at;
          break;
        }
        at += 1;
      }
      if (closed === -1) {
        open = line.slice(index);
        index = length;
        break;
      }
      const text = line.slice(index, closed);
      if (hasWhitespace(text)) prose.push(text);
      code += quote[0]!;
      index = closed + quote.length;
      current = { kind: 'none' };
      continue;
    }
    // Outside strings and comments: the code runs to the next comment mark or quote.
    let at = index;
    while (at < length) {
      const c = line.charCodeAt(at);
      if (c === 47 /* / */) {
        const next = line.charCodeAt(at + 1);
        if (next === 47 || next === 42) break;
      } else if (c === 35 /* # */) {
        if ((at === 0 || isWhitespace(line.charCodeAt(at - 1))) && (at + 1 >= length || ' #!:'.includes(line[at + 1]!))) break;
      } else if (c === 34 || c === 39 || c === 96) break;
      at += 1;
    }
    code += line.slice(index, at);
    if (at >= length) break;
    const char = line[at]!;
    if (char === '/' && line[at + 1] === '*') {
      current = { kind: 'block' };
      index = at + 2;
      continue;
    }
    if (char === '/' || char === '#') {
      prose.push(line.slice(at));
      return { parts: { code, prose }, state: current };
    }
    const quote = line.startsWith(char.repeat(3), at) ? char.repeat(3) : char;
    code += char;
    index = at + quote.length;
    current = { kind: 'string', quote };
    open = '';
  }
  if (current.kind === 'string') {
    // A string open at the line's end: a triple quote or a template literal goes on; a single
    // quote does not (an apostrophe in a line of prose), and its text is prose.
    if (current.quote.length === 3 || current.quote === '`') {
      if (open.length > 0) prose.push(open);
      return { parts: { code, prose }, state: current };
    }
    if (hasWhitespace(open)) prose.push(open);
    return { parts: { code, prose }, state: { kind: 'none' } };
  }
  return { parts: { code, prose }, state: current };
}

/** Whether `code` holds a run of at least `limit` plain words (letters only, one space apart). */
function hasWordRun(code: string, limit: number): boolean {
  let run = 0;
  let inWord = false;
  let clean = true;
  for (let index = 0; index <= code.length; index += 1) {
    const c = index < code.length ? code.charCodeAt(index) : 32;
    const letter = (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
    if (letter) {
      inWord = true;
      continue;
    }
    if (inWord && c === 32 && clean) {
      run += 1;
      if (run >= limit) return true;
      inWord = false;
      // Two spaces in a row end the run.
      clean = code.charCodeAt(index + 1) !== 32;
      continue;
    }
    if (inWord) {
      run += 1;
      if (run >= limit) return true;
    }
    run = 0;
    inWord = false;
    clean = true;
  }
  return false;
}

/** Letters, digits, "_" and "$" (ASCII), the characters of an identifier. */
function identifierPart(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 95 || code === 36;
}

/** A line's code that is only a string's quotes, with a closing ",", ";" or ")" (a string alone on its line). */
function stringAlone(code: string): boolean {
  let index = 0;
  while (index < code.length && QUOTE_MARKS.includes(code[index]!)) index += 1;
  if (index === 0) return false;
  while (index < code.length && ',;)'.includes(code[index]!)) index += 1;
  return index === code.length;
}

const QUOTE_MARKS = '"\'`';

/** The first word of a line's code (letters, digits, `_`, `$`). */
function firstWord(code: string): string {
  let start = 0;
  while (start < code.length && isWhitespace(code.charCodeAt(start))) start += 1;
  let end = start;
  while (end < code.length && identifierPart(code.charCodeAt(end))) end += 1;
  return code.slice(start, end);
}

/**
 * Whether the code of a line (strings and comments taken out) is shaped like code: it opens with
 * a keyword, a decorator or a closing bracket, or ends a statement, block or call, or assigns,
 * calls or names a member or a key; its brackets balance within the line as code's do
 * (gibberish.ts, locallyBalanced: an optimiser's noise puts them mid-line); and it is not a run
 * of plain words (a sentence with an apostrophe, a line of prose).
 */
export function codeShaped(code: string): boolean {
  const trimmed = code.trim();
  if (trimmed.length === 0) return false;
  if (hasWordRun(trimmed, PROSE_RUN)) return false;
  if (!locallyBalanced(trimmed)) return false;
  const first = trimmed[0]!;
  const last = trimmed[trimmed.length - 1]!;
  if (first === '@' || first === '}' || first === ')' || first === ']' || first === '.') return true;
  if (CODE_ENDS.includes(last)) return true;
  if (KEYWORDS.has(firstWord(trimmed))) return true;
  // An assignment or a call (an identifier followed by "=" or "("), a member or a key (an
  // identifier followed by "." or ":" and another identifier or a space).
  for (let index = 1; index < trimmed.length; index += 1) {
    const char = trimmed[index]!;
    const before = trimmed.charCodeAt(index - 1);
    if ((char === '=' || char === '(') && (identifierPart(before) || before === 41 /* ) */ || before === 93 /* ] */ || isWhitespace(before))) return true;
    const after = index + 1 < trimmed.length ? trimmed.charCodeAt(index + 1) : 32;
    if ((char === '.' || char === ':') && identifierPart(before) && (identifierPart(after) || isWhitespace(after))) return true;
  }
  return false;
}

/**
 * The prose of `text` when it reads as source code (at least MIN_CODE_LINES lines shaped like
 * code, and at least half of the lines that are not a comment or a string alone), else undefined.
 * A line shaped like code gives its comments and its strings that hold a space; every other line
 * (a comment, a docstring's line, a line of prose, a question asked about the code) is kept whole.
 */
export function codeProse(text: string): CodeProse | undefined {
  // One inspection asks about the same text twice (the classifier's prose reading in engine.ts,
  // and suffixStrength when the text's tail is suffix-like): the last answer is kept. The answer
  // depends on the text alone and is never modified by its readers.
  if (text !== lastCodeText) {
    lastCodeProse = readCodeProse(text);
    lastCodeText = text;
  }
  return lastCodeProse;
}

let lastCodeText: string | undefined;
let lastCodeProse: CodeProse | undefined;

function readCodeProse(text: string): CodeProse | undefined {
  if (text.length > MAX_CODE_CHARS) return undefined;
  const out: string[] = [];
  let state: State = { kind: 'none' };
  let lines = 0;
  let codeLines = 0;
  let otherLines = 0;
  let first = -1;
  let start = 0;
  // Lines not read yet. Once even all of them shaped like code could not make the text code, it is
  // not (the answer is the same; prose, most of what is inspected, stops early).
  let remaining = 1;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) remaining += 1;
  while (start <= text.length) {
    if (codeLines + remaining < MIN_CODE_LINES || codeLines + remaining < MIN_CODE_SHARE * (codeLines + remaining + otherLines)) return undefined;
    remaining -= 1;
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    const line = text.slice(start, end);
    start = end + 1;
    const wasInside = state.kind !== 'none';
    const { parts, state: next } = splitLine(line, state);
    state = next;
    if (line.trim().length === 0) continue;
    lines += 1;
    const code = parts.code.trim();
    if (wasInside && code.length === 0) {
      out.push(line);
      continue;
    }
    if (code.length === 0 || stringAlone(code)) {
      // A comment or a string alone on its line.
      if (parts.prose.length > 0) out.push(parts.prose.join(' '));
      continue;
    }
    if (codeShaped(parts.code)) {
      codeLines += 1;
      if (first === -1) first = out.length;
      if (parts.prose.length > 0) out.push(parts.prose.join(' '));
    } else {
      otherLines += 1;
      out.push(line);
    }
  }
  if (codeLines < MIN_CODE_LINES || codeLines < MIN_CODE_SHARE * (codeLines + otherLines)) return undefined;
  return { prose: out.join('\n'), inner: out.slice(first).join('\n'), codeLines, lines };
}
