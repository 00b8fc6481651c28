import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteAccess } from '../../src/http/build-app.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';

let context: TestContext;
beforeAll(async () => {
  context = await createTestApp();
});
afterAll(async () => context.close());

describe('docs/api.md', () => {
  it('lists every endpoint with the scope it enforces', () => {
    const routes = (context.app as unknown as { routeAccess: RouteAccess[] }).routeAccess
      .filter((route) => route.url.startsWith('/api/') || route.url.startsWith('/v1/') || route.url.startsWith('/health') || route.url === '/metrics' || route.url === '/openapi.json')
      .map((route) => `| ${route.method} | \`${route.url}\` | ${route.access} |`)
      .sort();
    const documented = readFileSync(resolve(import.meta.dirname, '../../docs/api.md'), 'utf8')
      .split('\n')
      .filter((line) => /^\| (GET|POST|PUT|PATCH|DELETE) \|/.test(line))
      .sort();
    expect(documented, `docs/api.md should list exactly:\n${routes.join('\n')}`).toEqual(routes);
  });
});

describe('/openapi.json', () => {
  it('passes Redocly lint with no error: every operation named, summarised and tagged, 3.1-correct schemas, servers', async () => {
    const answer = await context.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(answer.statusCode).toBe(200);
    const directory = mkdtempSync(join(tmpdir(), 'svc-openapi-'));
    const file = join(directory, 'openapi.json');
    writeFileSync(file, answer.body);
    const cli = resolve(import.meta.dirname, '../../node_modules/@redocly/cli/bin/cli.js');
    // Redocly exits 1 when it finds errors; its JSON report says which.
    const run = spawnSync(process.execPath, [cli, 'lint', file, '--format=json', '--max-problems=500'], {
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      timeout: 120_000,
    });
    rmSync(directory, { recursive: true, force: true });
    const report = JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))) as { problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer?: string }> }> };
    const errors = report.problems.filter((problem) => problem.severity === 'error').map((problem) => `${problem.ruleId} ${problem.location[0]?.pointer ?? ''}: ${problem.message}`);
    expect(errors).toEqual([]);
    const document = JSON.parse(answer.body) as { paths: Record<string, Record<string, { operationId?: string; summary?: string }>> };
    for (const surface of ['/gw/{id}/{path}', '/mcp/{id}', '/metrics']) expect(Object.keys(document.paths)).toContain(surface);
  }, 180_000);

  it('is browsable as an interactive reference at /docs, served with its assets', async () => {
    const page = await context.app.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const bundle = await context.app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js' });
    expect(bundle.statusCode).toBe(200);
    const served = await context.app.inject({ method: 'GET', url: '/docs/json' });
    const document = await context.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(Object.keys(JSON.parse(served.body).paths)).toEqual(Object.keys(JSON.parse(document.body).paths));
  });
});
