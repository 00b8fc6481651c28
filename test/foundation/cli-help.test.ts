/**
 * `svc --help --json` lists every command the CLI accepts: the data-directory commands, the API
 * commands and the ones the process runs itself (serve, sensor, compliance verify-export, model
 * check), each from the table the CLI dispatches from, so that the list cannot drift again.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiCommandSpecs } from '../../src/api-commands.ts';
import { processCommands } from '../../src/cli-commands.ts';
import { commandSpecs } from '../../src/commands.ts';

const root = resolve(import.meta.dirname, '../..');

describe('svc --help --json', () => {
  it('lists every command the CLI dispatches, each once', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--help', '--json'], { cwd: root, env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warning' }, encoding: 'utf8', timeout: 120_000 });
    expect(result.status).toBe(0);
    const listed = (JSON.parse(result.stdout.trim()) as { commands: string[] }).commands;
    const dispatched = [...Object.keys(commandSpecs), ...Object.keys(apiCommandSpecs), ...Object.keys(processCommands)];
    expect(dispatched).toEqual(expect.arrayContaining(['serve', 'sensor', 'compliance verify-export', 'model check', 'org create']));
    expect([...listed].sort()).toEqual([...dispatched].sort());
    expect(new Set(listed).size).toBe(listed.length);
  });
});
