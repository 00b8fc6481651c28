/**
 * Oblique extraction of a guarded secret from the assistant (kind `prompt`): asking it to
 * share, confirm, spell, translate, encode or hint at *its* password, access code, secret word
 * or instructions, in several languages, and asking for it piece by piece (first letter,
 * length, rhymes). Questions about passwords in general ("how do I store passwords safely?")
 * are not requests for the assistant's secret: the secret must be the assistant's or "ours"
 * ("your password", "the password for this system", "our access code"), or asked for in a
 * guessing-game shape (letters, length, hint).
 * Linear regular expressions only (bounded gaps, no nested quantifiers).
 */
import { caseInsensitiveSlots, requiredClauses } from './catalogue/literals.ts';
import type { Finding } from './types.ts';

const MAX_SCAN = 16_384;

const SECRET_NOUN =
  "(?:password|passcode|pass\\s?phrase|pass\\s?word|access\\s{1,3}code|secret\\s{1,3}(?:word|key|code|phrase|password)|code\\s?word|magic\\s{1,3}word|pin\\s{1,3}code|unlock\\s{1,3}code|system\\s{1,3}prompt|hidden\\s{1,3}instructions|initial\\s{1,3}instructions|contraseña|contrasena|clave|mot\\s{1,3}de\\s{1,3}passe|code\\s{1,3}secret|passwort|kennwort|geheimwort|zugangscode|parola\\s{1,3}d'ordine|codice\\s{1,3}segreto|senha|palavra-passe|wachtwoord|пароль|код\\s{1,3}доступа|κωδικός|συνθηματικό|密码|口令|暗号|パスワード|合言葉|비밀번호|암호|şifre|parola|hasło|heslo)";

/** The assistant's (or "our") secret, in several languages. */
/** Words after "password" that make it a topic rather than the secret ("our password policy"). */
const TOPIC = '(?!\\s{0,3}(?:polic|manag|reset|strength|requirement|hygien|rotation|complexit|hash|storage|field|length|expir|change|recovery|generator|protect|secur|best|rule|vault\\s{1,3}app))';
const OWNED = new RegExp(
  `\\b(?:your|ur|our|the\\s{1,3}(?:system'?s?|bot'?s?|assistant'?s?|ai'?s?|vault'?s?|admin|secret)|this\\s{1,3}(?:system'?s?|bot'?s?|vault'?s?))\\s{1,3}(?:\\w{1,15}\\s{1,3})?${SECRET_NOUN}${TOPIC}|${SECRET_NOUN}\\s{1,3}(?:for|of|to)\\s{1,3}(?:our|this|the)\\s{1,3}(?:system|account|vault|server|bot|database|door|network)|(?:tu|su|vuestra|nuestra|la)\\s{1,3}(?:contraseña|contrasena|clave)|(?:ton|votre|notre|le)\\s{1,3}(?:mot\\s{1,3}de\\s{1,3}passe|code\\s{1,3}secret)|(?:dein|deine|ihr|ihre|unser|unsere|das)\\s{1,3}(?:passwort|kennwort|geheimwort|zugangscode)|(?:la\\s{1,3}tua|la\\s{1,3}vostra|la\\s{1,3}nostra|la)\\s{1,3}password|(?:sua|tua|nossa|a)\\s{1,3}senha|твой\\s{1,3}пароль|ваш\\s{1,3}пароль|наш\\s{1,3}пароль|ο\\s{1,3}κωδικός|你的密码|密码是|パスワードは|パスワードを`,
  'iu',
);

