import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { uuidFromText } from './crypto.ts';
import { isUuid, UUID_PATTERN } from './uuid.ts';

const SAMPLE = '0f8fad5b-d9cb-469f-a165-70867728950e';

describe('the one UUID check', () => {
  it('accepts every id the service issues, in either case, whatever its version nibble', () => {
    for (let index = 0; index < 200; index += 1) expect(isUuid(randomUUID())).toBe(true);
    expect(isUuid(uuidFromText('org:acme'))).toBe(true);
    expect(isUuid(SAMPLE.toUpperCase())).toBe(true);
    expect(isUuid('00000000-0000-0000-0000-000000000000')).toBe(true);
    expect(isUuid('ffffffff-ffff-0fff-cfff-ffffffffffff')).toBe(true);
  });

  it('refuses anything that is not exactly 8-4-4-4-12 hex digits', () => {
    for (const bad of [
      '', 'not-a-uuid', SAMPLE.replaceAll('-', ''), `{${SAMPLE}}`, `urn:uuid:${SAMPLE}`, `${SAMPLE}\n`, ` ${SAMPLE}`,
      `${SAMPLE}0`, SAMPLE.slice(1), SAMPLE.replace('0f8f', '0g8f'), `${SAMPLE.slice(0, 35)}'`, `${SAMPLE.slice(0, 8)}_${SAMPLE.slice(9)}`,
    ]) {
      expect(isUuid(bad), JSON.stringify(bad)).toBe(false);
    }
  });

  it('takes exactly the ASCII hex digits at a digit position and only a hyphen at a hyphen position, for every UTF-16 code unit', () => {
    const schema = new RegExp(UUID_PATTERN, 'u'); // how the JSON Schema validator compiles the pattern
    const wrong: string[] = [];
    for (let code = 0; code <= 0xffff; code += 1) {
      const character = String.fromCharCode(code);
      const digit = `${character}${SAMPLE.slice(1)}`;
      const hyphen = `${SAMPLE.slice(0, 8)}${character}${SAMPLE.slice(9)}`;
      const hex = /^[0-9A-Fa-f]$/.test(character);
      if (isUuid(digit) !== hex || isUuid(hyphen) !== (character === '-')) wrong.push(`U+${code.toString(16)}`);
      if ((code < 0xd800 || code > 0xdfff) && schema.test(digit) !== hex) wrong.push(`schema U+${code.toString(16)}`);
    }
    expect(wrong).toEqual([]);
  });
});
