import { describe, expect, it } from 'vitest';
import { detectPii, loadPiiLexicons } from '../../src/gateway/pii/index.ts';

/** The PERSON spans found in `text`, as their text. */
const people = (text: string) => detectPii(text).filter((span) => span.type === 'PERSON').map((span) => span.value);

describe('PII person names', () => {
  it('reads every lexicon from its installed package (a missing one would silently lower recall)', () => {
    const lexicons = loadPiiLexicons();
    expect(lexicons.names.size).toBeGreaterThan(150_000);
    expect(lexicons.common.size).toBeGreaterThan(50_000);
    expect(lexicons.places.size).toBeGreaterThan(5_000);
    expect(lexicons.companies.size).toBeGreaterThan(1_000);
    expect(lexicons.wellKnown.size).toBeGreaterThan(30_000);
  });

  it.each([
    ['a full name with no cue', 'Please forward the minutes to Marguerite Okonkwo before noon.', ['Marguerite Okonkwo']],
    ['a single first name that is no English word', 'Honestly Tamsin never answers her phone.', ['Tamsin']],
    ['a surname of a shape many languages share', 'The contract was drafted by Wiśniewska last spring.', ['Wiśniewska']],
    ['an Icelandic-style patronymic with accents that no lexicon lists', 'We waited for Ásbjargardóttir at the gate.', ['Ásbjargardóttir']],
    ['a name with a middle initial', 'Escalate it to Rosalind K. Pemberton please.', ['Rosalind K. Pemberton']],
    ['a title inside the span', 'Hello, this is Mrs. Abernathy speaking.', ['Mrs. Abernathy']],
    ['a name typed in lower case', 'can you remind siobhan about the invoice', ['siobhan']],
    ['a speaker label', 'Ingeborg: did the parcel arrive?', ['Ingeborg']],
    ['a vocative', 'Oskar, could you check the logs?', ['Oskar']],
  ])('finds %s', (_kind, text, expected) => {
    expect(people(text)).toEqual(expected);
  });

  it('takes a name that is also an ordinary word only with support: a cue, a relation or the full name nearby', () => {
    expect(people('Mark the invoice as paid.')).toEqual([]);
    expect(people('Please ask my husband Mark about it.')).toEqual(['Mark']);
    expect(people('Everyone calls me Grace.')).toEqual(['Grace']);
    expect(people('Perdita Hunt signed it; later Hunt changed her mind.')).toEqual(['Perdita Hunt', 'Hunt']);
    expect(people('The hunt for the bug took all night.')).toEqual([]);
  });

  it('takes every member of a list in which most members are names', () => {
    expect(people('The founders were Kowalczyk, Reed and Abernathy.')).toEqual(['Kowalczyk', 'Reed', 'Abernathy']);
  });

  it('takes three bare surnames in a list as three people (there is no firm-name rule to swallow them)', () => {
    expect(people('Please call Smith, Jones and Brown tomorrow.')).toEqual(['Smith', 'Jones', 'Brown']);
  });

  it.each([
    ['a city that is also a surname, after "in"', 'The conference is in Florence this year.'],
    ['a country that is also a surname', 'We are expanding to Jordan and Chad next quarter.'],
    ['a capital city with no preposition', 'London has the cheapest flights in May.'],
    ['a street with a house number', 'Deliver it to Ingrid 42 please.'],
    ['a street after "rue"', 'The office is at 7 rue Gaston Ferrand.'],
    ['a place name led by "New"', 'The weather in New Hampshire is cold.'],
    ['a name followed by a common word (an award, a team)', 'She won the Nobel Prize and cheered for Manchester United.'],
    ['eponyms used as adjectives', 'Use a Gaussian blur, then check the Luhn digit and a Fibonacci heap.'],
    ['labels with a colon', 'Note: the Hint: field is optional.'],
    ['capitalised words at the start of sentences', 'The report is late. When it arrives, Please review it.'],
    ['products and languages', 'Deploy the Django app on Kubernetes with Python and Docker.'],
    ['a military post address', 'Ship it to USNS Pemberton FPO AP 96512.'],
    ['a product after a question mark', 'What is a SIEM? Splunk is one example.'],
    ['a licence after "under"', 'The code is licensed under Apache, like most of the stack.'],
    ['a device after "her"', 'She charged her Kindle overnight.'],
    ['a company after "ex-"', 'He is an ex-Googler who now runs a bakery.'],
    ['a company followed by a verb a person could also do', 'Yesterday Nvidia listed new chips.'],
    ['a domain', 'see https://www.lacrosse.si/ for details'],
  ])('finds no person in %s', (_kind, text) => {
    expect(people(text)).toEqual([]);
  });

  it('finds a family name with a prefix and a second capital, but not a product or a company of that shape', () => {
    expect(people('Please send the minutes to McGarrity before noon.')).toEqual(['McGarrity']);
    expect(people('The talk was given by Ottoline DeMarchi yesterday.')).toEqual(['Ottoline DeMarchi']);
    expect(people('I left my MacBook at the office and bought a McDonald\'s burger.')).toEqual([]);
    // A family name whose rest is a word is still a name beside a first name.
    expect(people('Steve McQueen starred in it.')).toEqual(['Steve McQueen']);
    expect(people('Amanda DeRose called about the invoice.')).toEqual(['Amanda DeRose']);
  });

  it('reads a list of names that ends in a company suffix as one firm, not as people', () => {
    expect(people('The lease is held by Pruitt, Okafor & Whitfield LLP.')).toEqual([]);
    expect(people('Invoices go to Hale and Sons in the spring.')).toEqual([]);
    expect(people('The contract names Pruitt, Okafor and Whitfield Group as the supplier.')).toEqual([]);
    // Look-alikes: the same list with no suffix, and a name listed with a company that is not named after anyone.
    expect(people('The lease is held by Pruitt, Okafor and Whitfield.')).toEqual(['Pruitt', 'Okafor', 'Whitfield']);
    expect(people('Send the draft to Okafor and Acme Corp by Friday.')).toEqual(['Okafor']);
    expect(people('Send the draft to Okafor and Globex Corp by Friday.')).toEqual(['Okafor']);
    // People listed with a firm keep their names.
    expect(people('Thanks to Priya Shah, Marcus Webb and Northwind Technologies for the help.')).toEqual(['Priya Shah', 'Marcus Webb']);
    expect(people('Invited: Maria Lopez, Tom Baker and Deloitte LLP.')).toContain('Maria Lopez');
  });

  it('takes every speaker label of a dialogue once one label is a known name', () => {
    expect(people('Marguerite: Did you lock the shed?\nBrannoc: I thought you had.')).toEqual(['Marguerite', 'Brannoc']);
    // Look-alike: labels of a status list, none of them a known name.
    expect(people('Brannoc: enabled\nQuillfeather: disabled')).toEqual([]);
  });

  it('takes a name that closes a question or an exclamation after a comma (a vocative)', () => {
    expect(people('Are you coming to dinner tonight, Grace?')).toEqual(['Grace']);
    expect(people('Mind the last step, Randy!')).toEqual(['Randy']);
    // Look-alike: a place in the same position.
    expect(people('Which city did you pick in the end, Chicago?')).toEqual([]);
  });

  it('takes two unknown words around a middle initial as a name', () => {
    expect(people('Forward the receipt to Tiberin Q. Marrack today.')).toEqual(['Tiberin Q. Marrack']);
    // Look-alike: the same unknown words with no initial between them and no cue.
    expect(people('Forward the receipt to Tiberin Marrack today.')).toEqual([]);
  });

  it('reads a name after a place noun ("the market town Ashford") as the place', () => {
    expect(people('They grew up in the market town Ashford before moving north.')).toEqual([]);
    expect(people('Supplies came from the mining town Pruitt every week.')).toEqual([]);
    // Look-alike: a place noun that is not right before the name.
    expect(people('The town council thanked Pruitt for the report.')).toEqual(['Pruitt']);
    // Look-alikes: punctuation between the place noun and the name.
    expect(people('We drove into town. Sarah stayed in the car.')).toEqual(['Sarah']);
    expect(people('Do not go into town, Judy!')).toEqual(['Judy']);
  });

  it('takes a first name that is also a word when it opens a sentence as the subject of a perfect or passive verb and a personal pronoun follows', () => {
    expect(people('Frank has already signed the form; he will post it today.')).toEqual(['Frank']);
    expect(people('frank has already signed the form, he will post it today')).toEqual(['frank']);
    // Look-alikes: the adjective before a noun, the noun after a determiner, abstract nouns as subjects.
    expect(people('Frank feedback has helped the team, and he agrees.')).toEqual([]);
    expect(people('The mark has faded from his label.')).toEqual([]);
    expect(people('Hope is not a strategy. Grace is a virtue.')).toEqual([]);
    // A state, not an action: no participle after the verb.
    expect(people('Bill is due on Friday; his manager will pay it.')).toEqual([]);
    expect(people('Mark is visible in the corner, so he cropped it.')).toEqual([]);
    expect(people('Roger was told about the delay, and he agreed to wait.')).toEqual(['Roger']);
  });

  it('never reports a name that overlaps a more specific identifier', () => {
    const spans = detectPii('Contact Ottoline Ferris at ottoline.ferris@example.org or +44 20 7946 0958.');
    expect(spans.map((span) => `${span.type}:${span.value}`)).toEqual(['PERSON:Ottoline Ferris', 'EMAIL:ottoline.ferris@example.org', 'PHONE:+44 20 7946 0958']);
  });

  it('finds names deep in a long text in bounded time per call', () => {
    const text = `${'The quarterly numbers look fine and nothing else stands out here. '.repeat(2000)}Signed, Perpetua Lindqvist`;
    expect(people(text)).toEqual(['Perpetua Lindqvist']);
  });
});
