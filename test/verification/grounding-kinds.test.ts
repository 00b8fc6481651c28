/**
 * Grounding on the kinds of answers it used to get wrong (issue #35): data-to-text answers that
 * restate 24-hour opening hours in am/pm, summaries that repeat a negation the source makes,
 * numbers that contradict the sentence they restate, and key–value attributes turned around.
 * Sources and answers are written for the test.
 */
import { describe, expect, it } from 'vitest';
import { resolvePolicy, runVerification } from '../../src/verification/index.ts';
import type { Verification } from '../../src/verification/index.ts';
import { clockTimes, contentTokens, numberMentions, splitClaims } from '../../src/verification/text.ts';

const RECORD = JSON.stringify(
  {
    name: 'Harbor Grill',
    address: '12 Wharf Rd',
    city: 'Santa Barbara',
    state: 'CA',
    hours: { Monday: '17:30-23:0', Tuesday: '17:0-21:0', Wednesday: '17:0-21:0', Sunday: '9:0-14:0' },
    attributes: { OutdoorSeating: false, RestaurantsReservations: true, WiFi: 'free', Music: null },
  },
  null,
  4,
);

const grounding = async (content: string, sources: string[], question: string | null = null) =>
  (await runVerification({ content, finishReason: 'stop', sources, question }, resolvePolicy())).layers.grounding;
const reasons = (layer: Verification['layers']['grounding']) => layer.findings.map((finding) => finding.reason);

describe('data-to-text answers over opening hours', () => {
  it('passes an answer that restates 24-hour ranges in am/pm, with the meridiem written once or twice', async () => {
    const layer = await grounding(
      'Harbor Grill is a restaurant at 12 Wharf Rd in Santa Barbara, CA. It is open from 5:30 pm to 11 pm on Monday, 5-9pm on Tuesday and Wednesday, and from 9 am until 2 p.m. on Sunday. It takes reservations and offers free WiFi.',
      [RECORD],
    );
    expect(layer.verdict).toBe('pass');
    expect(layer.info).toMatchObject({ task: 'data2txt' });
  });

  it('flags hours the record does not hold, with the span of the time', async () => {
    const content = 'Harbor Grill is a restaurant in Santa Barbara, CA. It is open from 6 to 10 pm on Tuesday and from 9 am until 2 pm on Sunday.';
    const layer = await grounding(content, [RECORD]);
    expect(layer.verdict).toBe('fail');
    const finding = layer.findings.find((item) => item.reason === 'time_not_in_sources')!;
    expect(content.slice(finding.start, finding.end)).toBe('6');
  });

  it('flags hours the record gives for another day, and passes a generalisation with its exception', async () => {
    const content = 'Harbor Grill is a restaurant in Santa Barbara, CA. It is open from 9 am to 2 pm on Tuesday and Wednesday.';
    const layer = await grounding(content, [RECORD]);
    expect(layer.verdict).toBe('fail');
    const finding = layer.findings.find((item) => item.reason === 'hours_contradict_source')!;
    expect(content.slice(finding.start, finding.end)).toBe('Tuesday and Wednesday');
    const general = await grounding('Harbor Grill is a restaurant in Santa Barbara, CA. It is open from 5 pm to 9 pm from Tuesday to Wednesday, with longer hours until 11 pm on Monday.', [RECORD]);
    expect(reasons(general)).not.toContain('hours_contradict_source');
    // The record gives no hours for Friday: the place is closed then.
    const friday = await grounding('Harbor Grill is a restaurant in Santa Barbara, CA. It is also open on Friday.', [RECORD]);
    expect(reasons(friday)).toContain('hours_contradict_source');
    const closed = await grounding('Harbor Grill is a restaurant in Santa Barbara, CA. It is closed on Friday.', [RECORD]);
    expect(reasons(closed)).not.toContain('hours_contradict_source');
  });

  it('reads noon and midnight, and a range whose first end takes the second end’s meridiem', () => {
    expect(clockTimes('from noon to midnight').map((time) => time.value)).toEqual([720, 0]);
    expect(clockTimes('open 5-9pm daily').map((time) => time.value)).toEqual([17 * 60, 21 * 60]);
    expect(clockTimes('open 11:30am–2pm').map((time) => time.value)).toEqual([11 * 60 + 30, 14 * 60]);
  });
});

