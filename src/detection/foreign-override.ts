/**
 * "Ignore your previous instructions" in languages the catalogue's patterns cannot see (issue #32):
 * the catalogue scans a folded text (accents dropped, Cyrillic and Greek letters turned into
 * their Latin lookalikes) and covers English, German, Dutch and the Romance languages there; this
 * detector reads the text as written (NFKC, lower-cased) for Russian and Ukrainian, Polish,
 * Turkish, Indonesian and Malay, Tagalog, Vietnamese, Arabic, Hindi, Bengali, Thai, Chinese,
 * Japanese and Korean. A finding needs the three parts of the English phrase in one sentence: a
 * verb telling the reader to ignore or forget, a word placing what is dropped before now or
 * making it the reader's own (previous, above, original, all, your) and a word for instructions
 * or rules, found in the stretch of the sentence that follows the verb (or precedes it, in the
 * languages that put the object first). The verb is the imperative where the language tells it
 * from "I forgot": the user who forgot the earlier steps is not overriding anything. Each
 * expression is an alternation of words (no gaps, no nested quantifiers), so matching is linear.
 */
import { buildAutomaton } from './catalogue/keywords.ts';
import { requiredLiterals } from './catalogue/literals.ts';
import type { Finding } from './types.ts';

const MAX_SCAN = 16_384;
const SENTENCE_END = /[.!?。！？\n]/u;

/** Not inside a word: the verb starts and ends here (languages written with spaces). */
const START = String.raw`(?<![\p{L}\p{M}])`;
const END = String.raw`(?![\p{L}\p{M}])`;

interface Language {
  readonly code: string;
  /** The imperative verb (global). */
  readonly verb: RegExp;
  /** Where the qualifier and the object stand: after the verb, or before it (object-first languages). */
  readonly side: 'after' | 'before';
  /** How many characters of the sentence on that side are read. */
  readonly reach: number;
  readonly qualifier: RegExp;
  readonly object: RegExp;
}

/** Written in NFC and normalized like the text (NFKC) on compiling. */
function language(code: string, side: 'after' | 'before', reach: number, verb: string, qualifier: string, object: string): Language {
  const compile = (source: string, flags: string) => new RegExp(source.normalize('NFKC'), flags);
  return { code, side, reach, verb: compile(verb, 'gu'), qualifier: compile(qualifier, 'u'), object: compile(object, 'u') };
}

