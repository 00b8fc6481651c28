import { describe, expect, it } from 'vitest';
import { jsonNestedDeeper, MAX_JSON_DEPTH } from './json-depth.ts';

describe('JSON nesting depth before parsing', () => {
  it('counts objects and arrays, not brackets inside strings or escaped quotes', () => {
    expect(jsonNestedDeeper('{"a":[{"b":1}]}', 3)).toBe(false);
    expect(jsonNestedDeeper('{"a":[{"b":[1]}]}', 3)).toBe(true);
    expect(jsonNestedDeeper('{"a":"[[[[[[{{{{{{"}', 1)).toBe(false);
    expect(jsonNestedDeeper('{"a":"\\\\\\"[[[["}', 1)).toBe(false);
    expect(jsonNestedDeeper('["\\\\",[[1]]]', 2)).toBe(true);
  });

  it('refuses the fuzzer\'s 10,000-deep body and takes a body at the limit', () => {
    expect(jsonNestedDeeper(`${'['.repeat(10_000)}${']'.repeat(10_000)}`)).toBe(true);
    expect(jsonNestedDeeper(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`)).toBe(false);
    expect(jsonNestedDeeper(`${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`)).toBe(true);
  });
});
