/**
 * Kind-specific detectors that run inside T1 next to the catalogue: planted instructions in data
 * (`tool_output`, `llm_output`), malicious capability of a tool (`tool_definition`), leaks of the
 * system prompt or a configured secret, and recitals of instructions written for a model (`llm_output`). The kind decides: a sentence typed by the
 * user is a request, the same sentence inside a tool result is planted.
 */
import { hash } from 'node:crypto';
import { detectSecretExtraction } from './extraction.ts';
import { detectForeignOverride } from './foreign-override.ts';
import { DOCUMENTED_TALK, detectPlantedInstructions, isCommandDocumentation } from './indirect.ts';
import { detectLeak } from './leak.ts';
import { assistantAddressHint, detectInstructionRecital, detectJailbreakCompliance, refusesInstructions, refusesRequest } from './recital.ts';
import { detectMaliciousCapability, toolDefinitionText } from './tool-definition.ts';
import { DEFAULT_THRESHOLDS, HIJACKING_CATEGORIES } from './policy.ts';
import { combineFindings } from './score.ts';
import type { Finding, InspectKind, ToolDefinitionShape } from './types.ts';

/** The parts of an inspect request these detectors read (structurally the engine's InspectRequest). */
export interface KindRequest {
  readonly kind: InspectKind;
  readonly content?: string;
  readonly tool?: ToolDefinitionShape;
  readonly systemPrompt?: string;
  readonly messages?: readonly { readonly role: string; readonly content: string }[];
  readonly secrets?: readonly string[];
}

/** The text the engine scans for a request of a non-HTTP kind. */
export function kindText(request: KindRequest): string {
  if (request.kind === 'tool_definition' && request.tool !== undefined) return toolDefinitionText(request.tool);
  return request.content ?? '';
}

/** The system prompt of an `llm_output` request: `systemPrompt`, else its system messages. */
export function systemPromptOf(request: KindRequest): string {
  if (request.systemPrompt !== undefined) return request.systemPrompt;
  return (request.messages ?? []).filter((message) => message.role === 'system' || message.role === 'developer').map((message) => message.content).join('\n');
}

/**
 * What an analysis depends on beyond the kind and the text, for the analysis cache's key, as the
 * SHA-256 of the parts it reads (contextDigest); '' when there are none:
 * - `llm_output`: its system prompt (the leak and recital checks against it) and the configured
 *   secrets ('' when there are neither);
 * - `tool_definition`: the tool's name and description, which the malicious-capability check reads
 *   apart from the text. The text joins them with the schema's texts and the annotations by
 *   newlines, so a sentence in the description and the same sentence as a schema title with no
 *   description make one text, and only the first is the tool's purpose;
 * - every other kind: nothing (its detectors read the text alone).
 * The secrets never appear in the key. `systemPrompt`: the request's system prompt when the caller
 * has already joined it (systemPromptOf).
 */
export function kindAnalysisContext(request: KindRequest, systemPrompt?: string): string {
  if (request.kind === 'tool_definition') return request.tool === undefined ? '' : contextDigest([request.tool.name, request.tool.description ?? '']);
  if (request.kind !== 'llm_output') return '';
  const prompt = systemPrompt ?? systemPromptOf(request);
  const secrets = request.secrets ?? [];
  if (prompt === '' && secrets.length === 0) return '';
  return contextDigest([prompt, ...secrets]);
}

/**
 * The digest of an analysis's parts, each prefixed with its length, so no two different lists of
 * parts share one (parts joined by a separator can: a separator inside a part reads as a boundary).
 * The length prefix is unambiguous without JSON.stringify's escaping scan (which cost about twice
 * the hash itself for a 2 KB prompt). Hashed as UTF-16 code units: UTF-8 would write every lone
 * surrogate as U+FFFD, and two different parts would share a digest.
 */
function contextDigest(parts: readonly string[]): string {
  let material = '';
  for (const part of parts) material += `${part.length}:${part}`;
  return hash('sha256', Buffer.from(material, 'utf16le'), 'hex');
}

