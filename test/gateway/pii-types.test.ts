import { describe, expect, it } from 'vitest';
import { detectPii, redactMessages, type PiiType } from '../../src/gateway/pii/index.ts';

// Every identifier below was made up for this test to satisfy (or, for the look-alikes, fail) its
// format's checksum or published example; none belongs to a real person or firm.
const typesIn = (text: string): PiiType[] => detectPii(text).map((span) => span.type);
const valuesOf = (text: string, type: PiiType): string[] => detectPii(text).filter((span) => span.type === type).map((span) => span.value);

describe('postcodes', () => {
  it.each([
    ['a UK postcode anywhere', 'Send it to 10 Downing Street, London SW1A 2AA please.', 'SW1A 2AA'],
    ['a Canadian postal code anywhere', 'Parliament, Ottawa ON K1A 0B1', 'K1A 0B1'],
    ['a US ZIP after its state', 'Springfield, IL 62704-1234', '62704-1234'],
    ['a code after a cue', 'My zip code is 90210', '90210'],
    ['a Dutch code after a cue', 'Postcode: 7412 SL', '7412 SL'],
    ['a code after a place', 'Our office in Aalborg 9100 opens at nine', '9100'],
    ['a place with a particle before its code', 'She lives in Quinta de São Tiago 3610-114 now', '3610-114'],
    ['the last line of a postal address', 'Billing address:\n  28245 Puruntie 82\n  LAPPEENRANTA\n  53650', '53650'],
  ])('finds %s', (_name, text, value) => {
    expect(valuesOf(text, 'POSTCODE')).toEqual([value]);
  });

  it.each([
    ['a year after a place', 'The games in Paris 2024 were a success.'],
    ['a product and model number', 'We still run Windows 2000 and a Boeing 7470 simulator.'],
    ['a suite number at the end of an address line', 'Address: 159 Hickory Lane\nSuite 995\n'],
    ['a quantity', 'In 2019 we sold 5000 units in 12 countries.'],
    ['a code-shaped number without a cue', 'Reference 90210 is closed.'],
  ])('ignores %s', (_name, text) => {
    expect(typesIn(text)).not.toContain('POSTCODE');
  });
});

describe('web addresses', () => {
  it('finds a URL with its path, without the sentence punctuation or an unbalanced bracket after it', () => {
    expect(valuesOf('Read https://example.com/users/jane?tab=2.', 'URL')).toEqual(['https://example.com/users/jane?tab=2']);
    expect(valuesOf('(see www.example.org/about)', 'URL')).toEqual(['www.example.org/about']);
    expect(valuesOf('a link (https://en.wikipedia.org/wiki/Foo_(bar)) here', 'URL')).toEqual(['https://en.wikipedia.org/wiki/Foo_(bar)']);
  });

  it('keeps a URL with credentials as CREDENTIAL_URL and leaves version strings and file names alone', () => {
    expect(typesIn('postgres://admin:s3cret@db.internal:5432/app')).toEqual(['CREDENTIAL_URL']);
    expect(typesIn('Upgrade to version 1.2.3 and open notes.txt')).toEqual([]);
    expect(typesIn('the scheme http:// alone')).toEqual([]);
  });

  it('never reports a phone number or an IP address inside a URL', () => {
    expect(typesIn('https://example.com/orders/4155552911 and http://192.0.2.10/admin')).toEqual(['URL', 'URL']);
  });
});

describe('dates of birth', () => {
  it('takes a date after a birth cue, across a sentence break', () => {
    expect(valuesOf("Please tell me your date of birth. It's 3/23/1940", 'DOB')).toEqual(['3/23/1940']);
    expect(valuesOf('She was born on 2 March 1961 in Leeds.', 'DOB')).toEqual(['2 March 1961']);
    expect(valuesOf('{"name": "Ada", "dob": "1981-05-26"}', 'DOB')).toEqual(['1981-05-26']);
  });

  it('leaves other dates alone', () => {
    expect(typesIn('The meeting moved to 3/23/2024; the invoice is due March 3, 2025.')).not.toContain('DOB');
  });
});

