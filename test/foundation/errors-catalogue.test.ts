import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/platform/errors.ts';

const documented = new Map(
  readFileSync(resolve(import.meta.dirname, '../../docs/errors.md'), 'utf8')
    .split('\n')
    .map((line) => /^\|\s*([A-Z][A-Z0-9_]+|[a-z][a-z0-9_]+)\s*\|\s*(\d{3})\s*\|/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => [match[1]!, Number(match[2])]),
);

describe('error catalogue', () => {
  it('documents every code with its status in docs/errors.md, and nothing else', () => {
    const catalogue = new Map(Object.entries(ERRORS).map(([code, entry]) => [code, entry.status]));
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(catalogue));
  });

  it('uses UPPER_SNAKE codes (besides the ingest rejections the spec names in lower case) and 4xx/5xx statuses only', () => {
    const specNamed = new Set(['sig_invalid', 'wire_version_unsupported', 'license_expired']);
    for (const [code, entry] of Object.entries(ERRORS)) {
      if (!specNamed.has(code)) expect(code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
      expect(entry.status).toBeGreaterThanOrEqual(400);
      expect(entry.status).toBeLessThan(600);
    }
  });
});