/** `systemPrompt`: the request's system prompt when the caller has already joined it (systemPromptOf). */
export function kindFindings(request: KindRequest, raw: string, systemPrompt?: string): Finding[] {
  switch (request.kind) {
    case 'prompt':
      return [...detectSecretExtraction(raw), ...detectForeignOverride(raw)];
    case 'tool_output':
      return [...detectPlantedInstructions(raw, { aiTask: true, documentation: true }), ...detectForeignOverride(raw)];
    case 'llm_output': {
      const prompt = systemPrompt ?? systemPromptOf(request);
      // The planted-instruction findings are judged as an answer's advice in adjustForKind.
      return [...detectLeak(raw, { ...(prompt === '' ? {} : { systemPrompt: prompt }), ...(request.secrets === undefined ? {} : { secrets: request.secrets }) }), ...detectInstructionRecital(raw), ...detectJailbreakCompliance(raw), ...detectPlantedInstructions(raw)];
    }
    case 'tool_definition':
      return request.tool === undefined ? [] : detectMaliciousCapability(request.tool);
    default:
      return [];
  }
}

/**
 * Planted-instruction findings that reach a machine in any text: an address to the AI or an
 * assistant, a spoofed role or template token, hidden text, a tool named for the reader to call,
 * the reader's task spoken of, an instruction to shape the answer (or a markdown image carrying
 * data out).
 */
const MACHINE_ADDRESSED: ReadonlySet<string> = new Set([
  'indirect.addressed-to-ai',
  'indirect.addressed-to-assistant',
  'indirect.role-spoofing',
  'indirect.hidden-instruction',
  'indirect.tool-directive',
  'indirect.agent-task-reference',
  'indirect.output-hijack',
]);
/**
 * A tool named for the reader to call, or the reader's task spoken of, is an answer's ordinary
 * talk ("call the function with the address", "let's proceed with your request") unless it is
 * confident; the other classes address a machine at any confidence from 0.4.
 */
const ORDINARY_IN_ANSWERS: ReadonlySet<string> = new Set(['indirect.tool-directive', 'indirect.agent-task-reference']);
const addressesMachine = (finding: Finding): boolean => MACHINE_ADDRESSED.has(finding.id) && finding.confidence >= (ORDINARY_IN_ANSWERS.has(finding.id) ? 0.6 : 0.4);

/** The recital check's confidence for the user in the third person alone (recital.ts). */
const USER_THIRD_ALONE = 0.25;

/**
 * Under Alert: an answer's advice to its reader is logged, not refused or alerted on ("back up
 * the files, then send them to your accountant" is what answers are made of).
 */
const ADVICE_CAP = 0.35;
/**
 * Under Challenge: a direction about the form of an answer ("respond in Spanish", "answer in
 * under 100 words") is what a model is told, not advice a reader acts on; it is reported at Alert.
 */
const ANSWER_SHAPE_CAP = 0.45;
const ANSWER_SHAPE: ReadonlySet<string> = new Set(['indirect.answer-directive', 'indirect.answer-form']);

/**
 * A model's answer is read by the person who asked: its imperatives ("back up the files, then
 * send them to your accountant"), "before you …" and "you should …" are advice to that person.
 * They are instructions aimed at a machine only when the answer also addresses one (the AI, an
 * agent, a tool, hidden text) or reads like instructions written for a model (the recital check);
 * otherwise the planted-instruction findings of an answer are reported as one finding, capped
 * under Alert (ADVICE_CAP), or under Challenge when it directs the form of an answer
 * (ANSWER_SHAPE_CAP).
 */
function answerInstructions(findings: readonly Finding[], window: boolean): { findings: Finding[]; advice?: Finding } {
  const planted = findings.filter((finding) => finding.id.startsWith('indirect.'));
  // Any recital sign, even one class of it alone (0.25–0.35), makes the imperatives a prompt's
  // rules; in a window of a long answer the user in the third person alone (0.25: "the user's
  // question" in an answer about how an AI works) does not.
  const recited = findings.some((finding) => finding.id === 'leak.instruction-recital' && (!window || finding.confidence > USER_THIRD_ALONE));
  if (planted.length === 0 || recited || planted.some((finding) => addressesMachine(finding))) return { findings: [...findings] };
  // Reported once: three phrasings of one piece of advice must not add up to a refusal. A
  // direction about the answer's form is the one reported when there is one.
  const shaped = planted.filter((finding) => ANSWER_SHAPE.has(finding.id));
  const pool = shaped.length > 0 ? shaped : planted;
  const strongest = pool.reduce((best, finding) => (finding.confidence > best.confidence ? finding : best));
  const advice = { ...strongest, confidence: Math.min(strongest.confidence, shaped.length > 0 ? ANSWER_SHAPE_CAP : ADVICE_CAP) };
  return { findings: [...findings.filter((finding) => !finding.id.startsWith('indirect.')), advice], advice };
}