describe('vehicle identifiers', () => {
  it('finds a VIN whose check digit holds, and any VIN after its cue', () => {
    expect(valuesOf('Car 1M8GDM9AXKP042788 was sold', 'VEHICLE_ID')).toEqual(['1M8GDM9AXKP042788']);
    expect(valuesOf('VIN: WVWZZZ1JZXW000001', 'VEHICLE_ID')).toEqual(['WVWZZZ1JZXW000001']);
  });

  it('finds a registration plate only after its cue', () => {
    expect(valuesOf('My licence plate is AB12 CDE', 'VEHICLE_ID')).toEqual(['AB12 CDE']);
    expect(valuesOf('Kennzeichen: M-AB 1234', 'VEHICLE_ID')).toEqual(['M-AB 1234']);
    expect(typesIn('Batch AB12 CDE passed; the plate was hot.')).not.toContain('VEHICLE_ID');
  });

  it('ignores a 17-character code whose check digit fails and that has no cue', () => {
    expect(typesIn('Build 1M8GDM9A1KP042788 deployed')).not.toContain('VEHICLE_ID');
  });
});

describe('organisation identifiers', () => {
  it.each([
    ['an Australian business number (grouped)', 'ABN 51 824 753 556 on the invoice', '51 824 753 556'],
    ['an Australian business number (after its cue)', 'Supplier ABN: 51824753556', '51824753556'],
    ['an Indian GSTIN', 'GSTIN 27AAPFU0939F1ZV registered in Maharashtra', '27AAPFU0939F1ZV'],
    ['a UK VAT number', 'VAT reg. GB 980 7806 84', 'GB 980 7806 84'],
    ['a US EIN after its cue', 'Our EIN is 12-3456789.', '12-3456789'],
    ['a UK company number after its cue', 'Company registration number: SC123456', 'SC123456'],
    ['an Australian company number after its cue', 'ACN 004 085 616', '004 085 616'],
  ])('finds %s', (_name, text, value) => {
    expect(valuesOf(text, 'ORG_ID')).toEqual([value]);
  });

  it('never reports a phone number inside an Australian business number', () => {
    expect(typesIn('ABN 51 824 753 556')).toEqual(['ORG_ID']);
  });

  it.each([
    ['an ABN-shaped number failing mod 89', 'Ref 51 824 753 557'],
    ['an EIN shape without a cue', 'Ticket 12-3456789 closed'],
    ['eight digits without a company cue', 'Order 12345678 shipped'],
    ['a GSTIN with the wrong check character', 'GSTIN 27AAPFU0939F1ZA'],
  ])('ignores %s', (_name, text) => {
    expect(typesIn(text)).not.toContain('ORG_ID');
  });
});

describe('e-mail addresses in other scripts and obfuscated', () => {
  it.each([
    ['an accented address', 'Escribe a josé.garcía@correo.es hoy', 'josé.garcía@correo.es'],
    ['an address in another script', 'Почта: иван@пример.рф', 'иван@пример.рф'],
    ['bracketed at and dot', 'mail jane.doe [at] example [dot] com', 'jane.doe [at] example [dot] com'],
    ['a parenthesised at', 'contact: jane(at)example.org', 'jane(at)example.org'],
    ['spelled out', 'write to jane.doe at example dot com tonight', 'jane.doe at example dot com'],
    ['spelled out with a country domain', 'it is bob at mail dot co dot uk', 'bob at mail dot co dot uk'],
  ])('finds %s', (_name, text, value) => {
    expect(valuesOf(text, 'EMAIL')).toEqual([value]);
  });

  it.each([
    ['a dot product', 'look at this dot product'],
    ['a period of history', 'we met at the dot com boom'],
    ['a time', 'see you at noon dot'],
  ])('ignores %s', (_name, text) => {
    expect(typesIn(text)).not.toContain('EMAIL');
  });
});

