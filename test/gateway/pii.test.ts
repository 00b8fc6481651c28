import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkSync } from 'recheck';
import { createStreamRestorer, detectPii, ibanValid, luhnValid, messageSpans, piiPatterns, redactMessages, restorePlaceholders, type PiiSpan } from '../../src/gateway/pii/index.ts';
import { PII_DATASET_DIR, runPiiBench } from '../../bench/pii.ts';
import { loadVerdicts, saveVerdicts, verdictKey } from '../detection/redos-verdicts.ts';

const PII_RECHECK_OPTIONS = { timeout: 120_000, randomSeed: 42 } as const;

const types = (text: string) => detectPii(text).map((span) => `${span.type}:${span.value}`);

describe('PII detection', () => {
  it.each([
    ['write to jane.doe+news@example.co.uk today', 'EMAIL:jane.doe+news@example.co.uk'],
    ['call (415) 555-0132 now', 'PHONE:(415) 555-0132'],
    ['call +44 20 7946 0958', 'PHONE:+44 20 7946 0958'],
    ['you can reach the front desk on 0412 3098765', 'PHONE:0412 3098765'],
    ['07-51938264 is my mobile', 'PHONE:07-51938264'],
    ['You can call 84 519063', 'PHONE:84 519063'],
    ['phone: 555.1234', 'PHONE:555.1234'],
    ['card 4111 1111 1111 1111 expires', 'CARD:4111 1111 1111 1111'],
    ['iban GB82 WEST 1234 5698 7654 32 ok', 'IBAN:GB82 WEST 1234 5698 7654 32'],
    ['ssn 123-45-6789.', 'SSN:123-45-6789'],
    ['from 192.168.10.4 at noon', 'IP:192.168.10.4'],
    ['v6 2001:db8::8a2e:370:7334 here', 'IP:2001:db8::8a2e:370:7334'],
    ['key sk-proj-abcdefghijklmnopqrstuvwxyz012345', 'SECRET:sk-proj-abcdefghijklmnopqrstuvwxyz012345'],
    ['aws AKIAIOSFODNN7EXAMPLE', 'SECRET:AKIAIOSFODNN7EXAMPLE'],
    ['gh ghp_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ', 'SECRET:ghp_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ'],
    ['slack xoxb-123456789012-abcdefABCDEF', 'SECRET:xoxb-123456789012-abcdefABCDEF'],
    ['jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', 'SECRET:eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'],
    ['anthropic sk-ant-api03-abcdefghijklmnopqrstuvwxyz', 'SECRET:sk-ant-api03-abcdefghijklmnopqrstuvwxyz'],
    ['sts ASIAY34FZKBOKMUTVV7A', 'SECRET:ASIAY34FZKBOKMUTVV7A'],
    ['pat github_pat_11ABCDEFG0abcdefghijklmn_opqrstuvwxyz', 'SECRET:github_pat_11ABCDEFG0abcdefghijklmn_opqrstuvwxyz'],
    ['maps AIzaSyA1234567890abcdefghijklmnopqrstuv', 'SECRET:AIzaSyA1234567890abcdefghijklmnopqrstuv'],
    ['stripe rk_live_abcdefghijklmnop1234', 'SECRET:rk_live_abcdefghijklmnop1234'],
    ['svc svc_org_live_ab12cd34_ABCDEFGHIJKLMNOPqrstuvwx', 'SECRET:svc_org_live_ab12cd34_ABCDEFGHIJKLMNOPqrstuvwx'],
    ['Hello, my name is Ada Lovelace and', 'PERSON:Ada Lovelace'],
    ['ask Dr. Gregory House about it', 'PERSON:Dr. Gregory House'],
  ])('finds the PII in %j', (text, expected) => {
    expect(types(text)).toContain(expected);
  });

  it('finds names without a cue when two known names stand together, but not places or organisations', () => {
    expect(types('yesterday John Smith wrote to Ada Lovelace')).toEqual(['PERSON:John Smith', 'PERSON:Ada Lovelace']);
    expect(types('ship it to 12 Rue Gaston Ferrand, Paris')).toEqual([]);
    expect(types('a report by Merrill Corp on Monday')).toEqual([]);
  });

  it('reads short digit groups in a street address as the address, and the same groups after a phone cue as a phone', () => {
    expect(types('she moved to 5172 408 Harbour Drive last year')).toEqual([]);
    expect(types('Apt. 417 26 309 Alder Street, Springfield')).toEqual([]);
    expect(types('you can call 455 6186 office hours only')).toContain('PHONE:455 6186');
    expect(types('Phone: 455 6186 Main desk')).toContain('PHONE:455 6186');
  });

  it('finds a PEM private key block', () => {
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----';
    expect(detectPii(`key:\n${pem}\nend`).map((span) => span.value)).toEqual([pem]);
  });

  it.each([
    'version 1.2.3.4.5 of the tool',
    'order number 4111 1111 1111 1112 (fails Luhn)',
    'IBAN GB82WEST12345698765433 (fails mod-97)',
    'meet at 2024-05-17 10:30',
    'pi is 3.14159265',
    'Dear Sir, thanks',
    'the time is 10:30:00',
    'it costs 1,299.99 dollars',
    'invoice 12 345678 is overdue',
    'batch 2024 123456 shipped',
    'Beijing (39.9042, 116.4074) and New York (40.7128, -74.0060)',
    'Los Angeles is at 34.0522, -118.2437',
    'the ratio came out at 1234.5678',
  ])('finds nothing in %j', (text) => {
    expect(types(text)).toEqual([]);
  });

  it('checks payment cards with Luhn and IBANs with mod-97', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(ibanValid('DE89370400440532013000')).toBe(true);
    expect(ibanValid('DE89370400440532013001')).toBe(false);
  });

  // A fixed seed makes recheck's fuzzer deterministic: unseeded, a borderline pattern passed or
  // failed from run to run.
  // The analyser's attack validation is timed, so on a loaded machine a borderline verdict can
  // flip: 'safe' verdicts are kept in the catalogue's verdict cache (test/detection/
  // redos-verdicts.ts), keyed by the exact expression, and only a new or changed pattern is
  // analysed again.
  it('uses only patterns that the recheck ReDoS analyser judges safe', { timeout: 300_000 }, () => {
    const known = loadVerdicts();
    const fresh: string[] = [];
    const unsafe: { source: string; status: string }[] = [];
    for (const pattern of piiPatterns()) {
      const key = verdictKey(pattern.source, pattern.flags, PII_RECHECK_OPTIONS);
      if (known.has(key)) continue;
      const status = checkSync(pattern.source, pattern.flags, PII_RECHECK_OPTIONS).status;
      if (status === 'safe') fresh.push(key);
      else unsafe.push({ source: pattern.source, status });
    }
    if (fresh.length > 0) saveVerdicts(known, fresh);
    expect(unsafe).toEqual([]);
  });

  // A backtracking blow-up on this input takes minutes; the bound is loose so that a loaded
  // machine does not fail a linear scan.
  it('scans a hostile 250 KB input without a backtracking blow-up', () => {
    const hostile = ['a@'.repeat(20_000), '1-'.repeat(20_000), 'eyJ'.repeat(20_000), ':'.repeat(20_000), 'Mr '.repeat(20_000)].join(' ');
    const started = performance.now();
    detectPii(hostile);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('redaction', () => {
  it('gives the same value the same placeholder across messages and restores it', () => {
    const result = redactMessages([
      { role: 'user', content: 'mail a@b.io and c@d.io' },
      { role: 'user', content: 'again a@b.io' },
    ]);
    expect(result.messages.map((message) => message.content)).toEqual(['mail [EMAIL_1] and [EMAIL_2]', 'again [EMAIL_1]']);
    expect(result.summary).toEqual({ mode: 'redact', redacted: { EMAIL: 3 }, total: 3 });
    expect(restorePlaceholders('to [EMAIL_2], [EMAIL_9]', result.mapping)).toBe('to c@d.io, [EMAIL_9]');
  });

  it('numbers placeholders per request when the same messages come again, and a caller cannot change what later requests find', () => {
    const history = [
      { role: 'system', content: 'Support desk: escalate to ops@corp.example' },
      { role: 'user', content: 'my card is 4111 1111 1111 1111, mail me at a@b.io' },
    ];
    const first = redactMessages(history);
    // The next turn resends the history (its spans remembered) with a new message first.
    const second = redactMessages([{ role: 'user', content: 'write to z@y.io' }, ...history]);
    expect(second.messages.map((message) => message.content)).toEqual([
      'write to [EMAIL_1]',
      'Support desk: escalate to [EMAIL_2]',
      'my card is [CARD_1], mail me at [EMAIL_3]',
    ]);
    expect([...second.mapping]).toEqual([['[EMAIL_1]', 'z@y.io'], ['[EMAIL_2]', 'ops@corp.example'], ['[CARD_1]', '4111 1111 1111 1111'], ['[EMAIL_3]', 'a@b.io']]);
    expect(first.messages[1]!.content).toBe('my card is [CARD_1], mail me at [EMAIL_2]');
    const spans = messageSpans(history[1]!.content);
    expect(() => (spans as PiiSpan[]).pop()).toThrow(TypeError);
    expect(() => { (spans[0] as PiiSpan).value = 'changed'; }).toThrow(TypeError);
    expect(redactMessages(history).messages[1]!.content).toBe('my card is [CARD_1], mail me at [EMAIL_2]');
  });

  it('restores a placeholder split across stream chunks', () => {
    const mapping = new Map([['[EMAIL_1]', 'a@b.io']]);
    const restorer = createStreamRestorer(mapping);
    const output = ['write [EMA', 'IL_1', '] now [', 'x] done'].map((chunk) => restorer.push(chunk)).join('') + restorer.flush();
    expect(output).toBe('write a@b.io now [x] done');
  });

  it('restores placeholders streamed one character at a time', () => {
    const mapping = new Map([['[EMAIL_1]', 'a@b.io'], ['[EMAIL_12]', 'l@m.io']]);
    const restorer = createStreamRestorer(mapping);
    const output = [...'to [EMAIL_1], cc [EMAIL_12] and [PHONE_3] [x] done'].map((character) => restorer.push(character)).join('') + restorer.flush();
    expect(output).toBe('to a@b.io, cc l@m.io and [PHONE_3] [x] done');
  });
});

describe.skipIf(!existsSync(PII_DATASET_DIR))('PII quality on the presidio-research corpora', () => {
  it('keeps precision and recall of the checked types at their measured level on every set', () => {
    const result = runPiiBench()!;
    const row = (type: string) => result.types.find((entry) => entry.type === type)!;
    for (const type of ['EMAIL', 'CARD', 'IBAN', 'SSN', 'IP']) {
      expect(row(type).recall).toBeGreaterThanOrEqual(0.95);
      expect(row(type).precision).toBeGreaterThanOrEqual(0.95);
    }
    expect(row('PHONE').recall).toBeGreaterThanOrEqual(0.9);
    expect(row('PHONE').precision).toBeGreaterThanOrEqual(0.95);
    const sets = Object.entries(result.sets);
    expect(sets.length).toBeGreaterThanOrEqual(3);
    // PERSON meets issue #15's 90 % on every set with general rules only (lowest set: recall 90.9 %
    // on generated_small, precision 90.4 % on synth_v2; docs/detection.md, eleventh session).
    for (const [, rows] of sets) {
      const person = rows.find((entry) => entry.type === 'PERSON')!;
      expect(person.recall).toBeGreaterThanOrEqual(0.9);
      expect(person.precision).toBeGreaterThanOrEqual(0.9);
    }
  });
});
if (!existsSync(PII_DATASET_DIR)) console.warn(`[pii.test] skipping corpus measurements: ${PII_DATASET_DIR} is absent`);