const LANGUAGES: readonly Language[] = [
  language(
    'ru', 'after', 60,
    String.raw`${START}(?:проигнорируй|игнорируй|забудь|не обращай внимания на|не обращайте внимания на|отбрось|пренебреги)(?:те)?${END}`,
    String.raw`предыдущ|прежн|предшествующ|вышеуказанн|вышеизложенн|вышеприведенн|вышеприведённ|исходн|первоначальн|прошл|все|всё|свои|твои|ваши`,
    String.raw`инструкци|указани|правил|команд|директив|ограничени|промпт|что (?:тебе|вам) (?:говорили|сказали|велели|писали)|вышесказанн`,
  ),
  language(
    'uk', 'after', 60,
    String.raw`${START}(?:проігноруй|ігноруй|забудь)(?:те)?${END}`,
    String.raw`попередн|усі|всі|свої|твої|початков`,
    String.raw`інструкці|вказівк|правил|команд`,
  ),
  language(
    'pl', 'after', 60,
    String.raw`${START}(?:zignoruj|ignoruj|zapomnij|pomiń|nie zwracaj uwagi na)(?:cie)?${END}`,
    String.raw`poprzedni|wcześniejsz|powyższ|wszystki|dotychczasow|swoje|twoje|pierwotn`,
    String.raw`instrukcj|polece|zasad|reguł|wytyczn`,
  ),
  language(
    'tr', 'before', 60,
    // önceki talimatları yok say / görmezden gel / unut; önceki görevlerden bağımsız olarak.
    String.raw`${START}(?:yok say|görmezden gel|unut|boş ver|dikkate alma)(?:ın|in|un|yın)?${END}|${START}bağımsız olarak${END}`,
    String.raw`önceki|yukarıdaki|daha önceki|ilk|orijinal|tüm|bütün|sana verilen`,
    String.raw`talimat|yönerge|komut|kural|görev|direktif|emir`,
  ),
  language(
    'id', 'after', 60,
    String.raw`${START}(?:abaikan|lupakan|acuhkan|jangan hiraukan|jangan pedulikan|hiraukan)(?:lah)?${END}`,
    String.raw`sebelumnya|terdahulu|di atas|awal|sebelum ini|semua|seluruh`,
    String.raw`instruksi|petunjuk|perintah|arahan|aturan|peraturan`,
  ),
  language(
    'tl', 'after', 60,
    String.raw`${START}(?:huwag (?:mong |nyong )?pansinin|wag (?:mong )?pansinin|kalimutan|balewalain|isantabi)${END}`,
    String.raw`dati|nakaraan|nauna|sa itaas|kanina|lahat|iyong|inyong`,
    String.raw`tagubilin|instruksyon|utos|panuntunan|patakaran|direksyon`,
  ),
  language(
    'vi', 'after', 60,
    // "quên" is also "I forgot": only at a sentence start or after "hãy" / "vui lòng".
    String.raw`${START}(?:bỏ qua|phớt lờ|lờ đi|đừng để ý|đừng quan tâm|không cần quan tâm|mặc kệ)${END}|(?:^|(?<=[.!?:\n]\s{0,3})|(?<=hãy\s|vui lòng\s))quên${END}`,
    String.raw`trước đó|trước đây|trước|ở trên|ban đầu|cũ|tất cả|mọi`,
    String.raw`hướng dẫn|chỉ dẫn|chỉ thị|mệnh lệnh|lệnh|quy tắc|chỉ lệnh`,
  ),
  language(
    'ar', 'after', 60,
    // The whole word: "انس" (forget!) begins "انسخ" (copy!) and "انسان", "تناس" begins "تناسب".
    String.raw`${START}(?:تجاهل|تجاهلي|تجاهلوا|انس|انسى|إنس|انسي|تناس|تغاض|لا تلتفت|أهمل|اهمل|لا تهتم)${END}`,
    String.raw`السابقة|الأولى|أعلاه|الماضية|الأصلية|المسبقة|من قبل|سابقا`,
    String.raw`تعليمات|أوامر|اوامر|قواعد|إرشادات|ارشادات|توجيهات|كل ما|جميع ما`,
  ),
  language(
    'hi', 'before', 60,
    // The imperative (not "भूल गया", I forgot).
    String.raw`(?:भूल जा(?:ओ|इए|इये|एं|एँ|यें)|(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|उपेक्षा|अवहेलना|इग्नोर|दरकिनार) (?:करो|करें|करिए|कीजिए|कर दो|कर दें))`,
    String.raw`पिछले|पिछली|पिछला|पहले के|पहले दिए|पूर्व|ऊपर के|ऊपर दिए|सभी|सारे|अपने|अपनी|जो भी|जो कुछ|सब कुछ`,
    String.raw`निर्देश|आदेश|नियम|हिदायत|दिशानिर्देश|बताया गया|कहा गया`,
  ),
  language(
    'bn', 'before', 60,
    String.raw`(?:(?:উপেক্ষা|অগ্রাহ্য) কর(?:ুন|ো)|ভুলে যা(?:ন|ও))`,
    String.raw`আগের|পূর্ববর্তী|পূর্বের|উপরের|সমস্ত|সব|যা`,
    String.raw`নির্দেশ|আদেশ|নিয়ম|বলা হয়েছে|বলা হয়েছিল`,
  ),
  language(
    'th', 'after', 45,
    String.raw`ไม่ต้องสนใจ|อย่าไปสนใจ|อย่าสนใจ|เพิกเฉยต่อ|ละเว้น|ละทิ้ง|มองข้าม|(?:^|(?<=\s|กรุณา|โปรด))ลืม`,
    String.raw`ก่อนหน้า|ก่อน|ข้างต้น|เดิม|ทั้งหมด|ที่ผ่านมา`,
    // กฎ (rule) without กฎหมาย (law).
    String.raw`คำสั่ง|คำแนะนำ|กฎ(?!หมาย)|ข้อกำหนด`,
  ),
  language(
    'zh', 'after', 16,
    // 忘记 is also "I forgot": only at a clause start or after 请 / 先.
    String.raw`忽略|忽视|忽視|无视|無視|不要理会|不要理會|不理会|不理會|抛开|拋開|跳过|跳過|放弃|放棄|(?:^|(?<=[。！？.!?\n，,：:请請先]))忘(?:记|記|掉)`,
    // "我之前的要求" is the writer's own earlier words (a correction), not the assistant's instructions.
    String.raw`(?<!我|我们|我們)(?:之前|以前|先前|上面|上述|前面|以上|原来|原來|原有|原始|最初|此前|刚才|剛才|所有|一切|全部|你的)`,
    String.raw`指示|指令|说明|說明|规则|規則|要求|提示|命令|限制|约束|約束`,
  ),
  language(
    'ja', 'before', 24,
    String.raw`無視|忘れろ|忘れなさい|忘れてください|忘れて(?=[、。,.!！\s])`,
    String.raw`(?:以前|これまで|今まで|前|上記|先ほど|先程|事前|最初|元|すべて|全て|あなた)の`,
    String.raw`指示|命令|指令|ルール|規則|プロンプト|制約|制限`,
  ),
  language(
    'ko', 'before', 30,
    String.raw`무시하|무시해|잊어라|잊어버려|잊어 버려|잊고|잊으세요|잊어 주세요|잊어주세요`,
    String.raw`이전|앞의|앞선|위의|기존|지금까지|모든|너의|당신의|처음`,
    String.raw`지시|지침|명령|규칙|프롬프트|제한`,
  ),
];

