import { describe, expect, it } from 'vitest';
import { sanitizeParam, sanitizeText } from './sanitize.ts';

describe('text made storable', () => {
  it('replaces NUL and lone surrogates with U+FFFD, keeps surrogate pairs, and is idempotent', () => {
    expect(sanitizeText('a\u0000b\ud800c\udc00d😀')).toBe('a\uFFFDb\uFFFDc\uFFFDd😀');
    expect(sanitizeText(sanitizeText('x\ud800'))).toBe('x\uFFFD');
  });

  it('re-serialises a JSON text only when it escapes NUL or a lone surrogate', () => {
    const pair = '{"a": "\\ud83d\\ude00",  "n": 12345678901234567890}';
    expect(sanitizeParam(pair)).toBe(pair);
    expect(sanitizeParam('{"a":"\\ud800x"}')).toBe('{"a":"\uFFFDx"}');
    expect(sanitizeParam('{"a":"x\\udc00"}')).toBe('{"a":"x\uFFFD"}');
    expect(sanitizeParam('["\\u0000"]')).toBe('["\uFFFD"]');
  });
});
