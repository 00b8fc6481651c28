import { describe, expect, it } from 'vitest';
import { detectPii, type PiiType } from '../../src/gateway/pii/index.ts';

// Every value below was generated for this test to satisfy (or, for the look-alikes, fail) the
// format's checksum; none is a real person's identifier.
const typesIn = (text: string): PiiType[] => detectPii(text).map((span) => span.type);
const valuesOf = (text: string, type: PiiType): string[] => detectPii(text).filter((span) => span.type === type).map((span) => span.value);

describe('national identifiers with checksums', () => {
  it.each([
    ['UK NINO', 'My National Insurance number is AB 12 34 56 C.', 'AB 12 34 56 C'],
    ['ES DNI', 'DNI: 12345678Z, por favor.', '12345678Z'],
    ['ES NIE', 'NIE X1234567L del titular', 'X1234567L'],
    ['IT codice fiscale', 'Codice fiscale RSSMRA85T10A562S in allegato', 'RSSMRA85T10A562S'],
    ['FR NIR', 'Numéro de sécurité sociale : 1 85 05 78 006 084 91', '1 85 05 78 006 084 91'],
    ['IN Aadhaar', 'Aadhaar 2341 2341 2346 on file', '2341 2341 2346'],
    ['IN PAN', 'PAN ABCPE1234F for the return', 'ABCPE1234F'],
    ['SG NRIC', 'NRIC S1234567D is on the form', 'S1234567D'],
    ['AU TFN', 'my tax file number is 123 456 782', '123 456 782'],
    ['CA SIN', 'Social insurance number 046 454 286', '046 454 286'],
  ])('finds a valid %s', (_name, text, value) => {
    expect(valuesOf(text, 'NATIONAL_ID')).toEqual([value]);
  });

  it.each([
    ['UK NINO with a forbidden prefix', 'Reference GB 12 34 56 C'],
    ['ES DNI with the wrong letter', 'DNI 12345678A'],
    ['IT codice fiscale with the wrong check letter', 'Codice RSSMRA85T10A562T'],
    ['FR NIR with the wrong key', 'Numéro 1 85 05 78 006 084 36'],
    ['Aadhaar-shaped number failing Verhoeff', 'Ref 2341 2341 2345'],
    ['NRIC with the wrong letter', 'Ticket S1234567A'],
    ['nine digits without a tax or insurance cue', 'Call me on 516 466 638 tonight'],
  ])('ignores %s', (_name, text) => {
    expect(typesIn(text)).not.toContain('NATIONAL_ID');
  });

  it('never reports a phone number inside a national ID', () => {
    const spans = detectPii('Numéro de sécurité sociale : 1 85 05 78 006 084 91');
    expect(spans.map((span) => span.type)).toEqual(['NATIONAL_ID']);
  });
});

describe('identifiers gated by context', () => {
  it('takes passport, licence and medical record numbers only after their cue', () => {
    expect(valuesOf('Passport number: K1234567 expires in May', 'PASSPORT')).toEqual(['K1234567']);
    expect(valuesOf("My driver's license number is D4471-2209", 'DRIVER_LICENSE')).toEqual(['D4471-2209']);
    expect(valuesOf('MRN: 00451982 admitted overnight', 'MRN')).toEqual(['00451982']);
    expect(typesIn('Order K1234567 ships tomorrow; batch D4471-2209')).toEqual([]);
  });

  it('takes a date as a date of birth only after a birth cue', () => {
    expect(valuesOf('Patient born on 14/02/1987 in Leeds', 'DOB')).toEqual(['14/02/1987']);
    expect(valuesOf('Date of birth: March 3, 1990', 'DOB')).toEqual(['March 3, 1990']);
    expect(typesIn('The invoice is due on 14/02/1987.')).not.toContain('DOB');
  });
});

describe('network and wallet identifiers', () => {
  it('finds MAC addresses and URLs carrying credentials', () => {
    expect(valuesOf('Device 00:1A:2B:3C:4D:5E joined', 'MAC')).toEqual(['00:1A:2B:3C:4D:5E']);
    expect(valuesOf('clone https://deploy:s3cretPass@git.example.com/repo.git now', 'CREDENTIAL_URL')).toEqual(['https://deploy:s3cretPass@git.example.com']);
    expect(typesIn('see https://git.example.com/repo.git')).toEqual(['URL']); // a URL, but no credentials
  });

  it('finds checksummed Bitcoin addresses and rejects a corrupted one', () => {
    expect(valuesOf('Send to 1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2 please', 'CRYPTO_WALLET')).toEqual(['1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2']);
    expect(valuesOf('bech32 bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq here', 'CRYPTO_WALLET')).toEqual(['bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq']);
    expect(typesIn('Send to 1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3 please')).not.toContain('CRYPTO_WALLET');
  });
});