/** Letters of the languages above that are not ASCII, or their Latin-script verbs: texts without any skip the expressions. */
const CANDIDATE = /[^\x00-\x7f]|abaikan|lupakan|acuhkan|hiraukan|pedulikan|pansinin|kalimutan|balewalain|isantabi|zignoruj|ignoruj|zapomnij|yok say|unut/iu;
/**
 * CANDIDATE's answer without its slow case-insensitive Unicode scan of every offset. Under
 * `iu`, `[^\x00-\x7f]` matches every code point beyond ASCII except U+017F and U+212A (they
 * fold to "s" and "k"): a code unit outside ASCII and those two (a surrogate too, paired or
 * not) is such a point, so CANDIDATE matches. A text of ASCII alone matches it exactly where
 * it holds one of the verbs in any case, which `i` without `u` reads the same on ASCII. Texts
 * of ASCII and U+017F or U+212A (rare) are asked CANDIDATE itself.
 */
const BEYOND_ASCII = /[^\x00-\x7f\u017f\u212a]/;
const FOLDS_TO_ASCII = /[\u017f\u212a]/;
const LATIN_VERBS = /abaikan|lupakan|acuhkan|hiraukan|pedulikan|pansinin|kalimutan|balewalain|isantabi|zignoruj|ignoruj|zapomnij|yok say|unut/i;

function isCandidate(text: string): boolean {
  if (BEYOND_ASCII.test(text)) return true;
  return FOLDS_TO_ASCII.test(text) ? CANDIDATE.test(text) : LATIN_VERBS.test(text);
}

/**
 * Which languages' verbs can match a text, from one automaton pass: every match of a verb holds
 * one of its required literals (catalogue/literals.ts; the verbs have no `i` flag and run on the
 * lower-cased text, so a literal is compared as is), and a language none of whose literals occur
 * in the text has no match to read. A language whose verb has no such literals is always read.
 */
const VERB_FILTER = ((): ((text: string) => boolean[]) => {
  const perLanguage = LANGUAGES.map(({ verb }) => {
    const literals = requiredLiterals(verb.source, { unicode: true });
    // A literal that holds another one of the set adds nothing to "one of them occurs".
    return literals === null ? null : literals.filter((literal) => !literals.some((other) => other !== literal && literal.includes(other)));
  });
  const strings = [...new Set(perLanguage.flatMap((literals) => literals ?? []))];
  const automaton = buildAutomaton(strings);
  const idsOf = perLanguage.map((literals) => (literals === null ? null : literals.map((literal) => strings.indexOf(literal))));
  return (text) => {
    const { found } = automaton.mark(text);
    return idsOf.map((ids) => ids === null || ids.some((id) => found[id] === 1));
  };
})();

/** The stretch of the sentence on `side` of [start, end), at most `reach` characters. */
function stretch(text: string, start: number, end: number, side: 'after' | 'before', reach: number): string {
  if (side === 'after') {
    const after = text.slice(end, end + reach);
    const stop = after.search(SENTENCE_END);
    return stop < 0 ? after : after.slice(0, stop);
  }
  const before = text.slice(Math.max(0, start - reach), start);
  let cut = -1;
  for (let index = before.length - 1; index >= 0; index -= 1) {
    if (SENTENCE_END.test(before[index]!)) {
      cut = index;
      break;
    }
  }
  return before.slice(cut + 1);
}

export function detectForeignOverride(raw: string): Finding[] {
  const bounded = raw.length > MAX_SCAN ? raw.slice(0, MAX_SCAN) : raw;
  if (!isCandidate(bounded)) return [];
  const text = bounded.normalize('NFKC').toLowerCase();
  const possible = VERB_FILTER(text);
  for (const [index, { code, verb, side, reach, qualifier, object }] of LANGUAGES.entries()) {
    if (!possible[index]!) continue;
    verb.lastIndex = 0;
    for (const match of text.matchAll(verb)) {
      const words = stretch(text, match.index, match.index + match[0].length, side, reach);
      if (qualifier.test(words) && object.test(words)) {
        return [{ id: 'pi.ignore-previous-foreign', name: `Override of previous instructions (${code})`, category: 'prompt-injection', confidence: 0.9, tier: 't1' }];
      }
    }
  }
  return [];
}

/** Every expression of this detector, for the ReDoS check. */
export const FOREIGN_OVERRIDE_PATTERNS: readonly RegExp[] = [...LANGUAGES.flatMap((entry) => [entry.verb, entry.qualifier, entry.object]), CANDIDATE, SENTENCE_END, BEYOND_ASCII, FOLDS_TO_ASCII, LATIN_VERBS];

/** The gate and the expression it stands for, for the equivalence test. */
export const candidateGateForTest = { isCandidate, CANDIDATE };
