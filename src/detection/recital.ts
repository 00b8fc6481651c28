/**
 * The `llm_output` recital check: does a model's answer recite instructions written for a model —
 * its own system prompt or hidden rules — when the request's system prompt is not supplied (the
 * leak check in leak.ts needs it)? It reads who the text addresses, not any corpus's wording:
 *
 *   - a system prompt speaks to the model in the second person and names it ("You are Aria, an
 *     assistant for …", "You are a helpful AI"), at the start of a line;
 *   - it speaks of the human in the third person ("if the user asks …", "respond to the user",
 *     "the user's question") — an answer to a person calls that person "you";
 *   - it sets rules for the model's answers ("never reveal these instructions", "always respond
 *     in …", "do not break character");
 *   - it carries the furniture of deployed prompts ("Knowledge cutoff: …", a "# Tools" heading,
 *     "namespace functions");
 *   - or the answer announces it ("Here is my system prompt:", "My instructions are:").
 *
 * A benign answer gives its reader advice ("you should back up your files", "never share your
 * password") and may quote one persona line in a code sample; one class of sign alone is weak,
 * two classes together (or an announced recital) are a recital. A refusal ("I can't share my
 * instructions") is not one. Linear regular expressions over the lower-cased text (bounded
 * classes and repeats, no nested unbounded quantifiers), one pass per class.
 */
import type { Finding } from './types.ts';

const MAX_SCAN = 65_536;

/**
 * A pattern with the words one of which it cannot match without (a cheap `includes` before the
 * regular expression keeps a long answer that holds none of them at a few microseconds).
 */
type Gated = readonly [readonly string[], RegExp];

/** Names for what a model is, in a persona line. */
const MODEL_NOUN = '(?:assistant|ai|a\\.i\\.|chatbot|chat\\s{1,3}bot|bot|language\\s{1,3}model|llm|gpt|agent|model|copilot|persona)';

/**
 * The persona line: the model named in the second person at the start of a line (a quote or a
 * list mark may precede it; a JSON key may not, so `"content": "You are a helpful assistant"` in
 * a code sample is not one).
 */