describe('key–value attributes', () => {
  it('flags an answer that offers what the record marks false', async () => {
    const content = 'Harbor Grill is a restaurant in Santa Barbara, CA. It takes reservations, offers free WiFi and has outdoor seating.';
    const layer = await grounding(content, [RECORD]);
    expect(layer.verdict).toBe('fail');
    const finding = layer.findings.find((item) => item.reason === 'value_contradicts_source')!;
    expect(content.slice(finding.start, finding.end)).toBe('outdoor seating');
  });

  it('does not take a word of a grouped attribute for the attribute ("a lot of flavour" is no parking lot)', async () => {
    const record = JSON.stringify({ name: 'Harbor Grill', attributes: { BusinessParking: { lot: false, street: true }, Ambience: { casual: false, classy: true } } }, null, 4);
    const layer = await grounding('Harbor Grill serves tacos with a lot of flavor. Street parking is available, and the atmosphere is classy.', [record]);
    expect(reasons(layer)).not.toContain('value_contradicts_source');
    const turned = await grounding('Harbor Grill has lot parking and a casual atmosphere.', [record]);
    expect(reasons(turned)).toContain('value_contradicts_source');
  });

  it('passes an answer that says the false attribute is not available', async () => {
    const layer = await grounding('Harbor Grill is a restaurant in Santa Barbara, CA. It takes reservations and offers free WiFi, but outdoor seating is not available.', [RECORD]);
    expect(layer.verdict).toBe('pass');
  });
});

describe('negations', () => {
  const SOURCE = 'The council said the bridge will not reopen before June because the repairs are not finished. Traffic will use the ferry until then, the mayor said.';

  it('does not flag a summary that repeats a negation the source makes', async () => {
    const layer = await grounding('The bridge will not reopen before June because repairs are not finished, the council said. Traffic will use the ferry until then.', [SOURCE]);
    expect(layer.verdict).toBe('pass');
    expect(reasons(layer)).not.toContain('negation_disagrees_with_source');
  });

  it('does not flag the same denial in other words, nor a negation elsewhere in the source sentence', async () => {
    const watering = await grounding('Avoid allowing the soil to dry out completely between waterings.', ['Water the basil regularly. Do not allow the soil to dry out completely between waterings.']);
    expect(watering.verdict).toBe('pass');
    const investigation = await grounding('The government will conduct an independent investigation of the circumstances of his death.', [
      'We do not yet fully understand all of the facts surrounding his death, but we do understand that the government will be conducting an independent investigation of the circumstances.',
    ]);
    expect(reasons(investigation)).not.toContain('negation_disagrees_with_source');
  });

  it('flags a summary that drops the negation of the sentence it restates', async () => {
    const layer = await runVerification({ content: 'The council said the bridge will reopen before June.', finishReason: 'stop', sources: [SOURCE] }, resolvePolicy({ grounding: { threshold: 0.3 } }));
    expect(reasons(layer.layers.grounding)).toContain('negation_disagrees_with_source');
  });
});

describe('numbers', () => {
  const SOURCE = 'Sales at the bakery rose 12 percent in 2023, the owner said. Costs fell 3 percent over the same period, and the bakery hired 40 new staff.';

  it('flags a number that the source holds elsewhere but that contradicts the sentence the claim restates', async () => {
    const content = 'Sales at the bakery rose 3 percent in 2023, the owner said.';
    for (const question of [null, 'How did the bakery do in 2023?']) {
      const layer = await grounding(content, [SOURCE], question);
      expect(layer.verdict).toBe('fail');
      const finding = layer.findings.find((item) => item.reason === 'number_contradicts_source')!;
      expect(content.slice(finding.start, finding.end)).toBe('3');
    }
  });

  it('passes the same numbers where the source gives them', async () => {
    const layer = await grounding('Sales at the bakery rose 12 percent in 2023, the owner said, while costs fell 3 percent.', [SOURCE]);
    expect(layer.verdict).toBe('pass');
  });

  it('does not take a year for its neighbour, but accepts a rounding at the precision written', async () => {
    const source = 'The museum opened in 2019 and had 1,987 visitors in its first week; the average ticket was 3.45 dollars.';
    const wrongYear = await grounding('The museum opened in 2020.', [source]);
    expect(reasons(wrongYear)).toContain('number_not_in_sources');
    const rounded = await grounding('The museum opened in 2019 and had about 2,000 visitors in its first week, at about 3.5 dollars a ticket.', [source]);
    expect(reasons(rounded)).not.toContain('number_not_in_sources');
  });

  it('does not take references to steps or passages, or a bare scale word, for fabricated numbers', async () => {
    const source = 'Twist the front piece over the back piece. Add a new section of hair to the front piece. For-profit colleges enroll 13% of students.';
    const layer = await grounding('Repeat steps 1 and 2 (see Passages 1 and 2): twist the front piece over the back piece and add a new section of hair. For-profit colleges are a multi-billion industry.', [source, 'Braids take practice.'], 'How do I make a twist braid?');
    expect(reasons(layer)).not.toContain('number_not_in_sources');
  });

  it('reads spelled and compound numbers as one number', () => {
    expect(numberMentions('sixty-three, two hundred and ten, twenty five').map((number) => number.value)).toEqual([63, 210, 25]);
  });
});