/** What the advice may bring a window to at most: mid-Alert, so weak evasion signals scored after it do not lift it either. */
const ADVICE_CEILING = 0.5;

/**
 * In a window of a long answer the advice is reported, and it lifts nothing: when the other
 * findings stay under Challenge, the advice is weighed so that with them they stay at mid-Alert
 * (the answer's own talk beside a research framing or a quoted "say" from another paragraph is
 * not a refusal; with a confident finding the advice changes nothing either way).
 */
function adviceLiftsNothing(findings: readonly Finding[], advice: Finding): Finding[] {
  const others = combineFindings(findings.filter((finding) => finding !== advice));
  if (others >= DEFAULT_THRESHOLDS.challenge || combineFindings(findings) <= ADVICE_CEILING) return [...findings];
  const weight = Math.max(0, Math.floor((1 - (1 - ADVICE_CEILING) / (1 - others)) * 100) / 100);
  return findings.map((finding) => (finding === advice ? { ...finding, confidence: Math.min(finding.confidence, weight) } : finding));
}

/**
 * Usage guidance in tool descriptions ("use X before Y", "prefer this tool", "then call Z") is
 * how legitimate servers route the model between their own tools; in a `tool_definition` these
 * catalogue findings are kept as weak evidence (they neither block nor count as agreement for the
 * classifier) unless a stronger poisoning sign is present in the same definition.
 */
const TOOL_GUIDANCE: ReadonlySet<string> = new Set(['tp.prioritize-tool', 'tp.before-using', 'tp.avoid-other-tools', 'pc.then-call-tool', 'tp.execute-this-tool']);
const GUIDANCE_CAP = 0.25;

/** Under Alert: a refusal's mention of the prompt it withholds is reported, not refused. */
const REFUSAL_CAP = 0.3;

/**
 * An `llm_output` that declines to give out its instructions mentions them ("I can't share my
 * system prompt"): the catalogue's extraction patterns, written for requests, are capped under
 * Alert there unless the answer goes on to recite or leak (a finding of this module ≥ 0.6 keeps
 * everything as it is).
 */
function adjustRefusal(all: readonly Finding[], raw: string, window: boolean): Finding[] {
  if (all.some((finding) => finding.id.startsWith('leak.') && finding.confidence >= 0.6)) return [...all];
  // Nothing found in a whole answer: two readings of speaking about the assistant and its user log it (ranking; det-llm-13).
  if (all.length === 0) return window ? [] : assistantAddressHint(raw);
  const { findings, advice } = answerInstructions(all, window);
  const adjusted = requireAgreementInAnswer(capJailbreakWordsInRefusal(capPromptWordsInRefusal(findings, raw), raw), window);
  if (!window) return adjusted;
  const kept = advice === undefined ? undefined : adjusted.find((finding) => finding.id === advice.id && finding.id.startsWith('indirect.'));
  return kept === undefined ? adjusted : adviceLiftsNothing(adjusted, kept);
}

/** A catalogue finding at or above this blocks on its own whatever the kind (see the policy). */
const CATALOGUE_ALONE = 0.9;
/** In a window of a long answer, a catalogue pattern from Alert on needs agreement to count. */
const LONE_FROM_IN_WINDOW = 0.4;
/** A catalogue pattern confident on its own (from here it needs agreement in an answer, below 0.9). */
const CONFIDENT_PATTERN = 0.6;
/** Reported, not counted: with the answer's advice (0.45) it stays under Challenge. */
const LONE_CATALOGUE_CAP = 0.25;

/** The catalogue's character lock ("stay in character"), the one jailbreak sign that agrees with another of its own category in an answer. */
const CHARACTER_LOCK = 'jb.stay-in-character';
/**
 * An answer that promises to stay in a character and names a jailbreak's mark beside it ("I'll stay
 * in character as AIM, an unfiltered and amoral chatbot", "I'll stay in character as your evil AI
 * and I won't refuse anything") has taken the jailbreak: the lock and the other jailbreak pattern
 * agree, though they share a category. A role-play accepted ("Sure, I'll stay in character as your
 * innkeeper") holds the lock alone and stays at Alert.
 */