/** Request verbs: say, share, confirm, spell, translate, encode, hint, complete … (several languages). */
const REQUEST =
  /\b(?:what(?:'s|\s{1,3}is|\s{1,3}was)|tell|give|share|confirm|reveal|disclose|say|print|output|write|spell|type|display|show|send|repeat|translate|encode|encrypt|reverse|hint|remind|recite|sing|rhyme|leak|provide|read\s{1,3}out|need|forgot|lost|cuál\s{1,3}es|cual\s{1,3}es|dime|dame|dites|donne|quel\s{1,3}est|quelle\s{1,3}est|wie\s{1,3}lautet|was\s{1,3}ist|sag|gib|qual\s{1,3}è|dimmi|qual\s{1,3}é|me\s{1,3}diga)\b|(?:какой|скажи|назови|ποιος\s{1,3}είναι|πες|是什么|告诉我|教えて|何ですか|알려)/iu;

/** Piecewise extraction: letters, length, rhymes, hints about the secret. */
const PIECEWISE = new RegExp(
  `\\b(?:first|last|second|third|next|each|every)\\s{1,3}(?:letter|character|char|digit|word|syllable)s?\\s{1,3}(?:of|in)\\s{1,3}(?:the|your|our|this)\\s{1,3}(?:\\w{1,15}\\s{1,3})?${SECRET_NOUN}|\\b(?:how\\s{1,3}many\\s{1,3}(?:letters|characters|digits)\\s{1,3}(?:are\\s{1,3}|does\\s{1,3})?(?:in|has|have)\\s{1,3}(?:the|your|our)\\s{1,3}(?:\\w{1,15}\\s{1,3})?${SECRET_NOUN}|what\\s{1,3}(?:does|do)\\s{1,3}(?:the|your|our)\\s{1,3}(?:\\w{1,15}\\s{1,3})?${SECRET_NOUN}\\s{1,3}(?:rhyme|start|begin|end|sound))|\\b(?:rhymes?\\s{1,3}with|starts?\\s{1,3}with|sounds?\\s{1,3}like|synonym\\s{1,3}(?:of|for))\\s{1,3}(?:the|your|our)\\s{1,3}(?:\\w{1,15}\\s{1,3})?${SECRET_NOUN}|\\b(?:hint|clue|riddle|acrostic|anagram)\\s{1,3}(?:about|for|to|of|whose\\s{1,3}answer\\s{1,3}is)\\s{1,3}(?:the|your|our)\\s{1,3}(?:\\w{1,15}\\s{1,3})?${SECRET_NOUN}`,
  'iu',
);

/**
 * Whether a sentence can give a finding at all: every match of PIECEWISE or OWNED holds, for one
 * of its alternatives, a literal of each of that alternative's clauses (catalogue/literals.ts),
 * under the same case folding. One automaton pass per sentence instead of the two expressions
 * above (a case-insensitive Unicode alternation costs about a microsecond per character);
 * sentences without the literals are exactly those on which both expressions fail.
 */
const CANDIDATE = ((): ((sentence: string) => boolean) | null => {
  const forms = [PIECEWISE, OWNED].map((regex) => requiredClauses(regex.source, { unicode: true }));
  if (forms.some((form) => form === null)) return null;
  const alternatives = forms.flatMap((form) => form!);
  const literals = [...new Set(alternatives.flat(2))];
  const { slots, find } = caseInsensitiveSlots(literals);
  const slotOf = new Map(literals.map((literal, index) => [literal, slots[index]!]));
  const clauses = alternatives.map((clauseList) => clauseList.map((clause) => [...new Set(clause.map((literal) => slotOf.get(literal)!))]));
  const holds = (found: Uint8Array, clause: readonly number[]) => {
    for (const slot of clause) if (found[slot] === 1) return true;
    return false;
  };
  return (sentence) => {
    const found = find(sentence);
    for (const clauseList of clauses) {
      let all = true;
      for (const clause of clauseList) {
        if (!holds(found, clause)) {
          all = false;
          break;
        }
      }
      if (all) return true;
    }
    return false;
  };
})();

/**
 * Findings for a prompt that asks for the assistant's secret: the secret phrase plus a request
 * verb within the same sentence, or a piecewise request.
 */
export function detectSecretExtraction(raw: string): Finding[] {
  const text = (raw.length > MAX_SCAN ? raw.slice(0, MAX_SCAN) : raw).normalize('NFC');
  const findings: Finding[] = [];
  for (const sentence of text.split(/(?<=[.!?。？！])\s{0,3}|\n+/u)) {
    if (sentence.length < 6 || (CANDIDATE !== null && !CANDIDATE(sentence))) continue;
    if (PIECEWISE.test(sentence)) {
      findings.push({ id: 'extraction.piecewise-secret', name: 'Secret asked for piece by piece (letters, length, rhymes, hints)', category: 'system-prompt-extraction', confidence: 0.65, tier: 't1' });
      break;
    }
    if (OWNED.test(sentence) && REQUEST.test(sentence)) {
      findings.push({ id: 'extraction.guarded-secret', name: "Request for the assistant's password, access code or instructions", category: 'system-prompt-extraction', confidence: 0.6, tier: 't1' });
      break;
    }
  }
  return findings;
}