describe('framing sentences', () => {
  it('does not flag an answer for speaking about its passages, saying what they leave out, or closing politely', async () => {
    const question = 'How long should the bread rise?';
    const passages = ['Let the dough rise for two hours in a warm place, until it has doubled in size.', 'Bake the loaf at 220 degrees for 35 minutes.'];
    const layer = await grounding(
      'Based on the given passages, let the dough rise for two hours in a warm place until it has doubled in size. The passages do not mention how to store the bread afterwards. I hope this helps!',
      passages,
      question,
    );
    expect(layer.verdict).toBe('pass');
    const invented = await grounding('Based on the given passages, let the dough rise overnight in the refrigerator with a spoonful of honey and sourdough starter from Vermont.', passages, question);
    expect(invented.verdict).toBe('fail');
  });

  it('does not ground the answer’s own preamble ("Here is a summary in 40 words:")', async () => {
    const layer = await grounding('Here is a summary of the news in 40 words:\nSales at the bakery rose 12 percent in 2023, the owner said.', [
      'Sales at the bakery rose 12 percent in 2023, the owner said. Costs fell 3 percent over the same period.',
    ]);
    expect(layer.verdict).toBe('pass');
    expect(reasons(layer)).not.toContain('number_not_in_sources');
  });
});

describe('bounds on numbers', () => {
  const SOURCE = 'Fewer than 270 people live on the island, which ships can reach 60 days a year. More than 500 visitors came last summer.';

  it('flags a bound turned around ("over 270" where the source says "fewer than 270"), with the span of the number', async () => {
    const content = 'Over 270 people live on the island.';
    const layer = await grounding(content, [SOURCE]);
    expect(layer.verdict).toBe('fail');
    const finding = layer.findings.find((item) => item.reason === 'number_contradicts_source')!;
    expect(content.slice(finding.start, finding.end)).toBe('270');
  });

  it('passes the same bound in other words, and a number written without a bound', async () => {
    for (const content of ['Under 270 people live on the island.', 'About 270 people live on the island.', 'Over 500 visitors came last summer.', 'Ships can reach the island no more than 60 days a year.']) {
      const layer = await grounding(content, [SOURCE]);
      expect(reasons(layer), content).not.toContain('number_contradicts_source');
      expect(layer.verdict, content).toBe('pass');
    }
  });
});

describe('talk about the passages', () => {
  const question = 'How do I make a spicy pineapple shrimp stir-fry?';
  const passages = ['Stir-fry the shrimp with pineapple, garlic and bell pepper, then serve with rice.', 'Sprinkle the dish with coconut.'];

  it('does not ground "none of the passages say …" or "there is no mention of … in the passages"', async () => {
    const layer = await grounding(
      'Stir-fry the shrimp with pineapple, garlic and bell pepper, and serve with rice. However, none of the passages provide information about making the dish spicy. There is no mention of chili flakes in the given passages.',
      passages,
      question,
    );
    expect(layer.verdict).toBe('pass');
  });

  it('does not ground an abstention in mid-sentence, the answer counting its own steps, or a cheerful closing', async () => {
    const layer = await grounding(
      'Stir-fry the shrimp with pineapple, garlic and bell pepper, then serve with rice. If that does not work, I am unable to answer based on the given passages. Happy cooking! And of course, don’t forget to have fun with it!',
      passages,
      question,
    );
    expect(layer.verdict).toBe('pass');
    const steps = await grounding('So, the answer to your question can be summarized in 4 steps: stir-fry the shrimp with pineapple, garlic and bell pepper, then serve with rice.', passages, question);
    expect(reasons(steps)).not.toContain('number_not_in_sources');
    // A count of something in the world is still a number to ground.
    const counted = await grounding('Stir-fry the shrimp with pineapple in 2 steps, then serve it with 14 kinds of rice.', passages, question);
    expect(reasons(counted)).toContain('number_not_in_sources');
  });

  it('still grounds a claim that only begins like one ("None of the guests …")', async () => {
    const layer = await grounding('None of the guests complained about the noise from the nightclub downstairs, according to the manager.', ['The hotel opened in May with forty rooms.']);
    expect(layer.verdict).toBe('fail');
  });
});

describe('claims and names', () => {
  it('does not split a claim after the abbreviation of a place name ("Kansas City-St. Joseph")', () => {
    expect(splitClaims('Finn led the Diocese of Kansas City-St. Joseph, Missouri. He resigned.').map((claim) => claim.text)).toEqual(['Finn led the Diocese of Kansas City-St. Joseph, Missouri.', 'He resigned.']);
  });

  it('takes a word capitalised after a colon for the start of what follows, and a later capitalised word for a name', () => {
    const tokens = contentTokens('Step 2: Sauté the garlic with Jollof spices');
    expect(tokens.find((token) => token.raw === 'Sauté')!.capitalized).toBe(false);
    expect(tokens.find((token) => token.raw === 'Jollof')!.capitalized).toBe(true);
  });

  it('takes a title-case label in parentheses for a label, and an acronym there for a name', () => {
    const label = contentTokens('Method 1 (Recommended): remove the program').find((token) => token.raw === 'Recommended')!;
    expect(label.capitalized).toBe(false);
    const acronym = contentTokens('Pilots are certified by the regulator (FAA) every year').find((token) => token.raw === 'FAA')!;
    expect(acronym.capitalized).toBe(true);
  });
});