describe('SSNs, national identifiers and passports', () => {
  it('finds an SSN spaced or after its cue, but not a unit and house number', () => {
    expect(valuesOf('SSN 123 45 6789', 'SSN')).toEqual(['123 45 6789']);
    expect(valuesOf('social security number: 123456789', 'SSN')).toEqual(['123456789']);
    expect(typesIn('Mrs. Karen Suite 680 36 4022 Oakridge Drive')).not.toContain('SSN');
    expect(typesIn('Order 123456789 shipped')).not.toContain('SSN');
  });

  it.each([
    ['a US ITIN', 'ITIN 912-78-1234 for the filing', '912-78-1234'],
    ['a Finnish personal identity code', 'Henkilötunnus 131052-308T', '131052-308T'],
    ['a Korean resident registration number', 'RRN 900101-1234568', '900101-1234568'],
    ['a Swedish personnummer', 'personnummer 811218-9876', '811218-9876'],
    ['a UK NHS number after its cue', 'NHS number 943 476 5919', '943 476 5919'],
    ['a PESEL after its cue', 'PESEL: 44051401359', '44051401359'],
    ['a national ID after a generic cue', 'ID card number: X1234567', 'X1234567'],
  ])('finds %s', (_name, text, value) => {
    expect(valuesOf(text, 'NATIONAL_ID')).toEqual([value]);
  });

  it('reads an NHS-shaped number without its cue as a phone number', () => {
    expect(typesIn('call 943 476 5919')).toEqual(['PHONE']);
  });

  it('finds a passport number a few words after the cue, not in another sentence', () => {
    expect(valuesOf('My passport, number C03005988, expires in May', 'PASSPORT')).toEqual(['C03005988']);
    expect(typesIn('I lost my passport. Order 4471220 is late.')).not.toContain('PASSPORT');
  });
});

describe('phone numbers are not found inside other identifiers', () => {
  it.each([
    ['a product id field', '{"name": "Smartphone", "product_id": "1762337868", "item_id": "2872451762"}'],
    ['a list of item ids', '"item_ids": ["2872451762", "9534205511", "6243981804"]'],
    ['a JSON key that is an id', '{"9534205511": {"price": 12.5}}'],
    ['a markdown id label', '- **Item ID:** 9228757377'],
    ['an order number', 'Order #2045881233 was shipped'],
    ['a range', 'Write 1000-1250 words about 2019 - 2020.'],
  ])('ignores %s', (_name, text) => {
    expect(typesIn(text)).not.toContain('PHONE');
  });

  it('still finds a phone number under a phone label, in a list of phones, or after a cue', () => {
    expect(valuesOf('{"phone_number": "4155552911"}', 'PHONE')).toEqual(['4155552911']);
    expect(valuesOf('"recipient_phones": ["+1 310-555-1234"]', 'PHONE')).toEqual(['+1 310-555-1234']);
    expect(valuesOf('call 1000-1250 now', 'PHONE')).toEqual(['1000-1250']);
  });
});

describe('redaction of the new types', () => {
  it('replaces each new type by its typed placeholder', () => {
    const { messages, summary } = redactMessages([{ role: 'user', content: 'ABN 51 824 753 556, VIN 1M8GDM9AXKP042788, zip code 90210, https://example.com/u/jane' }]);
    expect(messages[0]!.content).toBe('ABN [ORG_ID_1], VIN [VEHICLE_ID_1], zip code [POSTCODE_1], [URL_1]');
    expect(summary.redacted).toEqual({ ORG_ID: 1, VEHICLE_ID: 1, POSTCODE: 1, URL: 1 });
  });
});

describe('more written forms of SSNs, licences, dates of birth and plates', () => {
  it.each([
    ['a dotted SSN after its cue', 'ssn 123.45.6789', 'SSN', '123.45.6789'],
    ['a licence after "DL#"', 'DL# S530-4608-9023', 'DRIVER_LICENSE', 'S530-4608-9023'],
    ['a licence after "license number"', 'license number is W3456789', 'DRIVER_LICENSE', 'W3456789'],
    ['a year-first date of birth', 'DOB 1990/03/14', 'DOB', '1990/03/14'],
    ['a date of birth with a month abbreviation', 'date of birth: 14-Mar-1990', 'DOB', '14-Mar-1990'],
    ['an ISO timestamp of birth', 'Birthdate: 1990-03-14T00:00:00Z', 'DOB', '1990-03-14'],
    ['a plate written as one group', 'plate number 7ABC123', 'VEHICLE_ID', '7ABC123'],
  ])('finds %s', (_name, text, type, value) => {
    expect(valuesOf(text, type as PiiType)).toEqual([value]);
  });

  it('leaves a dotted number without a cue, a short licence reference and a version string alone', () => {
    expect(typesIn('Version 123.45.6789 shipped')).not.toContain('SSN');
    expect(typesIn('See licence number 12 of the agreement')).not.toContain('DRIVER_LICENSE');
    expect(typesIn('Released 2024/03/14 with the MIT license')).not.toContain('DOB');
  });
});