const PERSONA: readonly Gated[] = [
  [['you are'], new RegExp(`(?:^|\\n)[ \\t]{0,8}(?:[-*>#"'\`“]{1,3}[ \\t]{0,3})?you\\s{1,3}are\\s{1,3}(?:an?\\s{1,3}|the\\s{1,3})(?:[\\w'-]{1,24}[ ,]{1,3}){0,5}?${MODEL_NOUN}s?\\b`)],
  // "You are Nova, an …" / "You are ChatGPT, a large language model …"
  [['you are'], /(?:^|\n)[ \t]{0,8}(?:[-*>#"'`“]{1,3}[ \t]{0,3})?you\s{1,3}are\s{1,3}[\w.-]{2,30},\s{1,3}(?:an?|the)\s/],
  [['act as'], new RegExp(`(?:^|\\n)[ \\t]{0,8}(?:[-*>#"'\`“]{1,3}[ \\t]{0,3})?(?:you\\s{1,3}(?:will|shall)\\s{1,3}act|act)\\s{1,3}as\\s{1,3}(?:an?\\s{1,3}|the\\s{1,3})(?:[\\w'-]{1,24}[ ,]{1,3}){0,5}?${MODEL_NOUN}\\b`)],
  // The same line in other languages (Chinese, Japanese, Spanish, French, German, Portuguese, Italian).
  [['你是', '您是', 'あなたは', 'eres', 'tu es', 'vous êtes', 'du bist', 'você é', 'sei '], /(?:^|\n)[ \t]{0,8}(?:[-*>#"'`“]{1,3}[ \t]{0,3})?(?:你是|您是|あなたは|(?:eres|tu\s{1,3}es|vous\s{1,3}êtes|du\s{1,3}bist|você\s{1,3}é|sei)\s{1,3}(?:un|una|une|ein|eine|um|uma)\s)/],
  // Prompts written in the third person: "The assistant is Nova, …", "The assistant must never …".
  [['the assistant', 'the ai assistant', 'the chatbot'], /(?:^|\n)[ \t]{0,8}(?:[-*>#"'`“]{1,3}[ \t]{0,3})?the\s{1,3}(?:assistant|ai\s{1,3}assistant|chatbot)\s{1,3}(?:is|must|should|will|shall|never|always|can(?:not|'t)?|does\s{1,3}not|doesn't)\b/],
];

/**
 * Weaker persona signs: a text that opens by telling "you" what it is ("You are a meticulous
 * travel planner …"; also "You are a silver member" in an airline's answer), "your role is a …".
 */
const PERSONA_WEAK: readonly Gated[] = [[[], /^[\s"'`“*#>-]{0,8}you\s{1,3}are\s{1,3}(?:an?|the)\s/], [['your persona', 'your role'], /\byour\s{1,3}(?:persona|role)\s{1,3}is\s{1,3}(?:an?|the)\s/]];

/**
 * Sentences that open with a rule for "you" ("You must …", "You will never …", "You are not
 * allowed to …"); next to a persona they are rules for the model, alone they are advice.
 */
const YOU_RULE = /(?:^|\n|[.!:]\s)[ \t]{0,8}(?:[-*•\d.)]{1,4}[ \t]{0,3})?you\s{1,3}(?:must|should|will|shall|never|always|may\s{1,3}not|cannot|can't|do\s{1,3}not|don't|are\s{1,3}(?:not|to|allowed|forbidden|required|expected|only))\b/g;

function countRules(text: string): number {
  YOU_RULE.lastIndex = 0;
  let count = 0;
  while (count < 2 && YOU_RULE.exec(text) !== null) count++;
  return count;
}

/** The human spoken of in the third person, as rules about answering them. */
const USER_THIRD: readonly Gated[] = [
  [['user'], /\b(?:if|when|whenever|once|unless|in\s{1,3}case)\s{1,3}(?:(?:the|a)\s{1,3})?users?\s{1,3}(?:asks?|requests?|says?|wants?|tries|attempts?|inquires?|questions?|is\s{1,3}asking|mentions?|greets?|refers?)\b/],
  [['user'], /\b(?:respond|reply|answer|greet|refuse)\s{1,3}(?:to\s{1,3})?(?:the|a)\s{1,3}user\b/],
  [['user'], /\b(?:the|a)\s{1,3}user'?s\s{1,3}(?:questions?|requests?|query|queries|messages?|prompts?|intent|language|instructions?)\b/],
  [['用户', 'usuario', 'utilisateur', 'benutzer', 'nutzer', 'usuário'], /(?:如果|当|若)用户|用户(?:的)?(?:问题|请求|提问|输入)|\b(?:si|cuando)\s{1,3}el\s{1,3}usuario\b|\bsi\s{1,3}l'utilisateur\b|\b(?:wenn|falls)\s{1,3}der\s{1,3}(?:benutzer|nutzer)\b|\bse\s{1,3}o\s{1,3}usuário\b/],
];

/** Rules for the model's own answers. */
const ANSWER_RULES: readonly Gated[] = [
  [['instructions', 'prompt', 'rules', 'guidelines', 'directives', 'configuration'], /\b(?:never|do\s{1,3}not|don't|must\s{1,3}not|should\s{1,3}not|under\s{1,3}no\s{1,3}circumstances?)\s{1,3}(?:\w{1,16}\s{1,3}){0,2}?(?:reveal|disclose|share|repeat|discuss|mention|output|print|expose)(?:s|es)?\s{1,3}(?:\w{1,16}\s{1,3}){0,2}?(?:these|this|your|the|any)\s{1,3}(?:(?:system|initial|original|above|hidden|secret)\s{1,3})?(?:instructions|prompt|rules|guidelines|directives|configuration)\b/],
  [['respond', 'reply', 'answer'], /\b(?:always|never|do\s{1,3}not|don't|must)\s{1,3}(?:respond|reply|answer)\s{1,3}(?:in|with|only|using|as)\b/],
  [['character'], /\b(?:never|do\s{1,3}not|don't)\s{1,3}break\s{1,3}character\b/],
  [['character'], /\b(?:stay|remain)\s{1,3}in\s{1,3}character\b/],
  [['your responses', 'your answers', 'your replies'], /\byour\s{1,3}(?:responses|answers|replies)\s{1,3}(?:must|should|will)\b/],
  [['透露', '泄露', '泄漏', '重复', '输出', '公开', '告诉'], /(?:不要|不得|禁止|切勿|绝不|不能|不可)[^\n。]{0,12}(?:透露|泄露|泄漏|重复|输出|公开|告诉)[^\n。]{0,12}(?:指令|提示词?|规则|设定|说明)/],
];

/**
 * The model's own rules told in the first person: "I was instructed to …", "I must never …",
 * "My guidelines say …" (a refusal says what it will not do, not what it was told).
 */
const SELF_RULES: readonly Gated[] = [
  [['instructed', 'told', 'configured', 'prompted'], /\bi\s{1,3}(?:was|have\s{1,3}been|am|'ve\s{1,3}been)\s{1,3}(?:instructed|told|configured|prompted)\s{1,3}(?:to|not\s{1,3}to|that)\b/],
  [['i must'], /\bi\s{1,3}must\s{1,3}(?:always|never)\b/],
  [['my '], /\bmy\s{1,3}(?:instructions|guidelines|rules|system\s{1,3}prompt|directives)\s{1,3}(?:say|state|tell\s{1,3}me|include|specify|require|are\s{1,3}to)\b/],
];

/** The furniture of a deployed system prompt. */
const PROMPT_FURNITURE: readonly Gated[] = [
  [['cut'], /\bknowledge\s{1,3}cut-?off\s{0,3}:/],
  [['current date'], /\bcurrent\s{1,3}date\s{0,3}:\s{0,3}\d/],
  [['tools'], /(?:^|\n)[ \t]{0,3}#{1,3}[ \t]{1,3}tools[ \t]{0,3}(?:\n|$)/],
  [['namespace'], /\bnamespace\s{1,3}functions\b/],
  [['image input'], /\bimage\s{1,3}input\s{1,3}capabilities\s{0,3}:/],
  [['as knowledge'], /\b(?:files?|documents?)\s{1,3}(?:uploaded|provided)\s{1,3}as\s{1,3}knowledge\b/],
];

/**
 * Section headings of a structured prompt ("## Role", "## Constraints", "## Workflow", "##
 * Initialization"; the same in Chinese). Three different ones, one of them about the model's
 * conduct, make a prompt; a résumé ("## Profile", "## Skills") or a report ("## Background",
 * "## Goals") does not.
 */
const HEADING = /(?:^|\n)[ \t]{0,3}(?:#{1,4}[ \t]{0,3}|\*\*|【|\[)(role|persona|profile|skills?|constraints?|rules|workflow|initiali[sz]ation|goals?|background|output\s{1,3}format|tone|guidelines|instructions|capabilities|limitations|角色|技能|限制|约束|规则|工作流程?|初始化|目标|背景|输出格式|简介|定位)(?=[ \t]{0,3}(?:\*\*|】|\]|:|：)?[ \t]{0,3}(?:\n|$|:|：))/g;
const CONDUCT_HEADINGS: ReadonlySet<string> = new Set(['role', 'persona', 'constraint', 'constraints', 'rules', 'workflow', 'initialization', 'initialisation', 'guidelines', 'instructions', '角色', '限制', '约束', '规则', '工作流', '工作流程', '初始化']);

const HEADING_MARKS: readonly string[] = ['#', '**', '【', '['];

function promptHeadings(text: string): boolean {
  HEADING.lastIndex = 0;
  const seen = new Set<string>();
  let scanned = 0;
  for (let match = HEADING.exec(text); match !== null && scanned < 64; match = HEADING.exec(text)) {
    scanned++;
    seen.add(match[1]!.replace(/\s+/g, ' '));
  }
  return seen.size >= 3 && [...seen].some((name) => CONDUCT_HEADINGS.has(name));
}

/**
 * An answer that announces a recital of its own instructions: "Here is my system prompt:",
 * "My instructions are:", "Sure, these are the instructions I was given:" (a colon or a quote
 * follows; a refusal does not announce anything).
 */
const ANNOUNCED: readonly Gated[] = [
  [['here is', 'here are'], /\bhere\s{1,3}(?:is|are)\s{1,3}(?:my|the)\s{1,3}(?:full\s{1,3}|complete\s{1,3}|exact\s{1,3}|entire\s{1,3}|original\s{1,3}|initial\s{1,3}|verbatim\s{1,3}){0,2}(?:system\s{1,3}prompt|system\s{1,3}message|instructions|initial\s{1,3}prompt|prompt|guidelines|rules)\b[^\n:]{0,60}:/],
  [['my '], /\bmy\s{1,3}(?:system\s{1,3}prompt|system\s{1,3}message|instructions|initial\s{1,3}prompt|original\s{1,3}instructions|guidelines|rules)\s{1,3}(?:is|are|reads?|says?|states?)\s{0,3}[:"“]/],
  [['given'], /\b(?:the\s{1,3})?(?:instructions|prompt|rules)\s{1,3}i\s{1,3}(?:was|have\s{1,3}been|am)\s{1,3}given\s{0,3}(?:are|is|say|read)?\s{0,3}[:"“]/],
];

/**
 * A credential stated outright: "the password is 'TIDEPOOL'", "my secret code is: 7731". The
 * value is quoted, follows a colon, or is written in capitals (checked on the original case); the
 * noun is the subject ("the", "my", "our", "your" before it), so "the most common password is
 * '123456'" and "the password is case-sensitive" are not recitals.
 */
const SECRET_NOUN = '(?:(?:the|my|our|your)\\s{1,3}(?:secret\\s{1,3})?(?:password|passcode|passphrase|pass\\s{1,3}phrase|pin|access\\s{1,3}code|secret\\s{1,3}(?:key|word|code|phrase)|secret)|the\\s{1,3}(?:secret|code)\\s{1,3}word)\\s{1,3}(?:is|was)';
const SECRET_WORDS: readonly string[] = ['pass', 'pin', 'access code', 'secret', 'code word'];
const SECRET_QUOTED = new RegExp(`\\b${SECRET_NOUN}\\s{0,3}(?::\\s{0,3}[*"'\`“]{0,2}[^\\s"'”*\`]{3,40}|[*"'\`“]{1,2}[^\\s"'”*\`]{3,40}[*"'”\`])`);
const SECRET_CAPITALS = new RegExp(`\\b${SECRET_NOUN.replace(/\(\?:the\|my\|our\|your\)/g, '(?:[Tt]he|[Mm]y|[Oo]ur|[Yy]our)')}\\s{1,3}[A-Z][A-Z0-9_]{3,31}\\b(?![a-z])`);

const GATE_WORDS: readonly string[] = [
  ...new Set([PERSONA, PERSONA_WEAK, USER_THIRD, ANSWER_RULES, SELF_RULES, PROMPT_FURNITURE, ANNOUNCED].flatMap((list) => list.flatMap(([words]) => words)).concat(SECRET_WORDS, HEADING_MARKS)),
].sort((left, right) => right.length - left.length);
/** Every gate word in one alternation of literals: one scan of the text finds which occur. */
const GATE = new RegExp(GATE_WORDS.map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');

function wordsPresent(text: string): ReadonlySet<string> {
  const present = new Set<string>();
  GATE.lastIndex = 0;
  for (let match = GATE.exec(text); match !== null; match = GATE.exec(text)) present.add(match[0]);
  return present;
}

/** Whether any pattern matches, each tried only when one of its words occurs (none: always). */
function anyMatch(list: readonly Gated[], text: string, present: ReadonlySet<string>): boolean {
  for (const [words, regex] of list) {
    if (words.length > 0 && !words.some((word) => present.has(word))) continue;
    if (regex.test(text)) return true;
  }
  return false;
}

function recitalFinding(name: string, confidence: number): Finding {
  return { id: 'leak.instruction-recital', name, category: 'system-prompt-extraction', confidence, tier: 't1' };
}

/**
 * The text the patterns read: lower case, runs of spaces folded to one (a gate's "you are" also
 * finds "you  are"), typographic apostrophes made plain and "you're" spelled out.
 */
function prepare(output: string): string {
  const head = output.length > MAX_SCAN ? output.slice(0, MAX_SCAN) : output;
  return head.toLowerCase().replace(/[ \t\u00a0]{2,}/g, ' ').replace(/[’‘]/g, "'").replace(/\byou're\b/g, 'you are');
}

/** Findings for a model answer that recites instructions written for a model. */
export function detectInstructionRecital(output: string): Finding[] {
  const text = prepare(output);
  const present = wordsPresent(text);
  if (anyMatch(ANNOUNCED, text, present)) return [recitalFinding('Output announces a recital of its own instructions', 0.75)];
  if (SECRET_WORDS.some((word) => present.has(word)) && (SECRET_QUOTED.test(text) || SECRET_CAPITALS.test(output.length > MAX_SCAN ? output.slice(0, MAX_SCAN) : output))) {
    return [{ id: 'leak.secret-recital', name: 'Output states a password or secret outright', category: 'exfiltration', confidence: 0.7, tier: 't1' }];
  }
  const named = anyMatch(PERSONA, text, present);
  const persona = named || anyMatch(PERSONA_WEAK, text, present);
  // Rules for "you" count as a sign only where a persona says who "you" is.
  const youRules = persona && countRules(text) >= 2;
  const userThird = anyMatch(USER_THIRD, text, present);
  const rules = anyMatch(ANSWER_RULES, text, present) || anyMatch(SELF_RULES, text, present);
  const furniture = anyMatch(PROMPT_FURNITURE, text, present);
  const structured = HEADING_MARKS.some((mark) => present.has(mark)) && promptHeadings(text);
  const classes = Number(persona) + Number(userThird) + Number(rules) + Number(furniture) + Number(structured) + Number(youRules);
  if (classes >= 2) return [recitalFinding('Output recites instructions written for a model (persona, rules about the user or answers)', classes >= 3 ? 0.8 : 0.7)];
  // A model named in the second person, or a prompt's section headings, are written for a model.
  if (named || structured) return [recitalFinding('Output recites instructions written for a model (a persona line or prompt sections)', 0.6)];
  if (classes === 1) return [recitalFinding('Output reads in part like instructions written for a model', persona || furniture ? 0.35 : 0.25)];
  return [];
}

/**
 * A refusal to give out its instructions: "I'm sorry, but I can't share my system prompt", "I am
 * not able to reveal my instructions". It names the prompt it withholds, which the catalogue's
 * extraction patterns (written for requests) read as an attempt.
 */
const REFUSAL = /\bi(?:\s{1,3}|'m\s{1,3}|\s{1,3}am\s{1,3})(?:can't|cannot|can\s{1,3}not|won't|will\s{1,3}not|not\s{1,3}(?:able|allowed|permitted)\s{1,3}to|unable\s{1,3}to|must\s{1,3}not|don't|do\s{1,3}not)\s{1,3}(?:\w{1,12}\s{1,3}){0,2}?(?:share|reveal|disclose|provide|show|repeat|give|tell|print|output)\b[^.\n]{0,60}\b(?:prompt|instructions|guidelines|rules|configuration)\b/;

/** Whether a model's answer declines to give out its instructions (see REFUSAL). */
export function refusesInstructions(output: string): boolean {
  return REFUSAL.test(prepare(output));
}

/** Every regular expression of this module (for the ReDoS test). */
export const RECITAL_PATTERNS: readonly RegExp[] = [
  ...[PERSONA, PERSONA_WEAK, USER_THIRD, ANSWER_RULES, SELF_RULES, PROMPT_FURNITURE, ANNOUNCED].flatMap((list) => list.map(([, regex]) => regex)),
  YOU_RULE, HEADING, SECRET_QUOTED, SECRET_CAPITALS, GATE, REFUSAL,
];