function lockedIn(other: Finding, finding: Finding): boolean {
  return other.category === 'jailbreak' && finding.category === 'jailbreak' && (other.id === CHARACTER_LOCK) !== (finding.id === CHARACTER_LOCK);
}

/**
 * The catalogue's patterns are written for requests; in a model's answer one of them alone is as
 * often the answer's own wording ("forget everything you know about budgeting", "never refuse a
 * second helping") as an attack, and in a long answer such wording turns up more often. In an
 * `llm_output` with no sign of a recital, a leak or a jailbreak that took (those keep everything,
 * above), a catalogue finding from 0.6 to 0.9 counts as confident only when a finding of another
 * category (≥ 0.4, other than the answer's own advice) agrees; otherwise it is reported at 0.25.
 */
function requireAgreementInAnswer(findings: readonly Finding[], window: boolean): Finding[] {
  const catalogue = (finding: Finding) => finding.tier === 't1' && !finding.id.startsWith('leak.') && !finding.id.startsWith('indirect.');
  // The answer's own advice, reported under Challenge (answerInstructions), agrees with nothing.
  // In a window of a long answer (lengthWindow), nor does another catalogue pattern that is not
  // confident itself: two weak request-shaped phrases of different paragraphs do not prop each
  // other up there; a sign written for answers (a recital, a leak) agrees at any strength.
  const agrees = (other: Finding, finding: Finding) => (other.category !== finding.category || lockedIn(other, finding)) && !(other.id.startsWith('indirect.') && other.confidence <= ANSWER_SHAPE_CAP)
    && (window ? (other.confidence >= 0.4 || other.id.startsWith('leak.')) && !(catalogue(other) && other.confidence < CONFIDENT_PATTERN) : other.confidence >= 0.4);
  const from = window ? LONE_FROM_IN_WINDOW : CONFIDENT_PATTERN;
  const lone = (finding: Finding) => catalogue(finding) && finding.confidence >= from && finding.confidence < CATALOGUE_ALONE && !findings.some((other) => agrees(other, finding));
  if (!findings.some(lone)) return [...findings];
  return findings.map((finding) => (lone(finding) ? { ...finding, confidence: LONE_CATALOGUE_CAP } : finding));
}

function capPromptWordsInRefusal(findings: readonly Finding[], raw: string): Finding[] {
  if (!findings.some((finding) => finding.id.startsWith('sp.')) || !refusesInstructions(raw)) return [...findings];
  return findings.map((finding) => (finding.id.startsWith('sp.') && finding.confidence > REFUSAL_CAP ? { ...finding, confidence: REFUSAL_CAP } : finding));
}

/**
 * An answer that declines the request ("As an AI language model, I cannot provide harmful or
 * unethical content") names what it declines; the catalogue's jailbreak patterns (below 0.9) are
 * capped under Alert there. An answer that goes on as a jailbreak persona carries
 * `leak.jailbreak-compliance` (≥ 0.6), which keeps everything as it is (above).
 */
function capJailbreakWordsInRefusal(findings: readonly Finding[], raw: string): Finding[] {
  const capped = (finding: Finding) => finding.id.startsWith('jb.') && finding.confidence > REFUSAL_CAP && finding.confidence < 0.9;
  if (!findings.some(capped) || !refusesRequest(raw)) return [...findings];
  return findings.map((finding) => (capped(finding) ? { ...finding, confidence: REFUSAL_CAP } : finding));
}

/**
 * A planted-instruction finding this strong in command documentation addresses a machine: the
 * documentation's own talk is reported under it (indirect.ts, DOCUMENTED_TALK), so what is left
 * from here is an address to the AI, a spoofed role, hidden text, a direction about the reader's
 * answer, a planted override or a request to send a secret out. So is a catalogue pattern that
 * matches only a decoded or invisible form of the text.
 */
const MACHINE_EVIDENCE = 0.45;
/** What the request-shaped catalogue findings of command documentation may add up to: under Alert. */
const DOCUMENTATION_CEILING = 0.3;

/**
 * Whether a `tool_output` reads as command documentation (a manual page, `--help` output, a README
 * of a command-line tool) with nothing in it that addresses a machine: its imperatives and the
 * catalogue's request-shaped phrases in it ("override the default policy", "no limits", "for
 * testing purposes only", "### new Cookies(") are the documentation's own words.
 */
