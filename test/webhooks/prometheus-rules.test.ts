import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const RULES = resolve(import.meta.dirname, '../../ops/prometheus/alerts.yml');
const RULE_TESTS = resolve(import.meta.dirname, '../../ops/prometheus/alerts.test.yml');
const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const havePromtool = promtool.status === 0;
if (!havePromtool) console.warn('[skip] promtool is not on PATH (Debian package prometheus); alert rule checks skipped');

describe('operational alert rules', () => {
  it('names every alert threshold of the spec with its severity', () => {
    const text = readFileSync(RULES, 'utf8');
    for (const [alert, severity] of [
      ['GatewayDown', 'critical'],
      ['HighThreatRate', 'warning'],
      ['HighLatency', 'warning'],
      ['ContainerRestarting', 'critical'],
      ['RedisLatencyHigh', 'warning'],
      ['TokenBudgetNearing', 'warning'],
      ['GrievanceOverdue', 'warning'],
      ['UnlearningOverdue', 'warning'],
    ]) {
      const block = text.slice(text.indexOf(`alert: ${alert}`));
      expect(block.indexOf(`alert: ${alert}`), alert).toBe(0);
      expect(block.slice(0, block.indexOf('annotations:')), alert).toContain(`severity: ${severity}`);
    }
  });

  it.skipIf(!havePromtool)('passes promtool check rules', () => {
    const output = execFileSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(output).toContain('SUCCESS: 8 rules found');
  });

  it.skipIf(!havePromtool)('fires and clears at the spec thresholds in promtool rule unit tests', () => {
    const result = spawnSync('promtool', ['test', 'rules', RULE_TESTS], { encoding: 'utf8' });
    expect(result.stdout + result.stderr).toContain('SUCCESS');
    expect(result.status).toBe(0);
  });
});
