/**
 * `npm start` (and `npm run svc`) start node with glibc's malloc arenas capped at 2 unless the
 * operator set MALLOC_ARENA_MAX: with one arena per thread, V8's background threads kept about
 * 100 MB of freed compilation memory resident (docs/benchmarks.md, "Memory breakdown";
 * docs/decisions.md, "Memory under mixed load"). The scripts run as npm runs them (`sh -c`),
 * with a `node` on the PATH that prints the variable it was given.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
const fakeBin = mkdtempSync(join(tmpdir(), 'svc-start-script-'));
writeFileSync(join(fakeBin, 'node'), '#!/bin/sh\necho "MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-unset} $*"\n');
chmodSync(join(fakeBin, 'node'), 0o755);
afterAll(() => rmSync(fakeBin, { recursive: true, force: true }));

function run(script: string, env: Record<string, string> = {}): string {
  const result = spawnSync('sh', ['-c', script], { cwd: root, env: { PATH: `${fakeBin}:${process.env.PATH ?? ''}`, ...env }, encoding: 'utf8' });
  expect(result.status).toBe(0);
  return result.stdout.trim();
}

describe('the start scripts', () => {
  it.each(['start', 'svc'])('npm run %s caps the malloc arenas at 2 and starts the compiled CLI', (name) => {
    const output = run(scripts[name]!);
    expect(output).toMatch(/^MALLOC_ARENA_MAX=2 --enable-source-maps dist\/cli\.js/);
  });

  it('keeps the arena count an operator set', () => {
    expect(run(scripts.start!, { MALLOC_ARENA_MAX: '8' })).toMatch(/^MALLOC_ARENA_MAX=8 /);
  });
});