export function documentationOnly(kind: InspectKind, findings: readonly Finding[], raw: string): boolean {
  if (kind !== 'tool_output') return false;
  if (findings.some((finding) => (finding.confidence >= MACHINE_EVIDENCE && (finding.id.startsWith('indirect.') || hiddenVariant(finding))) || plantedWhateverTheForm(finding))) return false;
  return isCommandDocumentation(raw);
}

/** Confidence from which a hijacking-class or tool-poisoning pattern is evidence whatever text it sits in. */
const PLANTED_EVIDENCE = 0.8;

/**
 * A finding that no documentation's wording explains, so that it keeps the text from being read
 * as documentation: how a text is laid out is the sender's choice (a `Usage:` line costs an
 * attacker one line), so the form may only excuse the weak, request-shaped phrases a manual is
 * made of. These are a confident pattern of the agent-hijacking classes or of tool poisoning
 * (sending data out, hiding an action from the user, forged system turns) and an override of
 * previous instructions in another language (the English one is a planted override in
 * indirect.ts, which already keeps the text's weight).
 */
function plantedWhateverTheForm(finding: Finding): boolean {
  if (finding.tier !== 't1' || finding.id.startsWith('indirect.')) return false;
  if (finding.id.startsWith('pi.ignore-previous-')) return true;
  return finding.confidence >= PLANTED_EVIDENCE && (HIJACKING_CATEGORIES.has(finding.category) || finding.category === 'tool-poisoning');
}

/** A pattern found only in a decoded or invisible form of the text (base64, tag characters …): hidden text, which documentation does not need. */
function hiddenVariant(finding: Finding): boolean {
  return finding.variant !== undefined && (finding.variant.startsWith('decoded:') || finding.variant === 'tag-characters');
}

/**
 * In command documentation with nothing that addresses a machine (documentationOnly), the
 * catalogue's patterns — written for requests typed to an assistant — are reported, not counted:
 * each at most DOCUMENTED_TALK and together under DOCUMENTATION_CEILING. A confident pattern
 * (≥ 0.9) is weighed the same: in a manual "override the default policy" and "clear the previous
 * msgid" are what an option does. A planted override ("ignore all previous instructions", in any
 * language) or a confident hijacking pattern keeps everything as it is (documentationOnly).
 */
function documentationAsData(findings: readonly Finding[], raw: string): Finding[] {
  const catalogue = findings.filter((finding) => finding.tier === 't1' && !finding.id.startsWith('indirect.'));
  if (catalogue.length === 0 || !documentationOnly('tool_output', findings, raw)) return [...findings];
  const cap = Math.min(DOCUMENTED_TALK, Math.floor((1 - Math.pow(1 - DOCUMENTATION_CEILING, 1 / findings.length)) * 1e4) / 1e4);
  return findings.map((finding) => (catalogue.includes(finding) || finding.confidence > cap ? { ...finding, confidence: Math.min(finding.confidence, cap) } : finding));
}

/**
 * `lengthWindow`: the findings are those of one window of a long text that only weak evidence
 * made suspect (the engine's localRuleScore). In a model's answer such a window is judged
 * stricter than a whole short answer: the answer's advice lifts nothing, and a request-shaped
 * pattern from Alert on needs agreement from something other than another weak one. A long
 * answer holds advice in every paragraph and request-shaped phrases here and there, and which of
 * them fall into one window is a matter of its length (issue #32: 8 KB of benign answers refused
 * at three times the 1 KB rate); a short answer with an imperative beside a quoted "say …" is
 * what a short prompt of rules looks like, and is judged as before.
 */
export function adjustForKind(kind: InspectKind, findings: readonly Finding[], raw?: string, lengthWindow = false): Finding[] {
  if (kind === 'llm_output' && raw !== undefined) return adjustRefusal(findings, raw, lengthWindow);
  if (kind === 'tool_output' && raw !== undefined) return documentationAsData(findings, raw);
  if (kind !== 'tool_definition') return [...findings];
  const strongOther = findings.some((finding) => !TOOL_GUIDANCE.has(finding.id) && finding.confidence >= 0.5);
  if (strongOther) return [...findings];
  return findings.map((finding) => (TOOL_GUIDANCE.has(finding.id) ? { ...finding, confidence: Math.min(finding.confidence, GUIDANCE_CAP) } : finding));
}
