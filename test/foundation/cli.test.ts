/**
 * The newcomer's path on the embedded default: `svc org create --json` prints an org and an
 * admin key, `svc serve` starts with no database or Redis installed, the CLI keeps working
 * while the server holds the data directory, and the key authenticates over real HTTP.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.ts';

const root = resolve(import.meta.dirname, '../..');
const dataDir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
const baseEnv: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, LOG_LEVEL: 'warning' };

function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: root, env: { ...baseEnv, ...env }, encoding: 'utf8', timeout: 150_000 });
  // Results go to stdout, errors to stderr (logs too, so the error is the last JSON line there).
  const lines = (result.status === 0 ? result.stdout : result.stderr).trim().split('\n').filter((line) => line.startsWith('{'));
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, json: JSON.parse(lines[lines.length - 1] ?? 'null') };
}

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('svc CLI on the embedded default', { timeout: 300_000 }, () => {
  let orgId = '';
  let adminKey = '';

  it('creates an org and prints exactly one JSON object with an admin key', () => {
    const result = cli(['org', 'create', '--name', 'acme', '--json']);
    expect(result.status).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    expect(result.json).toMatchObject({ plan: 'starter' });
    expect(result.json.api_key).toMatch(new RegExp(`^svc_org_live_${result.json.org_tag}_[A-Za-z0-9]{32,}$`));
    expect(Date.parse(result.json.trial_ends_at)).toBeGreaterThan(Date.now() + 29 * 86_400_000);
    orgId = result.json.org_id;
    adminKey = result.json.api_key;
    expect(statSync(join(dataDir, 'secrets.json')).mode & 0o777).toBe(0o600);
  });

  it('answers bad input with an error code: 1 for an invalid value, 2 for an unknown command', () => {
    const result = cli(['key', 'create', '--org', orgId, '--scope', 'root', '--json']);
    expect(result.status).toBe(1);
    expect(result.json.error.code).toBe('VALIDATION_FAILED');
    const unknown = cli(['frobnicate', '--json']);
    expect(unknown.status).toBe(2);
    expect(unknown.json.error.code).toBe('USAGE');
  });

  it('changes an org\'s plan (its Starter trial upgraded to Pro) and reads its usage against the new quotas', () => {
    const changed = cli(['org', 'plan', '--org', orgId, '--plan', 'pro', '--json']);
    expect(changed.status).toBe(0);
    expect(changed.json).toMatchObject({ change: 'upgrade', previous: { plan: 'starter' }, org: { plan: 'pro', trial_ends_at: null } });
    const usage = cli(['org', 'usage', '--org', orgId, '--json']);
    expect(usage.json).toMatchObject({ effective_plan: 'pro', findings: { limit: 10_000_000 }, features: { siem_export: true } });
    const refused = cli(['org', 'plan', '--org', orgId, '--plan', 'gold', '--json']);
    expect(refused.status).toBe(1);
    expect(refused.json.error.code).toBe('VALIDATION_FAILED');
  });

  it('prints errors on stderr only, leaving stdout for results', () => {
    const unknown = cli(['frobnicate', '--json']);
    expect(unknown.stdout).toBe('');
    expect(JSON.parse(unknown.stderr.trim().split('\n').at(-1)!).error.code).toBe('USAGE');
    const invalid = cli(['key', 'create', '--org', orgId, '--scope', 'root']);
    expect(invalid.status).toBe(1);
    expect(invalid.stdout).toBe('');
    expect(invalid.stderr).toContain('VALIDATION_FAILED');
  });

  it('answers --help with the usage on stdout and exit 0, and no command with the usage on stderr and exit 2', () => {
    const help = cli(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: svc /);
    expect(help.stdout).toContain('serve');
    const commandHelp = cli(['key', 'create', '--help']);
    expect(commandHelp.status).toBe(0);
    expect(commandHelp.stdout).toMatch(/^usage: svc /);
    const none = cli([]);
    expect(none.status).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/^usage: svc /);
  });

  it('prints its version with --version', () => {
    const version = cli(['--version', '--json']);
    expect(version.status).toBe(0);
    expect(version.json.version).toBe(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version);
    expect(cli(['--version']).stdout.trim()).toBe(`svc ${version.json.version}`);
  });

  it('keeps working while `svc serve` holds the data directory, and its keys authenticate', async () => {
    const port = await freePort();
    const server = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
      cwd: root,
      // Loopback targets (the gateway backend, webhook and MCP URLs of the API commands below).
      env: { ...baseEnv, PORT: String(port), LOG_LEVEL: 'info', ALLOW_PRIVATE_TARGETS: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await waitForHealth(port);
      expect(output).toContain('embedded mode');
      expect(statSync(join(dataDir, 'svc.sock')).mode & 0o777).toBe(0o600);

      const key = cli(['key', 'create', '--org', orgId, '--scope', 'write', '--json']);
      expect(key.status).toBe(0);
      expect(key.json).toMatchObject({ scope: 'write', class: 'live' });

      const ok = await fetch(`http://127.0.0.1:${port}/api/v1/org`, { headers: { authorization: `Bearer ${key.json.api_key}` } });
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { id: string }).id).toBe(orgId);
      for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-request-id']) expect(ok.headers.get(header)).not.toBeNull();

      const bad = await fetch(`http://127.0.0.1:${port}/api/v1/org`, { headers: { authorization: 'Bearer svc_org_live_abcdefgh_madeupmadeupmadeupmadeupmadeup12' } });
      expect(bad.status).toBe(401);
      expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('AUTH_INVALID');

      // Standard output is buffered (flushed at 4 KiB or every 200 ms).
      let logLine: string | undefined;
      for (let i = 0; i < 50 && logLine === undefined; i++) {
        logLine = output.split('\n').find((line) => line.includes('"path":"/api/v1/org"'));
        if (logLine === undefined) await new Promise((resolveWait) => setTimeout(resolveWait, 100));
      }
      expect(logLine).toBeDefined();
      expect(Object.keys(JSON.parse(logLine!)).sort()).toEqual(
        ['level', 'time', 'request_id', 'org_id', 'gateway_id', 'method', 'path', 'status', 'duration_ms', 'threat_score', 'decision', 'pattern'].sort(),
      );
      expect(output).not.toContain(key.json.api_key);

      // The resource commands go through the API with a key (SVC_URL / SVC_KEY or --url / --key).
      const api = (args: string[], apiKey = adminKey) => cli([...args, '--json'], { SVC_URL: `http://127.0.0.1:${port}`, SVC_KEY: apiKey });
      const gateway = api(['gateway', 'create', '--name', 'shop', '--backend-url', 'http://127.0.0.1:9', '--mode', 'block']);
      expect(gateway.status).toBe(0);
      expect(gateway.json).toMatchObject({ name: 'shop', mode: 'block' });
      expect(api(['gateway', 'list']).json.gateways.map((item: { id: string }) => item.id)).toContain(gateway.json.id);
      expect(api(['gateway', 'update', '--id', gateway.json.id, '--mode', 'monitor']).json.mode).toBe('monitor');
      const refused = api(['gateway', 'create', '--name', 'shop2', '--backend-url', 'http://127.0.0.1:9'], key.json.api_key);
      expect(refused.status).toBe(1);
      expect(refused.json.error.code).toBe('SCOPE_INSUFFICIENT');
      const invalid = api(['gateway', 'create', '--name', 'shop3', '--backend-url', 'not a url']);
      expect(invalid.status).toBe(1);
      expect(invalid.json.error.code).toBe('VALIDATION_FAILED');
      expect(api(['gateway', 'delete', '--id', gateway.json.id]).status).toBe(0);
      expect(api(['gateway', 'get', '--id', gateway.json.id]).status).toBe(1);

      const webhook = api(['webhook', 'create', '--url', 'http://127.0.0.1:9/hook', '--events', 'threat.blocked,gateway.down']);
      expect(webhook.status).toBe(0);
      expect(webhook.json.secret).toEqual(expect.any(String));
      expect(webhook.json.events).toEqual(['threat.blocked', 'gateway.down']);
      expect(api(['webhook', 'enable', '--id', webhook.json.id]).json.state).toBe('active');
      expect(api(['webhook', 'delete', '--id', webhook.json.id]).status).toBe(0);

      const server2 = api(['mcp-server', 'create', '--name', 'files', '--url', 'http://127.0.0.1:9/mcp']);
      expect(server2.status).toBe(0);
      expect(api(['mcp-server', 'list']).json.servers.map((item: { id: string }) => item.id)).toEqual([server2.json.id]);
      expect(api(['mcp-server', 'delete', '--id', server2.json.id]).status).toBe(0);

      expect(api(['thresholds', 'set', '--block', '0.8']).json.thresholds.block_threshold).toBe(0.8);
      expect(api(['thresholds', 'get']).json.thresholds.block_threshold).toBe(0.8);
      expect(api(['thresholds', 'set', '--block', 'high']).json.error.code).toBe('USAGE');
      expect(api(['verification-policy', 'get']).status).toBe(0);
      expect(api(['verification-policy', 'reset']).status).toBe(0);
      expect(cli(['gateway', 'list', '--json'], { SVC_URL: `http://127.0.0.1:${port}` }).json.error).toMatchObject({ code: 'USAGE', field: 'key' });
      // Every change made through the API commands is on the audit chain, which still verifies.
      expect(cli(['audit', 'verify', '--org', orgId, '--json']).json.ok).toBe(true);
    } finally {
      server.kill('SIGTERM');
      await new Promise((resolveExit) => server.once('exit', resolveExit));
    }
    expect(existsSync(join(dataDir, 'svc.sock'))).toBe(false);
    // And with the server gone the CLI opens the data directory itself again.
    expect(cli(['key', 'list', '--org', orgId, '--json']).json.data).toHaveLength(2);
  }, 180_000);
});

async function waitForHealth(port: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 200));
  }
  throw new Error('svc serve did not become healthy');
}
